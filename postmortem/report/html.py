"""ReportView -> one self-contained HTML file (inline CSS, inline Vega JS, inline chart data).

Nothing is loaded from the network: the vega / vega-lite / vega-embed bundle shipped by vl-convert
is inlined, fonts are system fonts. jinja2 autoescape is on; chart specs go into
``<script type="application/json">`` with ``<`` and ``&`` escaped so no string can close the tag.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import jinja2
import vl_convert
from markupsafe import Markup, escape

from ..archive import write_atomic
from ..words import labels
from .blocks import ReportView


@cache
def environment() -> jinja2.Environment:
    """The one jinja2 environment of every document (report, archive index, weekly digest):
    autoescape on for every template, also .j2 ones."""
    root = files("postmortem.templates")

    def load(name: str) -> str:
        return (root / name).read_text(encoding="utf-8")

    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(load),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=False,
    )
    env.filters["breakable"] = breakable
    return env


STYLESHEET = "postmortem.css"
PAPER_STYLESHEET = "paper.css"  # weasyprint's additions, after the stylesheet


def render(template: str, *, lang: str, paper: bool = False, version: str = "", **context: Any) -> str:
    """A document from its template, with `L` (the label catalogue of its language) and the one
    stylesheet. `paper`: for weasyprint (static charts, no scripts, paper.css after the stylesheet)."""
    css = read_template_file(STYLESHEET)
    if paper:
        css += read_template_file(PAPER_STYLESHEET)
    return environment().get_template(template).render(
        L=labels(lang), paper=paper, version=version, css=Markup(css), **context
    )


# A run of this many characters or more without a space (a path, a tag name) may wrap inside.
_LONG_RUN = 12
# Its pieces: up to 20 characters, then the separators that follow them.
_PIECE = re.compile(r"[^/\\_.,:;=-]{1,20}[/\\_.,:;=-]*|[/\\_.,:;=-]+")
# Chinese characters: a line may end between any two of them, which splits words in a narrow
# column (单步耗时（中位/数）). A short run is a word or two and stays on one line; a longer one
# is prose and breaks as Chinese prose does.
_HAN = re.compile(r"([\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+)")
_HAN_WORD = 12
_HYPHENATED = re.compile(r"[^\W\d]-[^\W\d]")
_NOWRAP = Markup('<span class="nw">{}</span>')


def breakable(text: object, whole_words: bool = False) -> Markup:
    """`text` escaped for a table cell on paper: a line-break opportunity (<wbr>) after each
    separator or 20 characters of a long unbroken run, and nowhere else; up to 12 Chinese
    characters in a row, and a short run with a slash or hyphen (tokens/s), kept on one line. The PDF's table cells then wrap with `overflow-wrap:
    break-word`, which breaks no ordinary word and which weasyprint lays out faster than
    `anywhere` (for which every character may end a line: a third of the PDF's layout time).
    Not in the HTML report: there a browser lays out `anywhere` fast, and a slug or a path stays
    one string in the file for whoever searches it. ``whole_words``: no opportunity inside a run
    (a `keep` column's names: they wrap between words only)."""
    out = []
    for run in re.split(r"(\s+)", str(text)):
        for i, part in enumerate(_HAN.split(run)):
            if i % 2:
                out.append(_NOWRAP.format(part) if 1 < len(part) <= _HAN_WORD else escape(part))
            elif len(part) >= _LONG_RUN and not whole_words:
                out.append(Markup("<wbr>").join(map(escape, _PIECE.findall(part))))
            elif "/" in part or _HYPHENATED.search(part):  # a unit (tokens/s), a short name a line could split
                out.append(_NOWRAP.format(part))
            else:
                out.append(escape(part))
    return Markup("").join(out)


def read_template_file(name: str) -> str:
    return (files("postmortem.templates") / name).read_text(encoding="utf-8")


@cache
def javascript_bundle() -> str:
    """vega + vega-lite + vega-embed as one script, from the installed vl-convert.

    vl-convert takes 1.5 s to make it, once per process: a build would spend that on every report,
    so the bundle is kept in the user's cache folder, per vl-convert version.
    """
    path = _bundle_cache_path()
    bundle = _read_cached(path) if path else None
    if bundle is None:
        bundle = vl_convert.javascript_bundle()
        if path:
            _write_cached(path, bundle)
    # Inline <script> content must never contain "</script": the bundle has none, keep it so.
    return bundle.replace("</script", "<\\/script")


def _bundle_cache_path() -> Path | None:
    try:
        base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    except RuntimeError:  # no home folder to find
        return None
    return Path(base) / "postmortem" / f"vega-bundle-vl-convert-{vl_convert.__version__}.js"


def _read_cached(path: Path) -> str | None:
    """The cached text, if the file is there and whole (its first line is the sha256 of the rest)."""
    try:
        head, _, body = path.read_bytes().partition(b"\n")
        return body.decode("utf-8") if head == _checksum_line(body) else None
    except (OSError, UnicodeDecodeError):
        return None


def _write_cached(path: Path, text: str) -> None:
    """Write atomically (readers never see half a file); a cache folder that cannot be written is no error."""
    body = text.encode("utf-8")
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, _checksum_line(body) + b"\n" + body)


def _checksum_line(body: bytes) -> bytes:
    return b"// sha256:" + hashlib.sha256(body).hexdigest().encode()


def json_for_script(value: Any) -> Markup:
    """JSON safe inside a <script> element: '<', '>' and '&' become \\u escapes (valid JSON)."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return Markup(text)


def render_html(view: ReportView) -> str:
    """The interactive report as one HTML string. Same view -> same bytes."""
    return render(
        "report.html.j2", lang=view.lang, version=view.version, view=view,
        specs={c.id: json_for_script(c.spec) for c in view.charts}, images={}, bundle=Markup(javascript_bundle()),
    )

"""Hostile content: tag names, log lines, config values and file names carrying HTML / script are
shown escaped in HTML, PDF and Markdown; the PDF renderer fetches nothing; names cannot escape the
archive folder.
"""

from __future__ import annotations

import re

import io
from html.parser import HTMLParser
from pathlib import Path

import pytest

from postmortem.cli import main

from .conftest import SAMPLES, copy_run, tree_state

SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
REMOTE = '<img src="http://127.0.0.1:9/steal.png">'
PASSWD = "file:///etc/passwd"


class _Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self._in_script = False
        self.scripts: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False

    def handle_data(self, data):
        (self.scripts if self._in_script else self.text).append(data)


@pytest.fixture(scope="module")
def hostile_build(tmp_path_factory):
    from tensorboardX import SummaryWriter

    base = tmp_path_factory.mktemp("hostile")
    run = copy_run(SAMPLES / "gpt-tiny-base", base / "run")
    lines = (run / "train.log").read_bytes().split(b"\n")
    kv = [ln for ln in lines if b" step=" in ln]
    # a log file whose name is markup, holding real log lines
    (run / f"{IMG}.log").write_bytes(b"\n".join(kv[:20]) + b"\n")
    # hostile log content: an error line, a JSON line with a markup key, a key=value with a markup-ish key
    with open(run / "train.log", "ab") as fh:
        fh.write(f"2026-11-30 10:55:00.000 ERROR {SCRIPT} {IMG}\n".encode())
        fh.write(('{"step": 300, "%s": 1.5}\n' % SCRIPT.replace("/", "\\/")).encode())
        fh.write(b"2026-11-30 10:55:01.000 step=300 onerror=1 javascript:alert/x=2\n")
    # hostile config values
    cfg = (run / "config.yaml").read_text()
    cfg += f"\ntrainer:\n  model_name: '{SCRIPT}'\noptimizer:\n  type: '{PASSWD}'\nlr_schedule:\n  type: '{REMOTE}'\ncontext:\n  device_target: '{IMG}'\n"
    (run / "config.yaml").write_text(cfg)
    # a scalar tag written by tensorboardX
    writer = SummaryWriter(logdir=str(run / "tensorboard" / "rank_0"))
    for step in range(1, 31):
        writer.add_scalar(SCRIPT, 1.0 / step, step)
    writer.close()
    out = base / "out"

    fetched: list[str] = []
    import postmortem.report.pdf as pdf

    real_fetch = pdf.OfflineFetcher.fetch

    def recording_fetch(self, url, headers=None):
        fetched.append(url)
        return real_fetch(self, url, headers)

    from postmortem import parallel

    mp = pytest.MonkeyPatch()
    mp.setattr(pdf.OfflineFetcher, "fetch", recording_fetch)
    mp.setattr(parallel, "cores", lambda: 1)  # the recorder is here: lay the PDF out here
    try:
        code = main(["build", str(run), "--out", str(out), "--run-id", "hostile", "--format", "html,pdf,md,json"])
    finally:
        mp.undo()
    folders = [p for p in out.iterdir() if p.is_dir()]
    assert code == 0 and len(folders) == 1
    return run, folders[0] / "hostile", fetched


def test_hostile_strings_reach_the_report(hostile_build):
    """The premise: the hostile strings are really in the data the report shows."""
    run, folder, _ = hostile_build
    page = _Page()
    page.feed((folder / "report.html").read_text(encoding="utf-8"))
    text = " ".join(page.text)
    assert SCRIPT in text  # shown, as text
    assert f"{IMG}.log" in text or IMG in text


def test_html_has_no_injected_markup(hostile_build):
    _, folder, _ = hostile_build
    html = (folder / "report.html").read_text(encoding="utf-8")
    assert "<script>alert" not in html and "<img src=x" not in html and '<img src="http' not in html
    page = _Page()
    page.feed(html)
    assert html.rstrip().endswith("</html>")
    for tag, attrs in page.tags:
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        assert tag != "img" or attrs.get("src", "").startswith("data:"), attrs
        if tag == "script":
            assert attrs.get("type") in (None, "application/json", "module"), attrs
    assert not any("alert(1)" in s for s in page.scripts)  # JSON specs escape '<' as \u003c


def test_markdown_has_no_markup(hostile_build):
    _, folder, _ = hostile_build
    md = (folder / "summary.md").read_text(encoding="utf-8")
    assert re.search(r"(?<!\\)<[A-Za-z/!?]", md) is None  # no tag can open
    assert "\\<script>" in md and "&lt;" not in md  # the hostile network name, escaped with a backslash, no entity


def test_pdf_shows_text_and_fetches_nothing(hostile_build):
    from pypdf import PdfReader

    _, folder, fetched = hostile_build
    text = "".join(page.extract_text() for page in PdfReader(io.BytesIO((folder / "report.pdf").read_bytes())).pages)
    flat = "".join(text.split())
    assert "<script>alert(1)</script>" in flat  # rendered as literal text
    assert fetched, "the recorder saw the report's own data: URIs"
    assert all(url.startswith("data:") for url in fetched), [u for u in fetched if not u.startswith("data:")]


def test_pdf_fetcher_refuses_remote_and_local_urls():
    """The recorder would see a fetch: a raw <img>/<link> to http or file is refused, not loaded."""
    import postmortem.report.pdf as pdf

    fetcher = pdf.offline_fetcher()
    for url in ("http://127.0.0.1:9/steal.png", PASSWD):
        with pytest.raises(ValueError):
            fetcher.fetch(url)
    assert fetcher.refused == ["http://127.0.0.1:9/steal.png", PASSWD]
    assert pdf.html_to_pdf(f'<p>x</p><img src="http://127.0.0.1:9/a.png"><img src="{PASSWD}">').startswith(b"%PDF")


# --------------------------------------------------------------------------- names


@pytest.fixture(scope="module")
def small_run(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("names") / "run"
    root.mkdir()
    kv = [ln for ln in (SAMPLES / "gpt-tiny-base/train.log").read_bytes().split(b"\n") if b" step=" in ln]
    (root / "train.log").write_bytes(b"\n".join(kv[:40]) + b"\n")
    return root


@pytest.mark.parametrize("flag,value,slug", [
    ("--run-id", "../../x", "bad-run-id"),
    ("--run-id", "..", "bad-run-id"),
    ("--run-id", "a/b", "bad-run-id"),
    ("--run-id", "x\x00y", "bad-run-id"),
    ("--run-id", "x\ny", "bad-run-id"),
    ("--run-id", ".hidden", "bad-run-id"),
    ("--run-id=-rf", None, "bad-run-id"),
    ("--experiment", "/abs", "bad-experiment-name"),
    ("--experiment", "..\\..\\x", "bad-experiment-name"),
    ("--experiment", "e" * 200, "bad-experiment-name"),
    ("--experiment", " padded ", "bad-experiment-name"),
])
def test_names_cannot_escape_the_archive(small_run: Path, tmp_path: Path, capsys, flag, value, slug):
    out = tmp_path / "box" / "out"
    out.parent.mkdir()
    outside = tree_state(tmp_path)
    run_before = tree_state(small_run)
    args = ["build", str(small_run), "--out", str(out), "--format", "md", flag] + ([value] if value is not None else [])
    code = main(args)
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert code == 2 and "Traceback" not in text
    lines = [ln for ln in text.splitlines() if ln.startswith("error[")]
    assert len(lines) == 1 and lines[0].startswith(f"error[{slug}]"), text
    assert tree_state(tmp_path) == outside  # nothing written anywhere, not even --out
    assert tree_state(small_run) == run_before


def test_hostile_default_names_stay_inside(small_run: Path, tmp_path: Path, capsys):
    """A network name from the config becomes the default experiment: it is made a safe folder name."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "train.log").write_bytes((small_run / "train.log").read_bytes())
    (run / "config.yaml").write_text("trainer:\n  model_name: \"../../../escaped\\0\\nx\"\n")
    out = tmp_path / "out"
    code = main(["build", str(run), "--out", str(out), "--format", "md"])
    capsys.readouterr()
    assert code == 0
    written = [p for p in tmp_path.rglob("*") if not p.is_relative_to(out) and not p.is_relative_to(run)]
    assert written == []
    reports = list(out.rglob("summary.md"))
    assert len(reports) == 1 and reports[0].resolve().is_relative_to(out.resolve())
    assert not (tmp_path.parent / "escaped").exists()

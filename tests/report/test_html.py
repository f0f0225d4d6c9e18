import os
import re

import pytest
from html.parser import HTMLParser
from pathlib import Path

from postmortem.report.html import render_html
from postmortem.report.blocks import Chart

from conftest import view_of
from fixtures import HOSTILE

GOLD = Path(__file__).parent / "gold"


class _Refs(HTMLParser):
    """Collects URL-bearing attributes and the text of <style> elements."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.styles: list[str] = []
        self._in_style = False
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self._in_style = tag == "style"
        for name, value in attrs:
            if name in ("src", "href", "action", "poster", "data", "srcset") and value:
                self.urls.append(value)

    def handle_endtag(self, tag):
        self._in_style = False

    def handle_data(self, data):
        if self._in_style:
            self.styles.append(data)


def test_no_network_references(html):
    refs = _Refs()
    refs.feed(html)
    assert refs.urls, "expected in-page links (contents)"
    assert all(u.startswith("#") for u in refs.urls), [u for u in refs.urls if not u.startswith("#")]
    css = "".join(refs.styles)
    assert "@import" not in css and not re.search(r"url\(", css)
    assert "link" not in refs.tags and "iframe" not in refs.tags
    # no script is loaded from anywhere: every <script> is inline
    assert not re.search(r"<script[^>]*\bsrc=", html)


def test_hostile_strings_appear_only_escaped(hostile_view):
    html = render_html(hostile_view)
    assert HOSTILE not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # run id, file name, config value, check name
    # in chart JSON the '<' is a \u escape so it cannot close the <script type="application/json">
    assert "alert(1)\\u003c/script" not in html or "\\u003cscript\\u003ealert(1)" in html
    refs = _Refs()
    refs.feed(html)
    scripts = [t for t in refs.tags if t == "script"]
    charts = len(hostile_view.charts)
    assert len(scripts) == 2 + charts  # bundle + driver + one JSON block per chart


def test_chart_json_is_script_safe():
    from postmortem.report.html import json_for_script

    text = str(json_for_script({"a": "</script><b>&"}))
    assert "<" not in text and ">" not in text and "&" not in text
    import json

    assert json.loads(text) == {"a": "</script><b>&"}


def test_deterministic_except_generation_time():
    a = render_html(view_of(300))
    b = render_html(view_of(300))
    assert a == b


def test_every_section_and_chart_present(view, html):
    for section in view.sections:
        assert f'<section id="{section.id}">' in html
    for chart in view.charts:
        assert f'id="spec-{chart.id}"' in html
    assert "16.4k tokens/s" in html and "+5.0%" in html


def test_size_normal_and_huge_runs():
    assert len(render_html(view_of(2000)).encode()) < 1_500_000
    huge = render_html(view_of(250_000, baseline=True))
    assert len(huge.encode()) < 5_000_000


def scrub(html: str) -> str:
    from postmortem.report.html import javascript_bundle

    html = html.replace(javascript_bundle(), "/* vega bundle */")
    return re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", "<generated>", html)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_gold_file(lang):
    html = scrub(render_html(view_of(120, lang=lang)))
    gold = GOLD / f"report_small_{lang}.html"
    if os.environ.get("POSTMORTEM_UPDATE_GOLD") == "1" or not gold.exists():
        gold.parent.mkdir(exist_ok=True)
        gold.write_text(html, encoding="utf-8")
    assert html == gold.read_text(encoding="utf-8"), "HTML changed; POSTMORTEM_UPDATE_GOLD=1 rewrites the gold"


def test_zh_report_is_chinese():
    view = view_of(200, lang="zh")
    html = render_html(view)
    assert '<html lang="zh-CN">' in html
    assert "稳态吞吐" in html and "关键指标" in html and "数据质量" in html

    from postmortem.words import labels
    from postmortem.report.sections.common import fmt_delta

    # deltas of shares are in percentage points, named in the report's language
    assert fmt_delta("mfu", 0.012, labels("zh")) == "+1.2 个百分点"
    assert fmt_delta("checkpoint_tax", -0.0005, labels("en")) == "-0.050 pp"


def test_no_baseline_report_says_so():
    view = view_of(200, baseline=False)
    html = render_html(view)
    assert "No baseline" in html
    assert not any(isinstance(c, Chart) and "Baseline" in str(c.spec.get("layer", "")) for c in view.charts)


def test_vega_bundle_is_cached_per_vl_convert_version(tmp_path, monkeypatch):
    """Made once (1.5 s), then read from the user's cache folder; a damaged cache file is made again."""
    import vl_convert

    from postmortem.report import html as html_module

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    made = []
    source = "/* vega \u2713 */\r\nvar x = '</script>';\n"
    monkeypatch.setattr(vl_convert, "javascript_bundle", lambda: made.append(1) or source)
    bundle = html_module.javascript_bundle.__wrapped__
    expected = source.replace("</script", "<\\/script")

    assert bundle() == expected and len(made) == 1
    path = tmp_path / "postmortem" / f"vega-bundle-vl-convert-{vl_convert.__version__}.js"
    assert path.read_bytes().startswith(b"// sha256:") and [p.name for p in path.parent.iterdir()] == [path.name]
    assert bundle() == expected and len(made) == 1  # from the cache file, byte for byte

    path.write_bytes(path.read_bytes()[:-3])  # cut short: the checksum no longer matches
    assert bundle() == expected and len(made) == 2
    assert bundle() == expected and len(made) == 2  # whole again


def test_vega_bundle_without_a_writable_cache_folder(tmp_path, monkeypatch):
    from postmortem.report import html as html_module

    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert html_module.javascript_bundle.__wrapped__() == html_module.javascript_bundle()
    assert blocker.read_text() == ""

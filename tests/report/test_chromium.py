"""Open the report in headless Chromium, offline, and check every chart drew."""

import re
import shutil
import subprocess

import pytest

from postmortem.report.html import render_html

from conftest import view_of

CHROMIUM = "/usr/bin/chromium"
pytestmark = pytest.mark.skipif(shutil.which(CHROMIUM) is None, reason="chromium not installed")


def _dump_dom(html: str, tmp_path) -> str:
    page = tmp_path / "report.html"
    page.write_text(html, encoding="utf-8")
    cmd = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}",
        "--virtual-time-budget=15000", "--dump-dom", page.as_uri(),
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=True).stdout


@pytest.mark.parametrize("lang, hostile", [("en", False), ("zh", True)])
def test_all_charts_draw(tmp_path, lang, hostile):
    view = view_of(3000, lang=lang, hostile=hostile)
    dom = _dump_dom(render_html(view), tmp_path)
    body = re.search(r"<body[^>]*>", dom).group(0)
    assert "data-chart-errors" not in body, body
    assert f'data-charts-drawn="{len(view.charts)}"' in body
    for chart in view.charts:
        block = dom.split(f'id="{chart.id}"', 1)[1].split("</figure>", 1)[0]
        assert block.count("<svg") + block.count("<canvas") == 1, chart.id
    assert "<script>alert(1)</script>" not in dom.replace("&lt;", "<x")  # nothing was injected as markup

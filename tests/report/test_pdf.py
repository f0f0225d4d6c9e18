import io
import re

import pytest
from pypdf import PdfReader

from postmortem.report.pdf import OfflineFetcher, offline_fetcher, render_pdf, render_pdf_html

from conftest import view_of


@pytest.fixture(scope="module")
def pdf_text():
    reader = PdfReader(io.BytesIO(render_pdf(view_of(600))))
    return reader, "\n".join(p.extract_text() for p in reader.pages)


def test_pdf_has_headline_figures_and_page_numbers(pdf_text):
    reader, text = pdf_text
    assert len(reader.pages) >= 3
    for needle in ("Training postmortem", "16.4k tokens/s", "500 ms", "+5.0%", "Headline figures", "Appendix"):
        assert needle in text, needle
    assert f"1 / {len(reader.pages)}" in text


def test_pdf_embeds_fonts(pdf_text):
    reader, _ = pdf_text
    fonts = set()
    for page in reader.pages:
        for font in (page.get("/Resources", {}).get("/Font") or {}).values():
            desc = font.get_object().get("/DescendantFonts")
            obj = desc[0].get_object() if desc else font.get_object()
            fd = obj.get("/FontDescriptor")
            if fd is not None:
                fd = fd.get_object()
                if any(k in fd for k in ("/FontFile", "/FontFile2", "/FontFile3")):
                    fonts.add(str(obj.get("/BaseFont")))
    assert fonts


def test_zh_pdf_uses_cjk_font():
    reader = PdfReader(io.BytesIO(render_pdf(view_of(200, lang="zh"))))
    text = "\n".join(p.extract_text() for p in reader.pages)
    assert "关键指标" in text and "稳态吞吐" in text
    names = {str(f.get_object().get("/BaseFont")) for p in reader.pages for f in (p["/Resources"].get("/Font") or {}).values()}
    assert any("WenQuanYi" in n or "wqy" in n.lower() for n in names), names


def test_fetcher_refuses_everything_but_data_uris():
    fetcher = OfflineFetcher()
    fetcher.refused = []
    for url in ("http://example.com/x.png", "https://example.com/a.css", "file:///etc/passwd"):
        with pytest.raises(ValueError):
            fetcher.fetch(url)
    assert len(fetcher.refused) == 3
    response = fetcher.fetch("data:text/plain;base64,aGk=")
    assert response is not None


def test_pdf_html_has_contents_with_page_counters():
    html = render_pdf_html(view_of(200))
    assert "target-counter(attr(href), page)" in html
    assert 'src="data:image/svg+xml;base64,' in html


def test_paper_stylesheet_is_in_the_pdf_only():
    from postmortem.report.html import render_html, read_template_file

    view = view_of(200)
    paper_css = read_template_file("paper.css")
    assert "nav.toc ol { columns: auto; }" in paper_css
    assert paper_css in render_pdf_html(view)
    assert paper_css not in render_html(view)  # the HTML report is unchanged by it


def test_long_collapsed_tables_are_cut_on_paper_only():
    from postmortem.words import labels
    from postmortem.report.html import environment
    from postmortem.report.blocks import Cell, Table

    rows = tuple((Cell(str(i)), Cell("outlier")) for i in range(100))
    table = Table("excluded-steps", ("Step", "Reason"), ("right", "left"), rows, collapsed=True)
    macros = environment().get_template("macros.html.j2").module
    paper = str(macros.block(table, labels("en"), True))
    screen = str(macros.block(table, labels("en"), False))
    assert paper.count("<tr>") == 41 and "60 more rows" in paper  # header + 40 rows, and where the rest is
    assert screen.count("<tr>") == 101 and "more rows" not in screen


def test_long_unbroken_text_stays_on_the_page():
    """Cells wrap long paths and tokens at the <wbr> the report puts in them (and only there):
    nothing runs past the right margin, not even 300 characters without a separator."""
    import weasyprint

    from postmortem.model import InventoryEntry
    from postmortem.report.viewmodel import build_view

    import fixtures
    from conftest import GENERATED

    long_runs = ("rank_0/" + "deeply_nested_folder/" * 12 + "events.out.tfevents.1700000000.host.log", "x" * 300, "训练日志" * 40)
    inventory = (*fixtures.inventory(hostile=True), *(InventoryEntry(text, None, 12, 0, None, "not claimed") for text in long_runs))
    analysis = fixtures.make_analysis(200, hostile=True)
    html = render_pdf_html(build_view(analysis, lang="en", generated_at=GENERATED, version="0.1.0", inventory=inventory))
    assert html.count("<wbr>") > 40
    document = weasyprint.HTML(string=html, url_fetcher=offline_fetcher(), base_url=None).render()
    widest = 0.0
    for page in document.pages:
        box = page._page_box
        right_edge = box.content_box_x() + box.width
        for child in box.descendants():
            if getattr(child, "width", None) is not None and hasattr(child, "content_box_x"):
                widest = max(widest, child.content_box_x() + child.width - right_edge)
    assert widest <= 0.5, f"a box runs {widest:.1f}px past the right margin"


@pytest.mark.parametrize("text", [
    "short words stay whole", "rank_0/summary/events.out.events.summary.1700000000.0_MS", "y" * 65,
    "<script>alert('x')</script>&amp;" * 3, "模型训练日志文件名称非常长的一段中文没有空格", "a  b\tc\n" + "-" * 30,
    "单步耗时（中位数）", "稳态吞吐（tokens/s）",
])
def test_breakable_only_adds_break_points_to_escaped_text(text):
    from markupsafe import escape

    from postmortem.report.html import breakable

    out = str(breakable(text))
    plain = re.sub(r'<wbr>|<span class="nw">([^<]*)</span>', lambda m: m.group(1) or "", out)
    assert plain == str(escape(text))  # the text itself, escaped: nothing lost, nothing raw
    latin = re.sub(r"[\u4e00-\u9fff]+", " ", re.sub(r'<span class="nw">[^<]*</span>', " ", out))  # Chinese breaks as Chinese does
    pieces = [piece for run in latin.split() for piece in run.split("<wbr>")]
    assert all(len(piece) <= 21 or piece.strip("/\\_.,:;=-") == "" or "&" in piece for piece in pieces)
    if all(len(word) < 12 for word in text.split()):
        assert "<wbr>" not in out


def test_short_chinese_words_and_units_stay_on_one_line():
    from postmortem.report.html import breakable

    assert str(breakable("单步耗时（中位数）")) == '<span class="nw">单步耗时</span>（<span class="nw">中位数</span>）'
    assert '<span class="nw">（tokens/s）</span>' in str(breakable("稳态吞吐（tokens/s）"))
    prose = "模型训练日志文件名称非常长的一段中文没有空格"  # longer than a word or two: breaks as prose
    assert str(breakable(prose)) == prose


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_table_fits_the_page_and_keeps_chinese_words_whole(lang):
    """Laid out by weasyprint: no box past the margin, no text out of its cell, and no Chinese
    word split between two lines of a cell (单步耗时（中位/数）, 在噪声/范围内)."""
    from layout import layout, problems

    found = problems(layout(render_pdf_html(view_of(300, lang=lang, hostile=True))))
    assert found == [], found[:10]


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("run,base", [("samples/gpt-tiny-lr2x", "samples/gpt-tiny-base"),
                                      ("tests/fixtures/conformance/mi-cluster-4rank", None)], ids=["sample", "cluster"])
def test_real_runs_fit_the_page(run, base, lang):
    """The sample against its baseline (a wide comparison table in Chinese) and a 4-rank profile
    (nine columns per rank) laid out on A4: nothing past the margin, no Chinese word split."""
    from datetime import UTC, datetime
    from pathlib import Path

    from layout import layout, problems

    from postmortem.analysis import analyze
    from postmortem.load import load_run
    from postmortem.report.viewmodel import build_view

    repo = Path(__file__).resolve().parents[2]
    loaded = load_run(str(repo / run))
    a = analyze(loaded, load_run(str(repo / base)) if base else None)
    view = build_view(a, lang=lang, generated_at=datetime(2026, 1, 1, tzinfo=UTC), version="test", inventory=loaded.inventory)
    found = problems(layout(render_pdf_html(view)))
    assert found == [], found[:10]

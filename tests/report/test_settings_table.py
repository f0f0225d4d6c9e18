"""The settings table beside long source paths: the paths break, the names beside them do not.

A run recorded by the callback reads every setting from one long records path; a column of those
squeezed the group and the setting to a few letters a line ("Frame / work / and / version / s")."""

import re

import fixtures
from conftest import GENERATED

from postmortem.report.html import environment, read_template_file
from postmortem.report.pdf import render_pdf_html
from postmortem.report.viewmodel import build_view
from postmortem.words import labels

PATH = "callback:postmortem/rank_0/postmortem-records-20261201T120000.000Z-1.jsonl"


def _settings_table(lang: str):
    view = build_view(fixtures.make_analysis(200), lang=lang, generated_at=GENERATED, version="0.1.0")
    section = next(s for s in view.sections if s.id == "settings")
    return next(b for b in section.blocks if getattr(b, "id", "") == "settings")


def test_the_names_keep_their_words_and_the_source_may_break():
    table = _settings_table("en")
    assert table.align == ("left keep", "left keep", "left", "left")  # group, setting | value, source
    css = read_template_file("postmortem.css")
    assert "table.data th.keep, table.data td.keep { overflow-wrap: normal; word-break: keep-all; }" in css
    assert re.search(r"@media print \{.*table\.data td\.keep \{ overflow-wrap: normal; \}", css, re.S)


def test_on_paper_the_path_breaks_at_its_separators_and_the_names_nowhere():
    from postmortem.report.blocks import Cell, table

    rows = [[Cell("Framework and versions"), Cell("enable_parallel_optimizer"), Cell("false"), Cell(PATH)]]
    t = table("settings", ["Group", "Setting", "Value", "Source"], "kkll", rows)
    macros = environment().get_template("macros.html.j2").module
    paper = str(macros.block(t, labels("en"), True))
    cells = re.findall(r"<td[^>]*>(.*?)</td>", paper)
    assert cells[0] == "Framework and versions" and cells[1] == "enable_parallel_optimizer"  # no <wbr> inside a name
    assert cells[3].count("<wbr>") >= 3 and cells[3].replace("<wbr>", "") == PATH
    screen = str(macros.block(t, labels("en"), False))
    assert 'class="left keep">enable_parallel_optimizer<' in screen and "word" not in screen


def test_the_report_on_paper_carries_the_keep_columns_in_both_languages():
    for lang in ("en", "zh"):
        view = build_view(fixtures.make_analysis(200), lang=lang, generated_at=GENERATED, version="0.1.0")
        html = render_pdf_html(view)
        body = html[html.index('id="tbl-settings"'):]
        body = body[:body.index("</table>")]
        assert body.count('class="left keep"') >= 2 and "left word" not in body


def test_derived_sources_are_worded_in_chinese():
    """A source the readers derive in English words (the callback's first batch, the logged
    throughput) reads in Chinese in a zh report; the file named after it stays as written."""
    from postmortem.words.wording import source_text

    zh = source_text("derived:first batch (postmortem/rank_0/postmortem-records-1.jsonl)", "zh")
    assert zh == "由 首个 batch 的形状 (postmortem/rank_0/postmortem-records-1.jsonl) 推算"
    assert "first" not in source_text("derived:logged throughput × step time", "zh")
    assert source_text("derived:first batch (x.jsonl)", "en") == "derived from first batch (x.jsonl)"

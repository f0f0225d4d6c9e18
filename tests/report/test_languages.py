"""Both languages complete: a Chinese report shows no English UI word, in any part a reader sees."""

import re

import pytest

from postmortem.words import CATALOGS, labels, numbers as f
from postmortem.report.html import render_html
from postmortem.report.markdown import render_markdown
from postmortem.report.pdf import render_pdf_html

import fixtures
from conftest import view_of
from languages import chart_texts, english_words, strings_of, visible_text


def _dynamic(view) -> set[str]:
    analysis = fixtures.make_analysis(200)
    return strings_of(analysis) | strings_of(fixtures.inventory()) | {view.run_id, view.baseline_id, view.experiment}


@pytest.fixture(scope="module")
def zh_view():
    return view_of(200, lang="zh")


def test_zh_html_has_no_english_ui_words(zh_view):
    words = english_words(visible_text(render_html(zh_view)), _dynamic(zh_view))
    assert words == [], sorted(set(words))


def test_zh_pdf_html_has_no_english_ui_words(zh_view):
    words = english_words(visible_text(render_pdf_html(zh_view)), _dynamic(zh_view))
    assert words == [], sorted(set(words))


def test_zh_charts_have_chinese_titles_legends_and_tooltips(zh_view):
    texts = [t for c in zh_view.charts for t in chart_texts(c.spec)]
    assert "step 耗时（s）" in texts or "step 耗时 (s)" in texts
    assert "离群" in texts or "编译" in texts  # exclusion reasons by name, not code
    words = english_words("\n".join(texts), _dynamic(zh_view))
    assert words == [], sorted(set(words))


def test_zh_summary_md_frame_is_chinese(zh_view):
    md = render_markdown(zh_view)
    plain = md.replace("**", " ").replace("\\_", "\0").replace("_", " ").replace("\0", "_")  # italics marks, not escaped names
    words = english_words(plain, _dynamic(zh_view))
    assert words == [], sorted(set(words))
    assert "：" in md and "基线" in md


def test_en_report_shows_no_chinese():
    html = visible_text(render_html(view_of(200)))
    assert not re.search(r"[\u4e00-\u9fff]", html)


def test_every_label_has_both_languages_and_the_articles_words():
    en, zh = CATALOGS["en"], CATALOGS["zh"]
    assert set(en) == set(zh) and all(en[k] and zh[k] for k in en)
    # placeholders agree, so every sentence gets the same numbers in both languages
    for key in en:
        assert sorted(re.findall(r"{(\w*)}", en[key])) == sorted(re.findall(r"{(\w*)}", zh[key])), key
    text = "\n".join(zh.values())
    assert "词元" not in text and "内存" not in text and "暴露的通信" not in text  # token, 显存, ...
    for word in ("稳态吞吐", "显存峰值", "通信占比", "梯度范数"):
        assert word in text, word
    assert zh["pp"] == "个百分点" and zh["fig_tokens_per_s"].startswith("稳态吞吐")

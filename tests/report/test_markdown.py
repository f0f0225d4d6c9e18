import re

from postmortem.report.markdown import escape_md, render_markdown

from conftest import view_of
from fixtures import HOSTILE


def test_summary_lists_headline_and_findings(view):
    md = render_markdown(view)
    assert "16.4k tokens/s" in md  # readable as raw text too: numbers are not escaped
    assert "+5.0%" in md
    assert "NaN/Inf loss or grad norm, the first at step 1,333" in md
    assert len(md.splitlines()) < 45  # the verdict (a few lines a problem), the headline figures, the findings


def test_user_strings_are_escaped():
    md = render_markdown(view_of(200, hostile=True))
    assert HOSTILE not in md and re.search(r"(?<!\\)<[A-Za-z/!?]", md) is None  # no tag can open
    assert "\\<script>" in md and "&lt;" not in md  # a backslash, no entity: reads the same raw in a chat
    assert escape_md("3 micro-batches < 4 stages & more") == "3 micro-batches < 4 stages & more"
    assert escape_md("&lt;b&gt;") == "\\&lt;b\\&gt;"  # an entity stays literal
    assert escape_md("a_b*c [x](y)") == "a\\_b\\*c \\[x\\](y)"  # "[x]" escaped: no link can form
    assert escape_md("gpt-tiny-lr2x 0.1.0") == "gpt-tiny-lr2x 0.1.0"

"""Findings are worded per language from kind + parameters; an archived finding this version cannot
word (unknown kind, parameters that do not fill its template) keeps the English it was archived with."""

from postmortem.analysis.types import Finding, FindingKind, FindingSeverity
from postmortem.words import render
from postmortem.words import labels
from postmortem.report.messages import alignment_text, finding_text
from postmortem.text import Text
from postmortem.weekly import finding_text as archived_finding_text


def test_findings_are_worded_from_their_parameters_in_both_languages():
    nan = Finding(FindingKind.NAN_LOSS, FindingSeverity.CRITICAL, {"count": 21, "first_step": 1234})
    assert render(finding_text(nan), "zh") == "21 个 step 的 loss 或梯度范数为 NaN/Inf，首次出现在第 1,234 步。"
    assert render(finding_text(nan), "en") == "21 steps with NaN/Inf loss or grad norm, the first at step 1,234."
    reg = Finding(FindingKind.REGRESSION, FindingSeverity.WARNING,
                  {"family": "throughput", "baseline": "base", "changes": [Text("q.change.dur", name="step_time_s", baseline=1.0,
                                                                                current=1.12, rel=None)]})
    assert render(finding_text(reg), "zh") == "吞吐相对基线 base 退化：step 耗时 1.00 s → 1.12 s。"


def test_an_archived_finding_this_version_cannot_word_keeps_its_english():
    # a kind this version does not know
    assert archived_finding_text({"kind": "new_kind", "severity": "info", "message": "something new"}, "zh") == "something new"
    # parameters that do not fill the template (an archive from before parameters)
    broken = {"kind": "nan_loss", "severity": "critical", "message": "NaN from step 3", "evidence": {}}
    assert archived_finding_text(broken, "zh") == "NaN from step 3"
    full = {"kind": "nan_loss", "severity": "critical", "message": "x", "evidence": {"count": 2, "first_step": 3}}
    assert archived_finding_text(full, "zh") == "2 个 step 的 loss 或梯度范数为 NaN/Inf，首次出现在第 3 步。"


def test_alignment_names():
    assert alignment_text("steady window", "zh") == "稳态区间"
    assert alignment_text("by tokens (at 76,800 tokens)", "zh") == "按 token 数对齐（76,800 token 处）"
    assert alignment_text("by tokens (at 76,800 tokens)", "en") == "by tokens (at 76,800 tokens)"
    assert alignment_text("something new", "zh") == "something new"


def test_config_check_findings_keep_their_numbers_in_chinese():
    f = Finding(FindingKind.CONFIG, FindingSeverity.INFO,
                {"check": "checkpoint_interval", "detail": Text("check.save-often", interval=1.0, limit=300.0)})
    assert render(finding_text(f), "zh") == "checkpoint 间隔与 step 耗时：每 1.00 s 保存一次（< 5.00 min）。"
    assert labels("en").sentence(finding_text(f)) == "Checkpoint interval against the step time: saving every 1.00 s (< 5.00 min)."

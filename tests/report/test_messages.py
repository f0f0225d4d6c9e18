"""Findings in Chinese are rebuilt from kind + evidence; anything unknown falls back to English."""

from postmortem.analysis.types import Finding, FindingKind, FindingSeverity
from postmortem.report.messages import alignment_text, finding_text


def test_zh_findings_from_evidence():
    nan = Finding(FindingKind.NAN_LOSS, FindingSeverity.CRITICAL, "21 steps with NaN", {"count": 21, "first_step": 1234})
    assert finding_text(nan, "zh") == "21 个步的损失或梯度范数为 NaN/Inf，首次出现在第 1,234 步"
    assert finding_text(nan, "en") == "21 steps with NaN"
    reg = Finding(FindingKind.REGRESSION, FindingSeverity.WARNING, "throughput regressed vs base: step time +12.0%",
                  {"step_time_s": 0.12, "family": "throughput", "baseline": "base", "changes": "step time +12.0%"})
    assert finding_text(reg, "zh") == "吞吐相对基线 base 退化：单步耗时 +12.0%"


def test_unknown_kind_or_missing_evidence_falls_back_to_english():
    triage = Finding(FindingKind.TRIAGE, FindingSeverity.INFO, "data-bound: data wait is 23% of step time", {})
    assert finding_text(triage, "zh") == triage.message
    broken = Finding(FindingKind.NAN_LOSS, FindingSeverity.CRITICAL, "NaN from step 3", {})
    assert finding_text(broken, "zh") == "NaN from step 3"


def test_alignment_names():
    assert alignment_text("steady window", "zh") == "稳定窗口"
    assert alignment_text("by tokens (at 76,800 tokens)", "zh") == "按词元对齐（76,800 词元）"
    assert alignment_text("by tokens (at 76,800 tokens)", "en") == "by tokens (at 76,800 tokens)"
    assert alignment_text("something new", "zh") == "something new"


def test_config_check_names_in_chinese_keep_their_numbers():
    f = Finding(FindingKind.CONFIG, FindingSeverity.INFO, "checkpoint interval vs step time: saving every 1 s (< 300 s)", {})
    assert finding_text(f, "zh") == "检查点间隔与单步耗时: saving every 1 s (< 300 s)"
    odd = Finding(FindingKind.CONFIG, FindingSeverity.INFO, "a new check: detail", {})
    assert finding_text(odd, "zh") == "a new check: detail"

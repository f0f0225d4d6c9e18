"""The one place where numbers, units, dates and labels become text.

Every function takes ``None`` (value unknown) and returns ``MISSING``; the caller keeps the reason
and shows it as a tooltip or footnote. NaN / Inf are data and print as such.
"""

from __future__ import annotations

import math
from datetime import datetime, timezone

MISSING = "—"

_SI = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def _special(x: float | None) -> str | None:
    if x is None:
        return MISSING
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    return None


def number(x: float | None, digits: int = 3) -> str:
    """A plain number with ``digits`` significant digits, no exponent for everyday magnitudes."""
    if (s := _special(x)) is not None:
        return s
    assert x is not None
    if x == 0:
        return "0"
    mag = abs(x)
    if mag >= 1e7 or mag < 1e-4:
        return f"{x:.{digits - 1}e}"
    # round to significant digits first: 0.9996 becomes 1.00, not 1.000
    rounded = float(f"{x:.{digits - 1}e}")
    if abs(rounded) >= 10 ** (digits - 1):
        return f"{round(x):,}"  # never hide integer digits: 123,457 not 123,000
    decimals = max(digits - 1 - math.floor(math.log10(abs(rounded))), 0)
    return f"{rounded:,.{decimals}f}"


def _round_sig(x: float, digits: int) -> float:
    return float(f"{x:.{digits - 1}e}") if x else x


def integer(x: int | float | None) -> str:
    """Counts and steps with thousands separators: 12,345."""
    if (s := _special(None if x is None else float(x))) is not None:
        return s
    assert x is not None
    return f"{round(x):,}"


def step(x: int | None) -> str:
    return integer(x)


def duration(seconds: float | None, digits: int = 3) -> str:
    """Seconds with an automatic unit: µs, ms, s, min, h."""
    if (s := _special(seconds)) is not None:
        return s
    assert seconds is not None
    seconds = _round_sig(seconds, digits)  # so 0.9996 s picks "s", not "1,000 ms"
    mag = abs(seconds)
    if mag == 0:
        return "0 s"
    if mag < 1e-3:
        return f"{number(seconds * 1e6, digits)} µs"
    if mag < 1:
        return f"{number(seconds * 1e3, digits)} ms"
    if mag < 120:
        return f"{number(seconds, digits)} s"
    if mag < 7200:
        return f"{number(seconds / 60, digits)} min"
    return f"{number(seconds / 3600, digits)} h"


def si(x: float | None, unit: str, digits: int = 3) -> str:
    """A value with an SI prefix: 12.3k tokens/s, 1.20M."""
    if (s := _special(x)) is not None:
        return s
    assert x is not None
    x = _round_sig(x, digits)  # so 999,960 picks "M", not "1,000k"
    for factor, prefix in _SI:
        if abs(x) >= factor:
            return f"{number(x / factor, digits)}{prefix} {unit}".rstrip()
    return f"{number(x, digits)} {unit}".rstrip()


def tokens_per_s(x: float | None) -> str:
    return si(x, "tokens/s")


def samples_per_s(x: float | None) -> str:
    return si(x, "samples/s")


def tokens(x: float | None) -> str:
    return si(x, "tokens")


def flops(x: float | None) -> str:
    """FLOP/s with T/P prefixes: 312 TFLOPS."""
    if (s := _special(x)) is not None:
        return s
    assert x is not None
    for factor, prefix in _SI[:3]:
        if abs(x) >= factor:
            return f"{number(x / factor)} {prefix}FLOPS"
    return f"{number(x)} FLOPS"


def bytes_(x: float | None) -> str:
    """Binary sizes: 512 B, 1.50 KiB, 3.20 GiB."""
    if (s := _special(x)) is not None:
        return s
    assert x is not None
    for power, unit in ((4, "TiB"), (3, "GiB"), (2, "MiB"), (1, "KiB")):
        if abs(x) >= 1024**power:
            return f"{number(x / 1024**power)} {unit}"
    return f"{integer(x)} B"


def percent(fraction: float | None, decimals: int = 1) -> str:
    """A fraction 0-1 as a percentage that never rounds to a misleading 0% or 100%.

    As coverage.py does: 0.99996 shows as 99.9%, 0.00004 as 0.1%; only exact 0 and 1 show 0% / 100%.
    """
    if (s := _special(fraction)) is not None:
        return s
    assert fraction is not None
    pc = fraction * 100
    step_ = 10.0**-decimals
    if 0 < pc < step_:
        pc = step_
    elif 100 - step_ < pc < 100:
        pc = 100 - step_
    else:
        pc = round(pc, decimals)
    # truncate rather than round near 100 so 99.96 -> 99.9, handled above; elsewhere round
    return f"{pc:.{decimals}f}%"


def signed(text: str, x: float) -> str:
    """Prefix a formatted magnitude with its sign: +1.2 s, -3.4 ms, ±0."""
    if x > 0:
        return "+" + text
    if x < 0:
        return "-" + text
    return "±" + text


def delta(x: float | None, fmt=number) -> str:
    """A difference with its sign, formatted by ``fmt`` (e.g. ``duration``)."""
    if (s := _special(x)) is not None:
        return s
    assert x is not None
    return signed(fmt(abs(x)), x)


def rel_delta(fraction: float | None, decimals: int = 1) -> str:
    """A relative change with sign: +3.2%; a small non-zero change shows as +<0.1%, never 0.0%."""
    if (s := _special(fraction)) is not None:
        return s
    assert fraction is not None
    pc = abs(fraction) * 100
    smallest = 10.0**-decimals
    if 0 < pc < smallest / 2:
        return signed(f"<{smallest:.{decimals}f}%", fraction)
    return signed(f"{pc:.{decimals}f}%", fraction if round(pc, decimals) else 0.0)


def loss(x: float | None) -> str:
    return number(x, 4)


def datetime_(when: datetime | None, now: datetime | None = None, lang: str = "en") -> str:
    """An absolute UTC time, plus how long ago relative to the injected ``now``."""
    if when is None:
        return MISSING
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    text = when.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    if now is None:
        return text
    if now.tzinfo is None:
        now = now.replace(tzinfo=timezone.utc)
    return f"{text} ({ago((now - when).total_seconds(), lang)})"


def unix_time(ts: float | None, now: datetime | None = None, lang: str = "en") -> str:
    if ts is None or not math.isfinite(ts):
        return MISSING
    return datetime_(datetime.fromtimestamp(ts, tz=timezone.utc), now, lang)


def ago(seconds: float, lang: str = "en") -> str:
    units = ((86400, "day", "天"), (3600, "hour", "小时"), (60, "minute", "分钟"))
    if seconds < 60:
        return "刚刚" if lang == "zh" else "just now"
    for size, en, zh in units:
        if seconds >= size:
            n = int(seconds // size)
            return f"{n} {zh}前" if lang == "zh" else f"{n} {en}{'s' if n != 1 else ''} ago"
    return ""  # unreachable


# --------------------------------------------------------------------------- labels

_EN: dict[str, str] = {
    "report_title": "Training postmortem",
    "contents": "Contents",
    "generated": "Generated",
    "run": "Run",
    "baseline": "Baseline",
    "current": "Current",
    "no_baseline": "No baseline: figures are shown without comparison.",
    "summary": "Summary",
    "headline": "Headline figures",
    "figure": "Figure",
    "delta": "Change",
    "rel_delta": "Relative",
    "significance": "Significance",
    "significant": "significant",
    "within_noise": "within noise",
    "unknown": "unknown",
    "verdict_better": "better",
    "verdict_worse": "worse",
    "verdict_same": "unchanged",
    "verdict_unknown": "not comparable",
    "data_quality": "Data quality",
    "severity": "Severity",
    "code": "Code",
    "message": "Message",
    "file": "File",
    "location": "Location",
    "no_diagnostics": "No problems found while reading the run.",
    "throughput": "Throughput",
    "step_time": "Step time",
    "steady_window": "Steady window",
    "excluded_steps": "Excluded steps",
    "excluded_reason": "Reason",
    "step": "Step",
    "steps": "Steps",
    "count": "Count",
    "tokens": "Tokens",
    "value": "Value",
    "mfu": "MFU",
    "mfu_derivation": "How MFU was derived",
    "quantity": "Quantity",
    "source": "Source",
    "convergence": "Loss and gradient norm",
    "loss": "Loss",
    "loss_by_step": "Loss by step",
    "loss_by_tokens": "Loss by tokens",
    "grad_norm": "Gradient norm",
    "learning_rate": "Learning rate",
    "stability": "Loss spikes",
    "spike_heights": "Spike heights",
    "height": "Height",
    "duration": "Duration",
    "recovery": "Recovery",
    "no_spikes": "No loss spikes detected.",
    "phases": "Phases and resources",
    "phase": "Phase",
    "first_step": "First step",
    "last_step": "Last step",
    "per_rank": "Step time per rank",
    "rank": "Rank",
    "profile_breakdown": "Step-time breakdown (profiler)",
    "memory": "Memory",
    "checkpoints": "Checkpoint saves",
    "save_time": "Save time",
    "size": "Size",
    "checkpoint_tax": "Checkpoint tax",
    "config_checks": "Configuration checks",
    "check": "Check",
    "status": "Status",
    "detail": "Detail",
    "ok": "ok",
    "warn": "warning",
    "fail": "failed",
    "diff": "Hyperparameters and versions",
    "setting": "Setting",
    "no_diff": "No differences in settings.",
    "findings": "Findings",
    "no_findings": "Nothing to report.",
    "appendix": "Appendix: files read",
    "reader": "Reader",
    "rows": "Rows",
    "more_rows": "… {n} more rows: see the HTML report or metrics.json",
    "unclaimed": "Unclaimed files",
    "no_unclaimed": "Every file was claimed by a reader.",
    "note": "Note",
    "not_available": "not available",
    "show_table": "Show table",
    "chart_hint": "Drag to zoom along x, double-click to reset.",
    "section_empty": "No data for this section.",
    "info": "info",
    "warning": "warning",
    "error": "error",
    "page": "Page",
    "family_throughput": "Throughput",
    "family_efficiency": "Efficiency",
    "family_convergence": "Convergence",
    "family_stability": "Stability",
    "v_improved": "improved",
    "v_regressed": "regressed",
    "v_no significant change": "no significant change",
    "v_mixed": "mixed",
    "v_unknown": "unknown",
    "fig_tokens_per_s": "Tokens/s",
    "fig_step_time_s": "Step time (median)",
    "fig_mfu": "MFU",
    "fig_final_smoothed_loss": "Final loss (last 10% of steps)",
    "fig_loss_spikes": "Loss spikes",
    "fig_checkpoint_tax": "Checkpoint tax",
    "fig_samples_per_s": "Samples/s",
    "fig_steps_per_s": "Steps/s",
    "fig_grad_norm_spikes": "Grad-norm spikes",
    "fig_loss_at_equal_tokens": "Loss at equal tokens",
    "fig_nan_steps": "NaN/Inf steps",
    "fig_convergence_step": "Convergence step",
    "pp": "pp",
    "alignment": "Alignment",
    "method": "Method",
    "added": "added",
    "removed": "removed",
    "changed": "changed",
    "change": "Change",
    "top_findings": "Top findings",
    "window_summary": "Steady window: steps {start}–{end}, {kept} steps kept, {excluded} steps excluded in {ranges} ranges.",
    "no_window": "No steady window: {reason}",
    "triage": "Triage",
    "share": "Share",
    "p10_p90": "p10–p90",
    "median": "Median",
    "trimmed_mean": "Trimmed mean",
    "ci95": "95% CI of median",
    "slow": "slow",
    "excess": "Excess",
    "wait_share": "Data wait",
    "comm_share": "Comm. share",
    "max_memory": "Peak memory",
    "events": "Events",
    "spikes_of": "Spikes in {tag}",
    "rule": "Rule",
    "peak": "Peak",
    "nan_steps": "NaN/Inf steps",
    "overflow_steps": "Overflow steps",
    "grad_leads_loss": "Loss spikes preceded by a grad-norm spike",
    "time_to_target": "Time to target",
    "target": "Target",
    "hours": "Hours",
    "initial_loss": "Initial loss",
    "min_loss": "Minimum loss (smoothed)",
    "eval_loss": "Last eval loss",
    "implausible": "implausible",
    "timing_timer": "Step times are the training callback's own timer: no wall-clock gap between step ends was found, so the time between steps (data loading, host work) is not counted, and checkpoint saves and pauses between steps cannot be seen.",
    "timing_logged": "Step times are a logged step time; its source does not say whether it spans the whole step (wall clock) or only the callback's own timer.",
    "step_time_e2e": "Step time, e2e (median)",
    "step_time_timer": "Step time, callback timer (median)",
    "step_time_in_step": "Step time, in-step timer (median)",
    "gap_share": "Gap between steps (share of e2e)",
    "logged": "logged",
    "global_batch_size": "Global batch size",
    "seq_length": "Sequence length",
    "tokens_per_step": "Tokens per step",
    "samples_per_step": "Samples per step",
    "step_range": "Step range",
    "excluded_ranges": "Excluded step ranges",
    "convergence_tokens": "Tokens to converge",
    "time_to_converge": "Time to converge (wall clock)",
    "smoothing": "Smoothing",
    "not_converged": "Not converged",
    "left_out": "Left out of the smoothed loss",
    "left_out_spike": "spike steps",
    "left_out_nonfinite": "NaN/Inf steps",
    "others_median": "Median of the other ranks",
    "rank_spread": "Spread (max − min) / mean",
}

_ZH: dict[str, str] = {
    "report_title": "训练复盘报告",
    "contents": "目录",
    "generated": "生成时间",
    "run": "运行",
    "baseline": "基线",
    "current": "本次",
    "no_baseline": "未提供基线：以下指标不做对比。",
    "summary": "摘要",
    "headline": "关键指标",
    "figure": "指标",
    "delta": "变化",
    "rel_delta": "相对变化",
    "significance": "显著性",
    "significant": "显著",
    "within_noise": "在噪声范围内",
    "unknown": "未知",
    "verdict_better": "变好",
    "verdict_worse": "变差",
    "verdict_same": "无变化",
    "verdict_unknown": "无法比较",
    "data_quality": "数据质量",
    "severity": "级别",
    "code": "代码",
    "message": "说明",
    "file": "文件",
    "location": "位置",
    "no_diagnostics": "读取运行数据时未发现问题。",
    "throughput": "吞吐量",
    "step_time": "单步耗时",
    "steady_window": "稳定区间",
    "excluded_steps": "排除的步",
    "excluded_reason": "原因",
    "step": "步",
    "steps": "步数",
    "count": "数量",
    "tokens": "词元数",
    "value": "数值",
    "mfu": "MFU（模型算力利用率）",
    "mfu_derivation": "MFU 的计算方法",
    "quantity": "量",
    "source": "来源",
    "convergence": "损失与梯度范数",
    "loss": "损失",
    "loss_by_step": "损失（按步）",
    "loss_by_tokens": "损失（按词元数）",
    "grad_norm": "梯度范数",
    "learning_rate": "学习率",
    "stability": "损失尖峰",
    "spike_heights": "尖峰高度分布",
    "height": "高度",
    "duration": "持续时间",
    "recovery": "恢复",
    "no_spikes": "未检测到损失尖峰。",
    "phases": "阶段与资源",
    "phase": "阶段",
    "first_step": "起始步",
    "last_step": "结束步",
    "per_rank": "各卡单步耗时",
    "rank": "卡号",
    "profile_breakdown": "单步耗时构成（性能分析）",
    "memory": "内存",
    "checkpoints": "检查点保存",
    "save_time": "保存耗时",
    "size": "大小",
    "checkpoint_tax": "检查点开销占比",
    "config_checks": "配置检查",
    "check": "检查项",
    "status": "状态",
    "detail": "详情",
    "ok": "通过",
    "warn": "警告",
    "fail": "未通过",
    "diff": "超参数与版本差异",
    "setting": "配置项",
    "no_diff": "配置无差异。",
    "findings": "结论",
    "no_findings": "没有需要报告的问题。",
    "appendix": "附录：已读取的文件",
    "reader": "读取器",
    "rows": "行数",
    "more_rows": "… 另有 {n} 行，见 HTML 报告或 metrics.json",
    "unclaimed": "未识别的文件",
    "no_unclaimed": "所有文件均已被读取器识别。",
    "note": "备注",
    "not_available": "不可用",
    "show_table": "显示表格",
    "chart_hint": "沿横轴拖动可缩放，双击复原。",
    "section_empty": "本节没有数据。",
    "info": "提示",
    "warning": "警告",
    "error": "错误",
    "page": "页",
    "family_throughput": "吞吐",
    "family_efficiency": "效率",
    "family_convergence": "收敛",
    "family_stability": "稳定性",
    "v_improved": "提升",
    "v_regressed": "退化",
    "v_no significant change": "无显著变化",
    "v_mixed": "有升有降",
    "v_unknown": "未知",
    "fig_tokens_per_s": "词元吞吐（tokens/s）",
    "fig_step_time_s": "单步耗时（中位数）",
    "fig_mfu": "MFU",
    "fig_final_smoothed_loss": "最终损失（最后 10% 的步）",
    "fig_loss_spikes": "损失尖峰数",
    "fig_checkpoint_tax": "检查点开销占比",
    "fig_samples_per_s": "样本吞吐（samples/s）",
    "fig_steps_per_s": "每秒步数",
    "fig_grad_norm_spikes": "梯度范数尖峰数",
    "fig_loss_at_equal_tokens": "相同词元数时的损失",
    "fig_nan_steps": "NaN/Inf 步数",
    "fig_convergence_step": "收敛步",
    "pp": "个百分点",
    "alignment": "对齐方式",
    "method": "方法",
    "added": "新增",
    "removed": "删除",
    "changed": "修改",
    "change": "变更",
    "top_findings": "主要结论",
    "window_summary": "稳定区间：第 {start}–{end} 步，保留 {kept} 步，排除 {excluded} 步（{ranges} 个区间）。",
    "no_window": "没有稳定区间：{reason}",
    "triage": "瓶颈判断",
    "share": "占比",
    "p10_p90": "p10–p90",
    "median": "中位数",
    "trimmed_mean": "截尾均值",
    "ci95": "中位数 95% 置信区间",
    "slow": "慢",
    "excess": "超出",
    "wait_share": "数据等待",
    "comm_share": "通信占比",
    "max_memory": "峰值内存",
    "events": "事件",
    "spikes_of": "{tag} 的尖峰",
    "rule": "规则",
    "peak": "峰值",
    "nan_steps": "NaN/Inf 步",
    "overflow_steps": "溢出步",
    "grad_leads_loss": "损失尖峰前出现梯度范数尖峰的比例",
    "time_to_target": "达到目标所需",
    "target": "目标",
    "hours": "小时",
    "initial_loss": "初始损失",
    "min_loss": "最小损失（平滑）",
    "eval_loss": "最后一次评估损失",
    "implausible": "不可信",
    "timing_timer": "单步耗时来自训练回调自身的计时器：没有找到相邻步结束的墙钟时间间隔，因此步与步之间的时间（数据加载、主机侧开销）未计入，发生在步之间的检查点保存和暂停也无法看到。",
    "timing_logged": "单步耗时取自日志记录的步耗时；其来源没有说明它覆盖整个步（墙钟）还是仅为回调自身的计时。",
    "step_time_e2e": "单步耗时，端到端（中位数）",
    "step_time_timer": "单步耗时，回调计时（中位数）",
    "step_time_in_step": "单步耗时，步内计时（中位数）",
    "gap_share": "步间间隔（占端到端的比例）",
    "logged": "日志",
    "global_batch_size": "全局批大小",
    "seq_length": "序列长度",
    "tokens_per_step": "每步词元数",
    "samples_per_step": "每步样本数",
    "step_range": "步范围",
    "excluded_ranges": "排除的步区间",
    "convergence_tokens": "收敛所需词元数",
    "time_to_converge": "收敛所需时间（墙钟）",
    "smoothing": "平滑",
    "not_converged": "未收敛",
    "left_out": "平滑损失中剔除的步",
    "left_out_spike": "尖峰步",
    "left_out_nonfinite": "NaN/Inf 步",
    "others_median": "其余卡的中位数",
    "rank_spread": "离散度（最大 − 最小）/ 均值",
}

CATALOGS: dict[str, dict[str, str]] = {"en": _EN, "zh": _ZH}
LANGS = tuple(CATALOGS)


class Labels:
    """Message catalog for one language; unknown keys fall back to English, then to the key."""

    def __init__(self, lang: str) -> None:
        if lang not in CATALOGS:
            raise ValueError(f"unsupported language {lang!r}; choose one of {', '.join(LANGS)}")
        self.lang = lang
        self._table = CATALOGS[lang]

    def __getitem__(self, key: str) -> str:
        return self._table.get(key) or _EN.get(key) or key

    def get(self, key: str, default: str | None = None) -> str:
        return self._table.get(key) or _EN.get(key) or (default if default is not None else key)


def labels(lang: str) -> Labels:
    return Labels(lang)


def si_count(x: float | None) -> str:
    """A count with an SI prefix and no unit: 124M."""
    return si(x, "")

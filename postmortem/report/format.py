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
    "fig_final_smoothed_loss": "Final loss (smoothed)",
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
    "window_summary": "Steady window: steps {start}–{end}, {kept} steps kept, {excluded} excluded.",
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
    "fig_final_smoothed_loss": "最终损失（平滑）",
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
    "window_summary": "稳定区间：第 {start}–{end} 步，保留 {kept} 步，排除 {excluded} 步。",
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
}

# The profiler section's labels (report/profile_view.py), English and Chinese side by side.
_PROFILE_LABELS: dict[str, tuple[str, str]] = {
    "profile_section": ("Profiler: where the step time goes", "性能分析：step 耗时去向"),
    "triage_actions": ("First moves (the article's, in MindSpore terms)", "优先尝试的优化手段（按文中方法）"),
    "triage_also": ("Also past their thresholds", "其他超过判据的信号"),
    "evidence": ("Evidence", "证据"),
    "threshold": ("Threshold", "判据"),
    "part": ("Part", "组成"),
    "per_step": ("Per step", "每 step"),
    "breakdown_note": ("{steps} profiled steps of {ranks} rank(s) ({source}), {excluded} left out as outliers. The parts add up to the step; communication hidden under compute is shown beside, inside the compute bar.",
                       "{ranks} 张卡的 {steps} 个 Profiler step（{source}），{excluded} 个离群 step 未计入。各组成相加等于 step 耗时；被计算掩盖的通信单独列出（画在计算条内），不叠加。"),
    "ours": ("postmortem ({source})", "postmortem（{source}）"),
    "tool_own": ("{tool}'s own ({source})", "{tool} 自己的分析（{source}）"),
    "beside": ("beside: inside compute, not added", "单列：在计算时间内，不叠加"),
    "not_given": ("not in this layout", "该格式没有此项"),
    "graph_data": ("1 · Data preprocessing time and iteration gap", "1 · 数据预处理耗时与迭代间隙"),
    "graph_ops": ("2 · Operator time TopN", "2 · 算子耗时 TopN"),
    "graph_comm": ("3 · Communication share and communication operator time", "3 · 通信占比与通信算子耗时"),
    "steps_of_rank": ("Profiled steps of rank {rank}", "卡 {rank} 的 Profiler step"),
    "profiled_step": ("Profiled step", "Profiler step"),
    "by_type": ("Operator types", "按算子类型"),
    "by_name": ("Operators", "按算子"),
    "op_type": ("Type", "类型"),
    "operator": ("Operator", "算子"),
    "core": ("Core", "计算单元"),
    "calls": ("Calls", "调用次数"),
    "time_per_rank": ("Time / rank", "单卡耗时"),
    "share_of": ("Share of {scope}", "占{scope}比例"),
    "scope_kernels": ("device kernel time", "设备算子总耗时"),
    "scope_ai_core": ("AI Core time", " AI Core 耗时"),
    "scope_ai_cpu": ("AI CPU time", " AI CPU 耗时"),
    "ops_note": ("{source}, {ranks} rank(s): {total} of operator time per rank, {types} types, {names} named operators.",
                 "{source}，{ranks} 张卡：单卡算子耗时 {total}，{types} 种类型，{names} 个具名算子。"),
    "comm_kernels_flag": ("{type} takes {share} of the device kernel time: a communication operator at the top, flagged.",
                          "{type} 占设备算子总耗时的 {share}：排在前列的是通信算子，需重点关注。"),
    "comm_type": ("Communication operator", "通信算子"),
    "kind": ("Kind", "种类"),
    "wait": ("Wait", "等待"),
    "transit": ("Transfer", "传输"),
    "share_of_step": ("Share of step (in flight)", "占 step 比例（执行中）"),
    "profile_comm_line": ("{label}: {share} of the profiled step time is communication no compute hides.",
                  "{label}：Profiler step 耗时中有 {share} 是未被计算掩盖的通信。"),
    "comm_note": ("Operator time per rank over the profiled steps ({source}); operators run on parallel streams, so shares can add past 100%.",
                  "单卡在 Profiler step 内的通信算子耗时（{source}）；通信算子在多条流上并行，占比相加可超过 100%。"),
    "comm_kernels_note": ("No communication file: the communication kernels of {source}, their shares of the device kernel time.",
                          "没有通信文件：取自 {source} 中的通信算子，占设备算子总耗时的比例。"),
    "transport": ("Transport", "链路"),
    "bytes_per_rank": ("Bytes / rank", "单卡数据量"),
    "bandwidth": ("Bandwidth", "带宽"),
    "links_note": ("Bandwidth = bytes / transfer time, by transport ({source}).", "带宽 = 数据量 / 传输时间，按链路类型（{source}）。"),
    "data_pipeline": ("Data pipeline", "数据管道"),
    "stage": ("Stage", "阶段"),
    "workers": ("Workers", "并行数"),
    "queue_usage": ("Output queue fill", "输出队列占用率"),
    "queue_empty": ("Queue empty", "队列为空比例"),
    "queue_line": ("The device found its data queue ({stage}) empty for {share} of {samples} batches (rank {rank}).",
                   "设备数据队列（{stage}）在 {samples} 个 batch 中有 {share} 为空（卡 {rank}）。"),
    "slowest_line": ("Slowest stage: {stage} — {rule}.", "最慢的阶段：{stage}——{rule}。"),
    "no_slowest": ("No stage stands out: {rule}.", "没有明显慢的阶段：{rule}。"),
    "rule_producer_fuller": ("its producer's output queue is fuller than its own", "其上游的输出队列比它自己的更满"),
    "rule_source_empty": ("a source whose output queue is below 60% full", "数据源阶段的输出队列占用低于 60%"),
    "rule_none": ("every queue is above 80% full, the pipeline keeps up", "所有队列占用都高于 80%，数据管道跟得上"),
    "per_rank_profile": ("Per rank: compute, and waiting on the other ranks", "各卡：计算与等待其他卡"),
    "role": ("Role", "角色"),
    "role_waits": ("waits", "等待者"),
    "role_awaited": ("awaited (straggler)", "被等待（拖慢者）"),
    "wait_share_col": ("Waiting on others", "等待其他卡"),
    "compute_share_col": ("Compute", "计算"),
    "receive_share_col": ("Receive in flight", "Receive 执行中"),
    "data_wait_col": ("Data wait", "数据等待"),
    "idle_col": ("Idle", "空闲"),
    "ranks_shown": ("{shown} of {n} ranks: the {k} that wait most, the {k} that wait least, and the stragglers.",
                    "共 {n} 张卡，显示 {shown} 张：等待最多的 {k} 张、等待最少的 {k} 张以及拖慢者。"),
    "rank_count": ("Ranks", "卡数"),
    "wait_distribution": ("Waiting on others, over the ranks", "各卡等待占比分布"),
    "stragglers_none": ("No rank stands out: the ranks wait on each other about equally.", "没有明显的拖慢者：各卡相互等待的程度相近。"),
    "outliers": ("Profiled steps left out of the breakdown", "未计入耗时构成的离群 step"),
    "outliers_note": ("A step more than {ratio}× its rank's median (a first or warm-up step) is left out.", "超过该卡中位数 {ratio} 倍的 step（首个或预热 step）不计入。"),
    "grew": ("Grew most", "增长最多的组成"),
    "left_out": ("Left out", "未计入"),
    "colon": (": ", "："),
    "stop": (".", "。"),
    "whole_capture": ("whole capture", "整个采集"),
    "kind_p2p": ("point-to-point", "点对点"),
    "kind_collective": ("collective", "集合通信"),
    "no_graph_data": ("no per-step breakdown and no data pipeline file in this profile", "该 Profiler 数据中没有逐 step 的耗时构成，也没有数据管道文件"),
    "no_graph_ops": ("no operator file in this profile (aicore_intermediate, kernel_details.csv, op_summary)",
                     "该 Profiler 数据中没有算子文件（aicore_intermediate、kernel_details.csv、op_summary）"),
    "no_graph_comm": ("no communication file in this profile (hccl_raw, communication.json, the step trace's communication ops)",
                      "该 Profiler 数据中没有通信文件（hccl_raw、communication.json、step trace 中的通信算子）"),
    "memory_split": ("Peak memory, split", "显存峰值构成"),
    "mem_peak": ("Peak allocated", "峰值（已分配）"),
    "mem_reserved": ("Peak reserved", "峰值（已预留）"),
    "mem_capacity": ("Device memory", "设备显存"),
    "mem_params": ("Parameters", "参数"),
    "mem_grads": ("Gradients (upper bound)", "梯度（上限）"),
    "mem_optim": ("Optimizer state", "优化器状态"),
    "mem_act": ("Activations and other (peak − the above)", "中间激活及其他（峰值 − 以上三项）"),
    "mem_note": ("Rank {rank}, series {component}; parameters and optimizer state from {checkpoint}: elements × dtype size; one gradient per parameter in its dtype.",
                 "卡 {rank}，序列 {component}；参数与优化器状态按 {checkpoint} 中的元素数 × dtype 字节数计算；每个参数按同 dtype 计一份梯度。"),
    "mem_of_peak": ("Of the peak", "占峰值"),
    "gap_no_peak": ("no device memory record", "没有设备显存记录"),
    "gap_no_checkpoint": ("no checkpoint header to size parameters and optimizer state", "没有可用于计算参数和优化器状态大小的 checkpoint"),
    "gap_static_over_peak": ("the checkpoint's tensors are larger than the peak (a whole-model checkpoint of a sharded run?)",
                             "checkpoint 中的张量比峰值还大（切分训练的完整模型 checkpoint？）"),
    "no_profile": ("No profiler data in this run: profile 30–50 steady steps to see the three graphs.",
                   "本次训练没有 Profiler 数据：对 30–50 个稳定 step 开启 Profiler 才能看到这三张图。"),
    "no_breakdown": ("The profile has no step breakdown (no step trace or overlap analysis file).",
                     "Profiler 数据中没有 step 耗时构成（没有 step trace 或 overlap analysis 文件）。"),
    "tool_figures": ("The profiler's own figures (mean over ranks)", "Profiler 自己的指标（各卡平均）"),
    "tool_flops_utilization": ("FLOPs utilisation (MindSpore flops_summary)", "算力利用率（MindSpore flops_summary）"),
    "tool_total_flops": ("FLOPs of one step (MindSpore flops_summary)", "单 step FLOPs（MindSpore flops_summary）"),
    "tool_mean_op_flops_per_s": ("Mean of the operators' own rates (MindSpore flops_summary)", "各算子自身速率的平均（MindSpore flops_summary）"),
    "tool_host_cpu_user": ("Host CPU user", "Host CPU 用户态"),
    "tool_host_cpu_sys": ("Host CPU system", "Host CPU 内核态"),
    "tool_host_cpu_io_wait": ("Host CPU I/O wait", "Host CPU I/O 等待"),
    "tool_host_cpu_idle": ("Host CPU idle", "Host CPU 空闲"),
    "tool_process_cpu_cores": ("Training process CPU (cores)", "训练进程 CPU（核）"),
    "tool_cpu_count": ("Host CPUs", "Host CPU 数"),
    "tool_wait_share": ("{tool}: waiting on others", "{tool}：等待其他卡"),
}
for _key, (_en, _zh) in _PROFILE_LABELS.items():
    _EN.setdefault(_key, _en)
    _ZH.setdefault(_key, _zh)

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

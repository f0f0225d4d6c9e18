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
#
# The static words of every document (report, summary.md, archive index, weekly digest, CLI
# line), both languages side by side: key -> (English, Chinese). The Chinese follows the
# vocabulary of the practitioner's article the product is built on (稳态吞吐, 显存, 通信占比,
# 梯度范数; loss, token, step, checkpoint written as the article writes them). Sentences with
# numbers are format strings ({n}, {start}, ...); the numbers stay data until here.
# Code vocabularies (exclusion reasons, phase and event names, verdicts) are keys with a prefix:
# reason_<code>, phase_<name>, event_<kind>, ...; `Labels.name(prefix, code)` looks them up and
# keeps an unknown code as written.

_LABELS: dict[str, tuple[str, str]] = {
    # frame
    "report_title": ("Training postmortem", "训练复盘报告"),
    "contents": ("Contents", "目录"),
    "generated": ("Generated", "生成时间"),
    "colon": (": ", "："),
    "list_sep": (", ", "、"),
    "run": ("Run", "任务"),
    "experiment": ("Experiment", "实验"),
    "baseline": ("Baseline", "基线"),
    "current": ("Current", "本次"),
    "no_baseline": ("No baseline: figures are shown without comparison.", "未指定基线：以下指标不做对比。"),
    "summary": ("Summary", "摘要"),
    "headline": ("Headline figures", "关键指标"),
    "figure": ("Figure", "指标"),
    "delta": ("Change", "变化"),
    "rel_delta": ("Relative", "相对变化"),
    "significance": ("Significance", "显著性"),
    "significant": ("significant", "显著"),
    "not_significant": ("not significant", "不显著"),
    "within_noise": ("within noise", "噪声范围内"),
    "unknown": ("unknown", "未知"),
    "verdict_better": ("better", "变好"),
    "verdict_worse": ("worse", "变差"),
    "verdict_same": ("unchanged", "无变化"),
    "verdict_unknown": ("not comparable", "无法比较"),
    # data quality
    "data_quality": ("Data quality", "数据质量"),
    "severity": ("Severity", "级别"),
    "code": ("Code", "代码"),
    "message": ("Message", "说明"),
    "file": ("File", "文件"),
    "location": ("Location", "位置"),
    "no_diagnostics": ("No problems found while reading the run.", "读取训练数据时未发现问题。"),
    "info": ("info", "提示"),
    "warning": ("warning", "警告"),
    "error": ("error", "错误"),
    "critical": ("critical", "严重"),
    # throughput
    "throughput": ("Throughput", "吞吐"),
    "step_time": ("Step time", "step 耗时"),
    "steady_window": ("Steady window", "稳态区间"),
    "excluded_steps": ("Excluded steps", "排除的 step"),
    "excluded_reason": ("Reason", "原因"),
    "step": ("Step", "step"),
    "steps": ("Steps", "step 数"),
    "count": ("Count", "数量"),
    "tokens": ("Tokens", "token 数"),
    "value": ("Value", "数值"),
    "window_summary": ("Steady window: steps {start}–{end}, {kept} steps kept, {excluded} steps excluded in {ranges} ranges.",
                       "稳态区间：第 {start}–{end} 步，保留 {kept} 个 step，排除 {excluded} 个 step（{ranges} 段）。"),
    "no_window": ("No steady window: {reason}", "没有稳态区间：{reason}"),
    "global_batch_size": ("Global batch size", "全局 batch size"),
    "seq_length": ("Sequence length", "序列长度"),
    "tokens_per_step": ("Tokens per step", "每 step token 数"),
    "logged": ("logged: {tag}", "日志记录值：{tag}"),
    "n_steps": ("n = {n}", "n = {n}"),
    "steps_per_s_unit": ("steps/s", "steps/s"),
    "median": ("Median", "中位数"),
    "trimmed_mean": ("Trimmed mean", "截尾均值"),
    "ci95": ("95% CI of median", "中位数 95% 置信区间"),
    "p10_p90": ("p10–p90", "p10–p90"),
    # exclusion reasons (analysis/window.py)
    "reason_compile": ("compile", "编译"),
    "reason_warmup": ("warmup", "预热"),
    "reason_checkpoint": ("checkpoint", "checkpoint 保存"),
    "reason_eval": ("eval", "评估"),
    "reason_data_stall": ("data stall", "数据停顿"),
    "reason_resume": ("resume", "恢复训练"),
    "reason_nan": ("NaN/Inf", "NaN/Inf"),
    "reason_overflow": ("overflow", "溢出"),
    "reason_outlier": ("outlier", "离群"),
    "reason_missing": ("no step time", "缺少耗时"),
    # MFU
    "mfu": ("MFU", "MFU"),
    "mfu_derivation": ("How MFU was derived", "MFU 的计算方法"),
    "mfu_formula": ("MFU = FLOPs per token × tokens/s ÷ (peak FLOPS per device × devices); "
                    "FLOPs per token = 6N + 12·L·H·Q·T (PaLM, appendix B).",
                    "MFU = 每 token FLOPs × tokens/s ÷（单卡峰值算力 × 卡数）；"
                    "每 token FLOPs = 6N + 12·L·H·Q·T（PaLM 附录 B）。"),
    "mfu_causal": ("MFU (causal attention ½)", "MFU（因果注意力按一半计）"),
    "mfu_params": ("N (params for MFU)", "N（MFU 所用参数量）"),
    "params_total": ("Params (total)", "参数量（全部）"),
    "params_non_embedding": ("Params (non-embedding)", "参数量（不含 embedding）"),
    "embedding_params": ("Embedding params", "embedding 参数量"),
    "position_embedding_params": ("Position embedding params", "位置 embedding 参数量"),
    "flops_per_token": ("FLOPs / token", "每 token FLOPs"),
    "flops_per_token_causal": ("FLOPs / token (causal)", "每 token FLOPs（因果）"),
    "peak_per_device": ("Peak / device", "单卡峰值算力"),
    "devices": ("Devices", "卡数"),
    "achieved_per_device": ("Achieved / device", "单卡实际算力"),
    "params_from": ("N: {path}", "N 取自：{path}"),
    "quantity": ("Quantity", "量"),
    "source": ("Source", "来源"),
    "method": ("Method", "方法"),
    # convergence
    "convergence": ("Loss and gradient norm", "loss 与梯度范数"),
    "loss": ("Loss", "loss"),
    "series_raw": ("{loss} ({run})", "{loss}（{run}）"),
    "series_smoothed": ("{loss} ({run}, smoothed)", "{loss}（{run}，平滑）"),
    "loss_by_step": ("Loss by step", "loss（按 step）"),
    "loss_by_tokens": ("Loss by tokens", "loss（按 token 数）"),
    "grad_norm": ("Gradient norm", "梯度范数"),
    "learning_rate": ("Learning rate", "学习率"),
    "initial_loss": ("Initial loss", "初始 loss"),
    "min_loss": ("Minimum loss (smoothed)", "最小平滑 loss"),
    "eval_loss": ("Last eval loss", "最后一次评估 loss"),
    "hours": ("Time", "耗时"),
    "time_to_target": ("Time to target", "达到目标 loss 所需"),
    "target": ("Target", "目标 loss"),
    "aux_first": ("first", "首个值"),
    "aux_last": ("last", "最后值"),
    "aux_min": ("min", "最小值"),
    "aux_final": ("final (smoothed)", "最终平滑值"),
    # stability
    "stability": ("Loss spikes", "稳定性"),
    "spike_heights": ("Spike heights", "尖峰高度分布"),
    "spikes_of": ("Spikes in {tag}", "{tag} 尖峰"),
    "spike": ("spike", "尖峰"),
    "spike_stats": ("{title}: {n} · p50 {p50} · p90 {p90} · max {max} · {rule_label}: {rule}",
                    "{title}：{n} 次 · p50 {p50} · p90 {p90} · 最大 {max} · {rule_label}：{rule}"),
    "height": ("Height", "高度"),
    "duration": ("Duration", "持续时间"),
    "recovery": ("Recovery", "恢复"),
    "recovery_fast": ("fast", "快速"),
    "recovery_slow": ("slow", "缓慢"),
    "recovery_none": ("none", "未恢复"),
    "no_spikes": ("No loss spikes detected.", "未检测到尖峰。"),
    "nan_steps": ("NaN/Inf steps", "NaN/Inf step"),
    "overflow_steps": ("Overflow steps", "溢出 step"),
    "grad_leads_loss": ("Loss spikes preceded by a grad-norm spike", "loss 尖峰前出现梯度范数尖峰的比例"),
    "within_steps": ("≤ {n} steps", "≤ {n} 个 step"),
    "rule": ("Rule", "规则"),
    "peak": ("Peak", "峰值"),
    "nonfinite": ("NaN/Inf", "NaN/Inf"),
    # phases and resources
    "phases": ("Phases and resources", "阶段与资源"),
    "phase": ("Phase", "阶段"),
    "phase_startup": ("startup", "启动"),
    "phase_warmup": ("warmup", "预热"),
    "phase_main": ("main", "主训练"),
    "phase_decay": ("decay", "衰减"),
    "first_step": ("First step", "起始 step"),
    "last_step": ("Last step", "结束 step"),
    "start": ("start", "起点"),
    "end": ("end", "终点"),
    "events": ("Events", "事件"),
    "event_checkpoint_save": ("checkpoint save", "checkpoint 保存"),
    "event_checkpoint_interrupted": ("interrupted checkpoint", "中断的 checkpoint 保存"),
    "event_pause": ("pause", "暂停"),
    "event_skip": ("skipped step", "跳过的 step"),
    "event_restart": ("restart", "重启"),
    "event_compile": ("compile", "编译"),
    "event_eval": ("eval", "评估"),
    "event_overflow": ("overflow", "溢出"),
    "event_log_error": ("log error", "日志错误"),
    "event_stall": ("data stall", "数据停顿"),
    "per_rank": ("Step time per rank", "各卡 step 耗时"),
    "rank": ("Rank", "卡号"),
    "slow": ("slow", "慢"),
    "excess": ("Excess", "超出"),
    "profile_breakdown": ("Step-time breakdown (profiler)", "step 耗时构成（Profiler）"),
    "part": ("Part", "组成"),
    "part_compute": ("compute", "计算"),
    "part_exposed_comm": ("communication not overlapped", "未被掩盖的通信"),
    "part_overlapped": ("communication overlapped", "被计算掩盖的通信"),
    "part_free": ("idle", "空闲"),
    "part_bubble": ("pipeline bubble", "流水线气泡"),
    "part_preparing": ("data preparation", "数据准备"),
    "share": ("Share", "占比"),
    "comm_share": ("Comm. share", "通信占比"),
    "comm_line": ("{label}: {share} ({method}; {n} steps)", "{label}：{share}（{method}；{n} 个 step）"),
    "wait_share": ("Data wait", "数据等待"),
    "max_memory": ("Peak memory", "显存峰值"),
    "memory": ("Memory", "显存"),
    "triage": ("Triage", "瓶颈判断"),
    "triage_data-bound": ("data-bound", "数据侧"),
    "triage_communication-bound": ("communication-bound", "通信侧"),
    "triage_memory-bound": ("memory-bound", "显存侧"),
    "triage_compute-bound": ("compute-bound", "计算侧"),
    "triage_unknown": ("not decided", "无法判断"),
    # checkpoints
    "checkpoints": ("Checkpoint saves", "checkpoint 保存"),
    "save_time": ("Save time", "保存耗时"),
    "size": ("Size", "大小"),
    "checkpoint_tax": ("Checkpoint tax", "checkpoint 开销占比"),
    "saves": ("{n} saves", "{n} 次保存"),
    "other_checkpoints": ("{n} other checkpoint files (not saves of this run's steps: no step, interrupted or "
                          "landscape; not in the checkpoint tax)",
                          "另有 {n} 个 checkpoint 文件（不是本次训练按 step 的保存：无 step、中断残留或 landscape；不计入 "
                          "checkpoint 开销）"),
    "model_params": ("Model parameters", "模型参数量"),
    # config checks and settings
    "config_checks": ("Configuration checks", "配置检查"),
    "check": ("Check", "检查项"),
    "status": ("Status", "状态"),
    "detail": ("Detail", "详情"),
    "ok": ("ok", "通过"),
    "warn": ("warning", "警告"),
    "fail": ("failed", "未通过"),
    "diff": ("Changed settings", "配置差异"),
    "setting": ("Setting", "配置项"),
    "no_diff": ("No differences in settings.", "配置无差异。"),
    "added": ("added", "新增"),
    "removed": ("removed", "删除"),
    "changed": ("changed", "修改"),
    "change": ("Change", "变更"),
    # findings, appendix
    "findings": ("Findings", "检查结果"),
    "top_findings": ("Top findings", "主要结论"),
    "no_findings": ("Nothing to report.", "没有需要报告的问题。"),
    "appendix": ("Appendix: files read", "附录：读取的文件"),
    "reader": ("Reader", "读取器"),
    "rows": ("Rows", "行数"),
    "more_rows": ("… {n} more rows: see the HTML report or metrics.json", "… 另有 {n} 行，见 HTML 报告或 metrics.json"),
    "unclaimed": ("Unclaimed files", "未识别的文件"),
    "no_unclaimed": ("Every file was claimed by a reader.", "所有文件都已被读取器识别。"),
    "note": ("Note", "备注"),
    "not_available": ("not available", "不可用"),
    "show_table": ("Show table", "显示表格"),
    "chart_hint": ("Drag to zoom along x, double-click to reset.", "沿横轴拖动可缩放，双击复原。"),
    "section_empty": ("No data for this section.", "本节没有数据。"),
    "page": ("Page", "页"),
    "alignment": ("Alignment", "对齐方式"),
    # families and verdicts (analysis/compare.py)
    "family_throughput": ("Throughput", "吞吐"),
    "family_efficiency": ("Efficiency", "算力利用"),
    "family_convergence": ("Convergence", "收敛"),
    "family_stability": ("Stability", "稳定性"),
    "v_improved": ("improved", "提升"),
    "v_regressed": ("regressed", "退化"),
    "v_no significant change": ("no significant change", "无显著变化"),
    "v_mixed": ("mixed", "有升有降"),
    "v_unknown": ("unknown", "未知"),
    # figures (the headline and the comparison)
    "fig_tokens_per_s": ("Tokens/s", "稳态吞吐（tokens/s）"),
    "fig_step_time_s": ("Step time (median)", "step 耗时（中位数）"),
    "fig_mfu": ("MFU", "MFU"),
    "fig_final_smoothed_loss": ("Final loss (last 10% of steps)", "最终 loss（最后 10% 的 step）"),
    "fig_loss_spikes": ("Loss spikes", "loss 尖峰数"),
    "fig_checkpoint_tax": ("Checkpoint tax", "checkpoint 开销占比"),
    "fig_samples_per_s": ("Samples/s", "样本吞吐（samples/s）"),
    "fig_steps_per_s": ("Steps/s", "steps/s"),
    "fig_grad_norm_spikes": ("Grad-norm spikes", "梯度范数尖峰数"),
    "fig_loss_at_equal_tokens": ("Loss at equal tokens", "相同 token 数下的 loss"),
    "fig_nan_steps": ("NaN/Inf steps", "NaN/Inf step 数"),
    "fig_convergence_step": ("Convergence step", "收敛 step"),
    "tokens_per_s": ("Tokens/s", "吞吐（tokens/s）"),
    "pp": ("pp", "个百分点"),
    # summary.md and the CLI line
    "paren": (" ({})", "（{}）"),
    "against_baseline": ("{verdict}; baseline {baseline}", "{verdict}；基线 {baseline}"),
    "list_sep_md": (", ", "，"),
    "sentence_sep": ("; ", "；"),
    "vs_baseline": ("vs {baseline}", "对比 {baseline}"),
    "wrote": ("wrote {path}", "已写入 {path}"),
    "check_head": ("{path}: {devices}", "{path}：{devices}"),
    "check_devices": ("{n} devices", "{n} 卡"),
    "check_devices_unknown": ("device count not given (--devices)", "未给出卡数（--devices）"),
    "check_fix": ("fix", "建议"),
    "check_summary": ("{fail} failed, {warn} warnings, {ok} passed, {unknown} not checkable",
                      "{fail} 项未通过，{warn} 项警告，{ok} 项通过，{unknown} 项无法检查"),
    "digest_line": ("{period}: {runs} run(s), {regressed} regressed", "{period}：{runs} 个任务，{regressed} 个退化"),
    "cli_tokens": ("tokens/s", "稳态吞吐"),
    "cli_final_loss": ("final loss", "最终 loss"),
    "cli_spikes": ("loss spikes", "loss 尖峰"),
    "cli_nan": ("NaN steps", "NaN step"),
    "cli_step": ("step", "step 耗时"),
    # the archive index: the team's dashboard
    "dashboard_title": ("Training dashboard", "训练看板"),
    "dashboard_meta": ("Experiments: {experiments} · runs: {runs} · updated {when}", "{experiments} 个实验，{runs} 个任务 · 更新于 {when}"),
    "experiment_meta": ("Runs: {runs} · last finished {when}", "{runs} 个任务 · 最近完成于 {when}"),
    "all_runs": ("All {n} runs of {experiment}", "{experiment} 的全部 {n} 个任务"),
    "latest_runs": ("The latest {shown} runs are shown (of {n}).", "只显示最近的 {shown} 个任务（共 {n} 个）。"),
    "no_runs": ("No runs archived yet.", "还没有归档的任务。"),
    "col_run": ("Run", "任务"),
    "col_finished": ("Finished (UTC)", "完成时间（UTC）"),
    "col_changed": ("Changed against the previous run", "相对上一次的改动"),
    "col_tokens_per_s": ("Tokens/s", "稳态吞吐 tokens/s"),
    "col_mfu": ("MFU", "MFU"),
    "col_memory": ("Peak memory", "显存峰值"),
    "col_comm": ("Comm. share", "通信占比"),
    "col_data_wait": ("Data wait", "数据等待"),
    "col_loss_equal": ("Loss at equal tokens", "相同 token 数下的 loss"),
    "col_verdict": ("Against the baseline", "对比基线"),
    "first_run": ("first run", "首次运行"),
    "no_setting_changed": ("no setting changed", "配置无变化"),
    "more_changes": ("+{n} more", "另有 {n} 项"),
    "changed_vs_baseline": ("changed against {baseline}: {keys}", "相对 {baseline} 改动：{keys}"),
    "delta_vs_previous": ("{rel} against the previous run", "相对上一次 {rel}"),
    "loss_equal_title": ("{value}: {rel} against {baseline}; aligned {alignment}", "{value}，与 {baseline} 相比 {rel}；{alignment}"),
    "verdict_none": ("no significant change", "无显著变化"),
    "verdicts_title": ("against {baseline}: {verdicts}", "对比 {baseline}：{verdicts}"),
    "why_old_archive": ("not in this run's metrics.json ({key}): the postmortem that built it did not record it",
                        "该任务的 metrics.json 中没有 {key}：生成它的 postmortem 版本未记录"),
    "why_no_steady": ("no steady throughput: no steady window or no tokens per step",
                      "没有稳态吞吐：没有稳态区间或不知道每 step 的 token 数"),
    "why_no_memory": ("no device memory record in this run", "该任务没有显存记录"),
    "why_no_comm": ("no profiler communication data in this run", "该任务没有 Profiler 通信数据"),
    "why_not_computed": ("not computed for this run", "该任务没有算出这个指标"),
    "why_no_data_wait": ("no data wait measured in this run", "该任务没有测到数据等待"),
    "why_no_baseline": ("built without a baseline", "生成报告时未指定基线"),
    "why_no_loss_equal": ("the runs share no token range to compare at", "两个任务没有可对比的共同 token 区间"),
    "why_no_settings": ("the archived settings cannot be read (data/run.json)", "无法读取归档的配置（data/run.json）"),
    "why_unreadable_metrics": ("metrics.json cannot be read", "无法读取 metrics.json"),
    "trends": ("Trends", "趋势"),
    "trend_time": ("Finished (UTC)", "完成时间（UTC）"),
    "trends_missing": ("Not drawn (fewer than two runs have a value): {names}", "未绘制（有数值的任务不足两个）：{names}"),
    "nan_flag": ("NaN/Inf × {n}", "NaN/Inf × {n}"),
    # the weekly digest
    "digest_title": ("Weekly digest", "训练周报"),
    "digest_meta": ("Runs finished: {runs} · regressed against their baselines: {regressed}",
                    "完成 {runs} 个任务 · {regressed} 个任务相对基线退化"),
    "digest_empty": ("No runs finished in this period.", "本周期没有完成的任务。"),
    "attention": ("Needs attention", "需要关注"),
    "nothing_to_flag": ("Nothing needs attention: no regression, NaN or failed launch.",
                        "没有需要关注的问题：无退化、无 NaN、无失败的启动。"),
    "regressed_item": ("{families} regressed against {baseline}", "{families}相对基线 {baseline} 退化"),
    "more_items": ("… {n} more in the reports", "… 另有 {n} 条，见各任务报告"),
    "tag_failure": ("failure", "故障"),
    "period_runs": ("Runs finished in the period", "本周期完成的任务"),
    "report_link": ("report", "报告"),
    # analysis: timing, plausibility, loss figures, ranks
    "implausible": ("implausible", "不可信"),
    "timing_timer": ("Step times are the training callback's own timer: no wall-clock gap between step ends was found, so the time between steps (data loading, host work) is not counted, and checkpoint saves and pauses between steps cannot be seen.",
                     "单步耗时取自训练回调自身的计时器：没有找到相邻 step 结束时刻的墙钟间隔，因此 step 之间的时间（数据加载、主机侧开销）未计入，发生在 step 之间的 checkpoint 保存和暂停也看不到。"),
    # recorded by postmortem's own training callback (readers/callback.py)
    "recorded_by": ("Recorded by", "记录方式"),
    "dataset": ("Dataset", "数据集"),
    "recorder_callback": ("postmortem's training callback (format {format})", "postmortem 训练回调（格式 {format}）"),
    "timing_callback": ("Recorded by postmortem's training callback: every step's end on the wall clock, its in-step time and the "
                        "gap before it (host / data wait) were measured in the training process, not inferred from logs.",
                        "由 postmortem 训练回调记录：每个 step 结束的墙钟时刻、step 内耗时及其之前的间隙（主机 / 数据等待）均在训练进程内实测，"
                        "而非从日志推断。"),
    "timing_logged": ("Step times are a logged step time; its source does not say whether it spans the whole step (wall clock) or only the callback's own timer.",
                      "单步耗时取自日志中记录的耗时；来源没有说明它覆盖整个 step（墙钟）还是只是回调自身的计时。"),
    "step_time_e2e": ("Step time, e2e (median)", "单步耗时，端到端（中位数）"),
    "step_time_timer": ("Step time, callback timer (median)", "单步耗时，回调计时（中位数）"),
    "step_time_in_step": ("Step time, in-step timer (median)", "单步耗时，step 内计时（中位数）"),
    "gap_share": ("Gap between steps (share of e2e)", "step 间隙（占端到端耗时）"),
    "logged_word": ("logged", "日志记录"),
    "samples_per_step": ("Samples per step", "每 step 样本数"),
    "step_range": ("Step range", "step 范围"),
    "excluded_ranges": ("Excluded step ranges", "排除的 step 区段"),
    "convergence_tokens": ("Tokens to converge", "收敛所需 token 数"),
    "time_to_converge": ("Time to converge (wall clock)", "收敛所需时间（墙钟）"),
    "smoothing": ("Smoothing", "平滑方式"),
    "not_converged": ("Not converged", "未收敛"),
    "left_out": ("Left out of the smoothed loss", "平滑 loss 中剔除的 step"),
    "left_out_spike": ("spike steps", "尖峰 step"),
    "left_out_nonfinite": ("NaN/Inf steps", "NaN/Inf step"),
    "others_median": ("Median of the other ranks", "其余各卡的中位数"),
    # the verdict-first block and the identity section
    "verdict_title": ("Verdict", "诊断结论"),
    "try_first": ("Try first", "优先尝试"),
    "evidence_in": ("Evidence", "证据"),
    "settings": ("Settings of the run", "训练配置"),
    "settings_note": ("What defines the run (the article: bind the hyperparameters, dataset and framework versions to the "
                      "results); each value with the file it was read from.",
                      "定义本次训练的配置（文中：把超参数、数据集版本、框架版本与评估结果绑定存档）；每项注明读取自哪个文件。"),
    "settings_diff": ("Changed against the baseline, what can explain a change first", "相对基线的改动（按能否解释变化排序）"),
    "run_values": ("This run's own values (not settings)", "本次训练自身的数值（不是配置）"),
    "versions": ("Versions", "版本"),
    "can_explain": ("Can move", "会影响"),
    "target_options": ("given (--target-loss)", "给定（--target-loss）"),
    "target_baseline": ("the baseline's final loss", "基线的最终 loss"),
    "stop": (".", "。"),
    "group": ("Group", "类别"),
    "verdict_more": ("… and {n} more in the report", "……报告中还有 {n} 项"),
    "nothing": ("nothing", "无"),
    "no_settings": ("No settings were found in the run's files (config, lineage, logs).", "训练目录的文件（配置、lineage、日志）中没有找到配置。"),
    "versions_missing": ("Not found", "未找到"),
    "rank_spread": ("Spread (max − min) / mean", "离散度（最大 − 最小）/ 均值"),
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
    "group": ("Group", "类别"),
    "verdict_more": ("… and {n} more in the report", "……报告中还有 {n} 项"),
    "nothing": ("nothing", "无"),
    "no_settings": ("No settings were found in the run's files (config, lineage, logs).", "训练目录的文件（配置、lineage、日志）中没有找到配置。"),
    "versions_missing": ("Not found", "未找到"),
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
_LABELS.update({k: v for k, v in _PROFILE_LABELS.items() if k not in _LABELS})
_LABELS.update({  # a failed run (report/failure_view.py)
    "failure_section": ("How the run failed", "训练中断分析"),
    "failure_where": ("File and line", "文件与行号"),
    "failure_role": ("Role", "角色"),
    "failure_line": ("Line as written", "原始报错行"),
    "failure_more": ("and {n} more ranks' first errors", "另有 {n} 个 rank 的首条报错未列出"),
    "failure_kind": ("Failure", "中断类型"),
    "failure_at": ("Failed at", "中断位置"),
})

CATALOGS: dict[str, dict[str, str]] = {
    "en": {k: en for k, (en, _) in _LABELS.items()},
    "zh": {k: zh for k, (_, zh) in _LABELS.items()},
}
LANGS = tuple(CATALOGS)
HTML_LANG = {"en": "en", "zh": "zh-CN"}


class Labels:
    """Message catalog for one language; unknown keys fall back to English, then to the key."""

    def __init__(self, lang: str) -> None:
        if lang not in CATALOGS:
            raise ValueError(f"unsupported language {lang!r}; choose one of {', '.join(LANGS)}")
        self.lang = lang
        self.html_lang = HTML_LANG[lang]
        self._table = CATALOGS[lang]

    def __getitem__(self, key: str) -> str:
        return self._table.get(key) or CATALOGS["en"].get(key) or key

    def get(self, key: str, default: str | None = None) -> str:
        return self._table.get(key) or CATALOGS["en"].get(key) or (default if default is not None else key)

    def name(self, prefix: str, code: object) -> str:
        """A code's name (an exclusion reason, a phase, an event kind...): `prefix + code` in the
        catalogue, else the code as written."""
        return self.get(f"{prefix}{code}", str(code))

    def fmt(self, key: str, /, **values: object) -> str:
        """The catalogue's sentence for `key` with its numbers filled in."""
        return self[key].format(**values)

    def join(self, items) -> str:
        return self["list_sep"].join(items)

    def text(self, text) -> str:
        """A ``Text`` (a sentence as data) in this language; "" for None."""
        if text is None:
            return ""
        from .catalog import render

        return render(text, self.lang)

    def sentence(self, text) -> str:
        """A Text as a sentence of its own: in English its first letter upper case."""
        s = self.text(text)
        first = s.split(" ", 1)[0]
        if self.lang != "en" or not s[:1].islower() or any(c in first for c in "_.=/"):  # a name (learning_rate) stays as written
            return s
        return s[:1].upper() + s[1:]


def labels(lang: str) -> Labels:
    return Labels(lang)


def si_count(x: float | None) -> str:
    """A count with an SI prefix and no unit: 124M."""
    return si(x, "")

"""Finding texts and alignment names in the report's language.

The analysis writes each finding's message in English and keeps its numbers in ``evidence``; for
another language the text is rebuilt here from the kind and the evidence. A kind without a
template (or with evidence missing) falls back to the English message, never to a wrong one.
"""

from __future__ import annotations

from ..analysis.types import Finding
from . import format as fmt

_FIGURES_ZH = {
    "step time": "单步耗时", "tokens/s": "词元吞吐", "samples/s": "样本吞吐", "MFU": "MFU",
    "final loss": "最终损失", "loss at equal tokens": "相同词元数时的损失", "convergence step": "收敛步",
    "loss spikes": "损失尖峰数", "grad-norm spikes": "梯度范数尖峰数", "NaN steps": "NaN 步数",
    "checkpoint tax": "检查点开销占比",
}
_FAMILIES_ZH = {"throughput": "吞吐", "efficiency": "效率", "convergence": "收敛", "stability": "稳定性"}


def _changes_zh(text: str) -> str:
    for en, zh in sorted(_FIGURES_ZH.items(), key=lambda kv: -len(kv[0])):
        text = text.replace(en, zh)
    return text


def _zh(f: Finding) -> str | None:
    e = f.evidence
    kind = str(f.kind)
    if kind == "nan_loss":
        return f"{e['count']} 个步的损失或梯度范数为 NaN/Inf，首次出现在第 {fmt.step(e['first_step'])} 步"
    if kind in ("loss_spikes", "grad_norm_spikes"):
        what = "损失" if kind == "loss_spikes" else "梯度范数"
        recovery = "全部快速恢复" if not e["not_fast"] else f"{e['not_fast']} 次未快速恢复"
        where = f"；最大一次在第 {fmt.step(e['largest_step'])} 步" if e.get("largest_step") is not None else ""
        return f"{e['count']} 次{what}尖峰（{recovery}）{where}"
    if kind == "divergence":
        return f"第 {fmt.step(e['step'])} 步的损失尖峰没有恢复（发散）"
    if kind == "overflows":
        return f"{e['count']} 个步发生 loss scale 溢出（该步参数未更新）"
    if kind == "low_mfu":
        return f"MFU {fmt.percent(e['mfu'])} 低于 20%"
    if kind == "mfu_unknown":
        if "peak" in str(e["reason"]):
            return "MFU 未知：该设备的峰值算力未知，请传入 --peak-tflops 或 --device（见峰值算力表）"
        return f"MFU 未知：{e['reason']}"
    if kind == "comm_bound":
        return f"暴露的通信占单步耗时的 {fmt.percent(e['comm_share'])}（超过 25%）"
    if kind == "data_stalls":
        return f"{e['count']} 个数据停顿步（占 {fmt.percent(e['share'])}）"
    if kind == "checkpoint_tax":
        return f"检查点保存占墙钟时间的 {fmt.percent(e['checkpoint_tax'])}"
    if kind in ("log_errors", "restarts", "interrupted_checkpoint"):
        noun = {"log_errors": "处日志错误", "restarts": "次重启", "interrupted_checkpoint": "次中断的检查点保存"}[kind]
        where = f"，首次在第 {fmt.step(e['first_step'])} 步" if e.get("first_step") is not None else ""
        # a log line is quoted as written; our own restart text is in the data-quality section
        detail = f"：{e['detail']}" if e.get("detail") and kind != "restarts" else ""
        return f"{e['count']} {noun}{where}{detail}"
    if kind == "implausible":
        check, v, against = e["check"], e["value"], e["against_value"]
        if check == "mfu_range":
            side = "高于" if v > against else "低于"
            inputs = ""
            if e.get("achieved_tflops_per_device") is not None and e.get("peak_flops"):
                inputs = f"：每卡实际 {fmt.number(e['achieved_tflops_per_device'])} TFLOPS，峰值 {fmt.flops(e['peak_flops'])}"
            return f"MFU {v * 100:.3g}% {side} {e['against']}{inputs}；该 MFU 不可信，不作为结果"
        if check == "step_vs_gap":
            return (f"日志中的步内耗时 {fmt.duration(v)} 不到相邻步结束的墙钟间隔 {fmt.duration(against)} 的十分之一："
                    "计时单位或两次时间戳之间的步数有误")
        return (f"词元吞吐 {fmt.tokens_per_s(v)} 与运行自身日志中的 tokens_per_s {fmt.tokens_per_s(against)} 相差 "
                f"{v / against:.2f} 倍：批大小或序列长度有误")
    if kind == "not_converged":
        code, tol = e.get("code"), fmt.percent(e.get("tolerance"), 0)
        if code == "no_drop":
            return f"未收敛：损失没有下降（起始 {fmt.loss(e['initial'])}，最终水平 {fmt.loss(e['final'])}，在 ±{tol} 以内）"
        if code == "still_moving":
            if e.get("entered_step") is not None:
                return (f"未收敛：损失到最后仍在变化，平滑损失直到第 {fmt.step(e['entered_step'])} 步（已在最后 10% 的步中）"
                        f"才稳定在最终水平 {fmt.loss(e['final'])} 的 ±{tol} 以内")
            return (f"未收敛：损失到最后仍在变化，最后一步的平滑损失为 {fmt.loss(e['smoothed_last'])}，"
                    f"在最终水平 {fmt.loss(e['final'])} 的 ±{tol} 之外")
        if code == "nonfinite_end":
            return "未收敛：最后 10% 的步中没有有限的、非尖峰的损失值"
        return None
    if kind == "slow_ranks":
        return f"慢 rank：{e['ranks']}"
    if kind in ("regression", "improvement"):
        family = _FAMILIES_ZH.get(e["family"], e["family"])
        verdict = "退化" if kind == "regression" else "提升"
        return f"{family}相对基线 {e['baseline']} {verdict}：{_changes_zh(e['changes'])}"
    return None


def finding_text(f: Finding, lang: str) -> str:
    if lang != "zh":
        return f.message
    if str(f.kind) == "config":  # "<check name>: <detail>"; the detail is numbers and units
        name, sep, detail = f.message.partition(": ")
        return f"{check_name(name, lang)}{sep}{detail}"
    try:
        return _zh(f) or f.message
    except (KeyError, TypeError, ValueError):
        return f.message


_CHECKS_ZH = {
    "global_batch = micro_batch x dp x accumulation": "全局批大小 = 微批 × 数据并行 × 梯度累积",
    "pipeline micro-batches >= stages": "流水线微批数 ≥ 流水线级数",
    "num_heads divisible by model_parallel": "注意力头数能被模型并行度整除",
    "hidden_size divisible by model_parallel": "隐藏维度能被模型并行度整除",
    "checkpoint interval vs step time": "检查点间隔与单步耗时",
}


def check_name(name: str, lang: str) -> str:
    return _CHECKS_ZH.get(name, name) if lang == "zh" else name


_ALIGNMENT_ZH = {
    "steady window": "稳定窗口", "whole run": "全程", "by step": "按步对齐",
    "each run's last 10%": "各自最后 10%",
}


def alignment_text(alignment: str, lang: str) -> str:
    """How a delta was aligned; "by tokens (at 76,800 tokens)" keeps its number."""
    if lang != "zh":
        return alignment
    if alignment.startswith("by tokens"):
        at = alignment[len("by tokens"):].strip().removeprefix("(at ").removesuffix(")").removesuffix(" tokens")
        return f"按词元对齐（{at} 词元）" if at else "按词元对齐"
    return _ALIGNMENT_ZH.get(alignment, alignment)

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
        return f"未被计算掩盖的通信占 Profiler step 耗时的 {fmt.percent(e['comm_share'])}（超过 25%）"
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
    if str(f.kind) == "triage" and "reason" in f.evidence:  # worded from the typed triage, both languages
        params = {k: (v.split(",") if k in ("waiting", "awaited") and isinstance(v, str) else v) for k, v in f.evidence.items()}
        try:
            return triage_text(f.evidence["verdict"], f.evidence["reason"], params, lang)
        except (KeyError, TypeError, ValueError):
            return f.message
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


# --------------------------------------------------------------------------- profiler and triage
# Each verdict, reason and action worded per language from the analysis' typed values; the
# article's vocabulary in Chinese (通信占比, 迭代间隙, 算子耗时 TopN, 流水线气泡, 并行优化器, ...).

VERDICTS = {
    "data-bound": ("data-bound", "数据侧瓶颈"),
    "compute-bound": ("compute-bound", "计算侧瓶颈"),
    "communication-bound": ("communication-bound", "通信侧瓶颈"),
    "memory-bound": ("memory-bound", "显存侧瓶颈"),
    "host-bound": ("host-bound", "Host 侧瓶颈"),
    "unknown": ("not decided", "无法判断"),
}

PARTS = {
    "compute": ("compute", "计算"),
    "comm_exposed": ("communication not hidden", "未被掩盖的通信"),
    "bubble": ("pipeline bubble (Receive)", "流水线气泡（Receive）"),
    "data_wait": ("data wait (iteration gap)", "数据等待（迭代间隙）"),
    "idle": ("idle", "空闲"),
    "preparing": ("preparing", "准备"),
    "comm_overlapped": ("communication hidden under compute", "被计算掩盖的通信"),
}

_CAUSES = {
    "compute": ("computing", "计算"),
    "idle": ("idle, waiting for their host", "空闲（等待 host）"),
    "data_wait": ("waiting for data", "等待数据"),
    "preparing": ("preparing", "准备"),
}

EVIDENCE = {
    "data_wait_share": ("Data wait (profiler iteration gap)", "数据等待（Profiler 迭代间隙）"),
    "logged_data_wait_share": ("Data wait (training log)", "数据等待（训练日志）"),
    "queue_empty_share": ("Device data queue found empty", "设备数据队列为空的比例"),
    "comm_share": ("Communication share (not hidden by compute)", "通信占比（未被计算掩盖）"),
    "bubble_share": ("Pipeline bubble", "流水线气泡"),
    "idle_share": ("Device idle", "设备空闲"),
    "compute_share": ("Compute", "计算"),
    "comm_kernel_share": ("Communication kernels / all kernel time", "通信算子耗时占比"),
    "memory_peak_share": ("Peak memory / device memory", "显存峰值 / 设备显存"),
    "waiting_wait_share": ("Wait share of the waiting ranks", "等待卡的等待占比"),
}

ACTIONS = {
    "data_workers": ("Raise num_parallel_workers of the slow map / batch operations, the slowest pipeline stage first.",
                     "调大慢的 map / batch 操作的 num_parallel_workers，先调最慢的数据处理阶段。"),
    "data_prefetch": ("Prefetch: a larger ds.config.set_prefetch_size, and dataset sink mode so batches wait on the device.",
                      "开启预取：调大 ds.config.set_prefetch_size，并用数据下沉（dataset_sink_mode）让 batch 提前到设备侧。"),
    "data_offload": ("Move decode and tokenize out of the training process into an asynchronous pipeline (or preprocess offline).",
                     "把 decode、tokenize 移出训练进程，放到独立的异步管道（或离线预处理）。"),
    "host_sink_mode": ("Train with dataset_sink_mode=True and a sink_size, so the host is not in every step.",
                       "使用数据下沉 dataset_sink_mode=True 并设置 sink_size，减少每个 step 的 host 交互。"),
    "host_graph_mode": ("Run in GRAPH_MODE (or jit the step) instead of PyNative: Python-side dispatch costs every step.",
                        "使用 GRAPH_MODE（或对 step 做 jit）代替 PyNative：Python 侧逐算子下发每个 step 都有开销。"),
    "host_callbacks": ("Print and log every 50–100 steps, not every step; keep callbacks light.",
                       "日志与打印每 50–100 步一次，不要每步打印；callback 保持轻量。"),
    "check_straggler": ("Look at the awaited ranks first — their host (CPU, other jobs), data pipeline and device: the others only wait for them.",
                        "先查被等待的卡——它们的 host（CPU、是否有其他任务）、数据管道和设备：其他卡只是在等它们。"),
    "stage_balance": ("Balance the pipeline stages: move layers off the slow stage (MindFormers offset, the layer split of pipeline_stage).",
                      "均衡各流水线 stage：把慢 stage 的层移出（MindFormers 的 offset、pipeline_stage 的层切分）。"),
    "micro_batches": ("Use at least as many pipeline micro-batches (micro_batch_num) as stages: below that the bubble can pass 30%.",
                      "流水线 micro-batch 数（micro_batch_num）至少等于 stage 数，否则流水线气泡可达三成以上。"),
    "parallel_optimizer": ("Set enable_parallel_optimizer=True: the optimizer state is sharded and the gradient traffic falls.",
                           "开启并行优化器 enable_parallel_optimizer=True：切分优化器状态，减少梯度通信量。"),
    "comm_algorithm": ("Synchronise gradients in slices (reduce-scatter + all-gather) instead of one full AllReduce.",
                       "梯度同步改为分段通信（reduce-scatter + all-gather），不用全量 AllReduce。"),
    "comm_topology": ("Keep gradient synchronisation inside a node: data-parallel groups on the intra-node links (set_auto_parallel_context, device_num).",
                      "让梯度同步尽量发生在机内：数据并行分组放在机内高速互联上（set_auto_parallel_context、device_num）。"),
    "parameter_broadcast": ("A broadcast dominates: if it is the start-up parameter broadcast (parameter_broadcast), profile steady steps after it; a broadcast in every step is a weight synchronisation to remove.",
                            "broadcast 占主导：若是启动时的参数广播（parameter_broadcast），请在其后的稳定 step 上采集 Profiler；若每个 step 都有 broadcast，应去掉这类权重同步。"),
    "mixed_precision": ("BF16 mixed precision (amp_level O2): half the activation and gradient memory.",
                        "使用 BF16 混合精度（amp_level O2）：激活和梯度显存减半。"),
    "grad_accumulation": ("A smaller micro batch with gradient accumulation keeps the global batch.",
                          "减小 micro batch，用梯度累积保持全局 batch。"),
    "recompute": ("Recompute activations (recompute) instead of keeping them all.",
                  "开启激活重计算（recompute），不保存全部中间激活。"),
    "optimizer_offload": ("Shard or offload the optimizer state (parallel optimizer, optimizer offload).",
                          "切分或 offload 优化器状态（并行优化器、优化器状态 offload）。"),
    "op_fusion": ("Fuse neighbouring operators (graph kernel fusion, fused attention / norm kernels).",
                  "融合相邻算子（图算融合、融合的 attention / norm 算子）。"),
    "parallel_strategy": ("Revisit the parallel strategy: the tensor / pipeline split of the largest operators.",
                          "调整并行策略：最大算子的张量并行 / 流水线并行切分。"),
    "graph_compile": ("Try the graph compile options: jit_level (O1 / O2) and graph kernel optimisation.",
                      "尝试图编译选项：jit_level（O1 / O2）与图算优化。"),
    "profile_run": ("Profile 30–50 steady steps (mindspore.profiler with a schedule) to decide.",
                    "开启 Profiler 采集 30–50 个稳定 step（mindspore.profiler 配 schedule）再判断。"),
}


def _pick(pair: tuple[str, str], lang: str) -> str:
    return pair[1] if lang == "zh" else pair[0]


def verdict_text(verdict: str, lang: str) -> str:
    return _pick(VERDICTS.get(str(verdict), (str(verdict), str(verdict))), lang)


def part_text(part: str, lang: str) -> str:
    return _pick(PARTS.get(part, (part, part)), lang)


def evidence_text(key: str, lang: str) -> str:
    return _pick(EVIDENCE.get(key, (key, key)), lang)


def action_text(action: str, lang: str) -> str:
    return _pick(ACTIONS.get(str(action), (str(action), str(action))), lang)


def ranks_text(ranks, lang: str) -> str:
    return ("、" if lang == "zh" else ", ").join(str(r) for r in ranks)


def _who(ranks, lang: str) -> str:
    """"rank 1" / "ranks 0, 2" / "卡 1" / "卡 0、2"."""
    ranks = list(ranks)
    if lang == "zh":
        return f"卡 {ranks_text(ranks, lang)}"
    return ("rank " if len(ranks) == 1 else "ranks ") + ranks_text(ranks, lang)


def _pc(x) -> str:
    return fmt.percent(x) if x is not None else fmt.MISSING


def reason_text(reason: str, params: dict, lang: str) -> str:
    """One sentence for a triage reason (or a signal of ``also``) from its parameters."""
    p, zh = params, lang == "zh"
    r = str(reason)
    if r == "data_wait":
        strong = p.get("strong")
        src = ("训练日志" if p.get("source") == "log" else "Profiler") if zh else ("training log" if p.get("source") == "log" else "profiler")
        if zh:
            return f"数据等待（每个 step 计算前的迭代间隙，来自{src}）占 step 耗时的 {_pc(p.get('share'))}" + ("，达到文中“三成以上”的判据。" if strong else "。")
        return (f"Data wait (the iteration gap before each step's compute, from the {src}) is {_pc(p.get('share'))} of the step time"
                + (", past the article's 30% mark." if strong else "."))
    if r == "data_queue_empty":
        slowest, idle = p.get("slowest"), p.get("idle_share")
        if zh:
            return (f"设备数据队列（{p.get('stage')}）在 {fmt.integer(p.get('samples'))} 个 batch 中有 {_pc(p.get('share'))} 为空（MindInsight 以 30% 为告警线）"
                    + (f"；最慢的数据处理阶段是 {slowest}" if slowest else "") + (f"；设备空闲占 step 的 {_pc(idle)}" if idle is not None else "") + "。")
        return (f"The device found its data queue ({p.get('stage')}) empty for {_pc(p.get('share'))} of {fmt.integer(p.get('samples'))} batches (MindInsight warns above 30%)"
                + (f"; the slowest pipeline stage is {slowest}" if slowest else "") + (f"; the device is idle {_pc(idle)} of the step" if idle is not None else "") + ".")
    if r in ("pipeline_wait", "straggler"):
        waiting, awaited = _who(p.get("waiting", ()), lang), _who(p.get("awaited", ()), lang)
        cause = _pick(_CAUSES.get(p.get("cause", ""), (str(p.get("cause")), str(p.get("cause")))), lang)
        one = len(p.get("awaited", ())) == 1
        if r == "pipeline_wait":
            if zh:
                return (f"{waiting} 有 {_pc(p.get('wait_share'))} 的 step 时间在等待其他卡（Receive 算子在执行的时间占 step 的 {_pc(p.get('receive_share'))}），"
                        f"而{awaited}（另一个流水线 stage）有 {_pc(p.get('cause_share'))} 的时间在{cause}：各 stage 负载不均衡，前者在等后者。")
            return (f"{waiting.capitalize()} wait on other ranks {_pc(p.get('wait_share'))} of their step (Receive ops are in flight {_pc(p.get('receive_share'))} of the step), "
                    f"while {awaited}, the other pipeline stage, {'spends' if one else 'spend'} {_pc(p.get('cause_share'))} {cause}: "
                    "the stages are unbalanced and the first waits for the second.")
        if zh:
            return (f"{waiting} 有 {_pc(p.get('wait_share'))} 的 step 时间在通信中等待，被等待的是{awaited}：只等待 {_pc(p.get('awaited_wait_share'))}，"
                    f"有 {_pc(p.get('cause_share'))} 的时间在{cause}（其他卡为 {_pc(p.get('waiting_cause_share'))}），是拖慢其他卡的卡。")
        return (f"{waiting.capitalize()} wait in communication {_pc(p.get('wait_share'))} of their step for {awaited}, which "
                f"{'waits' if one else 'wait'} only {_pc(p.get('awaited_wait_share'))} and {'spends' if one else 'spend'} "
                f"{_pc(p.get('cause_share'))} {cause} (the others: {_pc(p.get('waiting_cause_share'))}): "
                f"{'it is the straggler' if one else 'they are the stragglers'}.")
    if r == "pipeline_bubble":
        mb, st = p.get("micro_batches"), p.get("stages")
        if zh:
            return f"流水线气泡（未被掩盖的 Receive 等待）占 step 耗时的 {_pc(p.get('share'))}" + (f"；{st} 个 stage、{mb} 个 micro-batch" if mb and st else "") + "。"
        return f"The pipeline bubble (Receive waits nothing hides) is {_pc(p.get('share'))} of the step time" + (f"; {mb} micro-batches for {st} stages" if mb and st else "") + "."
    if r == "comm_exposed":
        if zh:
            return f"未被计算掩盖的通信占 step 耗时的 {_pc(p.get('share'))}（文中以 25% 为重点关注线）。"
        return f"Communication that compute does not hide is {_pc(p.get('share'))} of the step time (the article's mark is 25%)."
    if r == "comm_kernels":
        top, bc = p.get("top_type"), p.get("broadcast")
        if zh:
            return (f"通信算子占设备算子总耗时的 {_pc(p.get('share'))}" + (f"，其中 {top} 一项占 {_pc(p.get('top_share'))}" if top else "")
                    + ("（broadcast 通常是启动时的参数广播）" if bc else "") + "。")
        return (f"Communication kernels take {_pc(p.get('share'))} of the device's kernel time" + (f"; {top} alone {_pc(p.get('top_share'))}" if top else "")
                + (" (a broadcast: usually the start-up parameter broadcast)" if bc else "") + ".")
    if r == "device_idle":
        awaited = p.get("awaited") or ()
        if zh:
            return (f"设备空闲（既不计算也不通信）占 step 的 {_pc(p.get('share'))}：设备在等 host 侧"
                    + (f"；空闲最多的{_who(awaited, lang)}是其他卡在通信中等待的卡" if awaited else "") + "。")
        one = len(awaited) == 1
        return (f"The device is idle (neither computing nor communicating) {_pc(p.get('share'))} of the step: it waits for its host"
                + (f"; {_who(awaited, lang)}, idle the most, {'is the one' if one else 'are the ones'} the others wait for in their collectives"
                   if awaited else "") + ".")
    if r == "memory_near_limit":
        if zh:
            return f"显存峰值 {fmt.bytes_(p.get('peak_bytes'))}，占设备显存 {fmt.bytes_(p.get('capacity_bytes'))} 的 {_pc(p.get('share'))}。"
        return f"Peak memory {fmt.bytes_(p.get('peak_bytes'))} is {_pc(p.get('share'))} of the device's {fmt.bytes_(p.get('capacity_bytes'))}."
    if r == "compute_busy":
        top, scope = p.get("top_type"), p.get("scope")
        scope_words = {"kernels": ("device kernel", "设备"), "ai_core": ("AI Core", " AI Core ")}.get(scope or "", ("operator", ""))
        if zh:
            return f"计算占 step 耗时的 {_pc(p.get('share'))}" + (f"；{top} 占{scope_words[1]}算子耗时的 {_pc(p.get('top_share'))}" if top else "") + "。"
        return f"Compute is {_pc(p.get('share'))} of the step time" + (f"; {top} takes {_pc(p.get('top_share'))} of the {scope_words[0]} time" if top else "") + "."
    if r == "no_dominant_part":
        items = [f"{evidence_text(k, lang)} {_pc(v)}" for k, v in p.items() if k in EVIDENCE and v is not None]
        sep = "；" if zh else "; "
        if zh:
            return "step 的各组成都没有超过判据：" + sep.join(items) + "。"
        return "No part of the step passes its threshold: " + sep.join(items) + "."
    if zh:
        return "没有可用于判断的 Profiler 耗时构成、数据等待或显存记录。"
    return "No profiler step breakdown, data wait or memory record to decide from."


def triage_text(verdict: str, reason: str, params: dict, lang: str) -> str:
    sep = "：" if lang == "zh" else ": "
    return f"{verdict_text(verdict, lang)}{sep}{reason_text(reason, params, lang)}"


def dash(lang: str) -> str:
    return "——" if lang == "zh" else " — "

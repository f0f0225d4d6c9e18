"""Templates of the profiler triage (analysis/triage.py): verdicts, the parts of a step, the
evidence, each reason (``triage.reason.<reason>[/<variant>]``, chosen by report/messages.py from
the typed reason and its parameters) and the article's first moves (``action.<action>``), in
MindSpore terms; in Chinese the article's vocabulary (通信占比, 迭代间隙, 算子耗时 TopN, 流水线气泡,
并行优化器, ...)."""

from __future__ import annotations

TEMPLATES: dict[str, tuple[str, str]] = {
    "verdict.data-bound": ("data-bound", "数据侧瓶颈"),
    "verdict.compute-bound": ("compute-bound", "计算侧瓶颈"),
    "verdict.communication-bound": ("communication-bound", "通信侧瓶颈"),
    "verdict.memory-bound": ("memory-bound", "显存侧瓶颈"),
    "verdict.host-bound": ("host-bound", "Host 侧瓶颈"),
    "verdict.unknown": ("not decided", "无法判断"),
    "triage.verdict-reason": ("{verdict:@verdict.}: {reason}", "{verdict:@verdict.}：{reason}"),
    "part.compute": ("compute", "计算"),
    "part.comm_exposed": ("communication not hidden", "未被掩盖的通信"),
    "part.bubble": ("pipeline bubble (Receive)", "流水线气泡（Receive）"),
    "part.data_wait": ("data wait (iteration gap)", "数据等待（迭代间隙）"),
    "part.idle": ("idle", "空闲"),
    "part.preparing": ("preparing", "准备"),
    "part.comm_overlapped": ("communication hidden under compute", "被计算掩盖的通信"),
    "cause.compute": ("computing", "计算"),
    "cause.idle": ("idle, waiting for their host", "空闲（等待 host）"),
    "cause.data_wait": ("waiting for data", "等待数据"),
    "cause.preparing": ("preparing", "准备"),
    "evidence.data_wait_share": ("Data wait (profiler iteration gap)", "数据等待（Profiler 迭代间隙）"),
    "evidence.logged_data_wait_share": ("Data wait (training log)", "数据等待（训练日志）"),
    "evidence.queue_empty_share": ("Device data queue found empty", "设备数据队列为空的比例"),
    "evidence.comm_share": ("Communication share (not hidden by compute)", "通信占比（未被计算掩盖）"),
    "evidence.bubble_share": ("Pipeline bubble", "流水线气泡"),
    "evidence.idle_share": ("Device idle", "设备空闲"),
    "evidence.compute_share": ("Compute", "计算"),
    "evidence.comm_kernel_share": ("Communication kernels / all kernel time", "通信算子耗时占比"),
    "evidence.memory_peak_share": ("Peak memory / device memory", "显存峰值 / 设备显存"),
    "evidence.waiting_wait_share": ("Wait share of the waiting ranks", "等待卡的等待占比"),
    "triage.src.log": ("training log", "训练日志"),
    "triage.src.profile": ("profiler", "Profiler"),
    # the reasons
    "triage.reason.data_wait": ("Data wait (the iteration gap before each step's compute, from the {source:@triage.src.}) is "
                                "{share:pct} of the step time.",
                                "数据等待（每个 step 计算前的迭代间隙，来自{source:@triage.src.}）占 step 耗时的 {share:pct}。"),
    "triage.reason.data_wait/strong": ("Data wait (the iteration gap before each step's compute, from the "
                                       "{source:@triage.src.}) is {share:pct} of the step time, past the article's 30% mark.",
                                       "数据等待（每个 step 计算前的迭代间隙，来自{source:@triage.src.}）占 step 耗时的 {share:pct}，"
                                       "达到文中“三成以上”的判据。"),
    "triage.reason.data_queue_empty": ("The device found its data queue ({stage}) empty for {share:pct} of {samples:int} batches "
                                       "(MindInsight warns above 30%){slowest:opt}{idle:opt}.",
                                       "设备数据队列（{stage}）在 {samples:int} 个 batch 中有 {share:pct} 为空（MindInsight 以 30% 为告警线）"
                                       "{slowest:opt}{idle:opt}。"),
    "triage.clause.slowest": ("; the slowest pipeline stage is {stage}", "；最慢的数据处理阶段是 {stage}"),
    "triage.clause.idle": ("; the device is idle {share:pct} of the step", "；设备空闲占 step 的 {share:pct}"),
    "triage.reason.pipeline_wait": ("{waiting:Ranks} wait on other ranks {wait_share:pct} of their step (Receive ops are in "
                                    "flight {receive_share:pct} of the step), while {awaited:ranks}, the other pipeline stage, "
                                    "spend {cause_share:pct} {cause:@cause.}: the stages are unbalanced and the first waits for "
                                    "the second.",
                                    "{waiting:ranks} 有 {wait_share:pct} 的 step 时间在等待其他卡（Receive 算子在执行的时间占 step "
                                    "的 {receive_share:pct}），而{awaited:ranks}（另一个流水线 stage）有 {cause_share:pct} 的时间在"
                                    "{cause:@cause.}：各 stage 负载不均衡，前者在等后者。"),
    "triage.reason.pipeline_wait/one": ("{waiting:Ranks} wait on other ranks {wait_share:pct} of their step (Receive ops are in "
                                        "flight {receive_share:pct} of the step), while {awaited:ranks}, the other pipeline "
                                        "stage, spends {cause_share:pct} {cause:@cause.}: the stages are unbalanced and the first "
                                        "waits for the second.",
                                        "{waiting:ranks} 有 {wait_share:pct} 的 step 时间在等待其他卡（Receive 算子在执行的时间占 "
                                        "step 的 {receive_share:pct}），而{awaited:ranks}（另一个流水线 stage）有 {cause_share:pct} "
                                        "的时间在{cause:@cause.}：各 stage 负载不均衡，前者在等后者。"),
    "triage.reason.straggler": ("{waiting:Ranks} wait in communication {wait_share:pct} of their step for {awaited:ranks}, which "
                                "wait only {awaited_wait_share:pct} and spend {cause_share:pct} {cause:@cause.} (the others: "
                                "{waiting_cause_share:pct}): they are the stragglers.",
                                "{waiting:ranks} 有 {wait_share:pct} 的 step 时间在通信中等待，被等待的是{awaited:ranks}：只等待 "
                                "{awaited_wait_share:pct}，有 {cause_share:pct} 的时间在{cause:@cause.}（其他卡为 "
                                "{waiting_cause_share:pct}），是拖慢其他卡的卡。"),
    "triage.reason.straggler/one": ("{waiting:Ranks} wait in communication {wait_share:pct} of their step for {awaited:ranks}, "
                                    "which waits only {awaited_wait_share:pct} and spends {cause_share:pct} {cause:@cause.} (the "
                                    "others: {waiting_cause_share:pct}): it is the straggler.",
                                    "{waiting:ranks} 有 {wait_share:pct} 的 step 时间在通信中等待，被等待的是{awaited:ranks}：只等待 "
                                    "{awaited_wait_share:pct}，有 {cause_share:pct} 的时间在{cause:@cause.}（其他卡为 "
                                    "{waiting_cause_share:pct}），是拖慢其他卡的卡。"),
    "triage.reason.pipeline_bubble": ("The pipeline bubble (Receive waits nothing hides) is {share:pct} of the step time{layout:opt}.",
                                      "流水线气泡（未被掩盖的 Receive 等待）占 step 耗时的 {share:pct}{layout:opt}。"),
    "triage.clause.layout": ("; {micro_batches:int} micro-batches for {stages:int} stages",
                             "；{stages:int} 个 stage、{micro_batches:int} 个 micro batch"),
    "triage.reason.comm_exposed": ("Communication that compute does not hide is {share:pct} of the step time (the article's mark "
                                   "is 25%).", "未被计算掩盖的通信占 step 耗时的 {share:pct}（文中以 25% 为重点关注线）。"),
    "triage.reason.comm_kernels": ("Communication kernels take {share:pct} of the device's kernel time{top:opt}{broadcast:opt}.",
                                   "通信算子占设备算子总耗时的 {share:pct}{top:opt}{broadcast:opt}。"),
    "triage.clause.top-comm": ("; {type} alone {share:pct}", "，其中 {type} 一项占 {share:pct}"),
    "triage.clause.broadcast": (" (a broadcast: usually the start-up parameter broadcast)", "（broadcast 通常是启动时的参数广播）"),
    "triage.reason.device_idle": ("The device is idle (neither computing nor communicating) {share:pct} of the step: it waits for "
                                  "its host{awaited:opt}.",
                                  "设备空闲（既不计算也不通信）占 step 的 {share:pct}：设备在等 host 侧{awaited:opt}。"),
    "triage.clause.idle-awaited": ("; {ranks:ranks}, idle the most, are the ones the others wait for in their collectives",
                                   "；空闲最多的{ranks:ranks}是其他卡在通信中等待的卡"),
    "triage.clause.idle-awaited-one": ("; {ranks:ranks}, idle the most, is the one the others wait for in their collectives",
                                       "；空闲最多的{ranks:ranks}是其他卡在通信中等待的卡"),
    "triage.reason.memory_near_limit": ("Peak memory {peak_bytes:bytes} is {share:pct} of the device's {capacity_bytes:bytes}.",
                                        "显存峰值 {peak_bytes:bytes}，占设备显存 {capacity_bytes:bytes} 的 {share:pct}。"),
    "triage.reason.compute_busy": ("Compute is {share:pct} of the step time{top:opt}.", "计算占 step 耗时的 {share:pct}{top:opt}。"),
    "triage.clause.top-op": ("; {type} takes {share:pct} of the {scope:@scope.} time", "；{type} 占{scope:@scope.}耗时的 {share:pct}"),
    "scope.kernels": ("device kernel", "设备算子"),
    "scope.ai_core": ("AI Core", " AI Core 算子"),
    "scope.ai_cpu": ("AI CPU", " AI CPU 算子"),
    "scope.none": ("operator", "算子"),
    "triage.reason.no_dominant_part": ("No part of the step passes its threshold: {items:semi}.",
                                       "step 的各组成都没有超过判据：{items:semi}。"),
    "triage.clause.evidence": ("{key:@evidence.} {value:pct}", "{key:@evidence.} {value:pct}"),
    "triage.reason.no_evidence": ("No profiler step breakdown, data wait or memory record to decide from.",
                                  "没有可用于判断的 Profiler 耗时构成、数据等待或显存记录。"),
    # the article's first moves (§3.1 table, §4.3, §5.3), in MindSpore terms
    "action.data_workers": ("Raise num_parallel_workers of the slow map / batch operations, the slowest pipeline stage first.",
                            "调大慢的 map / batch 操作的 num_parallel_workers，先调最慢的数据处理阶段。"),
    "action.data_prefetch": ("Prefetch: a larger ds.config.set_prefetch_size, and dataset sink mode so batches wait on the device.",
                             "开启预取：调大 ds.config.set_prefetch_size，并用数据下沉（dataset_sink_mode）让 batch 提前到设备侧。"),
    "action.data_offload": ("Move decode and tokenize out of the training process into an asynchronous pipeline (or preprocess "
                            "offline).", "把 decode、tokenize 移出训练进程，放到独立的异步管道（或离线预处理）。"),
    "action.host_sink_mode": ("Train with dataset_sink_mode=True and a sink_size, so the host is not in every step.",
                              "使用数据下沉 dataset_sink_mode=True 并设置 sink_size，减少每个 step 的 host 交互。"),
    "action.host_graph_mode": ("Run in GRAPH_MODE (or jit the step) instead of PyNative: Python-side dispatch costs every step.",
                               "使用 GRAPH_MODE（或对 step 做 jit）代替 PyNative：Python 侧逐算子下发每个 step 都有开销。"),
    "action.host_callbacks": ("Print and log every 50–100 steps, not every step; keep callbacks light.",
                              "日志与打印每 50–100 步一次，不要每步打印；callback 保持轻量。"),
    "action.check_straggler": ("Look at the awaited ranks first — their host (CPU, other jobs), data pipeline and device: the "
                               "others only wait for them.",
                               "先查被等待的卡——它们的 host（CPU、是否有其他任务）、数据管道和设备：其他卡只是在等它们。"),
    "action.stage_balance": ("Balance the pipeline stages: move layers off the slow stage (MindFormers offset, the layer split of "
                             "pipeline_stage).", "均衡各流水线 stage：把慢 stage 的层移出（MindFormers 的 offset、pipeline_stage 的层切分）。"),
    "action.micro_batches": ("Use at least as many pipeline micro-batches (micro_batch_num) as stages: below that the bubble can "
                             "pass 30%.", "流水线 micro batch 数（micro_batch_num）至少等于 stage 数，否则流水线气泡可达三成以上。"),
    "action.parallel_optimizer": ("Set enable_parallel_optimizer=True: the optimizer state is sharded and the gradient traffic "
                                  "falls.", "开启并行优化器 enable_parallel_optimizer=True：切分优化器状态，减少梯度通信量。"),
    "action.comm_algorithm": ("Synchronise gradients in slices (reduce-scatter + all-gather) instead of one full AllReduce.",
                              "梯度同步改为分段通信（reduce-scatter + all-gather），不用全量 AllReduce。"),
    "action.comm_topology": ("Keep gradient synchronisation inside a node: data-parallel groups on the intra-node links "
                             "(set_auto_parallel_context, device_num).",
                             "让梯度同步尽量发生在机内：数据并行分组放在机内高速互联上（set_auto_parallel_context、device_num）。"),
    "action.parameter_broadcast": ("A broadcast dominates: if it is the start-up parameter broadcast (parameter_broadcast), "
                                   "profile steady steps after it; a broadcast in every step is a weight synchronisation to remove.",
                                   "broadcast 占主导：若是启动时的参数广播（parameter_broadcast），请在其后的稳定 step 上采集 "
                                   "Profiler；若每个 step 都有 broadcast，应去掉这类权重同步。"),
    "action.mixed_precision": ("BF16 mixed precision (amp_level O2): half the activation and gradient memory.",
                               "使用 BF16 混合精度（amp_level O2）：激活和梯度显存减半。"),
    "action.grad_accumulation": ("A smaller micro batch with gradient accumulation keeps the global batch.",
                                 "减小 micro batch，用梯度累积保持全局 batch。"),
    "action.recompute": ("Recompute activations (recompute) instead of keeping them all.", "开启激活重计算（recompute），不保存全部中间激活。"),
    "action.optimizer_offload": ("Shard or offload the optimizer state (parallel optimizer, optimizer offload).",
                                 "切分或 offload 优化器状态（并行优化器、优化器状态 offload）。"),
    "action.op_fusion": ("Fuse neighbouring operators (graph kernel fusion, fused attention / norm kernels).",
                         "融合相邻算子（图算融合、融合的 attention / norm 算子）。"),
    "action.parallel_strategy": ("Revisit the parallel strategy: the tensor / pipeline split of the largest operators.",
                                 "调整并行策略：最大算子的张量并行 / 流水线并行切分。"),
    "action.graph_compile": ("Try the graph compile options: jit_level (O1 / O2) and graph kernel optimisation.",
                             "尝试图编译选项：jit_level（O1 / O2）与图算优化。"),
    "action.profile_run": ("Profile 30–50 steady steps (mindspore.profiler with a schedule) to decide.",
                           "开启 Profiler 采集 30–50 个稳定 step（mindspore.profiler 配 schedule）再判断。"),
}

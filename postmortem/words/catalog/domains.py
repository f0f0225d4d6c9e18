"""Templates of communication by parallel domain (analysis/domains.py), the AI Core frequency and
the device's idle gaps, in English and Chinese: the domains' names, how a group was placed, why one
could not be, the verdict's line and the article's moves per domain, the report's tables.
并行域 / 数据并行 / 模型并行 / 流水线并行 / 未被掩盖 / 空闲 as the article and msprof-analyze's
Chinese docs write them."""

from __future__ import annotations

TEMPLATES: dict[str, tuple[str, str]] = {
    # the domains
    "domain.TP": ("TP (tensor parallel)", "TP（张量并行）"),
    "domain.PP": ("PP (pipeline parallel)", "PP（流水线并行）"),
    "domain.DP": ("DP (data parallel)", "DP（数据并行）"),
    "domain.CP": ("CP (context parallel)", "CP（序列/上下文并行）"),
    "domain.EP": ("EP (expert parallel)", "EP（专家并行）"),
    "domain.world": ("world (all ranks)", "全局（所有卡）"),
    "domain.unknown": ("unknown", "未知"),
    # how a group was placed
    "domain.basis.pg-name": ("the framework's group name ({name})", "框架的通信组名（{name}）"),
    "domain.basis.layout": ("its ranks against the layout", "其 rank 与并行切分的比对"),
    "domain.basis.op-kind": ("its operators (send / receive serve the pipeline)", "算子类型（send / receive 属于流水线）"),
    "domain.basis.only-dimension": ("the layout's only collective dimension", "并行切分中唯一的集合通信维度"),
    "domain.reason.no-layout": ("no layout (parallel config, callback header or profiler_metadata.json) to place its ranks",
                                "没有并行切分信息（并行配置、回调头或 profiler_metadata.json），无法判断其 rank 所属维度"),
    "domain.reason.no-ranks": ("its ranks are not all profiled and no group record names them",
                               "该组并非所有卡都被采集，也没有记录给出其成员"),
    "domain.reason.ambiguous": ("its ranks fit more than one dimension of the layout", "其 rank 同时符合多个并行维度"),
    "domain.reason.spans-dimensions": ("its ranks span more than one dimension of the layout", "其 rank 跨越多个并行维度"),
    "domain.reason.one-rank": ("a group of one rank", "只含一张卡的通信组"),
    "domain.reason.no-group": ("the records name no group, and the layout has more than one collective dimension",
                               "记录中没有通信组名，且并行切分中有不止一个集合通信维度"),
    "domain.exposed.intervals": ("from the operators' intervals against the compute tasks", "按通信算子区间与计算任务比对"),
    "domain.exposed.none-overlapped": ("nothing overlapped in these steps: all of it is exposed", "这些 step 中没有任何重叠：全部未被掩盖"),
    "domain.exposed.one-domain": ("the step's exposed communication, the domain being the only one", "该域是 step 中唯一的通信域：取 step 的未掩盖通信"),
    "domain.exposed.mixed": ("from intervals where the DB gives them, else from the step split", "有 DB 区间处按区间，否则按 step 拆分"),
    # the verdict
    "verdict.title.comm_domain": ("communication by parallel domain", "按并行域的通信开销"),
    "verdict.domain": ("{domain}: {types} take {share:pct} of the step ({total:dur} per rank){exposed}{slowest}",
                       "{domain}：{types} 占 step 耗时的 {share:pct}（每卡 {total:dur}）{exposed}{slowest}"),
    "verdict.domain.exposed": (", {exposed:pct} not hidden by compute", "，其中 {exposed:pct} 未被计算掩盖"),
    "verdict.domain.all-exposed": (", none of it hidden by compute", "，完全没有被计算掩盖"),
    "verdict.domain.hidden": (", all hidden by compute", "，全部被计算掩盖"),
    "verdict.domain.slowest": ("; rank {rank:int} is last into it on {n:int} of {of:int} steps (the others wait {wait:dur} for it; "
                               "its own wait {own:dur}, transfer {transit:dur})",
                               "；{of:int} 个 step 中有 {n:int} 个是卡 {rank:int} 最后进入（其他卡为它等待 {wait:dur}；"
                               "它自身等待 {own:dur}、传输 {transit:dur}）"),
    "verdict.domain.awaited-idle": ("Rank {rank:int}'s device stood idle {total:dur} in its longest gaps, most of it for one reason: {reason}",
                                    "卡 {rank:int} 的设备在最长的几段空闲中共空闲 {total:dur}，主要原因：{reason}"),
    "verdict.domain.next": ("Next: {domain} at {share:pct} of the step", "其次：{domain}，占 step 耗时的 {share:pct}"),
    "verdict.domain.unknown": ("{share:pct} of the step is communication of groups whose domain is not known ({reason})",
                               "step 耗时的 {share:pct} 属于无法判断并行域的通信组（{reason}）"),
    "verdict.domain.freq": ("AI Core frequency dropped below {nominal:num} MHz on {ranks:rankset} (lowest {low:num} MHz): "
                            "power or thermal capping slows every operator there",
                            "{ranks:rankset} 的 AI Core 频率低于 {nominal:num} MHz（最低 {low:num} MHz）：功耗或温度降频会拖慢其上所有算子"),
    # the article's moves (§3.1, §3.3), per domain
    "action.domain.DP.parallel-optimizer": ("Turn the parallel optimizer on (enable_parallel_optimizer=True): optimizer "
                                            "state and gradient traffic are split across the data-parallel ranks (the "
                                            "article saw 20–40 %)",
                                            "开启优化器并行（enable_parallel_optimizer=True）：优化器状态与梯度通信按数据并行切分"
                                            "（文中收益 20%–40%）"),
    "action.domain.DP.segmented": ("Replace the full gradient AllReduce with reduce-scatter + all-gather (segmented "
                                   "gradient communication): each rank syncs only its own slice",
                                   "把全量梯度 AllReduce 换成 reduce-scatter + all-gather 的分段梯度通信：每张卡只同步自己负责的切片"),
    "action.domain.DP.topology": ("Keep the data-parallel gradient sync inside a node where the inter-node network is "
                                  "slower (device_num and the rank table decide where groups land)",
                                  "机间网络较慢时，让数据并行的梯度同步尽量发生在机内（device_num 与 rank table 决定通信组落在哪些卡上）"),
    "action.domain.PP.micro": ("Raise micro_batch_num to at least the number of stages (4× keeps the bubble small): "
                               "with fewer the stages wait on each other",
                               "将 micro_batch_num 提高到不少于流水线 stage 数（4 倍可使气泡很小）：不足时各 stage 互相等待"),
    "action.domain.PP.balance": ("Balance the stages: move layers off the stage the others wait for (MindFormers' offset, "
                                 "the layer split of pipeline_stage)",
                                 "均衡各 stage：把被等待的 stage 上的层移走（MindFormers 的 offset、pipeline_stage 的层切分）"),
    "action.domain.TP.node": ("Keep tensor parallel inside a node (its traffic is every layer's): model_parallel no larger "
                              "than the devices of one node",
                              "让张量并行留在机内（它每一层都要通信）：model_parallel 不超过单机卡数"),
    "action.domain.TP.split": ("Rebalance the split: less tensor parallel and more pipeline or data parallel, or larger "
                               "compute per operator to hide the traffic",
                               "调整并行切分：减小张量并行、增加流水线或数据并行，或增大计算粒度来掩盖通信"),
    "action.domain.CP.overlap": ("Overlap the context-parallel exchange with attention compute, or lower context_parallel "
                                 "where the sequence allows", "让序列并行的数据交换与注意力计算重叠，或在序列长度允许时减小 context_parallel"),
    "action.domain.EP.node": ("Keep expert-parallel all-to-all inside a node and even out the experts' load "
                              "(token drop, capacity factor)", "让专家并行的 all-to-all 留在机内，并均衡专家负载（token 丢弃、capacity factor）"),
    "action.domain.world.algorithm": ("Check the communication algorithm and the network topology (HCCL_ALGO, the rank "
                                      "table): the article's first moves once communication passes 25 % of the step",
                                      "检查通信算法与网络拓扑（HCCL_ALGO、rank table）：通信占比超过 25% 时文中的首选手段"),
    "action.domain.world.granularity": ("Communicate less often with more compute between (larger micro batch, gradient "
                                        "accumulation) so compute hides it",
                                        "减少通信频率、增大两次通信间的计算量（更大的 micro batch、梯度累积），让计算掩盖通信"),
    # the report's section
    "domains.title": ("Communication by parallel domain", "按并行域的通信"),
    "domains.placed": ("Each group placed by {basis}", "各通信组依据{basis}归入并行域"),
    "domains.unplaced": ("No group's domain is known: {reasons}", "无法判断任何通信组的并行域：{reasons}"),
    "domains.note": ("{placed}; means per rank and step over {steps:int|step|steps}. Exposed: the part no "
                     "compute hides. Slowest: the rank whose operators take least in its group — the one the others wait "
                     "for (msprof-analyze communication_bottleneck's rule, spread at least 5 %). Wait / transfer: per rank, an operator's transfer is the "
                     "shortest time any rank of its group took for it, the rest is waiting (cluster_time_summary's split). "
                     "Layout: {layout}.",
                     "{placed}；为每卡每 step 的平均值，共 {steps:int} 个 step。未掩盖：没有计算与之重叠的部分。"
                     "最慢：组内通信算子耗时最短的卡——其他卡在等它（msprof-analyze communication_bottleneck 的规则，差异不少于 5%）。"
                     "等待 / 传输：按卡统计，每个通信算子的传输时间取组内各卡耗时的最小值，其余为等待（cluster_time_summary 的拆分）。"
                     "并行切分：{layout}。"),
    "domains.layout.none": ("none found", "未找到"),
    "domains.col.domain": ("Domain", "并行域"),
    "domains.col.types": ("Operators", "通信算子"),
    "domains.col.time": ("Time / step", "每 step 耗时"),
    "domains.col.share": ("Share of step", "占 step"),
    "domains.col.exposed": ("Exposed", "未掩盖"),
    "domains.col.bandwidth": ("Bandwidth", "带宽"),
    "domains.col.slowest": ("Slowest rank (steps)", "最慢卡（step 数）"),
    "domains.col.wait": ("Wait / transfer", "等待 / 传输"),
    "domains.slowest": ("{rank:int} ({n:int}/{of:int})", "{rank:int}（{n:int}/{of:int}）"),
    "domains.ranks": ("{ranks:rankranges}", "{ranks:rankranges}"),
    "domains.groups.title": ("Groups and their domains", "通信组与所属并行域"),
    "domains.col.group": ("Group", "通信组"),
    "domains.col.name": ("Name", "组名"),
    "domains.col.ranks": ("Ranks", "卡"),
    "domains.col.how": ("Placed by / why not", "依据 / 无法判断的原因"),
    "domains.freq.title": ("AI Core frequency", "AI Core 频率"),
    "domains.freq.note": ("Per rank, from the DB export's AICORE_FREQ samples. Steady: one level; idle: down to {idle:num} MHz "
                          "between tasks only (msprof-analyze freq_analysis' rule); drop: any other level below {nominal:num} MHz; its first sample's time from the capture's start.",
                          "按卡统计 DB 导出的 AICORE_FREQ 采样。稳定：只有一个频率；空闲：只在任务间降到 {idle:num} MHz"
                          "（msprof-analyze freq_analysis 的规则）；降频：低于 {nominal:num} MHz 的其他频率；首次降频时刻从采集开始计。"),
    "domains.freq.steady": ("steady", "稳定"),
    "domains.freq.idle-drops": ("idle", "空闲降频"),
    "domains.freq.drop": ("drop", "降频"),
    "domains.col.rank": ("Rank", "卡"),
    "domains.col.samples": ("Samples", "采样数"),
    "domains.col.min": ("Lowest", "最低"),
    "domains.col.max": ("Highest", "最高"),
    "domains.col.state": ("State", "状态"),
    "domains.col.first_drop": ("First dropped at", "首次降频时刻"),
    "domains.idle.title": ("Idle gaps and their reasons", "空闲时段及原因"),
    "domains.idle.note": ("The {ranks:int|rank's|ranks'} longest gaps between device work (compute tasks and communication "
                          "operators, merged), at most 10 per rank, each traced back to the host (msprof-analyze free_analysis' "
                          "rules). Longest: {longest:dur} on rank {rank:int}, {reason}.",
                          "{ranks:int} 张卡上设备空闲（计算任务与通信算子合并后之间的间隙）最长的时段，每卡至多 10 段，"
                          "逐段追溯到 host 侧（msprof-analyze free_analysis 的规则）。最长：卡 {rank:int} 上 {longest:dur}，{reason}。"),
    "domains.col.reason": ("Reason", "原因"),
    "domains.col.gaps": ("Gaps", "段数"),
    "domains.col.total": ("Total", "合计"),
    "idle.host-idle": ("the framework dispatched nothing (host-bound)", "框架层没有下发任务（host 侧瓶颈）"),
    "idle.launch-gap": ("a long time between two launches in CANN", "CANN 层两次下发之间间隔过长"),
    "idle.slow-launch": ("one long launch in CANN", "CANN 层单次下发耗时过长"),
    "idle.device-task": ("other device tasks ran (memory copies, ...)", "设备上有其他任务在执行（内存拷贝等）"),
    "idle.no-dispatch-record": ("no host record to trace it to", "没有可追溯的 host 侧记录"),
    "domains.none": ("No communication operator to place in a domain.", "没有可归入并行域的通信算子。"),
}

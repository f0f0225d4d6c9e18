"""Templates of the ranks at scale (analysis/ranks.py: rank groups, the awaited ranks) and of the
model's shape read from checkpoint tensors (load/checkpoints.py), in English and Chinese."""

from __future__ import annotations

TEMPLATES: dict[str, tuple[str, str]] = {
    # load/checkpoints.py: shape_settings
    "checkpoint-shape-sharded": ("The model's shape is not read from the checkpoints' tensors: with {key} = {value:v} "
                                 "each rank holds a shard, whose shapes are not the model's.",
                                 "未从检查点张量读取模型结构：{key} = {value:v}，每张卡只保存一个切片，其形状不是整个模型的。"),
    "checkpoint-shape-sharded/ranks-differ": ("The model's shape is not read from the checkpoints' tensors: the latest "
                                              "checkpoints of {n:int} ranks hold different tensors (each a shard of the "
                                              "model).",
                                              "未从检查点张量读取模型结构：{n:int} 张卡的最新检查点张量各不相同（每张卡只保存模型的一部分）。"),
    # the verdict's settings: a model whose size changed (analysis/identity.py model_growth)
    "verdict.model-size": ("The model has {ratio:x} the baseline's parameters ({baseline:si} → {current:si}): a token "
                           "costs about {ratio:x} the FLOPs (6N)",
                           "模型参数量是基线的 {ratio:x}（{baseline:si} → {current:si}）：每个 token 的计算量约为 {ratio:x}（6N）"),
    "verdict.model-size/step": ("The model has {ratio:x} the baseline's parameters ({baseline:si} → {current:si}): a token "
                                "costs about {ratio:x} the FLOPs (6N), and the step takes {step:x} as long: the model "
                                "explains only part of it",
                                "模型参数量是基线的 {ratio:x}（{baseline:si} → {current:si}）：每个 token 的计算量约为 "
                                "{ratio:x}（6N），而 step 耗时变为 {step:x}：模型变化只能解释其中一部分"),
    "verdict.model-size/covers": ("The model has {ratio:x} the baseline's parameters ({baseline:si} → {current:si}): a "
                                  "token costs about {ratio:x} the FLOPs (6N), and the step takes {step:x} as long: the "
                                  "bigger model explains the slower step",
                                  "模型参数量是基线的 {ratio:x}（{baseline:si} → {current:si}）：每个 token 的计算量约为 "
                                  "{ratio:x}（6N），step 耗时变为 {step:x}：模型变大足以解释 step 变慢"),
    "verdict.model-size/body": ("The model's body (12 L H²) is {ratio:x} the baseline's: a token costs about that much "
                                "more", "模型主体（12 L H²）是基线的 {ratio:x}：每个 token 的计算量约增加这么多"),
    "verdict.model-size/body/step": ("The model's body (12 L H²) is {ratio:x} the baseline's, and the step takes {step:x} "
                                     "as long: the model explains only part of it",
                                     "模型主体（12 L H²）是基线的 {ratio:x}，而 step 耗时变为 {step:x}：模型变化只能解释其中一部分"),
    "verdict.model-size/body/covers": ("The model's body (12 L H²) is {ratio:x} the baseline's, and the step takes "
                                       "{step:x} as long: the bigger model explains the slower step",
                                       "模型主体（12 L H²）是基线的 {ratio:x}，step 耗时变为 {step:x}：模型变大足以解释 step 变慢"),
    # the verdict's slow-ranks problem: one line per group (analysis/ranks.py RankGroup); "/many": several units
    "verdict.rank-group.stage": ("Pipeline stage {units:rankranges} ({ranks:rankset}, {size:int} ranks per stage) runs {excess:pct0} "
                                 "slower than the other ranks: {median:dur} per step against {reference:dur}",
                                 "流水线 stage {units:rankranges}（{ranks:rankset}，每个 stage {size:int} 张卡）比其他卡慢 {excess:pct0}："
                                 "每步 {median:dur}，其他卡 {reference:dur}"),
    "verdict.rank-group.stage/many": ("Pipeline stages {units:rankranges} ({ranks:rankset}, {size:int} ranks per stage) run {excess:pct0} "
                                      "slower than the other ranks: {median:dur} per step against {reference:dur}",
                                      "流水线 stage {units:rankranges}（{ranks:rankset}，每个 stage {size:int} 张卡）比其他卡慢 "
                                      "{excess:pct0}：每步 {median:dur}，其他卡 {reference:dur}"),
    "verdict.rank-group.node": ("Node {units:rankranges} ({ranks:rankset}, {size:int} ranks per node) runs {excess:pct0} slower than "
                                "the other ranks: {median:dur} per step against {reference:dur}",
                                "节点 {units:rankranges}（{ranks:rankset}，每节点 {size:int} 张卡）比其他卡慢 {excess:pct0}：每步 "
                                "{median:dur}，其他卡 {reference:dur}"),
    "verdict.rank-group.node/many": ("Nodes {units:rankranges} ({ranks:rankset}, {size:int} ranks per node) run {excess:pct0} slower "
                                     "than the other ranks: {median:dur} per step against {reference:dur}",
                                     "节点 {units:rankranges}（{ranks:rankset}，每节点 {size:int} 张卡）比其他卡慢 {excess:pct0}：每步 "
                                     "{median:dur}，其他卡 {reference:dur}"),
    "verdict.rank-group.host": ("Host {units} ({ranks:rankset}) runs {excess:pct0} slower than the other ranks: "
                                "{median:dur} per step against {reference:dur}",
                                "主机 {units}（{ranks:rankset}）比其他卡慢 {excess:pct0}：每步 {median:dur}，其他卡 "
                                "{reference:dur}"),
    "verdict.rank-group.host/many": ("Hosts {units} ({ranks:rankset}) run {excess:pct0} slower than the other ranks: "
                                     "{median:dur} per step against {reference:dur}",
                                     "主机 {units}（{ranks:rankset}）比其他卡慢 {excess:pct0}：每步 {median:dur}，其他卡 "
                                     "{reference:dur}"),
    "verdict.rank-group.parity": ("The {parity} ranks, {count:int} of {of:int}, run {excess:pct0} slower than the others: "
                                  "{median:dur} per step against {reference:dur}",
                                  "{parity}号卡（{of:int} 张中的 {count:int} 张）比其他卡慢 {excess:pct0}：每步 {median:dur}，"
                                  "其他卡 {reference:dur}"),
    "verdict.rank-group.slot": ("Device {units:rankranges} of every node ({ranks:rankset}, {count:int} of {of:int}) runs {excess:pct0} "
                                "slower than the others: {median:dur} per step against {reference:dur}",
                                "每个节点的第 {units:rankranges} 号设备（{ranks:rankset}，{of:int} 张中的 {count:int} 张）比其他卡慢 "
                                "{excess:pct0}：每步 {median:dur}，其他卡 {reference:dur}"),
    "verdict.rank-group.ranks": ("{ranks:Rankset} ({count:int} of {of:int}) run {excess:pct0} slower than the others: "
                                 "{median:dur} per step against {reference:dur}",
                                 "{ranks:rankset}（{of:int} 张中的 {count:int} 张）比其他卡慢 {excess:pct0}：每步 {median:dur}，"
                                 "其他卡 {reference:dur}"),
    "verdict.rank-group.ranks/one": ("{ranks:Rankset} (of {of:int}) runs {excess:pct0} slower than the others: "
                                     "{median:dur} per step against {reference:dur}",
                                     "{ranks:rankset}（共 {of:int} 张）比其他卡慢 {excess:pct0}：每步 {median:dur}，其他卡 "
                                     "{reference:dur}"),
    "verdict.rank-group.awaited": ("{ranks:Rankset} ({count:int} of {of:int}): the other ranks wait for them in their "
                                   "collectives (waiting {awaited:pct0} of the step, against {waiting:pct0} on the ranks "
                                   "that wait)",
                                   "{ranks:rankset}（{of:int} 张中的 {count:int} 张）：其他卡在集合通信中等待它们（它们的等待占 "
                                   "step 的 {awaited:pct0}，等待方为 {waiting:pct0}）"),
    "verdict.rank-group.awaited/one": ("{ranks:Rankset} (of {of:int}): the other ranks wait for it in their collectives "
                                       "(waiting {awaited:pct0} of its step, against {waiting:pct0} on the ranks that wait)",
                                       "{ranks:rankset}（共 {of:int} 张）：其他卡在集合通信中等待它（它的等待占 step 的 "
                                       "{awaited:pct0}，等待方为 {waiting:pct0}）"),
    "rank-parity.odd": ("odd", "奇数"),
    "rank-parity.even": ("even", "偶数"),
    # the data-quality table: one note on many files (every rank's log)
    "data-quality.files": ("{first} and {n:int|more file|more files}", "{first} 及其他 {n:int} 个文件"),
    # the report's ranks section
    "ranks.groups-none": ("No rank is slow by the rule.", "按该规则没有慢卡。"),
    "ranks.basis.profile": ("Per-rank figures are each rank's mean profiled step (no step times logged per rank).",
                            "各卡指标为每张卡的 Profiler step 平均耗时（未按卡记录 step 耗时）。"),
    "ranks.nodes.host": ("Nodes are the hosts the files name ({size:int} ranks on the largest).",
                         "节点按文件中出现的主机名划分（最大的节点有 {size:int} 张卡）。"),
    "ranks.nodes.setting": ("Nodes are contiguous blocks of {size:int} ranks (the devices per node the settings give).",
                            "节点按连续的 {size:int} 张卡划分（配置给出的每节点设备数）。"),
    "ranks.nodes.default": ("Nodes are taken as contiguous blocks of {size:int} ranks (no host names in the files, no devices "
                            "per node in the settings).",
                            "节点按连续的 {size:int} 张卡划分（文件中没有主机名，配置中也没有每节点设备数）。"),
}

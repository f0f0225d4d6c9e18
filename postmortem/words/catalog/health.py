"""Wording of the strategy files (the job's layout) and of MindFormers' health records
(health_ckpts.json, the embedding local norm, MoE expert load and token drops)."""

from __future__ import annotations

TEMPLATES: dict[str, tuple[str, str]] = {
    # readers/strategy.py
    "strategy-corrupt": ("An auto-parallel strategy file whose bytes stop making sense part way: {problem}; "
                         "{operators:int} operator strategies and {params:int} parameter layouts were read before it.",
                         "并行策略文件在中途无法解析：{problem}；此前已读取 {operators:int} 个算子切分策略和 {params:int} 个参数排布。"),
    "strategy-empty": ("An auto-parallel strategy file that holds no operator and no parameter: no layout to read.",
                       "并行策略文件中没有任何算子或参数：没有可读的切分排布。"),
    "strategy.problem": ("{detail}", "{detail}"),
    "strategy-files-disagree": ("Strategy files disagree on {key}: {value} in {other_source}, {other_value} here "
                                "({n:int} files differ); the first file's value is kept.",
                                "各并行策略文件的 {key} 不一致：{other_source} 中为 {value}，此文件为 {other_value}"
                                "（共 {n:int} 个文件不同）；采用第一个文件的值。"),
    # readers/health.py
    "health-record-invalid/json": ("health_ckpts.json is not JSON: {detail}.", "health_ckpts.json 不是合法的 JSON：{detail}。"),
    "health-record-invalid/not-list": ("health_ckpts.json is not a list of saves: not MindFormers' checkpoint health record.",
                                       "health_ckpts.json 不是保存记录列表：不是 MindFormers 的权重健康记录。"),
    "health-record-invalid/entries": ("{n:int} of {total:int} entries of health_ckpts.json lack a whole is_health or a ckpt_name; "
                                      "MindFormers' resume counts them as unhealthy, and so do we.",
                                      "health_ckpts.json 的 {total:int} 条记录中有 {n:int} 条缺少整数 is_health 或 ckpt_name；"
                                      "MindFormers 续训时按不健康处理，这里也一样。"),
    "health-record-invalid/empty": ("health_ckpts.json holds no save: MindFormers' resume refuses to start from it "
                                    "(\"no healthy checkpoints yet\").",
                                    "health_ckpts.json 中没有任何保存记录：MindFormers 续训会拒绝（“no healthy checkpoints yet”）。"),
    # analysis/health.py findings
    "finding.unhealthy_checkpoint/latest": (
        "MindFormers' health record marks {count:int} of {saves:int} saves unhealthy, the first at step {first_step:step} "
        "({first_name}), the latest among them ({latest_name}). Resume from step {resume_step:step} ({resume_name}), the last "
        "healthy save: MindFormers' own resume does not skip unhealthy saves and would start from the latest; give that file "
        "to load_checkpoint with resume_training.",
        "MindFormers 权重健康记录中 {saves:int} 次保存有 {count:int} 次不健康，首次在第 {first_step:step} 步（{first_name}），"
        "最近一次保存（{latest_name}）也不健康。应从第 {resume_step:step} 步（{resume_name}）恢复训练，即最后一个健康的 checkpoint："
        "MindFormers 自带的续训不会跳过不健康的 checkpoint，会从最近一次保存开始；请把该文件指定给 load_checkpoint 并开启 resume_training。"),
    "finding.unhealthy_checkpoint/earlier": (
        "MindFormers' health record marks {count:int} of {saves:int} saves unhealthy, the first at step {first_step:step} "
        "({first_name}); the latest save ({latest_name}, step {latest_step:step}) is healthy and is the one to resume from.",
        "MindFormers 权重健康记录中 {saves:int} 次保存有 {count:int} 次不健康，首次在第 {first_step:step} 步（{first_name}）；"
        "最近一次保存（{latest_name}，第 {latest_step:step} 步）健康，可从它恢复训练。"),
    "finding.unhealthy_checkpoint/none": (
        "MindFormers' health record marks every save unhealthy ({count:int} of {saves:int}, the first at step "
        "{first_step:step}): no checkpoint to resume from; MindFormers' resume refuses (\"no healthy checkpoints yet\") "
        "and the run has to start again.",
        "MindFormers 权重健康记录中所有保存都不健康（{saves:int} 次中 {count:int} 次，首次在第 {first_step:step} 步）："
        "没有可用于恢复训练的 checkpoint；MindFormers 续训会拒绝（“no healthy checkpoints yet”），只能重新开始训练。"),
    "finding.embedding_norm": (
        "The embedding's local norm reaches MindFormers' threshold {threshold:num} at step {first_step:step} "
        "({over:int} of {steps:int} logged steps at or over it, peak {peak:num} at step {peak_step:step}): saves from then "
        "on are recorded unhealthy.",
        "embedding 的局部梯度范数在第 {first_step:step} 步达到 MindFormers 的阈值 {threshold:num}"
        "（{steps:int} 个记录 step 中 {over:int} 个不低于阈值，峰值 {peak:num}，在第 {peak_step:step} 步）：此后的保存会被记为不健康。"),
    "finding.embedding_norm/unjudged": (
        "The embedding's local norm reaches MindFormers' threshold {threshold:num} at step {first_step:step} "
        "({over:int} of {steps:int} logged steps at or over it, peak {peak:num} at step {peak_step:step}). Without "
        "pipeline parallel MindFormers' health monitor does not judge saves by it: every save is recorded healthy.",
        "embedding 的局部梯度范数在第 {first_step:step} 步达到 MindFormers 的阈值 {threshold:num}"
        "（{steps:int} 个记录 step 中 {over:int} 个不低于阈值，峰值 {peak:num}，在第 {peak_step:step} 步）。"
        "未开启流水线并行时，MindFormers 的权重健康监测不按它判断：每次保存都会被记为健康。"),
    "finding.token_drops": (
        "{layers:int} of {of:int} MoE layers drop tokens over the experts' capacity from step {first_step:step}; layer "
        "{layer} drops the most: {peak:pct} at step {peak_step:step}.",
        "{of:int} 个 MoE 层中有 {layers:int} 层从第 {first_step:step} 步起丢弃超出专家容量的 token；第 {layer} 层丢弃最多："
        "第 {peak_step:step} 步为 {peak:pct}。"),
    # report/sections/health.py
    "health.title": ("Health records (MindFormers)", "健康记录（MindFormers）"),
    "health.resume": ("Resume from {name} (step {step:step}): the last save {record} records as healthy.",
                      "应从 {name}（第 {step:step} 步）恢复训练：{record} 中最后一个健康的保存。"),
    "health.not-on-disk": (" Its file is not in the run folder.", "该文件不在本次运行的目录中。"),
    "health.resume-none": ("{record} records no healthy save: nothing to resume from.",
                           "{record} 中没有健康的保存：没有可用于恢复训练的 checkpoint。"),
    "health.healthy": ("healthy", "健康"),
    "health.unhealthy": ("unhealthy (is_health {value})", "不健康（is_health {value}）"),
    "health.on-disk": ("in the folder", "在目录中"),
    "health.col-save": ("Save", "保存序号"),
    "health.col-health": ("Health", "健康状态"),
    "health.col-disk": ("On disk", "是否在目录中"),
    "health.rule-saves": ("MindFormers' CheckpointMonitor records each save; is_health 0 is healthy, anything else is not "
                          "(its resume reads it so). A save is unhealthy where a first-stage rank's embedding local norm is at "
                          "or over embedding_local_norm_threshold; only under pipeline parallel.",
                          "MindFormers 的 CheckpointMonitor 在每次保存时记录：is_health 为 0 表示健康，其他值均为不健康"
                          "（其续训也这样读取）。仅在流水线并行时，第一个 stage 上某张卡的 embedding 局部梯度范数不低于 "
                          "embedding_local_norm_threshold，该次保存即记为不健康。"),
    "health.embedding-norm": ("embedding local norm", "embedding 局部梯度范数"),
    "health.threshold": ("threshold {value:num}", "阈值 {value:num}"),
    "health.embedding-over": ("{tag}: at or over the threshold {threshold:num} from step {first:step}, on {over:int} of "
                              "{steps:int} steps; peak {peak:num} at step {peak_step:step}.",
                              "{tag}：从第 {first:step} 步起不低于阈值 {threshold:num}，{steps:int} 个 step 中有 {over:int} 个；"
                              "峰值 {peak:num}，在第 {peak_step:step} 步。"),
    "health.embedding-under": ("{tag}: under the threshold {threshold:num} on all {steps:int} steps; peak {peak:num} at step "
                               "{peak_step:step}.",
                               "{tag}：{steps:int} 个 step 均低于阈值 {threshold:num}；峰值 {peak:num}，在第 {peak_step:step} 步。"),
    "health.unjudged": (" Without pipeline parallel, MindFormers records every save healthy whatever this norm.",
                        "未开启流水线并行时，无论该范数多大，MindFormers 都把每次保存记为健康。"),
    "health.rule-embedding": (" (Rule: CheckpointMonitor, embedding_local_norm >= embedding_local_norm_threshold, default 1.0.)",
                              "（规则：CheckpointMonitor，embedding_local_norm >= embedding_local_norm_threshold，默认 1.0。）"),
    "health.expert-imbalance": ("expert load: busiest expert over the layer's mean", "专家负载：最忙专家 / 本层平均"),
    "health.layer-name": ("layer {layer}", "第 {layer} 层"),
    "health.balanced": ("balanced", "均衡"),
    "health.col-layer": ("Layer", "层"),
    "health.col-experts": ("Experts", "专家数"),
    "health.col-busiest": ("Busiest expert", "最忙专家"),
    "health.col-share": ("Its share of the load", "其负载占比"),
    "health.col-imbalance": ("Busiest / mean", "最忙 / 平均"),
    "health.rule-expert-load": ("Each expert's share of its layer's load at the last step TopkBiasBalanceCallback wrote "
                                "(TensorBoard expert_load/<layer>). MindFormers applies no threshold to it: it moves each "
                                "expert's top-k bias towards the mean; 1× is balanced.",
                                "TopkBiasBalanceCallback 最后一次写入时各专家在本层负载中的占比（TensorBoard 的 expert_load/<层>）。"
                                "MindFormers 不对它设阈值：只按与平均值之差的符号调整各专家的 top-k bias；1× 表示均衡。"),
    "health.drop-rate": ("token drop rate", "token 丢弃率"),
    "health.rule-drops": ("MoEDropRateCallback's drop rate: the share of tokens over the experts' capacity "
                          "(capacity_factor / expert_num); above 0, tokens were dropped.",
                          "MoEDropRateCallback 的丢弃率：超出专家容量（capacity_factor / expert_num）的 token 占比；大于 0 即有 token 被丢弃。"),
    "health.aux-loss": ("MoE aux loss (load balancing)", "MoE 辅助损失（负载均衡）"),
    # report/sections/layout.py
    "layout.title": ("Parallel layout (strategy files)", "并行切分（并行策略文件）"),
    "layout.summary": ("{path}: stages {stages}, {devices:int} devices per stage, model parallel {mp}, data parallel {dp} "
                       "(the copies of a dense weight: dp × cp where context parallel is on); {files:int|strategy file|strategy files} read.",
                       "{path}：stage {stages}，每个 stage {devices:int} 卡，模型并行 {mp}，数据并行 {dp}"
                       "（即稠密权重的副本数：开启上下文并行时为 dp × cp）；共读取 {files:int} 个并行策略文件。"),
    "layout.col-format": ("Format", "格式"),
    "layout.col-stages": ("Stages", "stage"),
    "layout.col-stage": ("Stage", "stage"),
    "layout.col-devices": ("Devices per stage", "每 stage 卡数"),
    "layout.col-shard": ("Optimizer shard", "优化器切分"),
    "layout.col-operators": ("Operators", "算子数"),
    "layout.col-params": ("Parameters", "参数数"),
    "layout.col-dev-matrix": ("Device matrix", "设备矩阵"),
    "layout.col-split": ("Parts per dimension", "各维切分份数"),
    "layout.col-examples": ("Parameters (first)", "参数（前几个）"),
    "layout.rule-splits": ("How {path} splits the model's parameters (optimizer state left out): each distinct split once, "
                           "with how many parameters have it. A dimension's parts are the device-matrix axes its tensor_map names.",
                           "{path} 对模型参数的切分（不含优化器状态）：每种切分方式列一次，并给出采用它的参数个数。"
                           "某一维的切分份数由 tensor_map 指向的设备矩阵轴决定。"),
    # analysis/configcheck.py check_strategy
    "check.strategy_layout": ("the strategy files' layout = the config's parallel layout",
                              "并行策略文件的切分 = 配置中的并行切分"),
    "check.strategy-pair": ("{key} {strategy:g} in the strategy, {config:g} in the config",
                            "{key}：策略文件为 {strategy:g}，配置为 {config:g}"),
    "check.strategy-differs": ("the layout the job ran with is not the config's: {differ:semi}",
                               "作业实际运行的切分与配置不一致：{differ:semi}"),
    "check.strategy-searched": ("auto_parallel searched the layout; it differs from parallel_config: {differ:semi}",
                                "auto_parallel 自动搜索了切分策略，与 parallel_config 不同：{differ:semi}"),
    "check.strategy-equal": ("the strategy files agree with {keys}", "并行策略文件与 {keys} 一致"),
    "check.fix.strategy": ("the strategy files were written by another layout than this config's: check which config the job "
                           "ran with, or delete output/strategy/ before the next launch so that it saves its own",
                           "策略文件来自与本配置不同的切分：确认作业实际使用的配置，或在下次拉起前删除 output/strategy/，"
                           "让作业重新保存自己的策略文件"),
    "check.fix.strategy-searched": ("set the degrees in parallel_config to the searched layout, or keep auto_parallel and "
                                    "read the layout from the strategy files",
                                    "把 parallel_config 的并行度设为搜索得到的切分，或保留 auto_parallel 并以策略文件为准"),
}

for _reader in ("strategy", "health"):  # the other readers' are in diagnostics.py
    TEMPLATES[f"{_reader}-nothing-read"] = (
        f"Claimed by the {_reader} reader, but nothing was taken from it: no rows, no settings, and the reader gave no reason.",
        f"由 {_reader} 读取器识别，但没有读出任何内容：既无数据行也无配置，读取器也未说明原因。")
    TEMPLATES[f"{_reader}-nothing-read/empty"] = (
        f"Claimed by the {_reader} reader, but nothing was taken from it: the file is empty.",
        f"由 {_reader} 读取器识别，但没有读出任何内容：文件为空。")

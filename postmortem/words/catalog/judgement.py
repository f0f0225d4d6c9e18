"""Judgement across runs and against the run itself: what the archive calls normal (history), what
``check --baseline`` says changed, and the sentences that say only what the files show (a layout the
run trained with, a spike with history before it, a peak of the learning rate that is known)."""

from __future__ import annotations

TEMPLATES: dict[str, tuple[str, str]] = {
    "q.callback_data_wait_share": ("the data wait (postmortem's callback: the gap before each step, timed in training)",
                                   "数据等待时间（postmortem 回调：训练进程内计时的每个 step 之前的间隙）"),
    "evidence.callback_data_wait_share": ("Data wait (postmortem's callback)", "数据等待（postmortem 回调）"),
    "triage.src.callback": ("postmortem's callback, timed in the training process", "postmortem 回调，在训练进程内计时"),
    "triage.src.summary": ("summary / TensorBoard scalars", "summary / TensorBoard 标量"),
    # ---- the figures a run prints itself (analysis/mfu.py, datapipe, throughput)
    "method.rate-as-printed": ("the run's own printed rate {printed:q} ({inner}), in the unit it printed; no computed rate: {why}",
                               "训练自身打印的吞吐 {printed:q}（{inner}），按其打印的单位；无法计算吞吐：{why}"),
    "method.rate-as-printed/device": ("the run's own printed rate {printed:q} ({inner}), in the unit it printed: per device; "
                                      "no computed rate: {why}",
                                      "训练自身打印的吞吐 {printed:q}（{inner}），按其打印的单位：单卡数值；无法计算吞吐：{why}"),
    "method.params-recorded": ("the parameters the run counted itself (every table, position embeddings too)",
                               "训练自身统计的参数量（包含所有参数表，也包含位置 embedding）"),
    "reason.params-recorded-whole": ("the run's own count ({origin:src}) is one total: no split by table",
                                     "训练自身的统计（{origin:src}）只有一个总数，不分参数表"),
    # ---- configuration checks after the run (analysis/configcheck.py)
    "check.layout-derived": ("data parallel {dp:g} = {devices:g} devices / ({rest:prod}): not set, MindSpore derives it",
                             "数据并行 {dp:g} = {devices:g} 卡 /（{rest:prod}）：配置未设置，由 MindSpore 推导"),
    "check.layout-read-differs": ("the settings read do not multiply to the devices: {factors:prod} = {product:g} ≠ {devices:g} "
                                  "devices, yet the run trained {steps:int|step|steps}, so it ran another layout than these; "
                                  "read: {read:semi}",
                                  "读到的并行配置乘积与卡数不符：{factors:prod} = {product:g} ≠ {devices:g} 卡，但训练已跑了 "
                                  "{steps:int} 步，实际的并行切分与这些配置不同；读到的配置：{read:semi}"),
    "check.micro-below-stages-read": ("the settings read give {micro:g} micro-batches for {stages:g} stages, yet the run trained "
                                      "{steps:int|step|steps}: MindSpore ran other values than these; read: {read:semi}",
                                      "读到的配置为 {stages:g} 个 stage 配 {micro:g} 个 micro batch，但训练已跑了 {steps:int} "
                                      "步：MindSpore 实际用的值与此不同；读到的配置：{read:semi}"),
    "check.not-divisible-read": ("the settings read give {value:g}, not divisible by {by:g}, yet the run trained "
                                 "{steps:int|step|steps}: the split it ran is not these values; read: {read:semi}",
                                 "读到的配置为 {value:g}，不能被 {by:g} 整除，但训练已跑了 {steps:int} 步：实际的切分与这些值不同；"
                                 "读到的配置：{read:semi}"),
    "check.batch-read-differs": ("the settings read give a global batch of {batch:g} ≠ the product {product:g}, yet the run trained "
                                 "{steps:int|step|steps}: a factor is not in the files (accumulation, interleaving, a batch the "
                                 "launch set); read: {read:semi}",
                                 "读到的全局 batch {batch:g} ≠ 乘积 {product:g}，但训练已跑了 {steps:int} 步：有因子不在文件中（梯度累积、"
                                 "交织、启动时设置的 batch）；读到的配置：{read:semi}"),
    "check.read": ("{key} {value:v} ({source:src})", "{key} {value:v}（{source:src}）"),
    "check.read-nosource": ("{key} {value:v}", "{key} {value:v}"),
    "check.read-unset": ("{key} not set", "{key} 未设置"),
    "check.fix.layout-read": ("find where the launch set the layout (the launch script, the yaml the job really read, "
                              "msrun --worker_num) and record it with the run",
                              "找到启动时实际生效的并行配置（启动脚本、任务真正读取的 yaml、msrun --worker_num），并与本次训练一起存档"),
    # ---- the learning rate at a spike, where the schedule's peak is not known (analysis/diagnosis.py)
    "verdict.spike-at/logmax": ("the largest spike is at step {step:step}, with the learning rate at {lr_share:pct0} of the highest "
                                "learning rate in the log (the schedule's peak is not known)",
                                "最大的尖峰在第 {step:step} 步，此时学习率为日志中最高学习率的 {lr_share:pct0}（调度的峰值未知）"),
    "verdict.spike-at/logtop": ("the largest spike is at step {step:step}, at the highest learning rate in the log "
                                "({lr_share:pct0}; the schedule's peak is not known)",
                                "最大的尖峰在第 {step:step} 步，此时学习率为日志中的最高值（{lr_share:pct0}；调度的峰值未知）"),
    "verdict.nan-at/logmax": ("the first NaN/Inf is at step {step:step}, with the learning rate at {lr_share:pct0} of the highest "
                              "learning rate in the log (the schedule's peak is not known)",
                              "首个 NaN/Inf 在第 {step:step} 步，此时学习率为日志中最高学习率的 {lr_share:pct0}（调度的峰值未知）"),
    "verdict.nan-at/logtop": ("the first NaN/Inf is at step {step:step}, at the highest learning rate in the log "
                              "({lr_share:pct0}; the schedule's peak is not known)",
                              "首个 NaN/Inf 在第 {step:step} 步，此时学习率为日志中的最高值（{lr_share:pct0}；调度的峰值未知）"),
    "verdict.diverged-at/logmax": ("the loss spike at step {step:step} never recovered (the learning rate at {lr_share:pct0} of the "
                                   "highest in the log)",
                                   "第 {step:step} 步的 loss 尖峰没有恢复（此时学习率为日志中最高学习率的 {lr_share:pct0}）"),
    "verdict.diverged-at/logtop": ("the loss spike at step {step:step}, at the highest learning rate in the log, never recovered",
                                   "第 {step:step} 步（学习率为日志中的最高值）的 loss 尖峰没有恢复"),
    "finding.loss_spikes/end": ("{count:int|loss spike|loss spikes}, all recovered fast but {at_end:int} at the log's last values, "
                                "with nothing after it to recover in; the largest at step {largest_step:step}, {height_max:rel} over "
                                "the running median.",
                                "{count:int} 次 loss 尖峰，除日志末尾的 {at_end:int} 次（其后没有记录，看不到是否恢复）外全部快速恢复；"
                                "最大一次在第 {largest_step:step} 步，比滚动中位数高 {height_max:pct0}。"),
    "finding.loss_spikes/slow_end": ("{count:int|loss spike|loss spikes}, {not_fast:int} without fast recovery and {at_end:int} at the "
                                     "log's last values, with nothing after it to recover in; the largest at step "
                                     "{largest_step:step}, {height_max:rel} over the running median.",
                                     "{count:int} 次 loss 尖峰，其中 {not_fast:int} 次未能快速恢复，{at_end:int} 次在日志末尾（其后没有"
                                     "记录，看不到是否恢复）；最大一次在第 {largest_step:step} 步，比滚动中位数高 {height_max:pct0}。"),
    "finding.grad_norm_spikes/end": ("{count:int|grad-norm spike|grad-norm spikes}, all recovered fast but {at_end:int} at the log's "
                                     "last values, with nothing after it to recover in; the largest at step {largest_step:step}, "
                                     "{height_max:rel} over the running median.",
                                     "{count:int} 次梯度范数尖峰，除日志末尾的 {at_end:int} 次（其后没有记录，看不到是否恢复）外全部快速"
                                     "恢复；最大一次在第 {largest_step:step} 步，比滚动中位数高 {height_max:pct0}。"),
    "finding.grad_norm_spikes/slow_end": ("{count:int|grad-norm spike|grad-norm spikes}, {not_fast:int} without fast recovery and "
                                          "{at_end:int} at the log's last values, with nothing after it to recover in; the largest at "
                                          "step {largest_step:step}, {height_max:rel} over the running median.",
                                          "{count:int} 次梯度范数尖峰，其中 {not_fast:int} 次未能快速恢复，{at_end:int} 次在日志末尾（其后"
                                          "没有记录，看不到是否恢复）；最大一次在第 {largest_step:step} 步，比滚动中位数高 {height_max:pct0}。"),
    "finding.loss_spikes/end_only": ("{count:int|loss spike|loss spikes} at the log's last values, with nothing after to recover in; "
                                     "the largest at step {largest_step:step}, {height_max:rel} over the running median.",
                                     "{count:int} 次 loss 尖峰，都在日志末尾（其后没有记录，看不到是否恢复）；最大一次在第 "
                                     "{largest_step:step} 步，比滚动中位数高 {height_max:pct0}。"),
    "finding.grad_norm_spikes/end_only": ("{count:int|grad-norm spike|grad-norm spikes} at the log's last values, with nothing after "
                                          "to recover in; the largest at step {largest_step:step}, {height_max:rel} over the running "
                                          "median.",
                                          "{count:int} 次梯度范数尖峰，都在日志末尾（其后没有记录，看不到是否恢复）；最大一次在第 "
                                          "{largest_step:step} 步，比滚动中位数高 {height_max:pct0}。"),
    "reason.loss-rose/excerpt": ("the loss did not come down over the logged steps (the log starts at step {first:step}, mid-run): "
                                 "it rose from {initial:loss} to {final:loss}",
                                 "在日志记录的 step 内 loss 没有下降（日志从第 {first:step} 步开始，是训练中途）：从 {initial:loss} 升到了 "
                                 "{final:loss}"),
    "reason.loss-flat/excerpt": ("the loss did not come down over the logged steps (the log starts at step {first:step}, mid-run): "
                                 "it started at {initial:loss}, within ±{tolerance:pct0} of its final level {final:loss}",
                                 "在日志记录的 step 内 loss 没有下降（日志从第 {first:step} 步开始，是训练中途）：起始值 {initial:loss} "
                                 "已在最终水平 {final:loss} 的 ±{tolerance:pct0} 以内"),
    "verdict.exploded.log-ends": ("{ratio:x} the median of the logged values before it; the log ends there, before a value "
                                  "could come back below {factor:g}× that level ({level:loss})",
                                  "为此前记录值中位数的 {ratio:x}；日志到此结束，看不到它是否回落到该水平（{level:loss}）的 "
                                  "{factor:g} 倍以下"),

    # ---- what is normal for the experiment (analysis/history.py, report/sections/history.py)
    "history.title": ("Normal for this experiment", "本实验的正常范围"),
    "history.band": ("The green band: each figure's normal range as of {run} (median ± 3 scaled MAD of the experiment's comparable "
                     "archived runs before it); a ringed run was outside it when it was built.",
                     "绿色带：截至 {run} 各指标的正常范围（此前本实验可比归档训练的中位数 ± 3 倍 MAD）；带圈的训练在生成报告时超出了范围。"),
    "history.tag": ("unusual this week", "本周超出正常范围"),
    "history.none": ("No earlier archived run of this experiment to say what is normal ({n:int} read; a range needs at least "
                     "{least:int} comparable runs, of the last {need:int}).",
                     "本实验没有可用的历史归档训练来界定正常范围（读到 {n:int} 次；正常范围需要最近 {need:int} 次中至少 {least:int} 次可比训练）。"),
    "history.rule": ("Each figure against the median ± max(3 × 1.4826 MAD, a floor) of the experiment's last {n:int} archived runs "
                     "that can be compared on it (runs whose settings differ in one that can move the figure are kept apart); "
                     "at least {need:int} runs; floor {rel:pct0} of the median for times and rates, {share:pct0} for shares, "
                     "1 for counts. Trend: the Theil–Sen slope over those runs, flat while the change it fits stays inside the spread "
                     "around the fit.",
                     "每项指标与本实验最近 {n:int} 次可比归档训练的中位数 ± max(3 × 1.4826 MAD, 下限) 比较（设置中有能影响该指标的项不同的"
                     "训练另行归组）；至少需要 {need:int} 次训练；下限：耗时与吞吐取中位数的 {rel:pct0}，占比取 {share:pct0}，计数取 1。"
                     "走势：这些训练上的 Theil–Sen 斜率，拟合出的变化不超过拟合残差的离散程度即为平稳。"),
    "history.col.figure": ("Figure", "指标"),
    "history.col.run": ("This run", "本次训练"),
    "history.col.range": ("Normal range", "正常范围"),
    "history.col.runs": ("Rests on", "依据的训练"),
    "history.col.trend": ("Trend", "走势"),
    "history.col.verdict": ("Verdict", "结论"),
    "history.range": ("{low} – {high}", "{low} – {high}"),
    "history.median": ("median {median}", "中位数 {median}"),
    "history.runs.all": ("{n:int|run|runs}: {runs}", "{n:int} 次：{runs}"),
    "history.runs.ends": ("{n:int|run|runs}: {first} … {last}", "{n:int} 次：{first} … {last}"),
    "history.apart": ("{n:int|run|runs} kept apart (settings differ: {keys})", "另有 {n:int} 次因设置不同未计入（{keys}）"),
    "history.within": ("within", "在范围内"),
    "history.outside.above": ("unusual: above the range", "超出范围：偏高"),
    "history.outside.below": ("unusual: below the range", "超出范围：偏低"),
    "history.reason.too-few": ("not judged: {n:int|comparable run|comparable runs}, {need:int} needed",
                               "未判断：只有 {n:int} 次可比训练，至少需要 {need:int} 次"),
    "history.reason.no-value": ("not judged: this run has no value", "未判断：本次训练没有该指标"),
    "history.trend.rising": ("rising", "上升"),
    "history.trend.falling": ("falling", "下降"),
    "history.trend.flat": ("flat", "平稳"),
    "history.trend.unknown": ("—", "—"),
    "history.figure.step_time_s": ("step time", "step 耗时"),
    "history.figure.tokens_per_s": ("tokens/s", "tokens/s"),
    "history.figure.samples_per_s": ("samples/s", "samples/s"),
    "history.figure.mfu": ("MFU", "MFU"),
    "history.figure.loss_at_equal_tokens": ("loss at equal tokens", "相同 token 数下的 loss"),
    "history.figure.loss_spikes": ("loss spikes", "loss 尖峰数"),
    "history.figure.comm_share": ("communication share", "通信占比"),
    "history.figure.data_wait_share": ("data wait", "数据等待占比"),
    "history.v.dur": ("{v:dur}", "{v:dur}"),
    "history.v.tps": ("{v:tps}", "{v:tps}"),
    "history.v.sps": ("{v:sps}", "{v:sps}"),
    "history.v.pct": ("{v:pct}", "{v:pct}"),
    "history.v.loss": ("{v:loss}", "{v:loss}"),
    "history.v.int": ("{v:numi}", "{v:numi}"),
    "finding.unusual/above": ("Unusual for this experiment: {figure:@history.figure.} {value} is above its normal range {low} – {high} "
                              "(median {median} of the last {n:int} comparable runs, {first} … {last}; trend over them: "
                              "{trend:@history.trend.}).",
                              "超出本实验的正常范围：{figure:@history.figure.} 为 {value}，高于正常范围 {low} – {high}（最近 {n:int} 次"
                              "可比训练 {first} … {last} 的中位数为 {median}；其间走势：{trend:@history.trend.}）。"),
    "finding.unusual/below": ("Unusual for this experiment: {figure:@history.figure.} {value} is below its normal range {low} – {high} "
                              "(median {median} of the last {n:int} comparable runs, {first} … {last}; trend over them: "
                              "{trend:@history.trend.}).",
                              "超出本实验的正常范围：{figure:@history.figure.} 为 {value}，低于正常范围 {low} – {high}（最近 {n:int} 次"
                              "可比训练 {first} … {last} 的中位数为 {median}；其间走势：{trend:@history.trend.}）。"),
    "error.bad-option/against": ("--against must be one of {choices}, got {given:q}",
                                 "--against 只能是 {choices} 之一，收到的是 {given:q}"),
    "error.bad-option/history-runs": ("--history-runs must be at least 1, got {given}", "--history-runs 至少为 1，收到的是 {given}"),
    # ---- check --baseline (postmortem/checkdiff.py)
    "checkdiff.head": ("Against the baseline {baseline}: {n:int|changed setting|changed settings}, what most often explains a change first",
                       "与基线 {baseline} 相比：{n:int} 项配置变化，最可能解释变化的排在前面"),
    "checkdiff.none": ("no setting the config gives differs from the baseline's", "配置中给出的各项与基线相同"),
    "checkdiff.changed": ("{baseline} → {current}", "{baseline} → {current}"),
    "checkdiff.added": ("{current} (the baseline has none)", "{current}（基线没有该项）"),
    "checkdiff.removed": ("{baseline} in the baseline's config, not set here", "基线配置为 {baseline}，本配置未设置"),
    "checkdiff.moves": ("can move: {can}; cannot move: {cannot}", "可能影响：{can}；不会影响：{cannot}"),
    "checkdiff.environment": ("Versions, devices and environment", "版本、设备与环境"),
    "checkdiff.differs": ("differs", "不同"),
    "checkdiff.same": ("same", "相同"),
    "checkdiff.unknown": ("unknown", "未知"),
    "checkdiff.env-row": ("baseline {baseline} ({where}) · here {current}", "基线 {baseline}（{where}）· 本机 {current}"),
    "checkdiff.env-row/bare": ("baseline {baseline} (not in its files) · here {current}", "基线 {baseline}（其文件中没有）· 本机 {current}"),
}

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
    "method.rate-as-printed": ("the run's own printed rate {printed:q} ({inner}), as printed{per_device:@judgement.per-device.}; "
                               "no computed rate: {why}",
                               "训练自身打印的吞吐 {printed:q}（{inner}），按打印的单位{per_device:@judgement.per-device.}；"
                               "无法计算吞吐：{why}"),
    "judgement.per-device.True": (", per device", "，为单卡数值"),
    "judgement.per-device.False": ("", ""),
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
    "verdict.exploded.log-ends": ("{ratio:x} the median of the logged values before it; the log ends there, before a value "
                                  "could come back below {factor:g}× that level ({level:loss})",
                                  "为此前记录值中位数的 {ratio:x}；日志到此结束，看不到它是否回落到该水平（{level:loss}）的 "
                                  "{factor:g} 倍以下"),
}

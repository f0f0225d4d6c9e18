"""Templates of the findings (analysis/findings.py): ``finding.<kind>[/<variant>]`` and the clauses
they are made of. The triage finding is worded from the triage's own templates (triage.py)."""

from __future__ import annotations

TEMPLATES: dict[str, tuple[str, str]] = {
    "finding.nan_loss": ("{count:int|step|steps} with NaN/Inf loss or grad norm, the first at step {first_step:step}.",
                         "{count:int} 个 step 的 loss 或梯度范数为 NaN/Inf，首次出现在第 {first_step:step} 步。"),
    "finding.loss_spikes": ("{count:int|loss spike|loss spikes}, all recovered fast; the largest at step {largest_step:step}, "
                            "{height_max:rel} over the running median.",
                            "{count:int} 次 loss 尖峰，全部快速恢复；最大一次在第 {largest_step:step} 步，比滚动中位数高 "
                            "{height_max:pct0}。"),
    "finding.loss_spikes/slow": ("{count:int|loss spike|loss spikes}, {not_fast:int} without fast recovery; the largest at step "
                                 "{largest_step:step}, {height_max:rel} over the running median.",
                                 "{count:int} 次 loss 尖峰，其中 {not_fast:int} 次未能快速恢复；最大一次在第 {largest_step:step} 步，"
                                 "比滚动中位数高 {height_max:pct0}。"),
    "finding.grad_norm_spikes": ("{count:int|grad-norm spike|grad-norm spikes}, all recovered fast; the largest at step "
                                 "{largest_step:step}, {height_max:rel} over the running median.",
                                 "{count:int} 次梯度范数尖峰，全部快速恢复；最大一次在第 {largest_step:step} 步，比滚动中位数高 "
                                 "{height_max:pct0}。"),
    "finding.grad_norm_spikes/slow": ("{count:int|grad-norm spike|grad-norm spikes}, {not_fast:int} without fast recovery; the "
                                      "largest at step {largest_step:step}, {height_max:rel} over the running median.",
                                      "{count:int} 次梯度范数尖峰，其中 {not_fast:int} 次未能快速恢复；最大一次在第 "
                                      "{largest_step:step} 步，比滚动中位数高 {height_max:pct0}。"),
    "finding.divergence": ("The loss spike at step {step:step} never recovered: the run diverged.",
                           "第 {step:step} 步的 loss 尖峰没有恢复：训练发散。"),
    "finding.overflows": ("{count:int|step|steps} with a loss-scale overflow (the update was skipped).",
                          "{count:int} 个 step 发生 loss scale 溢出（该 step 未更新参数）。"),
    "finding.not_converged": ("Not converged: {why}.", "未收敛：{why}。"),
    "finding.low_mfu": ("MFU {mfu:pct} is below {threshold:pct0}.", "MFU {mfu:pct} 低于 {threshold:pct0}。"),
    "finding.mfu_unknown": ("MFU unknown: {why}.", "MFU 未知：{why}。"),
    "finding.comm_bound": ("Communication that compute does not hide is {comm_share:pct} of the profiled step time (the "
                           "article's mark is 25%).",
                           "未被计算掩盖的通信占 Profiler step 耗时的 {comm_share:pct}（文中以 25% 为重点关注线）。"),
    "finding.data_stalls": ("{count:int|data-stall step|data-stall steps}: {lost_s:dur} of waiting ({share:pct} of the run's "
                            "step time).", "{count:int} 个数据停顿 step：共多等待 {lost_s:dur}（占全部 step 耗时的 {share:pct}）。"),
    "finding.data_stalls/no_share": ("{count:int|data-stall step|data-stall steps}: {lost_s:dur} of waiting.",
                                     "{count:int} 个数据停顿 step：共多等待 {lost_s:dur}。"),
    "finding.checkpoint_tax": ("Checkpoint saves take {checkpoint_tax:pct} of the wall time (over {threshold:pct0}).",
                               "checkpoint 保存占墙钟时间的 {checkpoint_tax:pct}（超过 {threshold:pct0}）。"),
    "finding.interrupted_checkpoint": ("{count:int|interrupted checkpoint save|interrupted checkpoint saves}: {detail:opt}.",
                                       "{count:int} 次中断的 checkpoint 保存：{detail:opt}。"),
    "finding.interrupted_checkpoint/at_step": ("{count:int|interrupted checkpoint save|interrupted checkpoint saves}, the first "
                                               "at step {first_step:step}: {detail:opt}.",
                                               "{count:int} 次中断的 checkpoint 保存，首次在第 {first_step:step} 步：{detail:opt}。"),
    "finding.restarts": ("{count:int|restart|restarts} (see the data quality section).", "{count:int} 次重启（见数据质量一节）。"),
    "finding.restarts/at_step": ("{count:int|restart|restarts}, the first at step {first_step:step}.",
                                 "{count:int} 次重启，首次在第 {first_step:step} 步。"),
    "finding.log_errors": ("{count:int|error line|error lines} in the logs; the first reads {detail:q}.",
                           "日志中有 {count:int} 行错误；第一行为 {detail:q}。"),
    "finding.log_errors/at_step": ("{count:int|error line|error lines} in the logs, the first at step {first_step:step}: "
                                   "{detail:q}.", "日志中有 {count:int} 行错误，首次在第 {first_step:step} 步：{detail:q}。"),
    "finding.slow_ranks": ("Slow ranks: {ranks:rankranges}.", "慢卡：{ranks:rankranges}。"),
    "finding.config": ("{check:@check.}: {detail}.", "{check:@check.}：{detail}。"),
    "finding.regression": ("{family:@family_} regressed against {baseline}: {changes}.",
                           "{family:@family_}相对基线 {baseline} 退化：{changes}。"),
    "finding.improvement": ("{family:@family_} improved against {baseline}: {changes}.",
                            "{family:@family_}相对基线 {baseline} 提升：{changes}。"),
    "clause.figure-rel": ("{figure:@fig_} {rel:rel}", "{figure:@fig_} {rel:rel}"),
    "clause.figure-change": ("{figure:@fig_} {baseline:numi} → {current:numi}", "{figure:@fig_} {baseline:numi} → {current:numi}"),
    "finding.implausible/mfu_range": ("MFU {value:pctx} is {against:@side.}: {achieved_tflops_per_device:tflops} achieved per "
                                      "device against a peak of {peak_flops:flops}; the MFU is not shown as a result.",
                                      "MFU {value:pctx} {against:@side.}：每卡实际 {achieved_tflops_per_device:tflops}，峰值 "
                                      "{peak_flops:flops}；该 MFU 不可信，不作为结果。"),
    "finding.implausible/mfu_range_bare": ("MFU {value:pctx} is {against:@side.}; the MFU is not shown as a result.",
                                           "MFU {value:pctx} {against:@side.}；该 MFU 不可信，不作为结果。"),
    "side.mfu_max": ("above 100%", "高于 100%"),
    "side.mfu_min": ("below 0.1%", "低于 0.1%"),
    "finding.implausible/step_vs_gap": ("The logged in-step time {value:dur} is under a tenth of the wall-clock gap between step "
                                        "ends, {against_value:dur}: the timer's unit, or the steps between wall times, is wrong.",
                                        "日志中的 step 内耗时 {value:dur} 不到相邻 step 结束时刻墙钟间隔 {against_value:dur} 的十分之一："
                                        "计时单位或两次时间戳之间的 step 数有误。"),
    "finding.implausible/tokens_vs_logged": ("tokens/s {value:tps} contradicts the run's own logged tokens_per_s "
                                             "{against_value:tps} ({ratio:x}): the batch size or the sequence length is wrong.",
                                             "tokens/s {value:tps} 与训练自身日志中的 tokens_per_s {against_value:tps} 相差 {ratio:x}："
                                             "batch size 或序列长度有误。"),
}

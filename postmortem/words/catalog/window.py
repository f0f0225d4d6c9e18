"""Templates of issue 22's judgement on sparse and short runs: the window's caveats (analysis/window.py),
explosions and sparse spikes (analysis/stability.py), too few loss values (analysis/convergence.py),
a timer longer than its step (analysis/plausibility.py), and their verdict lines (report/verdict.py).
Kept apart so the areas' own modules stay as they were."""

from __future__ import annotations

TEMPLATES: dict[str, tuple[str, str]] = {
    # the window: a figure resting on few or marked steps says so
    "caveat.few-steps": ("rests on {n:int|logged step|logged steps} only ({steps:step}; fewer than {need:int}): a rough "
                         "figure",
                         "仅基于 {n:int} 个记录的 step（{steps:step}；少于 {need:int} 个）：只能粗略参考"),
    "caveat.marked-steps": ("no step is free of marks: rests on {n:int|logged step|logged steps} ({steps:step}{more:opt}) "
                            "that hold {marks:semi}; the figure includes that time",
                            "没有不带标记的 step：基于 {n:int} 个记录的 step（{steps:step}{more:opt}），其中 {marks:semi}；"
                            "该数值包含这部分耗时"),
    "caveat.more": (", … {n:int} more", "，…另 {n:int} 个"),
    "mark.compile": ("the compile ({n:int|step|steps})", "{n:int} 个含编译"),
    "mark.missing": ("no time ({n:int|step|steps})", "{n:int} 个无耗时"),
    "mark.checkpoint": ("a checkpoint save ({n:int|step|steps})", "{n:int} 个含 checkpoint 保存"),
    "mark.eval": ("an evaluation ({n:int|step|steps})", "{n:int} 个含评估"),
    "mark.pause": ("a pause ({n:int|step|steps})", "{n:int} 个含停顿"),
    "mark.resume": ("a resume's warm-up ({n:int|step|steps})", "{n:int} 个处于续训预热"),
    "mark.warmup": ("the warm-up ({n:int|step|steps})", "{n:int} 个处于预热"),
    "mark.data_stall": ("a data stall ({n:int|step|steps})", "{n:int} 个含数据停顿"),
    "mark.outlier": ("a slow outlier ({n:int|step|steps})", "{n:int} 个为慢速离群 step"),
    "finding.overflows/applied": ("{count:int|step|steps} with a loss-scale overflow; the update was applied anyway "
                                  "(overflow_still_update): the steps stay in the time window.",
                                  "{count:int} 个 step 发生 loss scale 溢出，但仍更新了参数（overflow_still_update）：这些 step "
                                  "保留在稳态窗口内。"),
    "reason.no-timed-step": ("no step has a step time", "没有任何 step 带耗时"),
    # a gap that comes out negative is a finding about the timer, never a share
    "reason.negative-gap": ("the in-step timer is longer than the wall-clock step ({share:pct} of the step over "
                            "{n:int|step|steps}): not a share",
                            "step 内计时比端到端 step 耗时还长（{n:int} 个 step 上为 step 耗时的 {share:pct}）：不能作为占比"),
    "rule.timer-vs-wall": ("an in-step timer longer than the wall-clock step by more than {share:pct0} of it",
                           "step 内计时比端到端 step 耗时长出 {share:pct0} 以上"),
    "finding.implausible/timer_vs_wall": (
        "The in-step timer ({value:dur}) is longer than the wall-clock step ({against_value:dur}): it is not the step's own "
        "timer (another interval or unit); the gap between them is no share and no evidence of a bottleneck.",
        "step 内计时（{value:dur}）比端到端 step 耗时（{against_value:dur}）还长：它不是该 step 自身的计时（计的是别的区间"
        "或单位）；两者之差既不是占比，也不能作为瓶颈依据。"),
    "reason.save-times-exceed": ("the save times ({saves:dur}) exceed the run's time ({total:dur})",
                                 "保存耗时（{saves:dur}）超过了训练总耗时（{total:dur}）"),
    "reason.save-in-compile": ("the save fell in the compile step: its time cannot be told apart",
                               "保存落在编译 step 内：无法单独算出保存耗时"),
    # convergence on too few values
    "reason.too-few-loss": ("too few loss values ({n:int}) to judge (at least {need:int} are needed)",
                            "loss 值只有 {n:int} 个，太少，无法判断（至少需要 {need:int} 个）"),
    "reason.only-skipped-loss": ("every logged loss is of a skipped-data step ({n:int|step|steps}): left out of the loss "
                                 "figures", "记录的 loss 全部来自跳过数据的 step（{n:int} 个）：不计入 loss 相关指标"),
    "reason.not-judged": ("convergence not judged", "未判断收敛"),
    "finding.not_converged/too_few": ("Convergence not judged: {why}.", "收敛情况未判断：{why}。"),
    # sparse spikes and explosions
    "rule.spikes-sparse": ("a sparse log: each value against the median of up to {neighbours:int} logged values on each side "
                           "(itself left out; scale max(1.4826 MAD, {floor:pct0} of that median)); a spike when z > {z:g} and "
                           "above the median; recovery counted in logged values (fast: back at the next one); the first "
                           "{before:int} values (no history before them) and logs of fewer than {need:int} values are not judged",
                           "稀疏日志：每个值与其前后各至多 {neighbours:int} 个记录值（不含自身）的中位数比较（尺度取 max(1.4826 MAD, "
                           "该中位数的 {floor:pct0})）；z > {z:g} 且高于中位数即为尖峰；恢复按记录值个数计（快速：下一个记录值即回落）；"
                           "日志开头的 {before:int} 个值（此前没有历史）以及少于 {need:int} 个值的日志不判断"),
    "tag.loss": ("loss", "loss"),
    "tag.grad_norm": ("grad norm", "梯度范数"),
    "finding.explosion": ("The {tag:@tag.} exploded at step {step:step}: {before:loss} → {value:loss} ({ratio:x} the median of "
                          "the logged values before it); it never came back below {factor:g}× that level.",
                          "第 {step:step} 步 {tag:@tag.} 爆炸：{before:loss} → {value:loss}（为此前记录值中位数的 {ratio:x}）；"
                          "之后再没有回落到该水平的 {factor:g} 倍以下。"),
    "finding.explosion/recovered": ("The {tag:@tag.} exploded at step {step:step}: {before:loss} → {value:loss} ({ratio:x} the "
                                    "median of the logged values before it); back below {factor:g}× that level at step "
                                    "{recovered_step:step}, {recovery_values:int|logged value|logged values} later "
                                    "({gap_steps:int} steps).",
                                    "第 {step:step} 步 {tag:@tag.} 爆炸：{before:loss} → {value:loss}（为此前记录值中位数的 "
                                    "{ratio:x}）；{recovery_values:int} 个记录值之后（相隔 {gap_steps:int} 个 step），在第 "
                                    "{recovered_step:step} 步回落到该水平的 {factor:g} 倍以下。"),
    "finding.explosion/nonfinite": ("The {tag:@tag.} turned NaN/Inf at step {step:step} (the last finite value before it: "
                                    "{before:loss}).",
                                    "第 {step:step} 步 {tag:@tag.} 变为 NaN/Inf（此前最后一个有限值：{before:loss}）。"),
    # the verdict
    "verdict.title.exploded": ("{tag:@tag.} exploded at step {step:step}: {before:loss} → {value:loss}",
                               "第 {step:step} 步 {tag:@tag.} 爆炸：{before:loss} → {value:loss}"),
    "verdict.title.exploded/nonfinite": ("{tag:@tag.} turned NaN/Inf at step {step:step} (last finite value {before:loss})",
                                         "第 {step:step} 步 {tag:@tag.} 变为 NaN/Inf（此前最后一个有限值 {before:loss}）"),
    "verdict.exploded.never": ("{ratio:x} the median of the logged values before it, and it never came back below "
                               "{factor:g}× that level ({level:loss})",
                               "为此前记录值中位数的 {ratio:x}，且再没有回落到该水平（{level:loss}）的 {factor:g} 倍以下"),
    "verdict.exploded.back": ("{ratio:x} the median of the logged values before it; back below {factor:g}× that level at step "
                              "{step:step}, {n:int|logged value|logged values} later ({gap:int} steps)",
                              "为此前记录值中位数的 {ratio:x}；{n:int} 个记录值之后（相隔 {gap:int} 个 step），在第 {step:step} "
                              "步回落到该水平的 {factor:g} 倍以下"),
    "verdict.exploded.more": ("{n:int|explosion|explosions} in all", "共 {n:int} 次爆炸"),
    "verdict.same-step-sample": ("the baseline {baseline} is unstable at the same step, with the same seed, data order and "
                                 "global batch: most likely a fixed bad sample at a fixed step (§5.2), unless something else "
                                 "is tied to that step (the lr schedule) — look at that step's batch first",
                                 "基线 {baseline} 在同一个 step 也出现异常，且随机种子、数据顺序与全局 batch 均未改变：多半是固定的坏"
                                 "样本在固定的 step 触发（§5.2），除非该 step 还对应别的固定变化（如学习率调度）；先查这个 step 的数据"),
    "action.check_optimizer_state": ("Check the optimizer state: the moments a resume loaded, eps and the betas in FP16, a "
                                     "parallel optimizer's uneven split.",
                                     "检查优化器状态：续训时加载的动量等状态、FP16 下的 eps 与 beta、并行优化器切分是否均衡。"),
}

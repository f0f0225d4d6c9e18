"""Templates of the analysis' texts: how each figure was obtained (``method.*``), why it is missing
(``reason.*``), where its inputs came from (``source.*``), the rules (``rule.*``) and the
configuration checks (``check.*``)."""

from __future__ import annotations

TEMPLATES: dict[str, tuple[str, str]] = {
    # where inputs came from
    "source.options": ("options", "命令行/配置选项"),
    "source.setting": ("setting {key} ({origin:src})", "配置项 {key}（{origin:src}）"),
    "source.list": ("{items:semi}", "{items:semi}"),
    "source.scalars": ("logged {tag}", "日志记录的 {tag}"),
    "source.step-times": ("the steps' {timing:@timing.} step times", "各 step 的{timing:@timing.}耗时"),
    "source.in-step-timer": ("the callback's in-step timer", "回调的 step 内计时"),
    "source.checkpoint": ("checkpoint {path} (model parameters)", "checkpoint {path}（模型参数）"),
    "source.architecture": ("the model's shape (num_layers, hidden_size, vocab_size)", "模型结构（num_layers、hidden_size、vocab_size）"),
    "source.ranks": ("the ranks that left files", "留下文件的卡"),
    "source.peak-table": ("{device} {precision} dense {tflops:g} TFLOPS: {citation}", "{device} {precision} 稠密峰值 {tflops:g} TFLOPS：{citation}"),
    "timing.e2e": ("e2e", "端到端"),
    "timing.timer": ("callback timer", "回调计时"),
    "timing.logged": ("logged", "日志记录的"),
    "timing.none": ("no", "无"),
    "timer.e2e": ("the e2e step time", "端到端 step 耗时"),
    "timer.in-step": ("the in-step timer", "step 内计时"),
    # throughput (analysis/throughput.py)
    "method.given": ("given", "直接给定"),
    "method.setting": ("setting {key}", "配置项 {key}"),
    "method.batch-product": ("{factors:prod}", "{factors:prod}"),
    "method.batch-product-assumed": ("{factors:prod} (assumed 1: {assumed})", "{factors:prod}（按 1 计：{assumed}）"),
    "method.logged-median-window": ("median of {n:int} logged values in the steady window", "稳态区间内 {n:int} 个日志值的中位数"),
    "method.logged-median-steady": ("median of {n:int} logged values at the steady steps", "稳态 step 上 {n:int} 个日志值的中位数"),
    "method.logged-per-step": ("median of logged {tag} × {timer} over {n:int} steady steps (spread {spread:pct})",
                               "{n:int} 个稳态 step 上日志 {tag} × {timer}的中位数（离散度 {spread:pct}）"),
    "method.per-seq-length": ("({inner}) / seq_length", "（{inner}）/ seq_length"),
    "method.implied-no-batch": ("{inner}; no batch size in the options or settings", "{inner}；选项和配置中都没有 batch size"),
    "method.implied-lineage-contradicted": ("{inner}; lineage's batch size {batch:g} is contradicted",
                                            "{inner}；与 lineage 中的 batch size {batch:g} 矛盾"),
    "method.gbs-x-seq": ("global_batch_size × seq_length", "global_batch_size × seq_length"),
    "method.with-why": ("{inner} ({why})", "{inner}（{why}）"),
    "method.step-time-timer": ("median of the callback's own timer over the steady window: no wall-clock gap between step "
                               "ends was found, so the time between steps (data loading, host work) is not counted",
                               "稳态区间内回调自身计时的中位数：没有找到相邻 step 结束时刻的墙钟间隔，因此 step 之间的时间"
                               "（数据加载、host 侧开销）未计入"),
    "method.step-time-logged": ("median logged step time over the steady window", "稳态区间内日志记录的 step 耗时中位数"),
    "method.step-time-e2e": ("median e2e step time (the wall-clock gap between step ends) over the steady window",
                             "稳态区间内端到端 step 耗时（相邻 step 结束时刻的墙钟间隔）的中位数"),
    "method.inverse-step-time": ("1 / median step time", "1 / step 耗时中位数"),
    "method.in-step-median": ("median of the callback's in-step timer over the steady window", "稳态区间内回调 step 内计时的中位数"),
    "method.gap-share": ("sum of (e2e − in-step) / sum of e2e over {n:int} steady steps",
                         "{n:int} 个稳态 step 上（端到端 − step 内）之和 / 端到端之和"),
    "method.samples-rate": ("samples per step / median step time", "每 step 样本数 / step 耗时中位数"),
    "method.tokens-rate": ("tokens per step / median step time", "每 step token 数 / step 耗时中位数"),
    "reason.no-batch-size": ("no global_batch_size, batch_size or micro_batch_size in the options or settings",
                             "选项和配置中都没有 global_batch_size、batch_size 或 micro_batch_size"),
    "reason.no-setting": ("no {key} in the options or settings", "选项和配置中没有 {key}"),
    "reason.batch-unknown": ("the global batch size is unknown", "全局 batch size 未知"),
    "reason.unknown": ("unknown", "未知"),
    "reason.no-usable-step-time": ("no usable step time in the steady window", "稳态区间内没有可用的 step 耗时"),
    "reason.timer-only": ("the callback's timer is the only step time", "只有回调自身的计时"),
    "reason.no-in-step-timer": ("no in-step timer was logged beside the e2e step time", "端到端 step 耗时之外没有记录 step 内计时"),
    "reason.no-step-time": ("no step time", "没有 step 耗时"),
    "reason.samples-unknown": ("the samples per step are unknown", "每 step 样本数未知"),
    "reason.tokens-unknown": ("the tokens per step are unknown", "每 step token 数未知"),
}

TEMPLATES.update({
    # MFU (analysis/mfu.py, peaks.py)
    "method.params-palm": ("model parameters in the checkpoint, without position embeddings (PaLM); token embeddings counted",
                           "checkpoint 中的模型参数，不含位置 embedding（PaLM 的口径）；含词表 embedding"),
    "method.params-total": ("all model parameters in the checkpoint", "checkpoint 中全部模型参数"),
    "method.params-non-embedding": ("without the token and position embedding tables (by parameter name)",
                                    "不含词表与位置 embedding（按参数名判断）"),
    "method.params-embedding": ("parameters named like a token embedding", "名称像词表 embedding 的参数"),
    "method.params-position": ("parameters named like a position embedding", "名称像位置 embedding 的参数"),
    "method.params-estimate": ("estimate 12·L·h² + V·h (no checkpoint parameters)", "估算 12·L·h² + V·h（没有 checkpoint 参数）"),
    "method.params-estimate-no-vocab": ("estimate 12·L·h² (no checkpoint parameters; vocab_size unknown: token embeddings left "
                                        "out)", "估算 12·L·h²（没有 checkpoint 参数；vocab_size 未知，未计词表 embedding）"),
    "method.params-estimate-body": ("estimate 12·L·h²", "估算 12·L·h²"),
    "method.params-estimate-embedding": ("estimate V·h", "估算 V·h"),
    "method.devices-from-ranks": ("the number of ranks that left files (may undercount)", "留下文件的卡数（可能偏少）"),
    "method.flops-6n": ("6·N (the attention term left out: num_layers, hidden_size or seq_length unknown)",
                        "6·N（未计注意力项：num_layers、hidden_size 或 seq_length 未知）"),
    "method.flops-palm": ("6·N + 12·L·H·Q·T (PaLM, full attention)", "6·N + 12·L·H·Q·T（PaLM，完整注意力）"),
    "method.flops-causal": ("6·N + 6·L·H·Q·T (causal attention counted as half)", "6·N + 6·L·H·Q·T（因果注意力按一半计）"),
    "method.peak-table": ("dense peak table", "稠密峰值算力表"),
    "method.mfu-formula": ("flops_per_token × tokens/s / (peak × devices)", "每 token FLOPs × tokens/s /（峰值 × 卡数）"),
    "method.mfu": ("({flops}) × steady tokens/s / (peak × devices)", "（{flops}）× 稳态 tokens/s /（峰值 × 卡数）"),
    "method.achieved": ("flops_per_token × tokens/s / devices", "每 token FLOPs × tokens/s / 卡数"),
    "method.percent": ("{inner}, percent / 100", "{inner}，百分数 / 100"),
    "reason.no-params": ("no checkpoint parameters, and num_layers / hidden_size unknown",
                         "没有 checkpoint 参数，num_layers / hidden_size 也未知"),
    "reason.estimate-no-position": ("the estimate assumes no learned position embeddings", "估算假定没有可学习的位置 embedding"),
    "reason.no-devices": ("device count unknown: no option, no device_num setting, no ranks", "卡数未知：没有选项、device_num 配置或卡号"),
    "reason.no-peak": ("{why}; pass --peak-tflops or --device (see the peak table)",
                       "{why}；请传入 --peak-tflops 或 --device（见峰值算力表）"),
    "reason.device-not-in-table": ("device {device:q} is not in the peak table", "设备 {device:q} 不在峰值算力表中"),
    "reason.device-unknown": ("the device is unknown", "设备未知"),
    "reason.precision-not-in-table": ("{device} has no {precision} figure in the peak table", "峰值算力表中 {device} 没有 {precision} 的数值"),
    "peak-source.huawei-910": ("Huawei Ascend 910 product brief (256 TFLOPS FP16; no BF16)",
                               "华为 Ascend 910 产品简介（FP16 256 TFLOPS；不支持 BF16）"),
    "peak-source.huawei-910b": ("the widely cited Huawei figure (no public per-SKU datasheet)", "广为引用的华为数值（没有公开的分型号规格书）"),
    "peak-source.nvidia-a100": ("NVIDIA A100 Tensor Core GPU datasheet (dense)", "NVIDIA A100 Tensor Core GPU 规格书（稠密）"),
    "peak-source.nvidia-h100": ("NVIDIA H100 Tensor Core GPU datasheet (dense = half the sparsity figure)",
                                "NVIDIA H100 Tensor Core GPU 规格书（稠密 = 稀疏数值的一半）"),
    "peak-source.nvidia-h800": ("NVIDIA H800 datasheet (the same compute as H100 SXM, dense)", "NVIDIA H800 规格书（算力同 H100 SXM，稠密）"),
    "peak-source.nvidia-h200": ("NVIDIA H200 Tensor Core GPU datasheet (dense = half the sparsity figure)",
                                "NVIDIA H200 Tensor Core GPU 规格书（稠密 = 稀疏数值的一半）"),
    "peak-source.nvidia-l40s": ("NVIDIA L40S datasheet (dense = half the sparsity figure)", "NVIDIA L40S 规格书（稠密 = 稀疏数值的一半）"),
    "peak-source.nvidia-v100": ("NVIDIA V100 Tensor Core GPU datasheet", "NVIDIA V100 Tensor Core GPU 规格书"),
})

TEMPLATES.update({
    # convergence (analysis/convergence.py)
    "method.step-x-tokens": ("step × tokens per step", "step × 每 step token 数"),
    "method.elapsed": ("wall time elapsed since the first step", "自第一个 step 起的墙钟时间"),
    "method.first-below-target": ("the first step whose smoothed loss is at or below the target",
                                  "平滑 loss 首次不高于目标值的 step"),
    "method.smoothing": ("trailing mean of the loss values logged in the last {window:int} steps (by step, not by count of "
                         "values); {spikes:int} spike steps and {nonfinite:int} NaN/Inf steps left out",
                         "最近 {window:int} 个 step 内记录的 loss 的滑动平均（按 step 数，而非记录条数）；剔除 {spikes:int} 个"
                         "尖峰 step 和 {nonfinite:int} 个 NaN/Inf step"),
    "rule.convergence": ("converged when the loss came down (its median over the first {window:int} steps lies outside "
                         "±{tolerance:pct0} of the final level) and the smoothed loss stays within ±{tolerance:pct0} of the "
                         "final level through at least the last {tail:pct0} of steps; the step is where it enters the band "
                         "for good",
                         "判定收敛：loss 确实下降了（前 {window:int} 个 step 的中位数在最终水平 ±{tolerance:pct0} 之外），且平滑"
                         " loss 至少在最后 {tail:pct0} 的 step 中保持在最终水平 ±{tolerance:pct0} 以内；收敛 step 是它最终进入"
                         "该区间的 step"),
    "method.last-eval": ("the last finite eval_loss (step {step:step})", "最后一个有限的 eval_loss（第 {step:step} 步）"),
    "method.first-loss": ("the first finite loss", "第一个有限的 loss"),
    "method.min-smoothed": ("the minimum of the smoothed loss", "平滑 loss 的最小值"),
    "method.final-level": ("resistant line (Tukey) through the {n:int} finite, non-spike loss values of the last {tail:pct0} "
                           "of steps ({start:step}–{last:step}), read at step {last:step}",
                           "对最后 {tail:pct0} 的 step（第 {start:step}–{last:step} 步）中 {n:int} 个有限、非尖峰的 loss 拟合"
                           " Tukey 抗差直线，取第 {last:step} 步的值"),
    "method.final-se": ("{k:g} × scaled MAD of the line's residuals / √{n:int}", "{k:g} × 拟合残差的标准化 MAD / √{n:int}"),
    "reason.no-times": ("no step times or wall times", "没有 step 耗时或墙钟时间"),
    "reason.before-first-timed": ("the step is before the first timed step", "该 step 早于第一个有耗时的 step"),
    "reason.no-target-options": ("no target loss given (--target-loss)", "未给出目标 loss（--target-loss）"),
    "reason.no-target-baseline": ("no baseline final loss to aim at", "没有基线的最终 loss 可作为目标"),
    "reason.target-not-reached": ("the smoothed loss never reached {target:g}", "平滑 loss 始终没有达到 {target:g}"),
    "reason.not-logged": ("no {tag} logged", "日志中没有 {tag}"),
    "reason.no-finite-loss": ("no finite loss logged", "日志中没有有限的 loss"),
    "reason.no-tail-loss": ("no finite, non-spike loss in the last {tail:pct0} of steps ({start:step}–{last:step})",
                            "最后 {tail:pct0} 的 step（第 {start:step}–{last:step} 步）中没有有限、非尖峰的 loss"),
    "reason.few-tail-values": ("only {n:int} loss values in the last {tail:pct0} of steps (a noise estimate needs {need:int})",
                               "最后 {tail:pct0} 的 step 中只有 {n:int} 个 loss 值（估计噪声至少需要 {need:int} 个）"),
    "reason.loss-rose": ("the loss never came down: it rose from {initial:loss} to {final:loss}",
                         "loss 没有下降：从 {initial:loss} 升到了 {final:loss}"),
    "reason.loss-flat": ("the loss never came down: it started at {initial:loss}, within ±{tolerance:pct0} of its final level "
                         "{final:loss}", "loss 没有下降：起始值 {initial:loss} 已在最终水平 {final:loss} 的 ±{tolerance:pct0} 以内"),
    "reason.loss-settled-late": ("the loss was still moving at the end: the smoothed loss stays within ±{tolerance:pct0} of the "
                                 "final level {final:loss} only from step {step:step}, inside the last {tail:pct0} of steps",
                                 "loss 到最后仍在变化：平滑 loss 直到第 {step:step} 步（已在最后 {tail:pct0} 的 step 中）才稳定在"
                                 "最终水平 {final:loss} 的 ±{tolerance:pct0} 以内"),
    "reason.loss-still-moving": ("the loss was still moving at the end: the smoothed loss is {smoothed:loss} at the last step, "
                                 "outside ±{tolerance:pct0} of the final level {final:loss}",
                                 "loss 到最后仍在变化：最后一个 step 的平滑 loss 为 {smoothed:loss}，在最终水平 {final:loss} 的 "
                                 "±{tolerance:pct0} 之外"),
    "reason.not-converged": ("not converged", "未收敛"),
})

TEMPLATES.update({
    # stability (analysis/stability.py)
    "rule.spikes": ("causal rolling median + scaled MAD over the previous {window:int} finite values (≥ {history:int}); a spike "
                    "when z > {z:g} and above the median; consecutive spikes merge; height = (peak − median) / |median|; "
                    "recovery fast ≤ {fast:int} steps after the spike",
                    "因果滚动中位数 + 标准化 MAD，取之前 {window:int} 个有限值（≥ {history:int}）；z > {z:g} 且高于中位数即为尖峰；"
                    "相邻尖峰合并；高度 =（峰值 − 中位数）/ |中位数|；尖峰后 ≤ {fast:int} 个 step 内回落为快速恢复"),
    "reason.few-values": ("only {n:int} finite values (more than {need:int} are needed)", "只有 {n:int} 个有限值（需要多于 {need:int} 个）"),
    "reason.no-loss-spikes": ("no loss spikes", "没有 loss 尖峰"),
    "method.grad-leads": ("the share of loss spikes with a grad-norm spike 0–{window:int} steps before or at them",
                          "loss 尖峰中，在其之前 0–{window:int} 个 step 内出现梯度范数尖峰的比例"),
})

TEMPLATES.update({
    # phases and checkpoints (analysis/phases.py)
    "rule.phases": ("startup = the leading compile steps; warmup = until lr first reaches its peak ({rtol:g} relative); main = "
                    "while lr stays at the peak; decay = from the first step after that with lr below the peak",
                    "启动 = 开头的编译 step；预热 = 直到学习率首次达到峰值（相对误差 {rtol:g}）；主训练 = 学习率保持在峰值期间；"
                    "衰减 = 此后学习率低于峰值的第一个 step 起"),
    "rule.phases-no-lr": ("no lr logged: one main phase", "日志中没有学习率：只有一个主训练阶段"),
    "method.save-event": ("the save event's duration", "保存事件的持续时间"),
    "reason.save-timer-only": ("the step times are the callback's own timer, which leaves the save out, and no wall-clock gap "
                               "between steps was found",
                               "step 耗时是回调自身的计时，不含保存时间，且没有找到 step 之间的墙钟间隔"),
    "method.save-step": ("the {timing} step time of step {step:step} minus the median step time",
                         "第 {step:step} 步的{timing} step 耗时减去 step 耗时中位数"),
    "method.save-spilled": ("the {timing} step times of steps {step:step} and {next:step} (the save spilled into the next step) "
                            "minus the median",
                            "第 {step:step} 和 {next:step} 步的{timing} step 耗时（保存延续到了下一个 step）减去中位数"),
    "reason.save-unknown": ("no duration and no step time at the save step", "没有保存时长，保存所在 step 也没有耗时"),
    "method.wall-span": ("the wall span of the step ends plus the first step", "step 结束时刻的墙钟跨度加上第一个 step"),
    "method.sum-step-times": ("the sum of the step times", "step 耗时之和"),
    "reason.no-saves": ("no checkpoint saves found", "没有找到 checkpoint 保存"),
    "reason.save-times-unknown": ("the save times are unknown", "保存耗时未知"),
    "method.checkpoint-tax": ("sum of {n:int} save times / total wall time ({total})", "{n:int} 次保存耗时之和 / 总墙钟时间（{total}）"),
})

TEMPLATES.update({
    # the steady window (analysis/window.py): why a step is left out
    "rule.exclude.missing": ("no finite e2e step time for the step", "该 step 没有有限的端到端耗时"),
    "rule.exclude.compile": ("the first step of each launch (where the log starts at the training's first step, a resumed "
                             "launch, or that step is slow), and steps with a compile event",
                             "每次启动的第一个 step（日志从训练的第一步开始、续训启动，或该 step 明显偏慢时），以及有编译事件的 step"),
    "rule.exclude.nan": ("loss or grad norm NaN/Inf at the step", "该 step 的 loss 或梯度范数为 NaN/Inf"),
    "rule.exclude.overflow": ("a loss-scale overflow (update skipped): an overflow event or overflow scalar > 0",
                              "loss scale 溢出（跳过更新）：有溢出事件或 overflow 标量 > 0"),
    "rule.exclude.skip": ("a step whose update was skipped on purpose (a skip event)", "有意跳过更新的 step（跳过事件）"),
    "rule.exclude.checkpoint": ("a step with a checkpoint save (event or train checkpoint); the next step too if its step time "
                                "is above median + tolerance (the save spilled over)",
                                "有 checkpoint 保存的 step（保存事件或训练 checkpoint）；若下一个 step 耗时高于中位数 + 容差"
                                "（保存延续到了下一步），也一并排除"),
    "rule.exclude.eval": ("a step with an eval event; the next step too if it is above median + tolerance",
                          "有评估事件的 step；若下一个 step 高于中位数 + 容差，也一并排除"),
    "rule.exclude.pause": ("a step with a pause event; the next step too if it is above median + tolerance",
                           "有暂停事件的 step；若下一个 step 高于中位数 + 容差，也一并排除"),
    "rule.exclude.resume": ("a restart event's step, and after a restart the steps before the first run of {run:int} "
                            "consecutive steps within median ± tolerance",
                            "重启事件所在的 step，以及重启后第一次连续 {run:int} 个 step 落在中位数 ± 容差内之前的 step"),
    "rule.exclude.warmup": ("first launch: the steps before the first run of {run:int} consecutive steps within median ± "
                            "tolerance (tolerance = max(3 × scaled MAD, 5% of the median))",
                            "首次启动：第一次连续 {run:int} 个 step 落在中位数 ± 容差内之前的 step（容差 = max(3 × 标准化 MAD，"
                            "中位数的 5%)）"),
    "rule.exclude.data_stall": ("the gap between steps (e2e − in-step timer) or the logged data time above its median by more "
                                "than max({k:g} × scaled MAD, {floor:pct0} of the median step time)",
                                "step 间隙（端到端 − step 内计时）或日志记录的数据时间比其中位数高出 max({k:g} × 标准化 MAD，"
                                "step 耗时中位数的 {floor:pct0}) 以上"),
    "rule.exclude.outlier": ("the remaining steps slower than median + max({k:g} × scaled MAD, 10% of the median) (slow side "
                             "only; fast steps are kept)",
                             "其余比中位数 + max({k:g} × 标准化 MAD，中位数的 10%) 更慢的 step（只看慢的一侧，快的 step 保留）"),
    "reason.no-step-data": ("no step time data", "没有 step 耗时数据"),
    "reason.all-excluded": ("every step was excluded", "所有 step 都被排除"),
})

TEMPLATES.update({
    # ranks and plausibility
    "rule.slow-ranks": ("a rank is slow when its median e2e step time (steady-window steps) exceeds the median of the "
                        "reference ranks by more than max({threshold:pct0}, {k:g} × their scaled MAD); the reference is "
                        "the fast mode: the ranks below the widest gap between the sorted rank medians when that gap is "
                        "wider than {threshold:pct0} and than {k:g} MADs of the faster side, else all other ranks; no rank is "
                        "flagged while (max − min) / mean of the rank medians is at most {spread:pct0} (msprof-analyze's "
                        "imbalance rule)",
                        "某张卡的端到端 step 耗时中位数（稳态区间）比参照卡的中位数高出 max({threshold:pct0}，{k:g} × 其标准化 "
                        "MAD) 以上即为慢卡；参照卡取快的一组：把各卡中位数排序后，若最大间隔超过 {threshold:pct0} 且超过快侧 "
                        "{k:g} 倍 MAD，取间隔以下的卡，否则取其余所有卡；各卡中位数的（最大 − 最小）/ 均值不超过 {spread:pct0} "
                        "时不标记慢卡（msprof-analyze 的不均衡判据）"),
    "reason.one-rank": ("fewer than two ranks logged step times", "记录了 step 耗时的卡少于两张"),
    "rule.mfu-range": ("MFU must lie between {low:pct} and {high:pct0}: check the peak, the parameter count, the device count "
                       "and the tokens per step",
                       "MFU 必须在 {low:pct} 到 {high:pct0} 之间：请检查峰值算力、参数量、卡数和每 step token 数"),
    "rule.step-vs-gap": ("a logged step shorter than {share:g} of the wall-clock gap between step ends: the timer's unit, or "
                         "the steps between two wall times, is wrong",
                         "日志记录的 step 耗时不到相邻 step 结束时刻墙钟间隔的 {share:g}：计时单位或两次时间戳之间的 step 数有误"),
    "rule.tokens-vs-logged": ("tokens/s may differ from the run's own logged tokens/s by at most {tolerance:pct0}, unless both "
                              "agree on the tokens of a step (then only the timers differ)",
                              "tokens/s 与训练自身日志的 tokens/s 最多相差 {tolerance:pct0}，除非两者的每 step token 数一致"
                              "（那时只是计时方式不同）"),
    "against.mfu_max": ("100%", "100%"),
    "against.mfu_min": ("0.1%", "0.1%"),
    "against.wall_gap": ("the wall-clock gap", "墙钟间隔"),
    "against.logged_tokens_per_s": ("the logged tokens_per_s", "日志记录的 tokens_per_s"),
})

TEMPLATES.update({
    # the comparison (analysis/compare.py): how significance was decided
    "method.bootstrap": ("the bootstrap 95% CI of the median difference [{low:dur}, {high:dur}] excludes 0 and |relative change| "
                         "≥ {rel:pct0}", "中位数差的 bootstrap 95% 置信区间 [{low:dur}, {high:dur}] 不含 0，且 |相对变化| ≥ {rel:pct0}"),
    "method.step-time-test": ("the step-time test: {test}", "按 step 耗时检验：{test}"),
    "method.loss-noise": ("|change| > 2 × the baseline's noise of a smoothed point ({limit:num4})",
                          "|变化| > 2 × 基线平滑 loss 单点噪声（{limit:num4}）"),
    "method.final-noise": ("|change| > 2 × √(se_baseline² + se_current²) of the final levels ({limit:num4})",
                           "|变化| > 2 × √(基线标准误² + 本次标准误²)（{limit:num4}）"),
    "method.tax-change": ("|change| > {limit:pct0} points", "|变化| > {limit:pct0} 个百分点"),
    "method.convergence-step-change": ("|change| > max({window:int} steps, {share:pct0} of the baseline's step)",
                                       "|变化| > max({window:int} 个 step，基线收敛 step 的 {share:pct0})"),
    "method.any-change": ("any change", "任何变化"),
    "reason.no-steady-times": ("no steady step times in one of the runs", "其中一个任务没有稳态 step 耗时"),
    "reason.loss-noise-unknown": ("the baseline's loss noise is unknown", "基线的 loss 噪声未知"),
    "reason.final-se-unknown-both": ("the standard error of the final level is unknown in both runs", "两个任务最终水平的标准误都未知"),
    "reason.final-se-unknown-baseline": ("the standard error of the final level is unknown in the baseline", "基线最终水平的标准误未知"),
    "reason.final-se-unknown-current": ("the standard error of the final level is unknown in the current run", "本次任务最终水平的标准误未知"),
    "reason.missing-in-both": ("missing in both runs", "两个任务都没有"),
    "reason.missing-in-baseline": ("missing in the baseline", "基线中没有"),
    "reason.missing-in-current": ("missing in the current run", "本次任务中没有"),
    "reason.implausible-in-both": ("implausible in both runs", "两个任务中都不可信"),
    "reason.implausible-in-baseline": ("implausible in the baseline", "基线中不可信"),
    "reason.implausible-in-current": ("implausible in the current run", "本次任务中不可信"),
})

TEMPLATES["reason.not-computed"] = ("not computed", "未计算")

TEMPLATES.update({
    # how the two runs were lined up (analysis/types.py Alignment)
    "align.steady window": ("steady window", "稳态区间"),
    "align.whole run": ("whole run", "全程"),
    "align.by step": ("by step", "按 step 对齐"),
    "align.by tokens": ("by tokens", "按 token 数对齐"),
    "align.by-tokens": ("by tokens (tokens per step unknown)", "按 token 数对齐（每 step token 数未知）"),
    "align.by-tokens-at": ("by tokens (at {tokens:int} tokens)", "按 token 数对齐（{tokens:int} token 处）"),
    "align.each run's last 10%": ("each run's last 10%", "各自最后 10%"),
})

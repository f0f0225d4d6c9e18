"""Templates of the diagnostics of readers, loading and the build: ``slug`` or ``slug/variant``.

Every slug is listed with its meaning in ``postmortem/slugs.py``; a test requires each to have its
templates here, in both languages, with the same placeholders.
"""

from __future__ import annotations

TEMPLATES: dict[str, tuple[str, str]] = {}

# Record framing (readers/framing.py) is shared by the summary, TensorBoard and lineage readers.
for _prefix in ("summary", "tensorboard", "lineage"):
    TEMPLATES.update({
        f"{_prefix}-file-empty": ("The file is empty.", "文件为空。"),
        f"{_prefix}-record-crc/length": (
            "Length CRC mismatch at byte {at:int}: the record length cannot be trusted, so reading stopped "
            "({left:int} bytes not read).",
            "第 {at:int} 字节处的长度 CRC 校验失败：记录长度不可信，已停止读取（{left:int} 字节未读）。"),
        f"{_prefix}-record-crc/data": (
            "Data CRC mismatch in the {length:int}-byte record at byte {at:int}: the record was skipped.",
            "第 {at:int} 字节处 {length:int} 字节的记录数据 CRC 校验失败：已跳过该记录。"),
        f"{_prefix}-truncated": (
            "The last record is incomplete ({left:int} bytes at byte {at:int}); everything before it was kept.",
            "最后一条记录不完整（第 {at:int} 字节起的 {left:int} 字节）；之前的内容均已保留。"),
    })

TEMPLATES.update({
    # discover.py
    "dir-unreadable": ("The folder cannot be listed: {detail}.", "无法列出该文件夹：{detail}。"),
    "file-unreadable": ("The file cannot be read (stat): {detail}.", "无法读取该文件（stat）：{detail}。"),
    "symlink-outside": ("A symlink pointing outside the run folder: not followed.", "指向训练目录之外的符号链接：未跟随。"),
    "special-file": ("A special file (FIFO, device or socket): skipped without opening it.",
                     "特殊文件（FIFO、设备或套接字）：未打开，已跳过。"),
    # why a file of the inventory was not read (model.InventoryEntry.note)
    "inventory.unclaimed": ("not claimed by any reader", "没有读取器识别"),
    "inventory.symlink-inside": ("symlink inside the run folder: not followed", "指向训练目录内的符号链接：未跟随"),
    "inventory.symlink-outside": ("symlink pointing outside the run folder: not followed", "指向训练目录之外的符号链接：未跟随"),
    "inventory.symlink-unresolved": ("symlink that cannot be resolved (a loop?): not followed", "无法解析的符号链接（循环？）：未跟随"),
    "inventory.special-file": ("special file (FIFO, device or socket): not opened", "特殊文件（FIFO、设备或套接字）：未打开"),
})

TEMPLATES.update({
    # summary, TensorBoard and lineage records
    "summary-bad-record": ("A record with a valid CRC does not decode as an Event: {detail}.",
                           "一条 CRC 正确的记录无法解码为 Event：{detail}。"),
    "tensorboard-bad-record": ("A record does not decode as an Event: {detail}.", "一条记录无法解码为 Event：{detail}。"),
    "lineage-bad-record": ("A record does not decode as a LineageEvent: {detail}.", "一条记录无法解码为 LineageEvent：{detail}。"),
    "summary-skipped": ("Counted, not decoded: {kinds}.", "已计数、未解码：{kinds}。"),
    "tensorboard-skipped": ("Counted, not decoded: {kinds}.", "已计数、未解码：{kinds}。"),
    "clause.record-count": ("{n:int} {kind:@record.}", "{kind:@record.} {n:int} 条"),
    "record.graph": ("graph", "计算图"),
    "record.explain": ("explain", "可解释性记录"),
    "record.tensor-not-scalar": ("tensor (not one number)", "张量（不是单个数）"),
    "record.image": ("image", "图像"),
    "record.audio": ("audio", "音频"),
    "record.landscape": ("loss landscape", "loss 地形图"),
    "record.log-message": ("log message", "日志消息"),
    "record.session-log": ("session log", "会话日志"),
    "record.run-metadata": ("run metadata", "运行元数据"),
    "record.meta-graph": ("meta graph", "元图"),
    "record.other": ("other value", "其他类型的值"),
})

TEMPLATES.update({
    # checkpoints (readers/checkpoints.py): the header walk stops at the first problem
    "ckpt-truncated": ("The checkpoint is cut short: {problem}; {params:int} parameters were read before it.",
                       "checkpoint 文件不完整：{problem}；此前已读取 {params:int} 个参数。"),
    "ckpt-truncated/interrupted": ("An interrupted save: {problem}; {params:int} parameters were read before it.",
                                   "中断的保存：{problem}；此前已读取 {params:int} 个参数。"),
    "ckpt-corrupt": ("The checkpoint is damaged: {problem}; {params:int} parameters were read before it.",
                     "checkpoint 文件已损坏：{problem}；此前已读取 {params:int} 个参数。"),
    "ckpt-corrupt/interrupted": ("An interrupted save: {problem}; {params:int} parameters were read before it.",
                                 "中断的保存：{problem}；此前已读取 {params:int} 个参数。"),
    "ckpt-unreadable": ("Not a MindSpore checkpoint (encrypted or another format): {problem}.",
                        "不是 MindSpore checkpoint（已加密或为其他格式）：{problem}。"),
    "ckpt-unreadable/interrupted": ("An interrupted save: {problem}; {params:int} parameters were read before it.",
                                    "中断的保存：{problem}；此前已读取 {params:int} 个参数。"),
    "checkpoint-companion/graph": ("The graph ModelCheckpoint saves once: kept beside the checkpoints, not read.",
                                   "ModelCheckpoint 保存的计算图：与 checkpoint 放在一起，不读取。"),
    "checkpoint-companion/landscape": ("SummaryCollector's loss-landscape metadata: kept beside the checkpoints, not read.",
                                       "SummaryCollector 的 loss 地形图元数据：与 checkpoint 放在一起，不读取。"),
    "ckpt-meta-invalid/json": ("meta.json is not JSON: {detail}.", "meta.json 不是合法的 JSON：{detail}。"),
    "ckpt-meta-invalid/no-pointer": ("meta.json has no last_ckpt_file: not a MindFormers resume pointer.",
                                     "meta.json 中没有 last_ckpt_file：不是 MindFormers 的续训指针。"),
    "ckpt.bytes-needed": ("{n:int} bytes needed, {left:int} left", "需要 {n:int} 字节，只剩 {left:int} 字节"),
    "ckpt.ends-early": ("the file ends early", "文件提前结束"),
    "ckpt.varint-short": ("a varint is cut short", "varint 被截断"),
    "ckpt.varint-long": ("a varint longer than 10 bytes", "varint 超过 10 字节"),
    "ckpt.field-past-end": ("a field of {n:int} bytes runs past the end", "{n:int} 字节的字段超出了结尾"),
    "ckpt.wire-type": ("unsupported wire type {wire}", "不支持的 wire type {wire}"),
    "ckpt.field-key": ("invalid field key {key}", "无效的字段键 {key}"),
    "ckpt.dims-past-end": ("the dims run past the tensor", "dims 超出了张量范围"),
    "ckpt.dtype-long": ("a tensor_type of {n:int} bytes", "tensor_type 长达 {n:int} 字节"),
    "ckpt.name-long": ("a parameter name of {n:int} bytes", "参数名长达 {n:int} 字节"),
    "ckpt.crc-trailer-short": ("the crc_num trailer is cut short", "crc_num 尾部被截断"),
    "ckpt.not-a-value": ("expected a checkpoint Value, found tag byte {byte}", "应为 checkpoint Value，实际为标记字节 {byte}"),
    "ckpt.param-cut": ("parameter {name:q} is cut short", "参数 {name:q} 不完整"),
    "ckpt.value-empty": ("a Value without a name or tensor", "一个既无名称也无张量的 Value"),
    "ckpt.json-header-short": ("the JSON header is cut short", "JSON 头被截断"),
    "ckpt.json-header-bad": ("a bad JSON header: {detail}", "JSON 头有误：{detail}"),
    "ckpt.header-entry": ("a bad header entry for {name:q}", "{name:q} 的头信息有误"),
    "ckpt.empty": ("an empty file", "空文件"),
})

TEMPLATES.update({
    # configs (readers/configfile.py)
    "config-unparseable/yaml": ("YAML error: {detail}.", "YAML 解析错误：{detail}。"),
    "config-unparseable/json": ("JSON error: {detail}.", "JSON 解析错误：{detail}。"),
    "config-unparseable/deep": ("Nested too deeply to parse.", "嵌套层数过深，无法解析。"),
    "config-not-mapping": ("The top level is not a mapping; nothing was read.", "顶层不是映射（mapping）；未读取任何内容。"),
})

TEMPLATES.update({
    # text logs (readers/textlog/)
    "log-steps-per-epoch/printed": ("{n:int} steps per epoch, as the {shape} lines print them.",
                                    "每个 epoch {n:int} 个 step，取自 {shape} 行打印的步数。"),
    "log-steps-per-epoch/one-epoch": ("One epoch only: LossMonitor's step within the epoch is used as the global step.",
                                      "只有一个 epoch：LossMonitor 的 epoch 内 step 号直接作为全局 step。"),
    "log-steps-per-epoch/lossmonitor": ("{n:int} steps per epoch: the longest epoch the LossMonitor lines show.",
                                        "每个 epoch {n:int} 个 step：取 LossMonitor 行中最长的 epoch。"),
    "log-steps-per-epoch/step-counts": ("{n:int} steps per epoch, from the printed step counts.",
                                        "每个 epoch {n:int} 个 step，取自打印的步数。"),
    "log-steps-per-epoch/ratio": ("{n:int} steps per epoch, from epoch time / per-step time (the median of {lines:int} epoch "
                                  "lines; {differ:int} give another ratio).",
                                  "每个 epoch {n:int} 个 step，由 epoch 耗时 / 单 step 耗时得出（{lines:int} 行 epoch 记录的中位数；"
                                  "其中 {differ:int} 行比值不同）。"),
    "log-encoding": ("Not valid UTF-8: the undecodable bytes were replaced.", "不是合法的 UTF-8：无法解码的字节已被替换。"),
    "log-line-too-long": ("Lines longer than {limit:int} bytes were skipped.", "超过 {limit:int} 字节的行已跳过。"),
    "log-json-invalid": ("A JSON-looking line did not parse; it was skipped.", "一行形似 JSON 的内容无法解析，已跳过。"),
    "log-no-step": ("{n:int} values had no step before them in the file and were dropped.",
                    "{n:int} 个数值之前没有 step 信息，已丢弃。"),
    "log-line-unreadable": ("{n:int} lines look like {shapes} lines but could not be read; they were skipped.",
                            "{n:int} 行看起来是 {shapes} 格式，但无法读取，已跳过。"),
    "log-field-unreadable": ("{n:int} values could not be read as one number ({fields}); they were left out.",
                             "{n:int} 个数值无法读成单个数（{fields}），未计入。"),
    "log-errors-capped": ("{n:int} error lines; the first {kept:int} are kept as events.",
                          "{n:int} 行错误日志；只保留前 {kept:int} 条作为事件。"),
    "log-empty": ("The file is empty.", "文件为空。"),
    "log-empty/blank": ("The file holds only blank lines.", "文件只有空行。"),
    "log-unrecognised": ("No line is in a log shape this reader knows (see docs/formats/textlogs.md); the first line reads: "
                         "{line:q}.", "没有一行属于已知的日志格式（见 docs/formats/textlogs.md）；第一行为：{line:q}。"),
    "log-nothing-kept": ("{n:int} lines are in known log shapes, but none gave a value with a step.",
                         "{n:int} 行属于已知的日志格式，但没有一行给出带 step 的数值。"),
})

TEMPLATES.update({
    # text logs read by their fields (readers/textlog/fields.py; the inference in readers/textlog/)
    "log-steps-per-epoch/fields-printed": ("{n:int} steps per epoch, as the lines print them (step s/N, steps per epoch).",
                                           "每个 epoch {n:int} 个 step，取自日志行打印的步数（step s/N 或每 epoch 步数）。"),
    "log-steps-per-epoch/fields-largest": ("{n:int} steps per epoch: the largest step within an epoch the lines print "
                                           "(no line prints the count).",
                                           "每个 epoch {n:int} 个 step：取日志行中 epoch 内最大的 step 号（没有一行打印步数）。"),
    "log-loss-unread": ("{n:int} lines hold a loss-like key but gave no training record; the first reads: {line:q}.",
                        "{n:int} 行含有类似 loss 的字段，但未读出训练记录；第一行为：{line:q}。"),
    "log-inferred/eval": ("{n:int} evaluation lines (eval / val / test before the loss, an accuracy on a progress bar, a "
                          "dict of metrics) are kept apart from training, at the step of the training line before each.",
                          "{n:int} 行评估记录（loss 前有 eval / val / test 字样、进度条上带准确率或为指标字典）与训练记录分开，"
                          "记在其前一条训练记录的 step 上。"),
    "log-inferred/ranks-printed": ("The lines of {n:int} ranks are interleaved in this file; each line's rank is the one it "
                                   "prints.", "本文件中交错着 {n:int} 个 rank 的日志行；每行的 rank 取自行内打印的 rank。"),
    "log-inferred/ranks-order": ("Each step is printed {n:int} times in a row with no rank on the lines: read as ranks 0 to "
                                 "{n:int}-1 in order of appearance.",
                                 "每个 step 连续打印 {n:int} 次且行内没有 rank：按出现顺序读作 rank 0 到 {n:int}-1。"),
    "log-inferred/ordinal": ("No line prints a step or an epoch: the {n:int} loss lines take their ordinal 1..{n:int} as "
                             "their step.", "没有一行打印 step 或 epoch：{n:int} 行 loss 按出现顺序以 1..{n:int} 作为 step。"),
    "log-inferred/epoch-0-based": ("Epochs are counted from 0 here: epoch e is read as the (e+1)-th.",
                                   "此处 epoch 从 0 开始计数：epoch e 读作第 e+1 个 epoch。"),
    "log-inferred/epoch-end": ("One line per epoch with no step: each is put at its epoch's last step ({n:int} steps per "
                               "epoch, as printed).", "每个 epoch 一行且没有 step：记在该 epoch 的最后一个 step（每 epoch {n:int} 步，取自打印值）。"),
    "log-inferred/epoch-as-step": ("One line per epoch, no step and no steps per epoch printed: the epoch number is the step.",
                                   "每个 epoch 一行，没有 step，也没有打印每 epoch 步数：以 epoch 号作为 step。"),
    "log-inferred/step-global": ("The step goes on when the epoch changes: it is read as the global step.",
                                 "epoch 变化时 step 继续累加：读作全局 step。"),
    "log-inferred/unit-s": ("Per-step times printed without a unit are seconds: the wall clock between lines gives "
                            "{gap:num} s a step.", "未注明单位的单步耗时为秒：日志行之间的墙钟间隔为每步 {gap:num} 秒。"),
    "log-inferred/unit-s-summary": ("{n:int} epoch summaries print their per step time without a unit: it is seconds, as read "
                                    "so it agrees with the records' own step times (median {median:num} s).",
                                    "{n:int} 行 epoch 汇总的单步耗时未注明单位：按秒读取才与各条记录自身的单步耗时一致"
                                    "（中位数 {median:num} 秒），故为秒。"),
    "log-inferred/unit-ms-clock": ("Per-step times printed without a unit are milliseconds: the wall clock between lines "
                                   "gives {gap:num} s a step.", "未注明单位的单步耗时为毫秒：日志行之间的墙钟间隔为每步 {gap:num} 秒。"),
    "log-inferred/unit-s-small": ("Per-step times printed without a unit are read as seconds: their median {median:num} "
                                  "would be under 1 ms a step as milliseconds, and no wall clock says otherwise.",
                                  "未注明单位的单步耗时按秒读取：其中位数 {median:num} 若按毫秒则每步不到 1 毫秒，且没有墙钟时间表明相反。"),
    "log-inferred/epoch-0-based-lines": ("Epochs are counted from 0 in the {shape} lines: epoch e is read as the (e+1)-th.",
                                         "{shape} 行的 epoch 从 0 开始计数：epoch e 读作第 e+1 个 epoch。"),
    "log-inferred/unit-ms": ("Per-step times printed without a unit are read as milliseconds (MindSpore's callbacks print "
                             "ms; no wall clock to check).",
                             "未注明单位的单步耗时按毫秒读取（MindSpore 回调打印的是毫秒；没有墙钟时间可核对）。"),
    # a step's time on a line of its own (readers/textlog/ _neighbour_times, _times_beside_shapes, _time_ranks_by_order)
    "log-inferred/time-line-after": ("{n:int} records take their per-step time from the line after them (a line with a "
                                     "time and no loss, printing no counter or the record's own: the step just printed).",
                                     "{n:int} 条记录的单步耗时取自其后一行（该行只有耗时、没有 loss，不打印计数或打印与记录相同的计数：即刚打印的那一步）。"),
    "log-inferred/time-line-before": ("{n:int} records take their per-step time from the line before them (a time line that "
                                      "prints the record's counters, or heads records that print none).",
                                      "{n:int} 条记录的单步耗时取自其前一行（该行打印了与记录相同的 epoch/step 计数，或位于不带计数的记录之上）。"),
    "log-inferred/time-line-shapes": ("{n:int} per-step times printed on lines of their own with a counter are put at the "
                                      "step of the record after them.",
                                      "{n:int} 个单独成行、带计数打印的单步耗时记在其后一条记录的 step 上。"),
    "log-inferred/unit-s-compile": ("Per-step times printed without a unit are read as seconds: the first, {first:num}, is "
                                    "the graph compile's (the median is {median:num}) and would be under a second as "
                                    "milliseconds, and no wall clock says otherwise.",
                                    "未注明单位的单步耗时按秒读取：第一个值 {first:num} 含图编译时间（中位数为 {median:num}），若按毫秒则编译不到 1 秒，"
                                    "且没有墙钟时间表明相反。"),
    "log-inferred/ranks-order-times": ("{n:int} epoch-time lines with no rank are read as ranks in order of appearance after "
                                       "each step's records: the first is rank 0's.",
                                       "{n:int} 行不带 rank 的 epoch 耗时行按每个 step 记录之后的出现顺序读作各 rank：第一行属于 rank 0。"),
    "log-duplicate-source": ("The same {n:int} step lines are in {other}: the two files are one source of one launch, "
                             "read once.", "{other} 中有相同的 {n:int} 行 step 记录：两个文件是同一次启动的同一来源，只读一次。"),
})

TEMPLATES.update({
    # summary lines of text logs (readers/textlog/ _field_lines; branch summaries, issue 21)
    "log-inferred/summary": ("{n:int} lines are an epoch's or a run's summary, not a step's record (an epoch or sink time, "
                             "an average loss, a run's train_runtime): their mean loss is no training record; their times "
                             "are kept at the step of the record before each.",
                             "{n:int} 行是一个 epoch 或整次训练的汇总，而不是某个 step 的记录（epoch 或 sink 耗时、平均 loss、"
                             "训练总耗时 train_runtime）：其平均 loss 不计为训练记录；其中的耗时记在前一条记录的 step 上。"),
    "log-inferred/sink-time": ("The time on {n:int} step lines is a sink's or an epoch's ({steps:int} steps in the median): "
                               "the summary after each prints that time and the per step time (\"Per sink_size step time: "
                               "..., per step time: ...\"), which is taken as the step time.",
                               "{n:int} 行 step 记录上的时间是整个 sink 或 epoch 的耗时（中位数为 {steps:int} 步）：其后的汇总行"
                               "打印了该耗时和单步耗时（\"Per sink_size step time: ..., per step time: ...\"），单步耗时取后者。"),
    # how a log lays its records out (readers/textlog/parse.py pair_halves, totals_first)
    "log-inferred/two-line": ("{n:int} records are printed over two or more lines, their counters on one line and their "
                              "loss on the next: each such group of lines is read as one record.",
                              "{n:int} 条记录分多行打印，计数（epoch、step）在一行，loss 在下一行：每组这样的行读作一条记录。"),
    "log-inferred/two-line-loss-first": ("{n:int} records are printed over two lines, their loss on one line and their "
                                         "counters on the next: each such pair of lines is read as one record.",
                                         "{n:int} 条记录分两行打印，loss 在一行，计数（epoch、step）在下一行：每对这样的行读作一条记录。"),
    "log-inferred/total-first": ("The counters are printed total first (epoch 300/1 is epoch 1 of 300): the number before "
                                 "the slash never changes and is never the smaller one.",
                                 "计数先打印总数（epoch 300/1 表示共 300 个 epoch 中的第 1 个）：斜杠前的数始终不变，且从不小于斜杠后的数。"),
})

TEMPLATES.update({
    # units by evidence (load/units.py)
    "unit-unchecked": ("{tag}: no wall-clock gaps and no other source to check its unit against: read as {default} ({why}).",
                       "{tag}：没有墙钟间隔，也没有其他来源可用于核对单位：按 {default} 读取（{why}）。"),
    "unit-by-evidence": ("{tag}: its values are in {unit}, not {default} ({why}): the median {written:num} as written reads "
                         "{as_unit:num} {canonical} in {unit} and {as_default:num} {canonical} in {default}; {evidence}; "
                         "read as {unit}.",
                         "{tag}：数值的单位是 {unit}，不是 {default}（{why}）：写出的中位数 {written:num} 按 {unit} 是 "
                         "{as_unit:num} {canonical}，按 {default} 是 {as_default:num} {canonical}；{evidence}；按 {unit} 读取。"),
    "unit-by-evidence/all-devices": ("{tag}: samples/s of all {devices:int} devices, not per device (MindFormers' unit): value × "
                                     "step time is {samples:num} samples per step, the global batch {batch:int} (per device it "
                                     "would be {per_device:num}); divided by {devices:int}.",
                                     "{tag}：是全部 {devices:int} 张卡的 samples/s，而不是单卡的（MindFormers 的单位）：数值 × step "
                                     "耗时为每 step {samples:num} 个样本，等于全局 batch {batch:int}（单卡应为 {per_device:num}）；"
                                     "已除以 {devices:int}。"),
    "unit-undecided": ("{tag}: no candidate unit ({candidates}) agrees with the evidence ({evidence}; the values as {default} "
                       "are {ratio:x} it): read as {default} ({why}).",
                       "{tag}：没有一个候选单位（{candidates}）与证据相符（{evidence}；按 {default} 读取的数值是它的 "
                       "{ratio:x}）：按 {default} 读取（{why}）。"),
    "throughput-unchecked": ("{tag}: no global batch size to check it against: read as samples/s per device (MindFormers' "
                             "unit) of {devices:int} devices.",
                             "{tag}：没有全局 batch size 可用于核对：按 {devices:int} 张卡中单卡的 samples/s 读取（MindFormers 的单位）。"),
    "unit-why.mindformers-ms": ("MindFormers' MFLossMonitor writes whole milliseconds; Megatron-LM writes seconds",
                                "MindFormers 的 MFLossMonitor 写整数毫秒，Megatron-LM 写秒"),
    "unit-why.user-seconds": ("a user's own tag: seconds assumed", "用户自定义的 tag：默认按秒"),
    "unit-why.mindformers-tflops": ("MindFormers writes full_model_flops / per_step_ms / 1e9: TFLOPS",
                                    "MindFormers 写的是 full_model_flops / per_step_ms / 1e9，即 TFLOPS"),
    "unit-evidence.gaps-own": ("the wall-clock gaps between its own steps have a median of {median:dur}",
                               "其自身 step 之间的墙钟间隔中位数为 {median:dur}"),
    "unit-evidence.gaps-others": ("the wall-clock gaps between the steps, as other sources timed them, have a median of {median:dur}",
                                  "其他来源记录的 step 之间的墙钟间隔中位数为 {median:dur}"),
    "unit-evidence.source": ("{source} ({tag}, unit stated) gives a median of {median:num} at the same steps",
                             "{source}（{tag}，标明单位）在相同 step 上的中位数为 {median:num}"),
})

TEMPLATES.update({
    # launches and restarted step counters (load/launches.py)
    "step-counter-restarted/file": ("{source} steps in this file restart at {first:step} (a resumed launch counting from 1): "
                                    "shifted by {shift:int} to global steps by {how}.",
                                    "该文件中 {source} 的 step 从 {first:step} 重新开始（续训后从 1 计数）：按{how}平移 "
                                    "{shift:int} 步，对齐到全局 step。"),
    "step-counter-restarted/part": ("{source} steps restart at {first:step} part way through this file (a later launch "
                                    "counting from 1): that launch's lines are shifted by {shift:int} to global steps by {how}.",
                                    "该文件中途 {source} 的 step 从 {first:step} 重新开始（后一次启动从 1 计数）：该次启动的行按"
                                    "{how}平移 {shift:int} 步，对齐到全局 step。"),
    "restart-how.wall-times": ("matching wall times with other sources", "与其他来源的墙钟时间匹配"),
    "restart-how.values": ("matching its {tag} values with other sources' at {steps:int} steps",
                           "与其他来源在 {steps:int} 个 step 上的 {tag} 数值匹配"),
    "run-resumed": ("Launch {launch:int} resumed at step {step:step}; steps {first:step}–{last:step} of the earlier launch "
                    "were replaced.", "第 {launch:int} 次启动从第 {step:step} 步续训；此前启动的第 {first:step}–{last:step} "
                    "步已被替换。"),
})

TEMPLATES.update({
    # one value per step, settings, reading (load/)
    "source-conflict": ("{tag}: {source} disagrees with {best} at {steps:int|step|steps}, first at step {step:step} "
                        "({value:num} against {best_value:num}); {best} is used.",
                        "{tag}：{source} 与 {best} 在 {steps:int} 个 step 上不一致，首次在第 {step:step} 步（{value:num} 对 "
                        "{best_value:num}）；采用 {best}。"),
    "setting-conflict": ("{key}: {source} says {value:v}, {other_source} says {other_value:v}; {source} is used.",
                         "{key}：{source} 为 {value:v}，{other_source} 为 {other_value:v}；采用 {source}。"),
    "file-unreadable/read": ("The file cannot be read: {detail}.", "无法读取该文件：{detail}。"),
    "reader-failed": ("The {reader} reader failed: {detail}.", "{reader} 读取器出错：{detail}。"),
    "log-clock-local/no-reference": ("The timestamps carry no time zone and no source of this rank has zoned times (summary, "
                                     "TensorBoard) to align them with: they are kept as local time (gaps are right; the "
                                     "offset from UTC is unknown).",
                                     "时间戳不带时区，且该卡没有带时区的来源（summary、TensorBoard）可供对齐：按本地时间保留"
                                     "（间隔正确，与 UTC 的偏移未知）。"),
    "log-clock-local/no-match": ("The timestamps carry no time zone and its steps' times match no zoned source's by a whole "
                                 "number of quarter hours: they are kept as local time (gaps are right; the offset from UTC "
                                 "is unknown).",
                                 "时间戳不带时区，且其 step 时间与带时区来源之间的差不是整刻钟：按本地时间保留（间隔正确，"
                                 "与 UTC 的偏移未知）。"),
    "log-clock-aligned": ("The timestamps carry no time zone; matched to {sources} times at {steps:int} steps they are local "
                          "time {zone}: shifted to UTC.",
                          "时间戳不带时区；与 {sources} 在 {steps:int} 个 step 上的时间比对，确定为本地时间 {zone}：已换算为 UTC。"),
})
for _reader in ("checkpoint", "config", "lineage", "summary", "tensorboard", "textlog", "profiler", "callback"):
    TEMPLATES[f"{_reader}-nothing-read"] = (
        f"Claimed by the {_reader} reader, but nothing was taken from it: no rows, no settings, and the reader gave no reason.",
        f"由 {_reader} 读取器识别，但没有读出任何内容：既无数据行也无配置，读取器也未说明原因。")
    TEMPLATES[f"{_reader}-nothing-read/empty"] = (
        f"Claimed by the {_reader} reader, but nothing was taken from it: the file is empty.",
        f"由 {_reader} 读取器识别，但没有读出任何内容：文件为空。")

TEMPLATES.update({
    # checkpoints' launches (load/checkpoints.py)
    "checkpoint-launch-unknown": ("{outside:int} of {files:int} checkpoint files have an mtime outside the run's wall-clock span "
                                  "(copied files keep no save times), so which launch saved them is unknown; {ambiguous:int} "
                                  "of them state a step that a later launch counting from 1 again would also have saved under "
                                  "another global step: they are kept at the steps they state.",
                                  "{files:int} 个 checkpoint 文件中有 {outside:int} 个的修改时间不在训练的墙钟时间范围内（拷贝的"
                                  "文件不保留保存时间），因此不知道是哪次启动保存的；其中 {ambiguous:int} 个标注的 step，若由"
                                  "从 1 重新计数的后一次启动保存，对应的是另一个全局 step：按其标注的 step 保留。"),
    "checkpoint-mtime-outside": ("{outside:int} of {files:int} checkpoint files have an mtime outside the run's wall-clock span "
                                 "(copied files keep no save times): their save times are estimated from the step times.",
                                 "{files:int} 个 checkpoint 文件中有 {outside:int} 个的修改时间不在训练的墙钟时间范围内（拷贝的"
                                 "文件不保留保存时间）：保存耗时由 step 耗时估算。"),
})

TEMPLATES.update({
    # analysis and the build
    "steps-from-profile": ("No training step times were logged: the step times are the profiled steps' totals ({sources}), "
                           "in the profiler's own step numbering.",
                           "训练日志中没有 step 耗时：step 耗时取自 Profiler 各 step 的总耗时（{sources}），采用 Profiler 自己的 "
                           "step 编号。"),
    "baseline-missing": ("Built against {baseline}, which is no longer archived: {detail}.",
                         "原报告以 {baseline} 为基线，但它已不在归档中：{detail}。"),
    "batch-size-contradicted/lineage": ("Lineage's batch size {batch:g} disagrees with the logged throughput, which gives "
                                        "{implied:g} samples per step ({method}); the logged figure is used.",
                                        "lineage 中的 batch size {batch:g} 与日志记录的吞吐不符，后者给出每 step {implied:g} 个"
                                        "样本（{method}）；采用日志的数值。"),
    "batch-size-contradicted": ("The global batch size {batch:g} ({source}) disagrees with the logged throughput, which gives "
                                "{implied:g} samples per step ({method}); the settings' figure is kept.",
                                "全局 batch size {batch:g}（{source}）与日志记录的吞吐不符，后者给出每 step {implied:g} 个样本"
                                "（{method}）；保留配置中的数值。"),
})

TEMPLATES.update({
    # profiler output: files known and not read (readers/profiler/)
    "profiler-format-not-read": ("{name}: a profiler file in a format this reader does not read.",
                                 "{name}：Profiler 文件，格式暂不支持读取。"),
    "profiler-format-not-read/other": ("{name} ({holds}): a format this reader does not read.",
                                       "{name}（{holds}）：格式暂不支持读取。"),
    "profiler-format-not-read/database": ("{name} not read: the SQLite export is not read; profile with export_type text for "
                                          "readable files.",
                                          "{name} 未读取：不读取 SQLite 导出；请以 export_type text 采集 Profiler，得到可读文件。"),
    "profiler-unreadable": ("The file cannot be parsed: {detail}.", "无法解析该文件：{detail}。"),
    "profiler-damaged": ("Read row by row (the file is damaged: {detail}); rows that do not split into the header's fields "
                         "are skipped.", "逐行读取（文件已损坏：{detail}）；无法按表头字段拆分的行已跳过。"),
    "profiler-rank-mismatch": ("Rank {rank} from the path, rank_id {said} in profiler_info: {said} is used.",
                               "路径中为卡 {rank}，profiler_info 中 rank_id 为 {said}：采用 {said}。"),
    "profiler-rank": ("The file name says {named} and the folder says rank {rank}: rank {rank} is used (older MindSpore named "
                      "files by device id).",
                      "文件名中为 {named}，目录中为卡 {rank}：采用卡 {rank}（较早的 MindSpore 按 device id 命名文件）。"),
    "profiler-not-read/profiler-info": ("{name} not read: the profiler's settings; the rank is taken from its rank_id.",
                                        "{name} 未读取：Profiler 的采集设置；卡号取自其中的 rank_id。"),
    "profiler-not-read/profiler-metadata": ("{name} not read: the environment variables and parallel settings of the profiled "
                                            "process.", "{name} 未读取：被采集进程的环境变量与并行设置。"),
    "profiler-not-read/pipeline-summary": ("{name} not read: derived from minddata_pipeline_raw (read) and the CPU-utilisation "
                                           "samples.", "{name} 未读取：由 minddata_pipeline_raw（已读取）和 CPU 利用率采样汇总而来。"),
    "profiler-not-read/operator-details": ("{name} not read: the framework operators' host and device totals; the device time "
                                           "is the kernels' of kernel_details.csv.",
                                           "{name} 未读取：框架算子的 host 与 device 总耗时；device 耗时取自 kernel_details.csv 中的算子。"),
    "profiler-not-read/framework-raw": ("{name} not read: raw framework data the profiler analysed into ASCEND_PROFILER_OUTPUT/.",
                                        "{name} 未读取：Profiler 已解析到 ASCEND_PROFILER_OUTPUT/ 的框架原始数据。"),
    "profiler-not-read/profiler-log": ("{name} not read: the profiler's own log.", "{name} 未读取：Profiler 自身的日志。"),
    "profiler-not-read/timeline-display": ("Not read: MindInsight's display timeline; steps and operators are read from "
                                           "step_trace_raw and aicore_intermediate.",
                                           "未读取：MindInsight 的展示用时间线；step 与算子取自 step_trace_raw 和 aicore_intermediate。"),
    "profiler-not-read/timeline-summary": ("Not read: event counts of the display timeline, not needed.",
                                           "未读取：展示用时间线的事件计数，不需要。"),
    "profiler-not-read/framework-names": ("Not read: operator names, types and shapes; operator times come from "
                                          "aicore_intermediate.", "未读取：算子名称、类型与 shape；算子耗时取自 aicore_intermediate。"),
    "profiler-not-read/step-trace-points": ("Not read: the names of the operators that mark the fp start and bp end.",
                                            "未读取：标记前向开始与反向结束的算子名称。"),
    "profiler-not-read/cycle-counter": ("Not read: the time origin of the display timeline.", "未读取：展示用时间线的时间原点。"),
    "profiler-not-read/dynamic-shapes": ("Not read: per-step shapes of dynamic-shape operators.", "未读取：动态 shape 算子每个 step 的 shape。"),
    "profiler-intermediate": ("An intermediate file: read from {target} instead.", "中间文件：改为读取 {target}。"),
    "profiler-intermediate/operator-totals": ("An intermediate file: read from {target} instead (operator totals).",
                                              "中间文件：改为读取 {target}（算子总耗时）。"),
    "profiler-intermediate/per-operator-flops": ("An intermediate file: read from {target} instead (the per-operator FLOPs are "
                                                 "not read).", "中间文件：改为读取 {target}（不读取逐算子的 FLOPs）。"),
    "profiler-intermediate/scope-flops": ("An intermediate file: read from {target} instead (the FLOPs per scope are not read).",
                                          "中间文件：改为读取 {target}（不读取按 scope 的 FLOPs）。"),
    "profiler-intermediate/step-utilisation": ("An intermediate file: read from {target} instead (the per-step utilisation is "
                                               "not read).", "中间文件：改为读取 {target}（不读取逐 step 的利用率）。"),
    "profiler-intermediate/raw-device": ("Raw device data: read from the files parsed from it instead.",
                                         "设备原始数据：改为读取由它解析出的文件。"),
    "ascend-csv.api_statistic": ("host time of each CANN API", "每个 CANN API 的 host 侧耗时"),
    "ascend-csv.l2_cache": ("L2 cache hit rates per kernel", "每个算子的 L2 cache 命中率"),
    "ascend-csv.static_op_mem": ("static graph memory per operator", "每个算子的静态图内存"),
    "ascend-csv.data_preprocess": ("AI CPU data preprocessing", "AI CPU 数据预处理"),
    "ascend-csv.aicpu": ("AI CPU kernels", "AI CPU 算子"),
    "ascend-csv.ai_core_freq": ("AI Core frequency", "AI Core 频率"),
    "ascend-csv.hbm": ("HBM bandwidth samples", "HBM 带宽采样"),
    "ascend-csv.ddr": ("DDR bandwidth samples", "DDR 带宽采样"),
    "ascend-csv.llc": ("LLC bandwidth samples", "LLC 带宽采样"),
    "ascend-csv.pcie": ("PCIe bandwidth samples", "PCIe 带宽采样"),
    "ascend-csv.hccs": ("HCCS bandwidth samples", "HCCS 带宽采样"),
    "ascend-csv.nic": ("NIC bandwidth samples", "网卡带宽采样"),
    "ascend-csv.roce": ("RoCE bandwidth samples", "RoCE 带宽采样"),
})

TEMPLATES.update({
    # profiler output: what a file holds or lacks (readers/profiler/)
    "profiler-columns": ("Unexpected header ({header}): not read.", "表头不符合预期（{header}）：未读取。"),
    "profiler-columns/expected": ("Not a {kind} header ({header}): not read.", "不是 {kind} 的表头（{header}）：未读取。"),
    "profiler-columns/missing": ("Without {missing} (header {header}): not read.", "缺少 {missing}（表头 {header}）：未读取。"),
    "profiler-columns/unpaired": ("{n:int} op columns without their _start_point / _end_point: not read.",
                                  "{n:int} 个算子列缺少对应的 _start_point / _end_point：未读取。"),
    "profiler-row": ("A row without numbers was skipped.", "跳过一行没有数值的记录。"),
    "profiler-row/short": ("A short row was skipped.", "跳过一行字段不足的记录。"),
    "profiler-row/cells": ("A row of {cells:int} cells under a header of {header:int} was skipped.",
                           "跳过一行：{cells:int} 个字段，而表头有 {header:int} 个。"),
    "profiler-row/ticks": ("A row with a non-integer tick count was skipped.", "跳过一行 tick 数不是整数的记录。"),
    "profiler-row/error": ("A row was skipped: {detail}.", "跳过一行：{detail}。"),
    "profiler-row/not-rank": ("A row that is not a rank row with numbers was skipped.", "跳过一行不是带数值的卡记录。"),
    "profiler-row/count": ("{n:int} rows without numbers were skipped.", "跳过 {n:int} 行没有数值的记录。"),
    "profiler-row/allocations": ("{n:int} allocations without size or time were skipped.", "跳过 {n:int} 条没有大小或时间的内存分配记录。"),
    "profiler-row/no-timestamp": ("{n:int} rows without a timestamp were skipped.", "跳过 {n:int} 行没有时间戳的记录。"),
    "profiler-row/memory": ("A malformed memory row was skipped.", "跳过一行格式错误的显存记录。"),
    "profiler-row/no-duration": ("{n:int} of {of:int} operators without a {column} number are not counted.",
                                 "{of:int} 个算子中有 {n:int} 个没有 {column} 数值，未计入。"),
    "profiler-row/trace-events": ("{n:int} step or overlap events could not be decoded.", "{n:int} 个 step 或 overlap 事件无法解码。"),
    "profiler-row/not-record": ("{n:int} lines that are not a trace record were skipped.", "跳过 {n:int} 行不是 trace 记录的内容。"),
    "profiler-row/links": ("{n:int} links not of the form src-dst were skipped.", "跳过 {n:int} 条不是 src-dst 形式的链路。"),
    "profiler-empty/file": ("The file is empty.", "文件为空。"),
    "profiler-empty/steps": ("No step rows.", "没有 step 记录。"),
    "profiler-empty/operators": ("No operator rows.", "没有算子记录。"),
    "profiler-empty/kernels": ("A header and no kernels.", "只有表头，没有算子。"),
    "profiler-empty/flops": ("No FLOPs figure.", "没有 FLOPs 数据。"),
    "profiler-empty/comm-ops": ("No communication operators.", "没有通信算子。"),
    "profiler-empty/links": ("No communication links.", "没有通信链路。"),
    "profiler-empty/events": ("No trace events.", "没有 trace 事件。"),
    "profiler-empty/memory": ("No memory rows.", "没有显存记录。"),
    "profiler-empty/rows": ("No rows.", "没有数据行。"),
    "profiler-empty/data": ("No data pipeline figures.", "没有数据管道数据。"),
    "profiler-empty/cpu": ("No CPU figure.", "没有 CPU 数据。"),
    "profiler-json": ("The file does not parse as JSON: {detail}.", "无法解析为 JSON：{detail}。"),
    "profiler-json/not-object": ("Not the JSON object this file should hold.", "不是该文件应有的 JSON 对象。"),
    "profiler-json/events": ("{n:int} events do not decode (a cut or damaged file); the rest are read.",
                             "{n:int} 个事件无法解码（文件被截断或损坏）；其余事件已读取。"),
    "profiler-implausible/step-trace-sums": ("{n:int} steps where total is not end_point − start_point or iteration_interval "
                                             "is not fp_point − start_point.",
                                             "{n:int} 个 step 的 total 不等于 end_point − start_point，或 iteration_interval 不等于 "
                                             "fp_point − start_point。"),
    "profiler-implausible/step-trace-ops": ("{n:int} op durations differ from end_point − start_point.",
                                            "{n:int} 个算子耗时与 end_point − start_point 不符。"),
    "profiler-implausible/cluster-sums": ("{n:int} steps where receive_alone + collective_communication_alone is not "
                                          "communication_alone, or stage is not the step minus receive_alone.",
                                          "{n:int} 个 step 的 receive_alone + collective_communication_alone 不等于 "
                                          "communication_alone，或 stage 不等于 step 减 receive_alone。"),
    "profiler-implausible/type-percent": ("{n:int} types whose percent is not their share of the summed time (the percents "
                                          "add up to {total:num}).",
                                          "{n:int} 种算子类型的百分比与其耗时占比不符（百分比合计 {total:num}）。"),
    "profiler-implausible/flops-utilization": ("FLOPS_Utilization {value:pct} is outside 0–100%.",
                                               "FLOPS_Utilization {value:pct} 超出 0–100% 的范围。"),
    "profiler-rank/rank-size": ("Rank {rank} is not below the rank size {size:int} in the file name: the number may be a "
                                "device id, as older MindSpore wrote.",
                                "卡号 {rank} 不小于文件名中的卡数 {size:int}：该编号可能是较早 MindSpore 写入的 device id。"),
    "profiler-step-trace-row": ("{n:int} rows whose step_num is not a step number were skipped.",
                                "跳过 {n:int} 行 step_num 不是 step 编号的记录。"),
    "profiler-cluster-rows": ("One row only, where MindSpore writes the steps and then their average: read as step 1.",
                              "只有一行（MindSpore 通常先写各 step 再写平均值）：按第 1 个 step 读取。"),
    "profiler-keys": ("Keys not read: {keys}.", "未读取的键：{keys}。"),
    "profiler-not-read/msprof-analyze": ("msprof-analyze output not read (postmortem reads its cluster_step_trace_time.csv, "
                                         "cluster_communication.json and cluster_communication_matrix.json).",
                                         "未读取的 msprof-analyze 输出（postmortem 读取其 cluster_step_trace_time.csv、"
                                         "cluster_communication.json 与 cluster_communication_matrix.json）。"),
    "profiler-not-read/dataset-op-cpu": ("The CPU use of {n:int} dataset operators is not read (per operator, by op_id).",
                                         "未读取 {n:int} 个数据集算子的 CPU 占用（按 op_id 逐算子）。"),
    "profiler-not-read/export-kinds": ("{n:int} kinds of exported files not read ({kinds}).", "未读取的导出文件：{n:int} 种（{kinds}）。"),
    "profiler-not-read/prof-other": ("{count:int} files of this PROF folder not read (not a format postmortem knows).",
                                     "该 PROF 目录中有 {count:int} 个文件未读取（postmortem 不认识的格式）。"),
    "profiler-cluster-derived": ("msprof-analyze's cluster summary of the {n:int} per-rank profiler folders beside it (e.g. "
                                 "{example}), which are read instead; its rows are not counted twice.",
                                 "msprof-analyze 对旁边 {n:int} 个单卡 Profiler 目录（如 {example}）的集群汇总；改为读取这些目录，"
                                 "不重复计数。"),
    "profiler-cluster-stage-rows": ("{n:int} stage rows (each column the maximum over a pipeline stage's ranks) not read: the "
                                    "rank rows they are made from are.",
                                    "未读取 {n:int} 行 stage 汇总（每列为一个流水线 stage 各卡的最大值）：改为读取构成它们的各卡记录。"),
    "profiler-partition": ("Computing + Communication(Not Overlapped) + Free differs from Stage + Bubble by over 1% for "
                           "{n:int} rows ({rows}).",
                           "{n:int} 行（{rows}）的 Computing + Communication(Not Overlapped) + Free 与 Stage + Bubble 相差超过 1%。"),
    "profiler-units": ("The writer is known neither from the folder nor from the components: MB read as 2^20 bytes (torch_npu).",
                       "无法从目录或组件名判断写入方：MB 按 2^20 字节读取（torch_npu 的约定）。"),
    "profiler-no-step": ("No Step Id column (no schedule): the kernels have no step.", "没有 Step Id 列（未设置 schedule）：算子没有 step 归属。"),
    "profiler-covered/op-statistic": ("Not read: kernel_details.csv beside it has the same kernels (and the communication ops "
                                      "op_statistic.csv leaves out).",
                                      "未读取：旁边的 kernel_details.csv 有相同的算子（以及 op_statistic.csv 遗漏的通信算子）。"),
    "profiler-covered/trace-steps": ("The steps are taken from step_trace_time.csv beside it (the same Overlap Analysis sums).",
                                     "step 取自旁边的 step_trace_time.csv（相同的 Overlap Analysis 汇总）。"),
    "profiler-covered/inside-output": ("An msprof export inside MindSpore / torch_npu output: {target} is made from it and read "
                                       "instead.", "MindSpore / torch_npu 输出中的 msprof 导出：{target} 由它生成，改为读取 {target}。"),
    "profiler-covered/types-summed": ("The operator types are summed from {target}, which is read.", "算子类型由已读取的 {target} 汇总。"),
    "profiler-covered/timeline-steps": ("The steps are read from {target}; this timeline's events are not summed again.",
                                        "step 取自 {target}；不再重复汇总该时间线的事件。"),
    "profiler-covered/analyze-matrix": ("Per-link sizes of the operators in analyze/communication.json, which is read; link ends "
                                        "are ranks local to each group (msprof-analyze maps them with profiler_metadata.json).",
                                        "analyze/communication.json（已读取）中各算子的逐链路数据量；链路两端是各通信组内的局部卡号"
                                        "（msprof-analyze 借助 profiler_metadata.json 映射）。"),
    "profiler-superseded": ("An earlier export; the later {target} in the same folder is read.", "较早的导出；改为读取同目录中较新的 {target}。"),
    "profiler-trace-events": ("{n:int} trace events ({phases}).", "{n:int} 个 trace 事件（{phases}）。"),
    "profiler-trace-truncated": ("trace_view.json does not end with its closing bracket: the events up to the cut are read.",
                                 "trace_view.json 没有以右括号结尾：读取截断处之前的事件。"),
    "profiler-devices/trace": ("Several Overlap Analysis processes (devices) in one trace: the first is read.",
                               "一个 trace 中有多个 Overlap Analysis 进程（设备）：只读取第一个。"),
    "profiler-devices": ("Rows of {n:int} devices in one file ({devices}): all are read as this file's rank.",
                         "一个文件中有 {n:int} 个设备的记录（{devices}）：全部按该文件的卡号读取。"),
    "profiler-outside-steps": ("Device time outside every ProfilerStep window, not counted: {spent}.",
                               "不在任何 ProfilerStep 窗口内的设备时间，未计入：{spent}。"),
    "clause.named-duration": ("{name} {seconds:dur}", "{name} {seconds:dur}"),
    "profiler-bubble-overlapped": ("In {n:int} steps the p2p op time (Bubble) exceeds the exposed communication: only the "
                                   "exposed part is counted as bubble.",
                                   "{n:int} 个 step 中点对点算子时间（Bubble）超过了未被掩盖的通信：只把未被掩盖的部分计为流水线气泡。"),
    "profiler-preparing-in-free": ("The Preparing of {n:int} later steps lies inside Free and is not added again; only the first "
                                   "profiled step's is part of its step.",
                                   "后续 {n:int} 个 step 的 Preparing 已包含在 Free 中，不再重复计入；只有第一个 Profiler step 的计入该 step。"),
    "profiler-op-types-only": ("Operator totals per type only (no op_summary exported): the names are not known.",
                               "只有按算子类型的汇总（未导出 op_summary）：不知道算子名称。"),
    "profiler-first-iteration": ("msprof --analyze keeps each operator's first profiled iteration only.",
                                 "msprof --analyze 只保留每个算子第一个被采集的迭代。"),
    "profiler-step-trace-no-fp": ("{n:int} iterations have no FP start: only their total is known.",
                                  "{n:int} 个迭代没有前向开始点：只知道总耗时。"),
    "profiler-no-overlap": ("No Overlap Analysis events (a single device, or exported without --task-time and --hccl): the "
                            "timeline gives no step breakdown.",
                            "没有 Overlap Analysis 事件（单卡，或导出时未加 --task-time 与 --hccl）：时间线无法给出 step 耗时构成。"),
    "profiler-outside-iterations": ("{n:int} overlap events fall in no iteration and are left out.",
                                    "{n:int} 个 overlap 事件不属于任何迭代，未计入。"),
    "profiler-whole-capture": ("No Step Trace iterations in the timeline: one row per rank for the whole capture, as "
                               "msprof-analyze sums it.",
                               "时间线中没有 Step Trace 迭代：按 msprof-analyze 的做法，每张卡整个采集汇总为一行。"),
    "profiler-raw": ("{n:int} files of {what} in {folder}/: their exported files are read.",
                     "{folder}/ 中有 {n:int} 个{what}文件：读取由它们导出的文件。"),
    "profiler-raw-not-exported": ("{n:int} files of {what} in {folder}/ and nothing exported: run `{command}` to make the "
                                  "readable files.",
                                  "{folder}/ 中有 {n:int} 个{what}文件，但没有导出结果：运行 `{command}` 生成可读文件。"),
    "msprof-raw.sqlite": ("msprof's intermediate databases", "msprof 中间数据库"),
    "msprof-raw.data": ("raw profiling data (binary)", "原始性能数据（二进制）"),
    "profiler-metadata/rank": ("The capture metadata of device {device}: rank id {rank}.", "设备 {device} 的采集元数据：rank id 为 {rank}。"),
    "profiler-metadata/no-rank": ("The capture metadata of device {device}: no rank id (rank_id −1: not distributed).",
                                  "设备 {device} 的采集元数据：没有 rank id（rank_id 为 −1：非分布式）。"),
    "profiler-db-export": ("msprof's database export of the same data as its text export, which is read.",
                           "msprof 的数据库导出，内容与已读取的文本导出相同。"),
    "profiler-rank-id": ("device_{device} is rank {rank} (its info.json rank_id): the rank id is used.",
                         "device_{device} 是卡 {rank}（info.json 中的 rank_id）：采用 rank id。"),
    "profiler-logs": ("{count:int} log files of msprof itself, not read.", "msprof 自身的日志文件 {count:int} 个，未读取。"),
})

# profcorpus: older CANN per-iteration timeline exports (readers/profiler/msprof.py) and database
# exports (readers/profiler/db.py)
TEMPLATES.update({
    "profiler-listed": ("One of {n:int} such files of this folder: counted in the note on {target}.",
                        "本文件夹中 {n:int} 个同类文件之一：已计入 {target} 上的说明。"),
    "profiler-repeated": ("The same bytes as {target} (msprof writes this export whole into every iteration's file): "
                          "read once, from {target}.",
                          "与 {target} 字节完全相同（msprof 在每个迭代的文件里都写入完整数据）：只从 {target} 读取一次。"),
    "profiler-task-types": ("{n:int} tasks that are not compute ({kinds}): their communication operators are read from "
                            "hccl_*.json.",
                            "{n:int} 个非计算任务（{kinds}）：其通信算子从 hccl_*.json 读取。"),
    "profiler-covered/timeline-overlap": ("The steps are read from {target} (the same Iteration events, with the Overlap "
                                          "Analysis track); this file's steps are not counted again.",
                                          "step 从 {target} 读取（同样的 Iteration 事件，另含 Overlap Analysis 轨道）；"
                                          "本文件的 step 不再重复计数。"),
    "profiler-metadata/side": ("{name}: capture metadata (start and end clocks, a completion marker); nothing in it goes "
                               "into the tables.",
                               "{name}：采集元数据（起止时钟、完成标记）；其中没有进入数据表的内容。"),
    "profiler-db": ("Database read: {tables}.", "已读取数据库：{tables}。"),
    "profiler-db-tables": ("Nothing read from this database: {detail}.", "未从该数据库读取任何内容：{detail}。"),
    "profiler-db-export/analysis": ("The communication analysis as a database; its text form (communication.json) beside "
                                    "it is read.", "通信分析的数据库形式；读取其旁边的文本形式（communication.json）。"),
    "profiler-columns/db": ("Some tables or columns of the schema read are not in this database ({missing}); the rest is "
                            "read.", "该数据库缺少部分所读的表或列（{missing}）；其余内容照常读取。"),
})

# Profiler values checked at the door (readers/profiler/common.py: guard, Durations, open_text).
TEMPLATES.update({
    "profiler-utf8": ("{n:int} bytes are not UTF-8; they were replaced and the rest of the file is read.",
                      "{n:int} 个字节不是 UTF-8 编码，已替换；文件其余内容照常读取。"),
    "profiler-utf8/names": ("{n:int} kernels have no readable name or type (empty, or bytes that are not UTF-8); their time "
                            "is still counted.",
                            "{n:int} 个 kernel 没有可读的名称或类型（为空，或含非 UTF-8 字节）；其耗时仍计入统计。"),
    "profiler-bad-duration": ("{n:int} values of column {column} dropped: {non_finite:int} not finite (NaN, inf), "
                              "{negative:int} negative, {absurd:int} longer than a day.",
                              "列 {column} 中 {n:int} 个值已丢弃：{non_finite:int} 个非有限值（NaN、inf），"
                              "{negative:int} 个负值，{absurd:int} 个超过一天。"),
    "profiler-duplicate-steps": ("{n:int} rows repeat a step already in the file; the last row of each step is kept "
                                 "({steps:int} steps).",
                                 "{n:int} 行与文件中已有的 step 重复；每个 step 保留最后一行（共 {steps:int} 个 step）。"),
    "profiler-steps-unordered": ("The steps are out of order; they are read in step order.",
                                 "step 顺序错乱；已按 step 顺序读取。"),
    "profiler-entries-dropped": ("{n:int} entries are not of the expected shape and were dropped; {kept:int} were read.",
                                 "{n:int} 个条目结构不符合预期，已丢弃；已读取 {kept:int} 个。"),
})

# postmortem's own training callback (readers/callback.py)
TEMPLATES.update({
    "callback-no-header": ("The callback's records have no header line: the steps are read, but the versions, devices and "
                           "settings it would give are not known.",
                           "回调记录文件缺少文件头：已读取各 step 的记录，但版本、设备与配置信息未知。"),
    "callback-format-newer": ("The records are in format {format}, newer than the format {readable} this postmortem reads: "
                              "what it understands is read.",
                              "记录文件格式为 {format}，比本 postmortem 可读的格式 {readable} 更新：仅读取能识别的部分。"),
    "callback-line-unreadable": ("{n:int} record lines do not parse (a line cut short when the process stopped); they were "
                                 "skipped.",
                                 "{n:int} 行记录无法解析（进程停止时写了一半的行）；已跳过。"),
    "callback-no-end": ("The callback never recorded the end of training: the process stopped after step {step:step} without "
                        "an exception or exit reaching it (killed, out of memory, a hard crash).",
                        "回调没有记录到训练结束：进程在 step {step:step} 之后停止，且没有异常或正常退出被回调捕获（被杀死、内存不足或硬崩溃）。"),
})

TEMPLATES.update({
    # lane ranks (issue 21): ranks pasted one after another, steps per epoch that change (readers/textlog/)
    "log-inferred/ranks-blocks": ("The records come in {n:int} blocks, each starting again from the first block's counter "
                                  "({first:int}), with no rank on the lines, nothing but log lines between the blocks (no "
                                  "error, no launch's banner) and no block starting after the one before ended: read as "
                                  "ranks 0 to {n:int}-1 in order (ranks' logs pasted one after another). If they are "
                                  "relaunches instead, each block is a launch.",
                                  "记录分为 {n:int} 段，每段的计数都从第一段的起始值（{first:int}）重新开始；行内没有 rank，"
                                  "段与段之间只有日志行（没有报错，也没有启动时的打印），也没有一段在前一段结束之后才开始："
                                  "按顺序读作 rank 0 到 {n:int}-1（多个 rank 的日志先后拼接）。若实为多次重新拉起的训练，"
                                  "则每段是一次启动。"),
})

TEMPLATES.update({
    # lane ranks (issue 21): an epoch length that changes where the epochs jump (readers/textlog/ _epoch_parts)
    "log-steps-per-epoch/parts": ("The file holds {n:int} parts with their own steps per epoch ({counts}, the largest step "
                                  "of each part's epochs): the length changes at epoch {epoch:int}, where the epochs jump "
                                  "(another run's lines pasted after, or a run on another dataset size); each part's "
                                  "global steps use its own length.",
                                  "文件中有 {n:int} 段记录，各有自己的每 epoch 步数（{counts}，取各段 epoch 内的最大 step）："
                                  "在 epoch {epoch:int} 处 epoch 号跳变、每 epoch 步数随之改变（其后拼接的是另一次训练的日志，"
                                  "或换了数据集大小）；每段的全局 step 按该段自己的步数计算。"),
})

TEMPLATES.update({
    # lane ranks (issue 21): a rank or a counter given by the line above (readers/textlog/)
    "log-inferred/ranks-carried": ("{n:int} lines print no rank of their own: each takes the rank named by the line above it "
                                   "(a `Device ID : 3` line before the records, or the grep prefix of the line it continues).",
                                   "{n:int} 行没有打印自己的 rank：每行取上方那一行给出的 rank（记录之前的 `Device ID : 3` 行，"
                                   "或其所接续那一行的 grep 前缀）。"),
})

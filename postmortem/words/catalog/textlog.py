"""The words of the text-log grammar's data-quality notes (readers/textlog)."""

from __future__ import annotations

TEMPLATES: dict[str, tuple[str, str]] = {
    "log-keys-unread": ("{n:int} training lines print keys that no family of the text-log lexicon takes, so their values "
                        "are not read: {keys}. The first line: {line:q}. A spelling of a known family is one line in "
                        "readers/textlog/lexicon.py.",
                        "{n:int} 行训练日志中有文本日志词表（lexicon）不认识的字段，其数值未读取：{keys}。第一行为：{line:q}。"
                        "若它是已知字段的另一种写法，在 readers/textlog/lexicon.py 中加一行即可。"),
    "log-inferred/networks": ("{n:int} lines at the same counters print the losses of {n:int} networks of one iteration "
                              "(a generator and a discriminator, an actor and a critic): {records:int} records, the first "
                              "line's loss as the loss and the others' as its parts.",
                              "同一计数器下的 {n:int} 行打印的是同一次迭代中 {n:int} 个网络的 loss（生成器与判别器、actor 与 critic）："
                              "合为 {records:int} 条记录，第一行的 loss 作为 loss，其余作为其分项。"),
    "log-inferred/epoch-fraction": ("The records count the fraction of epochs done (a Trainer's 'epoch': 0.66): each step is that "
                                    "fraction × {n:int} steps per epoch, from the run's closing summary ({total:int} steps); "
                                    "records that print the same rounded fraction are placed one step apart.",
                                    "记录只打印已完成的 epoch 比例（Trainer 的 'epoch': 0.66）：step = 该比例 × 每 epoch {n:int} 个 step，"
                                    "由训练结束时的汇总行得出（共 {total:int} 个 step）；打印同一舍入比例的记录依次相隔一个 step。"),
    "log-inferred/epoch-fraction-ordinal": ("The {n:int} records count only the fraction of epochs done and no summary gives the "
                                            "run's steps: their steps are their order (1, 2, ...).",
                                            "{n:int} 条记录只打印已完成的 epoch 比例，且没有汇总行给出总 step 数：以其顺序（1, 2, …）作为 step。"),
    "log-inferred/stages": ("The lines name {n:int} stages of one loop (\"Stage 2 Epoch 1\"), each counting its epochs from the "
                            "start again: each stage's steps follow the last one's on one axis.",
                            "日志行标出同一训练中的 {n:int} 个阶段（如 \"Stage 2 Epoch 1\"），每个阶段的 epoch 重新计数："
                            "各阶段的 step 依次接在前一阶段之后，放在同一条 step 轴上。"),
    "log-inferred/part-lines": ("{n:int} lines print only named parts of the loss (\"con_loss: 0.0, sty_loss: 2.4e-05\") "
                                "right after a record's loss: they are that record's parts, not records of their own.",
                                "{n:int} 行只打印 loss 的分项（如 \"con_loss: 0.0, sty_loss: 2.4e-05\"），紧跟在一条记录的 loss 之后："
                                "它们是该记录的分项，而不是单独的记录。"),
    "log-inferred/validation-bars": ("{n:int} progress bars print no epoch and have totals none of the epoch bars have: "
                                     "they are the validation loop's, kept apart from training.",
                                     "{n:int} 个进度条没有打印 epoch，且总数与各 epoch 的进度条都不同：它们属于验证循环，与训练记录分开。"),
    "log-inferred/time-cumulative": ("The {n:int} records print the time elapsed since the start, not a step's time (it "
                                     "grows by about the first record's time at each): each record's step time is the "
                                     "difference from the record before over the steps between.",
                                     "{n:int} 条记录打印的是从开始起累计的耗时，而非单步耗时（每条约增加第一条的耗时）："
                                     "每条记录的单步耗时取与前一条之差除以其间的 step 数。"),
    "log-steps-per-epoch/print-interval": ("{n:int} steps per epoch: the lines print every {every:int} steps of the run, "
                                           "so each epoch's first printed step says where the one before ended.",
                                           "每个 epoch {n:int} 个 step：日志每 {every:int} 个全局 step 打印一次，"
                                           "每个 epoch 第一次打印的 step 号说明了上一个 epoch 在哪里结束。"),
}

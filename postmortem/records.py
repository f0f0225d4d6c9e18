"""The format of the records postmortem's training callback writes: one place for writer and reader.

The callback (``postmortem/callback.py``, in the training process) writes, per rank and per launch,
one JSON-lines file ``<output_dir>/postmortem/rank_<R>/postmortem-records-<launch>.jsonl``:

* line 1, the header (``"pm": "header"``): versions, device, rank, parallel context, parameter
  count, first batch's shapes, sink mode and size, dataset, training arguments (secrets redacted);
* one line per step, or per sink of ``n`` steps (``"n"``): the record of the last step of the span;
* ``"pm": "epoch"`` at each epoch end, ``"pm": "end"`` when training ends or the process exits
  (with the exception when it was one).

Every line carries the launch id (``"l"``). Step records are kept compact: short keys, device
values (loss, lr, loss scale, overflow, grad norm) only on the steps they were read.

This module imports nothing heavy: the reader uses it, and it must never import MindSpore.
"""

from __future__ import annotations

import re

FORMAT = 1
FOLDER = "postmortem"
FILE_RE = re.compile(r"^postmortem-records-([A-Za-z0-9_.\-]+)\.jsonl$")
RECORDER = "postmortem.callback"  # the setting `recorder` says which writer and format made the run's records


def file_name(launch: str) -> str:
    return f"postmortem-records-{launch}.jsonl"


# Step-record keys: short on purpose (a record per step of a run of 10^6 steps).
STEP = "s"  # the last step of the span (global, as Model.train counts cur_step_num)
STEPS = "n"  # steps the record spans (1; N per sink)
END = "t"  # wall time at the span's end, unix seconds
IN_STEP = "in"  # seconds in step (begin -> end), summed over the span
GAP = "gap"  # seconds between the previous step's end and this step's begin (host / data wait), summed
LOSS, LR, LOSS_SCALE, OVERFLOW, GRAD_NORM, TOKENS = "loss", "lr", "ls", "of", "gn", "tok"
LAUNCH = "l"
KIND = "pm"  # header / epoch / end; absent on step records

# Which canonical tag each device or host value of a step record is read into.
TAGS = {LOSS: "loss", LR: "lr", LOSS_SCALE: "loss_scale", OVERFLOW: "overflow", GRAD_NORM: "grad_norm", TOKENS: "tokens"}

# Argument names whose values are not written: they look like credentials.
SECRET_RE = re.compile(r"(?:^|[^a-z])(?:token|password|passwd|secret|key|credential|auth)s?(?:$|[^a-z])", re.IGNORECASE)
# ... except these, which are settings that merely contain the word.
NOT_SECRET = frozenset({"max_tokens", "num_tokens", "tokens", "pad_token_id", "bos_token_id", "eos_token_id",
                        "sort_keys", "keep_checkpoint_max"})
REDACTED = "<redacted>"


def is_secret(name: str) -> bool:
    return name.lower() not in NOT_SECRET and not name.lower().endswith("_token_id") and bool(SECRET_RE.search(name))

"""The text-log grammar: every line shape the text-log reader knows, each declared once.

A shape names its writer and an example line from a real log, the literal anchors a line must
hold, the fields it takes (pattern, unit, canonical tag), how its step is counted, and the events
and settings it gives. Three readers use this table and nothing else:

- ``logparse`` reads one line at a time from it: the reference, and the path without a compiler;
- ``_logscan.c`` is handed the anchors (and, for the few hot shapes it parses itself, the field
  codes), so a shape added here only is read right, through the lines the C scanner hands back;
- ``docs/formats/textlogs.md`` describes the same shapes for people.

The grammar is ASCII: ``re.ASCII`` everywhere (digits are 0-9, spaces are ASCII spaces), as every
writer prints its numbers and keys. Text around them may be anything.

How a line is read (logparse does exactly this):

1. The first shape (in SHAPES order) whose anchors all occur in the line and whose required
   fields' keys occur takes it. No shape: the line gives nothing.
2. Each field: the first readable match of its pattern (searched from the shape's ``fields_from``
   literal, else in the whole line). Its key occurring without a readable value makes the value
   unreadable: left out and counted. A required field unreadable makes the line unreadable.
3. Independently, a line with ``ERROR``, a ``Traceback`` header or a Python exception line
   (``RuntimeError: ...``) is an error event (ERRORS below).

Steps (``Shape.step``): ``epoch_step``: (epoch - 1) x steps per epoch + step in epoch, from the
line (``step`` alone when it prints no epoch); ``global``: the printed step; ``in_epoch``: the
epoch and step in epoch printed, steps per epoch from the file (see textlog); ``epoch_end``: the
last step of the printed epoch; ``before`` / ``next``: the step of the closest line with a step
before / after it.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from typing import Callable

from ...model import CANONICAL_TAGS, canonical_tag
from . import lexicon

# A number as writers print them: decimal, exponent, nan / inf in any case (what float() reads).
NUM = r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|(?i:nan|inf(?:inity)?))"
# What may follow a value: a value glued to more text ("1.2.3", "[1 31049]") is no value.
END = r"(?=$|[\s,;\]})/])"
_WORD_END = r"(?![\w])"  # after a unit that may end a sentence ("42.61 min.")
_NUM_RE = re.compile(NUM + r"\Z", re.ASCII)
MAX_COUNT_DIGITS = 9  # epoch and step counters: more digits are no counter (and would overflow a step)

# The literals of the lines read by their fields: the lexicon's writers' anchors.
FIELD_WORDS = tuple(dict.fromkeys(a for w in lexicon.WRITERS for a in w.anchors))
STEP_RULES = ("none", "epoch_step", "global", "in_epoch", "epoch_end", "before", "next", "before_or_epoch")


def number(text: str) -> float | None:
    """A value's text as a number, or None: a plain NUM only (``1_000`` and ``0x10`` are not)."""
    return float(text) if _NUM_RE.match(text) else None


def count(text: str) -> int | None:
    """An epoch / step counter: digits only, at most MAX_COUNT_DIGITS."""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= MAX_COUNT_DIGITS else None


def boolean(text: str) -> float | None:
    return {"True": 1.0, "False": 0.0}.get(text)


CONVERT: dict[str, Callable[[str], float | int | None]] = {
    "number": number,
    "count": count,
    "bool": boolean,
    "flag": lambda text: 1.0,  # the pattern matched: the line says so
}
COUNTERS = ("epoch", "step_in", "steps_total", "step")  # fields that go to a line's step columns


@dataclass(frozen=True)
class Field:
    """One value of a shape. ``pattern``'s first group that matched is the value's text."""

    name: str  # a counter (COUNTERS) or the value's column
    pattern: str
    key: str | None = None  # the key alone: when it occurs but ``pattern`` does not match, the value is unreadable
    tag: str | None = None  # canonical tag; None: used by the shape (events, steps), not a scalar
    raw: str | None = None  # the tag as the writer names it
    scale: float = 1.0  # to SI units: ms -> s is 1e-3
    kind: str = "number"  # number | count | bool | flag
    source: str | None = None  # a source other than the shape's (per-epoch averages: log:timemonitor)
    whole_line: bool = False  # searched in the whole line even when the shape has ``fields_from``
    nones: tuple[str, ...] = ()  # texts after the key that mean "no value here" (not unreadable)

    def __post_init__(self) -> None:
        object.__setattr__(self, "regex", re.compile(self.pattern, re.ASCII))
        object.__setattr__(self, "key_regex", re.compile(self.key, re.ASCII) if self.key else None)


@dataclass(frozen=True)
class Event:
    """An event a line of the shape gives. ``detail`` makes its text from the line's values and text."""

    kind: str  # model.EVENT_KINDS
    detail: Callable[[dict, str], str]
    when: Callable[[dict], bool] = lambda values: True
    duration: str | None = None  # the field holding its duration (seconds once scaled)
    step: str = "own"  # own | before | next


@dataclass(frozen=True)
class SettingRule:
    """A setting a line gives: ``pattern``'s group 1 is the value; with ``key`` None, group 1 is
    the key and group 2 the value."""

    pattern: str
    key: str | None = None
    keys: tuple[str, ...] = ()  # with key None: the keys taken

    def __post_init__(self) -> None:
        object.__setattr__(self, "regex", re.compile(self.pattern, re.ASCII))


@dataclass(frozen=True)
class Shape:
    name: str
    source: str
    writer: str  # who prints it: the source file and the versions
    example: str  # one line of a real log (see example_from)
    example_from: str  # where the example line is from
    anchors: tuple[str, ...]  # literals the line must all hold
    fields: tuple[Field, ...] = ()
    required: tuple[str, ...] = ()  # fields whose key must occur (else the line is not this shape)
    step: str = "none"  # STEP_RULES
    fields_from: str | None = None  # fields are searched from this literal's first occurrence on
    events: tuple[Event, ...] = ()
    settings: tuple[SettingRule, ...] = ()
    pairs: str | None = None  # key: value pairs named by the line itself: "kv", "json", "mindyolo"
    rename: dict = field(default_factory=dict)  # pairs: key -> canonical tag
    steps_per_epoch: tuple[str, str] | None = None  # (epoch time, step time) fields: steps_total = round(a / b)
    fast: str | None = None  # the C scanner's parser for this shape (_logscan.c), if it has one

    def __post_init__(self) -> None:
        assert self.step in STEP_RULES, self.step
        names = [f.name for f in self.fields]
        assert set(self.required) <= set(names), self.name
        object.__setattr__(self, "loss_field", any(f.name == "loss" for f in self.fields))


# --------------------------------------------------------------------------- small pattern pieces


def _key(name: str) -> str:
    """A key not glued to a word before it: ``loss:`` but not ``lm_loss:``."""
    return r"(?<![\w])" + name


def _num_after(key: str, unit: str = "", bracket: bool = False, end: str = END) -> str:
    """``key`` then a number (optionally in [brackets]) then ``unit``, not glued to more text."""
    plain = rf"({NUM})\s*{unit}{end}" if unit else rf"({NUM}){end}"
    if bracket:
        return rf"{key}\s*(?:\[\s*({NUM})\s*\]{unit}|{plain})"
    return rf"{key}\s*{plain}"


def _values(values: dict, *names: str) -> str:
    return ", ".join(f"{n}={values[n]!r}" for n in names if n in values)


def _text(values: dict, text: str) -> str:
    return text.strip(" \t\n\r\f\v")[:300]


def _tensor_value(dtype: str) -> str:
    """A MindSpore Tensor's printed value: ``Tensor(shape=[1], dtype=Float32, value= [ 1.85e-01])``;
    0.x printed no ``value=`` (``Tensor(shape=[1], dtype=Float32, [ 1.0856101e+01])``)."""
    return rf"Tensor\(shape=\[[^\]]*\],\s*dtype={dtype},\s*(?:value=\s*)?"


# --------------------------------------------------------------------------- the shapes

def writer_shapes(writers) -> tuple[Shape, ...]:
    """The lexicon's free-form writers as shapes: their lines are read by their fields."""
    return tuple(
        Shape(f"fields:{w.anchors[0]}", "log:fields",
              f"any writer ({w.name}): a line read by its fields (textlog/lexicon.py FAMILIES): a loss-family value and a counter",
              w.example, w.source, anchors=w.anchors, step=w.step, pairs="fields")
        for w in writers
    )


def with_writers(shapes: tuple[Shape, ...], writers) -> tuple[Shape, ...]:
    """``shapes`` with its free-form writers' shapes replaced by those of ``writers`` (a lexicon of a test's)."""
    at = [i for i, s in enumerate(shapes) if s.pairs == "fields" and s.name.startswith("fields:")]
    return shapes[: at[0]] + writer_shapes(writers) + shapes[at[-1] + 1 :]


MF_WRITER = (
    "MindFormers MFLossMonitor, mindformers/core/callback/callback.py: r0.3-r0.6 `Epoch:[..], step:[..], "
    "loss:[cur/mean], time: ms`; r0.7-r1.2 `{ Epoch:[..], step:[..], loss: , per_step_time: ms`; r1.3 adds "
    "global_norm; r1.4-r1.8 train_throughput_per_npu (TFLOPS); r1.7-r1.8 lm_loss, load_balancing_loss, "
    "mtp_loss. Also the pynative trainer (mindformers/pynative/callback/loss_callback.py): `{ step:[..], ...}`"
)

SHAPES: tuple[Shape, ...] = (
    Shape(
        "mindformers",
        "log:mindformers",
        MF_WRITER,
        "2025-04-07 15:34:27,308 - [mindformers/core/callback/callback.py:529] - INFO - { Epoch:[  1/  2], "
        "step:[    3/   19], loss: 9.673, per_step_time: 1754ms, lr: 9.981987e-06, overflow cond: False, "
        "loss_scale: 1.0, global_norm [10.579812], train_throughput_per_npu: 170.523T",
        "conformance/mf-docs-llama2-13b-log (MindSpore docs, high_availability.md)",
        anchors=("step:[", "loss"),
        fields_from="step:[",
        fields=(
            Field("epoch", r"[Ee]poch:\s*\[\s*(\d+)/", kind="count", whole_line=True),
            Field("step_in", r"step:\[\s*(\d+)[/\]]", key=r"step:\[", kind="count"),
            Field("steps_total", r"step:\[\s*\d+/\s*(\d+)\]", kind="count"),
            # r0.3-r1.2 non-sink print [current/mean]: the current value
            Field("loss", _key(r"loss:") + rf"\s*\[?\s*({NUM}){END}", key=_key("loss:"), tag="loss", raw="loss"),
            Field("lm_loss", _num_after(_key("lm_loss:")), key=_key("lm_loss:"), tag="lm_loss", raw="lm_loss"),
            Field("load_balancing_loss", _num_after(_key("load_balancing_loss:")), key=_key("load_balancing_loss:"),
                  tag="load_balancing_loss", raw="load_balancing_loss"),
            Field("mtp_loss", _num_after(_key("mtp_loss:")), key=_key("mtp_loss:"), tag="mtp_loss", raw="mtp_loss"),
            # per_step_time r0.7+; time r0.3-r0.6
            Field("step_time", rf"{_key('(?:per_step_)?time:')}\s*({NUM})\s*ms{END}", key=_key("(?:per_step_)?time:"),
                  tag="step_time", raw="per_step_time", scale=1e-3),
            # copies of the r0.3 monitor in the tutorials print the step's time in s ("time:8.120287s")
            Field("step_time_s", rf"{_key('time:')}\s*({NUM})\s*s{END}", tag="step_time", raw="time"),
            Field("lr", _num_after(_key("lr:"), bracket=True), key=_key("lr:"), tag="lr", raw="lr", nones=("None",)),
            Field("overflow", r"overflow cond:\s*(True|False)(?![\w])", key="overflow cond:", tag="overflow",
                  raw="overflow cond", kind="bool"),
            Field("loss_scale", _num_after(_key("loss_scale:"), bracket=True), key=_key("loss_scale:"),
                  tag="loss_scale", raw="loss_scale", nones=("unavailable", "False", "None")),
            # r1.3+: "global_norm: [1.31049]"; some prints lack the colon ("global_norm [10.579812]")
            Field("global_norm", _num_after(_key("global_norm:?"), bracket=True), key=_key("global_norm:?"),
                  tag="grad_norm", raw="global_norm", nones=("None",)),
            Field("grad_norm", _num_after(_key("grad_norm:")), key=_key("grad_norm:"), tag="grad_norm", raw="grad_norm"),
            Field("tflops_npu", _num_after(_key("train_throughput_per_npu:"), unit="T"),
                  key=_key("train_throughput_per_npu:"), tag="tflops_per_device", raw="train_throughput_per_npu"),
            # the pynative trainer prints "throughput: 123.45T": TFLOPS per device, like the line above
            Field("tflops_py", _num_after(_key("throughput:"), unit="T"), key=_key("throughput:"),
                  tag="tflops_per_device", raw="throughput"),
        ),
        required=("step_in", "loss"),
        step="epoch_step",
        events=(
            Event("overflow", lambda v, t: f"loss_scale={v.get('loss_scale')}", when=lambda v: v.get("overflow") == 1.0),
        ),
        fast="mindformers",
    ),
    Shape(
        "mindformers-progress",
        "log:mindformers",
        "MindFormers MFLossMonitor r0.7-r1.8: the progress line after each monitor line (samples per second per device)",
        "- INFO -    0.0% |                                                  | 0.00600 samples/s/p  25 days, 2:07:47 }",
        "conformance/mf-docs-skipdata-log (MindSpore docs, skip_data_and_ckpt_health_monitor.md)",
        anchors=("samples/s/p",),
        fields=(Field("samples", rf"({NUM})\s*samples/s/p", key="samples/s/p", tag="samples_per_s", raw="samples/s/p"),),
        required=("samples",),
        step="before",
        fast="progress",
    ),
    Shape(
        "mindformers-skip",
        "log:mindformers",
        "MindFormers r1.6+ skip-data (use_skip_data_by_global_norm), callback.py abnormal_global_norm_check: "
        "printed only when the step's update was skipped",
        "- INFO - opt_global_step: 0, skip_data_grad_norm_threshold: 3.0, is_skip: [ True]",
        "conformance/mf-docs-skipdata-log",
        anchors=("is_skip:",),
        fields=(
            Field("is_skip", r"is_skip:\s*\[?\s*(True|False)(?![\w])", key="is_skip:", kind="bool"),
            Field("threshold", _num_after("skip_data_grad_norm_threshold:")),
            Field("opt_global_step", r"opt_global_step:\s*(\d+)", kind="count"),
        ),
        required=("is_skip",),
        events=(
            Event(
                "skip",
                lambda v, t: "update skipped: global norm at or over skip_data_grad_norm_threshold "
                f"{v.get('threshold')} (opt_global_step {v.get('opt_global_step')})",
                when=lambda v: v.get("is_skip") == 1.0,
                step="before",
            ),
        ),
    ),
    Shape(
        "mindformers-norm-check",
        "log:mindformers",
        "MindFormers r1.6+ callback.py abnormal_global_norm_check: the count of consecutive skipped steps, or "
        "check_for_global_norm's notes (the skip itself is the is_skip line; a stop is the exception line after)",
        "- INFO - Current global norm [44.313248] of step 1 has been 1 consecutive times greater than threshold: 3.0",
        "conformance/mf-docs-skipdata-log",
        anchors=("global norm ",),
        fields=(Field("of_step", r"of step\s*(\d+)", kind="count"),),
    ),
    Shape(
        "mindformers-checkpoint",
        "log:mindformers",
        "MindFormers r1.3+ CheckpointMonitor.print_savetime (callback.py): after each save, with its duration",
        "2025-04-07 15:40:01,112 - [mindformers/core/callback/callback.py:1639] - INFO - Finish saving ckpt of "
        "epoch 1 step 500 using 12.345 seconds",
        "rebuilt from the writer's format string (no real log seen)",
        anchors=("Finish saving ",),
        fields=(Field("duration", _num_after(r"using", unit="seconds", end=_WORD_END), key=r"using"),),
        events=(Event("checkpoint_save", _text, duration="duration", step="before"),),
    ),
    Shape(
        "eval-result",
        "log:eval",
        "MindSpore LossMonitor in Model.fit (train/callback/_loss_monitor.py, 2.x): `Eval result: epoch N, metrics: "
        "{..}`; MindFormers EvalCallBack (callback.py): `Eval result: {..}, eval time is X s.`",
        "Eval result: epoch 1, metrics: {'mae': np.float32(0.8844678)}",
        "a real MindSpore 2.10 Model.fit (tests/fixtures/logs/make_mindspore_fit_log.py)",
        anchors=("Eval result:",),
        fields=(Field("duration", _num_after(r"eval time is", unit="s", end=_WORD_END), key=r"eval time is"),),
        step="before",
        pairs="eval",
        events=(Event("eval", _text, duration="duration", step="before"),),
    ),
    Shape(
        "timemonitor-eval",
        "log:timemonitor",
        "MindSpore TimeMonitor in eval mode (train/callback/_time_monitor.py, 2.x): the eval pass's time",
        "Eval epoch time: 3.830 ms, per step time: 1.915 ms",
        "a real MindSpore 2.10 Model.fit (tests/fixtures/logs/make_mindspore_fit_log.py)",
        anchors=("Eval epoch time:",),
        fields=(Field("duration", _num_after("epoch time:", unit="ms"), key="epoch time:", scale=1e-3),),
        events=(Event("eval", _text, duration="duration", step="before"),),
    ),
    Shape(
        "modelzoo-outputs",
        "log:modelzoo",
        "MindSpore model zoo LossCallBack of the BERT / GPT family (src/utils.py, mindtransformer): the step is "
        "cur_step_num (global in the launch); outputs are (loss, overflow, loss scale) of "
        "TrainOneStepWithLossScaleCell",
        "epoch: 0, current epoch percent: 0.037, step: 10, outputs are (Tensor(shape=[1], dtype=Float32, value= "
        "[ 1.85208678e-01]), Tensor(shape=[], dtype=Bool, value= True), Tensor(shape=[], dtype=Float32, value= 4.1943e+06))",
        "conformance/mf-stacking-gpu-log",
        anchors=("outputs are",),
        fields=(
            Field("epoch", r"epoch:\s*(\d+)(?:\.0)?(?![\d.])", kind="count"),  # 0.x printed "epoch: 0.0"
            Field("step", _key(r"step:\s*(\d+),"), key=_key("step:"), kind="count"),
            # (a copy that prints a list: "outputs are [2.3012]")
            Field("loss", r"outputs are\s*[(\[]?\s*(?:" + _tensor_value(r"\w+") + rf"\[?\s*)?({NUM}){END}",
                  key="outputs are", tag="loss", raw="loss"),
            Field("overflow", _tensor_value("Bool") + r"(True|False)\)", tag="overflow", raw="overflow", kind="bool"),
            Field("loss_scale", _tensor_value("Bool") + r"(?:True|False)\),\s*" + _tensor_value(r"\w+") + rf"\[?\s*({NUM}){END}",
                  tag="loss_scale", raw="loss scale"),
        ),
        required=("step", "loss"),
        step="global",
        events=(Event("overflow", lambda v, t: f"loss_scale={v.get('loss_scale')}", when=lambda v: v.get("overflow") == 1.0),),
    ),
    Shape(
        "modelzoo-epoch",
        "log:modelzoo",
        "MindSpore model zoo ResNet LossCallBack.on_train_epoch_end (official/cv/ResNet/src/callback.py), sink mode: "
        "steps per epoch = round(epoch time / per step time); the times are epoch averages",
        "2023-02-20 10:01:18,405:INFO:epoch: [1/90] loss: 5.282135, epoch time: 183.647 s, per step time: 588.613 ms",
        "conformance/ms-models-resnet50-8p-log (mindspore-ai/models, ResNet README)",
        anchors=("epoch: [", "epoch time:"),
        fields=(
            Field("epoch", r"epoch:\s*\[\s*(\d+)/", kind="count"),
            Field("loss", _num_after(_key("loss:")), key=_key("loss:"), tag="loss", raw="loss"),
            Field("epoch_time", _num_after("epoch time:", unit="s"), key="epoch time:", tag="epoch_time",
                  raw="epoch time", source="log:timemonitor"),
            Field("step_time", _num_after("per step time:", unit="ms"), key="per step time:", tag="step_time",
                  raw="per step time", scale=1e-3, source="log:timemonitor"),
            Field("fps", rf"fps:\s*({NUM})(?:\s*img/s)?{END}", key="fps:", tag="fps", raw="fps"),
        ),
        required=("epoch", "epoch_time", "step_time"),
        step="epoch_end",
        steps_per_epoch=("epoch_time", "step_time"),
    ),
    Shape(
        "modelzoo-step",
        "log:modelzoo",
        "MindSpore model zoo ResNet LossCallBack.on_train_step_end (official/cv/ResNet/src/callback.py) and its "
        "copies (MindOCR adds fps), non-sink mode: per step time is the mean since the last print",
        "2023-02-17 11:43:14,405:INFO:epoch: [1/10] step: [10/85], lr: 0.001000, loss: 1.487435, per step time: "
        "3096.616 ms, fps: 16.54 img/s",
        "mindspore-lab/mindocr issue 77, a log pasted by its author",
        anchors=("epoch: [", "step: ["),
        fields=(
            Field("epoch", r"epoch:\s*\[\s*(\d+)/", kind="count"),
            Field("step_in", r"step:\s*\[\s*(\d+)/", key=r"step:\s*\[", kind="count"),
            Field("steps_total", r"step:\s*\[\s*\d+/\s*(\d+)\]", kind="count"),
            Field("lr", _num_after(_key("lr:")), key=_key("lr:"), tag="lr", raw="lr"),
            Field("loss", _num_after(_key("loss:")), key=_key("loss:"), tag="loss", raw="loss"),
            Field("step_time", _num_after("(?:per|avg) step time:", unit="ms"), key="(?:per|avg) step time:", tag="step_time",
                  raw="per step time", scale=1e-3),
            Field("fps", rf"fps:\s*({NUM})(?:\s*img/s)?{END}", key="fps:", tag="fps", raw="fps"),
        ),
        required=("epoch", "step_in"),
        step="epoch_step",
    ),
    Shape(
        "modelzoo-eval",
        "log:modelzoo",
        "MindSpore model zoo EvalCallBack (official/cv/ResNet/src/callback.py and its copies): `epoch: N, acc: X, eval_cost:S`",
        "2023-02-20 10:04:02,118:INFO:epoch: 2, acc: 0.31244, eval_cost:35.17",
        "rebuilt from the writer's format string (no real log seen)",
        anchors=("eval_cost:",),
        fields=(Field("duration", _num_after("eval_cost:"), key="eval_cost:"),),
        events=(Event("eval", _text, duration="duration", step="before"),),
    ),
    Shape(
        "mindyolo-accumulate",
        "log:mindyolo",
        "MindYOLO trainer_factory.py train_step with gradient accumulation: a dropped (overflowing) step, or an "
        "applied accumulated update",
        "2024-12-25 09:58:34,125 [WARNING] Epoch 1/200, Step 100/3995, accumulate: 4, this step grad overflow, drop. "
        "Loss scale adjust to 1024.0",
        "rebuilt from the writer's format string (no real log seen)",
        anchors=("Epoch ", "accumulate:"),
        fields=(
            Field("epoch", r"Epoch\s*(\d+)/", kind="count"),
            Field("step_in", r"Step\s*(\d+)/", kind="count"),
            Field("steps_total", r"Step\s*\d+/(\d+)", kind="count"),
            Field("dropped", r"(grad overflow, drop)", kind="flag"),
            Field("loss_scale", _num_after("Loss scale adjust to")),
        ),
        required=("epoch", "step_in"),
        step="epoch_step",
        events=(
            Event("overflow", lambda v, t: "the update was skipped (accumulated step dropped)"
                  + (f"; loss scale adjusted to {v['loss_scale']!r}" if "loss_scale" in v else ""),
                  when=lambda v: "dropped" in v),
        ),
    ),
    Shape(
        "mindyolo-overflow",
        "log:mindyolo",
        "MindYOLO trainer_factory.py train_step (v0.1+): printed on an overflowing logged step, before that step's "
        "loss line; `still update` (overflow_still_update, the default): the update was applied anyway",
        "2024-12-25 09:58:34,125 [WARNING] overflow, still update, loss scale adjust to 1024.0",
        "conformance/mindyolo-issue402-log",
        anchors=("overflow, ",),
        fields=(
            Field("what", r"overflow,\s*(still update|drop step)", kind="flag"),
            Field("still", r"overflow,\s*(still update)", kind="flag"),
            Field("loss_scale", _num_after("loss scale adjust to")),
        ),
        required=("what",),
        events=(
            Event(
                "overflow",
                lambda v, t: ("the update was not skipped (overflow_still_update)" if "still" in v
                              else "the update was skipped") + (f"; loss scale adjusted to {v['loss_scale']!r}"
                                                                 if "loss_scale" in v else ""),
                step="next",
            ),
        ),
    ),
    Shape(
        "mindyolo-step-time",
        "log:mindyolo",
        "MindYOLO trainer_factory.py train (v0.1+), every log_interval steps: the mean step time since the last one",
        "2024-12-25 09:58:42,800 [INFO] Epoch 1/200, Step 100/3995, step time: 5736.71 ms",
        "conformance/mindyolo-issue402-log",
        anchors=("Epoch ", "Step ", "step time:"),
        fields=(
            Field("epoch", r"Epoch\s*(\d+)/", kind="count"),
            Field("step_in", r"Step\s*(\d+)/", kind="count"),
            Field("steps_total", r"Step\s*\d+/(\d+)", kind="count"),
            Field("step_time", _num_after("step time:", unit="ms"), key="step time:", tag="step_time",
                  raw="step time", scale=1e-3),
        ),
        required=("epoch", "step_in", "step_time"),
        step="epoch_step",
    ),
    Shape(
        "mindyolo-epoch-time",
        "log:mindyolo",
        "MindYOLO trainer_factory.py train (v0.1+), after each epoch's checkpoint",
        "2024-12-25 10:41:07,305 [INFO] Epoch 1/200, epoch time: 42.61 min.",
        "rebuilt from the writer's format string (no real log seen)",
        anchors=("Epoch ", "epoch time:"),
        fields=(Field("epoch_time", _num_after("epoch time:", unit="min", end=_WORD_END), key="epoch time:", tag="epoch_time",
                      raw="epoch time", scale=60.0),),
        required=("epoch_time",),
        step="before",
    ),
    Shape(
        "mindyolo-eval",
        "log:mindyolo",
        "MindYOLO callback.py EvalWhileTrain._run_eval (v0.1+)",
        "2024-12-25 10:43:10,512 [INFO] Epoch 1/200, eval accuracy: 0.012, run_eval time: 122.853 s.",
        "rebuilt from the writer's format string (no real log seen)",
        anchors=("run_eval time:",),
        fields=(Field("duration", _num_after("run_eval time:", unit="s", end=_WORD_END), key="run_eval time:"),),
        events=(Event("eval", _text, duration="duration", step="before"),),
    ),
    Shape(
        "mindyolo-checkpoint",
        "log:mindyolo",
        "MindYOLO trainer_factory.py train (v0.1+): after each epoch's save",
        "2024-12-25 10:41:07,301 [INFO] Saving model to ./runs/2024.12.25-09.55.01/weights/yolov8-1_3995.ckpt",
        "rebuilt from the writer's format string (no real log seen)",
        anchors=("Saving model to ",),
        events=(Event("checkpoint_save", _text, step="before"),),
    ),
    Shape(
        "mindyolo-loss",
        "log:mindyolo",
        "MindYOLO trainer_factory.py train_step (v0.1+): the loss items (names per model: loss, lbox, lobj, lcls, "
        "dfl, ...) and cur_lr; sink mode (v0.2+) prints Step S/S without imgsize",
        "2024-12-25 09:58:42,787 [INFO] Epoch 1/200, Step 100/3995, imgsize (640, 640), loss: 11.6707, lbox: 3.6262, "
        "lcls: 5.5689, dfl: 2.4756, cur_lr: 0.09924906492233276",
        "conformance/mindyolo-issue402-log",
        anchors=("Epoch ", "Step "),
        fields=(
            Field("epoch", r"Epoch\s*(\d+)/", kind="count"),
            Field("step_in", r"Step\s*(\d+)/", key=r"Step\s", kind="count"),
            Field("steps_total", r"Step\s*\d+/(\d+)", kind="count"),
        ),
        required=("epoch", "step_in"),
        step="epoch_step",
        pairs="mindyolo",
        rename={"cur_lr": "lr"},
    ),
    Shape(
        "lossmonitor",
        "log:lossmonitor",
        "MindSpore LossMonitor (train/callback/_loss_monitor.py, 0.x-2.x; 0.x prints the loss as a Tensor); the "
        "MindSpore tutorials' own loop prints `epoch: 1, step: 100, loss is ...`",
        "epoch: 1 step: 223, loss is 2.8705792",
        "conformance/ms-models-c3d-lossmonitor-log (mindspore-ai/models, C3D README)",
        anchors=("loss is", "epoch:"),
        fields=(
            Field("epoch", _key(r"epoch:\s*(\d+)"), kind="count"),
            # copies print "step: 1 , loss is" (model zoo CNN-CTC)
            Field("step_in", _key(r"step:?\s*(\d+)\s*,"), key=_key("step:"), kind="count"),  # "step 774," too
            Field("loss", rf"loss is\s*(?:Tensor\(.*?value=\s*)?\[?\s*({NUM}){END}", key="loss is", tag="loss", raw="loss"),
        ),
        required=("epoch", "step_in", "loss"),
        step="in_epoch",
        fast="lossmonitor",
    ),
    Shape(
        "lossmonitor-epcoh",
        "log:lossmonitor",
        "the model zoo README template's LossMonitor lines, copied into many READMEs with the key spelled `epcoh` "
        "(the second epoch's line of its example); the same counters as LossMonitor",
        "epcoh:2 step:390, loss is 1.0897788",
        "https://github.com/mindspore-ai/models/blob/eab643f51336dbf7d711f02d27e6516e5affee59/how_to_contribute/"
        "README_TEMPLATE.md#L65-L67 (corpus a-models-template-1)",
        anchors=("loss is", "epcoh:"),
        fields=(
            Field("epoch", _key(r"epcoh:\s*(\d+)"), kind="count"),
            Field("step_in", _key(r"step:?\s*(\d+)\s*,"), key=_key("step:"), kind="count"),
            Field("loss", rf"loss is\s*(?:Tensor\(.*?value=\s*)?\[?\s*({NUM}){END}", key="loss is", tag="loss", raw="loss"),
        ),
        required=("epoch", "step_in", "loss"),
        step="in_epoch",
    ),
    Shape(
        "timemonitor",
        "log:timemonitor",
        "MindSpore TimeMonitor (train/callback/_time_monitor.py): 1.x `epoch time: ..`, 2.x `Train epoch time: ..` "
        "with optional `(data time: .. ms)`; per-epoch averages (in sink mode an epoch is sink_size steps)",
        "Train epoch time: 23575.337 ms, per step time: 2357.534 ms",
        "conformance/mf-stacking-gpu-log",
        anchors=("epoch time:",),
        fields=(
            # a copy of it in the model zoo (mobilenetv2 src/models.py) prints the times without "ms"
            Field("epoch_time", _num_after("epoch time:", unit="(?:ms)?"), key="epoch time:", tag="epoch_time",
                  raw="epoch time", scale=1e-3),
            Field("step_time", _num_after("per step time:", unit="(?:ms)?"), key="per step time:", tag="step_time",
                  raw="per step time", scale=1e-3),
            Field("data_time", _num_after("data time:", unit="ms"), key="data time:", tag="data_time",
                  raw="data time", scale=1e-3),
        ),
        required=("epoch_time",),
        step="before_or_epoch",
        fast="timemonitor",
    ),
    Shape(
        "flops-total",
        "log:flops",
        "MindSpore FlopsUtilizationCollector (train/callback/_flops_collector.py), once; MindFormers r1.5+ "
        "MFLossMonitor `Full model flops is %d, Shard model flops is %d.`",
        "Full model flops is 37748736.0, Full hardware flops is 37748736.0, Shard model flops is 37748736.0, "
        "Shard hardware flops is 37748736.0.",
        "the sample runs (samples/make_samples.py, MindSpore 2.10 on the CPU)",
        anchors=("flops is",),
        settings=tuple(
            SettingRule(rf"{label} is\s*({NUM})", key)
            for key, label in (
                ("full_model_flops", "Full model flops"),
                ("full_hardware_flops", "Full hardware flops"),
                ("shard_model_flops", "Shard model flops"),
                ("shard_hardware_flops", "Shard hardware flops"),
            )
        ),
    ),
    Shape(
        "flops-step",
        "log:flops",
        "MindSpore FlopsUtilizationCollector per step (2.x; the 2.10 line has no comma before mfu)",
        "Train per step time: 135.572 ms mfu:0.47% hfu:0.47%",
        "the sample runs (samples/make_samples.py, MindSpore 2.10 on the CPU)",
        anchors=("mfu:",),
        fields=(
            Field("step_time", _num_after("per step time:", unit="ms"), key="per step time:", tag="step_time",
                  raw="per step time", scale=1e-3),
            Field("mfu", _num_after("mfu:", unit="%"), key="mfu:", tag="mfu", raw="mfu", scale=0.01),
            Field("hfu", _num_after("hfu:", unit="%"), key="hfu:", tag="hfu", raw="hfu", scale=0.01),
        ),
        required=("mfu",),
        step="before",
        fast="flops",
    ),
    Shape(
        "parameter-count",
        "log",
        "MindSpore model zoo / mindtransformer print_model_size (utils.py)",
        "2022-12-03 20:44:19,287:INFO:utils.py:print_model_size:94:The number of parameters                :8.2E+07,"
        "      Model size:1.6E+02 MB",
        "conformance/mf-stacking-gpu-log",
        anchors=("The number of ",),
        settings=(
            SettingRule(rf"The number of parameters\s*:\s*({NUM}){END}", "num_parameters"),
            SettingRule(rf"The number of trainable [Pp]arameters\s*:\s*({NUM}){END}", "trainable_parameters"),
        ),
    ),
    Shape(
        "json",
        "log:json",
        "users' own JSON lines (json.dumps of a dict with a step or global_step key); a time key (time, timestamp, "
        "ts, wall_time, datetime) gives the wall time when the line has no timestamp",
        '{"step": 200, "loss": 2.1, "lr": 0.0001, "grad_norm": NaN, "step_ms": 500.0, "tokens_per_s": 1000}',
        "tests/fixtures/logs/user.jsonl (the shape users' scripts print)",
        anchors=('step"', "{"),
        step="global",
        pairs="json",
        fast="json",
    ),
    Shape(
        "kv",
        "log:kv",
        "users' own key=value lines with a step (or global_step) key; `rank=` gives the line's rank",
        "2026-11-30 11:39:29.568 step=1 epoch=1 loss=4.859152 lr=0.0001 grad_norm=0.405437 step_ms=4659.63 "
        "data_ms=10.604 tokens_per_s=54.9",
        "the sample runs (samples/train_tiny_gpt.py)",
        anchors=("step=",),
        step="global",
        pairs="kv",
        fast="kv",
    ),
    # Any other line with a loss word: read by its fields (logfields' lexicon), after every shape
    # above had its chance. Four shapes only because anchors are literals (case, Chinese).
    *writer_shapes(lexicon.WRITERS),
    # after the lines read by their fields: a copy that prints the epoch's mean loss beside is read there
    Shape(
        "timemonitor-copy",
        "log:timemonitor",
        "copies of TimeMonitor in the model zoo and MindSpore courses (and 1.x-era scripts): `Epoch time: X, per step "
        "time: Y` with ms, s or no unit (no unit: ms, as TimeMonitor prints)",
        "Epoch time: 247122.700, per step time: 633.648",
        "https://github.com/mindspore-ai/course/blob/cbfaa090acad5728f3a2db41d8fda2300e8c72f9/lstm/README.md#L720-L742 "
        "(corpus a-course-lstm-zh-1)",
        anchors=("Epoch time:",),
        fields=(
            Field("epoch_time", _num_after("Epoch time:", unit="(?:ms)?"), tag="epoch_time", raw="epoch time", scale=1e-3),
            Field("epoch_time_s", _num_after("Epoch time:", unit="s"), tag="epoch_time", raw="epoch time"),
            Field("step_time", _num_after("per step time:", unit="(?:ms)?"), tag="step_time", raw="per step time", scale=1e-3),
            Field("step_time_s", _num_after("per step time:", unit="s"), tag="step_time", raw="per step time"),
        ),
        step="before_or_epoch",
    ),
    Shape(
        "config-entry",
        "log",
        "a training script's arguments printed as pretty JSON (mindtransformer `Training Arguments are as follows:`, "
        "`Model config are as follows:`), one key per line",
        '    "hidden_size": "768",',
        "conformance/mf-stacking-gpu-log",
        anchors=('":',),
        settings=(
            SettingRule(
                rf'^\s*"(\w+)"\s*:\s*"?({NUM})"?\s*,?\s*$',
                keys=(
                    "global_batch_size", "micro_batch_size", "batch_size", "seq_length", "hidden_size", "num_layers",
                    "num_heads", "vocab_size", "ffn_hidden_size", "data_parallel", "model_parallel", "pipeline_stage",
                    "micro_batch_num", "device_num", "sink_size", "gradient_accumulation_steps",
                ),
            ),
        ),
    ),
    # Last of all: a line with a step's time and no loss, which no shape above took: the time of the
    # training record beside it (textlog._neighbour_times pairs them; alone it gives nothing).
    Shape(
        "fields-time",
        "log:fields",
        "any writer that prints a step's time on its own line, before or after the loss line (Informer's "
        "`speed: Xs/iter`, a course's epoch line before LossMonitor's, a user's `step time is X`)",
        "speed: 0.2837s/iter; left time: 20244.7053s",  # (tab-indented in the log)
        "https://github.com/mindspore-courses/competition/blob/0ad8b8713ad666be6f2a265250da5e90a82b7062/summer-ospp/"
        "ModelRain/train0718.txt#L147-L169 (corpus b-comp-modelrain-informer-2)",
        anchors=("time",),
        step="next",  # (where no line read by its fields is beside it: the record after it, see textlog)
        pairs="fields",
    ),
)



def derive(shapes: tuple[Shape, ...]) -> tuple[dict, tuple, dict, int]:
    """What follows from the shapes: their index by name, every fixed field of every shape (a
    value's field code is its place here; pairs' keys follow, see PAIR_SLOTS), the codes by
    (shape, field), and their number."""
    fields = tuple((shape, f) for shape in shapes for f in shape.fields if f.tag is not None)
    return (
        {shape.name: i for i, shape in enumerate(shapes)},
        fields,
        {(shape.name, f.name): code for code, (shape, f) in enumerate(fields)},
        len(fields),
    )


SHAPE_INDEX, FIELDS, FIELD_CODE, N_FIXED = derive(SHAPES)
PAIR_SLOTS = ("kv", "json", "mindyolo", "eval", "fields")  # a pair key coded k of slot s is field N_FIXED + len(PAIR_SLOTS) * k + s


# --------------------------------------------------------------------------- errors

# A line holding one of these is a candidate error; see is_error.
ERROR_ANCHORS = ("ERROR", "Traceback")
# The last line of a Python traceback ("RuntimeError: device lost") names what went wrong.
EXCEPTION_RE = re.compile(r"[A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit)(?::|$)", re.ASCII)
_SPACES = " \t\n\r\f\v"


def error_kind(text: str) -> tuple[bool, bool] | None:
    """(is a traceback header, is an exception line) of an error line, None when it is none. An
    ERROR line, a ``Traceback`` header or an exception line is one: textlog keeps one event per
    traceback (its exception line)."""
    traceback = text.lstrip(_SPACES).startswith("Traceback")
    exception = EXCEPTION_RE.match(text) is not None
    if traceback or exception or "ERROR" in text:
        return traceback, exception
    return None


def anchors(shapes: tuple[Shape, ...] | None = None) -> tuple[str, ...]:
    """Every literal the scanner looks for, each once: the shapes' then the errors'."""
    seen: dict[str, None] = {}
    for shape in SHAPES if shapes is None else shapes:
        for a in shape.anchors:
            seen.setdefault(a)
    for a in ERROR_ANCHORS:
        seen.setdefault(a)
    return tuple(seen)


# --------------------------------------------------------------------------- timestamps

# At the start of a line: 2024-05-08 10:36:53,123 | 2024-05-08T10:36:53.123456+08:00 | [2024-05-08 10:36:53.5Z].
# Groups: date, time, fraction, zone.
STAMP_RE = re.compile(
    r"[ \t\n\r\f\v]*\[?(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?",
    re.ASCII,
)
_EPOCH_DAY = date(1970, 1, 1).toordinal()
ZONE_NONE, ZONE_NAIVE, ZONE_GIVEN = 0, 1, 2  # a line's wall time: none, a clock time without zone, with one


def stamp(text: str) -> tuple[float | None, int]:
    """(unix seconds, ZONE_*) of a timestamp at the line start. Without a zone the clock time is
    read as if it were UTC: gaps are right, the offset is unknown (ReadResult.clock = "local")."""
    m = STAMP_RE.match(text)
    if not m:
        return None, ZONE_NONE
    y, mo, d, hh, mm, ss = (int(m.group(i)) for i in range(1, 7))
    try:
        day = date(y, mo, d).toordinal() - _EPOCH_DAY
    except ValueError:
        return None, ZONE_NONE
    if hh > 23 or mm > 59 or ss > 59:
        return None, ZONE_NONE
    wall = float(day * 86400 + hh * 3600 + mm * 60 + ss)
    if m.group(7):
        wall += int(m.group(7)) / 10 ** len(m.group(7))
    zone = m.group(8)
    if zone is None:
        return wall, ZONE_NAIVE
    if zone != "Z":
        digits = zone[1:].replace(":", "")
        offset = int(digits[:2]) * 3600 + int(digits[2:4]) * 60
        wall -= -offset if zone[0] == "-" else offset
    return wall, ZONE_GIVEN


# --------------------------------------------------------------------------- pairs: key=value, JSON, MindYOLO

KV_RE = re.compile(r"([A-Za-z_][\w.\-/]*)=([^\s,;]+)", re.ASCII)
STEP_KEYS = ("step", "global_step")
ROLE_KEYS = ("step", "global_step", "rank", "epoch_step")  # read for the line, never values


def kv_pairs(text: str) -> list[tuple[str, float]]:
    """The numeric key=value pairs of a line, in line order (quotes around a value are dropped)."""
    out = []
    for key, raw in KV_RE.findall(text):
        value = number(raw.strip("\"'"))
        if value is not None:
            out.append((key, value))
    return out


JSON_TIME_KEYS = ("time", "timestamp", "ts", "wall_time", "datetime")


def json_pairs(text: str) -> tuple[list[tuple[str, float]] | None, float | None, int]:
    """(numeric pairs, wall time from a time key, its ZONE_*) of the object from the line's first
    "{" to its last "}"; pairs None when that is no JSON. Strings that are numbers count as
    numbers; booleans, nulls and nested values do not. A repeated key keeps its last value at its
    first place (as json.loads does)."""
    a, b = text.find("{"), text.rfind("}")
    try:
        obj = json.loads(text[a : b + 1]) if 0 <= a < b else None
    except (ValueError, RecursionError):  # RecursionError: hostile nesting
        obj = None
    if not isinstance(obj, dict):
        return None, None, ZONE_NONE
    out = []
    for k, v in obj.items():
        if isinstance(v, bool):
            continue
        if isinstance(v, (int, float)):
            out.append((str(k), float(v)))
        elif isinstance(v, str) and (value := number(v)) is not None:
            out.append((str(k), value))
    wall, zone = _json_time(obj)
    return out, wall, zone


def _json_time(obj: dict) -> tuple[float | None, int]:
    """Wall time from a JSON line's own time key: unix seconds / ms, or an ISO string (without a
    zone read as if UTC, like a line's timestamp)."""
    for key in JSON_TIME_KEYS:
        value = obj.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            return (value / 1000.0 if value > 1e12 else float(value)), ZONE_GIVEN
        if isinstance(value, str):
            try:
                when = datetime.fromisoformat(value.strip(_SPACES).replace("Z", "+00:00"))
            except ValueError:
                continue
            if when.tzinfo:
                return when.timestamp(), ZONE_GIVEN
            return when.replace(tzinfo=timezone.utc).timestamp(), ZONE_NAIVE
    return None, ZONE_NONE


YOLO_PAIR_RE = re.compile(rf",\s*([A-Za-z_]\w*):\s*({NUM}){END}", re.ASCII)
# 'name': value in a printed dict of metrics; numpy scalars print as np.float32(0.88)
EVAL_PAIR_RE = re.compile(rf"'([A-Za-z_][\w.\-/]*)':\s*(?:np\.\w+\()?({NUM}){END}", re.ASCII)


def mindyolo_pairs(text: str) -> list[tuple[str, float]]:
    """MindYOLO's ", name: value" loss items and cur_lr after "Step s/S" (and imgsize)."""
    at = text.find("Step ")
    return [(k, float(v)) for k, v in YOLO_PAIR_RE.findall(text, at)]


def eval_pairs(text: str) -> list[tuple[str, float]]:
    """The metrics of an ``Eval result:`` line: its dict's ``'name': number`` items."""
    a, b = text.find("{"), text.rfind("}")
    return [(k, float(v)) for k, v in EVAL_PAIR_RE.findall(text[a:b])] if 0 <= a < b else []


PAIR_READERS = {"kv": kv_pairs, "mindyolo": mindyolo_pairs, "eval": eval_pairs}


# A user's key ending in a unit: "step_ms", "data_s" (not "tokens_per_s": a rate), longest first.
KEY_UNITS = tuple(sorted(((f"_{u.spelling}", u.si) for u in lexicon.UNITS if u.suffix), key=lambda x: -len(x[0])))


def _key_unit(key: str) -> tuple[str, float] | None:
    for suffix, si in KEY_UNITS:
        if key.endswith(suffix) and not key.endswith("_per" + suffix):
            return suffix, si
    return None


def key_tag(key: str) -> tuple[str, float]:
    """Canonical tag and scale to SI units of a user's key: ``_ms`` -> seconds."""
    unit = _key_unit(key)
    if key in CANONICAL_TAGS:
        return CANONICAL_TAGS[key], 1.0 if unit is None else unit[1]
    if unit is not None:
        base = key[: -len(unit[0])]
        if not base.endswith("time"):
            base += "_time"
        return canonical_tag(base), unit[1]
    return canonical_tag(key), 1.0


def pair_label(slot: str, key: str) -> tuple[str, str, str, float]:
    """(tag, raw tag, source, scale) of a pair's value."""
    if slot == "mindyolo":
        shape = SHAPES[SHAPE_INDEX["mindyolo-loss"]]
        return shape.rename.get(key) or canonical_tag(key), key, shape.source, 1.0
    if slot == "eval":
        return canonical_tag("eval_" + key), key, SHAPES[SHAPE_INDEX["eval-result"]].source, 1.0
    if slot == "fields":  # (tag, raw tag): the value is in SI units already (fields.read)
        tag, raw = key
        return canonical_tag(tag), raw, "log:fields", 1.0
    tag, scale = key_tag(key)
    return tag, key, "log:kv" if slot == "kv" else "log:json", scale


def field_label(code: int, keys: list[str]) -> tuple[str, str, str, float]:
    """(tag, raw tag, source, scale) of a value's field code; ``keys``: pair keys by code."""
    if code < N_FIXED:
        shape, f = FIELDS[code]
        return f.tag, f.raw or f.name, f.source or shape.source, f.scale
    k, slot = divmod(code - N_FIXED, len(PAIR_SLOTS))
    return pair_label(PAIR_SLOTS[slot], keys[k])

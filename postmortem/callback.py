"""A MindSpore training callback that records what postmortem needs, measured rather than inferred.

    from postmortem.callback import PostmortemCallback
    model.train(epochs, dataset, callbacks=[..., PostmortemCallback(output_dir="output")])

It writes the records of ``postmortem/records.py`` into ``<output_dir>/postmortem/rank_<R>/``: a
header once, then one compact record per step (per sink of N steps in sink mode, or when given
``sink_size``), appended, flushed every ``flush_every`` records and fsynced at each epoch end and at
exit, so a crash loses at most the last few records and never the file.

Host times (wall time at step end, in-step time, the gap before the step) are taken at every step;
device values (loss, grad norm, lr, loss scale, overflow) are read only every ``read_every`` steps
(default: the log interval, 1 without one) because reading a Tensor waits for the device.

It never raises into training: any failure (a full disk, a read-only folder, a network output it
cannot read) becomes one warning on stderr, and the callback goes quiet.

Only this module (and ``postmortem/mindformers.py``) imports MindSpore; the reading path never does.
"""

from __future__ import annotations

import atexit
import datetime as dt
import json
import math
import os
import sys
import time
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from mindspore.train import Callback

from . import records as R

_ASCEND_HOMES = ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_AICPU_PATH")
_ASCEND_DEFAULT = "/usr/local/Ascend/ascend-toolkit/latest"
_MAX_ARGS = 500  # training arguments written at most (a MindFormers config flattens to a few hundred)


class PostmortemCallback(Callback):
    """Records a run for postmortem (see the module docstring).

    output_dir: the run's output folder (default: $POSTMORTEM_DIR, else MindFormers' output folder
      when MindFormers is loaded, else ./output). read_every: read device values every N steps
      (default: log_interval). sink_size: steps per record (default: what Model.train sinks, else
      1). flush_every: records between flushes. args: the training arguments to write (a dict, an
      argparse Namespace, a MindFormers config); values of secret-looking keys are redacted.
    """

    def __init__(self, output_dir: str | os.PathLike | None = None, *, read_every: int | None = None,
                 log_interval: int = 1, sink_size: int | None = None, flush_every: int = 8, args: Any = None,
                 rank: int | None = None, **extra: Any) -> None:
        super().__init__()
        self._dead = False
        self._file = None
        self._path: Path | None = None
        try:
            self._output_dir = output_dir
            self._read_every = max(1, int(read_every or log_interval or 1))
            self._sink_size = int(sink_size) if sink_size else None
            self._flush_every = max(1, int(flush_every))
            self._args = args
            self._extra = extra  # MindFormers hands a callback its own arguments (e.g. output_dir is named so)
            self._rank = rank
            self._launch = os.environ.get("POSTMORTEM_LAUNCH_ID") or _launch_id()
            self._launch_json = json.dumps(self._launch)
            self._pending = 0
            self._header_written = False
            self._last_step = 0
            self._span_in = self._span_gap = 0.0
            self._span_steps = 0
            self._begin = self._prev_end = None
            self._tokens = None
            self._per_record = 1
            self._initial_step = None
            self._records = 0
            atexit.register(self._at_exit)
        except Exception as exc:  # noqa: BLE001 — never into training
            self._fail(exc)

    # ------------------------------------------------------------------ MindSpore's hooks

    def on_train_begin(self, run_context):
        if self._dead:
            return
        try:
            self._prev_end = time.perf_counter()
            cb = run_context.original_args()
            self._last_step = self._initial_step = int(_param(cb, "cur_step_num", 0) or 0)  # a resumed launch's first step
            self._open(cb)
        except Exception as exc:  # noqa: BLE001
            self._fail(exc)

    def on_train_epoch_begin(self, run_context):
        if not self._dead and self._prev_end is None:
            self._prev_end = time.perf_counter()

    def on_train_step_begin(self, run_context):
        if self._dead:
            return
        self._begin = time.perf_counter()
        if not self._header_written:
            try:
                cb = run_context.original_args()
                if self._file is None:
                    self._open(cb)
                self._write_header(cb)
            except Exception as exc:  # noqa: BLE001
                self._fail(exc)
            self._begin = time.perf_counter()  # the header's cost is not the step's

    def on_train_step_end(self, run_context):
        if self._dead:
            return
        end = time.perf_counter()
        wall = time.time()
        try:
            cb = run_context.original_args()
            step = int(cb.cur_step_num)
            begin = self._begin if self._begin is not None else end
            if self._prev_end is not None:
                self._span_gap += max(0.0, begin - self._prev_end)
            self._span_in += end - begin
            self._span_steps += max(1, step - self._last_step)
            self._prev_end, self._begin = end, None
            if self._span_steps < self._per_record:
                self._last_step = step
                return
            # formatted by hand: json.dumps costs several times the rest of the hook
            line = f'{{"s":{step},"t":{wall:.6f},"in":{self._span_in:.7f},"gap":{self._span_gap:.7f},"l":{self._launch_json}'
            if self._span_steps != 1:
                line += f',"n":{self._span_steps}'
            # device values where the span crosses a multiple of read_every (MindFormers logs at
            # step % interval == 0), and on the first record
            if not self._records or step // self._read_every > (step - self._span_steps) // self._read_every:
                for key, value in _device_values(cb).items():
                    line += f',"{key}":{_number(value)}'
            self._records += 1
            if self._tokens:
                line += f',"tok":{self._tokens * self._span_steps}'
            self._last_step = step
            self._span_in = self._span_gap = 0.0
            self._span_steps = 0
            self._write_line(line + "}\n")
            self._prev_end = time.perf_counter()  # the callback's own cost is not the next step's wait
        except Exception as exc:  # noqa: BLE001
            self._fail(exc)

    def on_train_epoch_end(self, run_context):
        if self._dead or self._file is None:
            return
        try:
            cb = run_context.original_args()
            self._write({R.KIND: "epoch", "epoch": int(cb.cur_epoch_num), "s": int(cb.cur_step_num),
                         R.END: round(time.time(), 6), R.LAUNCH: self._launch}, sync=True)
        except Exception as exc:  # noqa: BLE001
            self._fail(exc)

    def on_train_end(self, run_context):
        self._close("train_end")

    def __exit__(self, exc_type, exc_value, traceback):  # Model.train's callback manager, also on an exception
        if exc_type is not None:
            self._close("exception", f"{exc_type.__name__}: {exc_value}"[:4000])
        else:
            self._close("train_end")
        return None

    # ------------------------------------------------------------------ writing

    def _open(self, cb) -> None:
        if self._file is not None:
            return
        self._rank_id = self._rank if self._rank is not None else _rank()
        folder = Path(self._folder()) / R.FOLDER / f"rank_{self._rank_id}"
        folder.mkdir(parents=True, exist_ok=True)
        self._path = folder / R.file_name(self._launch)
        self._file = open(self._path, "a", encoding="utf-8", buffering=1 << 16)

    def _folder(self) -> str:
        if self._output_dir is not None:
            return os.fspath(self._output_dir)
        for key in ("output_dir", "output_path", "save_dir"):
            if self._extra.get(key):
                return str(self._extra[key])
        if os.environ.get("POSTMORTEM_DIR"):
            return os.environ["POSTMORTEM_DIR"]
        if "mindformers" in sys.modules:
            try:
                from mindformers.tools.utils import get_output_root_path

                return get_output_root_path()
            except Exception:  # noqa: BLE001 — an older MindFormers: its default folder
                pass
        return "output"

    def _write_header(self, cb) -> None:
        self._header_written = True
        sink_mode = bool(_param(cb, "dataset_sink_mode", False))
        self._per_record = self._sink_size or (int(_param(cb, "sink_size", 0) or 0) if sink_mode else 0) or 1
        first = _param(cb, "train_dataset_element", None)
        shapes, dtypes = _shapes(first)
        self._tokens = _tokens_of(shapes, dtypes)
        header = {
            R.KIND: "header", "format": R.FORMAT, "writer": R.RECORDER, R.LAUNCH: self._launch,
            "rank": self._rank_id, "pid": os.getpid(), "host": os.uname().nodename, "time": round(time.time(), 6),
            "versions": _versions(), "device": _device(cb), "parallel": _parallel(self._args, self._extra),
            "parameters": _parameters(_param(cb, "network", None), _param(cb, "optimizer", None)),
            "batch": {"shapes": shapes, "dtypes": dtypes},
            "sink": {"mode": bool(_param(cb, "dataset_sink_mode", False)),
                     "size": int(_param(cb, "sink_size", -1) or -1), "per_record": self._sink_size},
            "dataset": _dataset(_param(cb, "train_dataset", None)),
            "steps": {"epochs": _int(_param(cb, "epoch_num", None)), "per_epoch": _int(_param(cb, "batch_num", None)),
                      "initial_step": self._initial_step},
            "read_every": self._read_every, "flush_every": self._flush_every,
            "args": _arguments(self._args, self._extra), "argv": _redact_argv(sys.argv),
        }
        self._write(header, sync=True)

    def _write(self, record: Mapping[str, Any], sync: bool = False) -> None:
        self._write_line(json.dumps(record, separators=(",", ":"), allow_nan=True, default=str) + "\n", sync)

    def _write_line(self, line: str, sync: bool = False) -> None:
        if self._file is None:
            return
        self._file.write(line)
        self._pending += 1
        if sync or self._pending >= self._flush_every:
            self._file.flush()
            self._pending = 0
            if sync:
                os.fsync(self._file.fileno())

    def _close(self, reason: str, error: str | None = None) -> None:
        if self._dead or self._file is None:
            return
        try:
            rec = {R.KIND: "end", "reason": reason, "s": self._last_step, R.END: round(time.time(), 6), R.LAUNCH: self._launch}
            if error:
                rec["error"] = error
            self._write(rec, sync=True)
            self._file.close()
        except Exception as exc:  # noqa: BLE001
            self._fail(exc)
        self._file = None

    def _at_exit(self) -> None:
        self._close("exit")

    def _fail(self, exc: BaseException) -> None:
        """One warning, then quiet: recording must never stop the training it records."""
        if self._dead:
            return
        self._dead = True
        where = f" ({self._path})" if self._path else ""
        try:
            print(f"postmortem: the training callback stopped recording{where}: {type(exc).__name__}: {exc}",
                  file=sys.stderr, flush=True)
        except Exception:  # noqa: BLE001 — stderr closed
            pass
        try:
            if self._file is not None:
                self._file.close()
        except Exception:  # noqa: BLE001 — the failed write is still buffered: closing re-raises it
            pass
        self._file = None


# ---------------------------------------------------------------------- what the header holds


def _launch_id() -> str:
    now = dt.datetime.now(dt.timezone.utc)
    return f"{now:%Y%m%dT%H%M%S}.{now.microsecond // 1000:03d}Z-{os.getpid()}"


def _param(cb, name: str, default: Any = None) -> Any:
    """A field of MindSpore's callback parameters (a dict whose missing attributes raise KeyError)."""
    try:
        return getattr(cb, name, default)
    except Exception:  # noqa: BLE001
        return default


def _int(v) -> int | None:
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def _rank() -> int:
    try:
        from mindspore.communication import get_rank

        return int(get_rank())
    except Exception:  # noqa: BLE001 — no communicator initialised: the launcher's variables
        for key in ("RANK_ID", "RANK", "OMPI_COMM_WORLD_RANK"):
            if os.environ.get(key, "").isdigit():
                return int(os.environ[key])
        return 0


def _group_size() -> int | None:
    try:
        from mindspore.communication import get_group_size

        return int(get_group_size())
    except Exception:  # noqa: BLE001
        for key in ("RANK_SIZE", "WORLD_SIZE", "MS_WORKER_NUM"):
            if os.environ.get(key, "").isdigit():
                return int(os.environ[key])
        return None


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except Exception:  # noqa: BLE001
        return None


def _versions() -> dict[str, Any]:
    import mindspore

    out: dict[str, Any] = {"mindspore": getattr(mindspore, "__version__", None) or _version("mindspore"),
                           "mindformers": _version("mindformers"), "python": sys.version.split()[0]}
    cann, cann_file = _cann_version()
    out["cann"] = cann
    if cann_file:
        out["cann_file"] = cann_file
    for dist in ("te", "hccl"):  # CANN's own wheels, where installed
        v = _version(dist)
        if v:
            out[dist] = v
    return out


def _cann_version() -> tuple[str | None, str | None]:
    """The Ascend toolkit's version as its install files say it: ascend_<pkg>_install.info
    (``version=8.0.RC2``), else compiler/version.info (``Version=...``)."""
    homes = [os.environ[k] for k in _ASCEND_HOMES if os.environ.get(k)] + [_ASCEND_DEFAULT]
    for home in homes:
        root = Path(home)
        if not root.is_dir():
            continue
        candidates = sorted(root.glob("ascend_*_install.info")) + sorted(root.glob("*/ascend_*_install.info"))
        candidates += [root / "compiler" / "version.info", root / "version.info"]
        for path in candidates:
            try:
                for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                    key, _, value = line.partition("=")
                    if key.strip().lower() == "version" and value.strip():
                        return value.strip(), str(path)
            except OSError:
                continue
    return None, None


def _device(cb) -> dict[str, Any]:
    from mindspore import context

    out: dict[str, Any] = {}
    for key in ("device_target", "mode", "device_id", "jit_level"):
        try:
            out[key] = context.get_context(key)
        except Exception:  # noqa: BLE001 — a key this MindSpore does not know
            pass
    if out.get("mode") in (0, 1):
        out["mode"] = "graph" if out["mode"] == 0 else "pynative"
    out["count"] = _group_size() or _int(_param(cb, "device_number", None))
    return out


def _parallel(args: Any, extra: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    try:
        from mindspore import get_auto_parallel_context

        for key in ("parallel_mode", "device_num", "pipeline_stages", "full_batch", "enable_parallel_optimizer",
                    "gradients_mean", "grad_accumulation_step"):
            try:
                out[key] = get_auto_parallel_context(key)
            except Exception:  # noqa: BLE001
                pass
    except Exception:  # noqa: BLE001
        pass
    # MindFormers' parallel_config: dp / mp / pp and micro batches, from the arguments given
    pc = _lookup(args, "parallel_config") or extra.get("parallel_config")
    for key, name in (("data_parallel", "dp"), ("model_parallel", "mp"), ("pipeline_stage", "pp"),
                      ("micro_batch_num", "micro_batches"), ("context_parallel", "cp"), ("expert_parallel", "ep")):
        v = _lookup(pc, key)
        if v is not None:
            out[name] = v
    if "pp" not in out and out.get("pipeline_stages"):
        out["pp"] = out["pipeline_stages"]
    return out


def _lookup(obj: Any, key: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


def _parameters(network, optimizer) -> dict[str, Any]:
    """The model's parameters: the network's (a train cell holds its optimizer) less the
    optimizer's state (moments, step counters: its parameters that are not the weights it updates)."""
    if network is None:
        return {}
    from mindspore import nn

    optimizers = [optimizer] if optimizer is not None else []
    optimizers += [c for _, c in network.cells_and_names() if isinstance(c, nn.Optimizer) and c is not optimizer]  # a train cell's
    state: set[int] = set()
    for opt in optimizers:
        weights = {id(p) for p in getattr(opt, "parameters", ())}
        state |= {id(p) for p in opt.get_parameters() if id(p) not in weights}
    total = trainable = 0
    for p in network.get_parameters():
        if id(p) in state:
            continue
        n = math.prod(int(d) for d in p.shape) if p.shape else 1
        total += n
        if p.requires_grad:
            trainable += n
    return {"total": total, "trainable": trainable}


def _shapes(element) -> tuple[list[list[int]], list[str]]:
    if element is None:
        return [], []
    items = element if isinstance(element, (list, tuple)) else [element]
    shapes, dtypes = [], []
    for item in items:
        shape = getattr(item, "shape", None)
        shapes.append([int(d) for d in shape] if shape is not None else [])
        dtypes.append(str(getattr(item, "dtype", type(item).__name__)))
    return shapes, dtypes


def _tokens_of(shapes: list[list[int]], dtypes: list[str]) -> int | None:
    """Tokens in one batch: the first integer input of shape (batch, sequence), as LLM inputs are."""
    for shape, dtype in zip(shapes, dtypes):
        if len(shape) == 2 and "int" in dtype.lower():
            return shape[0] * shape[1]
    return None


def _dataset(ds) -> dict[str, Any]:
    if ds is None:
        return {}
    out: dict[str, Any] = {}
    try:
        out["size"] = int(ds.get_dataset_size())
    except Exception:  # noqa: BLE001
        pass
    try:
        out["batch_size"] = int(ds.get_batch_size())
    except Exception:  # noqa: BLE001
        pass
    # The leaf of the pipeline names the data: files or a folder for the file datasets, the
    # source's class for a GeneratorDataset.
    node, seen = ds, 0
    while getattr(node, "children", None) and seen < 64:
        node, seen = node.children[0], seen + 1
    out["kind"] = type(node).__name__
    for attr in ("dataset_files", "dataset_file", "dataset_dir", "file_pattern"):
        v = getattr(node, attr, None)
        if v:
            out["path"] = [str(x) for x in v][:16] if isinstance(v, (list, tuple)) else str(v)
            break
    else:
        src = getattr(node, "source", None)
        if src is not None:
            out["source"] = getattr(src, "__qualname__", None) or type(src).__qualname__
    return out


def _flatten(obj: Any, prefix: str = "", out: dict[str, Any] | None = None, depth: int = 0) -> dict[str, Any]:
    out = {} if out is None else out
    if len(out) >= _MAX_ARGS or depth > 8:
        return out
    if hasattr(obj, "__dict__") and not isinstance(obj, Mapping) and type(obj).__module__ == "argparse":
        obj = vars(obj)
    if isinstance(obj, Mapping):
        for k, v in obj.items():
            key = f"{prefix}.{k}" if prefix else str(k)
            if R.is_secret(str(k)):
                out[key] = R.REDACTED
            else:
                _flatten(v, key, out, depth + 1)
    elif isinstance(obj, (str, int, float, bool)) or obj is None:
        out[prefix] = obj
    elif isinstance(obj, (list, tuple)) and all(isinstance(x, (str, int, float, bool)) for x in obj) and len(obj) <= 64:
        out[prefix] = list(obj)
    else:
        out[prefix] = str(obj)[:200]
    return out


def _arguments(args: Any, extra: Mapping[str, Any]) -> dict[str, Any]:
    out = _flatten(args) if args is not None else {}
    if extra:
        _flatten(dict(extra), "callback", out)
    return out


def _redact_argv(argv: list[str]) -> list[str]:
    out, hide_next = [], False
    for a in argv:
        if hide_next:
            out.append(R.REDACTED)
            hide_next = False
            continue
        name, eq, _ = a.lstrip("-").partition("=")
        if a.startswith("-") and R.is_secret(name.replace("-", "_")):
            if eq:
                out.append(a.split("=", 1)[0] + "=" + R.REDACTED)
            else:
                out.append(a)
                hide_next = True
            continue
        out.append(a)
    return out


# ---------------------------------------------------------------------- device values of a step


def _number(v: Any) -> str:
    """A JSON number as Python's json module writes it (NaN and Infinity too), or true / false."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if v != v:
        return "NaN"
    if v in (math.inf, -math.inf):
        return "Infinity" if v > 0 else "-Infinity"
    return repr(float(v)) if isinstance(v, float) else str(int(v))


def _scalar(x) -> float | None:
    if x is None:
        return None
    if hasattr(x, "asnumpy"):
        x = x.asnumpy()
    if getattr(x, "size", 0) == 1:  # the usual 0-d loss: no float64 copy
        return float(x.item())
    try:
        import numpy as np

        a = np.asarray(x, dtype=np.float64)
        return float(a.mean()) if a.size else None
    except (TypeError, ValueError):
        return None


def _device_values(cb) -> dict[str, Any]:
    """Loss, overflow, loss scale, lr and grad norm of the step, where the network's outputs give
    them: MindSpore's TrainOneStepWithLossScaleCell returns (loss, overflow, scale), MindFormers'
    train cells (loss, overflow, scale, lr, global norm[, local norm, ...])."""
    out: dict[str, Any] = {}
    outputs = _param(cb, "net_outputs", None)
    if isinstance(outputs, (tuple, list)):
        values = list(outputs)
        loss = _scalar(values[0]) if values else None
        if len(values) >= 3:
            of = _scalar(values[1])
            if of is not None:
                out[R.OVERFLOW] = bool(of)
            ls = _scalar(values[2])
            if ls is not None:
                out[R.LOSS_SCALE] = ls
        if len(values) >= 5:
            lr, gn = _scalar(values[3]), _scalar(values[4])
            if lr is not None:
                out[R.LR] = lr
            if gn is not None:
                out[R.GRAD_NORM] = gn
    else:
        loss = _scalar(outputs)
    if loss is not None:
        out[R.LOSS] = loss
    if R.LOSS_SCALE not in out:
        manager = _param(cb, "loss_scale_mananger", None)  # MindSpore's own spelling
        if manager is not None and hasattr(manager, "get_loss_scale"):
            ls = _scalar(manager.get_loss_scale())
            if ls is not None:
                out[R.LOSS_SCALE] = ls
    if R.LR not in out:
        lr = _learning_rate(_param(cb, "optimizer", None))
        if lr is not None:
            out[R.LR] = lr
    return out


def _learning_rate(optimizer) -> float | None:
    if optimizer is None:
        return None
    try:
        return _scalar(optimizer.get_lr())
    except Exception:  # noqa: BLE001 — an optimizer without get_lr
        lr = getattr(optimizer, "learning_rate", None)
        return _scalar(lr) if lr is not None and hasattr(lr, "asnumpy") else None

"""Generate large benchmark inputs with real framing into bench/data/ (git-ignored).

    python bench/generate.py            # everything missing (about a minute on 2 cores)
    python bench/generate.py --force    # regenerate everything
    python bench/generate.py --only summary,tb,log,ckpt,ranks,build
    python bench/generate.py --verify-only

What is written (sizes are for the defaults):

* ``summary/`` MindSpore summary files, one Event per step carrying 6 ``scalar_value``s (the
  layout MindSpore's SummaryRecord writes, see samples/*/summary): a version record, the real
  graph record copied from samples/gpt-tiny-base, then 250,000 (``big``) / 25,000 (``small``) steps.
* ``tb/`` TensorBoard event files as tensorboardX's ``add_scalar`` writes them: one Event per
  scalar (6 MindFormers tags per step), step omitted when 0 (proto3 default), a
  ``brain.Event:2`` header record.
* ``log/`` callback logs of 1,000,000 and 100,000 lines mixing LossMonitor, TimeMonitor,
  FlopsUtilizationCollector, MindFormers monitor + progress lines (timestamp prefix), key=value,
  JSON and noise lines, shapes copied from formats.md section 4 and the sample logs.
* ``ckpt/`` checkpoints of 10 GB and 1 GB as sparse files: the parameter list and Value layout of
  samples/gpt-tiny-base/checkpoint/tiny_gpt-3_100.ckpt, scaled to a 32-block model; every tensor
  declares its real ``tensor_content`` length and the content is a hole (seek). Small values
  (``global_step``, ``epoch_num``, ``step_num``) carry real bytes. A ``mini`` checkpoint written by
  the same code with real (zero) content is loaded by ``mindspore.load_checkpoint`` to verify it.
* ``ranks64/``, ``ranks8/`` run folders: ``rank_{i}/train.log`` (key=value, 20,000 steps) and
  ``rank_{i}/summary/...summary.<stamp>.{i}.bench_MS`` (20,000 steps x 6 scalars).
* ``build/run250k`` and ``build/base250k``: a 250,000-step summary file + a key=value log with
  ``step_ms`` / ``data_ms``; the baseline has a slightly different loss curve and speed.

Records are serialised by hand (exact protobuf wire layout + TFRecord framing) because the
protobuf writers cost ~10 us per record. ``verify`` checks a sample of records against the real
schemas: MindSpore's ``summary_pb2`` (in a subprocess: importing mindspore slows protobuf
process-wide) and ``tensorboardX.proto.event_pb2``, byte for byte against their serialisation.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

from crc32c import crc32c

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DATA = HERE / "data"
SAMPLES = REPO / "samples"
SAMPLE_SUMMARY = next((SAMPLES / "gpt-tiny-base" / "summary").glob("*_MS"), None)
SAMPLE_CKPT = SAMPLES / "gpt-tiny-base" / "checkpoint" / "tiny_gpt-3_100.ckpt"

STAMP = 1796035773  # the sample runs' launch stamp
STEP_S = 0.6  # nominal step time

MS_TAGS = ("loss/auto", "lr", "grad_norm", "loss_scale", "tokens_per_s", "lm_loss")
TB_TAGS = ("loss", "learning-rate", "grad-norm", "throughput", "iteration-time", "model-flops-throughput-per-npu")

_U64 = struct.Struct("<Q").pack
_U32 = struct.Struct("<I").pack
_F64 = struct.Struct("<d").pack
_F32 = struct.Struct("<f").pack
_MASK = 0xA282EAD8


# --------------------------------------------------------------------------- wire helpers


def varint(n: int) -> bytes:
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _masked(data: bytes) -> int:
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + _MASK) & 0xFFFFFFFF


def frame(data: bytes) -> bytes:
    """TFRecord framing: u64le len | u32le masked crc(len) | data | u32le masked crc(data)."""
    n = _U64(len(data))
    return n + _U32(_masked(n)) + data + _U32(_masked(data))


def _ld(field: int, payload: bytes) -> bytes:
    return varint(field << 3 | 2) + varint(len(payload)) + payload


# --------------------------------------------------------------------------- curves


def _u(step: int, k: int) -> float:
    """Deterministic uniform [0, 1) noise for (step, k): cheap, so any step can be recomputed."""
    x = math.sin(step * 12.9898 + k * 78.233) * 43758.5453
    return x - math.floor(x)


def _g(step: int, k: int) -> float:
    """Roughly standard-normal noise (sum of three uniforms)."""
    return (_u(step, k) + _u(step, k + 1) + _u(step, k + 2) - 1.5) * 2.0


def curve(step: int, total: int, variant: int = 0, rank: int = 0) -> dict[str, float]:
    """A plausible training run: decaying loss with noise and two spikes, warm-up + cosine lr."""
    k = variant * 31 + rank * 7
    frac = step / total
    scale = 1.03 if variant else 1.0
    loss = (2.1 + 8.5 * math.exp(-step / (0.04 * total)) + 0.6 * math.exp(-frac * 3)) * scale
    loss += 0.02 * _g(step, k)
    if variant == 0 and int(0.37 * total) <= step < int(0.37 * total) + 5:
        loss *= 1.8  # a loss spike
    if variant == 1 and int(0.61 * total) <= step < int(0.61 * total) + 3:
        loss *= 1.5
    warm = max(1, total // 100)
    peak = 3e-4 if variant == 0 else 2.5e-4
    lr = peak * step / warm if step < warm else peak * 0.5 * (1 + math.cos(math.pi * (step - warm) / (total - warm)))
    grad = 0.4 + 0.6 * math.exp(-frac * 5) + 0.05 * abs(_g(step, k + 3))
    step_ms = (STEP_S * 1000 * (1.04 if variant else 1.0)) * (1 + 0.02 * abs(_g(step, k + 6)))
    if step % 1000 == 0:
        step_ms += 2500.0  # checkpoint save
    if step == 1:
        step_ms = 16606.973  # compile
    return {"loss": loss, "lr": lr, "grad_norm": grad, "loss_scale": 65536.0 if step % 5000 else 32768.0,
            "tokens_per_s": 4096 / (step_ms / 1000.0), "lm_loss": loss * 0.97, "step_ms": step_ms,
            "data_ms": abs(2.0 + _g(step, k + 9))}


# --------------------------------------------------------------------------- MindSpore summary


def ms_event(wall: float, step: int, values: list[tuple[bytes, float]]) -> bytes:
    """Event{wall_time=1 (double), step=2, summary=5{value=1{tag=1, scalar_value=3 (float)}*}}."""
    summary = b"".join(_ld(1, b"\x0a" + varint(len(t)) + t + b"\x1d" + _F32(v)) for t, v in values)
    return b"\x09" + _F64(wall) + b"\x10" + varint(step) + _ld(5, summary)


def _sample_graph_record() -> bytes | None:
    """The real graph Event record of the sample summary file (second record)."""
    if SAMPLE_SUMMARY is None:
        return None
    buf = SAMPLE_SUMMARY.read_bytes()
    pos = 0
    for _ in range(2):
        n = struct.unpack_from("<Q", buf, pos)[0]
        rec = buf[pos:pos + 16 + n]
        data = buf[pos + 12:pos + 12 + n]
        if data[9:10] == b"\x22":  # field 4 graph_def right after wall_time
            return rec
        pos += 16 + n
    return None


def write_summary(path: Path, steps: int, variant: int = 0, rank: int = 0, graph: bool = True) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tags = [t.encode() for t in MS_TAGS]
    t0 = float(STAMP + 5)
    parts = [frame(b"\x09" + _F64(float(STAMP)) + b"\x1a" + varint(17) + b"MindSpore.Event:1")]
    g = _sample_graph_record() if graph else None
    if g:
        parts.append(g)
    wall = t0 + 16.6
    for step in range(1, steps + 1):
        c = curve(step, steps, variant, rank)
        wall += c["step_ms"] / 1000.0
        parts.append(frame(ms_event(wall, step, [
            (tags[0], c["loss"]), (tags[1], c["lr"]), (tags[2], c["grad_norm"]),
            (tags[3], c["loss_scale"]), (tags[4], c["tokens_per_s"]), (tags[5], c["lm_loss"]),
        ])))
    tmp = path.with_suffix(".partial")
    with open(tmp, "wb") as f:
        f.write(b"".join(parts))
    tmp.rename(path)


def summary_name(stamp: int, device: int = 0) -> str:
    return f"events.out.events.summary.{stamp}.{device}.bench_MS"


# --------------------------------------------------------------------------- TensorBoard


def tb_event(wall: float, step: int, tag: bytes, value: float) -> bytes:
    """tensorboardX add_scalar: Event{wall_time=1, step=2 (omitted if 0), summary=5{value=1{tag=1, simple_value=2}}}."""
    val = b"\x0a" + varint(len(tag)) + tag + b"\x15" + _F32(value)
    return b"\x09" + _F64(wall) + (b"\x10" + varint(step) if step else b"") + _ld(5, _ld(1, val))


def write_tb(path: Path, steps: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tags = [t.encode() for t in TB_TAGS]
    parts = [frame(b"\x09" + _F64(float(STAMP)) + b"\x1a" + varint(13) + b"brain.Event:2")]
    wall = float(STAMP) + 16.6
    for step in range(1, steps + 1):
        c = curve(step, steps)
        wall += c["step_ms"] / 1000.0
        vals = (c["loss"], c["lr"], c["grad_norm"], 4096 / (c["step_ms"] / 1000) / 8,
                float(int(c["step_ms"])), 4096 * 6 * 7e9 / (c["step_ms"] / 1000) / 1e12)
        for i, tag in enumerate(tags):
            parts.append(frame(tb_event(wall + i * 1e-4, step, tag, vals[i])))
    tmp = path.with_suffix(".partial")
    with open(tmp, "wb") as f:
        f.write(b"".join(parts))
    tmp.rename(path)


# --------------------------------------------------------------------------- text logs

_WARN = ("[WARNING] ME(16790:140355945024384,MainProcess):{date}-{hms}.{ms:03d}.000 [mindspore/context.py:1343] "
         "For 'context.set_context', the parameter 'device_target' will be deprecated and removed in a future "
         "version. Please use the api mindspore.set_device() instead.")
_INFO_NOISE = ("{date} {hms},{ms:03d} - [mindformers/dataset/dataloader/blended_dataset.py:211] - INFO - "
               "Prefetching shard {shard} of the blended dataset into the cache (queue size 64)")
_MF = ("{date} {hms},{ms:03d} - [mindformers/core/callback/callback.py:529] - INFO - {{ Epoch:[{ep:3d}/{eps:3d}], "
       "step:[{sie:5d}/{spe:5d}], loss: {loss:.3f}, per_step_time: {step_ms:.0f}ms, lr: {lr:.8g}, overflow cond: False, "
       "loss_scale: 1.0, global_norm: [{gn:.8g}], train_throughput_per_npu: {tf:.3f}T")
_MF_PROGRESS = ("{date} {hms},{ms:03d} - [mindformers/core/callback/callback.py:529] - INFO -  {pct:5.1f}% "
                "|{bar:<50}| {sps:.5f} samples/s/p  {eta} }}")


_CLOCK: dict[int, tuple[str, str]] = {}


def _clock(wall: float) -> tuple[str, str, int]:
    sec = int(wall)
    hit = _CLOCK.get(sec)
    if hit is None:
        if len(_CLOCK) > 4096:
            _CLOCK.clear()
        t = time.gmtime(sec)
        hit = _CLOCK[sec] = (time.strftime("%Y-%m-%d", t), time.strftime("%H:%M:%S", t))
    return hit[0], hit[1], int((wall % 1) * 1000)


def write_mixed_log(path: Path, lines: int) -> None:
    """A log mixing every line shape formats.md section 4 lists, about a fifth of it noise."""
    path.parent.mkdir(parents=True, exist_ok=True)
    out: list[str] = []
    spe = 1000  # steps per epoch
    total_steps = lines // 7 + 1
    eps = total_steps // spe + 1
    wall = float(STAMP) + 16.6
    out.append(_WARN.format(date="2026-11-30", hms="10:49:33", ms=482))
    out.append("Full model flops is 37748736.0, Full hardware flops is 37748736.0, Shard model flops is "
               "37748736.0, Shard hardware flops is 37748736.0.")
    step = 0
    epoch_ms = 0.0
    while len(out) < lines:
        step += 1
        c = curve(step, total_steps)
        wall += c["step_ms"] / 1000.0
        epoch_ms += c["step_ms"]
        ep, sie = (step - 1) // spe + 1, (step - 1) % spe + 1
        date, hms, ms = _clock(wall)
        out.append(f"epoch: {ep} step: {sie}, loss is {c['loss']:.7g}")
        out.append(f"Train per step time: {c['step_ms']:.3f} ms mfu:{47.0 / c['step_ms']:.2f}% hfu:{47.0 / c['step_ms']:.2f}%")
        out.append(_MF.format(date=date, hms=hms, ms=ms, ep=ep, eps=eps, sie=sie, spe=spe, loss=c["loss"],
                              step_ms=c["step_ms"], lr=c["lr"], gn=c["grad_norm"], tf=c["tokens_per_s"] * 7e9 * 6 / 1e12))
        pct = 100.0 * step / total_steps
        out.append(_MF_PROGRESS.format(date=date, hms=hms, ms=ms, pct=pct, bar="\u2588" * int(pct / 2),
                                       sps=1000.0 / c["step_ms"], eta="0:12:34"))
        out.append(f"{date} {hms}.{ms:03d} step={step} epoch={ep} loss={c['loss']:.6f} lr={c['lr']:.6g} "
                   f"grad_norm={c['grad_norm']:.6f} step_ms={c['step_ms']:.3f} data_ms={c['data_ms']:.3f} "
                   f"tokens_per_s={c['tokens_per_s']:.1f}")
        out.append(_WARN.format(date=date, hms=hms, ms=ms) if step % 2 else
                   _INFO_NOISE.format(date=date, hms=hms, ms=ms, shard=step % 97))
        if step % 2 == 0:
            out.append(json.dumps({"step": step, "loss": round(c["loss"], 6), "lr": c["lr"],
                                   "grad_norm": round(c["grad_norm"], 6), "step_ms": round(c["step_ms"], 3)}))
        if sie == spe:
            out.append(f"Train epoch time: {epoch_ms:.3f} ms, per step time: {epoch_ms / spe:.3f} ms")
            epoch_ms = 0.0
        if step % 5000 == 2500:
            out.append(f"{date} {hms},{ms:03d} - [mindformers/core/callback/callback.py:602] - ERROR - "
                       "Overflow detected, the loss scale is reduced: loss_scale 65536.0 -> 32768.0")
    del out[lines:]
    tmp = path.with_suffix(".partial")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(out))
        f.write("\n")
    tmp.rename(path)


def write_kv_log(path: Path, steps: int, variant: int = 0, rank: int = 0, full: bool = True) -> None:
    """key=value lines as the sample runs print them; ``full=False`` gives step_ms/data_ms only."""
    path.parent.mkdir(parents=True, exist_ok=True)
    wall = float(STAMP) + 21.6
    out = []
    for step in range(1, steps + 1):
        c = curve(step, steps, variant, rank)
        wall += c["step_ms"] / 1000.0
        date, hms, ms = _clock(wall)
        if full:
            out.append(f"{date} {hms}.{ms:03d} step={step} epoch=1 loss={c['loss']:.6f} lr={c['lr']:.6g} "
                       f"grad_norm={c['grad_norm']:.6f} step_ms={c['step_ms']:.3f} data_ms={c['data_ms']:.3f}")
        else:
            out.append(f"{date} {hms}.{ms:03d} step={step} step_ms={c['step_ms']:.3f} data_ms={c['data_ms']:.3f}")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(out))
        f.write("\n")


# --------------------------------------------------------------------------- checkpoints


def parse_ckpt_values(buf: bytes) -> list[tuple[str, list[int], str, bytes]]:
    """(tag, dims, tensor_type, content) of every top-level Value of a small real checkpoint."""

    def rv(p: int) -> tuple[int, int]:
        r = s = 0
        while True:
            b = buf[p]
            r |= (b & 0x7F) << s
            p += 1
            if b < 0x80:
                return r, p
            s += 7

    out = []
    pos = 0
    while pos < len(buf) and buf[pos] == 0x0A:
        n, p = rv(pos + 1)
        end = p + n
        tag, dims, dtype, content = "", [], "", b""
        while p < end:
            key, p = rv(p)
            ln, p = rv(p)
            if key == 0x0A:
                tag = buf[p:p + ln].decode()
            elif key == 0x12:
                q, tend = p, p + ln
                while q < tend:
                    k, q = rv(q)
                    if k == 0x08:
                        d, q = rv(q)
                        dims.append(d)
                    else:
                        m, q = rv(q)
                        if k == 0x12:
                            dtype = buf[q:q + m].decode()
                        elif k == 0x1A:
                            content = buf[q:q + m]
                        q += m
            p += ln
        out.append((tag, dims, dtype, content))
        pos = end
    return out


def _scaled_params(hidden: int, layers: int, vocab: int = 32000, seq: int = 4096) -> list[tuple[str, list[int], str, bytes | None]]:
    """The sample checkpoint's parameter list, scaled to ``layers`` blocks of width ``hidden``."""
    sample = parse_ckpt_values(SAMPLE_CKPT.read_bytes())
    h = hidden
    shapes = {"position": [seq, h], "embedding.embedding_table": [vocab, h], "ln1.gamma": [h], "ln1.beta": [h],
              "qkv.weight": [3 * h, h], "qkv.bias": [3 * h], "proj.weight": [h, h], "proj.bias": [h],
              "position_embedding": [seq, h], "ln2.gamma": [h], "ln2.beta": [h], "fc1.weight": [4 * h, h], "fc1.bias": [4 * h],
              "fc2.weight": [h, 4 * h], "fc2.bias": [h], "ln_f.gamma": [h], "ln_f.beta": [h]}
    out: list[tuple[str, list[int], str, bytes | None]] = []
    for tag, dims, dtype, content in sample:
        prefix, _, rest = tag.partition(".")
        if ".blocks.0." not in "." + tag and ".blocks." in "." + tag:
            continue  # blocks.1..: regenerated from blocks.0 below
        if "blocks.0." in tag:
            head, _, leaf = tag.partition("blocks.0.")
            for i in range(layers):
                out.append((f"{head}blocks.{i}.{leaf}", shapes[leaf], dtype, None))
            continue
        leaf = next((k for k in shapes if tag.endswith(k)), None)
        if leaf is None or not dims:  # global_step, epoch_num, step_num: keep real bytes
            out.append((tag, dims, dtype, content))
        else:
            out.append((tag, shapes[leaf], dtype, None))
    return out


def write_ckpt(path: Path, target_bytes: int, layers: int = 32, sparse: bool = True) -> dict:
    """Choose the width so the file is about ``target_bytes``; tensor contents are holes."""
    itemsize = 4
    lo, hi = 8, 1 << 16
    while lo < hi:  # largest width (multiple of 8) under the target
        mid = (lo + hi + 1) // 2
        total = sum(math.prod(d) * itemsize for _, d, _, c in _scaled_params(mid * 8, layers) if c is None)
        lo, hi = (mid, hi) if total <= target_bytes else (lo, mid - 1)
    params = _scaled_params(lo * 8, layers)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".partial")
    n_values = 0
    with open(tmp, "wb") as f:
        for tag, dims, dtype, content in params:
            clen = len(content) if content is not None else math.prod(dims) * itemsize
            tb = tag.encode()
            tensor_head = b"".join(b"\x08" + varint(d) for d in dims) + _ld(2, dtype.encode()) + b"\x1a" + varint(clen)
            tensor_len = len(tensor_head) + clen
            value_head = _ld(1, tb) + b"\x12" + varint(tensor_len)
            f.write(b"\x0a" + varint(len(value_head) + tensor_len) + value_head + tensor_head)
            if content is not None:
                f.write(content)
            elif sparse:
                f.seek(clen, os.SEEK_CUR)
            else:
                f.write(bytes(clen))
            n_values += 1
        f.truncate(f.tell())
    tmp.rename(path)
    return {"hidden": lo * 8, "layers": layers, "values": n_values, "bytes": path.stat().st_size}


# --------------------------------------------------------------------------- run folders


def _write_rank(job: tuple[str, int, int]) -> None:
    tmp, r, steps = Path(job[0]), job[1], job[2]
    write_kv_log(tmp / f"rank_{r}" / "train.log", steps, rank=r)
    write_summary(tmp / f"rank_{r}" / "summary" / summary_name(STAMP, r), steps, rank=r, graph=False)


def write_rank_folder(root: Path, ranks: int, steps: int) -> None:
    from concurrent.futures import ProcessPoolExecutor

    tmp = root.with_name(root.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    with ProcessPoolExecutor(max_workers=min(ranks, os.cpu_count() or 1)) as pool:
        list(pool.map(_write_rank, [(str(tmp), r, steps) for r in range(ranks)]))
    shutil.rmtree(root, ignore_errors=True)
    tmp.rename(root)


def write_build_run(root: Path, steps: int, variant: int) -> None:
    tmp = root.with_name(root.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    write_summary(tmp / "summary" / summary_name(STAMP + variant * 86400), steps, variant=variant)
    write_kv_log(tmp / "train.log", steps, variant=variant, full=False)
    shutil.rmtree(root, ignore_errors=True)
    tmp.rename(root)


# --------------------------------------------------------------------------- inputs

BIG, SMALL = 250_000, 25_000
INPUTS = {
    "summary": [DATA / "summary" / "big" / summary_name(STAMP), DATA / "summary" / "small" / summary_name(STAMP)],
    "tb": [DATA / "tb" / "big" / f"events.out.tfevents.{STAMP}.bench", DATA / "tb" / "small" / f"events.out.tfevents.{STAMP}.bench"],
    "log": [DATA / "log" / "mixed_1m.log", DATA / "log" / "mixed_100k.log"],
    "ckpt": [DATA / "ckpt" / "big" / "bench_rank_0-1_10000.ckpt", DATA / "ckpt" / "small" / "bench_rank_0-1_10000.ckpt",
             DATA / "ckpt" / "mini" / "bench-1_10.ckpt"],
    "ranks": [DATA / "ranks64", DATA / "ranks8"],
    "build": [DATA / "build" / "run250k", DATA / "build" / "base250k"],
}


def generate(kinds: list[str], force: bool) -> dict:
    made: dict = {}

    def todo(p: Path) -> bool:
        return force or not p.exists()

    def timed(name, fn, *a, **kw):
        t = time.perf_counter()
        r = fn(*a, **kw)
        made[name] = {"seconds": round(time.perf_counter() - t, 2), **(r or {})}
        print(f"  {name:<14} {made[name]['seconds']:6.1f} s", flush=True)

    # What writes each input (in INPUTS order): its name in the timing, the writer, its arguments.
    writers = {
        "summary": [("summary-250k", write_summary, BIG), ("summary-25k", write_summary, SMALL)],
        "tb": [("tb-250k", write_tb, BIG), ("tb-25k", write_tb, SMALL)],
        "log": [("log-1M", write_mixed_log, 1_000_000), ("log-100k", write_mixed_log, 100_000)],
        "ckpt": [
            ("ckpt-10G", write_ckpt, 10 * 10**9),
            ("ckpt-1G", write_ckpt, 10**9),
            ("ckpt-mini", write_ckpt, 4 * 10**6, 4, False),
        ],
        "ranks": [("ranks64", write_rank_folder, 64, 20_000), ("ranks8", write_rank_folder, 8, 20_000)],
        "build": [("build-run", write_build_run, BIG, 0), ("build-base", write_build_run, BIG, 1)],
    }
    for kind, jobs in writers.items():
        if kind not in kinds:
            continue
        for path, (name, writer, *args) in zip(INPUTS[kind], jobs, strict=True):
            if todo(path):
                timed(name, writer, path, *args)
    return made


def missing() -> list[str]:
    return [k for k, paths in INPUTS.items() if not all(p.exists() for p in paths)]


# --------------------------------------------------------------------------- verification

_MS_VERIFY = r"""
import json, struct, sys
from mindspore.train import summary_pb2
import mindspore as ms
from mindspore.train.serialization import load_checkpoint
path, picks, ckpt = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
buf = open(path, "rb").read()
pos, i, out = 0, 0, []
want = set(picks)
while pos < len(buf):
    n = struct.unpack_from("<Q", buf, pos)[0]
    if i in want:
        ev = summary_pb2.Event.FromString(buf[pos + 12:pos + 12 + n])
        out.append({"i": i, "step": ev.step, "wall": ev.wall_time, "version": ev.version,
                    "graph": ev.HasField("graph_def"),
                    "values": [[v.tag, v.scalar_value] for v in ev.summary.value],
                    "reser": ev.SerializeToString() == buf[pos + 12:pos + 12 + n]})
    pos += 16 + n
    i += 1
params = load_checkpoint(ckpt)
shapes = {k: list(v.shape) for k, v in params.items()}
print(json.dumps({"records": i, "picked": out, "ckpt": shapes}))
"""


def verify() -> bool:
    """Check samples of what was written against the real schemas. Returns True when all good."""
    ok = True
    big = INPUTS["summary"][0]
    if big.exists():
        picks = [0, 1, 2, 3, 1000, 125_001, BIG + 1]
        mini = INPUTS["ckpt"][2]
        res = None
        try:
            res = subprocess.run([sys.executable, "-c", _MS_VERIFY, str(big), json.dumps(picks), str(mini)],
                                 capture_output=True, text=True, timeout=600)
            got = json.loads(res.stdout.strip().splitlines()[-1])
        except Exception as exc:  # mindspore missing or broken
            print(f"  summary: mindspore verification unavailable ({exc}; {res.stderr[-300:] if res else ''})")
            got = None
        if got:
            exp_records = BIG + 2
            good = got["records"] == exp_records
            for rec in got["picked"]:
                i = rec["i"]
                if i == 0:
                    good &= rec["version"] == "MindSpore.Event:1"
                elif i == 1:
                    good &= rec["graph"]
                else:
                    step = i - 1
                    c = curve(step, BIG)
                    expect = [c["loss"], c["lr"], c["grad_norm"], c["loss_scale"], c["tokens_per_s"], c["lm_loss"]]
                    good &= rec["step"] == step and [t for t, _ in rec["values"]] == list(MS_TAGS)
                    good &= all(abs(v - struct.unpack("<f", struct.pack("<f", e))[0]) == 0
                                for (_, v), e in zip(rec["values"], expect))
                    good &= rec["reser"]  # summary_pb2 re-serialises to exactly our bytes
            print(f"  summary: {got['records']} records; sampled {len(got['picked'])} decoded with mindspore "
                  f"summary_pb2 and re-serialised byte-identical: {'OK' if good else 'MISMATCH'}")
            ck = got["ckpt"]
            exp = {t: d for t, d, _, c in _scaled_params(write_ckpt_width(mini), 4) if True}
            good_ck = set(ck) == set(exp) and all(list(ck[k]) == list(exp[k]) or not exp[k] for k in exp)
            print(f"  ckpt: mindspore.load_checkpoint read the mini checkpoint ({len(ck)} parameters, same "
                  f"writer code as the 10 GB one): {'OK' if good_ck else 'MISMATCH'}")
            ok &= good and good_ck
    tb = INPUTS["tb"][0]
    if tb.exists():
        from tensorboardX.proto import event_pb2, summary_pb2 as tbs

        buf = tb.read_bytes()
        pos, i, good, checked = 0, 0, True, 0
        while pos < len(buf) and i < 5000:
            n = struct.unpack_from("<Q", buf, pos)[0]
            data = buf[pos + 12:pos + 12 + n]
            ev = event_pb2.Event.FromString(data)
            if i > 0:
                v = ev.summary.value[0]
                again = event_pb2.Event(wall_time=ev.wall_time, step=ev.step, summary=tbs.Summary(
                    value=[tbs.Summary.Value(tag=v.tag, simple_value=v.simple_value)])).SerializeToString()
                good &= again == data and v.tag == TB_TAGS[(i - 1) % 6] and ev.step == (i - 1) // 6 + 1
                checked += 1
            pos += 16 + n
            i += 1
        print(f"  tensorboard: {checked} records decoded with tensorboardX event_pb2 and byte-identical to its "
              f"serialisation: {'OK' if good else 'MISMATCH'}")
        ok &= good
    return ok


def write_ckpt_width(path: Path) -> int:
    """Width of a checkpoint written by write_ckpt (from its position embedding)."""
    vals = parse_ckpt_values(path.read_bytes()) if path.stat().st_size < 50 << 20 else []
    for tag, dims, _, _ in vals:
        if tag == "net.position":
            return dims[1]
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--force", action="store_true", help="regenerate even if present")
    ap.add_argument("--only", default="", help="comma list of: " + ",".join(INPUTS))
    ap.add_argument("--verify-only", action="store_true")
    ap.add_argument("--no-verify", action="store_true")
    args = ap.parse_args(argv)
    kinds = [k for k in args.only.split(",") if k] or list(INPUTS)
    DATA.mkdir(parents=True, exist_ok=True)
    if not args.verify_only:
        t = time.perf_counter()
        print(f"generating into {DATA}")
        made = generate(kinds, args.force)
        print(f"  done in {time.perf_counter() - t:.1f} s")
        if made:
            (DATA / "generated.json").write_text(json.dumps(made, indent=1))
    if args.no_verify:
        return 0
    print("verifying")
    return 0 if verify() else 1


if __name__ == "__main__":
    sys.exit(main())

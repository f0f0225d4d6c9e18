"""Dense peak FLOP/s per device and precision, each with where the number comes from.

Dense means without 2:4 structured sparsity: NVIDIA datasheets print the sparse figure (2x) with
an asterisk; using it halves the MFU. Ascend SKUs other than the 910(A) have no public per-SKU
datasheet; their figures are the widely cited vendor numbers and say so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..text import Text


@dataclass(frozen=True, slots=True)
class Peak:
    device: str
    tflops: dict[str, float]  # precision -> dense TFLOPS
    memory_bytes: float | None
    source: str  # the citation, a code: the catalogue's peak-source.<code> names the document


_GB = 1024**3

PEAKS: tuple[Peak, ...] = (
    Peak("Ascend 910A", {"fp16": 256.0}, 32 * _GB,
         "huawei-910"),
    Peak("Ascend 910B1", {"fp16": 414.0, "bf16": 414.0}, 64 * _GB,
         "huawei-910b"),
    Peak("Ascend 910B2", {"fp16": 376.0, "bf16": 376.0}, 64 * _GB,
         "huawei-910b"),
    Peak("Ascend 910B3", {"fp16": 313.0, "bf16": 313.0}, 64 * _GB,
         "huawei-910b"),
    Peak("Ascend 910B4", {"fp16": 280.0, "bf16": 280.0}, 32 * _GB,
         "huawei-910b"),
    Peak("A100 SXM", {"bf16": 312.0, "fp16": 312.0, "tf32": 156.0, "fp32": 19.5}, 80 * _GB,
         "nvidia-a100"),
    Peak("A100 PCIe", {"bf16": 312.0, "fp16": 312.0, "tf32": 156.0, "fp32": 19.5}, 80 * _GB,
         "nvidia-a100"),
    Peak("H100 SXM", {"bf16": 989.0, "fp16": 989.0, "fp8": 1979.0, "tf32": 494.0, "fp32": 67.0},
         80 * _GB, "nvidia-h100"),
    Peak("H100 PCIe", {"bf16": 756.0, "fp16": 756.0, "fp8": 1513.0, "tf32": 378.0, "fp32": 51.0},
         80 * _GB, "nvidia-h100"),
    Peak("H800 SXM", {"bf16": 989.0, "fp16": 989.0, "fp8": 1979.0, "tf32": 494.0, "fp32": 67.0},
         80 * _GB, "nvidia-h800"),
    Peak("H200", {"bf16": 989.0, "fp16": 989.0, "fp8": 1979.0, "tf32": 494.0, "fp32": 67.0},
         141e9, "nvidia-h200"),
    Peak("L40S", {"bf16": 362.0, "fp16": 362.0, "fp8": 733.0, "tf32": 183.0, "fp32": 91.6},
         48 * _GB, "nvidia-l40s"),
    Peak("V100 SXM2", {"fp16": 125.0, "fp32": 15.7}, 32 * _GB,
         "nvidia-v100"),
)


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower()).replace("ascend", "").replace("nvidia", "")


# Bare family names resolve to one variant; say which in the source note.
_ALIASES = {"910": "Ascend 910A", "910a": "Ascend 910A", "a100": "A100 SXM", "h100": "H100 SXM",
            "h800": "H800 SXM", "v100": "V100 SXM2", "a10080gb": "A100 SXM", "a10040gb": "A100 SXM"}


# Family names that cover SKUs with different peaks: refuse rather than guess.
_AMBIGUOUS = {"910b", "910c"}


def find_peak(device: str | None) -> Peak | None:
    """The table entry for a device name ("910B2", "Ascend910B", "H100-SXM5-80GB", ...)."""
    if not device:
        return None
    key = _key(device)
    if key in _AMBIGUOUS:
        return None
    if key in _ALIASES:
        return next(p for p in PEAKS if p.device == _ALIASES[key])
    # longest table key contained in the given name wins ("h100sxm5" -> "H100 SXM")
    hits = [p for p in PEAKS if _key(p.device) in key]
    if hits:
        return max(hits, key=lambda p: len(_key(p.device)))
    for alias, target in sorted(_ALIASES.items(), key=lambda kv: -len(kv[0])):
        if alias in key:
            return next(p for p in PEAKS if p.device == target)
    return None


def peak_flops(device: str | None, precision: str) -> tuple[float | None, Text]:
    """(dense FLOP/s per device or None, where it is from or why there is none)."""
    peak = find_peak(device)
    if peak is None:
        return None, Text("reason.device-not-in-table", device=device) if device else Text("reason.device-unknown")
    p = precision.lower().replace("float", "fp").replace("bfloat16", "bf16")
    tflops = peak.tflops.get(p)
    if tflops is None:
        return None, Text("reason.precision-not-in-table", device=peak.device, precision=precision)
    return tflops * 1e12, Text("source.peak-table", device=peak.device, precision=p, tflops=tflops,
                               citation=Text(f"peak-source.{peak.source}"))

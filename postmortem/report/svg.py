"""The pictures as files: a chart spec drawn to static SVG, and the paper's post-processing (lines
thinned to the printed resolution, nothing interactive, the SVG as WeasyPrint draws it fastest).

The specs themselves are made in ``charts.py``; this module only draws and reworks them.
"""

from __future__ import annotations

import base64
import re
from typing import Any

import vl_convert

# --------------------------------------------------------------------------- static output


def to_svg(spec: dict) -> str:
    """Static SVG for the PDF; zoom params are inert there."""
    return vl_convert.vegalite_to_svg(spec)


def svg_uri(spec: dict) -> str:
    """A chart as a static SVG image (a data: URI), for paper and for documents without scripts."""
    return svg_data_uri(to_svg(spec))


def svg_data_uri(svg: str) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")



# --------------------------------------------------------------------------- paper

# A line on paper keeps the lowest and highest point of each of this many slices of its x range:
# one per pixel of the printed plot (820 px of SVG drawn about 172 mm wide on A4, 650 px at 96 dpi),
# so a spike still shows. The HTML keeps every row it has (its charts zoom).
PAPER_BUCKETS = 650
_CHILDREN = ("layer", "concat", "hconcat", "vconcat")


def for_paper(spec: dict) -> dict:
    """The spec with every long line's rows thinned to the min and max of each x slice (at most
    2 * PAPER_BUCKETS points per series, first and last kept); other marks keep all their rows.
    A dataset is thinned only when every mark drawn from it is such a line."""
    out = dict(spec)
    rows = (spec.get("data") or {}).get("values")
    if isinstance(rows, list) and len(rows) > 2 * PAPER_BUCKETS:
        users = ([spec] if "mark" in spec else []) + [c for c in spec.get("layer", ()) if "data" not in c]
        xy = {_line_xy(u) for u in users}
        if len(xy) == 1 and None not in xy:
            out["data"] = {**spec["data"], "values": _thin_line(rows, *xy.pop(), PAPER_BUCKETS)}
    for key in _CHILDREN:
        if key in spec:
            out[key] = [for_paper(child) for child in spec[key]]
    return out


def paper_svg(spec: dict) -> str:
    """The chart as drawn on paper: lines thinned (for_paper), nothing interactive (static), and
    the SVG as weasyprint draws it fastest (for_weasyprint). The same picture as to_svg(spec)."""
    return for_weasyprint(to_svg(static(for_paper(spec))))


def static(spec: dict) -> dict:
    """The spec without what only a pointer uses: tooltips, and the ARIA labels vega writes on
    every mark (a tooltip's text per point). The zoom params stay: vega-lite lays a chart out
    with them a pixel taller."""
    out = _static(spec)
    out["config"] = {**out.get("config", {}), "aria": False}
    return out


def _static(node: Any) -> Any:
    if isinstance(node, list):
        return [_static(child) for child in node]
    if not isinstance(node, dict):
        return node
    out = {key: _static(value) for key, value in node.items()}
    if isinstance(out.get("encoding"), dict):
        out["encoding"] = {channel: e for channel, e in out["encoding"].items() if channel != "tooltip"}
    return out


# Vega's SVG: axis labels it hid for overlap (opacity 0) and empty foreground paths (display
# none); its <text> holds text only and its shapes are single tags.
_HIDDEN = re.compile(r'<text [^>]* opacity="0"[^>]*>[^<]*</text>|<(?:path|line|rect) [^>]* (?:opacity="0"|display="none")[^>]*/>')
_SHAPE = re.compile(r'<(?:path|rect|circle) [^>]*/>')
_OPACITY = re.compile(r' opacity="(0?\.\d+)"')


# vl-convert numbers clip paths on from its process's earlier charts: clip1, clip2, ... per SVG.
_CLIP_ID = re.compile(r'(?<=id="clip)\d+(?=")|(?<=url\(#clip)\d+(?=\))')


def for_weasyprint(svg: str) -> str:
    """The SVG without the elements vega hides, which weasyprint would still lay out and paint
    (into a transparent group), and with a shape's opacity as its fill's where it has a fill and
    no stroke: the same paint, which weasyprint draws directly instead of through a transparency
    group of its own (the 250 excluded-step points of a long run: a quarter of the charts'
    drawing time). Its clip paths are numbered from 1, so that a chart's SVG does not depend on
    what its process drew before."""
    numbers: dict[str, str] = {}
    svg = _CLIP_ID.sub(lambda m: numbers.setdefault(m.group(0), str(len(numbers) + 1)), svg)
    return _SHAPE.sub(_fill_opacity, _HIDDEN.sub("", svg))


def _fill_opacity(match: re.Match) -> str:
    tag = match.group(0)
    if ' fill="' not in tag or " stroke=" in tag or " fill-opacity=" in tag or ' fill="none"' in tag:
        return tag
    return _OPACITY.sub(r' fill-opacity="\1"', tag)


def _line_xy(node: dict) -> tuple[str, str] | None:
    mark = node.get("mark")
    kind = mark.get("type") if isinstance(mark, dict) else mark
    enc = node.get("encoding", {})
    x, y = enc.get("x", {}), enc.get("y", {})
    if kind != "line" or x.get("type") != "quantitative" or "field" not in x or "field" not in y:
        return None
    return x["field"], y["field"]


def _thin_line(rows: list[dict[str, Any]], x: str, y: str, buckets: int) -> list[dict[str, Any]]:
    """Rows of each series (the fields other than x and y), in order: first, last, and the min and
    max y of each of `buckets` equal slices of the series' x range; rows without a y stay (a gap)."""
    series: dict[tuple, list[int]] = {}
    for i, row in enumerate(rows):
        series.setdefault(tuple(v for k, v in row.items() if k != x and k != y), []).append(i)
    keep: set[int] = set()
    for idx in series.values():
        if len(idx) <= 2 * buckets:
            keep.update(idx)
            continue
        xs = [rows[i][x] for i in idx if rows[i][x] is not None]
        lo, hi = min(xs), max(xs)
        scale = buckets / ((hi - lo) or 1)
        lowest: dict[int, int] = {}
        highest: dict[int, int] = {}
        keep.update((idx[0], idx[-1]))
        for i in idx:
            row = rows[i]
            v, at = row[y], row[x]
            if v is None or at is None:
                keep.add(i)
                continue
            b = min(int((at - lo) * scale), buckets - 1)
            if b not in lowest:
                lowest[b] = highest[b] = i
            elif v < rows[lowest[b]][y]:
                lowest[b] = i
            elif v > rows[highest[b]][y]:
                highest[b] = i
        keep.update(lowest.values())
        keep.update(highest.values())
    return [rows[i] for i in sorted(keep)]

"""The report's profiler section, built from real profiler files, in both languages."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest

from postmortem.analysis import analyze
from postmortem.load import load_run
from postmortem.report.html import render_html
from postmortem.report.viewmodel import build_view

from conftest import GENERATED

CONF = Path(__file__).resolve().parents[1] / "fixtures" / "conformance"
CHROMIUM = "/usr/bin/chromium"


def _analysis(name: str, baseline: str | None = None):
    base = load_run(str(CONF / baseline)) if baseline else None
    return analyze(load_run(str(CONF / name)), base)


@pytest.fixture(scope="module")
def cluster4():
    return _analysis("mi-cluster-4rank", "mi-run2-ascend-profiler")


def _section(a, lang: str):
    view = build_view(a, lang=lang, generated_at=GENERATED, version="test")
    return view, next(s for s in view.sections if s.id == "profile")


def _texts(section) -> str:
    out = []
    for b in section.blocks:
        if b.kind == "paragraph":
            out.append(b.text)
        elif b.kind == "list":
            out += [i.text for i in b.items]
        elif b.kind == "table":
            out += [b.caption, *b.columns, *(c.text for row in b.rows for c in row)]
    return "\n".join(out)


def test_pipeline_run_in_both_languages(cluster4):
    _, en = _section(cluster4, "en")
    text = _texts(en)
    assert en.blocks[0].text.startswith("Triage: communication-bound — Ranks 0, 1 wait on other ranks 96.7% of their step")
    assert "Receive ops are in flight 96.0% of the step" in en.blocks[0].text and "ranks 2, 3" in en.blocks[0].text
    assert "Balance the pipeline stages" in text and "micro_batch_num" in text
    charts = {b.id for b in en.blocks if b.kind == "chart"}
    assert {"chart-profile", "chart-profile-steps", "chart-comm-ops", "chart-rank-profile"} <= charts
    assert "2 · Operator time TopN: no operator file in this profile" in text  # the missing graph says why
    _, zh = _section(cluster4, "zh")
    ztext = _texts(zh)
    assert zh.blocks[0].text.startswith("瓶颈判断：通信侧瓶颈——卡 0、1 有 96.7% 的 step 时间在等待其他卡")
    for word in ("流水线", "通信占比", "迭代间隙", "算子耗时 TopN", "并行优化器" if False else "micro_batch_num", "被等待（拖慢者）"):
        assert word in ztext, word
    assert not re.search(r"[A-Za-z]{3,} [a-z]{3,} [a-z]{3,} [a-z]{3,}", zh.blocks[0].text)  # no English sentence left


def test_breakdown_bars_add_up_and_overlap_is_beside():
    a = _analysis("mstt-cluster-analysis-output")  # msprof-analyze's table has an Overlapped column
    _, sec = _section(a, "en")
    chart = next(b for b in sec.blocks if b.kind == "chart" and b.id == "chart-profile")
    stack, hidden = chart.spec["layer"]
    total = sum(r["share"] for r in stack["data"]["values"])
    assert total == pytest.approx(1.0, abs=1e-3)  # the partition only: compute + exposed + bubble + idle
    (row,) = hidden["data"]["values"]
    assert row["share"] == pytest.approx(a.profile.breakdown.shares["comm_overlapped"], rel=1e-3)
    table = next(b for b in sec.blocks if b.kind == "table" and b.id == "profile-breakdown")
    beside = next(r for r in table.rows if r[0].text == "communication hidden under compute")
    assert beside[0].title and beside[0].tone == "muted"
    assert "rank 1, idle the most, is the one the others wait for" in sec.blocks[0].text


def test_topn_and_data_pipeline():
    a = _analysis("mi-run2-ascend-profiler")
    _, sec = _section(a, "en")
    table = next(b for b in sec.blocks if b.kind == "table" and b.id == "ops-types-ai_core")
    assert [c.text for c in table.rows[0]] == ["MatMul", "AI_CORE", "9", "20.7 ms", "89.5%"]
    text = _texts(sec)
    assert "Slowest stage: ImageFolderOp(id=3) — a source whose output queue is below 60% full." in text
    assert "empty for 100.0% of 1 batches" in text
    _, zh = _section(a, "zh")
    assert "计算侧瓶颈" in zh.blocks[0].text and "MatMul 占 AI Core 算子耗时的 89.5%" in zh.blocks[0].text


def test_hundreds_of_ranks_stay_readable():
    n, slow = 300, set(range(100, 120))  # 20 ranks the 280 others wait for
    rows = {"rank": list(range(n)), "step": [1] * n, "source": ["step_trace_time"] * n,
            "computing_s": [0.9 if r in slow else 0.5 for r in range(n)],
            "comm_not_overlapped_s": [0.05 if r in slow else 0.3 + 0.1 * (r % 3) / 3 for r in range(n)],
            "free_s": [0.05] * n}
    from tests.analysis.runs import make_run
    a = analyze(make_run(tables={"profile_steps": rows}))
    assert a.ranks.stragglers.awaited == tuple(sorted(slow))
    _, sec = _section(a, "en")
    table = next(b for b in sec.blocks if b.kind == "table" and b.id == "rank-profile")
    # the 12 that wait most, then every straggler (the 20 that wait least include the 12 least)
    assert len(table.rows) == 32 and {int(r[0].text) for r in table.rows[12:]} == slow
    assert table.collapsed
    assert any(b.kind == "chart" and b.id == "chart-rank-wait-distribution" for b in sec.blocks)
    assert "32 of 300 ranks" in _texts(sec)


def test_no_profile_says_so():
    a = analyze(load_run(str(Path(__file__).resolve().parents[2] / "samples" / "gpt-tiny-base")))
    _, sec = _section(a, "en")
    assert sec.blocks[-1].text.startswith("No profiler data in this run")


@pytest.mark.skipif(shutil.which(CHROMIUM) is None, reason="chromium not installed")
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_profile_charts_draw(tmp_path, cluster4, lang):
    view = build_view(cluster4, lang=lang, generated_at=GENERATED, version="test")
    page = tmp_path / "report.html"
    page.write_text(render_html(view), encoding="utf-8")
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={tmp_path / 'chr'}",
           "--virtual-time-budget=15000", "--dump-dom", page.as_uri()]
    dom = subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=True).stdout
    body = re.search(r"<body[^>]*>", dom).group(0)
    assert "data-chart-errors" not in body, body
    assert f'data-charts-drawn="{len(view.charts)}"' in body
    profile_charts = [c.id for s in view.sections if s.id == "profile" for c in s.blocks if c.kind == "chart"]
    assert len(profile_charts) >= 4

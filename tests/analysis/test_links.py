"""Slow links (analysis/links.py) on real profiles and on a link degraded in a copy of a real one.

Real: the conformance folders' transfers (tests/fixtures/conformance/, each with its PROVENANCE.md)
and the mined corpus (tests/fixtures/profcorpus/README.md). Degraded: tests/fixtures/slowlink/
(make_fixtures.py: rank 0's link 0-3 takes 2.5x its recorded time; README.md has the arithmetic).
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from postmortem.analysis import analyze
from postmortem.analysis.links import slow_links
from postmortem.analysis.types import FindingKind, LinkGap, LinkUnit, Symptom
from postmortem.load import load_run
from postmortem.words import render
from postmortem.report.metrics_json import dumps, load_schema, to_metrics
from postmortem.report.verdict import problem_text, verdict_block
from postmortem.words import Labels

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CONF = FIXTURES / "conformance"
CORPUS = FIXTURES / "profcorpus"
DEGRADED = FIXTURES / "slowlink" / "degraded"
DEGRADED_RANKS = FIXTURES / "slowlink" / "degraded-ranks"


@pytest.fixture(scope="module")
def degraded():
    return analyze(load_run(str(DEGRADED)))


def _verdict_lines(a, lang: str) -> list[str]:
    block = verdict_block(a, Labels(lang), {"profile", "phases", "throughput", "findings", "data-quality"})
    return [" ".join([item.title, *item.lines, *item.actions]) for item in block.items]


def test_a_degraded_link_is_named_with_its_figures(degraded):
    s = degraded.profile.links
    assert s.unit == LinkUnit.LINK and s.gap is None and s.source == "communication_matrix.json"
    assert len(s.links) == 14  # the HCCS links of the two ranks' matrices (LOCAL copies are not links)
    assert [(x.src_rank, x.dst_rank, x.transport) for x in s.slow] == [(0, 3, "HCCS")]
    x = s.slow[0]
    assert x.bytes == pytest.approx(61.210624e6)
    assert x.transit_s == pytest.approx(2.5 * 3.89281778125e-3)
    assert x.bandwidth_gbps == pytest.approx(6.2896, abs=1e-3)
    assert x.reference_gbps == pytest.approx(15.54, abs=0.01) and x.peers == 14
    assert x.ratio == pytest.approx(0.405, abs=0.002)
    assert all(not y.slow and y.ratio >= 0.95 for y in s.links if y is not x)


def test_the_slow_link_is_in_the_verdict_beside_slow_ranks_in_both_languages(degraded):
    problems = [p for p in degraded.diagnosis.problems if p.symptom == Symptom.SLOW_LINKS]
    assert len(problems) == 1
    p = problems[0]
    assert p.bottleneck == "communication-bound" and p.side == "environment" and p.actions[0] == "check_link"
    en, zh = _verdict_lines(degraded, "en"), _verdict_lines(degraded, "zh")
    line_en = next(x for x in en if x.startswith("Slow links"))
    line_zh = next(x for x in zh if x.startswith("慢链路"))
    assert "Link 0→3 (HCCS) moves 6.29 GB/s, 40% of the median 15.5 GB/s of its 14 peers" in line_en
    assert "hccn_tool" in line_en
    assert "链路 0→3（HCCS）带宽 6.29 GB/s，仅为同类 14 条链路中位数 15.5 GB/s 的 40%" in line_zh
    assert render(problem_text(p), "en") == "slow links"
    finding = next(f for f in degraded.findings if f.kind == FindingKind.SLOW_LINKS)
    assert "0→3 (HCCS)" in render(finding.text, "en") and "0→3（HCCS）" in render(finding.text, "zh")


def test_the_metrics_json_holds_the_links_and_validates(degraded):
    m = json.loads(dumps(to_metrics(degraded)))
    jsonschema.Draft202012Validator(load_schema()).validate(m)
    s = m["profile"]["slow_links"]
    assert (s["unit"], s["gap"], s["slow"], s["measured"], s["small"]) == ("link", None, 1, 14, 0)
    slow = [x for x in s["links"] if x["slow"]]
    assert [(x["src_rank"], x["dst_rank"], x["transport"]) for x in slow] == [(0, 3, "HCCS")]
    assert "slow_links" in [p["symptom"] for p in m["diagnosis"]["problems"]]


def test_latency_bound_real_transfers_say_why_no_link_is_judged():
    """msprof-analyze's cluster output of a real 2-rank capture: its HCCS+PCIE transfers move 85 and 131 kB,
    its HCCS ones 56 and 184 bytes."""
    a = analyze(load_run(str(CONF / "mstt-cluster-analysis-output")))
    s = a.profile.links
    assert (s.gap, s.links, s.slow, s.measured, s.small) == (LinkGap.LATENCY_BOUND, (), (), 0, 4)
    assert s.reason.params["largest"] == pytest.approx(134208) and s.reason.params["least"] == 16
    assert render(s.reason, "en") == ("No link's bandwidth can be judged: all 4 transfer records are latency-bound small "
                                      "packets — the largest moves 131 KiB over HCCS+PCIE, below the 16 MB a transfer "
                                      "needs to measure bandwidth.")
    assert "时延主导的小包" in render(s.reason, "zh") and "16 MB" in render(s.reason, "zh")
    assert Symptom.SLOW_LINKS not in [p.symptom for p in a.diagnosis.problems]
    m = json.loads(dumps(to_metrics(a)))
    assert m["profile"]["slow_links"]["gap"] == "latency_bound"
    assert m["profile"]["slow_links"]["reason_text"]["key"] == "links.latency-bound"


@pytest.mark.parametrize("folder, unit, judged", [
    (CONF / "msinsight-torchnpu-imagenet-2025", LinkUnit.LINK, 14),
    (CONF / "msinsight-torchnpu-gpt3-2023", LinkUnit.LINK, 7),
    (CORPUS / "msinsight-pt-db-level1", LinkUnit.LINK, 14),  # analysis.db's CommAnalyzerMatrix
    (CORPUS / "mi-prof-2dev-timeline", LinkUnit.LINK, 6),  # msprof's per-link HCCL tasks
])
def test_no_link_is_named_on_healthy_real_data(folder, unit, judged):
    a = analyze(load_run(str(folder)))
    s = a.profile.links
    assert s.unit == unit and s.gap is None and len(s.links) == judged
    assert s.slow == () and min(x.ratio for x in s.links) > 0.9
    assert FindingKind.SLOW_LINKS not in [f.kind for f in a.findings]
    assert Symptom.SLOW_LINKS not in [p.symptom for p in a.diagnosis.problems]


def test_too_few_peers_say_so():
    """msprof-analyze's cluster matrix of the real 2-rank ImageNet capture: one HCCS link each way."""
    s = slow_links(load_run(str(CORPUS / "ma262-imagenet-level1-cluster")).tables["profile_comm"])
    assert (s.gap, s.links) == (LinkGap.TOO_FEW, ())
    assert (s.reason.params["n"], s.reason.params["most"], s.reason.params["peers"]) == (2, 2, 3)
    assert "a median of peers needs 3" in render(s.reason, "en") and "至少需要 3 条" in render(s.reason, "zh")


def test_small_transfers_never_judge_a_link(degraded):
    """The degraded link's own transfers made small (each under 16 MB): it is no longer judged, so not named."""
    comm = load_run(str(DEGRADED)).tables["profile_comm"]
    import polars as pl

    shrunk = comm.with_columns(pl.when((pl.col("src_rank") == 0) & (pl.col("dst_rank") == 3) & (pl.col("rank") == 0))
                               .then(pl.col("bytes") / 10).otherwise(pl.col("bytes")).alias("bytes"))
    s = slow_links(shrunk)
    assert s.small == 1 and len(s.links) == 13 and s.slow == ()


def test_operator_times_alone_say_no_link_can_be_judged():
    """MindInsight's step_trace_raw gives each communication op's time, no bytes: nothing to measure a link by."""
    s = slow_links(load_run(str(CORPUS / "mi-run1-profiler")).tables["profile_comm"])
    assert (s.gap, s.unit, s.links, s.source) == (LinkGap.NO_RECORDS, None, (), "step_trace_raw")
    assert "no communication record gives the bytes" in render(s.reason, "en") and "数据量与传输时间" in render(s.reason, "zh")


@pytest.mark.parametrize("folder", [CORPUS / "mi-ut-profiler", CONF / "mstt-cluster-analysis-output", CONF / "mi-cluster-4rank"])
def test_metrics_json_validates_whatever_the_gap(folder):
    m = json.loads(dumps(to_metrics(analyze(load_run(str(folder))))))
    jsonschema.Draft202012Validator(load_schema()).validate(m)
    assert m["profile"]["slow_links"]["gap"] in ("no_records", "latency_bound", "too_few")
    assert m["profile"]["slow_links"]["reason"]


def test_values_that_are_no_measurement_judge_nothing(degraded):
    """An infinite byte count, or a NaN time and bandwidth, on the slow link (a damaged record) leaves that
    record out, nothing else; a NaN time beside a bandwidth is measured by the bandwidth."""
    import polars as pl

    comm = load_run(str(DEGRADED)).tables["profile_comm"]
    link = (pl.col("src_rank") == 0) & (pl.col("dst_rank") == 3) & (pl.col("rank") == 0)

    def damaged(**values):
        return comm.with_columns(*(pl.when(link).then(v).otherwise(pl.col(c)).alias(c) for c, v in values.items()))

    for case in ({"bytes": float("inf")}, {"transit_s": float("nan"), "bandwidth_gbps": float("nan")}):
        s = slow_links(damaged(**case))
        assert len(s.links) == 13 and s.slow == () and all(0.9 < x.ratio < 1.1 for x in s.links), case
    s = slow_links(damaged(transit_s=float("nan")))
    assert [(x.src_rank, x.dst_rank, round(x.bandwidth_gbps, 2)) for x in s.slow] == [(0, 3, 6.29)]


def test_without_link_records_a_rank_slow_over_one_transport_is_named():
    """Per-op records only (communication.json of a real rank replicated as 4 ranks, rank 2's HCCS 2.5x slower):
    each rank's transfers over a transport against the other ranks', msprof-analyze's advisor unit."""
    a = analyze(load_run(str(DEGRADED_RANKS)))
    s = a.profile.links
    assert (s.unit, s.gap, s.source) == (LinkUnit.RANK, None, "communication.json")
    assert {(x.src_rank, x.transport) for x in s.links} == {(r, t) for r in range(4) for t in ("HCCS", "RDMA")}
    assert [(x.src_rank, x.dst_rank, x.transport) for x in s.slow] == [(2, None, "HCCS")]
    x = s.slow[0]
    # 9 HCCS ops of 146.80064 MB (the real file's Bandwidth Info), each 2.5x its recorded time
    assert x.transfers == 9 and x.bytes == pytest.approx(9 * 146.80064e6)
    assert x.ratio == pytest.approx(0.4, abs=0.002) and x.reference_gbps == pytest.approx(18.83, abs=0.01)
    line_en = next(y for y in _verdict_lines(a, "en") if y.startswith("Slow links"))
    line_zh = next(y for y in _verdict_lines(a, "zh") if y.startswith("慢链路"))
    assert "Rank 2's HCCS transfers move 7.53 GB/s, 40% of the median 18.8 GB/s of its 4 peers" in line_en
    assert "rank 2 的 HCCS 传输带宽 7.53 GB/s，仅为同类 4 张卡中位数 18.8 GB/s 的 40%" in line_zh
    finding = next(f for f in a.findings if f.kind == FindingKind.SLOW_LINKS)
    assert finding.variant == "rank" and "rank 2 over HCCS" in render(finding.text, "en")


def test_the_per_transport_bandwidth_uses_the_links_transfer_time():
    # real torch_npu output: the per-op HCCS transit time is the whole op's (or 0), its bandwidth the
    # transport's; bytes / op time gave 113 GB/s beside links of 15.1-16.0 GB/s (one definition now)
    a = analyze(load_run(str(CONF / "msinsight-torchnpu-imagenet-2025" / "level1")))
    hccs = [x for x in a.profile.communication.links if x.transport == "HCCS"]
    link_bw = [x.bandwidth_gbps for x in a.profile.links.links if x.transport == "HCCS"]
    assert len(hccs) == 1 and min(link_bw) * 0.95 <= hccs[0].bandwidth_gbps <= max(link_bw) * 1.05

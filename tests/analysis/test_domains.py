"""Communication by parallel domain (analysis/domains.py) on real captures, against figures worked
out by hand from the files (json / csv / sqlite3) and msprof-analyze 26.2.0's own output on the
same inputs (docs/formats/profiler-compare-msprof-analyze.md, "Communication by parallel domain")."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import jsonschema
import polars as pl
import pytest

from postmortem.analysis import analyze
from postmortem.analysis.domains import comm_domains
from postmortem.load import load_run
from postmortem.readers.profiler.groups import double_hash
from postmortem.report.sections.domains import metrics_block, verdict_item
from postmortem.words import labels
from postmortem.report.metrics_json import SCHEMA_PATH, to_metrics

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "profcorpus"
ST4 = CORPUS / "msinsight-st-level2-4rank"  # Megatron pp 2 × dp 2, parallel_group_info in profiler_metadata.json
DB1 = CORPUS / "msinsight-pt-db-level1"  # torch_npu DB export, 2 ranks, no layout


def _edit(db: Path, *statements: tuple) -> None:
    """Change a copy of a real DB and close it: these exports are in WAL mode, and closing the last
    connection checkpoints the change into the file, which the reader opens immutable."""
    db.chmod(0o644)
    con = sqlite3.connect(db)
    try:
        for sql, *args in statements:
            con.execute(sql, *args)
        con.commit()
    finally:
        con.close()


def _domains(run):
    t = run.tables
    return comm_domains(t["profile_comm"], t["comm_groups"], t["profile_steps"], run.settings, t["profile_freq"],
                        t["profile_free"])


@pytest.fixture(scope="module")
def st4():
    return load_run(ST4)


def test_double_hash_is_the_name_the_records_carry():
    # analysis.db names the group of COMMUNICATION_OP's HCCL comm name by msprof's double hash
    assert double_hash("90.91.105.46%enp189s0f0_60000_0_1736410538306028") == "17148521525495523210"


def test_groups_and_layout_from_profiler_metadata(st4):
    g = st4.tables["comm_groups"]
    assert g.height == 26 and set(g["pg_name"]) == {"default_group", "dp", "dp_cp", "mp", "tp", "pp", "embd"}
    assert st4.settings["pipeline_stage"].value == 2 and st4.settings["data_parallel"].value == 2
    assert st4.settings["device_num"].value == 4


def test_every_group_gets_its_domain(st4):
    d = _domains(st4)
    by = {(x.name, x.ranks): (x.domain, x.basis) for x in d.groups}
    assert by[("pp", (0, 2))] == ("PP", "pg-name")
    assert by[("dp", (2, 3))] == ("DP", "pg-name") and by[("dp_cp", (0, 1))] == ("DP", "pg-name")
    assert by[("default_group", (0, 1, 2, 3))] == ("world", "pg-name")
    # Megatron's "mp" (tensor × pipeline) with tp 1 is the pipeline's ranks: placed by the layout
    assert by[("mp", (0, 2))] == ("PP", "layout") and by[("mp", (1, 3))] == ("PP", "layout")
    assert not [x for x in d.groups if x.domain == "unknown"]


def test_layout_alone_places_the_same_groups(st4):
    """Without the framework's names the ranks against the layout give the same domains."""
    t = st4.tables
    d = comm_domains(t["profile_comm"], t["comm_groups"].with_columns(pl.lit(None, pl.Utf8).alias("pg_name")),
                     t["profile_steps"], st4.settings, t["profile_freq"], t["profile_free"])
    by = {x.group: x for x in d.groups}
    assert by[double_hash("group_name_19")].domain == "PP"  # pp (0, 2), p2p
    assert by[double_hash("group_name_3")].domain == "DP"  # dp (2, 3)
    assert by[double_hash("group_name_0")].domain == "world"
    assert by[double_hash("group_name_17")].reason == "one-rank"  # tp of one rank: no dimension to place it in


def test_domain_figures_by_hand(st4):
    """Hand sums of communication.json's Elapse Time per domain and rank (pp, mp, embd -> PP; dp,
    dp_cp -> DP), over step_trace_time.csv's Stage + Preparing: PP 352.529 / 362.002 / 193.701 /
    195.979 ms, DP 65.412 / 76.780 / 81.678 / 65.431 ms; step 810.228 / 809.637 / 809.992 / 810.429 ms."""
    d = _domains(st4)
    pp, dp = (next(c for c in d.domains if c.domain == k) for k in ("PP", "DP"))
    assert d.costliest is pp and d.domains[0] is pp
    assert pp.total_s == pytest.approx(0.27605309, rel=1e-6) and pp.share == pytest.approx(0.34078, abs=5e-5)
    assert dp.total_s == pytest.approx(0.07232525, rel=1e-6) and dp.share == pytest.approx(0.08928, abs=5e-5)
    # Overlapped is 0.0 in every rank's step_trace_time.csv: all of it is exposed
    assert pp.exposed_s == pytest.approx(pp.total_s) and pp.exposed_basis == "none-overlapped"
    # the pipeline group (1, 3): rank 3's operators take least (its p2p wait 0.807 ms against rank 1's 164.051 ms)
    assert pp.slowest_rank == 3 and pp.others_wait_s == pytest.approx(0.16405138, rel=1e-6)


def test_exposed_and_idle_match_msprof_analyze_on_a_db_export():
    """msprof-analyze 26.2.0 cluster_time_summary on the same DBs: communicationNotOverlapComputation
    98071.947 µs (rank 0) and 94556.05 µs (rank 1); free_analysis' longest gap on rank 0 2338.607 µs,
    "long time between two node@launch 2773.248 us", PyTorch idle 938.24 µs; its reasons per rank:
    rank 0 2 CANN gaps, 7 PyTorch idle, 1 device task; rank 1 2, 6, 2."""
    run = load_run(DB1)
    d = _domains(run)
    (c,) = d.domains
    assert c.domain == "unknown" and {g.reason for g in d.groups} == {"no-layout"}  # no layout in a 2-of-8 capture
    assert c.exposed_s == pytest.approx((98071.947e-6 + 94556.05e-6) / 2, abs=2e-9) and c.exposed_basis == "intervals"
    assert c.slowest_rank is None  # communication_bottleneck: "No slow NPU detected" on all four operators
    # cluster_time_summary: communicationWaitStageTime 3522.991 / 5.081 µs, TransmitStageTime 98585.109 µs on both ranks
    assert c.wait_stage_s == pytest.approx((3522.991e-6 + 5.081e-6) / 2, abs=2e-9)
    assert c.transmit_stage_s == pytest.approx(98585.109e-6, abs=2e-9)
    free = run.tables["profile_free"].sort("duration_s", descending=True)
    top = free.row(0, named=True)
    assert top["rank"] == 0 and top["duration_s"] == pytest.approx(2338.607e-6, abs=2e-9) and top["reason"] == "launch-gap"
    # the host times within 256 ns: msprof-analyze turns the CANN / PyTorch ns stamps (~1.7e18) into
    # floats, whose step there is 256 ns; postmortem subtracts them as integers (2773.120 µs, 938.150 µs)
    assert top["launch_s"] == pytest.approx(2773.248e-6, abs=256e-9) and top["host_idle_s"] == pytest.approx(938.24e-6, abs=256e-9)
    counts = {(r, k): n for r, k, n in free.group_by("rank", "reason").len().iter_rows()}
    assert counts == {(0, "launch-gap"): 2, (0, "host-idle"): 7, (0, "device-task"): 1,
                      (1, "launch-gap"): 2, (1, "host-idle"): 6, (1, "device-task"): 2}
    assert d.frequency is not None and d.frequency.dropped == () and {r.state for r in d.frequency.ranks} == {"steady"}
    # the "Idle Pytorch layer" gaps of its FreeAnalysis table, summed by hand: rank 0 1181.464 + 1167.343 + 1102.583 +
    # 1095.342 + 954.759 + 844.837 + 804.356 µs; rank 1 1253.945 + 1161.023 + 1153.383 + 1048.781 + 950.619 + 784.396 µs
    (r0, why0, t0), (r1, why1, t1) = d.idle.by_rank
    assert (r0, why0, r1, why1) == (0, "host-idle", 1, "host-idle")
    assert t0 == pytest.approx(7150.684e-6, abs=2e-9) and t1 == pytest.approx(6352.147e-6, abs=2e-9)


def test_a_frequency_drop_is_flagged_with_its_rank(tmp_path):
    """A copy of the real DB export with one AICORE_FREQ sample of rank 1 set to 1300 MHz
    (msprof-analyze freq_analysis on the same copy: AbnormalFrequencyRanks rank 1, [1300, 1800])."""
    run_dir = tmp_path / "run"
    shutil.copytree(DB1, run_dir)
    db = run_dir / "rank1_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_1.db"
    _edit(db, ("UPDATE AICORE_FREQ SET freq = 1300 WHERE rowid = (SELECT MAX(rowid) FROM AICORE_FREQ)",))
    a = analyze(load_run(run_dir))
    f = a.profile.domains.frequency
    assert f.nominal_mhz == 1800 and f.dropped == (1,) and f.ranks[1].min_mhz == 1300
    # the edited sample is rank 1's last: 0.293576 s after the capture's first record (its timestampNs
    # 1736410576683455000 against the DB's first start 1736410576389878870)
    assert f.ranks[1].first_drop_s == pytest.approx(0.29357613, abs=1e-8) and f.ranks[0].first_drop_s is None
    item = verdict_item(a, labels("en"))
    assert item is not None and any("1,300 MHz" in x or "1300 MHz" in x for x in item.lines) and item.tone == "warning"


def test_metrics_block_validates_and_names_the_costliest(st4):
    a = analyze(st4)
    block = metrics_block(a.profile.domains)
    assert block["costliest"] == "PP" and block["domains"][0]["domain"] == "PP"
    m = to_metrics(a)
    assert m["schema_version"] == "1.5" and m["profile"]["domains"]["costliest"] == "PP"
    jsonschema.validate(json.loads(json.dumps(m, default=str)), json.loads(SCHEMA_PATH.read_text()))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_verdict_names_the_domain_with_the_articles_moves(st4, lang):
    a = analyze(st4)
    item = verdict_item(a, labels(lang))
    assert item is not None
    first = item.lines[0]
    if lang == "en":
        assert first.startswith("PP (pipeline parallel)") and "34.1%" in first and "rank 3 is last into it" in first
        assert "micro_batch_num" in item.actions[0]
    else:
        assert first.startswith("PP（流水线并行）") and "34.1%" in first and "卡 3 最后进入" in first
        assert "micro_batch_num" in item.actions[0] and "流水线" in item.actions[0]


def test_meta_data_group_names_place_a_db_export(tmp_path):
    """A copy of the real DB export whose META_DATA gains the parallel_group_info row torch_npu
    writes for a Megatron job (its one group named "dp"). msprof-analyze 26.2.0 on the same copy:
    CommunicationGroupMapping pg_name dp; computational_op_masking parallelType dp:
    totalCommunicationOperatorTime 102108100 / 98590190 ns, totalTimeWithoutCommunicationBlackout
    98071947 / 94556050 ns (ranks 0 / 1)."""
    run_dir = tmp_path / "run"
    shutil.copytree(DB1, run_dir)
    for r in (0, 1):
        db = run_dir / f"rank{r}_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / f"ascend_pytorch_profiler_{r}.db"
        info = {"90.91.105.46%enp189s0f0_60000_0_1736410538306028": {"group_name": "dp", "group_rank": r, "global_ranks": [0, 1]}}
        _edit(db, ("INSERT INTO META_DATA (name, value) VALUES ('parallel_group_info', ?)", (json.dumps(info),)))
    run = load_run(run_dir)
    d = _domains(run)
    (g,) = d.groups
    assert (g.domain, g.basis, g.name, g.group) == ("DP", "pg-name", "dp", "17148521525495523210")
    assert d.costliest is not None and d.costliest.domain == "DP"
    assert d.costliest.total_s == pytest.approx((102108100 + 98590190) / 2 * 1e-9, abs=2e-9)
    assert d.costliest.exposed_s == pytest.approx((98071947 + 94556050) / 2 * 1e-9, abs=2e-9)


def test_damaged_group_and_frequency_records_are_skipped_not_fatal(tmp_path):
    """A real DB export whose parallel_group_info is not JSON and whose frequency samples are text:
    the rest is read, the groups stay unplaced (no-layout), no sample is invented."""
    run_dir = tmp_path / "run"
    shutil.copytree(DB1, run_dir)
    db = run_dir / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db"
    _edit(db, ("INSERT INTO META_DATA (name, value) VALUES ('parallel_group_info', '{\"broken')",),
          ("UPDATE AICORE_FREQ SET freq = 'fast'",))
    run = load_run(run_dir)
    assert run.tables["comm_groups"].is_empty()
    assert set(run.tables["profile_freq"]["rank"].to_list()) == {1}  # rank 0's samples were text
    d = _domains(run)
    assert {g.reason for g in d.groups} == {"no-layout"} and d.frequency.dropped == ()


def test_msprof_analyze_group_map_is_read():
    """msprof-analyze 26.2.0's own cluster_analysis.db (made from msinsight-pt-db-level1):
    CommunicationGroupMapping collective (0,1) 17148521525495523210, no pg_name."""
    g = load_run(CORPUS / "ma262-db-level1-cluster").tables["comm_groups"]
    assert g.select("group", "pg_name", "global_ranks", "source").rows() == [
        ("17148521525495523210", None, [0, 1], "cluster_group_map")]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_report_section_in_both_languages(st4, lang):
    """The profiler section's domain table as the HTML writes it, and the verdict item in the verdict block."""
    from datetime import UTC, datetime

    from postmortem.report.html import render_html
    from postmortem.report.viewmodel import build_view

    a = analyze(st4)
    view = build_view(a, lang=lang, generated_at=datetime(2026, 1, 1, tzinfo=UTC), version="test", inventory=st4.inventory)
    html = render_html(view)
    table = html[html.index('id="tbl-comm-domains"'):]
    table = table[:table.index("</table>")]
    first_row = table[table.index("<tbody"):][:600]
    assert ("PP (pipeline parallel)" if lang == "en" else "PP（流水线并行）") in first_row and "34.1%" in first_row
    assert ("Communication by parallel domain" if lang == "en" else "按并行域的通信") in html
    assert html.count('id="tbl-comm-domain-groups"') == 1

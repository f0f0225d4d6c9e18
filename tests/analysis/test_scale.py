"""Judgement at scale, on real MindSpore CPU runs (tests/fixtures/scale/make_scale_runs.py):

- a model grown only in its checkpoints (hidden 64 -> 128, no config file): its shape enters the
  settings from the tensors, the diff says it can move the step time, and the verdict says the
  bigger model explains the slower step (not the data, not the hosts);
- many ranks made by copying two real one-rank logs (replicate_ranks.py) at 64 and 1,024 ranks:
  the odd half slow, one node of 8, one pipeline stage; named as such, the same at both sizes;
- a real msprof-analyze cluster_step_trace_time.csv: per-rank stats and the awaited rank.
"""

from __future__ import annotations

import io
import re
import shutil
import sys
from datetime import datetime, timezone
from pathlib import Path

import jsonschema
import numpy as np
import polars as pl
import pytest

from postmortem.analysis import analyze
from postmortem.analysis.types import Action, RankGroupKind, Symptom, Verdict
from postmortem.load import load_run
from postmortem.model import Run, Setting
from postmortem.words import render
from postmortem.report.metrics_json import load_schema, to_metrics
from postmortem.report.verdict import rank_group_text, verdict_block
from postmortem.words import labels

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SCALE = FIXTURES / "scale"
sys.path.insert(0, str(SCALE))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from replicate_ranks import replicate, slow_ranks  # noqa: E402

GROWN = SCALE / "model-grown"
CLUSTER = FIXTURES / "conformance" / "mstt-cluster-analysis-output"


def _verdict_text(a, lang: str) -> str:
    block = verdict_block(a, labels(lang), set())
    return "\n".join(line for item in block.items for line in (item.title, *item.lines))


# --------------------------------------------------------------------------- a model grown in its checkpoints


def _params(h: int, vocab: int = 128, seq: int = 32, layers: int = 2) -> int:
    """train_scale.py's TinyLM by hand: embedding, position, per block 2 LayerNorms, qkv, proj,
    fc1 (4h), fc2, and the final LayerNorm."""
    block = 4 * h + (3 * h * h + 3 * h) + (h * h + h) + (4 * h * h + 4 * h) + (4 * h * h + h)
    return vocab * h + seq * h + layers * block + 2 * h


@pytest.fixture(scope="module")
def grown():
    base, cand = load_run(GROWN / "base"), load_run(GROWN / "cand")
    return base, cand, analyze(cand, base)


def test_the_model_shape_is_read_from_checkpoint_tensors(grown):
    base, cand, _ = grown
    for run, h in ((base, 64), (cand, 128)):
        src = "checkpoint:checkpoint/tiny_lm-1_60.ckpt"
        got = {k: (run.settings[k].value, run.settings[k].source) for k in
               ("num_parameters", "hidden_size", "num_layers", "vocab_size", "ffn_hidden_size")}
        assert got == {"num_parameters": (_params(h), src), "hidden_size": (h, src), "num_layers": (2, src),
                       "vocab_size": (128, src), "ffn_hidden_size": (4 * h, src)}
    assert (_params(64), _params(128)) == (110_336, 417_280)  # 3.78x


def test_tokens_per_step_from_the_logged_rate_without_a_config(grown):
    _, _, a = grown
    rows = {r.key: (r.value, r.source) for r in a.identity.settings}
    # the script's tokens_per_s x the wall-clock step: batch 16 x sequence 32, in both runs (no change)
    assert rows["tokens_per_step"] == (16 * 32, "derived:logged throughput × step time")
    assert "tokens_per_step" not in {c.key for c in (*a.comparison.settings.changed, *a.comparison.settings.added)}


def test_the_grown_model_explains_the_slower_step_in_both_languages(grown):
    _, _, a = grown
    rows = {r.key: r for r in a.identity.settings}
    assert rows["hidden_size"].value == 128 and rows["hidden_size"].source.startswith("checkpoint:")
    changed = {c.key: (c.baseline, c.current) for c in a.comparison.settings.changed}
    assert changed["hidden_size"] == (64, 128) and changed["num_parameters"] == (110_336, 417_280)
    slower = next(p for p in a.diagnosis.problems if p.symptom == Symptom.SLOWER)
    links = {s.key: s.explains for s in slower.settings}
    assert links["hidden_size"] and links["num_parameters"]
    assert Action.CHECK_ENVIRONMENT not in slower.actions  # no "compare the hosts": a setting explains it
    assert slower.bottleneck != Verdict.DATA
    assert slower.params["params_ratio"] == pytest.approx(417_280 / 110_336)
    step = next(q for q in slower.quantities if q.key == "step_time_s")
    ratio = step.current / step.baseline
    assert 1.5 < ratio < 3.78 * 1.25  # the committed runs: 421 ms -> 900 ms
    en, zh = _verdict_text(a, "en"), _verdict_text(a, "zh")
    assert "3.78× the baseline's parameters (110k → 417k)" in en and "the bigger model explains the slower step" in en
    assert "模型参数量是基线的 3.78×" in zh and "模型变大足以解释 step 变慢" in zh
    assert "data-bound" not in en and "Compare the hosts" not in en


def test_a_config_file_wins_over_the_tensors_and_a_split_layout_reads_no_shape(tmp_path: Path):
    run = tmp_path / "run"
    shutil.copytree(GROWN / "base", run)
    (run / "run_config.yaml").write_text("model:\n  model_config:\n    hidden_size: 96\n", encoding="utf-8")
    r = load_run(run)
    assert r.settings["hidden_size"] == Setting(96, "config:run_config.yaml")
    assert r.settings["num_parameters"].value == 110_336  # what the config does not say still comes from the tensors
    notes = [d for d in r.diagnostics if d.slug == "setting-conflict"]
    assert notes and notes[0].params["other_value"] == 64
    (run / "run_config.yaml").write_text("parallel_config:\n  model_parallel: 2\n", encoding="utf-8")
    r = load_run(run)
    assert "hidden_size" not in r.settings and "num_parameters" not in r.settings
    assert [d.slug for d in r.diagnostics if d.slug.startswith("checkpoint-shape")] == ["checkpoint-shape-sharded"]


# --------------------------------------------------------------------------- many ranks


def _groups(a) -> list[tuple[str, tuple[int, ...], tuple[str, ...]]]:
    return [(str(g.kind), g.ranks, g.units) for g in a.ranks.groups]


def _same_at_any_size(a, case: str, n: int) -> None:
    slow, _ = slow_ranks(case, n)
    r = a.ranks
    assert r.basis == "steps" and len(r.ranks) == n
    assert set(r.slow_ranks) == slow
    [g] = r.groups
    assert set(g.ranks) == slow and g.of == n
    # the real logs: the slow one's median step is 40-80% over the fast one's
    assert 0.3 < g.excess < 0.9 and g.reference_s == pytest.approx(min(s.median_step_time_s for s in r.ranks))
    if case == "odd":
        assert g.kind == RankGroupKind.PARITY and g.units == ("1",)
    elif case == "node":
        assert g.kind == RankGroupKind.NODE and g.units == (str(min(slow) // 8),) and g.unit_size == 8
        assert r.node_source == "default"
    else:
        size = n // 4 if case == "stage" else 8
        assert g.kind == RankGroupKind.STAGE and g.unit_size == size and g.units == (str(min(slow) // size),)


@pytest.mark.parametrize("case", ["odd", "node", "stage", "stage8"])
def test_64_ranks_name_the_slow_group(tmp_path: Path, case: str):
    replicate(tmp_path / "run", 64, case)
    a = analyze(load_run(tmp_path / "run"))
    _same_at_any_size(a, case, 64)
    en, zh = _verdict_text(a, "en"), _verdict_text(a, "zh")
    expected = {"odd": ("The odd ranks, 32 of 64, run", "奇数号卡（64 张中的 32 张）"),
                "node": ("Node 3 (ranks 24–31, 8 ranks per node) runs", "节点 3（卡 24–31，每节点 8 张卡）"),
                "stage": ("Pipeline stage 2 (ranks 32–47, 16 ranks per stage) runs", "流水线 stage 2（卡 32–47，每个 stage 16 张卡）"),
                "stage8": ("Pipeline stage 4 (ranks 32–39, 8 ranks per stage) runs", "流水线 stage 4（卡 32–39，每个 stage 8 张卡）")}
    assert expected[case][0] in en, en
    assert expected[case][1] in zh, zh
    assert "Node" not in en or case == "node"  # a stage of 8 ranks is never called a node
    slow = next(p for p in a.diagnosis.problems if p.symptom == Symptom.SLOW_RANKS)
    assert slow.actions[0] == (Action.STAGE_BALANCE if case.startswith("stage") else Action.CHECK_STRAGGLER)
    if case == "odd":
        assert "奇数号卡（64张中的32张）比其他卡慢" in _pdf_text(a, "zh")


def test_64_ranks_none_slow(tmp_path: Path):
    replicate(tmp_path / "run", 64, "none")
    a = analyze(load_run(tmp_path / "run"))
    assert a.ranks.slow_ranks == () and a.ranks.groups == ()
    assert not any(p.symptom == Symptom.SLOW_RANKS for p in a.diagnosis.problems)


def _pdf_text(a, lang: str) -> str:
    from pypdf import PdfReader

    from postmortem.report.pdf import render_pdf
    from postmortem.report.viewmodel import build_view

    view = build_view(a, lang=lang, generated_at=datetime(2026, 12, 1, tzinfo=timezone.utc), version="0", inventory=())
    reader = PdfReader(io.BytesIO(render_pdf(view)))
    assert len(reader.pages) < 12  # one note on every rank's log is one row, the long tables are cut on paper
    return re.sub(r"\s+", "", "".join(p.extract_text() for p in reader.pages))  # line breaks fall anywhere


def _recast(run: Run, case: str, n: int) -> Run:
    """The loaded 1,024-rank odd run with its rows given to the ranks of another case: the same as
    copying the files again (every fast rank holds the fast log, every slow one the slow log),
    without loading 1,024 ranks once more."""
    steps = run.tables["steps"]
    fast, slow_rows = steps.filter(pl.col("rank") == 0), steps.filter(pl.col("rank") == 1)
    slow, stages = slow_ranks(case, n)
    parts = [(slow_rows if r in slow else fast).with_columns(pl.lit(r, steps.schema["rank"]).alias("rank")) for r in range(n)]
    settings = dict(run.settings)
    if stages > 1:
        settings["pipeline_stage"] = Setting(stages, "config:run_config.yaml")
    return Run(**{**run.__dict__, "tables": {**run.tables, "steps": pl.concat(parts)}, "settings": settings})


@pytest.fixture(scope="module")
def ranks_1024(tmp_path_factory):
    out = tmp_path_factory.mktemp("r1024") / "run"
    replicate(out, 1024, "odd")
    return load_run(out)


def test_1024_ranks_the_same_as_64(ranks_1024):
    a = analyze(ranks_1024)
    _same_at_any_size(a, "odd", 1024)
    m = to_metrics(a)
    jsonschema.Draft202012Validator(load_schema()).validate(m)
    assert m["ranks"]["slow"] == list(range(1, 1024, 2))
    assert [(g["kind"], g["count"], g["of"]) for g in m["ranks"]["groups"]] == [("parity", 512, 1024)]
    en, zh = _verdict_text(a, "en"), _verdict_text(a, "zh")
    assert re.search(r"The odd ranks, 512 of 1,024, run \d+% slower than the others: \d+ ms per step against \d+(\.\d)? ms", en), en
    assert "奇数号卡（1,024 张中的 512 张）比其他卡慢" in zh
    assert "Theoddranks,512of1,024,run" in _pdf_text(a, "en")  # the Chinese PDF: at 64 ranks (the same words)
    for case in ("node", "stage", "stage8"):
        _same_at_any_size(analyze(_recast(ranks_1024, case, 1024)), case, 1024)
    node = analyze(_recast(ranks_1024, "node", 1024))
    assert "Node 63 (ranks 504–511, 8 ranks per node) runs" in _verdict_text(node, "en")
    # the slow side the larger (513 of 1,024): still the slow ranks, named as 64 nodes and one rank
    more = analyze(_recast(ranks_1024, "majority", 1024))
    assert set(more.ranks.slow_ranks) == set(range(513))
    assert [(str(g.kind), len(g.ranks)) for g in more.ranks.groups] == [("node", 512), ("ranks", 1)]
    assert "Nodes 0–63 (ranks 0–511, 8 ranks per node) run" in _verdict_text(more, "en") and "Rank 512 (of 1,024) runs" in _verdict_text(more, "en")
    stage = analyze(_recast(ranks_1024, "stage", 1024))
    assert "Pipeline stage 2 (ranks 512–767, 256 ranks per stage) runs" in _verdict_text(stage, "en")


def test_rank_sets_are_written_as_ranges():
    def words(ranks, lang="en"):
        return render(rank_group_text({"kind": "ranks", "ranks": ranks, "count": len(ranks), "of": 1024, "excess": 0.5,
                                       "median_s": 1.5, "reference_s": 1.0, "units": []}), lang)
    assert words([512, 513, 514, 515, 516, 517, 518, 519]).startswith("Ranks 512–519 (8 of 1,024) run 50% slower")
    assert words([7]).startswith("Rank 7 (of 1,024) runs 50% slower")
    assert words(list(range(3, 1024, 8))).startswith("Ranks 3, 11, 19, …, 1,019 (128 of 1,024)")
    assert words([1, 2, 5, 9, 10, 11, 40, 50, 60]).startswith("Ranks 1–2, 5, 9–11, 40, …, 60 (9 of 1,024)")
    assert words([512, 513], "zh").startswith("卡 512–513（1,024 张中的 2 张）比其他卡慢 50%")


# --------------------------------------------------------------------------- msprof-analyze's cluster table


def test_a_cluster_folder_gives_per_rank_stats_and_the_awaited_rank():
    a = analyze(load_run(CLUSTER))
    r = a.ranks
    assert r.basis == "profile" and [s.rank for s in r.ranks] == list(range(8))
    # rank 0's row in µs: Computing 80309.687 + Communication(Not Overlapped) 683731.290 + Free 990605.104
    assert r.ranks[0].median_step_time_s == pytest.approx(1.754646081)
    assert not any(s.slow for s in r.ranks)  # the synchronised steps are within 5% of each other ...
    assert r.slow_ranks == (1,)  # ... and rank 1 is the one the others wait for
    m = to_metrics(a)
    jsonschema.Draft202012Validator(load_schema()).validate(m)
    assert m["ranks"]["slow"] == [1] and len(m["ranks"]["stats"]) == 8
    assert m["ranks"]["stats"][1]["median_step_time_s"] == pytest.approx(1.7024317827)
    assert [(g["ranks"], g["awaited"]) for g in m["ranks"]["groups"]] == [([1], True)]
    en, zh = _verdict_text(a, "en"), _verdict_text(a, "zh")
    assert "Rank 1 (of 8): the other ranks wait for it in their collectives (waiting 8% of its step, against 32%" in en
    assert "卡 1（共 8 张）：其他卡在集合通信中等待它" in zh


def test_a_data_wait_below_its_mark_names_no_layer_when_the_model_grew():
    """The issue's case: a 3x model, and a logged data wait that grew by 3 points of the step to 4%,
    below its own 10% mark: the verdict names no data-bound layer and no host comparison."""
    from runs import make_run

    n = 60
    base = make_run("base", [1.0] * n, in_step=[0.99] * n, source="wall-clock:test",
                    settings={"hidden_size": 64, "num_layers": 2})
    cand = make_run("cand", [1.5] * n, in_step=[1.44] * n, source="wall-clock:test",
                    settings={"hidden_size": 128, "num_layers": 2})
    a = analyze(cand, base)
    wait = next(e for e in a.triage.evidence if e.key == "logged_data_wait_share")
    assert wait.value == pytest.approx(0.04) and wait.baseline == pytest.approx(0.01) and wait.value < wait.threshold
    slower = next(p for p in a.diagnosis.problems if p.symptom == Symptom.SLOWER)
    assert slower.bottleneck is None and slower.cause is None
    assert Action.CHECK_ENVIRONMENT not in slower.actions
    assert slower.params["params_ratio"] == pytest.approx(4.0) and slower.params["params_basis"] == "body"
    en = _verdict_text(a, "en")
    assert "The model's body (12 L H²) is 4.00× the baseline's, and the step takes 1.50× as long: the bigger model" in en


def test_nodes_are_the_hosts_the_profiler_folders_name():
    """MindSpore 2.x / torch_npu name each rank's profiler folder {host}_{pid}_{timestamp}_ascend_{ms|pt}
    (the real CPU profile: vm_7866_20261130104420346_ascend_ms): ranks are grouped by it, here 4
    hosts of 4 ranks whose ranks interleave (host = rank % 4), so no block of ranks is a node."""
    from postmortem.analysis.ranks import layout, ranks

    hosts = {r: f"node-{r % 4}" for r in range(16)}
    files = pl.DataFrame({"rank": list(hosts), "file": [f"prof/{h}_{1000 + r}_20261130104420346_ascend_ms/ASCEND_PROFILER_OUTPUT/"
                                                       f"step_trace_time.csv" for r, h in hosts.items()]})
    lay = layout({}, files)
    assert (lay.node_source, lay.node_size, dict(lay.hosts)) == ("host", 4, hosts)
    steps = pl.DataFrame({"rank": [r for r in range(16) for _ in range(5)], "step": [s for _ in range(16) for s in range(1, 6)],
                          "step_time_s": [1.4 if r % 4 == 2 else 1.0 for r in range(16) for _ in range(5)],
                          "in_step_s": [None] * 80}, schema_overrides={"in_step_s": pl.Float64})
    r = ranks(steps, np.array([], dtype=np.int64), layout=lay)
    [g] = r.groups
    assert (g.kind, g.ranks, g.units) == (RankGroupKind.NODE, (2, 6, 10, 14), ("node-2",))
    assert render(rank_group_text({"kind": "node", "by": "host", "ranks": list(g.ranks), "count": 4, "of": 16,
                                   "excess": g.excess, "median_s": g.median_s, "reference_s": g.reference_s,
                                   "units": list(g.units), "unit_size": 4}), "en") == (
        "Host node-2 (ranks 2, 6, 10, 14) runs 40% slower than the other ranks: 1.40 s per step against 1.00 s")
    assert layout({"devices_per_node": Setting(16, "config:x.yaml")}).node_source == "setting"


def test_ranks_whose_checkpoints_differ_hold_shards(tmp_path: Path):
    """Without a config saying model or pipeline parallel, ranks whose latest checkpoints hold other
    tensors are shards (a stage's layers): no shape is read from them; the same tensors on every
    rank (data parallel) are the model's."""
    for rank, src in ((0, "base"), (1, "cand")):
        shutil.copytree(GROWN / src, tmp_path / "shards" / f"rank_{rank}")
        shutil.copytree(GROWN / "base", tmp_path / "replicas" / f"rank_{rank}")
    r = load_run(tmp_path / "shards")
    assert "num_parameters" not in r.settings
    assert [(d.slug, d.variant) for d in r.diagnostics if d.slug.startswith("checkpoint-shape")] == [
        ("checkpoint-shape-sharded", "ranks-differ")]
    r = load_run(tmp_path / "replicas")
    assert r.settings["hidden_size"] == Setting(64, "checkpoint:rank_0/checkpoint/tiny_lm-1_60.ckpt")

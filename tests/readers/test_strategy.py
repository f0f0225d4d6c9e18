"""Auto-parallel strategy files: read as the job's layout, never as checkpoints.

Fixtures: tests/fixtures/strategy (README in make_fixtures.py): two real ParallelStrategyMap files
from MindFormers' tests (MindSpore wrote them), and corrupt copies of one."""

from __future__ import annotations

import glob
import shutil
from pathlib import Path

import pytest

from postmortem.analysis.configcheck import config_checks
from postmortem.analysis.types import Check, CheckStatus
from postmortem.load import load_run
from postmortem.readers.strategy import layout_of, looks_like_strategy, read_strategy_file

HERE = Path(__file__).resolve().parents[1] / "fixtures"
STRATEGY = HERE / "strategy"
REAL = {"strategy_4_npus.ckpt": 4, "strategy_8_npus.ckpt": 8}


@pytest.mark.parametrize("name", sorted(REAL))
def test_real_files_hold_the_layout_their_names_say(name):
    s = read_strategy_file(STRATEGY / name)
    assert (s.format, s.problem, s.save_count, s.merged) == ("protobuf", None, 1, True)
    assert (len(s.operators), len(s.layouts)) == (34, 148)  # hand-checked with MindSpore's own pb2
    layout = layout_of(s)
    assert layout.stages == (0, 1) and layout.pipeline_stages == 2
    # devices per stage x stages = the NPU count in the file's name: a figure the names were not used for
    assert layout.devices_per_stage * layout.pipeline_stages == REAL[name]
    assert layout.model_parallel == 2
    assert layout.data_parallel == REAL[name] // 2 // 2
    assert layout.expert_parallel is None and layout.optimizer_shard is None
    weight = next(p for p in s.layouts if p.name == "1-backbone.blocks.1.output.mapping.weight")
    assert weight.splits == (1, 2) and weight.stage == 1  # tensor_map [-1, 0]: the second dimension over mp


def test_real_checkpoints_are_not_taken_for_strategy_files():
    files = [p for p in glob.glob(str(HERE / "checkpoints" / "**" / "*"), recursive=True) if Path(p).is_file()]
    assert len(files) >= 8
    assert [p for p in files if looks_like_strategy(Path(p).read_bytes()[:4096])] == []
    assert all(looks_like_strategy((STRATEGY / n).read_bytes()[:4096]) for n in REAL)


def _run(tmp_path: Path, strategy: str, config: str | None = None) -> Path:
    run = tmp_path / "run"
    (run / "output" / "strategy").mkdir(parents=True)
    shutil.copy(STRATEGY / strategy, run / "output" / "strategy" / "ckpt_strategy_rank_0.ckpt")
    shutil.copy(HERE / "checkpoints" / "modelcheckpoint" / "net-1_4.ckpt", run / "output" / "net-1_4.ckpt")
    if config:
        (run / "run.yaml").write_text(config)
    return run


def test_a_run_lists_the_strategy_as_its_layout_and_not_as_a_checkpoint(tmp_path):
    run = load_run(_run(tmp_path, "strategy_8_npus.ckpt"))
    assert run.tables["checkpoints"]["path"].to_list() == ["output/net-1_4.ckpt"]
    assert [d.slug for d in run.diagnostics if d.slug.startswith("ckpt-")] == []
    source = "strategy:output/strategy/ckpt_strategy_rank_0.ckpt"
    got = {k: (s.value, s.source) for k, s in run.settings.items() if k.startswith("strategy_")}
    assert got == {"strategy_files": (1, source), "strategy_stages": ([0, 1], source),
                   "strategy_devices_per_stage": (4, source), "strategy_model_parallel": (2, source),
                   "strategy_data_parallel": (2, source), "strategy_pipeline_stages": (2, source)}
    assert run.tables["strategy_splits"].height == 34 + 148


def _differ(check) -> list:
    """The (setting, strategy's, config's) pairs the check's sentence names."""
    pairs = check.detail.params.get("differ", [])
    return [[p.params["key"], p.params["strategy"], p.params["config"]] for p in pairs]


_CONFIG = """use_parallel: True
parallel:
  parallel_mode: 1
parallel_config:
  data_parallel: {dp}
  model_parallel: {mp}
  pipeline_stage: {pp}
"""


@pytest.mark.parametrize(("dp", "mp", "pp", "status", "differ"), [
    (2, 2, 2, CheckStatus.PASS, []),
    (4, 1, 2, CheckStatus.FAIL, [["model_parallel", 2, 1], ["data_parallel", 2, 4]]),
    (2, 2, 1, CheckStatus.FAIL, [["pipeline_stage", 2, 1]]),
])
def test_the_strategy_is_checked_against_the_config(tmp_path, dp, mp, pp, status, differ):
    run = load_run(_run(tmp_path, "strategy_8_npus.ckpt", _CONFIG.format(dp=dp, mp=mp, pp=pp)))
    check = next(c for c in config_checks(run, None, None) if c.name == Check.STRATEGY)
    assert check.status == status
    assert _differ(check) == differ


def test_the_device_count_is_checked_too(tmp_path):
    run = load_run(_run(tmp_path, "strategy_4_npus.ckpt", _CONFIG.format(dp=1, mp=2, pp=2).replace("parallel_mode: 1", "parallel_mode: 1\n  device_num: 8")))
    check = next(c for c in config_checks(run, None, None) if c.name == Check.STRATEGY)
    assert check.status == CheckStatus.FAIL and _differ(check) == [["device_num", 4, 8]]


def test_corrupt_files_keep_what_came_before_and_say_where(tmp_path):
    cut = read_strategy_file(STRATEGY / "corrupt" / "cut_7010.ckpt")
    assert cut.problem_offset == 7000 and "declares 102 bytes" in cut.problem
    assert (len(cut.operators), len(cut.layouts)) == (34, 60)
    bad = read_strategy_file(STRATEGY / "corrupt" / "bad_key.ckpt")
    assert bad.problem is not None and 0 < bad.problem_offset <= 6000
    assert len(bad.layouts) == 147  # only the item holding byte 6,000 is lost

    run = load_run(_run(tmp_path, "corrupt/cut_7010.ckpt"))
    [d] = [d for d in run.diagnostics if d.slug.startswith("strategy")]
    assert (d.slug, d.path, d.offset) == ("strategy-corrupt", "output/strategy/ckpt_strategy_rank_0.ckpt", 7000)
    assert run.settings["strategy_model_parallel"].value == 2  # from the layouts read before the cut


def test_a_map_with_no_items_says_so(tmp_path):
    run = load_run(_run(tmp_path, "corrupt/no_items.ckpt"))
    assert [d.slug for d in run.diagnostics if d.slug.startswith(("strategy", "ckpt-"))] == ["strategy-empty"]
    assert run.tables["checkpoints"].height == 1


def test_auto_parallel_searched_its_own_layout(tmp_path):
    config = _CONFIG.format(dp=4, mp=1, pp=2).replace("parallel_mode: 1", "parallel_mode: 2")
    run = load_run(_run(tmp_path, "strategy_8_npus.ckpt", config))
    check = next(c for c in config_checks(run, None, None) if c.name == Check.STRATEGY)
    assert check.status == CheckStatus.WARN and check.detail.key == "check.strategy-searched"
    assert _differ(check) == [["model_parallel", 2, 1], ["data_parallel", 2, 4]]


def test_random_damage_to_a_real_file_never_raises(tmp_path):
    """Bytes of the real 8-NPU file overwritten at random places: the reader returns what it can and
    names a problem, the layout stays within what a device matrix can hold."""
    import random

    from postmortem.readers.strategy import READER
    from postmortem.model import Artifact

    real = (STRATEGY / "strategy_8_npus.ckpt").read_bytes()
    rng = random.Random(30)
    path = tmp_path / "ckpt_strategy_rank_0.ckpt"
    read = 0
    for i in range(150):
        data = bytearray(real)
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        cut = rng.choice([len(data), rng.randrange(1, len(data))])
        path.write_bytes(bytes(data[:cut]))
        artifact = Artifact(str(path), path.name, cut, 0.0)
        if not READER.claims(artifact):
            continue
        result = READER.read(artifact)
        read += 1
        row = result.tables.get("strategy")
        if row is not None and row.height:
            devices = row["devices_per_stage"][0]
            assert devices is None or 0 < devices <= 1 << 24
        assert all(d.slug in ("strategy-corrupt", "strategy-empty") for d in result.diagnostics)
    assert read > 100


def test_the_report_groups_the_parameters_by_split(tmp_path):
    """148 layouts = 37 model parameters + their adam_m, adam_v and accu_grads copies (3 x 37): the
    groups hold the 37, each split once."""
    from postmortem.analysis.layout import strategy_layout

    view = strategy_layout(load_run(_run(tmp_path, "strategy_8_npus.ckpt")))
    assert sum(g.count for g in view.groups) * 4 == 148
    by_stage = {s: sum(g.count for g in view.groups if g.stage == s) for s in (0, 1)}
    assert by_stage == {0: 18, 1: 19}
    dense = next(g for g in view.groups if g.stage == 1 and g.split == (2, 1))
    assert dense.dev_matrix == (2, 2) and dense.count == 5 and len(dense.examples) == 3

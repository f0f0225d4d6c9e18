import json

import jsonschema
import numpy as np

from postmortem.analysis import AnalysisOptions, analyze
from postmortem.report.metrics_json import dumps, load_schema, to_metrics

from .runs import make_run

SETTINGS = {"global_batch_size": 8, "seq_length": 128, "device": "910B2"}


def run_with(scale: float, seed: int, name: str, settings=SETTINGS, n=400):
    rng = np.random.default_rng(seed)
    t = list(scale * (1.0 + 0.02 * rng.standard_normal(n)))
    loss = list(3.0 * np.exp(-np.arange(1, n + 1) / 100) + 2 + 0.01 * rng.standard_normal(n))
    return make_run(name, step_time=t, scalars={"loss": loss}, settings=settings)


def test_baseline_ten_percent_slower_is_significant():
    cur, base = run_with(1.0, 1, "cur"), run_with(1.1, 2, "base")
    c = analyze(cur, base).comparison
    d = c.delta("step_time_s")
    assert d.significant and d.rel < -0.05 and d.alignment == "steady window"
    assert c.delta("tokens_per_s").significant and c.delta("tokens_per_s").delta > 0
    verdicts = {v.family: v.verdict for v in c.verdicts}
    assert verdicts["throughput"] == "improved"


def test_identical_runs_no_significant_change():
    a = analyze(run_with(1.0, 1, "a"), run_with(1.0, 1, "b"))
    c = a.comparison
    assert all(not d.significant for d in c.deltas if d.significant is not None)
    assert {v.verdict for v in c.verdicts} <= {"no significant change", "unknown"}
    assert c.delta("loss_at_equal_tokens").delta == 0.0


def test_settings_diff():
    base = run_with(1.0, 1, "b", settings={**SETTINGS, "framework_version": "2.3", "dataset": "x"})
    cur = run_with(1.0, 1, "c", settings={**SETTINGS, "framework_version": "2.4", "optimizer": "adamw"})
    s = analyze(cur, base).comparison.settings
    assert [(x.key, x.baseline, x.current) for x in s.changed] == [("framework_version", "2.3", "2.4")]
    assert [x.key for x in s.added] == ["optimizer"] and [x.key for x in s.removed] == ["dataset"]


def test_metrics_json_valid_deterministic_and_nan_free():
    cur, base = run_with(1.0, 1, "cur"), run_with(1.1, 2, "base")
    loss_nan = make_run("nan", step_time=[1.0] * 50, scalars={"loss": [2.0] * 20 + [float("nan")] * 30},
                        events=[{"kind": "checkpoint_save", "step": 10}])
    schema = load_schema()
    for a in (analyze(cur, base, AnalysisOptions(run_id="r1", experiment="e")), analyze(loss_nan), analyze(make_run("empty"))):
        m = to_metrics(a)
        jsonschema.Draft202012Validator(schema).validate(m)
        text = dumps(m)  # raises on NaN
        assert text == dumps(to_metrics(a))
    m = to_metrics(analyze(cur, base, AnalysisOptions(run_id="r1", experiment="e")))
    assert m["run"] == {"id": "r1", "experiment": "e", "steps": {"first": 1, "last": 400, "count": 400},
                        "started_at": None, "finished_at": None}
    # the build's own keys come from the same serializer the pipeline uses
    built = to_metrics(analyze(cur, base, AnalysisOptions(run_id="r1", experiment="e")), started_at="2026-01-01T00:00:00+00:00",
                       generated_at="2026-01-02T00:00:00+00:00", generator="postmortem test", baseline_id="exp/base-1")
    jsonschema.Draft202012Validator(schema).validate(built)
    assert built["run"]["started_at"] == "2026-01-01T00:00:00+00:00" and built["generator"] == "postmortem test"
    assert built["baseline"]["run"]["id"] == "exp/base-1"
    assert m["baseline"]["run"]["id"] == "base"
    assert m["baseline"]["deltas"]["step_time_s"]["significant"] is True
    assert m["throughput"]["excluded"][0] == {"step": 1, "reason": "compile"}
    assert m["mfu"]["peak_flops"] == 376e12 and m["mfu"]["value"] is None  # no parameter count
    n = to_metrics(analyze(loss_nan))
    assert n["stability"]["nan_steps"] == list(range(21, 51))
    assert n["checkpoints"] == [{"step": 10, "path": None, "rank": None, "bytes": None, "params": None, "kind": None,
                                 "save": True, "save_s": 0.0}]
    bad = dict(m, schema_version="2.0")
    try:
        jsonschema.Draft202012Validator(schema).validate(bad)
        raise AssertionError("schema accepted a wrong version")
    except jsonschema.ValidationError:
        pass
    json.loads(dumps(m))

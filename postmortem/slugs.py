"""Every stable name the product gives to what it reports: diagnostic slugs (the data-quality
section, ``metrics.json`` ``data_quality``), error slugs (the one-line ``error[slug]`` of the CLI,
exit code 2) and finding kinds (``metrics.json`` ``findings``), each with its one-line meaning.

A slug is a contract: scripts grep for it. Add new ones here (a test requires every slug used
in the code to be listed, and every listed diagnostic slug to have its texts in both languages
in ``words/catalog/diagnostics.py``); never rename one. The README lists them from here.
"""

from __future__ import annotations

FRAMED_READERS = ("summary", "tensorboard", "lineage")  # readers/framing.py: <reader>-record-crc, ...
READERS = ("checkpoint", "config", "lineage", "summary", "tensorboard", "textlog", "profiler", "callback", "strategy", "health")  # <reader>-nothing-read

DIAGNOSTICS: dict[str, str] = {
    # discovering the run folder
    "dir-unreadable": "a folder of the run cannot be listed (permissions); its files are not read",
    "file-unreadable": "a file cannot be opened or stat'ed; it is not read",
    "symlink-outside": "a symlink points outside the run folder; it is not followed",
    "special-file": "a FIFO, device or socket in the run folder; skipped without opening it",
    "reader-failed": "a reader raised on a file (a bug): the file gave nothing, the rest of the run is read",
    # binary records (summary, TensorBoard, lineage)
    **{f"{r}-file-empty": f"the {r} file is empty" for r in FRAMED_READERS},
    **{f"{r}-record-crc": f"a {r} record's length or data CRC does not match: the record (or the rest) is skipped"
       for r in FRAMED_READERS},
    **{f"{r}-truncated": f"the {r} file's last record is incomplete; everything before it is kept" for r in FRAMED_READERS},
    "summary-bad-record": "a summary record with a good CRC does not decode as an Event",
    "tensorboard-bad-record": "a TensorBoard record does not decode as an Event",
    "lineage-bad-record": "a lineage record does not decode as a LineageEvent",
    "summary-skipped": "summary records of kinds not read (graphs, images, ...), counted",
    "tensorboard-skipped": "TensorBoard records of kinds not read (graphs, images, ...), counted",
    # a claimed file that gave nothing
    **{f"{r}-nothing-read": f"the {r} reader claimed a file but took nothing from it" for r in READERS},
    # checkpoints
    "ckpt-truncated": "a checkpoint is cut short; the parameters before the cut are read",
    "ckpt-corrupt": "a checkpoint's bytes stop making sense part way; the parameters before are read",
    "ckpt-unreadable": "not a MindSpore checkpoint (encrypted or another format)",
    "checkpoint-companion": "a file ModelCheckpoint / SummaryCollector writes beside checkpoints, not read",
    "ckpt-meta-invalid": "a MindFormers meta.json that is not JSON or not a resume pointer",
    # fault-tolerance leftovers (readers/failure/)
    "failure-record-unreadable": "a fault-tolerance record (abnormal_global_norm.json) that is not the JSON its writer writes",
    "failure-record-empty": "a fault-tolerance record (abnormal_global_norm.json) that holds no step",
    "checkpoint-launch-unknown": "copied checkpoints whose launch (and so global step) cannot be told",
    "checkpoint-mtime-outside": "checkpoints whose mtime is outside the run: save times estimated from step times",
    "checkpoint-shape-sharded": "a split layout (model / pipeline parallel): the model's shape is not read from a rank's tensors",
    # auto-parallel strategy files (readers/strategy.py, load/strategy.py)
    "strategy-corrupt": "an auto-parallel strategy file whose bytes stop making sense part way; the items before are read",
    "strategy-empty": "an auto-parallel strategy file with no operator and no parameter",
    "health-record-invalid": "a MindFormers health_ckpts.json that is not a list of {is_health, ckpt_name} entries (or has some that are not)",
    "strategy-files-disagree": "strategy files of one job disagree on a parallel degree; the first file's is kept",
    # configs
    "config-unparseable": "a config file that does not parse (YAML / JSON error, hostile nesting)",
    "config-not-mapping": "a config file whose top level is not a mapping",
    "setting-conflict": "two sources give a setting different values; the most trusted one is used",
    # text logs
    "log-encoding": "a log that is not valid UTF-8; undecodable bytes replaced",
    "log-line-too-long": "log lines longer than the limit, skipped",
    "log-json-invalid": "a JSON-looking log line that does not parse, skipped",
    "log-steps-per-epoch": "how steps per epoch were found, to turn epoch-local steps into global ones",
    "log-no-step": "logged values with no step before them, dropped",
    "log-line-unreadable": "lines of a known log shape that could not be read, skipped",
    "log-field-unreadable": "values of known lines that are not one number, left out",
    "log-errors-capped": "more error lines than kept as events",
    "log-empty": "a log that is empty or blank",
    "log-unrecognised": "a log with no line in a known shape",
    "log-nothing-kept": "a log with known lines but no value with a step",
    "log-clock-local": "log times without a zone that cannot be aligned with UTC: kept as local time",
    "log-clock-aligned": "log times without a zone aligned with UTC by a zoned source",
    # text logs read by their fields (readers/textlog/fields.py, textlog's inference)
    "log-loss-unread": "lines holding a loss-like key that no training record took: the count and the first one",
    "log-keys-unread": "keys printed beside training records that no family of the text-log lexicon takes: each with its count, and the first line",
    "log-inferred": "what a log's counters, ranks or units were inferred from (lines read by their fields)",
    "log-duplicate-source": "two logs of one rank hold the same step lines (MindFormers' worker_N.log and info.log): one source",
    # postmortem's own training callback (readers/callback.py)
    "callback-no-header": "a callback records file without its header: steps are read, the versions and settings are not known",
    "callback-format-newer": "a callback records file of a newer format than this postmortem reads: read as far as understood",
    "callback-line-unreadable": "callback record lines that do not parse (a line cut short by a crash), skipped",
    "callback-no-end": "a callback records file that never recorded the end of training: the process died",
    # loading: units, launches, one value per step
    "unit-unchecked": "a tag written without a unit, read in its default unit with nothing to check it against",
    "unit-by-evidence": "a tag's unit chosen by evidence (wall clock, another source), not its default",
    "unit-undecided": "a tag whose evidence fits no candidate unit: read in the default unit",
    "throughput-unchecked": "MindFormers' per-device throughput with no global batch to check it against",
    "step-counter-restarted": "a source's step counter restarts (a resumed launch counting from 1): shifted to global steps",
    "run-resumed": "a later launch resumed the run; the earlier launch's repeated steps were replaced",
    "source-conflict": "two sources disagree on a value at the same steps; the more trustworthy one is used",
    # profiler output
    "profiler-format-not-read": "a profiler file in a format not read (a warning: it may hold what is missing)",
    "profiler-not-read": "a profiler file known and deliberately not read, and why",
    "profiler-intermediate": "a profiler intermediate file: the file made from it is read instead",
    "profiler-unreadable": "a profiler file that cannot be parsed",
    "profiler-damaged": "a damaged profiler CSV read row by row",
    "profiler-columns": "a profiler file whose header is not the expected one: not read",
    "profiler-row": "profiler rows skipped (no numbers, short, malformed)",
    "profiler-empty": "a profiler file with nothing to read",
    "profiler-json": "a profiler JSON file that does not parse or is not the expected object",
    "profiler-implausible": "profiler figures that contradict each other inside one file",
    "profiler-rank": "the rank of a profiler file as its name and its folder say it",
    "profiler-rank-mismatch": "the path's rank and profiler_info's rank_id differ: rank_id is used",
    "profiler-rank-id": "an msprof device folder whose rank id differs from its device id",
    "profiler-step-trace-row": "step_trace rows whose step_num is not a step number",
    "profiler-cluster-rows": "a MindInsight cluster file with one row only",
    "profiler-keys": "keys of a profiler JSON file not read",
    "profiler-cluster-derived": "msprof-analyze's cluster summary beside the per-rank folders it summarises",
    "profiler-cluster-stage-rows": "msprof-analyze stage rows not read (the rank rows are)",
    "profiler-partition": "msprof-analyze rows whose parts do not add up",
    "profiler-units": "a memory record whose writer (and so MB unit) is not known",
    "profiler-no-step": "kernel_details without Step Id: kernels have no step",
    "profiler-covered": "a profiler file whose data another read file carries",
    "profiler-superseded": "an earlier msprof export replaced by a later one",
    "profiler-trace-events": "what a trace_view.json holds (event counts)",
    "profiler-trace-truncated": "a trace_view.json cut short: events up to the cut are read",
    "profiler-devices": "rows of several devices in one profiler file",
    "profiler-outside-steps": "device time outside every profiled step, not counted",
    "profiler-bubble-overlapped": "steps whose p2p time exceeds the exposed communication",
    "profiler-preparing-in-free": "Preparing time that lies inside Free, not added again",
    "profiler-op-types-only": "operator totals per type only: names unknown",
    "profiler-first-iteration": "msprof --analyze keeps each operator's first iteration only",
    "profiler-step-trace-no-fp": "msprof iterations without an FP start: only their total is known",
    "profiler-no-overlap": "an msprof timeline without Overlap Analysis events",
    "profiler-outside-iterations": "msprof overlap events in no iteration, left out",
    "profiler-whole-capture": "an msprof timeline without iterations: one row for the whole capture",
    "profiler-raw": "msprof's raw data whose exports are read",
    "profiler-raw-not-exported": "msprof's raw data with nothing exported: the command to export it",
    "profiler-metadata": "msprof capture metadata of a device",
    "profiler-db-export": "msprof's database export of data also exported as text",
    "profiler-logs": "msprof's own log files, not read",
    # profcorpus: older CANN per-iteration exports and database exports
    "profiler-listed": "a file of a folder of raw data, logs or unread exports, counted in the note on the folder's first file",
    "profiler-repeated": "a per-iteration msprof export that repeats an earlier file byte for byte: read once",
    "profiler-task-types": "msprof tasks that are not compute (HCCL notify / copy tasks): their operators come from hccl_*.json",
    "profiler-db": "a profiler database read: which tables gave rows",
    "profiler-db-tables": "a profiler database without the tables or columns read: what is missing",
    # profiler values checked at the door (readers/profiler/common.py)
    "profiler-utf8": "bytes of a profiler file that are not UTF-8, replaced (counted as decoded, no second pass)",
    "profiler-bad-duration": "profiler durations not finite, negative or over a day: dropped, counted per column",
    "profiler-duplicate-steps": "a step written twice in one step-time file: the last row of each step is kept",
    "profiler-steps-unordered": "a step-time file whose steps are out of order: read in step order",
    "profiler-entries-dropped": "entries of a profiler JSON file of the wrong shape, dropped and counted",
    # analysis and the build
    "steps-from-profile": "no training step times were logged: the profiled steps' totals are used",
    "batch-size-contradicted": "the batch size of the settings disagrees with the logged throughput",
    "baseline-missing": "a rebuilt report's baseline is no longer archived: rebuilt without it",
}

ERRORS: dict[str, str] = {
    "run-dir-missing": "the run folder does not exist",
    "run-dir-not-a-directory": "the run folder is a file",
    "run-dir-unreadable": "the run folder cannot be listed",
    "run-dir-empty": "the run folder holds no file any reader claims",
    "baseline-not-found": "the baseline (a folder, an archived run, prev) cannot be found",
    "out-inside-run": "the output folder is inside the run folder (nothing is written in a run folder)",
    "out-unwritable": "the archive folder cannot be written",
    "out-write-failed": "writing the report into the archive failed; nothing partial is left",
    "render-failed": "rendering failed (disk full, no space for a renderer's temp files); nothing was written",
    "archive-missing": "the archive folder does not exist",
    "archive-unreadable": "an archived run cannot be read",
    "archive-version": "an archived run was written by a newer archive layout",
    "run-not-archived": "no archived run has this id",
    "run-id-ambiguous": "several experiments archive a run with this id: name the experiment",
    "bad-run-id": "a run id that cannot be a folder name",
    "bad-experiment-name": "an experiment name that cannot be a folder name",
    "bad-option": "a command-line option or its value cannot be used",
    "config-missing": "the --config file does not exist",
    "config-unreadable": "the config file (postmortem.toml, pyproject.toml) cannot be read",
    "config-invalid": "a setting of the config file has a wrong type or value",
    "config-unknown-key": "the config file has a key postmortem does not know",
    "check-config-missing": "postmortem check: the training config does not exist",
    "check-config-unreadable": "postmortem check: the training config cannot be read (permissions, not a regular file, too large)",
    "check-config-unparseable": "postmortem check: the training config is not valid YAML / JSON / UTF-8",
    "check-config-not-training": "postmortem check: the file holds no model, parallel or batch setting",
    "usage": "the command line cannot be parsed (click's message, in English)",
    "interrupted": "stopped by the user (Ctrl-C)",
    "internal": "a bug: the exception's name and message; POSTMORTEM_DEBUG=1 shows the traceback",
}

# Finding kinds (analysis/types.py FindingKind): what the findings list can say.
FINDINGS: dict[str, str] = {
    "implausible": "a headline figure that cannot be right (MFU outside its range, a timer or tokens/s that contradict the wall clock or the log)",
    "nan_loss": "steps with NaN/Inf loss or grad norm",
    "loss_spikes": "loss spikes by the causal robust rule, and how they recovered",
    "grad_norm_spikes": "grad-norm spikes by the causal robust rule, and how they recovered",
    "divergence": "a loss spike that never recovered",
    "explosion": "a loss / grad-norm value >= 10x the median of the up to 5 logged values before it, or NaN/Inf, at any log density; its recovery in logged values",
    "overflows": "loss-scale overflows (the update applied or skipped; the steps stay in the time window)",
    "not_converged": "the loss did not converge, and why (no drop, still moving, non-finite end)",
    "low_mfu": "MFU below 20%",
    "mfu_unknown": "MFU cannot be computed, and why",
    "comm_bound": "communication no compute hides is over 25% of the profiled step",
    "triage": "the bottleneck (data, compute, communication, memory, host) and the evidence for it",
    "data_stalls": "steps that waited for data far longer than usual, and the time lost",
    "checkpoint_tax": "checkpoint saves take over 5% of the wall time",
    "interrupted_checkpoint": "checkpoint saves that never finished",
    "restarts": "the run restarted (several launches)",
    "log_errors": "error lines in the logs",
    "slow_ranks": "ranks whose step time is well above the others'",
    "slow_links": "links (or a rank's transfers over one transport) below 80% of their peers' median bandwidth, from transfers big enough to measure it",
    "config": "a configuration check that failed or warns",
    "unhealthy_checkpoint": "MindFormers' health_ckpts.json marks saves unhealthy (embedding local norm at or over its threshold); the save to resume from",
    "embedding_norm": "the embedding's local norm at or over MindFormers' embedding_local_norm_threshold (default 1.0)",
    "token_drops": "MoE layers dropping tokens over the experts' capacity (MindFormers' drop_rate above 0)",
    "regression": "a family of figures regressed significantly against the baseline",
    "improvement": "a family of figures improved significantly against the baseline",
    "unusual": "a headline figure outside its experiment's normal range (median ± 3 scaled MAD of its last comparable archived runs)",
}


# The verdict block's problems (analysis/diagnosis.py, analysis.types.Symptom): metrics.json
# diagnosis.problems[].symptom.
SYMPTOMS: dict[str, str] = {
    "slower": "throughput regressed against the baseline (step time, tokens/s)",
    "faster": "throughput improved against the baseline",
    "less_efficient": "efficiency regressed against the baseline (MFU, checkpoint tax)",
    "more_efficient": "efficiency improved against the baseline",
    "loss_worse": "convergence regressed against the baseline (loss at equal tokens, final loss)",
    "loss_better": "convergence improved against the baseline",
    "less_stable": "stability regressed against the baseline (spikes, NaN)",
    "more_stable": "stability improved against the baseline",
    "implausible": "a headline figure cannot be right (its inputs are wrong: peak, batch, timer unit)",
    "nan": "NaN/Inf loss or grad norm in the run",
    "diverged": "a loss spike that never recovered",
    "exploded": "a loss / grad-norm explosion (>= 10x its level, or NaN/Inf): leads the verdict, with or without a baseline",
    "spikes": "loss / grad-norm spikes in the run itself (no baseline)",
    "bottleneck": "the profiler triage's bottleneck in the run itself (data, memory, compute, communication, host)",
    "data_stalls": "steps that waited for data much longer than usual",
    "checkpoint_tax": "checkpoint saves take a visible share of the wall time",
    "slow_ranks": "ranks slower than the others",
    "slow_links": "links whose bandwidth is well below their peers' (same transport and group), beside slow ranks",
    "errors": "error lines in the logs, interrupted saves, restarts",
    "not_converged": "the loss was still moving, or never came down (no baseline)",
}


def markdown_table(rows: dict[str, str]) -> str:
    """The README's list of slugs (``python -m postmortem.slugs`` prints all four)."""
    return "\n".join(["| slug | meaning |", "|---|---|", *(f"| `{k}` | {v} |" for k, v in sorted(rows.items()))])


if __name__ == "__main__":
    for title, rows in (("Diagnostics", DIAGNOSTICS), ("Errors", ERRORS), ("Finding kinds", FINDINGS), ("Verdict symptoms", SYMPTOMS)):
        print(f"#### {title}\n\n{markdown_table(rows)}\n")

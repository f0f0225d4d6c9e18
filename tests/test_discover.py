"""Discovery: sorted walk, one reader per file, nothing dropped silently, nothing dangerous opened."""

import os

import pytest

from postmortem.discover import discover
from postmortem.errors import InputError
from postmortem.model import ReadResult
from postmortem.readers.base import Reader, rank_from_path

LOGS = Reader("textlog", lambda a: a.rel.endswith(".log"), lambda a: ReadResult("textlog"))
ANY = Reader("any", lambda a: True, lambda a: ReadResult("any"))


def test_missing_and_empty_run_dirs_are_one_line_errors(tmp_path):
    with pytest.raises(InputError) as missing:
        discover(tmp_path / "nope", [LOGS])
    assert missing.value.slug == "run-dir-missing"
    with pytest.raises(InputError) as empty:
        discover(tmp_path, [LOGS])
    assert empty.value.slug == "run-dir-empty"
    (tmp_path / "f").write_text("x")
    with pytest.raises(InputError) as not_dir:
        discover(tmp_path / "f", [LOGS])
    assert not_dir.value.slug == "run-dir-not-a-directory"


def test_walk_is_sorted_and_unclaimed_files_are_listed(tmp_path):
    for rel in ("b/train.log", "a/z.log", "a/notes.md", "rank_3/worker.log"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    found = discover(tmp_path, [LOGS])
    assert [c.artifact.rel for c in found.claimed] == ["a/z.log", "b/train.log", "rank_3/worker.log"]
    assert [a.rel for a in found.unclaimed] == ["a/notes.md"]
    assert found.claimed[2].artifact.rank == 3


def test_first_reader_that_claims_wins(tmp_path):
    (tmp_path / "x.log").write_text("x")
    found = discover(tmp_path, [LOGS, ANY])
    assert [c.reader.name for c in found.claimed] == ["textlog"]


def test_symlinks_are_not_followed_and_outside_links_are_reported(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "train.log").write_text("x")
    outside = tmp_path / "secret.log"
    outside.write_text("secret")
    os.symlink(outside, run / "leak.log")
    os.symlink(run, run / "loop")
    found = discover(run, [LOGS])
    assert [c.artifact.rel for c in found.claimed] == ["train.log"]
    notes = {s.rel: s.note for s in found.skipped}
    assert "outside" in notes["leak.log"]
    assert "loop" in notes
    assert any(d.slug == "symlink-outside" and d.path == "leak.log" for d in found.diagnostics)


def test_fifos_are_skipped_without_opening(tmp_path):
    (tmp_path / "train.log").write_text("x")
    os.mkfifo(tmp_path / "pipe.log")  # opening it for reading would block forever
    found = discover(tmp_path, [LOGS])
    assert [c.artifact.rel for c in found.claimed] == ["train.log"]
    assert [s.rel for s in found.skipped] == ["pipe.log"]


@pytest.mark.parametrize(
    "rel, rank",
    [
        ("output/log/rank_7/info.log", 7),
        ("output/msrun_log/worker_12.log", 12),
        ("tensorboard/rank_0/events.out.tfevents.1.host", 0),
        ("output/checkpoint/rank_2/llama_rank_2-1_100.ckpt", 2),
        ("train.log", None),
        ("ranking/notes.log", None),
    ],
)
def test_rank_from_path(rel, rank):
    assert rank_from_path(rel) == rank

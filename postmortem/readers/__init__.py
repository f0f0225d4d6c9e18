"""One module per source. Order matters: the first reader that claims a file gets it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # importing the package imports no polars (config.py uses readers.guard before a Session)
    from .base import Reader


def all_readers() -> tuple[Reader, ...]:
    # Imported lazily so `postmortem --help` stays fast.
    from . import callback, checkpoints, configfile, health, lineage, mindspore_summary, profiler, strategy, tensorboard, textlog

    return (
        callback.READER,  # postmortem's own callback: claimed by its file name before any other reader
        lineage.READER,
        mindspore_summary.READER,
        tensorboard.READER,
        health.READER,  # MindFormers' health_ckpts.json, before the config reader claims its .json name
        strategy.READER,  # by content, before the checkpoint and config readers claim its .ckpt / .json name
        checkpoints.READER,
        profiler.READER,
        configfile.READER,
        textlog.READER,
    )


def witnesses() -> tuple[Reader, ...]:
    """Readers that read a file beside the reader that claimed it (discover.py): the failure
    reader takes the incidents of every log, whichever reader has its records."""
    from . import failure

    return (failure.READER,)

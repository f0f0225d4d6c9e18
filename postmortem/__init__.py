"""postmortem: explain a finished MindSpore training run from the files it left on disk."""

import os as _os
import sys as _sys

__version__ = "0.1.0"

KEEP_FREED_PAGES = "dirty_decay_ms:-1,muzzy_decay_ms:-1"  # jemalloc: reuse freed pages, never return them

# polars' allocator (jemalloc) gives freed pages back to the OS half a second after a free, and
# the next table faults them in again. With a worker process busy on the other core, that made
# every rank read here ~20% slower (64 ranks: 6.4 s -> 5.6 s; alone on one core it changes
# nothing). postmortem runs as a short-lived command, so it keeps freed pages for reuse.
# jemalloc reads this once, when polars is imported, so it is set here, before; a setting the
# user made is left alone. (Worker processes import this package before polars too.)
if "polars" not in _sys.modules and "_RJEM_MALLOC_CONF" not in _os.environ:
    _os.environ["_RJEM_MALLOC_CONF"] = KEEP_FREED_PAGES

"""Only the optional C helpers live here; everything else is in pyproject.toml.

optional=True: where no compiler is available the install still succeeds and the readers use
their reference paths (the pure-Python framing loop, numpy record groups, the polars text-log
path): slower, same results.
"""

from setuptools import Extension, setup

COLUMNS = "postmortem/readers/_columns.h"  # growable byte columns, shared by two of them

setup(
    ext_modules=[
        Extension("postmortem.readers._framing", ["postmortem/readers/_framing.c"], optional=True, extra_compile_args=["-O3"]),
        Extension("postmortem.readers._logscan", ["postmortem/readers/_logscan.c"], depends=[COLUMNS], optional=True, extra_compile_args=["-O3"]),
        Extension("postmortem.readers._scalars", ["postmortem/readers/_scalars.c"], depends=[COLUMNS], optional=True, extra_compile_args=["-O3"]),
    ]
)

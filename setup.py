"""Only the optional C helpers live here; everything else is in pyproject.toml.

optional=True: where no compiler is available the install still succeeds and the readers use
their plain Python references (the framing loop, the per-record protobuf decoder, the per-line log
parser): slower, same results. POSTMORTEM_NO_C=1 makes an installed copy use them too.
"""

from setuptools import Extension, setup

COLUMNS = "postmortem/readers/_columns.h"  # growable byte columns, shared by the three

setup(
    ext_modules=[
        Extension("postmortem.readers._framing", ["postmortem/readers/_framing.c"], depends=[COLUMNS], optional=True, extra_compile_args=["-O3"]),
        Extension("postmortem.readers._logscan", ["postmortem/readers/_logscan.c"], depends=[COLUMNS], optional=True, extra_compile_args=["-O3"]),
        Extension("postmortem.readers._scalars", ["postmortem/readers/_scalars.c"], depends=[COLUMNS], optional=True, extra_compile_args=["-O3"]),
    ]
)

"""Only the optional C framing helper lives here; everything else is in pyproject.toml.

optional=True: where no compiler is available the install still succeeds and the readers use
the pure-Python framing loop (slower, same results).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("postmortem.readers._framing", ["postmortem/readers/_framing.c"], optional=True, extra_compile_args=["-O3"])
    ]
)

"""Settings for the whole test session."""

import atexit
import os
import shutil
import tempfile

# Reports keep vl-convert's JavaScript bundle in the user's cache folder (report/html.py): tests
# use a folder of their own for the session (subprocesses inherit it) and leave the user's alone.
_CACHE = tempfile.mkdtemp(prefix="postmortem-test-cache-")
os.environ["XDG_CACHE_HOME"] = _CACHE
atexit.register(shutil.rmtree, _CACHE, ignore_errors=True)

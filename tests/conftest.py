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

# No share outside [0, 1] in any metrics.json the suite builds (tests/shares.py says how): every
# document to_metrics returns is kept, and checked with the metrics.json files written under the
# session's temporary folders when the session ends.
import postmortem.report.metrics_json as _metrics_json  # noqa: E402  (after XDG_CACHE_HOME is set)
from shares import COLLECTOR  # noqa: E402

_metrics_json.to_metrics = COLLECTOR.wrap(_metrics_json.to_metrics)


def pytest_sessionfinish(session, exitstatus):
    factory = getattr(session.config, "_tmp_path_factory", None)
    folders = [factory.getbasetemp()] if factory is not None and getattr(factory, "_basetemp", None) else []
    problems = COLLECTOR.problems(folders)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and (COLLECTOR.documents or COLLECTOR.walked):
        reporter.write_line(f"shares: {len(COLLECTOR.documents)} metrics documents built, {COLLECTOR.walked} "
                            f"metrics.json files walked, {len(problems)} shares outside [0, 1]")
    if problems:
        for line in problems[:50]:
            if reporter is not None:
                reporter.write_line(f"share outside [0, 1]: {line}", red=True)
        session.exitstatus = 1

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


def _check_shares(session):
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


# No process of the suite outlives its test (issue 23): every process the suite starts carries
# the mark; a test's teardown fails while a helper of this process is alive (a Session not closed),
# a module's while any marked process is (a SIGKILLed CLI's helpers are nobody's children), and
# the session ends failed if one is left at its end.
import uuid  # noqa: E402

import pytest  # noqa: E402

from suite_processes import MARK, children, describe, end, marked, wait_gone  # noqa: E402

_TOKEN = uuid.uuid4().hex
os.environ[MARK] = _TOKEN


@pytest.fixture(autouse=True)
def _no_helper_outlives_its_test():
    yield
    left = wait_gone(children)
    if left:
        pytest.fail(f"helper processes outlived the test that started them: {describe(left)}", pytrace=False)


@pytest.fixture(autouse=True, scope="module")
def _no_process_of_the_suite_outlives_its_module():
    yield
    left = wait_gone(lambda: marked(_TOKEN))
    if left:
        said = describe(left)
        end(left)  # the suite's own (its token): one leak is reported once, not by every later module
        pytest.fail(f"processes of the suite outlived their module: {said}", pytrace=False)


def _check_processes(session):
    left = wait_gone(lambda: marked(_TOKEN))
    if left:
        session.config.get_terminal_writer().line(f"processes of the suite left at its end: {describe(left)}", red=True)
        end(left)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_sessionfinish(session, exitstatus):
    _check_shares(session)
    _check_processes(session)

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


def pytest_sessionfinish(session, exitstatus):
    left = wait_gone(lambda: marked(_TOKEN))
    if left:
        session.config.get_terminal_writer().line(f"processes of the suite left at its end: {describe(left)}", red=True)
        end(left)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED

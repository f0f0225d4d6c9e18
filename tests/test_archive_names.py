"""Experiment names and run ids become folder names only after validation."""

import pytest

from postmortem.archive import safe_name, validate_name
from postmortem.errors import InputError


@pytest.mark.parametrize("name", ["gpt-tiny", "llama2_7b.lr3e-4", "实验-1", "run+2026-11-30"])
def test_good_names(name):
    assert validate_name(name, "run id") == name


@pytest.mark.parametrize(
    "name", ["", ".", "..", "../x", "a/b", "a\\b", ".hidden", "-rf", "tab\there", "nl\nx", "x" * 129, " pad"]
)
def test_names_that_could_escape_or_confuse_are_refused(name):
    with pytest.raises(InputError) as exc:
        validate_name(name, "run id")
    assert exc.value.slug == "bad-run-id"


@pytest.mark.parametrize("text", ["../../etc", "a/b\x00c", ".git", "   ", "-x"])
def test_safe_name_always_validates(text):
    assert validate_name(safe_name(text), "run id")

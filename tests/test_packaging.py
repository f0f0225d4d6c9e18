"""The wheel ships every subpackage: pyproject lists packages by name (templates/ is mapped into
the package), so a new subpackage left out of the list imports from a checkout but not from an
installed wheel."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_subpackage_is_listed():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "postmortem").rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert found <= listed, f"missing from pyproject [tool.setuptools] packages: {sorted(found - listed)}"

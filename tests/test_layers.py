"""The layers of pyproject.toml's import-linter contract hold: no module imports from a layer above
its own (readers -> load -> analysis -> words -> archive -> report -> index -> pipeline / weekly -> cli)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def lint_imports(root: Path, config: Path) -> subprocess.CompletedProcess:
    linter = shutil.which("lint-imports", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    if linter is None:
        pytest.fail("lint-imports is not installed: pip install -e '.[dev]' (import-linter)")
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([linter, "--no-cache", str(config)], cwd=root, env=env, capture_output=True, text=True, timeout=300)


def test_the_layer_contract_holds():
    result = lint_imports(ROOT, ROOT / "pyproject.toml")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout


def test_an_upward_import_breaks_it_and_is_named(tmp_path):
    """The contract is not vacuous: analysis reaching up into the report fails, naming the import."""
    shutil.copytree(ROOT / "postmortem", tmp_path / "postmortem", ignore=shutil.ignore_patterns("*.so", "__pycache__", "schema"))
    stats = tmp_path / "postmortem" / "analysis" / "stats.py"
    stats.write_text(stats.read_text() + "\nfrom ..report import blocks  # noqa: E402,F401\n")
    result = lint_imports(tmp_path, ROOT / "pyproject.toml")
    assert result.returncode != 0
    assert "postmortem.analysis.stats -> postmortem.report.blocks" in result.stdout


def test_no_import_circle_in_report_and_words():
    import grimp

    graph = grimp.build_graph("postmortem", cache_dir=None)
    mods = {m for m in graph.modules if m.startswith(("postmortem.report", "postmortem.words"))}
    circles = [(a, b) for a in mods for b in graph.find_modules_directly_imported_by(a)
               if b in mods and b != a and graph.chain_exists(importer=b, imported=a)]
    assert circles == [], f"modules that import each other (directly or through others): {sorted(circles)}"


def test_report_and_words_import_the_package_only_at_the_top():
    """An import inside a function may delay a heavy library (altair, weasyprint), never hide a circle."""
    import ast

    late = []
    for path in sorted([*(ROOT / "postmortem" / "report").rglob("*.py"), *(ROOT / "postmortem" / "words").rglob("*.py")]):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for inner in ast.walk(node):
                    own = (isinstance(inner, ast.ImportFrom) and (inner.level > 0 or (inner.module or "").startswith("postmortem"))
                           or isinstance(inner, ast.Import) and any(a.name.startswith("postmortem") for a in inner.names))
                    if own:
                        late.append(f"{path.relative_to(ROOT)}:{inner.lineno}")
    assert late == []

"""One registry of names, one catalogue of sentences: every slug the code uses is listed (with its
meaning, in the README), every key a Text can take has a template in both languages, and the two
templates of a key take the same parameters."""

from __future__ import annotations

import re
from pathlib import Path

from postmortem import slugs
from postmortem.analysis import types as t
from postmortem.words import TEMPLATES, placeholders

REPO = Path(__file__).resolve().parents[2]
SOURCES = [p for p in (REPO / "postmortem").rglob("*.py")]
CODE = {p: p.read_text(encoding="utf-8") for p in SOURCES}


def _used(pattern: str) -> set[str]:
    return {m for text in CODE.values() for m in re.findall(pattern, text)}


def test_every_template_has_both_languages_with_the_same_parameters():
    bad = []
    for key, (en, zh) in TEMPLATES.items():
        if not en or not zh:
            bad.append(f"{key}: a language is empty")
        elif {n for n, _ in placeholders(en)} != {n for n, _ in placeholders(zh)}:
            bad.append(f"{key}: {placeholders(en)} vs {placeholders(zh)}")
    assert bad == []


def test_every_diagnostic_and_error_slug_used_is_listed():
    diagnostics = _used(r"\b(?:warning|error|info)\(\s*\"([a-z0-9-]+)\"")
    errors = _used(r"(?:Input|Output|Postmortem)Error\(\s*\"([a-z0-9-]+)\"")
    assert diagnostics and errors
    assert sorted(diagnostics - set(slugs.DIAGNOSTICS)) == []
    assert sorted(errors - set(slugs.ERRORS)) == []


def test_every_listed_diagnostic_has_its_sentences():
    missing = [s for s in slugs.DIAGNOSTICS if s not in TEMPLATES and not any(k.startswith(s + "/") for k in TEMPLATES)]
    assert missing == []


def test_every_static_text_key_has_a_template():
    keys = _used(r"\bText\(\s*\"([a-z][a-z0-9_./-]*)\"")
    assert len(keys) > 100
    assert sorted(k for k in keys if k not in TEMPLATES) == []


def test_the_keys_made_from_codes_have_templates():
    """Keys built from a code (f"action.{x}"): every member of the code's enum has its template."""
    made = {
        "verdict.title.": t.Symptom, "action.": t.Action, "group.": t.SettingGroup, "where.": t.Side,
        "check.": t.Check, "effect.": t.Family,
    }
    missing = [p + str(m) for p, enum in made.items() for m in enum if p + str(m) not in TEMPLATES]
    assert missing == []
    kinds = {str(k) for k in t.FindingKind}
    assert kinds == set(slugs.FINDINGS)
    assert [k for k in kinds if f"finding.{k}" not in TEMPLATES and not any(x.startswith(f"finding.{k}/") for x in TEMPLATES)
            and k != "triage"] == []
    assert {str(s) for s in t.Symptom} == set(slugs.SYMPTOMS)


def test_the_readme_lists_every_slug():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    rows = {**slugs.DIAGNOSTICS, **slugs.ERRORS, **slugs.FINDINGS, **slugs.SYMPTOMS}
    assert [s for s in rows if f"`{s}`" not in readme] == [], "python -m postmortem.slugs prints the README's tables"


def _raised_errors() -> list[tuple[str, str, str, set[str]]]:
    """Every ``InputError(...)`` / ``OutputError(...)`` in the code with a literal slug: (file,
    slug, variant, parameter names)."""
    import ast

    found = []
    for path, text in CODE.items():
        for node in ast.walk(ast.parse(text)):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("InputError", "OutputError", "PostmortemError")):
                continue
            if not node.args or not isinstance(node.args[0], ast.Constant):
                continue  # a slug made from a name (bad-run-id, bad-experiment-name): the next test
            variant = next((k.value.value for k in node.keywords if k.arg == "variant"), "")
            found.append((path.name, node.args[0].value, variant, {k.arg for k in node.keywords if k.arg != "variant"}))
    return found


def test_every_error_raised_has_its_sentence_with_its_parameters():
    raised = _raised_errors()
    assert len(raised) > 25
    bad = []
    for file, slug, variant, params in raised:
        key = f"error.{slug}" + (f"/{variant}" if variant else "")
        if key not in TEMPLATES:
            bad.append(f"{file}: {key} has no template")
        elif {n for n, _ in placeholders(TEMPLATES[key][0])} != params:
            bad.append(f"{file}: {key} takes {placeholders(TEMPLATES[key][0])}, is given {sorted(params)}")
    assert bad == []


def test_every_listed_error_has_its_sentences():
    missing = [s for s in slugs.ERRORS if f"error.{s}" not in TEMPLATES and not any(k.startswith(f"error.{s}/") for k in TEMPLATES)]
    assert missing == []

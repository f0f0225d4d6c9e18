"""The settings changed against the baseline, what can explain a change first."""

from __future__ import annotations

from ...analysis import types as t
from ...analysis.identity import effects, explaining_order, per_run
from ...words import Labels
from ..blocks import Block, Cell, Paragraph, Section, table
from .settings import setting_cell


def _effects(key: str, L: Labels) -> str:
    """The families of figures a change of the setting can move (analysis/identity.py)."""
    moved = [f for f in t.Family if f in effects(key)]
    return L.join(L.name("family_", f) for f in moved) if moved else L["nothing"]


def section(a: t.Analysis, L: Labels) -> Section | None:
    """Changed against the baseline, what can explain a change first (hyperparameters, the parallel
    layout); the run's own values (the last loss, paths, FLOPs derived from other settings) apart."""
    comp = a.comparison
    if comp is None:
        return None
    d = comp.settings
    changes = sorted(((kind, c) for kind, cs in (("changed", d.changed), ("added", d.added), ("removed", d.removed)) for c in cs),
                     key=lambda kc: explaining_order(kc[1].key))
    rows, run_rows = [], []
    for kind, c in changes:
        row = [Cell(c.key), setting_cell(c.baseline, L), setting_cell(c.current, L), Cell(L[kind], tone="warning" if kind == "changed" else "")]
        if per_run(c.key):
            run_rows.append(row)
        else:
            rows.append([*row, Cell(_effects(c.key, L), tone="muted")])
    if not rows and not run_rows:
        return Section("diff", L["diff"], (Paragraph(L["no_diff"]),))
    base = L['baseline'] + L['paren'].format(comp.baseline_id)
    blocks: list[Block] = []
    if rows:
        blocks.append(table("settings-diff", [L["setting"], base, L["current"], L["change"], L["can_explain"]], "lllwl", rows,
                             caption=L["settings_diff"]))
    else:
        blocks.append(Paragraph(L["no_diff"]))
    if run_rows:
        blocks.append(table("run-values-diff", [L["setting"], base, L["current"], L["change"]], "lllw", run_rows,
                             caption=L["run_values"], collapsed=True))
    return Section("diff", L["diff"], tuple(blocks))

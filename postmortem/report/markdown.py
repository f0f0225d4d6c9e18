"""ReportView -> summary.md: the headline figures and findings in a few lines for chat or mail."""

from __future__ import annotations

import re

from ..words import labels
from .blocks import ReportView

# Characters that start emphasis, code, links or tables anywhere in a line. Hyphens, dots, "#"
# and "+" only matter at the start of a line, and every line here starts with our own markup, so
# they stay unescaped and readable ("gpt-tiny-lr2x", "-9.7%") in clients that show raw text.
_MD_INLINE = re.compile(r"([\\`*_\[\]|~])")


# HTML in Markdown starts only with "<" before a tag's first character and "&" before an entity's
# name; a backslash escapes those and nothing else, so "< 4 stages" and "A & B" stay as written in
# a chat that shows the raw text (an entity such as &lt; would be shown as is there).
_MD_HTML = re.compile(r"(<(?=[A-Za-z/!?])|&(?=#?\w+;))")


def escape_md(text: str) -> str:
    """Escape Markdown and HTML in user strings (run ids, tags, messages) so they stay literal,
    with backslashes only (CommonMark), never entities: the text reads the same raw and rendered."""
    text = " ".join(text.splitlines())
    text = _MD_INLINE.sub(r"\\\1", text)
    return _MD_HTML.sub(r"\\\1", text)


def render_markdown(view: ReportView) -> str:
    L = labels(view.lang)
    colon = L["colon"]
    s = view.summary
    lines = [f"**{escape_md(view.title)}**"]
    lines.append(" · ".join(f"{escape_md(k)}{colon}{escape_md(v)}" for k, v in view.meta))
    if s.badges:
        lines.append(" · ".join(f"{escape_md(b.label)}{colon}**{escape_md(b.verdict)}**" for b in s.badges))
    lines.append("")
    v = view.verdict
    if v is not None:  # the verdict first: each problem, its numbers, what explains it, what to try
        lines.append(f"**{escape_md(v.title)}**{colon}{escape_md(v.note)}")
        if v.empty:
            lines.append(f"- {escape_md(v.empty)}")
        for it in v.items:
            head = f"- **{escape_md(it.tag)}** · {escape_md(it.title)}"
            lines.append(head + (f"{colon}{escape_md(it.numbers)}" if it.numbers else ""))
            if it.lines:
                stop = L["stop"] + ("" if view.lang == "zh" else " ")
                lines.append("  - " + escape_md(stop.join(it.lines) + L["stop"]))
            if it.actions:
                lines.append(f"  - {escape_md(L['try_first'])}{colon}" + escape_md(" ".join(it.actions[:2])))
        lines.append("")
    for st in s.stats:
        line = f"- {escape_md(st.label)}{colon}**{escape_md(st.value)}**"
        if st.delta:
            parts = [st.delta, st.rel, L.fmt("against_baseline", verdict=st.verdict, baseline=st.baseline)]
            line += L["paren"].format(L["list_sep_md"].join(escape_md(p) for p in parts if p))
        elif st.reason:
            line += L["paren"].format(escape_md(st.reason))
        lines.append(line)
    if s.note:
        lines += ["", escape_md(s.note)]
    findings = next((b for sec in view.sections if sec.id == "findings" for b in sec.blocks if b.kind == "list"), None)
    if findings is not None:
        lines += ["", f"**{escape_md(L['findings'])}**"]
        lines += [f"- {escape_md(it.tag)}{colon}{escape_md(it.text)}" for it in findings.items]  # type: ignore[union-attr]
    lines += ["", f"_postmortem {escape_md(view.version)} · {escape_md(view.generated_at)}_", ""]
    return "\n".join(lines)

"""Every word the documents show, and the one place where data becomes text in a language.

``catalog/`` holds the catalogue (labels and sentence templates, English and Chinese side by side,
in modules by area), ``render`` words a ``Text``, ``labels`` gives one language's labels,
``numbers`` writes numbers, units and dates. The layers below (readers, load, analysis) say what
they have to say as ``Text`` and never import this package (pyproject.toml's layer contract; its one
exception: the English message of a diagnostic and an error, for logs and tests); the report words it.
"""

from __future__ import annotations

from .catalog import LABELS, TEMPLATES
from .labels import CATALOGS, HTML_LANG, LANGS, Labels, labels
from .numbers import MISSING
from .wording import english, label, name, placeholders, render, setting_value, source_text, template

__all__ = ["CATALOGS", "HTML_LANG", "LABELS", "LANGS", "MISSING", "TEMPLATES", "Labels", "english", "label", "labels", "name",
           "placeholders", "render", "setting_value", "source_text", "template"]

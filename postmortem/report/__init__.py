"""The report: an analysis laid out as a view (``viewmodel.build_view``: ``blocks`` made by the
``sections``), drawn as HTML, PDF and Markdown, and as metrics.json. Its words are ``postmortem.words``'."""

"""The report's sections, one module each; each module's ``section`` builds its ``Section`` from the
analysis (``headline`` also the summary at the top, ``profile`` the profiler's section)."""

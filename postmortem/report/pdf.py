"""ReportView -> PDF bytes with weasyprint: A4, page numbers, contents with page numbers.

Charts are static SVG (vl-convert, lines thinned to the printed pixels: svg.paper_svg) passed
as data: URIs; the URL fetcher refuses everything else,
so rendering never touches the network or the file system.
"""

from __future__ import annotations

from collections.abc import Sequence

import weasyprint
from weasyprint.urls import URLFetcher

from . import svg as pictures
from .html import render
from .blocks import ReportView


class OfflineFetcher(URLFetcher):
    """Serve data: URIs only; any other URL (http, https, file, ...) is refused, never fetched."""

    def __init__(self) -> None:
        super().__init__(allowed_protocols=("data",), allow_redirects=False)

    def fetch(self, url: str, headers: dict | None = None):  # type: ignore[override]
        if not url.startswith("data:"):
            self.refused.append(url)
            raise ValueError(f"postmortem PDF rendering fetches nothing: refused {url[:80]!r}")
        return super().fetch(url, headers)

    refused: list[str]


def offline_fetcher() -> OfflineFetcher:
    fetcher = OfflineFetcher()
    fetcher.refused = []
    return fetcher


def render_pdf_html(view: ReportView, svgs: Sequence[str] | None = None) -> str:
    """The HTML weasyprint lays out (exposed for debugging and tests). `svgs`: the charts as
    chart_svgs(view) draws them, if they were drawn already."""
    svgs = chart_svgs(view) if svgs is None else svgs
    return render(
        "report.html.j2", lang=view.lang, paper=True, version=view.version, view=view,
        specs={}, images={c.id: pictures.svg_data_uri(svg) for c, svg in zip(view.charts, svgs, strict=True)},
    )


def chart_svgs(view: ReportView) -> list[str]:
    """The report's charts as drawn on paper, in view.charts order."""
    return [pictures.paper_svg(c.spec) for c in view.charts]


def render_pdf(view: ReportView, svgs: Sequence[str] | None = None) -> bytes:
    return html_to_pdf(render_pdf_html(view, svgs))


def html_to_pdf(html: str) -> bytes:
    """A self-contained HTML page (the report's paper version, the weekly digest) as a PDF, with a
    fetcher that fetches nothing but data: URIs."""
    return weasyprint.HTML(string=html, url_fetcher=offline_fetcher(), base_url=None).write_pdf()

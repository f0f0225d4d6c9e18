"""ReportView -> PDF bytes with weasyprint: A4, page numbers, contents with page numbers.

Charts are static SVG (vl-convert) passed as data: URIs; the URL fetcher refuses everything else,
so rendering never touches the network or the file system.
"""

from __future__ import annotations

import base64

import weasyprint
from weasyprint.urls import URLFetcher
from markupsafe import Markup

from . import charts
from .format import labels
from .html import environment, read_template_file
from .viewmodel import ReportView


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


def _svg_uri(spec: dict) -> str:
    svg = charts.to_svg(spec)
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")


def render_pdf_html(view: ReportView) -> str:
    """The HTML weasyprint lays out (exposed for debugging and tests)."""
    svgs = {c.id: _svg_uri(c.spec) for c in view.charts}
    return environment().get_template("report_pdf.html.j2").render(
        view=view,
        L=labels(view.lang),
        css=Markup(read_template_file("report.css")),
        svgs=svgs,
        specs={},
    )


def render_pdf(view: ReportView) -> bytes:
    document = weasyprint.HTML(string=render_pdf_html(view), url_fetcher=offline_fetcher(), base_url=None)
    return document.write_pdf()


def html_to_pdf(html: str) -> bytes:
    """Any self-contained HTML page (the weekly digest) as a PDF, with the same offline fetcher."""
    return weasyprint.HTML(string=html, url_fetcher=offline_fetcher(), base_url=None).write_pdf()

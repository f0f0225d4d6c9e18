"""Checks of a document as weasyprint lays it out: its boxes, not its HTML."""

from __future__ import annotations

import re

import weasyprint
from weasyprint.formatting_structure import boxes

from postmortem.report.pdf import offline_fetcher

# A run of this many Chinese characters or fewer is a word or two (html.breakable keeps it whole).
_HAN_WORDS = re.compile(r"(?<![\u4e00-\u9fff])[\u4e00-\u9fff]{2,12}(?![\u4e00-\u9fff])")  # whole runs: a longer one is prose


def layout(html: str):
    return weasyprint.HTML(string=html, url_fetcher=offline_fetcher(), base_url=None).render()


def _right(box) -> float:
    return box.position_x + box.margin_width()


def problems(document) -> list[str]:
    """What does not fit: a box past the page's right margin, text past its table cell's right
    edge, a Chinese word split across two lines of a cell."""
    out = []
    for number, page in enumerate(document.pages, 1):
        page_box = page._page_box
        right_edge = page_box.content_box_x() + page_box.width
        for box in page_box.descendants():
            if getattr(box, "width", None) is not None and hasattr(box, "content_box_x"):
                if box.content_box_x() + box.width - right_edge > 0.5:
                    out.append(f"page {number}: {type(box).__name__} runs {box.content_box_x() + box.width - right_edge:.1f}px past the margin")
            if isinstance(box, boxes.TableCellBox):
                cell_right = box.border_box_x() + box.border_width()
                lines = [l for l in box.descendants() if isinstance(l, boxes.LineBox)]
                texts = ["".join(t.text for t in l.descendants() if isinstance(t, boxes.TextBox)) for l in lines]
                for t in (t for l in lines for t in l.descendants() if isinstance(t, boxes.TextBox)):
                    if _right(t) - cell_right > 0.5:
                        out.append(f"page {number}: {t.text!r} runs {_right(t) - cell_right:.1f}px out of its cell")
                for word in _HAN_WORDS.findall("".join(texts)):
                    if len(texts) > 1 and not any(word in text for text in texts):
                        out.append(f"page {number}: {word!r} split across lines: {texts}")
    return out

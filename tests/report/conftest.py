from __future__ import annotations

import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from fixtures import inventory, make_analysis  # noqa: E402

from postmortem.report.html import render_html  # noqa: E402
from postmortem.report.blocks import ReportView  # noqa: E402
from postmortem.report.viewmodel import build_view  # noqa: E402

GENERATED = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)


def view_of(n: int = 2000, *, lang: str = "en", hostile: bool = False, baseline: bool = True) -> ReportView:
    return build_view(
        make_analysis(n, hostile=hostile, baseline=baseline),
        lang=lang,
        generated_at=GENERATED,
        version="0.1.0",
        inventory=inventory(hostile),
    )


@pytest.fixture(scope="session")
def view() -> ReportView:
    return view_of()


@pytest.fixture(scope="session")
def html(view: ReportView) -> str:
    return render_html(view)


@pytest.fixture(scope="session")
def hostile_view() -> ReportView:
    return view_of(300, hostile=True)

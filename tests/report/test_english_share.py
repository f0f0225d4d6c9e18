"""A Chinese report is Chinese: of the words a reader sees in `--lang zh` (the HTML's text content
and tooltips, the PDF's text, summary.md, the CLI line; scripts and styles left out), at most 3%
are English — the article's own English terms, units, numbers, file paths, slugs, tags, setting
names and run ids excepted.

Words are counted as a reader meets them: a Latin word is one word, a run of Chinese characters
is one word per two characters (the average length of a Chinese word).
"""

from __future__ import annotations

import math
import re
import shutil
from pathlib import Path

import pytest

from postmortem.cli import main

from languages import ALLOWED, visible_text

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples"
EPOCH = "1717243200"
MAX_ENGLISH_SHARE = 0.03

# The article's own English terms (it writes them in English in Chinese sentences), and names.
ARTICLE_TERMS = {
    "loss", "token", "tokens", "step", "steps", "checkpoint", "checkpoints", "batch", "size", "MFU", "TFLOPS", "AllReduce",
    "NaN", "Inf", "BF16", "FP16", "FP32", "TopN", "Profiler", "profiler", "callback", "summary", "MindSpore", "MindFormers",
    "MindInsight", "CANN", "Ascend", "warmup", "epoch", "lr", "scale", "dataset", "sink", "mode", "decode", "tokenize",
    "map", "inf", "BatchNorm", "CPU", "GPU", "NPU", "LossMonitor", "TimeMonitor", "SummaryCollector", "lineage",
    "msprof", "analyze", "postmortem", "UTC", "PDF", "HTML", "JSON",
}
CJK_RUN = re.compile(r"[\u4e00-\u9fff]+")
LATIN = re.compile(r"(?<![A-Za-z0-9_./:-])[A-Za-z][A-Za-z'’-]*(?![A-Za-z0-9_./:(-])")


def english_share(text: str, names: set[str]) -> tuple[float, list[str]]:
    """The English share of the words, and the English words found."""
    cjk = sum(math.ceil(len(run) / 2) for run in CJK_RUN.findall(text))
    text = CJK_RUN.sub(" ", text)
    for name in sorted((n for n in names if len(n) > 1), key=len, reverse=True):
        if name in text:
            text = re.sub(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", " ", text)
    latin = [w for w in LATIN.findall(text)]
    english = [w for w in latin if w not in ARTICLE_TERMS and w not in ALLOWED and w.lower() not in ARTICLE_TERMS]
    total = cjk + len(latin)
    return (len(english) / total if total else 0.0), english


def _names(folder: Path) -> set[str]:
    """What the run itself names: its id, experiment, baseline, settings, tags, files."""
    import json

    metrics = json.loads((folder / "metrics.json").read_text())
    run = json.loads((folder / "data" / "run.json").read_text())
    names = {metrics["run"]["id"], metrics["run"].get("experiment") or "", "gpt-tiny-base"}
    names |= {s["key"] for s in metrics["identity"]["settings"]} | {str(s["value"]) for s in metrics["identity"]["settings"]}
    names |= {e["rel"] for e in run.get("inventory", [])} | set(run.get("settings", {}))
    names |= {d["slug"] for d in metrics["data_quality"]}
    return {n for n in names if n}


@pytest.fixture(scope="module")
def zh_build(tmp_path_factory):
    root = tmp_path_factory.mktemp("zh")
    runs, out = root / "runs", root / "out"
    for name in ("gpt-tiny-base", "gpt-tiny-lr2x"):
        shutil.copytree(SAMPLES / name, runs / name)
    mp = pytest.MonkeyPatch()
    mp.setenv("SOURCE_DATE_EPOCH", EPOCH)
    assert main(["build", str(runs / "gpt-tiny-base"), "--out", str(out), "--experiment", "gpt-tiny", "--lang", "zh",
                 "--format", "json"]) == 0
    assert main(["build", str(runs / "gpt-tiny-lr2x"), "--out", str(out), "--experiment", "gpt-tiny", "--baseline", "prev",
                 "--lang", "zh", "--format", "html,pdf,md,json"]) == 0
    yield out / "gpt-tiny" / "gpt-tiny-lr2x"
    mp.undo()


def _check(text: str, names: set[str], what: str) -> float:
    share, words = english_share(text, names)
    assert share <= MAX_ENGLISH_SHARE, f"{what}: {share:.1%} English ({len(words)} words): {sorted(set(words))}"
    return share


def test_the_english_share_counts_what_it_should():
    share, words = english_share("稳态吞吐 step 耗时 the report is long", set())
    assert words == ["the", "report", "is", "long"] and share == pytest.approx(4 / (3 + 1 + 4))  # 稳态吞吐 = 2, 耗时 = 1
    assert english_share("gpt-tiny-lr2x config.yaml 0.006 num_parallel_workers", {"gpt-tiny-lr2x"})[1] == []


def test_zh_html_report_is_at_most_3_percent_english(zh_build):
    html = (zh_build / "report.html").read_text()
    _check(visible_text(html), _names(zh_build), "report.html")


def test_zh_pdf_report_is_at_most_3_percent_english(zh_build):
    from pypdf import PdfReader

    text = "\n".join(page.extract_text() or "" for page in PdfReader(zh_build / "report.pdf").pages)
    _check(text, _names(zh_build), "report.pdf")


def test_zh_summary_md_is_at_most_3_percent_english(zh_build):
    md = (zh_build / "summary.md").read_text().replace("\\_", "_").replace("**", " ")
    _check(md, _names(zh_build), "summary.md")


def test_zh_report_leads_with_the_verdict(zh_build):
    html = (zh_build / "report.html").read_text()
    first = visible_text(html[html.index("<body"):html.index('id="summary"')])
    assert "诊断结论" in first and "吞吐退化" in first and "优先尝试" in first
    assert "learning_rate 从 0.003 改为 0.006：不会影响 step 耗时，不能解释这一变化" in first
    assert "learning_rate 从 0.003 改为 0.006：会影响 loss 与梯度范数尖峰，可以解释这一变化" in first


@pytest.fixture(scope="module")
def zh_profile(tmp_path_factory):
    root = tmp_path_factory.mktemp("zhprof")
    shutil.copytree(SAMPLES / "profiler-cpu", root / "profiler-cpu")
    mp = pytest.MonkeyPatch()
    mp.setenv("SOURCE_DATE_EPOCH", EPOCH)
    assert main(["build", str(root / "profiler-cpu"), "--out", str(root / "out"), "--experiment", "prof", "--lang", "zh",
                 "--format", "html,json"]) == 0
    yield root / "out" / "prof" / "profiler-cpu"
    mp.undo()


def test_zh_profiler_report_without_a_baseline_is_at_most_3_percent_english(zh_profile):
    html = (zh_profile / "report.html").read_text()
    _check(visible_text(html), _names(zh_profile), "profiler-cpu report.html")
    first = visible_text(html[html.index("<body"):html.index('id="summary"')])
    assert "未指定基线：本次训练自身值得关注的问题。" in first and "数据停顿" in first

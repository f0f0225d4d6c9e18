from datetime import datetime, timezone

import pytest

from postmortem.words import CATALOGS, labels, numbers as f


@pytest.mark.parametrize(
    "fraction, text",
    [(0.99996, "99.9%"), (0.9996, "99.9%"), (0.0004, "0.1%"), (1.0, "100.0%"), (0.0, "0.0%"), (0.5, "50.0%"), (0.12345, "12.3%")],
)
def test_percent_never_rounds_to_misleading_0_or_100(fraction, text):
    assert f.percent(fraction) == text


@pytest.mark.parametrize(
    "seconds, text",
    [(0.0001234, "123 µs"), (0.5, "500 ms"), (0.9996, "1.00 s"), (12.34, "12.3 s"), (600, "10.0 min"), (36000, "10.0 h"), (0, "0 s")],
)
def test_duration_picks_unit(seconds, text):
    assert f.duration(seconds) == text


def test_rates_sizes_flops():
    assert f.tokens_per_s(123456) == "123k tokens/s"
    assert f.tokens_per_s(2_500_000) == "2.50M tokens/s"
    assert f.tokens_per_s(950) == "950 tokens/s"
    assert f.flops(3.12e14) == "312 TFLOPS"
    assert f.flops(2e15) == "2.00 PFLOPS"
    assert f.bytes_(3 * 1024**3) == "3.00 GiB"
    assert f.bytes_(1536) == "1.50 KiB"
    assert f.bytes_(500) == "500 B"


def test_numbers_and_steps():
    assert f.step(1234567) == "1,234,567"
    assert f.number(0.9996) == "1.00"
    assert f.number(123456.7) == "123,457"
    assert f.number(0.0123456) == "0.0123"
    assert f.number(float("nan")) == "NaN"
    assert f.number(float("-inf")) == "-Inf"


def test_deltas_carry_sign_and_never_show_fake_zero():
    assert f.rel_delta(0.0321) == "+3.2%"
    assert f.rel_delta(-0.0003) == "-<0.1%"
    assert f.rel_delta(0.0) == "±0.0%"
    assert f.delta(-0.025, f.duration) == "-25.0 ms"
    assert f.delta(780, f.tokens_per_s) == "+780 tokens/s"


def test_none_is_missing_everywhere():
    for fn in (f.number, f.duration, f.percent, f.rel_delta, f.delta, f.bytes_, f.flops, f.tokens_per_s, f.step):
        assert fn(None) == f.MISSING


def test_dates_use_injected_now():
    when = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)
    now = datetime(2024, 5, 4, 13, 0, tzinfo=timezone.utc)
    assert f.datetime_(when, now) == "2024-05-01 12:00 UTC (3 days ago)"
    assert f.datetime_(when, now, lang="zh") == "2024-05-01 12:00 UTC (3 天前)"
    assert f.datetime_(when) == "2024-05-01 12:00 UTC"


def test_zh_catalog_is_complete_and_chinese():
    assert set(CATALOGS["zh"]) == set(CATALOGS["en"])
    zh = labels("zh")
    assert zh["throughput"] == "吞吐"
    assert zh["verdict_worse"] == "变差"
    assert zh["no_such_key"] == "no_such_key"
    with pytest.raises(ValueError):
        labels("fr")


def test_codes_are_named_and_unknown_codes_kept():
    zh, en = labels("zh"), labels("en")
    assert zh.name("reason_", "data_stall") == "数据停顿" and en.name("reason_", "data_stall") == "data stall"
    assert zh.name("phase_", "decay") == "衰减" and zh.name("event_", "checkpoint_save") == "checkpoint 保存"
    assert zh.name("reason_", "something_new") == "something_new"  # a code this version has no name for
    assert zh.fmt("saves", n=4) == "4 次保存" and en.fmt("saves", n=4) == "4 saves"
    assert zh.join(["a", "b"]) == "a、b" and zh["colon"] == "："

"""tilec.testing's host-side helpers: assert_close, Benchmark/perf_report, quantiles."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
from tilec.testing import _summarise


def test_assert_close_accepts_within_tolerance_and_rejects_outside():
    x = np.array([1.0, 2.0, np.nan], np.float32)
    tilec.testing.assert_close(x, x + np.float32(0.005))
    tilec.testing.assert_close(x, x * 1.01, atol=0, rtol=0.02)
    with pytest.raises(AssertionError):
        tilec.testing.assert_close(x, x + np.float32(0.5))
    with pytest.raises(AssertionError):  # NaN must match NaN
        tilec.testing.assert_close(x, np.array([1.0, 2.0, 3.0], np.float32))


def test_perf_report_runs_every_point_and_writes_csv(tmp_path, capsys):
    seen = []

    @tilec.testing.perf_report(tilec.testing.Benchmark(
        x_names=["n"], x_vals=[128, 1024], line_arg="provider", line_vals=["a", "b"],
        line_names=["A", "B"], plot_name="demo", args={"scale": 3}))
    def bench(n, provider, scale):
        seen.append((n, provider, scale))
        return (n * scale if provider == "a" else -n, 0.0, 0.0)

    rows = bench.run(print_data=True, save_path=str(tmp_path), return_df=True)
    assert seen == [(128, "a", 3), (128, "b", 3), (1024, "a", 3), (1024, "b", 3)]
    assert rows == [[128, 384, -128], [1024, 3072, -1024]]
    assert "demo:" in capsys.readouterr().out
    assert (tmp_path / "demo.csv").read_text().splitlines() == ["n,A,B", "128,384,-128", "1024,3072,-1024"]


def test_summaries():
    times = [4.0, 1.0, 3.0, 2.0]
    assert _summarise(times, None, "mean") == 2.5
    assert _summarise(times, None, "median") == 2.5
    assert _summarise(times, None, "min") == 1.0 and _summarise(times, None, "max") == 4.0
    assert _summarise(times, [0.0, 0.5, 1.0], "mean") == [1.0, 2.5, 4.0]
    assert _summarise(times, [0.5], "mean") == 2.5  # one quantile: a number, as Triton
    with pytest.raises(ValueError, match="return_mode"):
        _summarise(times, None, "average")

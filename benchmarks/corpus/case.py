"""What a corpus kernel file's `cases(device, size)` yields (see run.py)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


@dataclass
class Case:
    """One kernel at one shape: `inputs()` made once for both backends, `run(module,
    inputs)` the callable checked and timed, its result compared with `reference(inputs)`
    (or judged by `check(result, inputs)`: None when right), `bytes`/`flops` for the
    throughput, `needs` the least compute capability."""
    name: str
    shape: str
    inputs: Callable[[], dict]
    run: Callable[[Any, dict], Callable[[], Any]]   # (the backend's module, inputs) -> the call
    reference: Callable[[dict], Any] | None = None
    check: Callable[[Any, dict], str | None] | None = None
    atol: float = 1e-5
    rtol: float = 1e-5
    bytes: float | None = None
    flops: float | None = None
    needs: tuple | None = None


def column_sum_slack(terms):
    """How far an fp32 sum down the M rows of `terms` may be from the exact sum, per
    column, whatever order the kernel adds in. Each addition rounds by up to u = 2^-24 of
    the running sum, in signs that do not line up, so the error grows like
    u sqrt(M) ||column||_2 (the running sum itself growing like sqrt(M) terms). The
    corpus's kernels (per-program partials, then their sum) stay within 1e-4 at 8192 to
    32768 rows of unit-sized terms, where a 1e-5 tolerance fails any implementation
    (Triton's too, with the same values) on the columns whose sums cancel to below 1; a
    kernel adding every row in turn into one fp32 sum comes within half of this slack
    (4x the estimate: about 2e-3 at 8192 rows, 8e-3 at 32768). A row summed twice or
    not at all, or a wrong x_hat, is off by a whole term (about 1) in most columns."""
    M = terms.shape[0]
    return 4 * 2.0 ** -24 * M ** 0.5 * terms.pow(2).sum(0).sqrt()


def check_with_slack(results, wants, slacks, atol: float, rtol: float) -> str | None:
    """None when each output is within atol + rtol |want| + its slack (a number or a
    per-element tensor) of the float64 reference; otherwise what is wrong (NaN fails)."""
    for index, (got, want, extra) in enumerate(zip(results, wants, slacks)):
        got = got.double()
        if got.shape != want.shape:
            return f"output {index} has shape {list(got.shape)}, the reference {list(want.shape)}"
        error = (got - want).abs()
        bound = atol + rtol * want.abs() + extra
        bad = ~(error <= bound)
        if bad.any():
            worst = int((error - bound).nan_to_num(float("inf")).argmax())
            return (f"output {index}: {int(bad.sum())} of {want.numel()} elements off, worst "
                    f"|{got.flatten()[worst]:.6g} - {want.flatten()[worst]:.6g}| > {bound.flatten()[worst]:.3g}")
    return None

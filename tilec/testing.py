"""Timing and checking helpers with the names of `triton.testing`.

`do_bench` times a callable on the GPU with CUDA events (torch's), flushing L2 before
every run; `assert_close` compares results with tolerances; `Benchmark` and
`perf_report` run a table of measurements and print it (plots when matplotlib is
installed). All of them need torch; importing this module does not. `nvsmi`,
`get_dram_gbps`, `get_max_tensorcore_tflops` and `get_max_simd_tflops` give the device
figures benchmarks compare against (without a GPU, the fallback target's).
"""
from __future__ import annotations

import functools
import math
import os
from typing import Any, Callable, Sequence

_L2_FLUSH_BYTES = 256 * 1024 * 1024  # larger than the L2 of any current GPU


def _torch():
    import torch
    return torch


@functools.lru_cache(maxsize=None)
def _flush_buffer(device: int):
    torch = _torch()
    return torch.empty(_L2_FLUSH_BYTES // 4, dtype=torch.int32, device=f"cuda:{device}")


def _summarise(times: list[float], quantiles: Sequence[float] | None, return_mode: str):
    if quantiles is not None:
        ordered = sorted(times)
        result = []
        for q in quantiles:
            position = q * (len(ordered) - 1)
            low, high = math.floor(position), math.ceil(position)
            result.append(ordered[low] + (ordered[high] - ordered[low]) * (position - low))
        return result[0] if len(result) == 1 else result  # as Triton: one quantile, one number
    if return_mode == "all":
        return times
    if return_mode == "min":
        return min(times)
    if return_mode == "max":
        return max(times)
    if return_mode == "median":
        ordered = sorted(times)
        middle = len(ordered) // 2
        return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
    if return_mode == "mean":
        return sum(times) / len(times)
    raise ValueError(f"return_mode must be one of min, max, mean, median, all; got {return_mode!r}")


def do_bench(fn: Callable[[], Any], warmup: float = 25, rep: float = 100, grad_to_none: Sequence[Any] | None = None,
             quantiles: Sequence[float] | None = None, return_mode: str = "mean"):
    """Milliseconds one call of `fn` takes on the GPU.

    Runs `fn` for about `warmup` ms, then times about `rep` ms of calls one by one with
    CUDA events, clearing L2 before each so every call starts cold. Returns the mean
    (or `return_mode`: min, max, median, all), or the given `quantiles` (a list when
    there are several).
    """
    torch = _torch()
    device = torch.cuda.current_device()
    flush = _flush_buffer(device)
    fn()
    torch.cuda.synchronize()
    # Estimate the time of one call to size the warm-up and the measured runs.
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        flush.zero_()
        fn()
    end.record()
    torch.cuda.synchronize()
    estimate = max(start.elapsed_time(end) / 5, 1e-3)
    n_warmup = max(1, int(warmup / estimate))
    n_repeat = max(1, int(rep / estimate))
    for _ in range(n_warmup):
        fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n_repeat)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n_repeat)]
    for i in range(n_repeat):
        for tensor in grad_to_none or ():
            tensor.grad = None
        flush.zero_()
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    times = [s.elapsed_time(e) for s, e in zip(starts, ends)]
    return _summarise(times, quantiles, return_mode)


def do_bench_cudagraph(fn: Callable[[], Any], rep: float = 20, grad_to_none: Sequence[Any] | None = None,
                       quantiles: Sequence[float] | None = None, return_mode: str = "mean"):
    """`do_bench` for callables captured in a CUDA graph: replays `fn` inside a graph so
    host launch cost is excluded. Milliseconds per call."""
    torch = _torch()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        fn()  # compile and load before capture
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(5):
            fn()
        end.record()
        torch.cuda.synchronize()
        estimate = max(start.elapsed_time(end) / 5, 1e-3)
        n_calls = max(1, int(rep / estimate))
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(n_calls):
                for tensor in grad_to_none or ():
                    tensor.grad = None
                fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(10):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            graph.replay()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) / n_calls)
    return _summarise(times, quantiles, return_mode)


def assert_close(x, y, atol: float | None = None, rtol: float | None = None, err_msg: str = "") -> None:
    """Asserts `x` and `y` (tensors, arrays or scalars) are equal within `atol + rtol*|y|`
    (defaults 1e-2 and 0); NaNs must sit in the same places."""
    import numpy as np

    def as_numpy(value):
        if hasattr(value, "detach"):
            value = value.detach().cpu()
            if str(value.dtype) == "torch.bfloat16":
                value = value.float()
            return value.numpy()
        return np.asarray(value)

    atol = 1e-2 if atol is None else atol
    rtol = 0.0 if rtol is None else rtol
    np.testing.assert_allclose(as_numpy(x), as_numpy(y), atol=atol, rtol=rtol, equal_nan=True, err_msg=err_msg)


class Benchmark:
    """One table of measurements for `perf_report`: `x_names` take each of `x_vals`; one
    column per `line_vals` entry (passed to the function as `line_arg`)."""

    def __init__(self, x_names: list[str], x_vals: list, line_arg: str, line_vals: list, line_names: list[str],
                 plot_name: str, args: dict, xlabel: str = "", ylabel: str = "", x_log: bool = False,
                 y_log: bool = False, styles=None, color=None):
        self.x_names, self.x_vals = list(x_names), list(x_vals)
        self.line_arg, self.line_vals, self.line_names = line_arg, list(line_vals), list(line_names)
        self.plot_name, self.args = plot_name, dict(args)
        self.xlabel, self.ylabel, self.x_log, self.y_log, self.styles = xlabel, ylabel, x_log, y_log, styles


class Mark:
    """What `perf_report` returns: `.run(print_data=, show_plots=, save_path=)`."""

    def __init__(self, fn: Callable, benchmarks: Benchmark | list[Benchmark]):
        self.fn = fn
        self.benchmarks = benchmarks

    def _run_one(self, bench: Benchmark, print_data: bool, show_plots: bool, save_path: str, **kwargs):
        rows = []
        for x in bench.x_vals:
            xs = x if isinstance(x, (list, tuple)) else [x] * len(bench.x_names)
            point = dict(zip(bench.x_names, xs))
            row = list(xs)
            for line in bench.line_vals:
                result = self.fn(**point, **{bench.line_arg: line}, **bench.args, **kwargs)
                row.append(result[0] if isinstance(result, (list, tuple)) else result)
            rows.append(row)
        header = [*bench.x_names, *bench.line_names]
        if print_data:
            print(bench.plot_name + ":")
            print("  ".join(f"{h:>14}" for h in header))
            for row in rows:
                print("  ".join(f"{v:>14.4g}" if isinstance(v, float) else f"{v!s:>14}" for v in row))
        if save_path:
            os.makedirs(save_path, exist_ok=True)
            with open(os.path.join(save_path, bench.plot_name + ".csv"), "w") as f:
                f.write(",".join(header) + "\n")
                for row in rows:
                    f.write(",".join(str(v) for v in row) + "\n")
        if show_plots or save_path:
            try:
                import matplotlib.pyplot as plt
            except ImportError:
                return rows
            figure, axes = plt.subplots()
            x_axis = [row[0] for row in rows]
            for i, name in enumerate(bench.line_names):
                axes.plot(x_axis, [row[len(bench.x_names) + i] for row in rows], label=name)
            axes.set_xlabel(bench.xlabel or bench.x_names[0])
            axes.set_ylabel(bench.ylabel)
            axes.set_xscale("log" if bench.x_log else "linear")
            axes.set_yscale("log" if bench.y_log else "linear")
            axes.legend()
            if save_path:
                figure.savefig(os.path.join(save_path, bench.plot_name + ".png"))
            if show_plots:
                plt.show()
            plt.close(figure)
        return rows

    def run(self, show_plots: bool = False, print_data: bool = False, save_path: str = "", return_df: bool = False,
            **kwargs):
        benchmarks = self.benchmarks if isinstance(self.benchmarks, list) else [self.benchmarks]
        tables = [self._run_one(b, print_data, show_plots, save_path, **kwargs) for b in benchmarks]
        if return_df:
            return tables if isinstance(self.benchmarks, list) else tables[0]
        return None


def perf_report(benchmarks: Benchmark | list[Benchmark]) -> Callable[[Callable], Mark]:
    """Decorator: turns a function of (x values, line value) into a `Mark` whose `.run()`
    measures and prints the whole table."""
    return lambda fn: Mark(fn, benchmarks)


# ---------------------------------------------------------------------------- device figures

def nvsmi(attrs: Sequence[str]) -> list[int]:
    """GPU 0's `nvidia-smi --query-gpu` values for `attrs` (e.g. ["clocks.max.sm"]), as
    integers (without units)."""
    import subprocess
    query = ["nvidia-smi", "-i", "0", "--query-gpu=" + ",".join(attrs), "--format=csv,noheader,nounits"]
    return [int(field) for field in subprocess.check_output(query).decode().strip().split(",")]


def _properties(device: Any) -> dict[str, int]:
    from .runtime import driver
    return driver.active.utils.get_device_properties(driver.active.get_current_device() if device is None else device)


def get_dram_gbps(device: Any = None) -> float:
    """The device's peak DRAM bandwidth in GB/s: memory clock (kHz) x bus width (bits) x 2
    transfers a clock, in bytes (the fallback target's figures without a GPU)."""
    properties = _properties(device)
    return properties["mem_clock_rate"] * properties["mem_bus_width"] * 2 / 8 / 1e6


# Operations a clock per SM sub-partition (4 per SM), by the element type's width: tensor
# cores on sm_80 and newer, then the FP pipes (fp16 packed two to a lane).
_TENSOR_CORE_OPS = {32: 256, 16: 512, 8: 1024}
_SIMD_OPS = {32: 32, 16: 64}


def _element_bits(dtype: Any) -> int:
    """The width in bits of a torch or tilec dtype."""
    if hasattr(dtype, "itemsize"):
        return 8 * dtype.itemsize
    if hasattr(dtype, "primitive_bitwidth"):
        return dtype.primitive_bitwidth
    raise TypeError(f"not a dtype: {dtype!r}")


def _capability_major() -> int:
    from .runtime import driver
    return driver.active.get_current_target().arch // 10


def get_max_tensorcore_tflops(dtype: Any, clock_rate: float, device: Any = None) -> float:
    """Peak tensor-core TFLOP/s at `clock_rate` (kHz, as nvsmi's clocks in MHz x 1e3) for
    `dtype` (fp32/tf32 and int32, fp16/bf16, int8 and fp8)."""
    bits = _element_bits(dtype)
    if _capability_major() < 8:  # Volta and Turing: fp16 only, 256 a clock
        if bits != 16:
            raise RuntimeError(f"no tensor-core figure for {dtype} before sm_80")
        ops = 256
    elif bits in _TENSOR_CORE_OPS:
        ops = _TENSOR_CORE_OPS[bits]
    else:
        raise RuntimeError(f"no tensor-core figure for {dtype}")
    return _properties(device)["multiprocessor_count"] * 4 * clock_rate * ops * 1e-9


def get_max_simd_tflops(dtype: Any, clock_rate: float, device: Any = None) -> float:
    """Peak TFLOP/s of the FP pipes (no tensor cores) at `clock_rate` (kHz) for fp32,
    fp16 or bf16."""
    bits = _element_bits(dtype)
    if bits not in _SIMD_OPS or "int" in str(dtype):
        raise RuntimeError(f"no SIMD figure for {dtype}")
    return _properties(device)["multiprocessor_count"] * 4 * clock_rate * _SIMD_OPS[bits] * 1e-9

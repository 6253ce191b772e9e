"""tilec.testing's device figures, with triton.testing's names and formulas: DRAM
bandwidth from the memory clock and bus width, peak tensor-core and SIMD rates from the
SM count, a clock and the operations a sub-partition does per clock."""
from __future__ import annotations

import subprocess

import pytest

import tilec.language as tl
from tilec import testing
from tilec.runtime import driver
from tilec.runtime.driver import GPUTarget

H100 = {"max_shared_mem": 232448, "max_num_regs": 65536, "multiprocessor_count": 132, "warpSize": 32,
        "sm_clock_rate": 1980000, "mem_clock_rate": 2619000, "mem_bus_width": 5120}


@pytest.fixture
def hopper(monkeypatch):
    monkeypatch.setattr(driver.active.utils, "get_device_properties", lambda device: dict(H100))
    monkeypatch.setattr(driver.active, "get_current_target", lambda: GPUTarget("cuda", 90, 32))


def test_dram_bandwidth(hopper):
    assert testing.get_dram_gbps() == pytest.approx(2619000 * 5120 * 2 / 8 / 1e6)  # 3352 GB/s


@pytest.mark.parametrize("dtype, ops", [(tl.float32, 256), (tl.int32, 256), (tl.float16, 512), (tl.bfloat16, 512),
                                        (tl.int8, 1024), (tl.float8e4nv, 1024), (tl.float8e5, 1024)])
def test_tensor_core_peak(hopper, dtype, ops):
    assert testing.get_max_tensorcore_tflops(dtype, clock_rate=1.5e6) == pytest.approx(132 * 4 * 1.5e6 * ops * 1e-9)


def test_simd_peak_and_refusals(hopper, monkeypatch):
    assert testing.get_max_simd_tflops(tl.float32, 1e6) == pytest.approx(132 * 4 * 1e6 * 32 * 1e-9)
    assert testing.get_max_simd_tflops(tl.bfloat16, 1e6) == pytest.approx(132 * 4 * 1e6 * 64 * 1e-9)
    with pytest.raises(RuntimeError, match="no SIMD figure"):
        testing.get_max_simd_tflops(tl.int32, 1e6)
    with pytest.raises(RuntimeError, match="no tensor-core figure"):
        testing.get_max_tensorcore_tflops(tl.float64, 1e6)
    monkeypatch.setattr(driver.active, "get_current_target", lambda: GPUTarget("cuda", 75, 32))
    assert testing.get_max_tensorcore_tflops(tl.float16, 1e6) == pytest.approx(132 * 4 * 1e6 * 256 * 1e-9)
    with pytest.raises(RuntimeError, match="before sm_80"):
        testing.get_max_tensorcore_tflops(tl.float32, 1e6)


def test_nvsmi_reads_integers(monkeypatch):
    seen = []

    def fake(command):
        seen.append(command)
        return b"1980, 2619\n"

    monkeypatch.setattr(subprocess, "check_output", fake)
    assert testing.nvsmi(["clocks.max.sm", "clocks.max.memory"]) == [1980, 2619]
    assert seen[0][-2:] == ["--query-gpu=clocks.max.sm,clocks.max.memory", "--format=csv,noheader,nounits"]

"""Every target either compiles or says why, and never ends the process.

LLVM's NVPTX back end, inside the MLIR bindings, does not raise on input it cannot
handle: it prints "LLVM ERROR: ..." and aborts Python (a PTX ISA version too old for the
chip; an instruction the chip lacks, "Cannot select"). tilec checks each such input
before LLVM sees it; this module proves it on every target tilec accepts, compiling a set
of kernels (every_target.py) in a child process, where an abort fails the test instead
of ending pytest. Refused targets are in tests/unit/test_target.py.

The PTX is then assembled by the machine's ptxas, when there is one: each target gets a
cubin, or a ToolkitError saying that this ptxas does not compile for the chip.
"""
from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys

import pytest

import tilec
from tilec.backend import toolkit
from tilec.target import _FIRST_PTX_VERSION, Target

HERE = os.path.dirname(os.path.abspath(__file__))
REPOSITORY = os.path.dirname(os.path.dirname(HERE))
TARGETS = sorted(_FIRST_PTX_VERSION, key=lambda t: (int(re.sub(r"\D", "", t)), t))  # all tilec accepts


@functools.lru_cache(maxsize=None)
def compiled(tmp_root: str) -> tuple[dict, str]:
    """(target, kernel) -> what every_target.py reported, for every target; and the
    child's stderr. ptxas is hidden from the child (TILEC_CUDA_HOME holds libdevice only),
    so every target reaches the ptx stage whatever ptxas the machine has."""
    home = os.path.join(tmp_root, "libdevice-only")
    os.makedirs(os.path.join(home, "nvvm", "libdevice"), exist_ok=True)
    try:
        link = os.path.join(home, "nvvm", "libdevice", "libdevice.10.bc")
        if not os.path.exists(link):
            os.symlink(toolkit.libdevice_path(), link)
    except toolkit.ToolNotFoundError:
        pass  # then kernels calling libdevice stop at llir, which the tests accept
    env = dict(os.environ, TILEC_CUDA_HOME=home, TILEC_CACHE_DIR=os.path.join(tmp_root, "cache"),
               PYTHONPATH=REPOSITORY)
    proc = subprocess.run([sys.executable, os.path.join(HERE, "every_target.py"), *TARGETS], capture_output=True,
                          text=True, env=env, timeout=900)
    results, running = {}, None
    for line in proc.stdout.splitlines():
        report = json.loads(line)
        running = (report["target"], report["kernel"])
        if not report.get("started"):
            results[running] = report
    if proc.returncode != 0:
        pytest.fail(f"the compiler process ended (exit status {proc.returncode}) while compiling {running}:\n"
                    f"{proc.stderr[-3000:]}")
    return results, proc.stderr


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    return compiled(str(tmp_path_factory.mktemp("every-target")))


def kernels_of(reports, target: str) -> dict[str, dict]:
    results, _ = reports
    found = {kernel: report for (t, kernel), report in results.items() if t == target}
    from every_target import kernels_for
    assert sorted(found) == sorted(kernels_for(target)), f"not every kernel was compiled for {target}"
    return found


def _has_ptxas() -> bool:
    try:
        toolkit.ptxas_path()
        return True
    except toolkit.ToolNotFoundError:
        return False


@pytest.mark.parametrize("target", TARGETS)
def test_every_kernel_compiles_or_says_why(reports, target):
    parsed = Target.parse(target)
    for kernel, report in kernels_of(reports, target).items():
        if "error" in report:
            assert report["tilec_error"], f"{target} {kernel}: {report['error']}: {report['message']}"
            # the one refusal expected here: fp8 conversions before sm_89
            assert kernel == "fp8" and not parsed.at_least(89), f"{target} {kernel}: {report['message']}"
            assert "needs an sm_89 or newer GPU" in report["message"]
            continue
        if report["ptx"] is None:  # no libdevice on this machine
            assert kernel.startswith("math") and list(report["missing"]) == ["ptx", "cubin"]
            continue
        ptx = report["ptx"]
        assert f".target {parsed.chip}" in ptx
        assert f".version {parsed.ptx_version // 10}.{parsed.ptx_version % 10}" in ptx


@pytest.mark.parametrize("target", TARGETS)
def test_tensor_cores_and_async_copies_from_sm_80_on(reports, target):
    """mma.sync, ldmatrix and cp.async exist from sm_80 on (LLVM cannot select them
    before); Hopper (sm_90, sm_90a) runs f16, bf16, int8 and tf32 dots on wgmma; Blackwell (sm_100,
    sm_120) runs the same sm_80 code: no Hopper-only wgmma."""
    parsed = Target.parse(target)
    for kernel, report in kernels_of(reports, target).items():
        if not kernel.startswith("matmul") or not report.get("ptx"):
            continue
        ptx = report["ptx"]
        wgmma = parsed.capability == 90 and kernel in ("matmul_fp16", "matmul_bf16", "matmul_int8", "matmul_tf32")
        assert ("wgmma.mma_async" in ptx) == wgmma, f"{target} {kernel}"
        assert ("mma.sync.aligned" in ptx) == (parsed.at_least(80) and not wgmma), f"{target} {kernel}"
        assert ("cp.async.cg.shared.global" in ptx or "cp.async.ca.shared.global" in ptx) == parsed.at_least(80)
        assert "tcgen05" not in ptx


_PTXAS_DOES_NOT_KNOW = re.compile(r"^cannot make a cubin of \w+: the ptxas (of CUDA [\d.]+ )?.* does not compile "
                                  r"for sm_\w+; ")


@pytest.mark.skipif(not _has_ptxas(), reason="no ptxas on this machine: the PTX stage is what is checked")
@pytest.mark.parametrize("target", TARGETS)
def test_ptxas_takes_the_ptx_or_says_it_does_not_know_the_chip(reports, target):
    from every_target import KNOWN_GAPS
    parsed = Target.parse(target)
    for kernel, report in kernels_of(reports, target).items():
        if not report.get("ptx"):
            continue
        try:
            result = toolkit.assemble(report["ptx"], parsed.chip, kernel)
        except tilec.ToolkitError as error:
            if _PTXAS_DOES_NOT_KNOW.match(str(error)):
                continue
            # A known gap (every_target.KNOWN_GAPS) fails as ptxas's log; once fixed, remove it there.
            assert kernel in KNOWN_GAPS and not parsed.at_least(KNOWN_GAPS[kernel]), f"{target} {kernel}: {error}"
            assert str(error).startswith(f"ptxas failed for {kernel} ({parsed.chip}):")
        else:
            assert result.cubin[:4] == b"\x7fELF"
            assert kernel not in KNOWN_GAPS or parsed.at_least(KNOWN_GAPS[kernel]), \
                f"{kernel} now assembles for {target}: update every_target.KNOWN_GAPS"


def test_llvm_printed_no_warnings(reports):
    """A chip or PTX feature LLVM does not know is only a warning on stderr ("is not a
    recognized processor"), and its PTX is for no GPU: none may appear."""
    _, stderr = reports
    assert "not a recognized" not in stderr and "LLVM ERROR" not in stderr, stderr[-3000:]

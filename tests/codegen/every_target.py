"""Compiles a set of kernels for each target given on the command line, down to PTX, and
prints one JSON line per (target, kernel): the PTX, or the error raised.

test_targets.py runs it in a child process, because what it checks is that LLVM's NVPTX
back end never ends the process on any target: if it did, only this child would die,
and the last line printed names the compilation that was running.

The test hides ptxas (TILEC_CUDA_HOME points at a directory holding libdevice only), so
the PTX stage is reached for every target whatever ptxas the machine has; the test
assembles the PTX itself.
"""
from __future__ import annotations

import json
import sys

import tilec
import tilec.language as tl


@tilec.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


@tilec.jit
def softmax_kernel(out_ptr, in_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x = tl.load(in_ptr + row * BLOCK + tl.arange(0, BLOCK)).to(tl.float32)
    x = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * BLOCK + tl.arange(0, BLOCK), (x / tl.sum(x, axis=0)).to(out_ptr.dtype.element_ty))


@tilec.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                  PRECISION: tl.constexpr):
    """A K loop: mma.sync and ldmatrix from sm_80, pipelined by cp.async (num_stages=3)."""
    m, n, k = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    a_ptrs = a_ptr + m[:, None] * K + k[None, :]
    b_ptrs = b_ptr + k[:, None] * BN + n[None, :]
    acc = tl.zeros((BM, BN), dtype=c_ptr.dtype.element_ty)
    for _ in range(0, K, BK):
        acc += tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), input_precision=PRECISION, out_dtype=acc.dtype)
        a_ptrs += BK
        b_ptrs += BK * BN
    tl.store(c_ptr + m[:, None] * BN + n[None, :], acc)


@tilec.jit
def math_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    """libdevice (erf), IEEE division and square root, min/max with NaNs."""
    x = tl.load(x_ptr + tl.arange(0, BLOCK)).to(tl.float32)
    y = tl.erf(x) + tl.div_rn(x, 3.0) + tl.sqrt_rn(tl.abs(x)) + tl.maximum(x, 0.5, propagate_nan=tl.PropagateNan.ALL)
    tl.store(y_ptr + tl.arange(0, BLOCK), y.to(y_ptr.dtype.element_ty))


@tilec.jit
def atomic_kernel(x_ptr, out_ptr, count_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.atomic_add(out_ptr + offsets % 4, tl.load(x_ptr + offsets), sem="relaxed")
    tl.atomic_max(count_ptr, offsets, sem="acq_rel", scope="gpu")
    tl.atomic_cas(count_ptr + 1, 0, 1)


@tilec.jit
def fp8_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets).to(tl.float8e4nv).to(tl.float32))


@tilec.jit
def fp8_software_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    """The fp8 conversions done in software: any target, no fp8 instruction (fp8e4b15 both
    ways, fp32 -> fp8e5 toward zero)."""
    offsets = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets)
    toward_zero = x.to(tl.float32, fp_downcast_rounding="rtz").to(tl.float8e5, fp_downcast_rounding="rtz")
    y = x.to(tl.float8e4b15).to(tl.float32) + toward_zero.to(tl.uint8, bitcast=True).to(tl.float32)
    tl.store(y_ptr + offsets, y)


def _matmul(a: str, c: str, precision: str = "ieee"):
    return (matmul_kernel, {"a_ptr": f"*{a}:16", "b_ptr": f"*{a}:16", "c_ptr": f"*{c}:16", "K": "i32:16"},
            {"BM": 64, "BN": 64, "BK": 32, "PRECISION": precision}, 3)


KERNELS = {
    "add": (add_kernel, {"x_ptr": "*fp32:16", "y_ptr": "*fp32:16", "out_ptr": "*fp32:16", "n": "i32"},
            {"BLOCK": 1024}, 3),
    "softmax_fp16": (softmax_kernel, {"out_ptr": "*fp16:16", "in_ptr": "*fp16:16"}, {"BLOCK": 1024}, 3),
    "softmax_bf16": (softmax_kernel, {"out_ptr": "*bf16:16", "in_ptr": "*bf16:16"}, {"BLOCK": 1024}, 3),
    "matmul_fp16": _matmul("fp16", "fp32"),
    "matmul_bf16": _matmul("bf16", "fp32"),
    "matmul_tf32": _matmul("fp32", "fp32", "tf32"),
    "matmul_int8": _matmul("i8", "i32"),
    "math_fp32": (math_kernel, {"x_ptr": "*fp32:16", "y_ptr": "*fp32:16"}, {"BLOCK": 256}, 3),
    "math_bf16": (math_kernel, {"x_ptr": "*bf16:16", "y_ptr": "*bf16:16"}, {"BLOCK": 256}, 3),
    "atomic_fp32": (atomic_kernel, {"x_ptr": "*fp32:16", "out_ptr": "*fp32:16", "count_ptr": "*i32:16"},
                    {"BLOCK": 256}, 3),
    "atomic_fp16": (atomic_kernel, {"x_ptr": "*fp16:16", "out_ptr": "*fp16:16", "count_ptr": "*i32:16"},
                    {"BLOCK": 256}, 3),
    "atomic_bf16": (atomic_kernel, {"x_ptr": "*bf16:16", "out_ptr": "*bf16:16", "count_ptr": "*i32:16"},
                    {"BLOCK": 256}, 3),  # ptxas refuses it before sm_90: see KNOWN_GAPS
    "fp8": (fp8_kernel, {"x_ptr": "*fp32:16", "y_ptr": "*fp32:16"}, {"BLOCK": 256}, 3),
    "fp8_software": (fp8_software_kernel, {"x_ptr": "*fp64:16", "y_ptr": "*fp32:16"}, {"BLOCK": 256}, 3),
}

# Kernels whose PTX ptxas refuses on GPUs older than the capability given, a gap of the
# compiler rather than of the target: bf16 atomics use atom.add.bf16 (sm_90 on). (A tf32
# dot on CUDA cores rounded its operands with cvt.rna.tf32.f32, sm_80 on; it now clears
# their low bits, as the tensor cores read them, and assembles for sm_75 too.)
KNOWN_GAPS = {"atomic_bf16": 90}



def kernels_for(target: str) -> list[str]:
    """The kernels compiled for `target`: all of them, but for an "a" variant (sm_100a),
    which differs from its base chip only in the name given to LLVM and ptxas, two."""
    return ["add", "matmul_fp16"] if target.endswith("a") else list(KERNELS)


def main(targets: list[str]) -> None:
    for target in targets:
        for name in kernels_for(target):
            fn, signature, constexprs, num_stages = KERNELS[name]
            print(json.dumps({"target": target, "kernel": name, "started": True}), flush=True)
            result = {"target": target, "kernel": name}
            try:
                kernel = tilec.compile(fn, signature=signature, constexprs=constexprs, target=target,
                                       num_stages=num_stages)
                result.update(ptx=kernel.asm.get("ptx"), missing=kernel.missing)
            except Exception as error:  # noqa: BLE001  reported to the test, which judges it
                result.update(error=type(error).__name__, tilec_error=isinstance(error, tilec.TilecError),
                              message=str(error))
            print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])

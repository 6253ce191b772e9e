"""Codegen without a GPU: every example kernel compiles to PTX that ptxas accepts, for
each supported target, and every stage is recorded and dumpable."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

import tilec
import tilec.language as tl
from tilec.backend import toolkit
from tilec.config import config

try:
    toolkit.ptxas_path()
except toolkit.ToolkitError:  # pragma: no cover - CI machines have the CUDA toolkit
    pytest.skip("ptxas is not available", allow_module_level=True)

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


def example(name: str):
    spec = importlib.util.spec_from_file_location(f"example_{name}", os.path.join(EXAMPLES, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ADD_SIGNATURE = {"x_ptr": "*fp32:16", "y_ptr": "*fp32:16", "out_ptr": "*fp32:16", "n_elements": "i32"}
SOFTMAX_SIGNATURE = {"output_ptr": "*fp32:16", "input_ptr": "*fp32:16", "input_row_stride": "i32:16",
                     "output_row_stride": "i32:16", "n_cols": "i32:16"}


@pytest.mark.parametrize("target", ["sm_80", "sm_90"])
@pytest.mark.parametrize("num_warps", [4, 8])
def test_vector_add_compiles(target, num_warps):
    k = tilec.compile(example("vector_add").add_kernel, signature=ADD_SIGNATURE, constexprs={"BLOCK_SIZE": 1024},
                      target=target, num_warps=num_warps)
    chip = "sm_90a" if target == "sm_90" else target
    assert f".target {chip}" in k.asm["ptx"]
    assert k.asm["cubin"][:4] == b"\x7fELF"
    assert 0 < k.n_regs <= 255 and k.n_spills == 0 and k.shared == 0
    # n_elements is not known to be a multiple of 16: the mask limits accesses to one element
    assert "ld.global.b32" in k.asm["ptx"] and "ld.global.v4" not in k.asm["ptx"]


@pytest.mark.parametrize("target", ["sm_80", "sm_90"])
@pytest.mark.parametrize("block,num_warps", [(1024, 4), (4096, 16), (128, 1)])
def test_softmax_compiles(target, block, num_warps):
    k = tilec.compile(example("softmax").softmax_kernel, signature=SOFTMAX_SIGNATURE,
                      constexprs={"BLOCK_SIZE": block}, target=target, num_warps=num_warps)
    ptx = k.asm["ptx"]
    per_thread = block // (32 * num_warps)
    if per_thread >= 4:
        assert ptx.count("ld.global.v4.b32") == per_thread // 4
        assert ptx.count("st.global.v4.b32") == per_thread // 4
    assert "shfl.sync.bfly" in ptx
    # reductions across warps go through shared memory
    assert (k.shared > 0) == (num_warps > 1)
    assert k.n_spills == 0


def test_vector_width_follows_divisibility():
    add = example("vector_add").add_kernel
    aligned = dict(ADD_SIGNATURE, n_elements="i32:16")
    k = tilec.compile(add, signature=aligned, constexprs={"BLOCK_SIZE": 1024})
    assert k.asm["ptx"].count("ld.global.v4.b32") == 4  # 2 per input, 8 floats per thread
    assert k.asm["ptx"].count("st.global.v4.b32") == 2
    unaligned = dict(aligned, x_ptr="*fp32")  # x may be misaligned: only its loads narrow
    k = tilec.compile(add, signature=unaligned, constexprs={"BLOCK_SIZE": 1024})
    assert k.asm["ptx"].count("ld.global.v4.b32") == 2


@tilec.jit
def copy_rows(x_ptr, y_ptr, stride, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    offsets = rows[:, None] * stride + tl.arange(0, BLOCK)[None, :]
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets))


def test_row_stride_limits_the_vector_width():
    """Rows start at `row * stride`: without the `%16` specialisation of the stride only the
    first row is known to be aligned, so no access may be wider than one element (the
    fuzzer found 16-byte loads here, misaligned on the GPU for an odd stride)."""
    signature = {"x_ptr": "*fp16:16", "y_ptr": "*fp16:16", "stride": "i32"}
    ptx = tilec.compile(copy_rows, signature=signature, constexprs={"BLOCK": 32}).asm["ptx"]
    assert "ld.global.b16" in ptx and "ld.global.v" not in ptx and "st.global.v" not in ptx
    ptx = tilec.compile(copy_rows, signature=dict(signature, stride="i32:16"), constexprs={"BLOCK": 32}).asm["ptx"]
    assert "ld.global.v4.b32" in ptx and "st.global.v4.b32" in ptx  # 8 halves: 16 bytes


def test_every_stage_is_recorded():
    k = tilec.compile(example("vector_add").add_kernel, signature=ADD_SIGNATURE, constexprs={"BLOCK_SIZE": 256})
    assert set(k.asm) == {"ttir", "ttgir", "llir", "ptx", "cubin"}
    assert '"tile.load"' in k.asm["ttir"] and "#tilegpu" not in k.asm["ttir"]
    assert k.asm["ttgir"].startswith("#blocked0 = #tilegpu.blocked<")
    assert "define ptx_kernel void @add_kernel" in k.asm["llir"]
    assert ".visible .entry add_kernel(" in k.asm["ptx"]
    assert isinstance(k.asm["cubin"], bytes)


def test_compilation_can_stop_after_a_stage():
    from tilec.backend.compiler import compile_kernel
    k = compile_kernel(example("vector_add").add_kernel, signature=ADD_SIGNATURE, constexprs={"BLOCK_SIZE": 256},
                       target="sm_90", stop_after="ttgir")
    assert set(k.asm) == {"ttir", "ttgir"}
    with pytest.raises(ValueError, match="no stage 'sass'; the stages are ttir, ttgir, llir, ptx, cubin"):
        compile_kernel(example("vector_add").add_kernel, signature=ADD_SIGNATURE, constexprs={"BLOCK_SIZE": 256},
                       target="sm_90", stop_after="sass")


def test_dump_dir(tmp_path, monkeypatch, fresh_cache):  # a cache hit compiles nothing, so dumps nothing
    dump = tmp_path / "dump"
    monkeypatch.setattr(config, "dump_dir", str(dump))
    tilec.compile(example("vector_add").add_kernel, signature=ADD_SIGNATURE, constexprs={"BLOCK_SIZE": 256})
    names = sorted(p.name for p in dump.iterdir())
    tag = names[0].split(".")[0]  # add_kernel-<hash of the specialisation>
    assert tag.startswith("add_kernel-") and len(tag) == len("add_kernel-") + 8
    assert names == [f"{tag}.cubin", f"{tag}.ll", f"{tag}.ptx", f"{tag}.ttgir.mlir", f"{tag}.ttir.mlir"]
    tilec.compile(example("vector_add").add_kernel, signature=ADD_SIGNATURE, constexprs={"BLOCK_SIZE": 512})
    assert len(list(dump.iterdir())) == 10  # another specialisation: its own files


def test_dump_ir_prints_every_pass():
    script = (f"import importlib.util, tilec\n"
              f"spec = importlib.util.spec_from_file_location('va', {os.path.join(EXAMPLES, 'vector_add.py')!r})\n"
              "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
              f"tilec.compile(m.add_kernel, signature={ADD_SIGNATURE!r}, constexprs={{'BLOCK_SIZE': 256}})\n")
    env = dict(os.environ, TILEC_DUMP_IR="1")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    for name in ("tile-dce", "convert-tile-to-tilegpu", "tilegpu-coalesce", "tilegpu-remove-layout-conversions",
                 "convert-tilegpu-to-llvm"):
        assert f"// -----// IR dump after {name} (kernel add_kernel) //----- //" in proc.stderr


def test_dump_ir_headers_follow_the_stages(monkeypatch, capsys, fresh_cache):  # a hit compiles nothing
    monkeypatch.setattr(config, "dump_ir", True)
    tilec.compile(example("vector_add").add_kernel, signature=ADD_SIGNATURE, constexprs={"BLOCK_SIZE": 256})
    tilec.compile(multiply_add, signature=dict.fromkeys(multiply_add.arg_names, "*fp32:16"))
    headers = [line for line in capsys.readouterr().err.splitlines() if line.startswith("// -----// IR dump")]
    passes = ["canonicalize", "cse", "tile-combine", "tile-narrow-float", "tile-carry-pointer-bases", "tile-dce",                              # ttir
              "tile-flatten-loops", "tile-choose-descriptor-copies", "convert-tile-to-tilegpu", "tilegpu-coalesce",
              "tilegpu-remove-layout-conversions",
              "tilegpu-accelerate-matmul", "tilegpu-remove-layout-conversions", "tilegpu-pipeline",
              "tilegpu-optimize-dot-operands", "tile-dce", "canonicalize", "cse",             # ttgir
              "tilegpu-allocate-shared-memory", "tilegpu-insert-barriers", "convert-tilegpu-to-llvm",
              "convert-scf-to-cf", "convert-arith-to-llvm", "convert-math-to-llvm", "convert-nvvm-to-llvm",
              "convert-cf-to-llvm", "reconcile-unrealized-casts", "canonicalize", "cse",
              "tilegpu-order-pure-ops"]                                                        # llir
    assert headers == [f"// -----// IR dump after {name} (kernel {kernel}) //----- //"
                       for kernel in ("add_kernel", "multiply_add") for name in passes]


def test_compile_signature_errors():
    add = example("vector_add").add_kernel
    with pytest.raises(ValueError, match="n_elements"):
        tilec.compile(add, signature={k: v for k, v in ADD_SIGNATURE.items() if k != "n_elements"},
                      constexprs={"BLOCK_SIZE": 256})
    with pytest.raises(ValueError, match="bogus"):
        tilec.compile(add, signature=dict(ADD_SIGNATURE, bogus="i32"), constexprs={"BLOCK_SIZE": 256})
    with pytest.raises(ValueError, match="unknown type 'f32'"):
        tilec.compile(add, signature=dict(ADD_SIGNATURE, n_elements="f32"), constexprs={"BLOCK_SIZE": 256})
    with pytest.raises(ValueError, match="target"):
        tilec.compile(add, signature=ADD_SIGNATURE, constexprs={"BLOCK_SIZE": 256}, target="hopper")


@tilec.jit
def multiply_add(x_ptr, y_ptr, z_ptr, out_ptr):
    offs = tl.arange(0, 128)
    x, y, z = tl.load(x_ptr + offs), tl.load(y_ptr + offs), tl.load(z_ptr + offs)
    tl.store(out_ptr + offs, x * y + z)


@pytest.mark.parametrize("fusion", [True, False])
def test_fp_fusion_makes_fma(fusion):
    """enable_fp_fusion (on by default, as in Triton) lets a*b + c become one fma.rn."""
    sig = {name: "*fp32:16" for name in ("x_ptr", "y_ptr", "z_ptr", "out_ptr")}
    ptx = tilec.compile(multiply_add, signature=sig, enable_fp_fusion=fusion).asm["ptx"]
    assert ("fma.rn.f32" in ptx) == fusion
    assert ("mul.rn.f32" in ptx and "add.rn.f32" in ptx) == (not fusion)


@tilec.jit
def int_through_double(x_ptr, y_ptr, DST: tl.constexpr):
    offs = tl.arange(0, 128)
    wide = tl.load(x_ptr + offs).to(tl.float64)
    tl.store(y_ptr + offs, wide.to(DST))


@pytest.mark.parametrize("dst,name,cvt", [(tl.int32, "i32", "cvt.rzi.s32.f64"), (tl.uint16, "u16", "cvt.rzi.u16.f64"),
                                          (tl.int8, "i8", "cvt.rzi.s8.f64")])
def test_float_to_int_saturates_after_a_widening(dst, name, cvt):
    """`int64 -> fp64 -> int32` saturates (2**40 becomes INT_MAX): LLVM's fptosi would make
    an out-of-range value poison and fold the pair into a truncation of the int64 (the
    fuzzer found the low 32 bits on the GPU)."""
    ptx = tilec.compile(int_through_double, signature={"x_ptr": "*i64:16", "y_ptr": f"*{name}:16"},
                        constexprs={"DST": dst}).asm["ptx"]
    assert cvt in ptx


@tilec.jit
def double_to_int(x_ptr, y_ptr):
    offs = tl.arange(0, 128)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs).to(tl.int32))


def test_nan_converts_to_zero_from_double():
    """From fp64, cvt.rzi gives INT_MIN for NaN: a NaN test follows it."""
    ptx = tilec.compile(double_to_int, signature={"x_ptr": "*fp64:16", "y_ptr": "*i32:16"}).asm["ptx"]
    assert "cvt.rzi.s32.f64" in ptx and "setp.nan.f64" in ptx

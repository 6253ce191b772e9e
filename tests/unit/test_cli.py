"""The `tilec` command line without compiling anything: entry points, `tilec cache` over a
cache directory built by hand, `tilec layout`, and `tilec opt`'s errors. (`tilec
compile` is tested in tests/codegen/test_cli_compile.py.)"""
from __future__ import annotations

import os
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tilec.backend.compiler import CompiledKernel, KernelMetadata
from tilec.cli import main
from tilec.runtime.cache import encode_entry
from tilec.layout.mma import MmaEncoding
from tilec.layout.syntax import encoding_text

ROOT = Path(__file__).resolve().parents[2]
MMA = encoding_text(MmaEncoding(2, (2, 2)))


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


# ----------------------------------------------------------------------------- entry points


def test_console_script_and_module_entry():
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '[project.scripts]\ntilec = "tilec.cli:main"\n' in pyproject
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "tilec", "--help"], capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.returncode == 0 and all(c in proc.stdout for c in ("compile", "opt", "cache", "layout"))
    proc = subprocess.run([sys.executable, "-m", "tilec.opt", "--list-passes"], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0 and "tilegpu-coalesce" in proc.stdout


def test_no_command_prints_help(capsys):
    status, out, err = run(capsys)
    assert status == 2 and "usage: tilec" in err


# ----------------------------------------------------------------------------- opt


def test_opt_missing_file_is_one_line(capsys, tmp_path):
    status, out, err = run(capsys, "opt", str(tmp_path / "nope.mlir"))
    assert status == 1 and out == ""
    assert err == f"tilec opt: error: cannot read {tmp_path / 'nope.mlir'}: No such file or directory\n"
    from tilec.opt import main as opt_main  # python -m tilec.opt: the same command
    assert opt_main([str(tmp_path / "nope.mlir")]) == 1
    assert "python -m tilec.opt: error: cannot read" in capsys.readouterr().err


def test_opt_runs_passes(capsys, tmp_path):
    source = tmp_path / "f.mlir"
    source.write_text("func.func @f(%a: i32) -> i32 {\n  %z = arith.constant 0 : i32\n"
                      "  %b = arith.addi %a, %z : i32\n  return %b : i32\n}\n")
    status, out, err = run(capsys, "opt", str(source), "-p", "canonicalize", "--print-ir-after-all")
    assert status == 0 and "arith.addi" not in out and "return %arg0" in out
    assert err.startswith("// -----// IR dump after canonicalize //----- //\n")


# ----------------------------------------------------------------------------- cache


def _kernel(name: str, regs: int) -> CompiledKernel:
    metadata = KernelMetadata(name=name, target="sm_90", num_warps=4, num_stages=3, n_regs=regs,
                              params=[("x_ptr", "*fp32"), ("n", "i32")], param_indices=[0, 1])
    return CompiledKernel(metadata, {"ttir": "module {}", "ptx": "// ptx of " + name, "cubin": b"\x7fELF" + bytes(60)})


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """A cache laid out as tilec.runtime.cache writes it: two kernels, one damaged file,
    a write in progress and a reproducer."""
    from tilec.config import config
    directory = tmp_path / "cache"
    monkeypatch.setattr(config, "cache_dir", str(directory))
    monkeypatch.setattr(config, "reproducer_dir", "")
    for key, kernel, when in (("ab" + "1" * 62, _kernel("add", 26), 1000), ("cd" + "2" * 62, _kernel("mm", 128), 2000)):
        path = directory / key[:2] / f"{key}.tilec"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(encode_entry(kernel))  # the cache's own file format
        os.utime(path, (when, when))
    (directory / "ef").mkdir()
    (directory / "ef" / ("ef" + "3" * 62 + ".tilec")).write_bytes(b"garbage")
    (directory / "ab" / ("ab" + "1" * 62 + ".tilec.x1y2.tmp")).write_bytes(b"half")
    (directory / "reproducers").mkdir()
    (directory / "reproducers" / "add-tile-dce.mlir").write_text("// reproducer")
    return directory


def test_cache_list(capsys, cache_dir):
    status, out, err = run(capsys, "cache", "list")
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["KEY", "KERNEL", "TARGET", "WARPS", "STAGES", "REGS", "SPILLS", "SHARED", "SIZE",
                                "WRITTEN"]
    assert [line.split()[:2] for line in lines[1:4]] == [["ef3333333333", "(unreadable)"], ["cd2222222222", "mm"],
                                                         ["ab1111111111", "add"]]
    assert lines[2].split()[2:6] == ["sm_90", "4", "3", "128"]
    assert lines[-1].startswith("3 kernels, ") and lines[-1].endswith(f"in {cache_dir}")
    status, out, _ = run(capsys, "cache", "list", "--kernel", "add")
    assert [line.split()[1] for line in out.splitlines()[1:-1]] == ["add"]


def test_cache_info(capsys, cache_dir):
    status, out, _ = run(capsys, "cache", "info")
    assert status == 0
    assert f"directory:   {cache_dir}" in out and "kernels:     3," in out
    assert f"reproducers: 1 in {cache_dir / 'reproducers'}" in out
    status, out, _ = run(capsys, "cache", "info", "cd22")
    assert status == 0 and "kernel:   mm" in out and "compiled: 128 registers" in out
    assert "params:   x_ptr: *fp32, n: i32" in out and "ptx (" in out
    status, out, _ = run(capsys, "cache", "info", "cd22", "--stage", "ptx")
    assert out == "// ptx of mm"
    status, _, err = run(capsys, "cache", "info", "99")
    assert status == 1 and err.startswith("tilec cache: error: no kernel with a key starting '99'")
    status, _, err = run(capsys, "cache", "info", "ef")
    assert status == 1 and "cannot be read back" in err


def test_cache_info_writes_a_cubin(capsys, cache_dir, tmp_path):
    status, _, err = run(capsys, "cache", "info", "ab1", "--stage", "cubin", "-o", str(tmp_path / "k.cubin"))
    assert status == 0, err
    assert (tmp_path / "k.cubin").read_bytes().startswith(b"\x7fELF")


def test_cache_clear(capsys, cache_dir):
    status, out, _ = run(capsys, "cache", "clear", "--dry-run")
    assert out.startswith("would remove 3 kernels") and len(list(cache_dir.rglob("*.tilec"))) == 3
    status, out, _ = run(capsys, "cache", "clear", "--kernel", "mm")
    assert status == 0 and out.startswith("removed 1 kernel named mm")
    assert not (cache_dir / "cd").exists()  # its shard, left empty, goes too
    status, out, _ = run(capsys, "cache", "clear", "--reproducers")
    assert "removed 2 kernels" in out and "removed 1 reproducer" in out
    assert list(cache_dir.rglob("*")) == []  # the temporary file of the interrupted write too
    status, out, _ = run(capsys, "cache", "list")
    assert out == f"no kernels in the cache at {cache_dir}\n"


def test_cache_of_a_missing_directory(capsys, tmp_path):
    status, out, _ = run(capsys, "cache", "info", "--dir", str(tmp_path / "none"))
    assert status == 0 and "does not exist yet" in out and "kernels:     0, 0 B" in out


# ----------------------------------------------------------------------------- layout

TTGIR = """#blocked0 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, \
threadsPerWarp = array<i32: 2, 16>, warpsPerCTA = array<i32: 4, 1>}>
#mma0 = """ + MMA + """
module {
  %0 = "tilegpu.convert_layout"(%x) : (tensor<64x32xf32, #mma0>) -> tensor<64x32xf32, #blocked0>
}
"""


def test_layout_text(capsys):
    status, out, err = run(capsys, "layout", MMA, "--shape", "32x16", "--width", "200")
    assert status == 0, err
    assert out.startswith(MMA + "\n")
    assert "warp 0 lane 0 holds, by register: (0, 0) (0, 1) (8, 0) (8, 1)" in out
    row8 = [line for line in out.splitlines() if line.startswith(" 8 ")][0]
    assert row8.split()[1:5] == ["W0T0R2", "W0T0R3", "W0T1R2", "W0T1R3"]


def test_layout_written_by_hand(capsys):
    # keys in any order, integers without a type: put in MLIR's printed form first
    text = "#tilegpu.mma<{warpsPerCTA = array<i32: 2, 2>, versionMajor = 2, instrShape = array<i32: 16, 8>}>"
    status, out, err = run(capsys, "layout", text, "--shape", "32x16")
    assert status == 0, err
    assert out.startswith(MMA)


def test_layout_aliases_of_a_ttgir_file(capsys, tmp_path):
    ir = tmp_path / "k.ttgir"
    ir.write_text(TTGIR)
    status, out, err = run(capsys, "layout", "--ir", str(ir), "#mma0", "blocked0", "--rows", "4")
    assert status == 0, err
    assert out.count("shape [64, 32]") == 2  # from the convert_layout's types
    assert "blocked: sizePerThread [1, 4]" in out
    status, _, err = run(capsys, "layout", "--ir", str(ir), "#mma1")
    assert status == 1 and "defines no encoding #mma1; its aliases: #blocked0, #mma0" in err
    status, _, err = run(capsys, "layout", "#mma0", "--shape", "32x16")
    assert status == 1 and "name the file with --ir FILE" in err


def test_layout_images(capsys, tmp_path):
    svg, png = tmp_path / "mma.svg", tmp_path / "mma.png"
    assert run(capsys, "layout", MMA, "--shape", "32x16", "-o", str(svg))[0] == 0
    root = ET.parse(svg).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert run(capsys, "layout", MMA, "--shape", "32x16", "-o", str(png))[0] == 0
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert width > 16 * 40 and height > 32 * 16


@pytest.mark.parametrize("argv,message", [
    (["layout", MMA], "give the tensor's shape with --shape"),
    (["layout", MMA, "--shape", "30x16"], "every dimension must be a power of two"),
    (["layout", "#tilegpu.mma<{}>", "--shape", "32x16"], "cannot read the encoding"),
    (["layout", MMA, "--shape", "32x16", "--show", "bank"], "cannot show bank"),
    (["layout", "blocked", "--shape", "32x16"], "expected #tilegpu.<kind><{...}>"),
])
def test_layout_errors(capsys, argv, message):
    status, out, err = run(capsys, *argv)
    assert status == 1 and out == ""
    assert err.startswith("tilec layout: error: ") and message in err and len(err.splitlines()) == 1


# ----------------------------------------------------------------------------- a newcomer's first commands (issue 26)


def test_version(capsys):
    import tilec
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out == f"tilec {tilec.__version__}\n"
    # One place: the package's metadata is read from tilec.__version__ when it is built.
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject and 'version = { attr = "tilec.__version__" }' in pyproject
    assert "\nversion = " not in pyproject.split("[project.scripts]")[0]


def test_version_reads_as_the_triton_language_it_implements():
    """Swapped imports make tilec.__version__ a library's triton.__version__: it names
    the Triton language (3.9) first and tilec's release (the cache's) as a local label."""
    import packaging.version
    import tilec
    from tilec.backend.kernel_data import TILEC_VERSION
    version = packaging.version.Version(tilec.__version__)
    assert version.release == (3, 9, 0) and version.local == f"tilec.{TILEC_VERSION}"
    assert version >= packaging.version.Version("3.0.0") and tilec.__version__ >= "3.0.0"


VECTOR_ADD = ["compile", f"{ROOT / 'examples' / 'vector_add.py'}:add_kernel", "-s",
              "x_ptr=*fp32:16,y_ptr=*fp32:16,out_ptr=*fp32:16,n_elements=i32", "-c", "BLOCK_SIZE=1024"]


def test_opt_says_which_stage_a_pass_needs(capsys, tmp_path):
    ttir, ttgir = tmp_path / "add.ttir", tmp_path / "add.ttgir"
    assert run(capsys, *VECTOR_ADD, "--stage", "ttir", "-o", str(ttir))[0] == 0
    assert run(capsys, *VECTOR_ADD, "--stage", "ttgir", "-o", str(ttgir))[0] == 0
    status, out, err = run(capsys, "opt", str(ttir), "-p", "canonicalize,tilegpu-coalesce")
    assert status == 1 and out == "" and "KeyError" not in err
    assert err == (f"error: tilegpu-coalesce runs on tilegpu IR (ttgir: tensors with layouts), and {ttir} is tile "
                   "IR (ttir): convert it first, -p 'canonicalize,convert-tile-to-tilegpu{num-warps=4 "
                   "target=sm_90},tilegpu-coalesce', or take the ttgir that `tilec compile --stage ttgir` prints\n")
    # The pipeline it suggests runs.
    status, out, err = run(capsys, "opt", str(ttir), "-p",
                           "canonicalize,convert-tile-to-tilegpu{num-warps=4 target=sm_90},tilegpu-coalesce")
    assert status == 0 and "#tilegpu.blocked<" in out, err
    status, _, err = run(capsys, "opt", str(ttgir), "-p", "convert-tile-to-tilegpu")
    assert status == 1 and "convert-tile-to-tilegpu runs on tile IR (ttir), and" in err
    assert "is already tilegpu IR" in err
    status, _, err = run(capsys, "opt", str(ttgir), "-p", "convert-tilegpu-to-llvm,tilegpu-coalesce")
    assert status == 1 and "tilegpu-coalesce runs on tilegpu IR" in err and "made LLVM IR" in err
    assert run(capsys, "opt", str(ttgir), "-p", "tilegpu-coalesce,tile-dce")[0] == 0  # the right stage: runs


def test_compile_refuses_an_empty_target(capsys):
    status, out, err = run(capsys, *VECTOR_ADD, "--stage", "ttir", "--target", "")
    assert status == 1 and out == "" and err == "tilec compile: error: target must look like 'sm_90', got ''\n"


RING_TTGIR = """\
#blocked0 = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, threadsPerWarp = array<i32: 2, 16>, warpsPerCTA = array<i32: 4, 1>}>
#nvmma_shared0 = #tilegpu.nvmma_shared<{elementBits = 16 : i32, swizzle = 64 : i32, transposed = false}>
module attributes {"tilegpu.num-warps" = 4 : i32} {
  %0 = "tilegpu.local_alloc"() : () -> !tilegpu.memdesc<tensor<3x64x32xf16, #nvmma_shared0>>
  %1 = "tile.make_range"() : () -> tensor<64x1xi32, #blocked0>
  %2 = "tile.splat"(%x) : (f32) -> tensor<64x64xf32, #blocked0>
}
"""


def test_layout_default_shape_is_one_it_draws(capsys, tmp_path):
    """The shape --ir picks: the largest tensor with the encoding (not the first, a
    broadcast column), a ring buffer's slot (its 3 slots are no power of two)."""
    ir = tmp_path / "ring.ttgir"
    ir.write_text(RING_TTGIR)
    status, out, err = run(capsys, "layout", "--ir", str(ir), "#nvmma_shared0", "--rows", "2")
    assert status == 0, err
    assert "64-byte swizzle, 16-bit elements; shape [64, 32]" in out
    status, out, err = run(capsys, "layout", "--ir", str(ir), "#blocked0", "--rows", "2")
    assert status == 0, err
    assert "order [1, 0]; shape [64, 64]" in out
    ir.write_text(RING_TTGIR.replace("3x64x32", "3x48x32"))
    status, _, err = run(capsys, "layout", "--ir", str(ir), "#nvmma_shared0")
    assert status == 1 and err == (f"tilec layout: error: {ir} has no 2-D tensor with #nvmma_shared0 whose dimensions "
                                   "are powers of two (its shapes: [3, 48, 32]): give the shape with --shape, e.g. "
                                   "--shape 32x16\n")


TRITON_BLOCKED = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>"
TRITON_TTGIR = """\
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32} {
  tt.func public @k(%arg0: !tt.ptr<f16>) {
    %0 = ttg.local_alloc : () -> !ttg.memdesc<3x32x64xf16, #shared, #smem, mutable>
    %1 = ttg.convert_layout %2 : tensor<64x32xf32, #mma> -> tensor<64x32xf32, #blocked>
    %3 = ttg.convert_layout %4 : tensor<64xf32, #ttg.slice<{dim = 1, parent = #blocked}>> -> tensor<64xf32, #blocked>
    tt.return
  }
}
"""


@pytest.mark.parametrize("triton,tilec_text", [
    (TRITON_BLOCKED, "#tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, "
                     "threadsPerWarp = array<i32: 8, 4>, warpsPerCTA = array<i32: 4, 1>}>"),
    ("#triton_gpu.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0], "
     "CTAsPerCGA = [1, 1], CTASplitNum = [1, 1], CTAOrder = [1, 0]}>",
     "#tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 4>, "
     "threadsPerWarp = array<i32: 8, 4>, warpsPerCTA = array<i32: 4, 1>}>"),
    ("#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>", MMA),
    ("#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>",
     "#tilegpu.mma<{instrShape = array<i32: 64, 64>, versionMajor = 3 : i32, warpsPerCTA = array<i32: 4, 1>}>"),
    ("#ttg.dot_op<{opIdx = 1, parent = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], "
     "instrShape = [16, 8]}>, kWidth = 2}>",
     "#tilegpu.dot_op<{kWidth = 2 : i32, opIdx = 1 : i32, parent = " + MMA + "}>"),
    ("#ttg.slice<{dim = 0, parent = " + TRITON_BLOCKED + "}>",
     "#tilegpu.slice<{dim = 0 : i32, parent = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = "
     "array<i32: 1, 4>, threadsPerWarp = array<i32: 8, 4>, warpsPerCTA = array<i32: 4, 1>}>}>"),
    ("#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>",
     "#tilegpu.shared<{maxPhase = 8 : i32, order = array<i32: 1, 0>, perPhase = 1 : i32, vec = 8 : i32}>"),
    ("#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>",
     "#tilegpu.nvmma_shared<{elementBits = 16 : i32, swizzle = 128 : i32, transposed = false}>"),
])
def test_layout_reads_tritons_syntax(capsys, triton, tilec_text):
    shape = "64" if "slice" in triton else "32x64"
    status, out, err = run(capsys, "layout", triton, "--shape", shape, "--width", "200")
    assert status == 0, err
    status, expected, err = run(capsys, "layout", tilec_text, "--shape", shape, "--width", "200")
    assert status == 0, err
    assert out == expected and out.startswith(tilec_text + "\n")  # the same picture, the encoding in tilec's text


def test_layout_reads_a_ttgir_file_of_tritons(capsys, tmp_path):
    ir = tmp_path / "k.ttgir"
    ir.write_text(TRITON_TTGIR)
    status, out, err = run(capsys, "layout", "--ir", str(ir), "#mma", "#blocked", "--rows", "2")  # a conversion
    assert status == 0, err
    assert "mma v2 accumulator (mma.sync m16n8), warpsPerCTA [2, 2]; shape [64, 32]" in out
    assert "blocked: sizePerThread [1, 8], threadsPerWarp [4, 8], warpsPerCTA [4, 1], order [1, 0]; " \
           "shape [64, 32]" in out
    status, out, err = run(capsys, "layout", "--ir", str(ir), "#shared", "--rows", "2")
    assert status == 0, err
    assert "swizzled shared: vec 8, perPhase 1, maxPhase 8, order [1, 0]; shape [32, 64]" in out  # a ring's slot
    status, out, err = run(capsys, "layout", "--ir", str(ir), "#ttg.slice<{dim = 1, parent = #blocked}>")
    assert status == 0, err
    assert "slice (dimension 1 removed) of blocked: sizePerThread [1, 8]" in out and "shape [64]" in out


@pytest.mark.parametrize("argv,message", [
    (["layout", "#ttg.amd_mfma<{versionMajor = 4, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 16], "
      "isTransposed = true}>", "--shape", "32x32"],
     "tilec has no equivalent of Triton's amd_mfma encoding; it reads blocked, slice, dot_op, nvidia_mma, "
     "swizzled_shared, nvmma_shared, linear"),
    (["layout", TRITON_BLOCKED.replace(", order = [1, 0]", ""), "--shape", "32x16"],
     "Triton's blocked encoding #ttg.blocked<{...}> lacks order"),
    (["layout", TRITON_BLOCKED.replace("}>", ", CTAsPerCGA = [2, 1]}>"), "--shape", "32x16"],
     "CTAsPerCGA describes a cluster of several CTAs; tilec compiles for one"),
    (["layout", "#ttg.slice<{dim = 1, parent = #blocked}>", "--shape", "32"], "#blocked is an alias that a ttgir file"),
    (["layout", "#blocked", "--shape", "32x16"],
     "#blocked looks like an alias of a ttgir file: name the file with --ir"),
])
def test_layout_errors_in_tritons_syntax(capsys, argv, message):
    status, out, err = run(capsys, *argv)
    assert status == 1 and out == ""
    assert err.startswith("tilec layout: error: ") and message in err and len(err.splitlines()) == 1

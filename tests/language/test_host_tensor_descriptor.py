"""Host-side tensor descriptors (`tilec.tools.tensor_descriptor.TensorDescriptor`, as
`triton.tools.tensor_descriptor`'s) passed as kernel arguments, on both backends: in the
kernel they are `tl.tensor_descriptor`s, with TMA's rules (out-of-bounds elements read
the padding value and are not written).

Inputs are random, outputs poisoned before the run and larger than the described region
(a wider row stride, extra rows) so that writes outside it show.
"""
from __future__ import annotations

import math
import re

import ml_dtypes
import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.errors import LaunchError
from tilec.tools.tensor_descriptor import TensorDescriptor
from tilec_testing import assert_block_written, device_array, to_numpy

POISON = -12345.0


@tilec.jit
def scale_kernel(in_desc, out_desc, BM: tl.constexpr, BN: tl.constexpr):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    x = in_desc.load([pid_m * BM, pid_n * BN])
    out_desc.store([pid_m * BM, pid_n * BN], x * 2.0 + 1.0)


def _described(array, rows: int, cols: int, block, padding="zero"):
    """A descriptor of the top-left rows x cols of a row-major 2-D `array` (on its backend)."""
    return TensorDescriptor(array, [rows, cols], [array.shape[1], 1], block, padding)


@pytest.mark.parametrize("m, n, bm, bn", [(37, 50, 16, 32), (64, 24, 32, 8), (130, 70, 64, 64), (100, 92, 64, 32)])
def test_load_and_store_with_boundary_tiles(backend, rng, m, n, bm, bn):
    """Tiles straddling the last rows and columns: what lies outside reads 0 (so it does
    not matter) and is not written. (On sm_90 the loads are TMA copies; so are the
    stores where rows span a multiple of 16 bytes: n = 24 and 92.)"""
    x = rng.standard_normal((m, n + 6)).astype(np.float32)  # rows of 4 * (n + 6) bytes
    stride = -(-(n + 6) // 4) * 4
    x_full = np.zeros((m, stride), np.float32)
    x_full[:, :n + 6] = x
    out = np.full((m + 3, stride + 8), POISON, np.float32)
    x_dev, out_dev = device_array(x_full, backend), device_array(out, backend)
    grid = (tilec.cdiv(m, bm), tilec.cdiv(n, bn))
    scale_kernel[grid](_described(x_dev, m, n, [bm, bn]), _described(out_dev, m, n, [bm, bn]), BM=bm, BN=bn)
    got = to_numpy(out_dev)
    assert_block_written(got, x[:, :n] * 2 + 1, POISON, "a descriptor store")


@tilec.jit
def padding_kernel(in_desc, out_ptr, BM: tl.constexpr, BN: tl.constexpr, COL: tl.constexpr):
    """The block at (-2, COL): rows and columns before the tensor read the padding."""
    block = in_desc.load([-2, COL])
    rm, rn = tl.arange(0, BM), tl.arange(0, BN)
    tl.store(out_ptr + rm[:, None] * BN + rn[None, :], block)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.float8_e4m3fn])
@pytest.mark.parametrize("padding", ["zero", "nan"])
def test_padding_option(backend, rng, padding, dtype):
    """Out-of-bounds elements read the padding. On sm_90 the block starts 16 bytes
    before the first column, so it is a TMA copy whose tensor map fills them (fp8 with
    NaN, which a tensor map cannot fill, takes the pointer form); -3 columns is never."""
    size = np.dtype(dtype).itemsize
    cols = 64 // size  # 64 bytes along a row
    for col in (-(16 // size), -3):
        x = rng.standard_normal((8, cols)).astype(dtype)
        out = device_array(np.full((8, cols), -3.0, dtype), backend)
        padding_kernel[(1,)](TensorDescriptor.from_tensor(device_array(x, backend), [8, cols], padding), out, BM=8,
                             BN=cols, COL=col)
        got = to_numpy(out).astype(np.float32)
        np.testing.assert_array_equal(got[2:, -col:], x[:6, :cols + col].astype(np.float32))
        fill = got.copy()
        fill[2:, -col:] = 0 if padding == "zero" else np.nan
        assert (np.isnan(fill) if padding == "nan" else fill == 0).all()


@tilec.jit
def fields_kernel(desc, out_ptr):
    """What a kernel can read off a descriptor argument."""
    tl.static_assert(isinstance(desc, tl.tensor_descriptor))
    tl.static_assert(desc.block_shape[0] == 4 and desc.block_shape[1] == 32)
    tl.static_assert(desc.dtype == tl.float16)
    tl.store(out_ptr + 0, desc.shape[0])
    tl.store(out_ptr + 1, desc.shape[1])
    tl.store(out_ptr + 2, desc.strides[0].to(tl.int32))


def test_descriptor_fields_in_the_kernel(backend):
    x = device_array(np.ones((20, 48), np.float16), backend)
    out = device_array(np.full(3, -1, np.int32), backend)
    fields_kernel[(1,)](TensorDescriptor(x, [17, 40], [48, 1], [4, 32]), out)
    np.testing.assert_array_equal(to_numpy(out), [17, 40, 48])


@tilec.jit
def batched_kernel(in_desc, out_desc, BB: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    x = in_desc.load([pid * BB, 0, 0])
    out_desc.store([pid * BB, 0, 0], -x)


def test_three_dimensional_descriptor(backend, rng):
    x = rng.standard_normal((5, 6, 8)).astype(np.float32)
    out = device_array(np.full((5, 6, 8), POISON, np.float32), backend)
    x_dev = device_array(x, backend)
    batched_kernel[(3,)](TensorDescriptor.from_tensor(x_dev, [2, 8, 8]), TensorDescriptor.from_tensor(out, [2, 8, 8]),
                         BB=2, BM=8, BN=8)
    np.testing.assert_array_equal(to_numpy(out), -x)


@tilec.jit
def persistent_matmul_kernel(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                             BK: tl.constexpr, NUM_PROGRAMS: tl.constexpr):
    """Triton tutorial 09's persistent shape: each program walks tiles NUM_PROGRAMS apart
    (tl.range with flatten and warp_specialize, accepted as hints)."""
    start = tl.program_id(0)
    tiles_m, tiles_n = tl.cdiv(M, BM), tl.cdiv(N, BN)
    for tile in tl.range(start, tiles_m * tiles_n, NUM_PROGRAMS, flatten=True, warp_specialize=True):
        pid_m, pid_n = tile // tiles_n, tile % tiles_n
        acc = tl.zeros((BM, BN), tl.float32)
        for k in range(0, tl.cdiv(K, BK)):
            a = a_desc.load([pid_m * BM, k * BK])
            b = b_desc.load([k * BK, pid_n * BN])
            acc = tl.dot(a, b, acc)
        c_desc.store([pid_m * BM, pid_n * BN], acc.to(tl.float16))


@pytest.mark.parametrize("m, n, k, bm, bn, bk, programs, warps", [
    (96, 80, 72, 32, 32, 32, 3, 4), (200, 136, 96, 64, 64, 32, 5, 4), (300, 264, 200, 128, 128, 64, 3, 8)])
def test_persistent_matmul_with_descriptors(backend, rng, m, n, k, bm, bn, bk, programs, warps):
    """On sm_90 the operand loads of the wgmma cases (BM >= 64) are TMA copies streamed
    into rings; K's last block and the last tiles run past the tensors (zero fill)."""
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = device_array(np.full((m, n), np.nan, np.float16), backend)
    a_dev, b_dev = device_array(a, backend), device_array(b, backend)
    persistent_matmul_kernel[(programs,)](
        TensorDescriptor.from_tensor(a_dev, [bm, bk]), TensorDescriptor.from_tensor(b_dev, [bk, bn]),
        TensorDescriptor.from_tensor(c, [bm, bn]), m, n, k, BM=bm, BN=bn, BK=bk, NUM_PROGRAMS=programs,
        num_warps=warps)
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(to_numpy(c).astype(np.float64), want, rtol=1e-2, atol=2e-2)


def test_block_shape_set_after_construction_is_a_new_specialisation(backend, rng):
    """As Triton's tutorials do in an autotuner pre-hook: the block shape is changed on
    the host descriptor after it was made, and the next launch compiles for it."""
    x = rng.standard_normal((64, 64)).astype(np.float32)
    out = device_array(np.full((64, 64), POISON, np.float32), backend)
    x_dev = device_array(x, backend)
    src, dst = TensorDescriptor.from_tensor(x_dev, [16, 16]), TensorDescriptor.from_tensor(out, [16, 16])
    scale_kernel[(4, 4)](src, dst, BM=16, BN=16)
    np.testing.assert_array_equal(to_numpy(out), x * 2 + 1)
    out2 = device_array(np.full((64, 64), POISON, np.float32), backend)
    dst2 = TensorDescriptor.from_tensor(out2, [16, 16])
    src.block_shape = dst2.block_shape = [32, 64]
    scale_kernel[(2, 1)](src, dst2, BM=32, BN=64)
    np.testing.assert_array_equal(to_numpy(out2), x * 2 + 1)


@pytest.mark.parametrize("change, words", [
    (lambda d: setattr(d, "block_shape", [16, 24]), "powers of two"),
    (lambda d: setattr(d, "strides", [1, 64]), "last dimension must be contiguous"),
    (lambda d: setattr(d, "strides", [63, 1]), "multiples of 16 bytes"),
    (lambda d: setattr(d, "block_shape", [16, 2]), "at least 16 bytes"),
    (lambda d: setattr(d, "padding", "inf"), "padding must be"),
    (lambda d: setattr(d, "shape", [64]), "one entry per dimension"),
])
def test_bad_descriptor_is_a_launch_error_naming_the_argument(backend, change, words):
    x = device_array(np.zeros((64, 64), np.float32), backend)
    good = TensorDescriptor.from_tensor(x, [16, 16])
    bad = TensorDescriptor.from_tensor(x, [16, 16])
    change(bad)
    with pytest.raises(LaunchError, match=r"argument 'out_desc' of scale_kernel\(\) is a bad tensor descriptor") as info:
        scale_kernel[(1, 1)](good, bad, BM=16, BN=16)
    assert words in str(info.value)


@tilec.jit
def pair_sum_kernel(descs, out_desc, BM: tl.constexpr, BN: tl.constexpr):
    """Descriptors inside a tuple argument, a nested one included."""
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    a = descs[0].load([pid_m * BM, pid_n * BN])
    b = descs[1][0].load([pid_m * BM, pid_n * BN])
    out_desc.store([pid_m * BM, pid_n * BN], a * 2.0 + b * descs[1][1])


def test_descriptors_inside_tuple_arguments(backend, rng):
    m, n = 48, 40
    x, y = (rng.standard_normal((m, 64)).astype(np.float32) for _ in range(2))
    out = device_array(np.full((m, 64), POISON, np.float32), backend)
    x_dev, y_dev = device_array(x, backend), device_array(y, backend)
    descs = (_described(x_dev, m, n, [16, 32]), (_described(y_dev, m, n, [16, 32]), 0.5))
    pair_sum_kernel[(3, 2)](descs, _described(out, m, n, [16, 32]), BM=16, BN=32)
    assert_block_written(to_numpy(out), x[:, :n] * 2 + y[:, :n] * 0.5, POISON, "a descriptor store")
    bad = (descs[0], (TensorDescriptor.from_tensor(y_dev, [16, 2]), 0.5))
    with pytest.raises(LaunchError, match=r"argument 'descs.1.0' of pair_sum_kernel\(\) is a bad tensor descriptor"):
        pair_sum_kernel[(3, 2)](bad, _described(out, m, n, [16, 32]), BM=16, BN=32)


def test_blocks_wider_than_a_tensor_map_box(backend, rng):
    """A block of 512 rows (a tensor map's box spans at most 256 per dimension) is
    accepted, as Triton accepts any power of two; it is read and written through
    pointers, not TMA."""
    x = rng.standard_normal((600, 32)).astype(np.float32)
    out = device_array(np.full((600, 32), POISON, np.float32), backend)
    x_dev = device_array(x, backend)
    scale_kernel[(2, 1)](TensorDescriptor.from_tensor(x_dev, [512, 32]), TensorDescriptor.from_tensor(out, [512, 32]),
                         BM=512, BN=32)
    np.testing.assert_allclose(to_numpy(out), x * 2 + 1, rtol=1e-6)
    host = np.zeros((600, 32), np.float32)
    ptx = scale_kernel.warmup(TensorDescriptor.from_tensor(host, [512, 32]), TensorDescriptor.from_tensor(host, [512, 32]),
                              BM=512, BN=32, grid=(1,), target="sm_90").asm["ptx"]
    assert "cp.async.bulk.tensor" not in ptx


def _set_block_shapes(meta):
    """An autotuner pre-hook in the style of Triton's tutorials: the descriptors were
    made with a placeholder block, the config gives the real one."""
    for name in ("in_desc", "out_desc"):
        meta[name].block_shape = [meta["BM"], meta["BN"]]


@tilec.autotune(configs=[tilec.Config({"BM": 16, "BN": 32}, pre_hook=_set_block_shapes),
                         tilec.Config({"BM": 32, "BN": 16}, pre_hook=_set_block_shapes)], key=[])
@tilec.jit
def autotuned_scale_kernel(in_desc, out_desc, BM: tl.constexpr, BN: tl.constexpr):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    x = in_desc.load([pid_m * BM, pid_n * BN])
    out_desc.store([pid_m * BM, pid_n * BN], x * 2.0 + 1.0)


def test_placeholder_block_replaced_by_a_pre_hook(backend, rng):
    """A descriptor made with block_shape [1, 1] (under the 16-byte minimum of a block's
    row) is accepted when made; the autotuner's pre-hook sets the real block before each
    launch, and the launch checks it."""
    x = rng.standard_normal((64, 64)).astype(np.float32)
    x_dev = device_array(x, backend)
    out = device_array(np.full((64, 64), POISON, np.float32), backend)
    in_desc = TensorDescriptor.from_tensor(x_dev, [1, 1])
    out_desc = TensorDescriptor.from_tensor(out, [1, 1])
    grid = lambda meta: (tilec.cdiv(64, meta["BM"]), tilec.cdiv(64, meta["BN"]))
    autotuned_scale_kernel[grid](in_desc, out_desc)
    np.testing.assert_allclose(to_numpy(out), x * 2 + 1, rtol=1e-6)
    # Launched as it was made, the placeholder is refused, naming the argument.
    with pytest.raises(LaunchError, match=r"argument 'in_desc' of scale_kernel\(\).*at least 16 bytes"):
        scale_kernel[(1, 1)](TensorDescriptor.from_tensor(x_dev, [1, 1]), out_desc, BM=1, BN=1)


def test_bad_descriptor_is_refused_when_made():
    x = np.zeros((64, 64), np.float32)
    with pytest.raises(ValueError, match="multiples of 16 bytes"):
        TensorDescriptor(x, [64, 60], [62, 1], [16, 16])
    with pytest.raises(ValueError, match="base address must be a multiple of 16 bytes"):
        TensorDescriptor.from_tensor(np.zeros(4097, np.float32)[1:].reshape(64, 64), [16, 16])


def test_descriptor_parameters_in_ttir():
    """Compiled: a descriptor argument is its base pointer (16-byte aligned), its shape
    and its strides (the last, 1, folded), the block shape compiled in."""
    x = np.zeros((64, 64), np.float32)
    kernel = scale_kernel.warmup(TensorDescriptor.from_tensor(x, [32, 16]), TensorDescriptor.from_tensor(x, [32, 16]),
                                 BM=32, BN=16, grid=(1,), target="sm_90")
    signature = kernel.asm["ttir"].split("func.func public @scale_kernel(")[1].split(")")[0]
    assert signature.count("!tile.ptr<f32> {tile.divisibility = 16 : i32}") == 2
    assert signature.count("i32 {tile.divisibility = 16 : i32}") == 6  # 64, 64 and the row stride 64, twice


@pytest.mark.parametrize("n, store_by_tma", [(64, True), (50, False)])
def test_tma_copies_on_hopper(n, store_by_tma):
    """Compiled for sm_90, a host descriptor's 2-D loads become TMA copies
    (`cp.async.bulk.tensor` completing an mbarrier) and so do its stores, unless a row of
    the tensor ends inside a 16-byte run (TMA would write the whole run); for sm_80,
    neither."""
    x = np.zeros((64, 64), np.float32)
    descs = (TensorDescriptor(x, [64, n], [64, 1], [32, 16]), TensorDescriptor(x, [64, n], [64, 1], [32, 16]))
    hopper = scale_kernel.warmup(*descs, BM=32, BN=16, grid=(1,), target="sm_90")
    ttir, ptx = hopper.asm["ttir"], hopper.asm["ptx"]
    assert '"tile.descriptor_load"' in ttir and ("tile.descriptor_store" in ttir) == store_by_tma
    assert "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes" in ptx
    assert "mbarrier.try_wait.parity" in ptx and "mbarrier.arrive.expect_tx" in ptx
    assert ("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group" in ptx) == store_by_tma
    # One lane issues each copy: the lane of warp 0 that elect.sync picks (under tid == 0,
    # ptxas wrapped every TMA instruction in a loop over the lanes the predicate holds in).
    issues = [line for line in ptx.splitlines() if "cp.async.bulk.tensor" in line]
    assert issues and ptx.count("elect.sync") >= len(issues)
    ampere = scale_kernel.warmup(*descs, BM=32, BN=16, grid=(1,), target="sm_80")
    assert "descriptor_load" not in ampere.asm["ttir"] and "cp.async.bulk" not in ampere.asm["ptx"]


def test_tensor_maps_are_grid_constant_parameters_on_hopper():
    """On sm_90 each map a TMA copy reads is a by-value, 64-aligned, 128-byte parameter
    that the copies address in parameter space (`cvta.param`), as Triton passes it, and
    its signature type is "tensormap" (the launcher's 128 bytes); for sm_80 the maps stay
    pointer parameters no instruction reads (the launcher passes 0)."""
    x = np.zeros((64, 64), np.float32)
    descs = (TensorDescriptor(x, [64, 64], [64, 1], [32, 16]), TensorDescriptor(x, [64, 64], [64, 1], [32, 16]))
    hopper = scale_kernel.warmup(*descs, BM=32, BN=16, grid=(1,), target="sm_90")
    ptx = hopper.asm["ptx"]
    maps = re.findall(r"\.param \.align 64 \.b8 (scale_kernel_param_\d+)\[128\]", ptx)
    assert len(maps) == 2 and ptx.count("cvta.param.u64") == 2
    assert [name for name, ty in hopper.metadata.params if ty == "tensormap"] == ["in_desc.tensormap",
                                                                                  "out_desc.tensormap"]
    assert 'tile.tensormap' in hopper.asm["ttgir"]
    ampere = scale_kernel.warmup(*descs, BM=32, BN=16, grid=(1,), target="sm_80")
    assert ".b8" not in ampere.asm["ptx"] and "cvta.param" not in ampere.asm["ptx"]
    assert all(ty != "tensormap" for _, ty in ampere.metadata.params)


@pytest.mark.parametrize("target, wgmma", [("sm_90", True), ("sm_90", False), ("sm_80", True)])
def test_descriptor_loads_feeding_a_dot_in_a_loop_are_streamed(monkeypatch, target, wgmma):
    """Compiled: the persistent matmul's operand loads feed a dot in a loop. On sm_90 with
    wgmma they are TMA copies that tilegpu-pipeline streams into rings, one mbarrier per
    slot (waited for with the carried phase), the dot's group left in flight; elsewhere
    the pointer form, streamed by cp.async. The store, in the tile loop, is a TMA store
    on sm_90 that waits only until its block was read (nothing in the kernel reads C)."""
    from tilec.config import config
    monkeypatch.setattr(config, "wgmma", wgmma)
    a = np.zeros((256, 256), np.float16)
    kernel = persistent_matmul_kernel.warmup(
        TensorDescriptor.from_tensor(a, [128, 64]), TensorDescriptor.from_tensor(a, [64, 128]),
        TensorDescriptor.from_tensor(a, [128, 128]), 256, 256, 256, BM=128, BN=128, BK=64, NUM_PROGRAMS=4,
        grid=(1,), target=target, num_warps=8, num_stages=3)
    ptx = kernel.asm["ptx"]
    tma = target == "sm_90" and wgmma
    assert ("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes" in ptx) == tma
    assert ("cp.async.cg.shared.global" in ptx) == (not tma)
    store = "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group"
    assert (store in ptx and "cp.async.bulk.wait_group.read 0;" in ptx) == (target == "sm_90")
    if tma:
        assert re.search(r"mbarrier\.try_wait\.parity\.shared::cta\.b64 ready, \[%r\d+\], %r\d+;", ptx)
        assert re.search(r"wgmma\.wait_group\.sync\.aligned\s+1;", ptx) and ptx.count("mbarrier.init") == 6
        # the two rings' six mbarriers are published together: one fence, then one barrier
        assert ptx.count("fence.mbarrier_init") == 1
        ttgir = kernel.asm["ttgir"]
        # two rings, each filled by the prologue's two stages and once in the body
        assert ttgir.count('"tilegpu.tma_copy_global_to_local"') == 6
    assert kernel.n_spills == 0


@tilec.jit
def store_then_load_kernel(desc, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    """A descriptor store, then a load of what it wrote: the load must see the store."""
    desc.store([0, 0], tl.full((BM, BN), 3.0, tl.float32))
    block = desc.load([0, 0])
    r, c = tl.arange(0, BM), tl.arange(0, BN)
    tl.store(out_ptr + r[:, None] * BN + c[None, :], block + 1)


def test_store_then_load_sees_the_store(backend):
    x = device_array(np.zeros((32, 32), np.float32), backend)
    out = device_array(np.full((16, 32), POISON, np.float32), backend)
    store_then_load_kernel[(1,)](TensorDescriptor.from_tensor(x, [16, 32]), out, BM=16, BN=32)
    np.testing.assert_array_equal(to_numpy(out), np.full((16, 32), 4.0, np.float32))


def test_tma_store_waits_for_its_writes_unless_last():
    """Compiled for sm_90: a TMA store that ends the kernel waits only until its block
    was read (`wait_group.read`); one followed by other accesses until its writes land."""
    x = np.zeros((64, 64), np.float32)
    last = scale_kernel.warmup(TensorDescriptor.from_tensor(x, [32, 16]), TensorDescriptor.from_tensor(x, [32, 16]),
                               BM=32, BN=16, grid=(1,), target="sm_90").asm["ptx"]
    assert "cp.async.bulk.wait_group.read 0;" in last
    middle = store_then_load_kernel.warmup(TensorDescriptor.from_tensor(x, [16, 32]), x, BM=16, BN=32, grid=(1,),
                                           target="sm_90").asm["ptx"]
    assert "cp.async.bulk.wait_group 0;" in middle and "wait_group.read" not in middle


@tilec.jit
def attention_kernel(q_desc, k_desc, v_desc, o_desc, n_ctx, scale, D: tl.constexpr, BM: tl.constexpr,
                     BN: tl.constexpr):
    """Tutorial 06's shape with host descriptors: q read once, k (as loaded, [BN, D]) used
    transposed, v as loaded; on sm_90 the loop's loads are TMA copies into wgmma rings."""
    start_m = tl.program_id(0)
    q = q_desc.load([start_m * BM, 0])
    m_i = tl.full((BM,), float("-inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    for start_n in tl.range(0, n_ctx, BN, warp_specialize=True):
        k = k_desc.load([start_n, 0])
        qk = tl.dot(q, k.T) * scale
        keep = (start_n + tl.arange(0, BN))[None, :] < n_ctx
        qk = tl.where(keep, qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp(qk - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = v_desc.load([start_n, 0])
        acc = tl.dot(p.to(tl.float16), v, acc * alpha[:, None])
        m_i = m_new
    o_desc.store([start_m * BM, 0], (acc / l_i[:, None]).to(tl.float16))


@pytest.mark.parametrize("n_ctx, d, bm, bn, warps", [(256, 64, 128, 64, 8), (200, 128, 64, 32, 4)])
def test_attention_with_descriptors(backend, rng, n_ctx, d, bm, bn, warps):
    q, k, v = (rng.standard_normal((n_ctx, d)).astype(np.float16) for _ in range(3))
    o = device_array(np.full((n_ctx, d), np.nan, np.float16), backend)
    descs = [TensorDescriptor.from_tensor(device_array(x, backend), [bm if x is q else bn, d]) for x in (q, k, v)]
    scale = 1.0 / math.sqrt(d)
    attention_kernel[(-(-n_ctx // bm),)](*descs, TensorDescriptor.from_tensor(o, [bm, d]), n_ctx, scale, D=d, BM=bm,
                                         BN=bn, num_warps=warps)
    s = q.astype(np.float64) @ k.astype(np.float64).T * scale
    p = np.exp(s - s.max(1, keepdims=True))
    want = (p / p.sum(1, keepdims=True)) @ v.astype(np.float64)
    np.testing.assert_allclose(to_numpy(o).astype(np.float64), want, rtol=0, atol=1e-2)


def test_attention_with_descriptors_streams_k_and_v_by_tma():
    """Compiled for sm_90: k and v go by TMA into rings the two wgmma dots read (k through
    a transposed view), p stays in registers, and the output is one TMA store."""
    x = np.zeros((256, 64), np.float16)
    kernel = attention_kernel.warmup(*(TensorDescriptor.from_tensor(x, [b, 64]) for b in (128, 64, 64, 128)), 256,
                                     0.125, D=64, BM=128, BN=64, grid=(1,), target="sm_90", num_warps=8)
    ttgir, ptx = kernel.asm["ttgir"], kernel.asm["ptx"]
    loop = ttgir.split("scf.for")[1].split("scf.yield")[0]
    assert loop.count('"tilegpu.tma_copy_global_to_local"') == 2 and loop.count('"tilegpu.wait_barrier"') == 2
    assert "tile.trans" not in loop and "async_copy_global_to_local" not in ttgir
    assert re.search(r"wgmma\.mma_async\.sync\.aligned\.m64n64k16\.f32\.f16\.f16 \{[^}]*\}, \{", ptx)  # p from registers
    assert "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group" in ptx and kernel.n_spills == 0


@tilec.jit
def tf32_copy_kernel(desc, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    x = desc.load([tl.program_id(0) * BM, 0])
    tl.store(out_ptr + (tl.program_id(0) * BM + tl.arange(0, BM))[:, None] * BN + tl.arange(0, BN)[None, :], x)


def test_round_f32_to_tf32(backend, rng):
    """Triton 3.9's `round_f32_to_tf32=True`: loads round fp32 to 10 mantissa bits, to
    nearest even (ties included), infinities and NaN untouched; without it, exact."""
    x = rng.standard_normal((32, 32)).astype(np.float32)
    x[0, :6] = [np.inf, -np.inf, np.nan, 3.4028235e38, 1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11]  # two ties
    bits = x.view(np.uint32)
    special = (bits & 0x7F800000) == 0x7F800000
    want = np.where(special, bits, (bits + ((bits >> 13) & 1) + 0xFFF) & 0xFFFFE000).astype(np.uint32)
    assert want[0, 4] == np.float32(1.0).view(np.uint32) and want[0, 5] == np.float32(1 + 2.0 ** -9).view(np.uint32)
    base = device_array(x, backend)
    for rounds, expected in ((True, want), (False, bits)):
        out = device_array(np.full((32, 32), -1.0, np.float32), backend)
        tf32_copy_kernel[(2,)](TensorDescriptor.from_tensor(base, [16, 32], round_f32_to_tf32=rounds), out,
                               BM=16, BN=32)
        np.testing.assert_array_equal(to_numpy(out).view(np.uint32), expected)
    with pytest.raises(ValueError, match="round_f32_to_tf32 applies to float32"):
        TensorDescriptor.from_tensor(device_array(np.zeros((16, 32), np.float16), backend), [16, 32],
                                     round_f32_to_tf32=True)

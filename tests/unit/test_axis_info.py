"""The axis-info analysis on the ttir of small kernels: what it may promise about the
pointers of a store (contiguity, divisibility in bytes, constancy per dimension).

Every promise is checked against the addresses themselves, computed in NumPy for a few
values of the unknown arguments: a divisibility or contiguity the analysis claims but the
addresses do not have is the kind of error that makes a vector access misaligned."""
import numpy as np
import pytest
from mlir import ir

import tilec
import tilec.language as tl
from tilec.dialects._mlir import make_context
from tilec.passes.axis_info import AxisInfoAnalysis


def store_pointer_info(kernel, signature, constexprs, operand=0):
    ttir = tilec.compile(kernel, signature=signature, constexprs=constexprs).asm["ttir"]
    with make_context():
        module = ir.Module.parse(ttir)
        func = module.body.operations[0]
        analysis = AxisInfoAnalysis(func)
        stores = []

        def visit(op):
            if op.name == "tile.store":
                stores.append(op)
            return ir.WalkResult.ADVANCE
        func.walk(visit)
        return analysis.get(stores[0].operands[operand])


def check_promises(info, addresses):
    """Every fact in `info` holds of the byte addresses `addresses` (an array of the
    pointer tensor's shape)."""
    for d in range(addresses.ndim):
        lines = np.moveaxis(addresses, d, -1).reshape(-1, addresses.shape[d])
        contig, div, const = info.contiguity[d], info.divisibility[d], info.constancy[d]
        for start in range(0, addresses.shape[d], contig):
            run = lines[:, start:start + contig]
            assert (run[:, 0] % div == 0).all(), f"dim {d}: a run start is not divisible by {div}"
        for start in range(0, addresses.shape[d], const):
            block = lines[:, start:start + const]
            assert (block == block[:, :1]).all(), f"dim {d}: not constant over {const}"


@tilec.jit
def scaled_rows(y_ptr, stride, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    offsets = (rows * stride)[:, None] + tl.arange(0, BLOCK)[None, :]
    tl.store(y_ptr + offsets, 1.0)


@tilec.jit
def rows_then_scaled(y_ptr, stride, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    offsets = rows[:, None] * stride + tl.arange(0, BLOCK)[None, :]
    tl.store(y_ptr + offsets, 1.0)


def addresses(base, rows_of, stride, block=32, elem=2):
    rows = np.arange(block, dtype=np.int64) + 0  # program 0
    row_offsets = rows_of(rows, stride)
    return base + elem * (row_offsets[:, None] + np.arange(block)[None, :])


@pytest.mark.parametrize("kernel", [scaled_rows, rows_then_scaled])
def test_an_unknown_row_stride_promises_one_element(kernel):
    info = store_pointer_info(kernel, {"y_ptr": "*fp16:16", "stride": "i32"}, {"BLOCK": 32})
    assert info.contiguity == (1, 32)
    assert info.divisibility[1] == 2  # only the element size: row r starts at r * stride
    for stride in (1, 3, 17, 33):
        check_promises(info, addresses(4096, lambda r, s: r * s, stride))


@pytest.mark.parametrize("kernel", [scaled_rows, rows_then_scaled])
def test_a_stride_divisible_by_16_aligns_every_row(kernel):
    info = store_pointer_info(kernel, {"y_ptr": "*fp16:16", "stride": "i32:16"}, {"BLOCK": 32})
    assert info.divisibility[1] == 16  # the pointer's 16 bytes bound it
    for stride in (16, 48, 1024):
        check_promises(info, addresses(4096, lambda r, s: r * s, stride))


@tilec.jit
def sum_of_ranges(y_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK) + tl.arange(0, BLOCK)  # 0, 2, 4, ...: no run, every element even
    tl.store(y_ptr + offsets, 1.0)


def test_a_sum_of_two_ranges_is_not_a_range():
    info = store_pointer_info(sum_of_ranges, {"y_ptr": "*fp32:16"}, {"BLOCK": 64})
    assert info.contiguity == (1,)
    assert info.divisibility[0] <= 8
    check_promises(info, 4096 + 4 * (2 * np.arange(64)))


@tilec.jit
def range_times_scalar(y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK) * n
    tl.store(y_ptr + offsets, 1.0)


def test_a_range_times_an_unknown_scalar_promises_the_element_size():
    info = store_pointer_info(range_times_scalar, {"y_ptr": "*fp32:16", "n": "i32"}, {"BLOCK": 64})
    assert info.divisibility == (4,)
    for n in (1, 5):
        check_promises(info, 4096 + 4 * n * np.arange(64))


@tilec.jit
def block_copy(y_ptr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offsets, 1.0)


def test_a_block_of_a_range_is_contiguous_and_aligned():
    info = store_pointer_info(block_copy, {"y_ptr": "*fp32:16"}, {"BLOCK": 128})
    assert info.contiguity == (128,) and info.divisibility == (16,)
    check_promises(info, 4096 + 4 * (128 * 3 + np.arange(128)))


@tilec.jit
def masked_by(y_ptr, BLOCK: tl.constexpr, PREDICATE: tl.constexpr, BOUND: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if PREDICATE == "ne":
        mask = offsets != BOUND
    elif PREDICATE == "eq":
        mask = offsets == BOUND
    elif PREDICATE == "lt":
        mask = offsets < BOUND
    elif PREDICATE == "le":
        mask = offsets <= BOUND
    elif PREDICATE == "gt":
        mask = offsets > BOUND
    elif PREDICATE == "ge":
        mask = offsets >= BOUND
    elif PREDICATE == "bound_gt":
        mask = BOUND > offsets
    else:
        mask = BOUND <= offsets
    tl.store(y_ptr + offsets, 1.0, mask=mask)


@pytest.mark.parametrize("predicate,constant_runs", [("ne", False), ("eq", False), ("lt", True), ("le", False),
                                                     ("gt", False), ("ge", True), ("bound_gt", True),
                                                     ("bound_le", True)])
def test_a_mask_is_constant_over_a_run_only_where_it_cannot_flip_inside_one(predicate, constant_runs):
    """`offsets < 64` is constant over aligned runs of 4 (a vector store may take one
    predicate); `offsets != 0` or `offsets <= 64` flips after a run's first element."""
    info = store_pointer_info(masked_by, {"y_ptr": "*fp32:16"},
                              {"BLOCK": 128, "PREDICATE": predicate, "BOUND": 64}, operand=2)
    assert (info.constancy[0] > 1) == constant_runs
    offsets, bound = np.arange(128), 64
    values = {"ne": offsets != bound, "eq": offsets == bound, "lt": offsets < bound,
              "le": offsets <= bound, "gt": offsets > bound, "ge": offsets >= bound,
              "bound_gt": bound > offsets, "bound_le": bound <= offsets}[predicate]
    check_promises(info, values.astype(np.int64))

"""A pointer's truth in a kernel is whether it is not null, as Triton compiles it
(`ptr_to_int(p) != 0`): vLLM's scaled-mm kernel writes `if bias_ptr:` for an optional
bias that is either a tensor or None. Checked on both backends, in an `if`, in `and`,
`or`, `not` and conditional expressions, and in the compiled IR (the null test)."""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy

POISON = -999.0


@tilec.jit
def add_optional_bias(x_ptr, bias_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if bias_ptr:
        x += tl.load(bias_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x, mask=mask)


@tilec.jit
def pointer_truth_table(p, q, out_ptr):
    tl.store(out_ptr + 0, 1 if p else 0)
    tl.store(out_ptr + 1, 1 if (p and q) else 0)
    tl.store(out_ptr + 2, 1 if (p or q) else 0)
    tl.store(out_ptr + 3, 1 if not q else 0)
    k = 0
    while p and k < 3:
        k += 1
    tl.store(out_ptr + 4, k)


def test_if_on_an_optional_bias_pointer(backend, rng):
    n, block = 50, 64
    x = rng.standard_normal(n).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    out = np.full(block, POISON, dtype=np.float32)
    x_dev, bias_dev, out_dev = (device_array(a, backend) for a in (x, bias, out))
    add_optional_bias[(1,)](x_dev, bias_dev, out_dev, n, BLOCK=block)
    got = to_numpy(out_dev)
    np.testing.assert_array_equal(got[:n], x + bias)
    assert (got[n:] == np.float32(POISON)).all()


def test_and_or_not_of_pointers(backend):
    p = device_array(np.ones(4, dtype=np.float32), backend)
    out = device_array(np.full(5, -1, dtype=np.int32), backend)
    pointer_truth_table[(1,)](p, p, out)
    assert to_numpy(out).tolist() == [1, 1, 1, 0, 3]


def test_a_pointer_condition_compiles_to_a_null_test():
    kernel = tilec.compile(add_optional_bias, signature={"x_ptr": "*fp32:16", "bias_ptr": "*fp32:16",
                                                         "out_ptr": "*fp32:16", "n": "i32"},
                           constexprs={"BLOCK": 64}, target="sm_90")
    ttir = kernel.asm["ttir"]
    assert '"tile.ptr_to_int"' in ttir and "arith.cmpi ne" in ttir and "scf.if" in ttir

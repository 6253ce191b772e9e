"""Tables of addresses: a kernel loads an int64 address (`x.data_ptr()` taken on the host)
and converts it to a pointer, as Triton's grouped GEMM tutorial does.

On the GPU the table holds device addresses; in the interpreter, host addresses, which it
maps to the live array holding them and then bounds-checks like an argument. Inputs are
random, outputs poisoned (and longer than what the kernel writes, so a stray write shows).
"""
from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.interpreter import OutOfBoundsAccess
from tilec_testing import device_array, to_numpy

POISON = -7777.0


def address(array) -> int:
    """The address of `array`'s first element, as a kernel on its backend sees it."""
    return int(array.data_ptr()) if hasattr(array, "data_ptr") else int(array.ctypes.data)


def pointer_table(addresses: list[int], backend: str):
    """An int64 array of `addresses` where kernels under `backend` can read it."""
    return device_array(np.array(addresses, dtype=np.int64), backend)


def _line_of(text: str) -> int:
    """The line of this file holding `text` (once; pass it split so that the call's own
    line does not hold it)."""
    with open(__file__) as source:
        lines = [number for number, line in enumerate(source, 1) if text in line]
    assert len(lines) == 1, text
    return lines[0]


# ----------------------------------------------------------------------------- grouped GEMM


@tilec.jit
def grouped_matmul(a_table, b_table, c_table, sizes_ptr,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """C[g] = A[g] @ B[g] for every group g (program axis 0), one tile per program of axes
    1 and 2; the matrices are row-major, reached through the tables of addresses."""
    g = tl.program_id(0)
    m = tl.load(sizes_ptr + 3 * g)
    n = tl.load(sizes_ptr + 3 * g + 1)
    k = tl.load(sizes_ptr + 3 * g + 2)
    rows = tl.program_id(1) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(2) * BLOCK_N + tl.arange(0, BLOCK_N)
    if tl.program_id(1) * BLOCK_M < m and tl.program_id(2) * BLOCK_N < n:
        a_ptr = tl.load(a_table + g).to(tl.pointer_type(tl.float16))
        b_ptr = tl.load(b_table + g).to(tl.pointer_type(tl.float16))
        c_ptr = tl.load(c_table + g).to(tl.pointer_type(tl.float32))
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for kk in range(0, tl.cdiv(k, BLOCK_K)):
            ks = kk * BLOCK_K + tl.arange(0, BLOCK_K)
            a = tl.load(a_ptr + rows[:, None] * k + ks[None, :], mask=(rows[:, None] < m) & (ks[None, :] < k),
                        other=0.0)
            b = tl.load(b_ptr + ks[:, None] * n + cols[None, :], mask=(ks[:, None] < k) & (cols[None, :] < n),
                        other=0.0)
            acc += tl.dot(a, b)
        tl.store(c_ptr + rows[:, None] * n + cols[None, :], acc, mask=(rows[:, None] < m) & (cols[None, :] < n))


def test_grouped_matmul_through_pointer_tables(backend, rng):
    shapes = [(40, 24, 48), (16, 64, 20), (33, 17, 16)]  # (m, n, k) per group
    extra = 9  # poisoned elements after each C, which no store may reach
    a_host = [rng.standard_normal((m, k)).astype(np.float16) for m, n, k in shapes]
    b_host = [rng.standard_normal((k, n)).astype(np.float16) for m, n, k in shapes]
    a_dev = [device_array(a, backend) for a in a_host]
    b_dev = [device_array(b, backend) for b in b_host]
    c_dev = [device_array(np.full(m * n + extra, POISON, np.float32), backend) for m, n, k in shapes]
    sizes = device_array(np.array(shapes, dtype=np.int32).reshape(-1), backend)
    grid = (len(shapes), tilec.cdiv(max(m for m, _, _ in shapes), 16), tilec.cdiv(max(n for _, n, _ in shapes), 16))
    grouped_matmul[grid](pointer_table([address(a) for a in a_dev], backend),
                         pointer_table([address(b) for b in b_dev], backend),
                         pointer_table([address(c) for c in c_dev], backend), sizes,
                         BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)
    for (m, n, k), a, b, c in zip(shapes, a_host, b_host, c_dev):
        got = to_numpy(c)
        want = a.astype(np.float64) @ b.astype(np.float64)
        np.testing.assert_allclose(got[:m * n].reshape(m, n), want, rtol=1e-5, atol=1e-4)
        assert (got[m * n:] == POISON).all(), "a store through a table pointer ran past its matrix"


# ----------------------------------------------------------------------------- reads and writes


@tilec.jit
def scale_in_place(table, lengths_ptr, BLOCK: tl.constexpr):
    """x[g][i] = x[g][i] * (g + 2) + 1 for i < lengths[g]: read and written through the table."""
    g = tl.program_id(0)
    offsets = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < tl.load(lengths_ptr + g)
    x_ptr = tl.load(table + g).to(tl.pointer_type(tl.float32))
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(x_ptr + offsets, x * (g + 2).to(tl.float32) + 1.0, mask=mask)


def test_read_and_write_through_a_table(backend, rng):
    """Arrays of different lengths, one entry pointing into the middle of an array (the
    memory before it stays untouched), and each array longer than its length."""
    lengths = [5, 37, 64, 20]
    host = [rng.standard_normal(n + 6).astype(np.float32) for n in lengths]
    dev = [device_array(x, backend) for x in host]
    start = 11  # the last entry starts 11 elements into its array
    entries = [address(x) for x in dev[:-1]] + [address(dev[-1]) + start * 4]
    lengths[-1] -= start
    scale_in_place[(len(dev), 2)](pointer_table(entries, backend),
                                  device_array(np.array(lengths, np.int32), backend), BLOCK=32)
    for g, (x, got) in enumerate(zip(host, dev)):
        got = to_numpy(got)
        first = start if g == len(dev) - 1 else 0
        want = x.copy()
        want[first:first + lengths[g]] = x[first:first + lengths[g]] * (g + 2) + 1
        np.testing.assert_allclose(got, want, rtol=1e-6)


@tilec.jit
def table_of_arguments(table, src_ptr, dst_ptr, same_ptr, n, BLOCK: tl.constexpr):
    """dst = src (through the table) + src (through the argument); same = whether the
    table's pointers equal the arguments' (1 for src, 2 for dst)."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    src_from_table = tl.load(table).to(tl.pointer_type(tl.float32))
    dst_from_table = tl.load(table + 1).to(tl.pointer_type(tl.float32))
    x = tl.load(src_from_table + offsets, mask=mask) + tl.load(src_ptr + offsets, mask=mask)
    tl.store(dst_from_table + offsets, x, mask=mask)
    if tl.program_id(0) == 0:
        same = (src_from_table == src_ptr).to(tl.int32) + 2 * (dst_from_table == dst_ptr).to(tl.int32)
        tl.store(same_ptr, same)


def test_table_of_argument_addresses(backend, rng):
    """A table built from the arguments' own addresses reaches the arguments' memory, and
    its pointers are the very pointers the arguments are."""
    n = 50
    src_host = rng.standard_normal(n).astype(np.float32)
    src = device_array(src_host, backend)
    dst = device_array(np.full(n + 5, POISON, np.float32), backend)
    same = device_array(np.full(1, -1, np.int32), backend)
    table_of_arguments[(2,)](pointer_table([address(src), address(dst)], backend), src, dst, same, n, BLOCK=32)
    got = to_numpy(dst)
    np.testing.assert_allclose(got[:n], src_host.astype(np.float64) * 2, rtol=1e-6)
    assert (got[n:] == POISON).all()
    assert to_numpy(same)[0] == 3


# ----------------------------------------------------------------------------- the interpreter's checks


@tilec.jit
def copy_rows(table, out_ptr, BLOCK: tl.constexpr):
    """out[g] = the BLOCK elements at table[g], unmasked."""
    g = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    row_ptr = tl.load(table + g).to(tl.pointer_type(tl.float32))
    values = tl.load(row_ptr + offsets)  # the unmasked load
    tl.store(out_ptr + g * BLOCK + offsets, values)


@tilec.jit
def fill_rows(table, BLOCK: tl.constexpr):
    """The BLOCK elements at table[g] = g, unmasked."""
    g = tl.program_id(0)
    row_ptr = tl.load(table + g).to(tl.pointer_type(tl.float32))
    tl.store(row_ptr + tl.arange(0, BLOCK), g.to(tl.float32))  # the unmasked store


def test_block_running_past_a_table_arrays_end(rng):
    """The entry points 3 elements before the end of a 10-element array: the 8-element
    block runs past it, which is reported against that array, not whatever lies next."""
    fine = rng.standard_normal(8).astype(np.float32)
    short = rng.standard_normal(10).astype(np.float32)
    out = np.full(16, POISON, np.float32)
    table = np.array([fine.ctypes.data, short.ctypes.data + 7 * 4], dtype=np.int64)
    with pytest.raises(OutOfBoundsAccess) as info:
        copy_rows[(2,)](table, out, BLOCK=8)
    err = info.value
    text = str(err)
    assert err.kernel == "copy_rows" and err.program_id == (1, 0, 0) and err.access == "load"
    assert (err.filename, err.lineno) == (__file__, _line_of("# the unmasked " + "load"))
    assert "values = tl.load(row_ptr + offsets)" in text
    assert f"the numpy float32 array of shape (10,) at address {short.ctypes.data:#x}" in text
    assert "5 of 8 active lanes are invalid; the first is lane 3" in text
    assert "element offset 10" in text and "[0, 10): beyond its end" in text
    assert err.argument is None and err.element_offset == 10
    np.testing.assert_array_equal(out[:8], fine)  # program 0 ran
    assert (out[8:] == POISON).all()


def test_store_past_a_table_arrays_end(rng):
    short = rng.standard_normal(6).astype(np.float32)
    before = short.copy()
    table = np.array([short.ctypes.data], dtype=np.int64)
    with pytest.raises(OutOfBoundsAccess, match=r"writes float32 element offset 6 from the numpy float32 array "
                                                r"of shape \(6,\)") as info:
        fill_rows[(1,)](table, BLOCK=8)
    assert info.value.lineno == _line_of("# the unmasked " + "store")
    np.testing.assert_array_equal(short, before)  # nothing written: the store is refused whole


def test_address_inside_no_live_array(rng):
    out = np.full(8, POISON, np.float32)
    with pytest.raises(OutOfBoundsAccess, match="at address 0x40, which is outside the memory of every array "
                                                r"argument \(and of every live NumPy array and torch tensor\)"):
        copy_rows[(1,)](np.array([0x40], dtype=np.int64), out, BLOCK=8)
    assert (out == POISON).all()


def test_store_into_a_read_only_array_through_a_table(rng):
    frozen = rng.standard_normal(8).astype(np.float32)
    frozen.flags.writeable = False
    with pytest.raises(OutOfBoundsAccess, match=r"the numpy float32 array of shape \(8,\) at address 0x[0-9a-f]+ "
                                                r"\(reached through an integer address .*\) is read-only"):
        fill_rows[(1,)](np.array([frozen.ctypes.data], dtype=np.int64), BLOCK=8)


def test_arrays_found_inside_objects_and_views(rng):
    """The table's arrays are held only inside an object's dict and as a view's parent;
    the scan finds them without the cache of earlier finds."""
    from tilec.interpreter import memory

    class Holder:
        pass

    holder = Holder()
    holder.rows = {"first": rng.standard_normal(8).astype(np.float32)}
    parent = rng.standard_normal(24).astype(np.float32)
    view = parent[8:16]
    table = np.array([holder.rows["first"].ctypes.data, view.ctypes.data], dtype=np.int64)
    del view
    memory._recently_found.clear()
    out = np.full(16, POISON, np.float32)
    copy_rows[(2,)](table, out, BLOCK=8)
    np.testing.assert_array_equal(out, np.concatenate([holder.rows["first"], parent[8:16]]))


def test_scan_passes_by_the_interpreters_own_aliases(rng, monkeypatch):
    """A launch still alive (an exception's traceback holds it) aliases its arguments'
    memory with writable uint8 arrays; the scan must find the user's array instead."""
    from tilec.interpreter import memory

    frozen = rng.standard_normal(8).astype(np.float32)
    frozen.flags.writeable = False
    earlier = memory.Memory({"x": frozen})
    alias = earlier._regions[0].data
    typed = earlier._typed(0, np.dtype(np.float32))
    monkeypatch.setattr(memory, "_recently_found", [])
    monkeypatch.setattr(memory, "_live_array_objects", lambda: [alias, typed, frozen])
    assert memory.LiveArrays().find(frozen.ctypes.data + 4) is frozen
    memory._recently_found.clear()  # which remembers `frozen` now
    monkeypatch.setattr(memory, "_live_array_objects", lambda: [alias, typed])
    assert memory.LiveArrays().find(frozen.ctypes.data + 4) is None


def test_torch_cpu_tensors_in_a_table(rng):
    torch = pytest.importorskip("torch")
    host = [rng.standard_normal(n + 3).astype(np.float32) for n in (7, 30)]
    tensors = [torch.from_numpy(x.copy()) for x in host]
    table = torch.tensor([t.data_ptr() for t in tensors], dtype=torch.int64)
    scale_in_place[(2, 1)](table, torch.tensor([7, 30], dtype=torch.int32), BLOCK=32)
    for g, (x, t) in enumerate(zip(host, tensors)):
        n = (7, 30)[g]
        want = x.copy()
        want[:n] = x[:n] * (g + 2) + 1
        np.testing.assert_allclose(t.numpy(), want, rtol=1e-6)


@pytest.mark.gpu
def test_cuda_tensors_found_through_device_addresses(rng):
    """In the interpreter, a table of device addresses of CUDA tensors (arguments or not):
    each storage is copied to the host for the launch and back afterwards."""
    import torch
    n = 40
    src_host = rng.standard_normal(n).astype(np.float32)
    src = torch.from_numpy(src_host).cuda()
    dst = torch.full((n + 5,), POISON, dtype=torch.float32, device="cuda")
    same = torch.full((1,), -1, dtype=torch.int32, device="cuda")
    table = torch.tensor([src.data_ptr(), dst.data_ptr()], dtype=torch.int64, device="cuda")
    table_of_arguments[(2,)](table, src, dst, same, n, BLOCK=32)
    got = to_numpy(dst)
    np.testing.assert_allclose(got[:n], src_host.astype(np.float64) * 2, rtol=1e-6)
    assert (got[n:] == POISON).all() and same.item() == 3
    others = [torch.from_numpy(rng.standard_normal(m + 2).astype(np.float32)).cuda() for m in (9, 33)]
    before = [to_numpy(t).copy() for t in others]
    scale_in_place[(2, 2)](torch.tensor([t.data_ptr() for t in others], dtype=torch.int64, device="cuda"),
                           torch.tensor([9, 33], dtype=torch.int32, device="cuda"), BLOCK=32)
    for g, (x, t) in enumerate(zip(before, others)):
        m = (9, 33)[g]
        want = x.copy()
        want[:m] = x[:m] * (g + 2) + 1
        np.testing.assert_allclose(to_numpy(t), want, rtol=1e-6)

"""tl.atomic_load, tl.atomic_store and tl.atomic_poll: values and masks of every element
type, programs handing data to each other through a flag (release store, acquire poll or
load), poll timeouts, the PTX they compile to, and the errors for what they refuse.

The hand-over kernels let program 0 produce and program 1 consume: on the GPU both run
at once and the consumer really waits; the interpreter runs program 0 first, so the
consumer finds the flag already set."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec_testing import device_array, to_numpy

TYPES = {"int8": (tl.int8, np.int8), "uint8": (tl.uint8, np.uint8), "int16": (tl.int16, np.int16),
         "int32": (tl.int32, np.int32), "uint32": (tl.uint32, np.uint32), "int64": (tl.int64, np.int64),
         "float16": (tl.float16, np.float16), "bfloat16": (tl.bfloat16, ml_dtypes.bfloat16),
         "float32": (tl.float32, np.float32), "float64": (tl.float64, np.float64), "int1": (tl.int1, np.bool_),
         "float8e4nv": (tl.float8e4nv, ml_dtypes.float8_e4m3fn)}
SECOND = 1_000_000_000  # nanoseconds: the GPU tests' bound on a wait that should not happen


def _random(rng, shape, name):
    dt = TYPES[name][1]
    if name == "int1":
        return rng.integers(0, 2, shape).astype(bool)
    if np.dtype(dt).kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, shape, endpoint=True).astype(dt)
    return (rng.standard_normal(shape) * (10 if name.startswith("float8") else 100)).astype(dt)


# ----------------------------------------------------------------------------- values and masks


@tilec.jit
def load_store_kernel(src_ptr, dst_ptr, copy_ptr, n, BLOCK: tl.constexpr, SEM_LOAD: tl.constexpr,
                      SEM_STORE: tl.constexpr, SCOPE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.atomic_load(src_ptr + offs, mask=mask, sem=SEM_LOAD, scope=SCOPE)
    tl.store(dst_ptr + offs, x)                                            # masked-off elements read 0
    tl.atomic_store(copy_ptr + offs, x, mask=mask, sem=SEM_STORE, scope=SCOPE)


@pytest.mark.parametrize("name", list(TYPES))
def test_load_and_store_every_type(backend, name):
    rng = np.random.default_rng(sum(map(ord, name)))
    n, block = 200, 64
    src = _random(rng, 256, name)
    poison = _random(rng, 256, name)
    dst, copy = device_array(poison, backend), device_array(poison, backend)
    load_store_kernel[(4,)](device_array(src, backend), dst, copy, n, BLOCK=block, SEM_LOAD="acquire",
                            SEM_STORE="release", SCOPE="gpu")
    want = np.where(np.arange(256) < n, src, np.zeros_like(src))
    np.testing.assert_array_equal(to_numpy(dst), want)
    np.testing.assert_array_equal(to_numpy(copy), np.where(np.arange(256) < n, src, poison))


@pytest.mark.parametrize("sem_load, sem_store", [("relaxed", "relaxed"), ("acquire", "release")])
@pytest.mark.parametrize("scope", ["cta", "gpu", "sys"])
def test_every_order_and_scope(backend, sem_load, sem_store, scope):
    rng = np.random.default_rng(7)
    src = rng.integers(-1000, 1000, 128).astype(np.int32)
    dst, copy = device_array(np.full(128, -7, np.int32), backend), device_array(np.full(128, -7, np.int32), backend)
    load_store_kernel[(1,)](device_array(src, backend), dst, copy, 100, BLOCK=128, SEM_LOAD=sem_load,
                            SEM_STORE=sem_store, SCOPE=scope)
    np.testing.assert_array_equal(to_numpy(dst), np.where(np.arange(128) < 100, src, 0))
    np.testing.assert_array_equal(to_numpy(copy), np.where(np.arange(128) < 100, src, -7))


@tilec.jit
def scalar_kernel(x_ptr, out_ptr):
    value = tl.atomic_load(x_ptr + 3)                      # a scalar: every thread gets the same value
    tl.atomic_store(out_ptr, value * 2 + 1)
    (out_ptr + 1).atomic_store(x_ptr.atomic_load(sem="relaxed"), sem="relaxed")   # the method spellings
    tl.atomic_store(out_ptr + 2 + tl.arange(0, 4), value)  # a scalar value broadcast to a block


def test_scalar_pointers_and_methods(backend, rng):
    x = rng.integers(-50, 50, 8).astype(np.int64)
    out = device_array(np.full(6, -9, np.int64), backend)
    scalar_kernel[(1,)](device_array(x, backend), out)
    np.testing.assert_array_equal(to_numpy(out), [x[3] * 2 + 1, x[0], x[3], x[3], x[3], x[3]])


# ----------------------------------------------------------------------------- handing data over


@tilec.jit
def handover_kernel(data_ptr, flag_ptr, out_ptr, status_ptr, BLOCK: tl.constexpr, WAIT: tl.constexpr,
                    SCOPE: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    if tl.program_id(0) == 0:                       # the producer: the block, then the flag
        tl.store(data_ptr + offs, offs * 7 + 3)
        tl.atomic_store(flag_ptr, 1, scope=SCOPE)  # release: every thread's stores above come first
    else:                                           # the consumer: the flag, then the block
        if WAIT == "poll":
            ok = tl.atomic_poll(flag_ptr, 1, scope=SCOPE, timeout_ns=1_000_000_000)
            tl.store(status_ptr, ok.to(tl.int32))
        else:
            while tl.atomic_load(flag_ptr, scope=SCOPE) != 1:
                pass
            tl.store(status_ptr, 1)
        tl.store(out_ptr + offs, tl.load(data_ptr + offs))


@pytest.mark.parametrize("wait", ["poll", "spin"])
@pytest.mark.parametrize("scope", ["gpu", "sys"])
def test_a_program_hands_a_block_to_another(backend, wait, scope):
    block = 512
    data = device_array(np.full(block, -1, np.int32), backend)
    flag = device_array(np.zeros(1, np.int32), backend)
    out = device_array(np.full(block, -5, np.int32), backend)
    status = device_array(np.full(1, -5, np.int32), backend)
    handover_kernel[(2,)](data, flag, out, status, BLOCK=block, WAIT=wait, SCOPE=scope)
    assert to_numpy(status)[0] == 1
    np.testing.assert_array_equal(to_numpy(out), np.arange(block) * 7 + 3)


@tilec.jit
def block_poll_kernel(data_ptr, flags_ptr, out_ptr, status_ptr, ROWS: tl.constexpr, COLS: tl.constexpr):
    rows = tl.arange(0, ROWS)
    cols = tl.arange(0, COLS)
    pid = tl.program_id(0)
    if pid < ROWS:                                  # producers: one row each, then its flag
        tl.store(data_ptr + pid * COLS + cols, pid * 100 + cols)
        tl.atomic_store(flags_ptr + pid, pid + 10)
    else:                                           # the consumer waits for every row's flag
        ok = tl.atomic_poll(flags_ptr + rows, rows + 10, timeout_ns=1_000_000_000)
        tl.store(status_ptr + rows, ok.to(tl.int8))
        tl.store(out_ptr + rows[:, None] * COLS + cols[None, :], tl.load(data_ptr + rows[:, None] * COLS + cols[None, :]))


def test_polling_a_block_of_flags(backend):
    rows, cols = 8, 64
    data = device_array(np.full(rows * cols, -1, np.int32), backend)
    flags = device_array(np.zeros(rows, np.int64), backend)
    out = device_array(np.full(rows * cols, -5, np.int32), backend)
    status = device_array(np.full(rows, -5, np.int8), backend)
    block_poll_kernel[(rows + 1,)](data, flags, out, status, ROWS=rows, COLS=cols)
    np.testing.assert_array_equal(to_numpy(status), np.ones(rows, np.int8))
    want = np.arange(rows)[:, None] * 100 + np.arange(cols)[None, :]
    np.testing.assert_array_equal(to_numpy(out), want.reshape(-1))


# ----------------------------------------------------------------------------- timeouts


@tilec.jit
def timeout_kernel(flags_ptr, expected_ptr, matched_ptr, elapsed_ptr, N: tl.constexpr, TIMEOUT: tl.constexpr,
                   SEM: tl.constexpr):
    offs = tl.arange(0, N)
    start = tl.extra.cuda.globaltimer()
    matched = tl.atomic_poll(flags_ptr + offs, tl.load(expected_ptr + offs), sem=SEM, timeout_ns=TIMEOUT)
    tl.store(elapsed_ptr, tl.extra.cuda.globaltimer() - start)
    tl.store(matched_ptr + offs, matched)
    whole = tl.atomic_poll(flags_ptr + 1, 0, timeout_ns=TIMEOUT)    # scalar; the flag never holds 0
    tl.store(matched_ptr + N, whole)


@pytest.mark.parametrize("sem", ["acquire", "relaxed"])
@pytest.mark.parametrize("dtype", [np.int16, np.int32, np.uint64])
def test_polls_that_time_out_return_false(backend, rng, sem, dtype):
    n, timeout = 32, 2_000_000  # 2 ms
    flags = rng.integers(1, 1000, n).astype(dtype)
    expected = flags.copy()
    miss = rng.permutation(n)[:9]
    expected[miss] += 1
    matched = device_array(np.full(n + 1, True), backend)
    elapsed = device_array(np.zeros(1, np.int64), backend)
    timeout_kernel[(1,)](device_array(flags, backend), device_array(expected, backend), matched, elapsed, N=n,
                         TIMEOUT=timeout, SEM=sem)
    want = np.ones(n + 1, bool)
    want[miss] = False
    want[n] = False
    np.testing.assert_array_equal(to_numpy(matched), want)
    assert to_numpy(elapsed)[0] >= 0.9 * timeout  # the mismatches waited for the timeout (warps start apart)


@tilec.jit
def runtime_timeout_kernel(flag_ptr, out_ptr, timeout):
    tl.store(out_ptr, tl.atomic_poll(flag_ptr, 5, timeout_ns=timeout))
    tl.store(out_ptr + 1, tl.atomic_poll(flag_ptr, 3, timeout_ns=0))   # one read, no wait


def test_a_timeout_known_at_run_time(backend):
    out = device_array(np.array([True, True]), backend)
    runtime_timeout_kernel[(1,)](device_array(np.array([3], np.int32), backend), out, 100_000)
    np.testing.assert_array_equal(to_numpy(out), [False, True])


@tilec.jit
def forever_kernel(flag_ptr):
    tl.atomic_poll(flag_ptr, 1)


def test_the_interpreter_refuses_a_poll_nothing_can_satisfy(monkeypatch):
    """No other program runs while an interpreted program waits: a poll without timeout
    on a value that does not match would never return."""
    monkeypatch.setattr(tilec.config.config, "interpret", True)
    with pytest.raises(tilec.CompilationError, match="atomic_poll would wait forever: \\*pointer holds 0, not "
                                                     "the expected 1") as info:
        forever_kernel[(1,)](np.zeros(1, np.int32))
    assert "tl.atomic_poll(flag_ptr, 1)" in str(info.value)


# ----------------------------------------------------------------------------- what they compile to


@tilec.jit
def ptx_kernel(x_ptr, y_ptr, flag_ptr, SEM_LOAD: tl.constexpr, SEM_STORE: tl.constexpr, SCOPE: tl.constexpr):
    offs = tl.arange(0, 128)
    x = tl.atomic_load(x_ptr + offs, sem=SEM_LOAD, scope=SCOPE)
    tl.atomic_store(y_ptr + offs, x + 1, sem=SEM_STORE, scope=SCOPE)
    tl.atomic_poll(flag_ptr, 1, sem=SEM_LOAD, scope=SCOPE)


@pytest.mark.parametrize("sem_load, sem_store", [("acquire", "release"), ("relaxed", "relaxed")])
@pytest.mark.parametrize("scope", ["cta", "gpu", "sys"])
def test_the_ptx_instructions(sem_load, sem_store, scope):
    ptx = tilec.compile(ptx_kernel, signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "flag_ptr": "*i32"},
                        constexprs={"SEM_LOAD": sem_load, "SEM_STORE": sem_store, "SCOPE": scope}).asm["ptx"]
    lines = [line.strip() for line in ptx.splitlines()]
    load = next(i for i, line in enumerate(lines) if f"ld.{sem_load}.{scope}.global.b32" in line)
    store = next(i for i, line in enumerate(lines) if f"st.{sem_store}.{scope}.global.b32" in line)
    assert f"ld.relaxed.{scope}.global.b32 value" in ptx            # the poll's spin loads
    assert (f"fence.acq_rel.{scope};" in ptx) == (sem_load == "acquire")
    barriers = [i for i, line in enumerate(lines) if line.startswith("bar.sync")]
    # acquire: a barrier after the load; release: one before the store
    assert any(load < b < store for b in barriers) == (sem_load == "acquire" or sem_store == "release")
    assert barriers[-1] > max(load, store)                           # after the poll, always


@tilec.jit
def bad_kernel(x_ptr, c_ptr: tl.const, CASE: tl.constexpr):
    offs = tl.arange(0, 32)
    if CASE == 0:
        tl.atomic_load(x_ptr, sem="release")
    elif CASE == 1:
        tl.atomic_store(x_ptr, 1, sem="acquire")
    elif CASE == 2:
        tl.atomic_poll(x_ptr, 1, sem="acq_rel")
    elif CASE == 3:
        tl.atomic_poll(x_ptr.to(tl.pointer_type(tl.float32), bitcast=True), 1.0)
    elif CASE == 4:
        tl.atomic_poll(x_ptr, 1, timeout_ns=-1)
    elif CASE == 5:
        tl.atomic_poll(x_ptr + offs, tl.zeros([2, 32], tl.int32))
    elif CASE == 6:
        tl.atomic_store(c_ptr, 1)
    elif CASE == 7:
        tl.atomic_store(x_ptr, offs)
    elif CASE == 8:
        tl.atomic_load(x_ptr, scope="device")
    else:
        tl.atomic_poll(x_ptr.to(tl.pointer_type(tl.int8), bitcast=True), 1)


@pytest.mark.parametrize("case, message", [
    (0, "atomic_load's sem must be 'acquire' \\(the default\\) or 'relaxed', got 'release'"),
    (1, "atomic_store's sem must be 'release' \\(the default\\) or 'relaxed', got 'acquire'"),
    (2, "atomic_poll's sem must be 'acquire' \\(the default\\) or 'relaxed', got 'acq_rel'"),
    (3, "atomic_poll needs a pointer to a 16-, 32- or 64-bit integer, got a pointer to fp32"),
    (4, "timeout_ns must be between 0 and 2\\*\\*64 - 1 nanoseconds, got -1"),
    (5, "expected value has shape \\[2, 32\\], which does not broadcast to the pointer shape \\[32\\]"),
    (6, "Cannot store to a constant pointer"),
    (7, "cannot atomic_store a block of shape \\[32\\] through a scalar pointer"),
    (8, "atomic scope must be one of 'gpu', 'cta', 'sys', got 'device'"),
    (9, "got a pointer to int8"),
])
def test_errors(case, message):
    with pytest.raises(tilec.CompilationError, match=message):
        bad_kernel.warmup("*i32", "*i32", CASE=case, grid=(1,))

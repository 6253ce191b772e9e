"""Codegen of software pipelining (tilegpu-pipeline) without a GPU: the tutorial matmul's
loads become cp.async copies waited for with a non-zero count, ptxas accepts the result,
and a configuration whose rings do not fit the target's shared memory is refused when
compiled, with OutOfResources."""
from __future__ import annotations

import re

import pytest

import tilec
import tilec.language as tl
from tilec.backend import toolkit
from tilec.target import Target

try:
    toolkit.ptxas_path()
except toolkit.ToolkitError:  # pragma: no cover - CI machines have the CUDA toolkit
    pytest.skip("ptxas is not available", allow_module_level=True)


@tilec.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                  GROUP_SIZE_M: tl.constexpr):
    """Triton's tutorial 03, as written there."""
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    c = accumulator.to(tl.float16)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


# As a launch specialises them: pointers and the K/row strides divisible by 16, unit
# strides equal to 1 (constants).
SIGNATURE = {"a_ptr": "*fp16:16", "b_ptr": "*fp16:16", "c_ptr": "*fp16:16", "M": "i32:16", "N": "i32:16",
             "K": "i32:16", "stride_am": "i32:16", "stride_bk": "i32:16", "stride_cm": "i32:16"}
UNIT_STRIDES = {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1}


def compile_matmul(target: str, num_stages: int, block=(64, 64, 32), num_warps: int = 4):
    bm, bn, bk = block
    return tilec.compile(matmul_kernel, signature=SIGNATURE, target=target, num_warps=num_warps,
                         num_stages=num_stages,
                         constexprs={**UNIT_STRIDES, "BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk,
                                     "GROUP_SIZE_M": 8})


def wait_counts(ptx: str) -> list[int]:
    return [int(n) for n in re.findall(r"cp\.async\.wait_group\s+(\d+);", ptx)]


@pytest.mark.parametrize("target", ["sm_80", "sm_90"])
def test_tutorial_matmul_is_pipelined(target):
    k = compile_matmul(target, num_stages=3)
    ptx = k.asm["ptx"]
    assert re.search(r"cp\.async\.cg\.shared\.global \[%r\d+\], \[%rd\d+\], 16", ptx)  # 16-byte copies
    assert "cp.async.commit_group" in ptx
    assert sorted(set(wait_counts(ptx))) == [0, 1]  # in the loop: S-2 = 1 group may stay in flight
    assert k.asm["cubin"][:4] == b"\x7fELF"
    # Two rings of (64x32 + 32x64) halves: 3 slots on sm_90 (wgmma reads them while the
    # next iteration's copies start), num_stages - 1 = 2 on sm_80 (mma.sync reads into registers).
    assert k.shared >= (3 if target == "sm_90" else 2) * 2 * 64 * 32 * 2
    ttgir = k.asm["ttgir"]
    assert '"tile.load"' not in ttgir.split("scf.for")[1].split("scf.yield")[0]


@pytest.mark.parametrize("target", ["sm_80", "sm_90"])
def test_copies_for_no_iteration_write_nothing(target):
    """The body's copies for iterations past the loop's end (the last S-1) are skipped
    under a guard of their own (`@p cp.async`), not zero-filled through the mask: a
    zero-filled slot that no dot reads costs shared-memory bandwidth while the last
    iterations' dots run. The K-tail mask stays the ignore-src predicate, a different
    one. The prologue's copies keep the condition in their mask (ptxas branched around
    each guarded one there)."""
    ptx = compile_matmul(target, num_stages=3).asm["ptx"]
    prologue, body = re.split(r"cp\.async\.wait_group\s+1;", ptx, maxsplit=1)
    copy = r"not\.pred ignore, (%p\d+); (@%p\d+ )?cp\.async"
    per_iteration = 2 * (64 * 32 // (8 * 128))  # A and B, 64x32 halves over 128 threads, 8 a copy
    body_copies, prologue_copies = re.findall(copy, body), re.findall(copy, prologue)
    assert len(body_copies) == per_iteration and len(prologue_copies) == 2 * per_iteration
    assert all(guard and guard.strip()[1:] != mask for mask, guard in body_copies)
    assert not any(guard for _, guard in prologue_copies)


@pytest.mark.parametrize("num_stages,waits", [(1, []), (2, [0]), (4, [0, 2]), (5, [0, 3])])
def test_wait_count_follows_num_stages(num_stages, waits):
    ptx = compile_matmul("sm_80", num_stages=num_stages, block=(32, 32, 32)).asm["ptx"]
    assert sorted(set(wait_counts(ptx))) == waits
    assert ("cp.async.commit_group" in ptx) == (num_stages >= 2)


def test_no_pipelining_before_sm_80():
    ptx = compile_matmul("sm_75", num_stages=3, block=(32, 32, 32)).asm["ptx"]
    assert "cp.async" not in ptx


def test_shared_memory_limits_are_target_facts():
    assert Target.parse("sm_90").max_shared_bytes == 232448
    assert Target.parse("sm_80").max_shared_bytes == 163 * 1024
    assert Target.parse("sm_86").max_shared_bytes == 99 * 1024
    assert Target.parse("sm_75").max_shared_bytes == 64 * 1024


def test_rings_too_large_raise_out_of_resources_when_compiled():
    # 7 stages, 6 slots of (128x64 + 64x128) halves: 196608 bytes of rings, over sm_80's 166912.
    with pytest.raises(tilec.OutOfResources) as error:
        compile_matmul("sm_80", num_stages=7, block=(128, 128, 64), num_warps=8)
    assert error.value.required >= 196608 and error.value.available == 163 * 1024
    assert "196608" in str(error.value) and "166912" in str(error.value)


@tilec.jit
def pointer_table_matmul(a_table, b_table, c_ptr, lda, ldb, K, BM: tl.constexpr, BN: tl.constexpr,
                         BK: tl.constexpr, HINT: tl.constexpr):
    """Operands through pointers read from memory (tutorial 08's grouped GEMM): nothing
    is known of their alignment but what the loop's discarded `tl.multiple_of` says of
    the loop-carried pointers, as in that tutorial."""
    a_base = tl.load(a_table).to(tl.pointer_type(tl.float16))
    b_base = tl.load(b_table).to(tl.pointer_type(tl.float16))
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    a_ptrs = a_base + rm[:, None] * lda + rk[None, :]
    b_ptrs = b_base + rk[:, None] * ldb + rn[None, :]
    acc = tl.zeros((BM, BN), tl.float32)
    for _ in range(0, tl.cdiv(K, BK)):
        if HINT:
            tl.multiple_of(a_ptrs, [16, 16])
            tl.multiple_of(b_ptrs, [16, 16])
        acc += tl.dot(tl.load(a_ptrs), tl.load(b_ptrs))
        a_ptrs += BK
        b_ptrs += BK * ldb
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc.to(tl.float16))


@pytest.mark.parametrize("hint", [True, False])
def test_hints_on_loop_carried_pointers_reach_the_pipeline(hint):
    """A hint on a loop-carried value holds in every iteration (Triton applies it to the
    loop's block argument): the loads become 16-byte cp.async copies, the prologue's too,
    and the product accumulates in place (`acc += dot` folded). Without the hint, the
    2-byte alignment allows no cp.async at all."""
    kernel = tilec.compile(pointer_table_matmul, signature={"a_table": "*u64:16", "b_table": "*u64:16",
                                                            "c_ptr": "*fp16:16", "lda": "i32", "ldb": "i32", "K": "i32"},
                           constexprs={"BM": 128, "BN": 128, "BK": 32, "HINT": hint}, target="sm_90", num_stages=3)
    ptx = kernel.asm["ptx"]
    copies = re.findall(r"cp\.async\.(?:cg|ca)\.shared\.global \[[^]]*\], \[[^]]*\], (\d+)", ptx)
    if hint:
        assert copies and set(copies) == {"16"}, copies
        assert kernel.n_spills == 0
    else:
        assert not copies

"""The interface between the semantic layer and a backend.

`Semantic` decides *what* to compute (types already promoted, shapes already
broadcast, every operand checked); a `Builder` only *emits* it. Two builders exist:

- `tilec.frontend.ir_builder.IRBuilder` emits ttir (MLIR) for the compiler;
- `tilec.interpreter.numpy_builder.NumpyBuilder` computes NumPy arrays at once.

Handles are whatever the builder uses for values (MLIR `Value`s, NumPy arrays). Types
passed in are tilec types (`tl.dtype`, `tl.pointer_type`, `tl.block_type`); operand
types always match what the operation needs, so a builder never promotes or checks.

Operation vocabulary (shared by both builders, named after the MLIR ops they become):

- `binary(op, ...)`: addi subi muli divsi divui remsi remui andi ori xori shli shrsi
  shrui maxsi maxui minsi minui addf subf mulf divf remf maxnumf minnumf maximumf
  minimumf, and
  - `mulhiui`: the high half of the unsigned product (both operands of one integer type),
  - `divf_rn`: IEEE-rounded division (`divf` may be approximate for fp32 on the GPU, as
    Triton's `/`), `divf_approx`: fp32 division by the GPU's fast approximation
    (`div.approx.f32`, tl.fdiv(approx=True)), `powf`: x ** y for floats
- `unary(op, ...)`: negf absf absi exp exp2 log log2 sqrt sqrt_rn rsqrt sin cos tan floor
  ceil erf trunc (`sqrt` may be approximate on the GPU for fp32, `sqrt_rn` never is)
- `ternary(op, ...)`: fma (a * b + c with one rounding)
- `compare(predicate, ...)`: for ints eq ne slt sle sgt sge ult ule ugt uge; for floats
  oeq une olt ole ogt oge (ordered except `une`, as C's `!=`)
- `cast(op, ...)`: extsi extui trunci sitofp uitofp fptosi fptoui extf truncf bitcast, and
  ptrtoint / inttoptr between pointers and 64-bit integers
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from .core import block_type, dtype

Handle = Any


class Builder:
    """Abstract builder. Every method returns a handle (or None for stores)."""

    # Whether the semantic layer reports its compile-time warnings (a deprecated argument,
    # a suspicious type) while building through this builder. The compiler's builders do;
    # the interpreter's does not: an interpreted launch first runs the frontend over the
    # kernel, which reports them once per specialisation, as a compilation would, and then
    # runs the kernel once per program, which would repeat them.
    reports_warnings = True

    # -- constants and creation
    def constant(self, value: int | float | bool, ty: dtype) -> Handle:
        """A scalar constant of scalar type `ty`."""
        raise NotImplementedError

    def splat(self, scalar: Handle, ty: block_type) -> Handle:
        """A block of type `ty` filled with the scalar."""
        raise NotImplementedError

    def make_range(self, start: int, end: int, ty: block_type) -> Handle:
        """int32 block [start, start+1, ..., end-1]."""
        raise NotImplementedError

    def program_id(self, axis: int) -> Handle:
        raise NotImplementedError

    def num_programs(self, axis: int) -> Handle:
        raise NotImplementedError

    # -- elementwise
    def binary(self, op: str, lhs: Handle, rhs: Handle, ty: dtype) -> Handle:
        raise NotImplementedError

    def unary(self, op: str, x: Handle, ty: dtype) -> Handle:
        raise NotImplementedError

    def compare(self, predicate: str, lhs: Handle, rhs: Handle, is_float: bool, ty: dtype) -> Handle:
        raise NotImplementedError

    def select(self, cond: Handle, true_value: Handle, false_value: Handle, ty: dtype) -> Handle:
        raise NotImplementedError

    def cast(self, op: str, x: Handle, ty: dtype) -> Handle:
        """A conversion: extsi extui trunci sitofp uitofp fptosi fptoui extf truncf (nearest
        even), truncf_rtz (toward zero), bitcast, ptrtoint, inttoptr."""
        raise NotImplementedError

    # -- shape
    def broadcast(self, x: Handle, ty: block_type) -> Handle:
        """Broadcast a block whose size-1 dimensions grow to `ty.shape` (same rank)."""
        raise NotImplementedError

    def expand_dims(self, x: Handle, axis: int, ty: block_type) -> Handle:
        raise NotImplementedError

    # -- memory
    def addptr(self, ptr: Handle, offset: Handle, ty: dtype) -> Handle:
        """`ptr + offset` elements; both already the same shape."""
        raise NotImplementedError

    def load(self, ptr: Handle, mask: Handle | None, other: Handle | None, ty: dtype, *,
             cache_modifier: str, eviction_policy: str, volatile: bool) -> Handle:
        raise NotImplementedError

    def store(self, ptr: Handle, value: Handle, mask: Handle | None, *,
              cache_modifier: str, eviction_policy: str) -> None:
        raise NotImplementedError

    # -- reductions
    def reduce(self, inputs: Sequence[Any], axis: int, combine: Callable, result_types: Sequence[dtype]) -> list[Handle]:
        """Reduce tensors `inputs` (tl.tensor) along `axis` with `combine`.

        `combine(lhs: list[tl.tensor], rhs: list[tl.tensor]) -> list[tl.tensor]` works on
        scalars when compiling (it builds the combiner region) and on NumPy arrays when
        interpreting; the semantic layer builds it from the language, so both agree.
        """
        raise NotImplementedError

    def ternary(self, op: str, a: Handle, b: Handle, c: Handle, ty: dtype) -> Handle:
        raise NotImplementedError

    def extern_elementwise(self, symbol: str, args: Sequence[Handle], ty: dtype, pure: bool = True) -> Handle:
        """A call of the libdevice function `symbol` (e.g. "__nv_powf") on every element.

        The interpreter maps the names of `tilec.language.extra.libdevice` to NumPy.
        """
        raise NotImplementedError

    # -- shape (issue 3)
    def reshape(self, x: Handle, ty: block_type) -> Handle:
        """Row-major reshape to `ty.shape` (same number of elements)."""
        raise NotImplementedError

    def trans(self, x: Handle, order: Sequence[int], ty: block_type) -> Handle:
        """Permute the dimensions: result dim i is source dim order[i] (numpy.transpose)."""
        raise NotImplementedError

    def join(self, a: Handle, b: Handle, ty: block_type) -> Handle:
        """Stack two same-shape blocks along a new last dimension of size 2."""
        raise NotImplementedError

    def split(self, x: Handle, ty: block_type) -> tuple[Handle, Handle]:
        """The two halves of the last dimension (which has size 2) of `x`; `ty` is each half's type."""
        raise NotImplementedError

    def cat(self, a: Handle, b: Handle, ty: block_type) -> Handle:
        """Concatenate along dimension 0 (in order)."""
        raise NotImplementedError

    def gather(self, src: Handle, index: Handle, axis: int, ty: block_type) -> Handle:
        """out[i..., j, k...] = src[i..., index[i..., j, k...], k...] along `axis` (numpy.take_along_axis)."""
        raise NotImplementedError

    def histogram(self, x: Handle, num_bins: int, mask: Handle | None, ty: block_type) -> Handle:
        """int32 counts of the values of the 1-D int block `x` in [0, num_bins); others ignored."""
        raise NotImplementedError

    def inline_asm(self, asm: str, constraints: str, args: Sequence[Handle], result_types: Sequence[block_type | dtype],
                   is_pure: bool, pack: int) -> list[Handle]:
        """Elementwise inline PTX over same-shape `args`, `pack` elements per instance (the
        interpreter cannot run PTX and refuses)."""
        raise NotImplementedError

    # -- scans (issue 3)
    def map_elementwise(self, inputs: Sequence[Any], body: Callable, shape: Sequence[int], pack: int = 1) -> list[Any]:
        """`body(scalars: list[tl.tensor]) -> list[tl.tensor]` applied to each element of
        `inputs` (tl.tensor blocks of `shape`); returns tl.tensor blocks of the results.
        Compiled, the body is a region run per element; interpreted, a call per element.
        With `pack` > 1, each call takes `pack` elements of every input (input by input)
        and returns `pack` of every result (result by result)."""
        raise NotImplementedError

    def scan(self, inputs: Sequence[Any], axis: int, combine: Callable, reverse: bool,
             result_types: Sequence[dtype]) -> list[Handle]:
        """Inclusive scan of `inputs` along `axis` with `combine` (as in `reduce`); with
        `reverse`, from the last element to the first."""
        raise NotImplementedError

    # -- atomics (issue 3)
    def atomic_rmw(self, op: str, ptr: Handle, value: Handle, mask: Handle | None, sem: str, scope: str,
                   ty: dtype) -> Handle:
        """Atomically `*ptr = op(*ptr, value)` per (unmasked) element; returns the old values
        (masked-off lanes return an unspecified value). op: add fadd max umax fmax min umin fmin
        and or xor xchg. sem: relaxed acquire release acq_rel; scope: cta gpu sys."""
        raise NotImplementedError

    def atomic_cas(self, ptr: Handle, cmp: Handle, value: Handle, sem: str, scope: str, ty: dtype) -> Handle:
        """Atomically `old = *ptr; if old == cmp: *ptr = value`; returns old."""
        raise NotImplementedError

    def atomic_load(self, ptr: Handle, mask: Handle | None, sem: str, scope: str, ty: dtype) -> Handle:
        """An atomic read of every (unmasked) element; masked-off elements give 0.
        sem: relaxed acquire; scope: cta gpu sys."""
        raise NotImplementedError

    def atomic_store(self, ptr: Handle, value: Handle, mask: Handle | None, sem: str, scope: str) -> None:
        """An atomic write of every (unmasked) element. sem: relaxed release."""
        raise NotImplementedError

    def atomic_poll(self, ptr: Handle, expected: Handle, timeout: Handle | None, sem: str, scope: str,
                    ty: dtype) -> Handle:
        """Waits until each element of `*ptr` equals `expected`, or until `timeout` (uint64
        nanoseconds from the start, None: no limit) has passed; int1 per element: whether
        it matched. sem: relaxed acquire."""
        raise NotImplementedError

    # -- hardware (tl.extra.cuda)
    def special_register(self, name: str, ty: dtype) -> Handle:
        """The PTX special register `name`: smid (int32), globaltimer (int64 nanoseconds)."""
        raise NotImplementedError

    def grid_dependency(self, action: str) -> None:
        """Programmatic dependent launch: "wait" for the grids this one depends on, or
        "launch_dependents" (a no-op in the interpreter)."""
        raise NotImplementedError

    # -- matrix product (issue 3)
    def dot(self, a: Handle, b: Handle, acc: Handle, input_precision: str, ty: block_type,
            max_num_imprecise_acc: int | None = None) -> Handle:
        """acc + a @ b for [M, K] x [K, N] blocks (acc: [M, N] of type ty). input_precision:
        ieee, tf32, tf32x3, bf16x3, bf16x6 (fp32 inputs only; others ignore it).
        max_num_imprecise_acc (fp8 operands only, else None): at most this many products
        along K are summed in Hopper's reduced-precision accumulator before each fp32 add."""
        raise NotImplementedError

    # -- debugging and hints (issue 3)
    def device_print(self, prefix: str, args: Sequence[Any], hex: bool) -> None:
        """Print `prefix` and the values of the tl.tensors `args` for every element."""
        raise NotImplementedError

    def device_assert(self, cond: Handle, message: str, location: str) -> None:
        """Fail the kernel where `cond` is false, reporting `message` and `location` ("file:line")."""
        raise NotImplementedError

    def source_location(self) -> str:
        """"file:line" of the kernel statement being built or run."""
        raise NotImplementedError

    def barrier(self) -> None:
        """Synchronise the threads of the program (a no-op in the interpreter)."""
        raise NotImplementedError

    def hint(self, x: Handle, kind: str, values: Sequence[int]) -> Handle:
        """x itself, annotated: kind is multiple_of, max_contiguous or max_constancy."""
        raise NotImplementedError

    def assume(self, cond: Handle) -> None:
        """The compiler may assume `cond` holds (a no-op in the interpreter)."""
        raise NotImplementedError

    # -- host interaction (interpreter only)
    def to_python(self, x: Handle) -> Any:
        """The Python value of a scalar (the interpreter); the compiler refuses."""
        raise NotImplementedError

"""Functions of the language written in the language itself (library functions, compiled
and interpreted as @jit functions are: see core.LibraryFunction), so they run unchanged
on both backends: flip, swizzle2d, softmax, sort, topk, ...

These are the parts of Triton's `triton.language` standard library that tilec did not
already provide as builtins, with Triton 3.6's names, parameters and defaults:

    sort(x, dim=None, descending=0)         bitonic sort along one dimension
    topk(x, k, dim=None, descending=True)   the k largest (or smallest) along one dimension
    bitonic_merge(x, dim=None, descending=0)  the last merge of a bitonic sort
    flip(x, dim=None)                       reverse the order along one dimension
    softmax(x, dim=None, *, keep_dims=None, ieee_rounding=False)
    swizzle2d(i, j, size_i, size_j, size_g) grouped reordering of a 2-D program grid
    reduce_or(input, axis, keep_dims=False) bitwise OR reduction

Where tilec goes beyond Triton 3.6 (code written for Triton behaves the same):
- sort, topk and bitonic_merge work along any dimension (negative ones counting from
  the end), not only the last; flip too;
- softmax's result always has the input's shape and is right for every `dim` (as in
  newer Triton, which deprecates keep_dims; see softmax);
- fp8 tensors sort (compared exactly in fp32) and topk returns what Triton's promotion
  rules give.
Not there: the tensor-method spellings (`x.flip()`, `x.softmax()`, `x.reduce_or(...)`).

How sorting works
-----------------
Every dimension of a tensor is a power of two, so a tensor of 2**n elements can be
viewed as an n-dimensional "hypercube" of shape [2, 2, ..., 2]: hypercube dimension
n - 1 - b holds bit b of the row-major flat index. Bit j of the position along the
sorted dimension is one of those bits, so the two elements whose positions differ only
in bit j sit on either side of one hypercube dimension. A compare-exchange step swaps
them through a bit-exact exchange (x ^ xor_sum(x) over that size-2 dimension gives each
element its partner), then keeps, in each slot, the partner or itself depending on a
comparison. The step sequence is the classic bitonic network: stages s = 1 .. log2(N),
each a merge of runs of 2**s elements with exchanges at bits s-1, ..., 0; runs are
sorted in alternating directions (by bit s of the position) except in the last stage,
which sorts in the requested direction.

Float ordering (NaN, -0.0): each slot keeps its partner when

    (mine > partner) != (slot is the upper one XOR the run descends)

with the language's `>` (an ordered comparison: false whenever a NaN is involved, and
-0.0 == +0.0). This is exactly Triton 3.6's compare-exchange, so for every input the
result is, element for element and bit for bit, the one Triton computes. For inputs
without NaN the result is sorted by value; -0.0 and +0.0 compare equal, and where they
meet, both slots may end up holding the same one of the two bit patterns (as in
Triton). With NaNs the network is not a permutation (a NaN compares false with
everything, so a pair may end up holding two copies of one element): sorting NaNs gives
no meaningful order, in Triton as here. Integers (signed and unsigned, 8 to 64 bits)
and bools are compared by value, and the result is always a permutation.

`topk` follows Triton's bitonic top-k: sort runs of k elements, then repeatedly keep the
elementwise maximum (`tl.max`, which ignores NaN) of neighbouring runs and merge again;
like Triton's, it computes (and returns) narrow types in fp32/int32 when k < N.
"""
from __future__ import annotations

import math as _math

import tilec.language as tl  # (still loading when this module is imported; read only inside kernels)

from .core import _unwrap, builtin, constexpr, current_semantic, library_function, tensor_method

__all__ = ["bitonic_merge", "flip", "reduce_or", "softmax", "sort", "swizzle2d", "topk"]


# ----------------------------------------------------------------------------- compile-time helpers
# Python-level builtins: they take constexprs (and tensors, only to read their types) and
# return constants, so kernels can compute shapes and dimension numbers at compile time.


def _shape_of(x) -> tuple[int, ...]:
    ty = getattr(x, "type", None)
    if ty is None or not ty.is_block():
        return ()
    return tuple(int(s) for s in ty.shape)


@builtin
def _rank(x):
    """The number of dimensions of `x` (0 for a scalar)."""
    return constexpr(len(_shape_of(x)))


@builtin
def _normalized_dim(x, dim, default):
    """`dim` as a non-negative dimension number of `x`: None gives `default` (None: the
    last dimension), a negative dim counts from the end. Out of range gives -1."""
    rank = len(_shape_of(x))
    dim = _unwrap(dim)
    if dim is None:
        dim = _unwrap(default)
    if dim is None:
        dim = rank - 1
    if not isinstance(dim, int) or isinstance(dim, bool) or not -rank <= dim < rank:
        return constexpr(-1)
    return constexpr(dim % rank)


@builtin
def _is_pow2(n):
    n = _unwrap(n)
    return constexpr(isinstance(n, int) and not isinstance(n, bool) and n > 0 and n & (n - 1) == 0)


@builtin
def _log2(n):
    return constexpr(int(_unwrap(n)).bit_length() - 1)


@builtin
def _bits_below(x, dim):
    """log2 of the number of elements one step along `dim` spans in row-major order: the
    number of hypercube bits that belong to the dimensions after `dim`."""
    return constexpr(_math.prod(_shape_of(x)[int(_unwrap(dim)) + 1:]).bit_length() - 1)


@builtin
def _cube_shape(x):
    """[2] * log2(numel of x)."""
    return [2] * (_math.prod(_shape_of(x)).bit_length() - 1)


@builtin
def _axis_as_bits_shape(x, dim):
    """The shape of `x` with dimension `dim` (of size 2**m) split into m dimensions of 2."""
    shape = list(_shape_of(x))
    dim = int(_unwrap(dim))
    return shape[:dim] + [2] * (shape[dim].bit_length() - 1) + shape[dim + 1:]


@builtin
def _with_dim(x, dim, size):
    """The shape of `x` with dimension `dim` replaced by `size`."""
    shape = list(_shape_of(x))
    shape[int(_unwrap(dim))] = int(_unwrap(size))
    return shape


@builtin
def _one_hot_shape(n_dims, dim):
    """[1, ..., 1, 2, 1, ..., 1]: n_dims dimensions, the 2 at `dim`."""
    n_dims, dim = int(_unwrap(n_dims)), int(_unwrap(dim))
    return [1] * dim + [2] + [1] * (n_dims - 1 - dim)


@builtin
def _bits_dtype(x):
    """The integer type whose values have the bit patterns of `x`'s elements (x's own type
    for integers and bools)."""
    ty = x.dtype
    if ty.is_int():
        return constexpr(ty)
    return constexpr({8: tl.int8, 16: tl.int16, 32: tl.int32, 64: tl.int64}[ty.primitive_bitwidth])


@builtin
def _is_integer(x):
    return constexpr(x.dtype.is_int())


@builtin
def _is_narrow_float(x):
    """True for floating-point types narrower than 32 bits (computed in fp32, as Triton does)."""
    return constexpr(x.dtype.is_floating() and x.dtype.primitive_bitwidth < 32)


@builtin
def _is_narrow_int(x):
    """True for integer (and bool) types narrower than 32 bits."""
    return constexpr(x.dtype.is_int() and x.dtype.primitive_bitwidth < 32)


@builtin
def _is_fp8(x):
    return constexpr(x.dtype.is_fp8())


@builtin
def _warn_deprecated_softmax_keep_dims(keep_dims):
    """softmax's keep_dims does nothing (the result always has x's shape); passing it warns,
    with Triton's words."""
    if _unwrap(keep_dims) is not None:
        current_semantic().warn("keep_dims argument to tl.softmax is deprecated and ignored: the result always "
                                "has the input's shape")
    return constexpr(None)


@builtin
def _flag(value):
    """A descending argument (bool or int) as the constant 0 or 1."""
    return constexpr(1 if _unwrap(value) else 0)


# ----------------------------------------------------------------------------- bitonic network


@library_function
def _partner(h, cube_dim: tl.constexpr):
    """Each element of the hypercube `h` replaced by the one across hypercube dimension
    `cube_dim` (moved by its bits, so every value, NaNs included, arrives unchanged)."""
    bits = h.to(_bits_dtype(h), bitcast=True)
    swapped = bits ^ tl.xor_sum(bits, cube_dim, keep_dims=True)
    return swapped.to(h.dtype, bitcast=True)


@library_function
def _bit_of_position(n_dims: tl.constexpr, cube_dim: tl.constexpr):
    """0/1 (int32) along hypercube dimension `cube_dim`, broadcastable to the hypercube."""
    return tl.reshape(tl.arange(0, 2), _one_hot_shape(n_dims, cube_dim))


@library_function
def _compare_exchange(h, descending, low: tl.constexpr, bit: tl.constexpr):
    """One step of the network on the hypercube `h`: the pairs of elements whose positions
    along the sorted dimension differ in `bit` only are put in order — ascending where
    `descending` (0/1, a constant or a 0/1 tensor broadcastable to `h`) is 0. `low` is the
    number of hypercube bits below the sorted dimension."""
    n_dims: tl.constexpr = _rank(h)
    cube_dim: tl.constexpr = n_dims - 1 - low - bit
    other = _partner(h, cube_dim)
    upper = _bit_of_position(n_dims, cube_dim)
    if _is_fp8(h):
        # fp8 is a storage type: compare exactly in fp32 (the elements still move as fp8 bits).
        greater = h.to(tl.float32) > other.to(tl.float32)
    else:
        greater = h > other
    # In an ascending pair the upper slot keeps the larger value: it takes its partner
    # unless it is the larger. A descending pair (or the lower slot) does the opposite.
    take_other = greater != ((upper ^ descending) != 0)
    return tl.where(take_other, other, h)


@library_function
def _merge(h, stage: tl.constexpr, order: tl.constexpr, low: tl.constexpr):
    """Bitonic merge of the runs of 2**stage elements along the sorted dimension of `h`
    (exchanges at bits stage-1, ..., 0). order: 0 ascending, 1 descending, 2 alternating
    (a run descends where bit `stage` of its position is 1)."""
    if order == 2:
        direction = _bit_of_position(_rank(h), _rank(h) - 1 - low - stage)
    else:
        direction = order
    for i in tl.static_range(stage):
        h = _compare_exchange(h, direction, low, stage - 1 - i)
    return h


# ----------------------------------------------------------------------------- sort, topk, bitonic_merge, flip


@tensor_method
@library_function
def sort(x, dim: tl.constexpr = None, descending: tl.constexpr = 0):
    """Sorts `x` along dimension `dim` (None: the last one; negative values count from the
    end), in ascending order, or descending with `descending=True`. Any rank and any
    numeric type (integers of 8 to 64 bits, signed or not, bool, fp16/bf16/fp32/fp64, fp8).

    A bitonic sorting network; floats are compared with `>`, so for NaN-free inputs the
    result is sorted by value (-0.0 equals +0.0). NaNs do not sort: the network's result
    with NaNs is the one Triton gives, not a permutation. See the module docstring.
    """
    _dim: tl.constexpr = _normalized_dim(x, dim, None)
    tl.static_assert(_rank(x) > 0, "sort: x must be a tensor, not a scalar")
    tl.static_assert(_dim >= 0, "sort: dim must be None or a dimension of x (-rank <= dim < rank)")
    tl.static_assert(_is_pow2(x.shape[_dim]), "sort: the sorted dimension's size must be a power of two")
    log_n: tl.constexpr = _log2(x.shape[_dim])
    order: tl.constexpr = _flag(descending)
    result = x
    if log_n > 0:
        low: tl.constexpr = _bits_below(x, _dim)
        h = tl.reshape(x, _cube_shape(x))
        for stage in tl.static_range(1, log_n + 1):
            h = _merge(h, stage, 2 if stage < log_n else order, low)
        result = tl.reshape(h, x.shape)
    return result


@tensor_method
@library_function
def topk(x, k: tl.constexpr, dim: tl.constexpr = None, descending: tl.constexpr = True):
    """The `k` largest elements of `x` along dimension `dim` (None: the last one), sorted
    largest first: the result has `x`'s shape with that dimension's size replaced by `k`.
    `k` must be a power of two no larger than the dimension. `descending=False` gives the
    `k` smallest, smallest first (the largest of the reversed order: `-x` for floats,
    `~x` for integers, both exact).

    As in Triton, when k is less than the dimension the result has the type Triton's
    tl.max reduces in: fp32 for fp8/fp16/bf16 inputs, int32 for integers (and bools) of
    fewer than 32 bits; otherwise (k equal to the dimension: a full descending sort) the
    type of `x`. The values are exact either way.

    Bitonic top-k, as Triton: sort runs of k, then halve the candidates with an
    elementwise `tl.max` of neighbouring runs (NaN ignored, as tl.max does) and merge the
    bitonic result again, until k remain.
    """
    _dim: tl.constexpr = _normalized_dim(x, dim, None)
    tl.static_assert(_rank(x) > 0, "topk: x must be a tensor, not a scalar")
    tl.static_assert(_dim >= 0, "topk: dim must be None or a dimension of x (-rank <= dim < rank)")
    tl.static_assert(_is_pow2(x.shape[_dim]), "topk: the selected dimension's size must be a power of two")
    tl.static_assert(_is_pow2(k), "topk: k must be a positive power of two")
    tl.static_assert(k <= x.shape[_dim], "topk: k must not exceed the size of the selected dimension")
    if descending:
        result = _topk_largest(x, k, _dim)
    else:
        largest = _topk_largest(_reversed_order(x), k, _dim)
        result = _reversed_order(largest.to(x.dtype)).to(largest.dtype)
    return result


@library_function
def _topk_largest(x, k: tl.constexpr, _dim: tl.constexpr):
    """topk's work: the k largest along the (normalized) dimension `_dim`."""
    log_n: tl.constexpr = _log2(x.shape[_dim])
    log_k: tl.constexpr = _log2(k)
    values = x
    if k < x.shape[_dim]:
        # The candidates are narrowed with a max reduction, which works (as Triton's
        # tl.max does) in fp32 for narrower floats and in int32 for narrower integers;
        # the result keeps that type, as in Triton. Both conversions are exact.
        if _is_narrow_float(x):
            values = x.to(tl.float32)
        elif _is_narrow_int(x):
            values = x.to(tl.int32)
    if log_k == 0:
        result = tl.max(values, axis=_dim, keep_dims=True)
    else:
        low: tl.constexpr = _bits_below(x, _dim)
        h = tl.reshape(values, _cube_shape(x))
        # Sort runs of k (the last stage already descending when k is the whole dimension).
        for stage in tl.static_range(1, log_k + 1):
            h = _merge(h, stage, 2 if stage < log_n else 1, low)
        # Neighbouring runs have opposite directions, so the elementwise maximum of two
        # runs holds the k largest of both, as a bitonic sequence: merge it.
        for step in tl.static_range(log_k + 1, log_n + 1):
            h = tl.max(h, axis=_rank(h) - 1 - low - log_k)
            h = _merge(h, log_k, 2 if step < log_n else 1, low)
        result = tl.reshape(h, _with_dim(x, _dim, k))
    return result


@library_function
def _reversed_order(x):
    """A value whose order is `x`'s reversed, and which gives `x` back when applied twice."""
    if x.dtype.is_floating():
        result = -x
    else:
        result = ~x
    return result


@tensor_method
@library_function
def bitonic_merge(x, dim: tl.constexpr = None, descending: tl.constexpr = 0):
    """The final merge of a bitonic sort along dimension `dim` (None: the last one): if
    each line of `x` along `dim` is a bitonic sequence (ascending then descending, or the
    reverse, up to rotation), the result is that line sorted, ascending or with
    `descending=True` descending. Other inputs give a permutation that is not sorted.
    """
    _dim: tl.constexpr = _normalized_dim(x, dim, None)
    tl.static_assert(_rank(x) > 0, "bitonic_merge: x must be a tensor, not a scalar")
    tl.static_assert(_dim >= 0, "bitonic_merge: dim must be None or a dimension of x (-rank <= dim < rank)")
    tl.static_assert(_is_pow2(x.shape[_dim]), "bitonic_merge: the dimension's size must be a power of two")
    log_n: tl.constexpr = _log2(x.shape[_dim])
    result = x
    if log_n > 0:
        h = tl.reshape(x, _cube_shape(x))
        h = _merge(h, log_n, _flag(descending), _bits_below(x, _dim))
        result = tl.reshape(h, x.shape)
    return result


@tensor_method
@library_function
def flip(x, dim=None):
    """`x` with the order of its elements reversed along dimension `dim` (None: the last
    one; negative values count from the end). Elements move by their bits, so NaN
    payloads and -0.0 are kept."""
    _dim: tl.constexpr = _normalized_dim(x, dim, None)
    tl.static_assert(_rank(x) > 0, "flip: x must be a tensor, not a scalar")
    tl.static_assert(_dim >= 0, "flip: dim must be None or a dimension of x (-rank <= dim < rank)")
    tl.static_assert(_is_pow2(x.shape[_dim]), "flip: the flipped dimension's size must be a power of two")
    steps: tl.constexpr = _log2(x.shape[_dim])
    result = x
    if steps > 0:
        # Reversing positions 0..2**m-1 complements every bit of the position: split the
        # dimension into m of size 2 and swap the two halves of each.
        h = tl.reshape(x.to(_bits_dtype(x), bitcast=True), _axis_as_bits_shape(x, _dim))
        for i in tl.static_range(steps):
            h = h ^ tl.xor_sum(h, _dim + i, keep_dims=True)
        result = tl.reshape(h, x.shape).to(x.dtype, bitcast=True)
    return result


# ----------------------------------------------------------------------------- softmax, swizzle2d, reduce_or


@tensor_method
@library_function
def softmax(x, dim=None, *, keep_dims=None, ieee_rounding=False):
    """exp(x) / sum(exp(x)) along dimension `dim` (None: dimension 0, as in Triton),
    computed as exp(x - max) for range. fp16/bf16 (and fp8) inputs are computed, and
    returned, in fp32, as Triton's do; `ieee_rounding=True` asks for a correctly rounded
    division (fp32 and fp64).

    `keep_dims` and `ieee_rounding` are keyword-only, as in Triton. `keep_dims` is
    deprecated and ignored (passing it warns): the result always has `x`'s shape (the
    maximum and the sum are broadcast back along `dim` whatever `dim` is).
    """
    _warn_deprecated_softmax_keep_dims(keep_dims)
    _dim: tl.constexpr = _normalized_dim(x, dim, 0)
    tl.static_assert(_rank(x) > 0, "softmax: x must be a tensor, not a scalar")
    tl.static_assert(_dim >= 0, "softmax: dim must be None or a dimension of x (-rank <= dim < rank)")
    values = x
    if _is_narrow_float(x):
        values = x.to(tl.float32)
    shifted = values - tl.max(values, _dim, keep_dims=True)
    numerator = tl.exp(shifted)
    denominator = tl.sum(numerator, _dim, keep_dims=True)
    return tl.fdiv(numerator, denominator, ieee_rounding)


@library_function
def swizzle2d(i, j, size_i, size_j, size_g):
    """Reorders the cells of a size_i x size_j grid: the cell at row-major index
    t = i * size_j + j is sent to the t-th cell of a walk that takes the rows in groups of
    `size_g` (the last group may have fewer) and, within a group, goes down each column
    before moving to the next one. Matmul kernels use it so that programs launched
    together work on few distinct rows and columns of tiles. For size_i = size_j = 4 and
    size_g = 2, the index t that lands on each cell is

        [[0,  2,  4,  6],
         [1,  3,  5,  7],
         [8, 10, 12, 14],
         [9, 11, 13, 15]]

    (so (0, 1), t = 1, goes to (1, 0)). Returns (new_i, new_j); scalars or tensors.
    """
    linear = i * size_j + j
    group_size = size_g * size_j  # positions in one full group of rows
    group = linear // group_size
    first_row = group * size_g
    rows = tl.minimum(size_i - first_row, size_g)  # rows in this group
    within = linear % group_size
    new_i = first_row + within % rows
    new_j = within // rows
    return new_i, new_j


@library_function
def _or_combine(a, b):
    return a | b


@tensor_method
@library_function
def reduce_or(input, axis, keep_dims=False):
    """Bitwise OR of the elements of `input` (an integer or bool tensor) along `axis`
    (None: all of them); `keep_dims` keeps the reduced dimension with size 1."""
    tl.static_assert(_is_integer(input), "reduce_or only supported for integers")
    return tl.reduce(input, axis, _or_combine, keep_dims=keep_dims)


def __getattr__(name: str):
    """Every name of tilec.language (`standard.zeros_like`: core.language_name)."""
    from .core import language_name
    return language_name("standard", name)

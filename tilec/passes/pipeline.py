"""tilegpu-pipeline: software pipelining of the loads that feed `tl.dot` in `scf.for` loops.

A matmul loop waits, every iteration, for its A and B tiles to come from global memory
before the dot can start. With S = num_stages >= 2 stages, the loads of iteration i are
issued S - 1 iterations earlier, as asynchronous copies (`cp.async`) into a ring of
shared-memory slots, so S - 1 tiles are in flight while the dot of iteration i runs:

    prologue   copies for iterations 0 .. S-2 into slots 0 .. S-2, each predicated on
               the iteration existing (lb + s*step < ub, ANDed with the load's mask),
               one commit group per iteration
    body i     async_wait {num = S-2}       (iteration i's group has landed)
               local_load slot c             (in place of the load; a convert_layout of
                                              the load becomes a local_load producing that
                                              layout, so mma operands come straight from
                                              shared memory)
               ... the dots ...
               copy for iteration i+S-1 into its slot, guarded by it existing (the
               copies' `pred`: past the end, nothing is written); commit
               ... the rest of the body ...
    drain      async_wait {num = 0}; local_dealloc

Slots come from one loop-carried counter c (the read slot: 0 in the first iteration, +1
each iteration, modulo the ring's slots). How many slots, and where the copies go,
depends on how the dots read the ring (as in Triton):

- Into registers (mma.sync through ldmatrix, FMA dots): S - 1 slots. Once the dots
  that read slot c are done with it (tilegpu-optimize-dot-operands reads a dot's K
  slices at the dot), the copies of iteration i+S-1 refill that same slot, right after
  the last of those dots. tilegpu-insert-barriers puts a barrier before the first read
  (other threads' copies are visible after the wait and a barrier) and one before the
  copies (every thread's reads of the slot are done): two per iteration.
- By wgmma, asynchronously: S slots. The group that reads slot c may still run when
  the next iteration starts, so the copies of iteration i+S-1 go to slot (c + S-1) % S,
  the one iteration i-1 read, after the dots (whose lowering has waited for iteration
  i-1's group) and a barrier (every warpgroup has passed that wait).

Both `memdesc_index` ops carry SLOT_ATTR (the read 0, the write (S-1) % slots), which
tells tilegpu-insert-barriers whether the slots are the same and how they move between
iterations (see its header); that pass also refuses any access to a slot whose copy
may still be landing.

Addresses for iteration i+S-1 (a modulo schedule): the backward slice of the load's
pointer and mask inside the body must consist of pure, region-free ops that read no
memory, over the induction variable, loop invariants, and loop-carried values whose
yielded updates are themselves such computations (`a_ptrs += BK * stride_ak`, the
offsets of block pointers, `k * BK`). That slice is cloned: in the prologue once per
stage with iv = lb + s*step and the carried values updated stage by stage from their
initial values, and in the body with iv + (S-1)*step and "ahead" copies of those
carried values (extra iter_args, S-1 updates ahead of the originals).

Loads left alone (they stay ordinary loads):
- loops whose step is not a positive constant, loops compared unsigned, targets below
  sm_80 (no cp.async), and S < 2 (`tile.num_stages` on the loop, else the option);
- loads not directly in the loop body, volatile ones, scalar ones, and loads whose
  result reaches anything but the A or B operand of a `tile.dot` (through
  `convert_layout`, `trans`, and the `fp_to_fp` that widens an fp8 operand in mma.sync's
  registers);
- loads with an `other` that is not a constant zero (cp.async fills masked-off
  elements with zeros);
- addresses that depend on an op with regions (but an `scf.if` whose branches only
  compute, as tile-flatten-loops makes for the next tile's values, is cloned whole), or
  on any op that is not pure; or on a value loaded in the loop when the loop also
  writes memory (see below);
- pointer layouts whose per-thread runs are under 4 bytes (cp.async's smallest copy:
  the lowering's own `copy_width` decides), or that repeat elements across threads.

A load left alone whose tile a wgmma dot reads from shared memory is staged there right
after the load (its `local_alloc` moved up from the dot, as Triton does), so the loaded
registers die at once instead of living across the other operand's load and address
computations. An odd-stride matmul (no cp.async: A and B loaded, then both staged) kept
A live across B's loads: 264-1024 B of spill at 128x128 tiles against Triton's 104-700.
Where B streams and A does not, the stores of A now come before the wait for B's copies,
so that wait no longer holds A's loads back (ptxas keeps it ahead of the stores).

A mask that cuts runs (`offs_k < K` with K not known to be a multiple of the run, a
descriptor's bounds) would keep copies one element wide; where it is bounded along the
run (bounded_runs.py: uniform factors and `index < bound`), the copies stay as wide as
the pointers allow and take the bound as a limit operand instead: each copy reads the
run's elements below the bound and zero-fills the rest (cp.async's source size).

Ring layouts: a load converted to an mma dot operand (`#tilegpu.dot_op` with an mma
parent) gets `mma_operand_shared_encoding` in the load's order; a load staged in an NVMMA
buffer for wgmma (`local_alloc`) gets that buffer's layout, and the dot then reads the
ring's slot directly (no local_alloc is left); one staged through a 2-D `trans` (`b.T`
of a B loaded [N, K]) gets that layout transposed back, and the dot reads the slot
through a transposed view (a `memdesc_index` typed with the transposed shape: the same
bytes); any other a plain row-major buffer. The ring's bytes count in the kernel's shared memory; the compile
driver raises OutOfResources when the total exceeds the target's.

A host descriptor's TMA load (`tile.descriptor_load`, kept by tile-choose-descriptor-copies)
staged for wgmma in the NVMMA layout its copies land in (`layout.shared.tma_box`) is
streamed the same way by TMA copies (`tilegpu.tma_copy_global_to_local`, issued by one
thread) instead of cp.async: each ring has one mbarrier per slot (`init_barriers` before
the loop, `inval_barriers` after it), each copy announces its bytes on its slot's
mbarrier, and the body waits for the slot's mbarrier (`wait_barrier`) with a phase bit
the loop carries, flipped whenever the slot counter wraps to 0 (iteration i waits for
phase (i // S) % 2). Such a loop has no commit groups or async_waits unless it also has
cp.async loads.

Addresses read from memory (a paged cache's block table: `block = tl.load(table +
tokens // PAGE)`, then `k = tl.load(cache + block * stride + ...)`): the slice may hold
non-volatile loads of the body, provided nothing in the loop writes memory or orders it
(stores, atomics, impure asm, barriers), so that reading a later iteration's table
entries early reads the same values. Each cloned load is predicated on its iteration
existing (its mask ANDed with the `exists` of its copies), so the prologue and the last
iterations read nothing past the loop's end; its other lanes are then undefined, which
only feeds copies that are off too. (Left out of the pipeline, such a loop would wait
for each of its tiles right before the dot, with nothing in flight while it computes.)
Such a loop is scheduled as Triton 3.6 schedules it, whatever num_stages: its tiles are
copied one iteration ahead (INDIRECT_STAGES), so its rings hold one slot if read into
registers and two for wgmma, the shared memory Triton's take (vLLM's blocksparse fp32
prefill at num_stages=3 fits on sm_90 only so). Rings read into registers are all
refilled after the last dot that reads any of them, not each after its own: the copies
share the table entries, and refills spread over the body kept the addresses of the
later ones live across the dots in between (paged decode, K refilled after q @ k and V
after p @ v: 138 registers, three programs an SM, 0.93 of Triton on an H200; refilled
together: 116 registers, four programs, 1.00). The table entries go one iteration
further ahead (`_prefetch_tables`): each becomes a carried value, loaded for iteration 0
before the loop and for iteration i+1 at the end of iteration i; the pipeline then loads
the entries of iteration i+2 after the copies of iteration i+1, and their latency hides
behind a whole iteration instead of holding the copies back. (Triton stages the entries
through a one-slot cp.async ring; registers do.)

The induction variable of the copies runs S-1 steps past the loop's: like Triton, the
pass assumes iv + (S-1)*step does not overflow its type.
"""
from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, scf

from ..dialects import tile, tilegpu
from ..dialects._mlir import (block_ops, bool_attr_value, create_op, i32_attr, int_attr_value, is_tensor,
                              operand_groups, str_attr_value, tensor_type)
from ..dialects.tile import WARP_SPECIALIZE_ATTR
from ..dialects.op_facts import reads_memory
from ..layout.encodings import LANE, REGISTER, WARP, DotOperandEncoding
from ..layout.linear_layout import LinearLayout
from ..layout.mma import MmaEncoding
from ..layout.shared import (NVMMASharedEncoding, SharedEncoding, mma_operand_shared_encoding, tma_box,
                             transposed_2d)
from ..target import Target
from . import bounded_runs, register_pass
from .axis_info import AxisInfoAnalysis
from .convert_tilegpu_to_llvm.context import LoweringError
from .convert_tilegpu_to_llvm.local_memory import copy_width
from .overlap_prologue import overlap_next_prologue
from .utils import (clone_reading, dots_reached, erase_dead_ops, fresh_accumulator, functions, has_uses, is_pure,
                    is_zero_constant, walk_postorder)
from .utils import defining_op as _owner
from .utils import user_of as _user

NUM_STAGES_ATTR = "tile.num_stages"
# The stages of a loop whose tile addresses read a loaded table: tiles one iteration ahead.
INDIRECT_STAGES = 2
# On a memdesc_index inside a pipelined loop: its index is (c + this) % S, where c is a
# counter of the innermost enclosing scf.for that is 0 in its first iteration and
# advances by 1 (mod S, the ring's leading dimension) every iteration.
SLOT_ATTR = "tilegpu.pipeline_slot"
# The first capability with cp.async.
ASYNC_COPY_CAPABILITY = 80
# Ops a pipelined load may pass through on its way to a dot operand: layout conversions,
# 2-D transposes, and fp8's widening in mma.sync's fragment layout (accelerate_fp8_mma).
_DOT_OPERAND_PATH = ("tilegpu.convert_layout", "tile.trans", "tile.fp_to_fp")


@dataclass
class _Load:
    """A load to pipeline and what its ring needs: a pointer load (`ptr`, `mask`: cp.async
    copies), or a host descriptor's TMA load (`tensormap`, `offsets`: one TMA copy per
    slot, completing the slot's mbarrier in `barriers`)."""
    op: ir.Operation
    ptr: ir.Value | None
    mask: ir.Value | None
    buffer: ir.RankedTensorType  # one slot: the load's shape and element type, and the ring's encoding
    ring: ir.Value | None = None
    tensormap: ir.Value | None = None
    offsets: list | None = None
    barriers: ir.Value | None = None
    # Elements per cp.async, decided on the load in the loop (its pointers are the
    # carried ones, which the user's hints may describe) and kept for every copy of the
    # ring, the prologue's included.
    width: int = 0
    # `bound - index` where the mask is bounded along the copies' runs (bounded_runs):
    # copies then read a run's elements below the bound (tilegpu.async_copy_global_to_local).
    limit: ir.Value | None = None

    @property
    def is_tma(self) -> bool:
        return self.tensormap is not None


@dataclass
class _Slice:
    """The body ops computing the pipelined addresses and the updates of the carried
    values they read, in program order, and those carried values (iter_arg indices)."""
    ops: list[ir.Operation]
    carried: list[int]


@dataclass
class _Loop:
    op: ir.Operation
    stages: int
    loads: list[_Load]
    slice: _Slice
    # Whether wgmma dots read the rings (asynchronously); else the dots read them into
    # registers.
    wgmma: bool

    @property
    def body(self) -> ir.Block:
        return self.op.regions[0].blocks[0]

    @property
    def slots(self) -> int:
        """Slots per ring (see the header): S for wgmma, S-1 for registers."""
        return self.stages if self.wgmma else self.stages - 1


# ----------------------------------------------------------------------------- analysis


def _constant_int(value: ir.Value) -> int | None:
    op = _owner(value)
    if op is None or op.name != "arith.constant":
        return None
    try:
        return ir.IntegerAttr(op.attributes["value"]).value
    except (ValueError, TypeError):
        return None


def _feeds_only_dot_operands(value: ir.Value) -> bool:
    """Whether every use of `value` reaches operand A or B of a tile.dot, through
    convert_layout and trans only, or through a local_alloc whose buffer a (wgmma) dot
    reads (and there is at least one)."""
    uses = list(value.uses)
    if not uses:
        return False
    for use in uses:
        user = use.owner.operation if hasattr(use.owner, "operation") else use.owner
        if user.name == "tile.dot":
            if use.operand_number not in (0, 1):
                return False
        elif user.name in _DOT_OPERAND_PATH or user.name == "tilegpu.local_alloc":
            if not _feeds_only_dot_operands(user.results[0]):
                return False
        else:
            return False
    return True


def _users(value: ir.Value) -> list[ir.Operation]:
    return [use.owner.operation if hasattr(use.owner, "operation") else use.owner for use in value.uses]


def _staging_allocs(value: ir.Value, transposed: bool = False) -> list[tuple[ir.Operation, bool]] | None:
    """The local_allocs staging `value` for wgmma, each with whether it holds `value`
    transposed, when every use gets there through convert_layout and 2-D trans ops
    (`tl.dot(a, b.T)` with b loaded [N, K]); else None."""
    users = _users(value)
    if not users:
        return None
    found = []
    for user in users:
        if user.name == "tilegpu.local_alloc":
            found.append((user, transposed))
            continue
        flips = user.name == "tile.trans" and len(tensor_type(user.results[0].type).shape) == 2
        if not (flips or user.name == "tilegpu.convert_layout"):
            return None
        inner = _staging_allocs(user.results[0], transposed != flips)
        if inner is None:
            return None
        found += inner
    return found


def _staged_encoding(alloc: ir.Operation, transposed: bool) -> SharedEncoding | None:
    """The layout of a local_alloc's buffer, seen from the load it stages: the same bytes,
    so for a transposed NVMMA buffer the contiguous dimension flips (None for other
    transposed layouts)."""
    encoding = tilegpu.parse_encoding(str(tilegpu.memdesc_tensor(alloc.results[0].type).encoding))
    if not transposed:
        return encoding
    if isinstance(encoding, NVMMASharedEncoding):
        return NVMMASharedEncoding(encoding.swizzle_bytes, encoding.element_bits, not encoding.transposed)
    return None


def _ring_encoding(load: ir.Operation) -> SharedEncoding | None:
    """mma operands are staged swizzled for ldmatrix, wgmma operands in the NVMMA layout
    of the buffer they were staged in (transposed back for a load staged through a
    `trans`); other loads in a row-major buffer."""
    result = load.results[0]
    allocs = _staging_allocs(result)
    if allocs is not None:
        encodings = {_staged_encoding(alloc, transposed) for alloc, transposed in allocs}
        return encodings.pop() if len(encodings) == 1 else None
    flip = _transposing_user(load)
    if flip is not None:  # `k.T` of a k loaded [N, K]: staged as the trans's result would be, seen transposed
        staged = _mma_operand_encoding(flip.results[0])
        return None if staged is None else transposed_2d(staged)
    return _mma_operand_encoding(result)


def _mma_operand_encoding(value: ir.Value) -> SharedEncoding | None:
    """The swizzle for staging `value` when all its users convert it to one mma operand
    layout, else None."""
    users = _users(value)
    if not users or any(user.name != "tilegpu.convert_layout" for user in users):
        return None
    targets = {tilegpu.layout_of(user.results[0].type) for user in users}
    if len(targets) != 1:
        return None
    (target,) = targets
    if not (isinstance(target, DotOperandEncoding) and isinstance(target.parent, MmaEncoding)):
        return None
    order = getattr(tilegpu.layout_of(value.type), "order", None)
    if order is None:
        return None
    shape = list(tensor_type(value.type).shape)
    try:
        return mma_operand_shared_encoding(target, shape, order, tile.memory_bits(tensor_type(value.type).element_type))
    except ValueError:
        return None


def _transposing_user(load: ir.Operation) -> ir.Operation | None:
    """The load's only user when it is a 2-D trans whose result goes to mma operands only
    (through convert_layouts): the slot is then read through a transposed view."""
    users = _users(load.results[0])
    if len(users) != 1 or users[0].name != "tile.trans" or len(tensor_type(users[0].results[0].type).shape) != 2:
        return None
    return users[0] if _mma_operand_encoding(users[0].results[0]) is not None else None


class _CopyFacts:
    """What `copy_width` reads of a lowering context: layouts and axis info."""

    def __init__(self, analysis: AxisInfoAnalysis):
        self.axis_info = analysis

    @staticmethod
    def layout(value: ir.Value) -> LinearLayout:
        encoding = tilegpu.layout_of(value.type)
        if encoding is None:
            raise LoweringError(f"tensor without a layout: {value.type}")
        return encoding.to_linear(tile.shape_of(value.type))


def _can_copy(load: _Load, analysis: AxisInfoAnalysis) -> bool:
    """Whether the lowering can turn this load into cp.async: runs of at least 4 bytes,
    and every element held by one thread only."""
    if _shared_across_threads(_CopyFacts.layout(load.ptr)):
        return False
    try:
        load.width = copy_width(_CopyFacts(analysis), load.ptr, load.mask, load.buffer,
                                tile.memory_bits(load.buffer.element_type) // 8)
    except LoweringError:
        return False
    return True


def _shared_across_threads(layout: LinearLayout) -> bool:
    """Whether some element of the layout is held by several threads (cp.async copies
    each element once)."""
    free = layout.free_variable_masks()
    return bool(free.get(LANE, 0) or free.get(WARP, 0))


def _tma_candidate(op: ir.Operation) -> _Load | None:
    """A descriptor's TMA load staged for wgmma in the layout its copies land in."""
    result = op.results[0]
    if _staging_allocs(result) is None:
        return None
    ty = tensor_type(result.type)
    encoding, _ = tma_box(list(ty.shape), tile.memory_bits(ty.element_type))
    if _ring_encoding(op) != encoding:
        return None
    (tensormap,), offsets = operand_groups(op)
    buffer = ir.RankedTensorType.get(list(ty.shape), ty.element_type, ir.Attribute.parse(tilegpu.encoding_text(encoding)))
    return _Load(op, None, None, buffer, tensormap=tensormap, offsets=list(offsets))


def _candidate(op: ir.Operation, analysis: AxisInfoAnalysis) -> _Load | None:
    """The load as a _Load when its kind and uses allow pipelining (addresses aside)."""
    if op.name == "tile.descriptor_load":
        return _tma_candidate(op)
    if op.name != "tile.load" or bool_attr_value(op, "volatile"):
        return None
    (ptr,), mask, other = operand_groups(op)
    result = op.results[0]
    if not isinstance(ptr.type, ir.RankedTensorType) or not tile.is_ptr_type(tensor_type(ptr.type).element_type):
        return None
    if other and not is_zero_constant(other[0]):
        return None
    if mask and not isinstance(mask[0].type, ir.RankedTensorType):
        return None
    if not _feeds_only_dot_operands(result):
        return None
    ty = tensor_type(result.type)
    encoding = _ring_encoding(op)
    buffer = ir.RankedTensorType.get(list(ty.shape), ty.element_type,
                                     None if encoding is None else ir.Attribute.parse(tilegpu.encoding_text(encoding)))
    load = _Load(op, ptr, mask[0] if mask else None, buffer)
    copies = _can_copy(load, analysis)
    if load.mask is not None and _copy_bounded_runs(load, analysis):
        return load
    return load if copies else None


def _copy_bounded_runs(load: _Load, analysis: AxisInfoAnalysis) -> bool:
    """Whether copies can be wider than the mask's constancy allows, the mask being
    bounded along their runs (bounded_runs): if so, replaces the load's mask by its
    uniform part, sets its limit and width (ops built before the load)."""
    layout = _CopyFacts.layout(load.ptr)
    if _shared_across_threads(layout):
        return False
    first = tuple(layout.bases(REGISTER)[0]) if layout.bases(REGISTER) else ()
    if sorted(first) != [0] * (len(first) - 1) + [1]:
        return False  # a thread's first two elements are not neighbours along one dimension
    dim = first.index(1)
    size = tile.memory_bits(load.buffer.element_type) // 8
    try:
        widest = copy_width(_CopyFacts(analysis), load.ptr, None, load.buffer, size)
    except LoweringError:
        return False
    width = min(widest, bounded_runs.bounded_width(load.mask, dim, analysis))
    if width <= load.width or width * size < 4:
        return False
    bounded = bounded_runs.split(load.mask, dim, width, analysis)
    if bounded is None or not bounded.bounds:
        return False
    with ir.InsertionPoint(load.op), load.op.location:
        load.mask, load.limit = bounded_runs.materialize(bounded)
    load.width = width
    return True


def may_stream(op: ir.Operation, target: Target | None) -> bool:
    """Whether this pass may stream load `op` through a cp.async ring, as far as an earlier
    pass can tell (tilegpu-coalesce, choosing its layout): a tensor load directly in an
    scf.for body, not volatile, its `other` absent or zero, its value reaching dot
    operands only, on a target with cp.async. Its addresses, and the loop, are checked
    when the pass runs."""
    if target is None or not target.at_least(ASYNC_COPY_CAPABILITY) or op.name != "tile.load" \
            or bool_attr_value(op, "volatile") or op.parent is None or op.parent.name != "scf.for":
        return False
    other = tile.load_operands(op)[2]
    return (other is None or is_zero_constant(other)) and _feeds_only_dot_operands(op.results[0])


def _address_slice(loop: ir.Operation, roots: list[ir.Value], loads_allowed: bool) -> _Slice | None:
    """The slice computing `roots` for a later iteration, or None when it is not a pure
    function of the induction variable, invariants and carried values updated purely
    (and, with `loads_allowed`, of non-volatile loads of the body)."""
    body = loop.regions[0].blocks[0]
    yielded = list(block_ops(body)[-1].operands)
    ops: set[ir.Operation] = set()
    carried: set[int] = set()
    pending = list(roots)
    while pending:
        value = pending.pop()
        if isinstance(value, ir.BlockArgument):
            if value.owner != body:
                continue  # an argument of an enclosing block: invariant
            index = value.arg_number - 1
            if index >= 0 and index not in carried:
                carried.add(index)
                pending.append(yielded[index])
            continue
        op = _owner(value)
        if op.block != body:
            if _inside(op, loop):
                return None  # a result of an op nested deeper: cannot happen for body ops' operands
            continue  # defined before the loop: invariant
        if op in ops:
            continue
        if op.regions:
            if not _pure_if(op):
                return None
            pending.extend(_free_values(op))
        elif not is_pure(op):
            return None
        if reads_memory(op) and not (op.name == "tile.load" and loads_allowed):
            return None
        ops.add(op)
        pending.extend(op.operands)
    return _Slice([op for op in block_ops(body) if op in ops], sorted(carried))


def _reads_tables(slice_: _Slice) -> bool:
    """Whether the pipelined addresses depend on values the loop loads (a block table)."""
    return any(op.name == "tile.load" for op in slice_.ops)


def _table_roots(op: ir.Operation) -> list[ir.Value]:
    return [value for value in tile.load_operands(op) if value is not None]


def _prefetch_tables(loop: _Loop) -> bool:
    """Loads each table entry the pipelined addresses read one iteration before the
    iteration that reads it: the entry becomes a carried value, loaded for iteration 0
    before the loop and for iteration i+1 at the end of iteration i (guarded by that
    iteration existing). Only entries whose own addresses read no loaded value; False
    when there is none."""
    op, body = loop.op, loop.body
    tables = [table for table in loop.slice.ops
              if table.name == "tile.load" and _address_slice(op, _table_roots(table), False) is not None]
    if not tables:
        return False
    lower, upper, step = list(op.operands)[:3]
    inits = list(op.operands)[3:]
    results = len(op.results)
    firsts = []
    with ir.InsertionPoint(op), op.location:
        exists = arith.cmpi(arith.CmpIPredicate.slt, lower, upper)
        for table in tables:
            slice_ = _address_slice(op, _table_roots(table), False)
            mapping = {body.arguments[0]: lower, **{body.arguments[1 + j]: inits[j] for j in slice_.carried}}
            firsts.append(_guarded_load(table, _clone_slice(slice_, mapping, exists), exists))
    _rebuild_loop(loop, firsts)
    body = loop.body
    iv = body.arguments[0]
    yield_op = block_ops(body)[-1]
    yielded = list(yield_op.operands)
    with ir.InsertionPoint(yield_op), yield_op.location:
        following = arith.addi(iv, _constant(iv.type, _constant_int(loop.op.operands[2])))
        exists = arith.cmpi(arith.CmpIPredicate.slt, following, upper)
        nexts = []
        for table in tables:
            slice_ = _address_slice(loop.op, _table_roots(table), False)
            mapping = {iv: following, **{body.arguments[1 + j]: yielded[j] for j in slice_.carried}}
            nexts.append(_guarded_load(table, _clone_slice(slice_, mapping, exists), exists))
        scf.YieldOp(yielded + nexts)
    yield_op.erase()
    for table, carried in zip(tables, list(body.arguments)[1 + results:]):
        table.results[0].replace_all_uses_with(carried)
        table.erase()
    return True


def _pure_if(op: ir.Operation) -> bool:
    """An scf.if whose branches only compute (pure ops reading no memory, or such ifs):
    a value like any pure op's, which may be computed again for another iteration (a
    flattened tile loop's next tile, tile-flatten-loops)."""
    if op.name != "scf.if":
        return False
    for nested in walk_postorder(op):
        if nested.name == "scf.yield":
            continue
        if reads_memory(nested) or not (_pure_if(nested) if nested.regions else is_pure(nested)):
            return False
    return True


def _free_values(op: ir.Operation) -> list[ir.Value]:
    """The values the ops nested in `op` read that are defined outside it."""
    nested = walk_postorder(op)
    own = set(nested)
    free = []
    for inner in nested:
        for value in inner.operands:
            owner = _owner(value)
            if owner is not None and owner not in own and owner != op:
                free.append(value)
            elif isinstance(value, ir.BlockArgument) and not _inside(value.owner.owner, op) and \
                    value.owner.owner != op:
                free.append(value)
    return free


# Ops that neither write memory nor order it, besides pure ones: nothing they do can make
# a load of the loop return another value when issued some iterations early.
_MEMORY_NEUTRAL = frozenset(("scf.for", "scf.if", "scf.while", "scf.condition", "scf.yield", "tile.print",
                             "tile.assert", "tile.assume"))


def _leaves_memory_alone(loop: ir.Operation) -> bool:
    """Whether nothing in the loop writes global memory or orders accesses to it (stores,
    atomics, volatile loads, impure asm, barriers): then a load of a later iteration reads
    the same values when issued early. Shared-memory ops (tilegpu, placed by earlier passes
    for dot operands) touch no global memory."""
    for region in loop.regions:
        for block in region.blocks:
            for op in block_ops(block):
                if is_pure(op):
                    continue  # its regions too (a reduction's combiner): pure as well
                if op.name in _MEMORY_NEUTRAL or op.name == "tile.descriptor_load" or \
                        (op.name.startswith("tilegpu.") and op.name != "tilegpu.barrier"):
                    if not _leaves_memory_alone(op):
                        return False
                    continue
                return False
    return True


def _inside(op: ir.Operation, ancestor: ir.Operation) -> bool:
    current = op.parent
    while current is not None:
        if current == ancestor:
            return True
        if current.name == "func.func":
            return False
        current = current.parent
    return False


def _num_stages(loop: ir.Operation, default: int) -> int:
    return int_attr_value(loop, NUM_STAGES_ATTR, default) if NUM_STAGES_ATTR in loop.attributes else default


def _plan(loop: ir.Operation, default_stages: int, analysis: AxisInfoAnalysis) -> _Loop | None:
    stages = _num_stages(loop, default_stages)
    step = _constant_int(loop.operands[2])
    if stages < 2 or step is None or step <= 0 or "unsignedCmp" in loop.attributes:
        return None
    body = loop.regions[0].blocks[0]
    loads = [load for load in (_candidate(op, analysis) for op in block_ops(body)) if load is not None]
    # Drop loads whose addresses cannot be computed ahead; the others share one slice.
    loads_allowed = _leaves_memory_alone(loop)
    loads = [load for load in loads if _address_slice(loop, _roots(load), loads_allowed) is not None]
    if not loads:
        return None
    slice_ = _address_slice(loop, [root for load in loads for root in _roots(load)], loads_allowed)
    if _reads_tables(slice_):  # tiles one iteration ahead (see the header)
        stages = min(stages, INDIRECT_STAGES)
    return _Loop(loop, stages, loads, slice_, any(_read_by_wgmma(load) for load in loads))  # TMA loads are


def _read_by_wgmma(load: _Load) -> bool:
    """Whether a wgmma dot reads the load's tile from shared memory (a staging local_alloc),
    so that its slot stays in use until that dot's group completes."""
    return _staging_allocs(load.op.results[0]) is not None


def _roots(load: _Load) -> list[ir.Value]:
    if load.is_tma:
        return list(load.offsets) + [load.tensormap]
    return [load.ptr] + [v for v in (load.mask, load.limit) if v is not None]


# ----------------------------------------------------------------------------- rewriting


def _constant(ty: ir.Type, value: int) -> ir.Value:
    return arith.ConstantOp(ty, value).result


def _clone_slice(slice_: _Slice, mapping: dict[ir.Value, ir.Value], exists: ir.Value) -> dict[ir.Value, ir.Value]:
    """Clones the slice at the insertion point, reading `mapping`'s values in place of
    the induction variable and carried values, its loads predicated on `exists` (the
    iteration they are for is one of the loop's); returns `mapping` extended by the
    clones."""
    mapping = dict(mapping)
    for op in slice_.ops:
        if op.name == "tile.load":
            mapping[op.results[0]] = _guarded_load(op, mapping, exists)
            continue
        clone_reading(op, mapping)
    return mapping


def _guarded_load(op: ir.Operation, mapping: dict[ir.Value, ir.Value], exists: ir.Value) -> ir.Value:
    """The load `op` of an address slice for a later iteration: its operands through
    `mapping`, its mask ANDed with `exists`."""
    ptr, mask, other = (mapping.get(value, value) if value is not None else None
                        for value in tile.load_operands(op))
    guard = exists
    if isinstance(ptr.type, ir.RankedTensorType):
        ty = tensor_type(ptr.type)
        guard = tile.splat(exists, ir.RankedTensorType.get(list(ty.shape), exists.type, ty.encoding))
    mask = guard if mask is None else arith.andi(mask, guard)
    return tile.load(ptr, mask, other, op.results[0].type, cache=str_attr_value(op, "cache"),
                     evict=str_attr_value(op, "evict"))


def _issue_copies(loop: _Loop, loads: list[_Load], mapping: dict[ir.Value, ir.Value], exists: ir.Value,
                  slot: ir.Value, slot_offset: int | None, commit: bool = True) -> None:
    """One iteration's copies into `slot` of the rings of `loads`, predicated on
    `exists`, and (if `commit`) the commit of the iteration's group. `slot_offset` marks
    the slot as the loop counter plus it (None: a constant slot, outside the loop).

    In the body, `exists` guards the copies (their `pred`): for the S-1 iterations past
    the end of every run of the loop they then write nothing, where a mask that is off
    everywhere would write slots of zeros that no dot reads, taking shared-memory
    bandwidth from the dots of the last iterations. In the prologue, `exists` joins the
    masks instead (zero-filling only for a loop shorter than S-1 iterations): there the
    copies are interleaved with their address arithmetic, and ptxas turned a guard on
    each into a branch around each (21 branches and 57 filler loads a tile in tutorial
    09's persistent kernel at 128x256), where it keeps the body's run of guarded copies
    straight."""
    guarded = slot_offset is not None
    def slot_of(ring: ir.Value) -> ir.Value:
        buffer = tilegpu.memdesc_index(ring, slot)
        if slot_offset is not None:
            _owner(buffer).attributes[SLOT_ATTR] = i32_attr(slot_offset)
        return buffer

    for load in loads:
        if load.is_tma:
            tilegpu.tma_copy_global_to_local(mapping.get(load.tensormap, load.tensormap),
                                             [mapping.get(o, o) for o in load.offsets], slot_of(load.ring),
                                             slot_of(load.barriers), exists)
            continue
        ptr = mapping.get(load.ptr, load.ptr)
        mask = mapping.get(load.mask, load.mask) if load.mask is not None else None
        limit = mapping.get(load.limit, load.limit) if load.limit is not None else None
        if guarded:
            tilegpu.async_copy_global_to_local(ptr, slot_of(load.ring), mask, width=load.width, limit=limit,
                                               pred=exists)
            continue
        if limit is not None:
            # `exists` cuts the limit to nothing, once per distinct limit (a row of them),
            # rather than joining every copy's mask.
            limit_type = tensor_type(limit.type)
            limit = arith.select(exists, limit, tile.splat(_constant(limit_type.element_type, 0), limit_type))
        else:
            mask_type = ir.RankedTensorType.get(list(load.buffer.shape), ir.IntegerType.get_signless(1),
                                                tensor_type(ptr.type).encoding)
            mask = tile.splat(exists, mask_type) if mask is None else arith.andi(mask, tile.splat(exists, mask_type))
        tilegpu.async_copy_global_to_local(ptr, slot_of(load.ring), mask, width=load.width, limit=limit)
    if commit and _copies_async(loop):
        tilegpu.async_commit_group()


def _copies_async(loop: _Loop) -> bool:
    """Whether some of the loop's loads go by cp.async (commit groups and waits)."""
    return any(not load.is_tma for load in loop.loads)


def _prologue(loop: _Loop) -> list[ir.Value]:
    """Allocates the rings and issues iterations 0 .. S-2 before the loop; returns the
    carried values S-1 iterations ahead (the "ahead" iter_args' initial values)."""
    op = loop.op
    lower, upper, step = list(op.operands)[:3]
    inits = list(op.operands)[3:]
    iv = loop.body.arguments[0]
    carried = {loop.body.arguments[1 + j]: inits[j] for j in loop.slice.carried}
    yielded = list(block_ops(loop.body)[-1].operands)
    for load in loop.loads:
        ring = ir.RankedTensorType.get([loop.slots] + list(load.buffer.shape), load.buffer.element_type,
                                       load.buffer.encoding)
        load.ring = tilegpu.local_alloc(tilegpu.memdesc_type(ring))
        if load.is_tma:  # one mbarrier per slot
            barriers = ir.RankedTensorType.get([loop.slots], ir.IntegerType.get_signless(64))
            load.barriers = tilegpu.local_alloc(tilegpu.memdesc_type(barriers))
            tilegpu.init_barriers(load.barriers)
    step_value = _constant_int(step)
    for stage in range(loop.stages - 1):
        iteration = lower if stage == 0 else arith.addi(lower, _constant(iv.type, stage * step_value))
        exists = arith.cmpi(arith.CmpIPredicate.slt, iteration, upper)
        mapping = _clone_slice(loop.slice, {iv: iteration, **carried}, exists)
        _issue_copies(loop, loop.loads, mapping, exists, _constant(ir.IntegerType.get_signless(32), stage), None)
        carried = {loop.body.arguments[1 + j]: mapping.get(yielded[j], yielded[j]) for j in loop.slice.carried}
    return [carried[loop.body.arguments[1 + j]] for j in loop.slice.carried]


def _read_slot(load: _Load, slot: ir.Value) -> None:
    """Replaces the load's value, at its place, by local_loads of its ring's slot `slot`;
    a convert_layout of the load becomes a local_load in the converted layout, and so does
    one of its transpose (`k.T` as an mma operand), through a transposed view of the slot."""
    result = load.op.results[0]
    allocs = _staging_allocs(result)
    if allocs is not None:  # wgmma operands: the dots read the slot itself, or a transposed view of it
        for alloc, transposed in allocs:
            view = _slot_view(load, slot, tilegpu.memdesc_tensor(alloc.results[0].type) if transposed else None)
            alloc.results[0].replace_all_uses_with(view)
            alloc.erase()
        _erase_unused_chain(result)
        return
    flip = _transposing_user(load.op) if load.buffer.encoding is not None else None
    if flip is not None:
        flipped = tensor_type(flip.results[0].type)
        encoding = transposed_2d(tilegpu.parse_encoding(str(load.buffer.encoding)))
        view = _slot_view(load, slot, ir.RankedTensorType.get(list(flipped.shape), flipped.element_type,
                                                              ir.Attribute.parse(tilegpu.encoding_text(encoding))))
        for user in _users(flip.results[0]):
            user.results[0].replace_all_uses_with(tilegpu.local_load(view, user.results[0].type))
            user.erase()
        flip.erase()
        return
    buffer = _slot_view(load, slot)
    for user in _users(result):
        if user.name == "tilegpu.convert_layout":
            user.results[0].replace_all_uses_with(tilegpu.local_load(buffer, user.results[0].type))
            user.erase()
    if has_uses(result):
        result.replace_all_uses_with(tilegpu.local_load(buffer, result.type))


def _slot_view(load: _Load, slot: ir.Value, view: ir.RankedTensorType | None = None) -> ir.Value:
    """The ring's slot `slot` for reading in this iteration, typed as `view` if given."""
    buffer = tilegpu.memdesc_index(load.ring, slot, view=view)
    _owner(buffer).attributes[SLOT_ATTR] = i32_attr(0)
    return buffer


def _erase_unused_chain(value: ir.Value) -> None:
    """Erases the ops between a load and the local_allocs it fed, now unused."""
    for user in _users(value):
        _erase_unused_chain(user.results[0])
        if not has_uses(user.results[0]):
            user.erase()


def _next_slot(counter: ir.Value, slots: int) -> tuple[ir.Value, ir.Value]:
    """(counter + 1) % slots, and whether it wrapped to 0 (an i1)."""
    i32 = ir.IntegerType.get_signless(32)
    following = arith.addi(counter, _constant(i32, 1))
    wraps = arith.cmpi(arith.CmpIPredicate.eq, following, _constant(i32, slots))
    return arith.select(wraps, _constant(i32, 0), following), wraps


def _previous_slot(counter: ir.Value, slots: int) -> ir.Value:
    """(counter + slots - 1) % slots: the slot one iteration earlier."""
    i32 = ir.IntegerType.get_signless(32)
    wraps_down = arith.cmpi(arith.CmpIPredicate.eq, counter, _constant(i32, 0))
    return arith.select(wraps_down, _constant(i32, slots - 1), arith.subi(counter, _constant(i32, 1)))


def _read_slots(loop: _Loop, counter: ir.Value, phase: ir.Value | None) -> None:
    """Replaces each pipelined load by reads of its ring's slot `counter`, after the wait
    for it: the cp.async groups before the first load (all but the S-2 newest), each TMA
    slot's mbarrier at `phase`."""
    for index, load in enumerate(loop.loads):  # in program order
        with ir.InsertionPoint(load.op), load.op.location:
            if index == 0 and _copies_async(loop):
                tilegpu.async_wait(loop.stages - 2)
            if load.is_tma:
                barrier = tilegpu.memdesc_index(load.barriers, counter)
                _owner(barrier).attributes[SLOT_ATTR] = i32_attr(0)
                tilegpu.wait_barrier(barrier, phase)
            _read_slot(load, counter)
        load.op.erase()


def _release_rings(loop: _Loop, extra_barriers: list[ir.Value] = ()) -> None:
    """After the loop: the last copies waited for, the rings freed, their mbarriers (and
    `extra_barriers`) invalidated and freed."""
    with ir.InsertionPoint.after(loop.op), loop.op.location:
        if _copies_async(loop):
            tilegpu.async_wait(0)
        for load in loop.loads:
            tilegpu.local_dealloc(load.ring)
            if load.is_tma:
                tilegpu.inval_barriers(load.barriers)
                tilegpu.local_dealloc(load.barriers)
        for barriers in extra_barriers:
            tilegpu.inval_barriers(barriers)
            tilegpu.local_dealloc(barriers)


def _issue_ahead(loop: _Loop, counter: ir.Value, ahead: dict[ir.Value, ir.Value],
                 points: list[tuple[ir.Operation, list[_Load]]]) -> tuple[ir.Value, list[ir.Value]]:
    """In the body: the copies of iteration i+S-1 into slot (counter + S-1) % slots (the
    slot before the counter's with S slots, the counter's own with S-1), each load's
    right after the op `points` gives it (in program order; the group's commit after the
    last); returns the next counter and the ahead carried values of the next iteration."""
    op, stages, slots, body = loop.op, loop.stages, loop.slots, loop.body
    iv, upper, step = body.arguments[0], op.operands[1], _constant_int(op.operands[2])
    places = [ir.InsertionPoint.after(anchor) for anchor, _ in points]  # before anything is inserted
    first, last = points[0][0], points[-1][0]
    with places[0], first.location:
        iteration = arith.addi(iv, _constant(iv.type, (stages - 1) * step))
        exists = arith.cmpi(arith.CmpIPredicate.slt, iteration, upper)
        offset = (stages - 1) % slots
        # slots == stages: offset S-1, the slot before the counter's
        write_slot = counter if offset == 0 else _previous_slot(counter, slots)
    # At each point, the addresses its copies need and no earlier point computed; then,
    # after the last, what only the next iteration's ahead values need (a flattened tile
    # loop's next-tile `if`): no branch stands between the wait for the previous wgmma
    # group and the refill of its slots.
    mapping, cloned = {iv: iteration, **ahead}, set()
    for index, (anchor, loads) in enumerate(points):
        needed = [op for op in _split_slice(loop, loads)[0].ops if op not in cloned]
        cloned.update(needed)
        with places[index], anchor.location:
            mapping = _clone_slice(_Slice(needed, loop.slice.carried), mapping, exists)
            _issue_copies(loop, loads, mapping, exists, write_slot, offset, commit=index == len(points) - 1)
    for_later = _split_slice(loop, loop.loads)[1]
    with places[-1], last.location:
        mapping = _clone_slice(for_later, mapping, exists)
        # (one slot: the counter stays 0, which canonicalisation folds away)
        following = counter if slots == 1 else _next_slot(counter, slots)[0]
    yielded = list(block_ops(body)[-1].operands)
    return following, [mapping.get(yielded[j], yielded[j]) for j in loop.slice.carried]


def _split_slice(loop: _Loop, loads: list[_Load]) -> tuple[_Slice, _Slice]:
    """The loop's address slice in two: the ops the copies of `loads` need, and the rest
    (updates of carried values those copies do not read this iteration), each in order."""
    ops = set(loop.slice.ops)
    needed: set[ir.Operation] = set()
    pending = [root for load in loads for root in _roots(load)]
    while pending:
        value = pending.pop()
        op = _owner(value)
        if op is None or op not in ops or op in needed:
            continue
        needed.add(op)
        pending.extend(op.operands)
        if op.regions:
            pending.extend(_free_values(op))
    first = [op for op in loop.slice.ops if op in needed]
    return _Slice(first, loop.slice.carried), _Slice([op for op in loop.slice.ops if op not in needed],
                                                      loop.slice.carried)


def _rebuild_loop(loop: _Loop, extra_inits: list[ir.Value]) -> None:
    """Replaces the loop by one with `extra_inits` appended to its iter_args, the body
    moved over (its yield still the old one)."""
    old = loop.op
    with ir.InsertionPoint(old), old.location:
        new = scf.ForOp(old.operands[0], old.operands[1], old.operands[2], list(old.operands)[3:] + extra_inits)
    for index in range(len(old.attributes)):  # tile.num_stages and any others
        attribute = old.attributes[index]
        new.operation.attributes[attribute.name] = attribute.attr
    old_body, new_body = old.regions[0].blocks[0], new.regions[0].blocks[0]
    for op in block_ops(old_body):
        op.detach_from_parent()
        new_body.append(op)
    moved = dict(zip(old_body.arguments, new_body.arguments))
    for old_arg, new_arg in moved.items():
        old_arg.replace_all_uses_with(new_arg)
    # A load may read a carried value directly (its pointers in the load's own layout):
    # point it at the new block's argument before the old block goes.
    for load in loop.loads:
        load.ptr = moved.get(load.ptr, load.ptr) if load.ptr is not None else None
        load.mask = moved.get(load.mask, load.mask) if load.mask is not None else None
        load.limit = moved.get(load.limit, load.limit) if load.limit is not None else None
        if load.is_tma:
            load.tensormap = moved.get(load.tensormap, load.tensormap)
            load.offsets = [moved.get(o, o) for o in load.offsets]
    for old_result, new_result in zip(old.results, new.results):
        old_result.replace_all_uses_with(new_result)
    old.erase()
    loop.op = new.operation


def _pipeline(loop: _Loop) -> None:
    i32 = ir.IntegerType.get_signless(32)
    tma = any(load.is_tma for load in loop.loads)
    with ir.InsertionPoint(loop.op), loop.op.location:
        ahead_inits = _prologue(loop)
        counter_init = _constant(i32, 0)
    results = len(loop.op.results)
    # TMA slots are waited for by mbarrier phase: (iteration // S) % 2, carried as a bit
    # that flips whenever the counter wraps to 0.
    _rebuild_loop(loop, ahead_inits + [counter_init] + ([counter_init] if tma else []))
    body = loop.body
    counter = body.arguments[-2] if tma else body.arguments[-1]
    phase = body.arguments[-1] if tma else None
    ahead = dict(zip([body.arguments[1 + j] for j in loop.slice.carried],
                     list(body.arguments)[1 + results:1 + results + len(loop.slice.carried)]))
    yield_op = block_ops(body)[-1]
    # wgmma dots read their rings asynchronously: a slot is free again only once the
    # group that read it has completed, so the copies go after the dots (whose lowering
    # waits for all groups but the newest), into the slot read one iteration earlier.
    # Rings read into registers are refilled in the slot just read, once the dots that
    # read it are done with it.
    refills = None if loop.wgmma else _after_readers(loop)
    _read_slots(loop, counter, phase)
    if not loop.wgmma:  # insert-barriers orders each slot's reads before its refill
        following, ahead_next = _issue_ahead(loop, counter, ahead, refills)
    else:
        with ir.InsertionPoint(_refill_point(body)), yield_op.location:
            # Every warpgroup has passed its wait for the previous iteration's group (the
            # dots' lowering) before any thread refills that group's slots.
            barrier = tilegpu.barrier()
        following, ahead_next = _issue_ahead(loop, counter, ahead, [(barrier, loop.loads)])
        _keep_wgmma_in_flight(loop)
    with ir.InsertionPoint(yield_op), yield_op.location:
        extra = [following]
        if tma:
            wrapped = arith.extui(i32, arith.cmpi(arith.CmpIPredicate.eq, following, _constant(i32, 0)))
            extra.append(arith.xori(phase, wrapped))
        scf.YieldOp(list(yield_op.operands) + ahead_next + extra)
    yield_op.erase()
    _release_rings(loop)
    _forward_unused_carried(loop)


def _after_readers(loop: _Loop) -> list[tuple[ir.Operation, list[_Load]]]:
    """Where a loop whose rings have S-1 slots refills each: right after the last op of
    the body holding a dot that reads its load (tilegpu-optimize-dot-operands reads a
    dot's K slices at the dot, so those reads end there). In attention, K's ring is
    refilled after q @ k, before the softmax, and V's after p @ v. Grouped by that op
    (a dot, or an op holding one: never one the reads replace), in program order. Where
    the addresses read a loaded table, all after the last such op (see the header)."""
    ops = block_ops(loop.body)
    position = {op: i for i, op in enumerate(ops)}
    after: dict[int, list[_Load]] = {}
    for load in loop.loads:
        last = max(position[_ancestor_in(loop.body, dot)] for dot in dots_reached(load.op.results[0], (0, 1)))
        after.setdefault(last, []).append(load)
    if _reads_tables(loop.slice):
        return [(ops[max(after)], list(loop.loads))]
    return [(ops[index], loads) for index, loads in sorted(after.items())]


def _refill_point(body: ir.Block) -> ir.Operation:
    """Where a wgmma loop refills the slots its previous group read: at the end of the
    body, unless ops with regions follow the last dot (a flattened tile loop's epilogue
    and next-tile `if`s, tile-flatten-loops): then right after that dot, so that the
    copies are not held behind code that runs once per tile (there the refill came 39-49
    SASS instructions after the wgmma wait, 3-4 in the nest). The copies' addresses are
    a clone of their own slice, so they may go anywhere after the dots."""
    ops = block_ops(body)
    dots = [i for i, op in enumerate(ops) if op.name == "tile.dot"]
    if dots and any(op.regions for op in ops[dots[-1] + 1:-1]):
        return ops[dots[-1] + 1]
    return ops[-1]


WGMMA_PENDING_ATTR = "tilegpu.wgmma_pending"


def _keep_wgmma_in_flight(loop: _Loop) -> None:
    """A wgmma dot whose result only goes to the next iteration (as a carried value) may
    stay in flight: its lowering waits for all groups but the newest (WGMMA_PENDING_ATTR),
    and the loop's result passes through a wgmma_wait {0} before anything after the loop
    reads it. In the next iteration the carried value may feed the next dot's accumulator
    directly (a K loop: chained wgmma on one accumulator need no wait), or be read by
    other ops first (attention's `acc * alpha` before `p @ v`): a wgmma_wait {0} then goes
    right before the first of those, so the dots issued before it (attention's `q @ k`)
    start while the group is still running.

    Operands: B a ring slot, A a ring slot or registers (attention's p), or buffers
    staged before the loop; a buffer staged in this body (a load left unpipelined) is
    rewritten by the next iteration while the group could still be reading it. An f16
    accumulator always waits for its group (dot_wgmma.py), so it is left as it is."""
    body = loop.body
    yield_op = block_ops(body)[-1]
    for op in block_ops(body):
        if op.name != "tile.dot" or not _stable_operands(op, loop):
            continue
        if isinstance(tensor_type(op.results[0].type).element_type, ir.F16Type):
            continue
        uses = list(op.results[0].uses)
        to_yield = [u for u in uses if _user(u) == yield_op]
        if len(to_yield) != 1:
            continue
        later = [u for u in uses if _user(u) != yield_op]
        if not _waits_inside_ifs(op, later, body):
            continue
        position = to_yield[0].operand_number
        arg = body.arguments[1 + position]
        fresh = fresh_accumulator(op.operands[2])
        reset = _owner(op.operands[2]) if fresh is not None and fresh[0] == arg and \
            len(list(op.operands[2].uses)) == 1 else None
        readers = [u for u in arg.uses if not (_user(u) == op and u.operand_number == 2) and (reset is None or _user(u) != reset)]
        if readers:
            position_of = {o: i for i, o in enumerate(block_ops(body))}.__getitem__  # waits were added
            first = min((_ancestor_in(body, _user(u)) for u in readers), key=position_of)
            if position_of(first) > position_of(op):
                continue  # read after the dot in the same iteration: keep the simple form
            with ir.InsertionPoint(first), first.location:
                waited = tilegpu.wgmma_wait(arg, 0)
            for u in readers:
                _user(u).operands[u.operand_number] = waited
        for block_uses in _by_block(later):
            first = min((_user(u) for u in block_uses), key=lambda o: block_ops(o.block).index(o))
            with ir.InsertionPoint(first), first.location:
                waited = tilegpu.wgmma_wait(op.results[0], 0)
            for u in block_uses:
                _user(u).operands[u.operand_number] = waited
        op.attributes[WGMMA_PENDING_ATTR] = i32_attr(1)
        carried = loop.op.results[position]
        with ir.InsertionPoint.after(loop.op), loop.op.location:
            waited = tilegpu.wgmma_wait(carried, 0)
        for later in list(carried.uses):
            owner = later.owner.operation if hasattr(later.owner, "operation") else later.owner
            if owner != _owner(waited):
                owner.operands[later.operand_number] = waited


def _waits_inside_ifs(dot: ir.Operation, uses: list, body: ir.Block) -> bool:
    """Whether every use of the dot's result besides the yield lies inside an scf.if after
    the dot (a flattened persistent loop's epilogue, run on a tile's last K step): a
    wgmma_wait there lets the group stay in flight on every other iteration."""
    order = {o: i for i, o in enumerate(block_ops(body))}
    for use in uses:
        user = _user(use)
        if user.block == body:
            return False
        top = _ancestor_in(body, user)
        if top.name != "scf.if" or order[top] < order[dot]:
            return False
    return True


def _by_block(uses: list) -> list[list]:
    groups: list[tuple[ir.Block, list]] = []
    for use in uses:
        block = _user(use).block
        for seen, members in groups:
            if seen == block:
                members.append(use)
                break
        else:
            groups.append((block, [use]))
    return [members for _, members in groups]


def _stable_operands(op: ir.Operation, loop: _Loop) -> bool:
    """Whether the dot's A and B stay unchanged while its group runs on into the next
    iteration: B a ring slot; A a ring slot, registers, or a buffer made before the loop."""
    a, b = op.operands[0], op.operands[1]
    if _owner(b) is None or _owner(b).name != "tilegpu.memdesc_index":
        return False
    if not tilegpu.is_memdesc(a.type):
        return True
    owner = _owner(a)
    return owner is not None and (owner.name == "tilegpu.memdesc_index" or not _inside(owner, loop.op))


def _ancestor_in(block: ir.Block, op: ir.Operation) -> ir.Operation:
    while op.block != block:
        op = op.parent
    return op


def _forward_unused_carried(loop: _Loop) -> None:
    """A carried value that only fed the pipelined addresses (the original `a_ptrs`) now
    only updates itself: yield it unchanged, so canonicalisation drops it and its update
    instead of keeping a tensor of pointers alive in registers for nothing."""
    body = loop.body
    yield_op = block_ops(body)[-1]
    for j in loop.slice.carried:
        arg = body.arguments[1 + j]
        if has_uses(loop.op.results[j]) or not _only_feeds(arg, yield_op, j):
            continue
        yield_op.operands[j] = arg
    erase_dead_ops(loop.op)


def _only_feeds(value: ir.Value, yield_op: ir.Operation, position: int) -> bool:
    """Whether `value` reaches nothing but operand `position` of the yield, through pure,
    region-free ops of the body."""
    pending, seen = [value], set()
    while pending:
        for use in list(pending.pop().uses):
            user = use.owner.operation if hasattr(use.owner, "operation") else use.owner
            if user == yield_op:
                if use.operand_number != position:
                    return False
                continue
            if user.block != yield_op.block or user.regions or not is_pure(user):
                return False
            if user not in seen:
                seen.add(user)
                pending.extend(user.results)
    return True


# ----------------------------------------------------------------------------- warp specialisation

# A warp-specialised loop (issue 27; `tl.range(..., warp_specialize=True)` with
# TILEC_WARP_SPECIALIZE=1, sm_90) keeps the kernel's num_warps consumer warps and their
# layouts, and adds one producer warpgroup, of which one warp issues every TMA copy of
# the loop: its own loop over the same iterations, each waiting until the consumers have
# freed the iteration's slot (the ring's `empty` mbarriers, one arrival per consumer
# warp), then copying into it (its `full` mbarrier, as without specialisation). The
# consumers' loop keeps its waits on `full` and, where it refilled the slot read one
# iteration earlier, frees it instead (arrive_barrier). The producers give registers to
# the consumers (setmaxnreg under a .maxnreg of 65536 / threads): with eight consumer
# warps 40 and 232 a thread. (The compile driver gives a 4-warp kernel whose accumulator
# would take over 128 registers a thread 8 consumer warps: _warp_specialized_warps.)
PRODUCER_WARPS = 4
_REGISTERS = {8: (40, 232)}  # consumer warps -> (producer, consumer) registers a thread


class _NotSpecializable(Exception):
    pass


def _specializable(loop: _Loop, num_warps: int) -> bool:
    """Whether `loop` is one tilec specialises: marked tile.warp_specialize, every load a
    TMA copy read by wgmma, addresses computed without loads or tensors, nested only in
    scf.ifs (each side of the split must run the loop's iterations alike) whose
    conditions, like what else the producer reads from outside the loop, come from pure
    ops; num_warps a multiple of a warpgroup."""
    if WARP_SPECIALIZE_ATTR not in loop.op.attributes or num_warps % 4 or not loop.wgmma:
        return False
    if not all(load.is_tma for load in loop.loads) or _reads_tables(loop.slice):
        return False
    if any(op.name == "tile.load" or any(is_tensor(r.type) for r in op.results) for op in loop.slice.ops):
        return False
    try:
        for holder, _ in _branches(loop.op):  # (the producer's copy of an if yields nothing)
            if holder.name != "scf.if":
                return False
        return all(_materializable(value) for value in _outside_needs(loop))
    except _NotSpecializable:
        return False


def _branches(op: ir.Operation) -> list[tuple[ir.Operation, int]]:
    """The ops holding `op` up to the function's body, outermost first, each with the
    index of the region `op` is in."""
    chain = []
    while op.parent.name != "func.func":
        holder = op.parent
        chain.append((holder, _region_index(holder, op)))
        op = holder
    return list(reversed(chain))


def _outside_needs(loop: _Loop) -> list[ir.Value]:
    """The values defined outside the loop that its producer copy reads: the conditions
    of the ifs holding it, its bounds, the initial carried values of its address slice,
    and what the slice and the loads' tensor maps and offsets read from outside."""
    op = loop.op
    needs = [holder.operands[0] for holder, _ in _branches(op)] + list(op.operands)[:3]
    needs += [list(op.operands)[3 + j] for j in loop.slice.carried]
    for inner in loop.slice.ops:
        needs += list(inner.operands) + (_free_values(inner) if len(inner.regions) else [])
    needs += [root for load in loop.loads for root in _roots(load)]
    seen, outside = set(), []
    for value in needs:
        if value not in seen and not _inside_loop(value, op):
            seen.add(value)
            outside.append(value)
    return outside


def _materializable(value: ir.Value) -> bool:
    """Whether _materialize can give the producer `value` (see there)."""
    owner = _owner(value)
    if owner is None:
        return _holder(value).name == "func.func"
    if owner.parent.name == "func.func":
        return True
    return is_pure(owner) and not len(owner.regions) and all(_materializable(v) for v in owner.operands)


def _materialize(value: ir.Value, mapping: dict[ir.Value, ir.Value]) -> ir.Value:
    """`value` as the producer's region (at the insertion point; the region sits in the
    function's body right before the loop's outermost holder) can read it: the
    function's arguments and values of the body as they are (they come before the
    region); what is computed inside the loop's holders (pure, region-free ops) cloned,
    once (`mapping`)."""
    if value in mapping:
        return mapping[value]
    owner = _owner(value)
    if owner is None or owner.parent.name == "func.func":
        return value
    for operand in owner.operands:
        _materialize(operand, mapping)
    clone_reading(owner, mapping)
    return mapping[value]


def _pipeline_warp_specialized(loop: _Loop, num_warps: int) -> None:
    slots = loop.slots
    i64 = ir.IntegerType.get_signless(64)
    branches = _branches(loop.op)
    top = branches[0][0] if branches else loop.op  # the function body's op holding the loop
    producer_regs, consumer_regs = _REGISTERS.get(num_warps, (0, 0))
    # The rings and both kinds of mbarriers before the split: every warp meets the
    # barrier that publishes their initialisation.
    with ir.InsertionPoint(top), loop.op.location:
        for load in loop.loads:
            ring = ir.RankedTensorType.get([slots] + list(load.buffer.shape), load.buffer.element_type,
                                           load.buffer.encoding)
            load.ring = tilegpu.local_alloc(tilegpu.memdesc_type(ring))
            load.barriers = tilegpu.local_alloc(tilegpu.memdesc_type(ir.RankedTensorType.get([slots], i64)))
            tilegpu.init_barriers(load.barriers)
        empty = tilegpu.local_alloc(tilegpu.memdesc_type(ir.RankedTensorType.get([slots], i64)))
        tilegpu.init_barriers(empty).attributes[tilegpu.ARRIVE_COUNT_ATTR] = i32_attr(num_warps)
        _, region = tilegpu.warp_specialize(producer_regs, consumer_regs)
    _producer(loop, region, empty)
    _consumer(loop, empty)


def _producer(loop: _Loop, region: ir.Block, empty: ir.Value) -> None:
    """The region: the loop's iterations again, under the same conditions, each waiting
    for its slot to be free (the `empty` barrier's phase before the one the consumers
    complete: the first pass through the ring waits for nothing), then copying into it."""
    i1, i32 = ir.IntegerType.get_signless(1), ir.IntegerType.get_signless(32)
    op, body = loop.op, loop.body
    lower, upper, step = list(op.operands)[:3]
    inits = list(op.operands)[3:]
    mapping: dict[ir.Value, ir.Value] = {}
    with ir.InsertionPoint(region), op.location:
        end = create_op("gpu.yield", [])
    place = ir.InsertionPoint(end)
    for holder, index in _branches(op):  # the ifs holding the loop, their conditions again
        with place, op.location:
            condition = _materialize(holder.operands[0], mapping)
            if index == 1:  # the else branch
                condition = arith.xori(condition, _constant(i1, 1))
            guard = scf.IfOp(condition)
        with ir.InsertionPoint(guard.then_block), op.location:
            place = ir.InsertionPoint(scf.YieldOp([]))
    with place, op.location:
        for value in _outside_needs(loop):
            _materialize(value, mapping)
        bounds = [mapping.get(v, v) for v in (lower, upper, step)]
        zero = _constant(i32, 0)
        producer = scf.ForOp(*bounds, [mapping.get(inits[j], inits[j]) for j in loop.slice.carried] + [zero, zero])
    with ir.InsertionPoint(producer.body), op.location:
        args = list(producer.body.arguments)
        slot, phase = args[-2], args[-1]
        own = {**mapping, body.arguments[0]: args[0]}
        own.update({body.arguments[1 + j]: arg for j, arg in zip(loop.slice.carried, args[1:-2])})
        tilegpu.wait_barrier(tilegpu.memdesc_index(empty, slot), arith.xori(phase, _constant(i32, 1)))
        true = _constant(i1, 1)
        own = _clone_slice(loop.slice, own, true)
        _issue_copies(loop, loop.loads, own, true, slot, None, commit=False)
        yielded = list(block_ops(body)[-1].operands)
        following, wraps = _next_slot(slot, loop.slots)
        scf.YieldOp([own.get(yielded[j], yielded[j]) for j in loop.slice.carried]
                    + [following, arith.xori(phase, arith.extui(i32, wraps))])


def _region_index(holder: ir.Operation, inner: ir.Operation) -> int:
    for index, region in enumerate(holder.regions):
        for block in region.blocks:
            if any(candidate == inner for candidate in block_ops(block)):
                return index
    raise _NotSpecializable("the loop's place in its if")


def _holder(argument: ir.Value) -> ir.Operation:
    """The op whose region's block has `argument` (a block argument)."""
    holder = argument.owner.owner
    return holder.operation if hasattr(holder, "operation") else holder


def _inside_loop(value: ir.Value, loop: ir.Operation) -> bool:
    owner = _owner(value)
    if owner is None:
        holder = _holder(value)
        return holder == loop or _inside(holder, loop)
    return _inside(owner, loop)


def _consumer(loop: _Loop, empty: ir.Value) -> None:
    """The loop itself: waits on each load's `full` barrier as without specialisation,
    and where it refilled the slot read one iteration earlier, frees it (an arrival of
    each consumer warp on that slot's `empty` barrier, from the second iteration on)."""
    i32 = ir.IntegerType.get_signless(32)
    zero = None
    with ir.InsertionPoint(loop.op), loop.op.location:
        zero = _constant(i32, 0)
    _rebuild_loop(loop, [zero, zero])
    body = loop.body
    counter, phase = body.arguments[-2], body.arguments[-1]
    yield_op = block_ops(body)[-1]
    _read_slots(loop, counter, phase)
    iv, lower = body.arguments[0], loop.op.operands[0]
    with ir.InsertionPoint(_refill_point(body)), yield_op.location:
        freed = tilegpu.memdesc_index(empty, _previous_slot(counter, loop.slots))
        _owner(freed).attributes[SLOT_ATTR] = i32_attr(loop.slots - 1)
        tilegpu.arrive_barrier(freed, arith.cmpi(arith.CmpIPredicate.ne, iv, lower))
    _keep_wgmma_in_flight(loop)
    with ir.InsertionPoint(yield_op), yield_op.location:
        following, wraps = _next_slot(counter, loop.slots)
        scf.YieldOp(list(yield_op.operands) + [following, arith.xori(phase, arith.extui(i32, wraps))])
    yield_op.erase()
    _release_rings(loop, [empty])
    _forward_unused_carried(loop)


# ----------------------------------------------------------------------------- the pass


def _loops_innermost_first(fn: ir.Operation) -> list[ir.Operation]:
    return [op for op in walk_postorder(fn) if op.name == "scf.for"]


@register_pass("tilegpu-pipeline", "Pipeline the loads feeding tl.dot in loops through cp.async rings",
               **{"num-stages": 3, "warp-specialize": False, "overlap-prologue": False})
def pipeline_pass(module_op: ir.Operation, num_stages: int = 3, warp_specialize: bool = False,
                  overlap_prologue: bool = False) -> None:
    if tilegpu.TARGET_ATTR not in module_op.attributes:
        return
    target = Target.parse(tilegpu.target_of(module_op))
    if not target.at_least(ASYNC_COPY_CAPABILITY):
        return
    num_warps = tilegpu.num_warps_of(module_op)
    for fn in functions(module_op):
        streamed: list[_Loop] = []  # pipelined through cp.async rings only
        special = _first_specializable(fn, num_stages, num_warps) if warp_specialize else None
        for loop in _loops_innermost_first(fn):
            analysis = AxisInfoAnalysis(fn)  # fresh: earlier loops were rewritten
            plan = _plan(loop, num_stages, analysis)
            if plan is not None and _reads_tables(plan.slice) and _prefetch_tables(plan):
                plan = _plan(plan.op, num_stages, AxisInfoAnalysis(fn))
            if plan is None:
                continue
            if warp_specialize and (special is None or loop == special) and _specializable(plan, num_warps) and \
                    tilegpu.PRODUCER_WARPS_ATTR not in module_op.attributes:
                _pipeline_warp_specialized(plan, num_warps)
                module_op.attributes[tilegpu.PRODUCER_WARPS_ATTR] = i32_attr(PRODUCER_WARPS)
                continue
            _pipeline(plan)
            if not any(load.is_tma for load in plan.loads):
                streamed.append(plan)
        # Once every loop is pipelined, so that each sees the copies of the others.
        for plan in streamed if overlap_prologue else ():
            overlap_next_prologue(plan.op, [load.ring for load in plan.loads], plan.wgmma, num_warps,
                                  target.max_shared_bytes)
        _stage_after_loads(fn)


def _first_specializable(fn: ir.Operation, num_stages: int, num_warps: int) -> ir.Operation | None:
    """The loop to specialise where several are marked: the first in program order (a
    causal attention's long off-band loop, not the short on-band one after it). Only
    loops without pointer loads are planned here (planning those builds ops); None where
    none qualifies, and the pass then takes the first it meets."""
    analysis = AxisInfoAnalysis(fn)
    for loop in reversed(_loops_innermost_first(fn)):  # parents first, siblings in program order
        if WARP_SPECIALIZE_ATTR not in loop.attributes or \
                any(op.name == "tile.load" for op in block_ops(loop.regions[0].blocks[0])):
            continue
        plan = _plan(loop, num_stages, analysis)
        if plan is not None and _specializable(plan, num_warps):
            return loop
    return None


def _stage_after_loads(fn: ir.Operation) -> None:
    """Moves each local_alloc that stages a loaded tile (one the pipeline left a load)
    right after its load, when both are in one block (see the header)."""
    for op in walk_postorder(fn):
        if op.name != "tilegpu.local_alloc" or len(op.operands) != 1:
            continue
        load = _owner(op.operands[0])
        if load is not None and load.name == "tile.load" and load.block == op.block:
            op.move_after(load)

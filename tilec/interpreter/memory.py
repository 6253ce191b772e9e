"""Virtual memory for the interpreter: kernels compute addresses, NumPy holds the bytes.

A kernel sees its array arguments as pointers and reaches elements by pointer arithmetic,
so the interpreter must turn arbitrary computed addresses back into array elements, and
must notice when an address is wrong (the GPU would fault, or worse, silently corrupt
memory). Real host addresses would make such bugs undetectable: an address past one
array can land in another Python object. Instead every argument's *buffer* (the whole
allocation it lives in: the owning NumPy array, or the torch storage) gets its own
*virtual* address range:

    buffer i  ->  [FIRST_BASE + i * REGION_SPAN, ... + its size in bytes)

Ranges are 2**40 bytes apart, so an address is decoded with a shift and a mask, every
buffer base is aligned far beyond 16 bytes, and a pointer that runs off one buffer lands
in unmapped space (never in the next buffer) until it is 1 TiB away. A view's pointer is
its buffer's base plus its byte offset inside the buffer, so views of one array share
memory exactly as on the GPU, and reading a view's parent outside the view is legal.

Virtual addresses start at 2**48, above every address a process is given on x86-64 and
arm64, so a real host address is never mistaken for a virtual one.

Every access is checked on its *active* lanes only (masked-off lanes are never touched):
the element must lie entirely inside one buffer, at an offset aligned to the element
size. A bad access raises `MemoryFault`, which the launcher turns into an
`OutOfBoundsAccess` naming the kernel line and program (see launcher.py).

Integer addresses. A kernel may also load real addresses from memory -- a table built on
the host with `x.data_ptr()` -- and convert them to pointers (`.to(tl.pointer_type(...))`,
grouped GEMM's table of matrices). Each such conversion goes through
`pointers_from_integers`: an address inside a mapped buffer's real memory becomes that
buffer's virtual address; any other one is looked up among the NumPy arrays and torch
tensors alive in the process (`LiveArrays`), and the buffer holding it is mapped as one
more region, so the pointer is bounds-checked inside that buffer from then on exactly as
an argument's is. Translating at the conversion, not at the access, keeps that check
precise: a block that runs off the end of the array fails, rather than landing in
whichever array the allocator placed next. An address inside no live array stays as it
is, and accessing through it fails like any address outside every buffer.
"""
from __future__ import annotations

import ctypes
import gc
import sys
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..errors import UserError

REGION_SPAN = 1 << 40
FIRST_BASE = 1 << 48
_REGION_SHIFT = np.uint64(40)
_OFFSET_MASK = np.uint64(REGION_SPAN - 1)

try:  # NumPy >= 2.0 moved byte_bounds
    from numpy.lib.array_utils import byte_bounds as _byte_bounds
except ImportError:  # pragma: no cover - NumPy 1.x
    _byte_bounds = np.byte_bounds


class OutOfBoundsAccess(UserError, IndexError):
    """A kernel loaded or stored outside the memory of its array arguments.

    Also raised for misaligned accesses and for stores into read-only arrays. The
    message names the kernel, the source line, the program id and the offending element;
    the same facts are available as attributes.
    """

    def __init__(self, message: str, *, kernel: str = "", filename: str = "", lineno: int = 0,
                 source_line: str = "", program_id: tuple[int, int, int] = (0, 0, 0),
                 access: str = "", argument: str | None = None, element_offset: int | None = None):
        super().__init__(message)
        self.kernel = kernel
        self.filename = filename
        self.lineno = lineno
        self.source_line = source_line
        self.program_id = program_id
        self.access = access
        self.argument = argument
        self.element_offset = element_offset


class MemoryFault(Exception):
    """A bad access found by `Memory`; carries what the launcher needs for its message."""

    def __init__(self, access: str, detail: str, argument: str | None, element_offset: int | None):
        super().__init__(detail)
        self.access = access
        self.detail = detail
        self.argument = argument
        self.element_offset = element_offset


@dataclass
class _Argument:
    """Where a kernel's pointers start: an array argument, or an array the kernel reached
    through an integer address (`name` None); error messages name the nearest one."""
    name: str | None  # the parameter's name; None for an array found through an integer address
    address: int  # virtual address of its first element
    description: str  # e.g. "numpy float32 array of shape (1000,)"
    region: int
    real_address: int = 0  # for a found array: the address the kernel had for its first element

    @property
    def label(self) -> str:
        if self.name is not None:
            return f"argument '{self.name}' ({self.description})"
        return (f"the {self.description} at address {self.real_address:#x} (reached through an "
                "integer address the kernel converted to a pointer)")


@dataclass
class _Region:
    lo: int  # real host address of the buffer's first byte
    hi: int  # one past its last byte
    writable: bool
    owners: list[Any]  # keep the user's objects alive while we alias their memory
    base: int = 0  # virtual address of the first byte
    data: np.ndarray | None = None  # uint8 alias of the buffer
    typed: dict[np.dtype, np.ndarray] = field(default_factory=dict)
    # Other addresses of the same bytes: the device range of a CUDA storage whose host copy
    # this region is, found through an integer (device) address.
    aliases: list[tuple[int, int]] = field(default_factory=list)

    @property
    def real_ranges(self) -> list[tuple[int, int]]:
        """The [start, end) ranges of real addresses that name this region's bytes."""
        return [(self.lo, self.hi), *self.aliases]

    @property
    def size(self) -> int:
        return self.hi - self.lo


def is_torch_tensor(obj: Any) -> bool:
    return type(obj).__module__.startswith("torch") and hasattr(obj, "untyped_storage")


def _host_span(obj: Any) -> tuple[int, int, int, bool, Any]:
    """(pointer to first element, buffer start, buffer end, writable, owner) in real addresses."""
    if is_torch_tensor(obj):
        storage = obj.untyped_storage()
        lo = int(storage.data_ptr())
        return int(obj.data_ptr()), lo, lo + int(storage.nbytes()), True, obj
    if isinstance(obj, np.ndarray):
        # Follow views to the array that owns the memory (NumPy collapses view chains, but
        # a view of an array that itself wraps a foreign buffer stops at that array).
        root = obj
        while isinstance(root.base, np.ndarray):
            root = root.base
        lo, hi = _byte_bounds(root)
        return int(obj.__array_interface__["data"][0]), int(lo), int(hi), bool(root.flags.writeable), root
    raise TypeError(f"the interpreter cannot address a {type(obj).__name__}")


def _alias(lo: int, size: int) -> np.ndarray:
    """A writable uint8 NumPy array over real memory [lo, lo + size)."""
    if size == 0:
        return np.empty(0, dtype=np.uint8)
    buffer = (ctypes.c_uint8 * size).from_address(lo)
    buffer._tilec_memory_alias = True  # not a user's array: LiveArrays passes it by
    return np.frombuffer(buffer, dtype=np.uint8)


def _is_memory_alias(obj: Any) -> bool:
    """True for the arrays `_alias` makes (and views of them), which a `Memory` still alive
    from an earlier launch may hold: finding one instead of the user's array would lose its
    description and its read-only flag."""
    if not isinstance(obj, np.ndarray):
        return False
    while isinstance(obj.base, np.ndarray):
        obj = obj.base
    return getattr(obj.base, "_tilec_memory_alias", False)


def _describe(obj: Any) -> str:
    if is_torch_tensor(obj):
        device = "" if obj.device.type == "cpu" else f" on {obj.device}"
        return f"torch {str(obj.dtype).replace('torch.', '')} tensor of shape {tuple(obj.shape)}{device}"
    return f"numpy {obj.dtype} array of shape {obj.shape}"


def host_only(obj: Any) -> Any | None:
    """The default `Memory(to_host=...)`: host arrays are addressed in place, nothing else."""
    if is_torch_tensor(obj):
        return obj if obj.device.type == "cpu" else None
    return obj if isinstance(obj, np.ndarray) else None


# Arrays found by earlier lookups, so that launch after launch over the same table of
# addresses does not scan the process again. Weak: an array freed since is not revived,
# and its address (which the allocator may reuse) is not trusted.
_recently_found: list[weakref.ref] = []
_RECENT_LIMIT = 64


class LiveArrays:
    """Finds the NumPy array or torch tensor, alive somewhere in the process, whose buffer
    holds a real address.

    There is no registry of arrays, so the first lookup a cache of recent finds cannot
    answer collects every array the process holds: those the garbage collector tracks
    (torch tensors, and NumPy arrays inside lists, dicts, objects, closures) and those
    held only by the local variables of the functions running in this thread (NumPy
    arrays are not tracked themselves). About a tenth of a second per million objects, once per launch, and only
    for a launch that converts an integer address outside its arguments.
    """

    def __init__(self):
        self._spans: list[tuple[int, int, Any]] | None = None  # (buffer start, end, array)

    def find(self, address: int) -> Any | None:
        """The array whose buffer holds `address` (its device's address space for a CUDA
        tensor), or None."""
        for ref in list(_recently_found):
            obj = ref()
            if obj is None:
                _recently_found.remove(ref)
                continue
            span = _buffer_span(obj)
            if span is not None and span[0] <= address < span[1]:
                return obj
        if self._spans is None:
            self._spans = []
            for obj in _live_array_objects():
                span = None if _is_memory_alias(obj) else _buffer_span(obj)
                if span is not None:
                    self._spans.append((*span, obj))
        for lo, hi, obj in self._spans:
            if lo <= address < hi:
                try:
                    _recently_found.append(weakref.ref(obj))
                    del _recently_found[:-_RECENT_LIMIT]
                except TypeError:  # an array type without weak references: found again next time
                    pass
                return obj
        return None


def _buffer_span(obj: Any) -> tuple[int, int] | None:
    """[start, end) of the buffer an array lives in; None for an empty or unaddressable one."""
    try:
        _, lo, hi, _, _ = _host_span(obj)
    except Exception:  # noqa: BLE001  sparse, meta or otherwise storage-less tensors
        return None
    return (lo, hi) if lo and hi > lo else None


def _live_array_objects() -> list[Any]:
    """Every NumPy array and torch tensor the process holds (see `LiveArrays`)."""
    torch = sys.modules.get("torch")
    # Types are tested with issubclass(type(x)): isinstance would ask odd objects for their
    # __class__, which some modules turn into deprecation warnings.
    kinds: tuple[type, ...] = (np.ndarray,) if torch is None else (np.ndarray, torch.Tensor)
    holders = gc.get_objects()
    frame = sys._getframe()  # the launching thread's running functions (others' are left alone)
    while frame is not None:
        holders.append(frame.f_locals)
        frame = frame.f_back
    found, seen = [], set()
    objects = [*holders, *gc.get_referents(*holders)]
    while objects:
        # CPython stops tracking a dict or tuple that holds only untracked objects (as a
        # dict of NumPy arrays): such containers are searched here, the next level down.
        untracked = []
        for obj in objects:
            kind = type(obj)
            if issubclass(kind, kinds):
                if id(obj) not in seen:
                    seen.add(id(obj))
                    found.append(obj)
            elif (kind is dict or kind is tuple) and not gc.is_tracked(obj):
                untracked.append(obj)
        objects = gc.get_referents(*untracked) if untracked else []
    return found


class Memory:
    """The virtual address space of one launch: one region per distinct buffer."""

    def __init__(self, arrays: dict[str, Any], to_host: Callable[[Any], Any | None] = host_only):
        """`arrays` maps argument names to host arrays (NumPy arrays, CPU torch tensors).

        `to_host(array)` gives the host array through which an array found by an integer
        address is accessed (itself for a host array, a host copy the caller writes back
        for a device one), or None when it cannot be."""
        spans = {name: _host_span(obj) for name, obj in arrays.items()}
        # Arguments whose buffers overlap (views of one array, or two arrays over one
        # foreign buffer) must share a region, or a store through one would be invisible
        # to the bounds of the other. Merge overlapping [lo, hi) ranges.
        self._regions: list[_Region] = []
        for _, lo, hi, writable, owner in sorted(spans.values(), key=lambda s: (s[1], s[2])):
            last = self._regions[-1] if self._regions else None
            if last is not None and lo < last.hi:
                last.hi = max(last.hi, hi)
                last.writable = last.writable and writable
                last.owners.append(owner)
            else:
                self._regions.append(_Region(lo, hi, writable, [owner]))
        for index, region in enumerate(self._regions):
            if region.size >= REGION_SPAN:
                raise ValueError("the interpreter cannot address a buffer of 1 TiB or more")
            region.base = FIRST_BASE + index * REGION_SPAN
            region.data = _alias(region.lo, region.size)
        self._sizes = np.array([r.size for r in self._regions], dtype=np.int64)
        self._arguments: dict[str, _Argument] = {}
        for name, (ptr, lo, hi, _, _) in spans.items():
            index = next(i for i, r in enumerate(self._regions) if r.lo <= lo and hi <= r.hi)
            region = self._regions[index]
            self._arguments[name] = _Argument(name, region.base + (ptr - region.lo), _describe(arrays[name]), index)
        self._found: list[_Argument] = []  # arrays reached through integer addresses
        self._to_host = to_host
        self._live = LiveArrays()

    def address_of(self, name: str) -> int:
        """The virtual address of argument `name`'s first element."""
        return self._arguments[name].address

    # ------------------------------------------------------------------ integer addresses
    def pointers_from_integers(self, addresses: np.ndarray) -> np.ndarray:
        """`addresses` (uint64) as pointers of this launch: a real address inside a buffer
        of the process becomes that buffer's virtual address (mapping the buffer if no
        argument lives in it); virtual addresses, null and addresses inside no live array
        stay as they are."""
        result = np.array(addresses, dtype=np.uint64)
        flat = result.reshape(-1)
        pending = (flat != 0) & (flat < np.uint64(FIRST_BASE))
        while pending.any():
            address = int(flat[np.flatnonzero(pending)[0]])
            region = self._region_holding(address)
            if region is None and self._map_array_at(address):
                region = self._region_holding(address)
            if region is None:
                pending &= flat != np.uint64(address)  # stays as it is: an access through it fails
                continue
            for start, end in region.real_ranges:  # every lane this region holds, at once
                inside = pending & (flat >= np.uint64(start)) & (flat < np.uint64(end))
                flat[inside] += np.uint64(region.base - start)
                pending &= ~inside
        return result

    def _region_holding(self, address: int) -> _Region | None:
        """The region one of whose real address ranges holds real `address`."""
        for region in self._regions:
            if any(start <= address < end for start, end in region.real_ranges):
                return region
        return None

    def _map_array_at(self, address: int) -> bool:
        """Makes real `address` addressable: maps the live array holding it (or records its
        device range as an alias of the region of its host copy). False if none holds it."""
        found = self._live.find(address)
        host = None if found is None else self._to_host(found)
        if host is None:
            return False
        ptr, lo, hi, writable, owner = _host_span(host)
        found_lo = _buffer_span(found)[0]
        host_address = lo + (address - found_lo)
        region = self._region_holding(host_address)
        if region is None:
            if hi - lo >= REGION_SPAN:
                raise ValueError("the interpreter cannot address a buffer of 1 TiB or more")
            index = len(self._regions)
            region = _Region(lo, hi, writable, [owner], FIRST_BASE + index * REGION_SPAN, _alias(lo, hi - lo))
            self._regions.append(region)
            self._sizes = np.append(self._sizes, region.size)
            real = int(found.data_ptr()) if is_torch_tensor(found) else int(found.__array_interface__["data"][0])
            self._found.append(_Argument(None, region.base + (ptr - lo), _describe(found), index, real))
        if found is not host:  # a device array: its addresses name the host copy's bytes
            region.aliases.append((found_lo, found_lo + (hi - lo)))
        return True

    # ------------------------------------------------------------------ access
    def load(self, addresses: np.ndarray, mask: np.ndarray | None, other: np.ndarray | None,
             dtype: np.dtype, access: str = "load") -> np.ndarray:
        """Elements of `dtype` at `addresses` (uint64) where `mask`; `other` (or 0) elsewhere.
        `access` names the operation in error messages (a read: load, atomic_load, ...)."""
        shape = addresses.shape
        flat = addresses.reshape(-1)
        lanes = None if mask is None else np.flatnonzero(mask.reshape(-1))
        active = flat if lanes is None else flat[lanes]
        regions, index = self._check(access, active, lanes, dtype, shape)
        storage = _storage_dtype(dtype)
        values = np.empty(active.shape, dtype=storage)
        for r, selected in _by_region(regions):
            values[selected] = self._typed(r, storage)[index[selected]]
        if dtype == np.bool_:
            values = values != 0  # a bool in memory is any nonzero byte
        if lanes is None:
            return values.reshape(shape)
        if other is None:
            out = np.zeros(flat.shape, dtype=dtype)
        else:
            out = np.broadcast_to(np.asarray(other, dtype=dtype), shape).reshape(-1).copy()
        out[lanes] = values
        return out.reshape(shape)

    def store(self, addresses: np.ndarray, values: np.ndarray, mask: np.ndarray | None,
              access: str = "store") -> None:
        """Write `values` (same shape as `addresses`) where `mask`; `access` names the
        operation in error messages (store, atomic_store)."""
        flat = addresses.reshape(-1)
        data = np.broadcast_to(values, addresses.shape).reshape(-1)
        if mask is not None:
            lanes = np.flatnonzero(mask.reshape(-1))
            flat, data = flat[lanes], data[lanes]
        else:
            lanes = None
        regions, index = self._check(access, flat, lanes, data.dtype, addresses.shape)
        storage = _storage_dtype(data.dtype)
        data = data.astype(storage)
        groups = list(_by_region(regions))
        for r, selected in groups:  # refuse before writing anything, as for bounds
            if not self._regions[r].writable:
                arg = self._nearest_argument(int(flat[selected][0]))
                raise MemoryFault(access, f"{arg.label} is read-only", arg.name, None)
        for r, selected in groups:
            self._typed(r, storage)[index[selected]] = data[selected]

    def read_modify_write(self, access: str, addresses: np.ndarray, mask: np.ndarray | None, dtype: np.dtype,
                          update: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
        """An atomic operation: each active lane, in lane order, reads its element and writes
        `update(old, lanes)` back; returns what every lane read (0 on masked-off lanes).

        `update(old, lanes)` gets the values read by a group of lanes (their positions
        among the active lanes, in `lanes`) whose addresses are all different, and returns
        the values to write. Lanes sharing an address run in successive groups in lane
        order, so each sees the previous lane's write, as atomics executed one by one.
        """
        shape = addresses.shape
        flat = addresses.reshape(-1)
        lanes = None if mask is None else np.flatnonzero(np.broadcast_to(mask, shape).reshape(-1))
        active = flat if lanes is None else flat[lanes]
        regions, index = self._check(access, active, lanes, dtype, shape)
        for r, selected in _by_region(regions):
            if not self._regions[r].writable:
                arg = self._nearest_argument(int(active[selected][0]))
                raise MemoryFault(access, f"{arg.label} is read-only", arg.name, None)
        storage = _storage_dtype(dtype)
        old = np.zeros(flat.shape, dtype=dtype)
        targets = np.arange(flat.size) if lanes is None else lanes
        for group in _rounds(active):
            for r, selected in _by_region(regions[group]):
                positions = group[selected]
                view = self._typed(r, storage)
                elements = index[positions]
                current = view[elements]
                if dtype == np.bool_:
                    current = current != 0
                old[targets[positions]] = current
                view[elements] = np.asarray(update(current.astype(dtype, copy=False), positions)).astype(storage)
        return old.reshape(shape)

    def _typed(self, region: int, storage: np.dtype) -> np.ndarray:
        """The region's bytes viewed as `storage` elements (built once per dtype)."""
        r = self._regions[region]
        view = r.typed.get(storage)
        if view is None:
            k = storage.itemsize
            view = r.data[: r.size - r.size % k].view(storage)
            r.typed[storage] = view
        return view

    def _check(self, access: str, addresses: np.ndarray, lanes: np.ndarray | None,
               dtype: np.dtype, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """(region index, element index) of each address; raises MemoryFault on the first bad one."""
        itemsize = _storage_dtype(dtype).itemsize
        # Addresses below FIRST_BASE wrap around to huge values and fail `known`.
        relative = addresses - np.uint64(FIRST_BASE)
        region = relative >> _REGION_SHIFT
        offset = (relative & _OFFSET_MASK).astype(np.int64)
        known = region < len(self._regions)
        region = np.where(known, region, 0).astype(np.intp)
        sizes = self._sizes[region] if len(self._regions) else np.zeros(region.shape, np.int64)
        ok = known & (offset + itemsize <= sizes) & (offset % itemsize == 0)
        if not ok.all():
            bad = np.flatnonzero(~ok)
            self._fault(access, addresses, lanes, bad, dtype, shape)
        return region, offset // itemsize

    # ------------------------------------------------------------------ error messages
    def _nearest_argument(self, address: int) -> _Argument | None:
        """The argument (or array found through an integer address) whose buffer is nearest
        to `address` (None when none is near)."""
        best, best_distance = None, REGION_SPAN // 2
        for index, region in enumerate(self._regions):
            if region.base <= address < region.base + region.size:
                distance = 0
            else:
                distance = min(abs(address - region.base), abs(address - (region.base + region.size)))
            if distance < best_distance:
                best, best_distance = index, distance
        if best is None:
            return None
        candidates = [a for a in [*self._arguments.values(), *self._found] if a.region == best]
        below = [a for a in candidates if a.address <= address]
        return max(below, key=lambda a: a.address) if below else min(candidates, key=lambda a: a.address)

    def _fault(self, access: str, addresses: np.ndarray, lanes: np.ndarray | None, bad: np.ndarray,
               dtype: np.dtype, shape: tuple[int, ...]) -> None:
        first = int(bad[0])
        flat_lane = first if lanes is None else int(lanes[first])
        # Name the lane by its index in the block: 5, or (2, 3) in a 2-D block.
        lane = tuple(int(i) for i in np.unravel_index(flat_lane, shape)) if len(shape) > 1 else flat_lane
        address = int(addresses[first])
        itemsize = _storage_dtype(dtype).itemsize
        type_name = "bool" if dtype == np.bool_ else str(np.dtype(dtype))
        if shape == ():
            count = "the scalar access is invalid"
        else:
            count = f"{len(bad)} of {len(addresses)} active lanes are invalid; the first is lane {lane}"
        arg = self._nearest_argument(address)
        if arg is None:
            # A real address (below the virtual space) is one no live array holds.
            also = " (and of every live NumPy array and torch tensor)" if address < FIRST_BASE else ""
            raise MemoryFault(access, f"{count}, at address {address:#x}, which is outside the memory of "
                              f"every array argument{also}", None, None)
        region = self._regions[arg.region]
        delta = address - arg.address
        start = region.base - arg.address
        end = start + region.size
        if (address - region.base) % itemsize:
            raise MemoryFault(access, f"{count}: its address, byte offset {delta} from "
                              f"{arg.label}, is not aligned to the {itemsize}-byte size of {type_name}", arg.name, None)
        element = delta // itemsize
        lo_el, hi_el = start // itemsize, end // itemsize
        where = "beyond its end" if element >= hi_el else "before its start"
        raise MemoryFault(access, f"{count}: it {'reads' if access in _READS else 'writes'} {type_name} "
                          f"element offset {element} from {arg.label}, "
                          f"whose memory spans element offsets [{lo_el}, {hi_el}): {where}",
                          arg.name, element)


# The accesses that only read memory (the others write, or read and write).
_READS = ("load", "atomic_load", "atomic_poll")


def _storage_dtype(dtype: np.dtype) -> np.dtype:
    """How elements are kept in memory: bools as one byte each, the rest as themselves."""
    dtype = np.dtype(dtype)
    return np.dtype(np.uint8) if dtype == np.bool_ else dtype


def _by_region(regions: np.ndarray):
    """Yield (region index, lane selector) groups; one slice-free group in the common case."""
    if regions.size == 0:
        return
    first = int(regions[0])
    if (regions == first).all():
        yield first, slice(None)
        return
    for r in np.unique(regions):
        yield int(r), regions == r


def _rounds(addresses: np.ndarray):
    """Positions of `addresses` in groups of distinct addresses: the first occurrence of
    every address, then the second ones, and so on; each group in increasing position."""
    count = addresses.size
    if count == 0:
        return
    order = np.argsort(addresses, kind="stable")
    ordered = addresses[order]
    starts = np.ones(count, dtype=bool)
    starts[1:] = ordered[1:] != ordered[:-1]
    if starts.all():
        yield np.arange(count)
        return
    first = np.maximum.accumulate(np.where(starts, np.arange(count), 0))
    rank = np.empty(count, dtype=np.intp)
    rank[order] = np.arange(count) - first
    for r in range(int(rank.max()) + 1):
        yield np.flatnonzero(rank == r)

"""`@tilec.jit` and `kernel[grid](*args)`.

A launch binds the arguments, computes the specialisation key (types; integers equal
to 1 or divisible by 16; pointers 16-byte aligned; constexpr values; options), finds
the compiled kernel in memory, else on disk, else compiles it, and launches it through
the C++ launcher on the current stream (torch's when torch is present).
"""
from __future__ import annotations

import inspect
import os
import operator
import re
import sys
import weakref
from collections.abc import Mapping
from typing import Any, Callable, Sequence

from .. import config as _config_module
from ..backend.kernel_data import DUMP_SUFFIXES, dump_stage, options_cache_key, signature_specs
from ..errors import (LaunchError, LaunchOptionError, UsageError, dtype_argument_error, hide_internal_frames,
                      note_grid_function_error, too_many_arguments)
from ..frontend import KernelFunction
from ..frontend.kernel_function import definition_source, kernel_function_of
from ..language import core as tl
from ..language.aggregates import cache_key_parts as aggregate_cache_key_parts
from ..language.aggregates import is_user_aggregate_class
from ..language.compile_time import ConstexprFunction
from ..specialization import (ArgSpec, ArgumentLayout, flatten_aggregate_argument, flatten_descriptor_argument,
                              flatten_tuple_argument, is_aggregate_argument, is_tuple_argument)
from ..target import Target
from . import specialize
from .reinterpret import TensorWrapper, reinterpret  # noqa: F401  (also here, where Triton has them)
from ..tools.tensor_descriptor import descriptor_problem, is_tensor_descriptor
from .tma import TensorMap
from ..torch_compile import launch_outside_graphs, launched_in_torch_compile, torch_compile_check

# Element type names (torch's, NumPy's, tilec's) -> the short names of signatures, as
# Triton's triton.runtime.jit.type_canonicalisation_dict (test suites build types with it).
type_canonicalisation_dict = {
    **{short: short for short in tl.SIGNATURE_NAMES}, "void": "void",
    "bool": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "half": "fp16", "float16": "fp16", "bfloat16": "bf16", "float": "fp32", "float32": "fp32",
    "double": "fp64", "float64": "fp64",
    "float8e4nv": "fp8e4nv", "float8_e4m3fn": "fp8e4nv", "float8e5": "fp8e5", "float8_e5m2": "fp8e5",
    "float8e4b15": "fp8e4b15", "float8e4b8": "fp8e4b8", "float8_e4m3fnuz": "fp8e4b8",
    "float8e5b16": "fp8e5b16", "float8_e5m2fnuz": "fp8e5b16",
}

try:
    from .._launcher import GridCall as _GridCall
except ImportError:  # the extension is not built (or older than this file): launch through Python
    _GridCall = None

_config = _config_module.config

LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "debug", "enable_fp_fusion", "stream",
                  "target", "launch_cooperative_grid", "launch_pdl", "extern_libs")


class KernelInterface:
    """What `kernel[grid](...)` launches, as Triton's `triton.KernelInterface`: a subclass
    defines `run(*args, grid, warmup, **kwargs)`; `k[grid](*args)` is then
    `k.run(*args, grid=grid, warmup=False)` and `k.warmup(*args, grid=grid)` is
    `k.run(*args, grid=grid, warmup=True)`. JITFunction, Autotuner and Heuristics are
    ones (with faster paths of their own, and `run` taking `warmup=` too); libraries
    subclass it to wrap kernels (FlagGems' launch cache, say)."""

    def run(self, *args, grid, warmup, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define run(*args, grid, warmup, **kwargs)")

    def warmup(self, *args, grid, **kwargs):
        return self.run(*args, grid=grid, warmup=True, **kwargs)

    def __getitem__(self, grid) -> Callable:
        return lambda *args, **kwargs: self.run(*args, grid=grid, warmup=False, **kwargs)


def pop_warmup(kwargs: dict, arg_names: Sequence[str]) -> bool:
    """Takes Triton's `run(..., warmup=...)` flag out of a call's keyword arguments (left
    alone where the kernel has a parameter of that name)."""
    return bool(kwargs.pop("warmup")) if "warmup" in kwargs and "warmup" not in arg_names else False


class JITFunction(KernelFunction, KernelInterface):
    """A kernel: launch with `kernel[grid](*args, num_warps=4)`."""

    def __init__(self, fn: Callable, *, noinline: bool = False, debug: bool | None = None,
                 do_not_specialize: Sequence[str | int] = (), src: str | None = None):
        super().__init__(fn, noinline=noinline, debug=debug, src=src)
        self._do_not_specialize = tuple(do_not_specialize)
        self._derive_launch_state()
        _ALL_KERNELS.add(self)

    @property
    def src(self) -> str:
        """The kernel's source from its `def` line, as Triton's (FlagGems pastes it under
        decorators of its own); assigning to it is `update_src`."""
        return definition_source(self.__dict__["src"])

    @property
    def cache_key(self) -> str:
        """A hash of the source and of the @jit functions it calls (Triton's
        JITFunction.cache_key: libraries key their own caches on it)."""
        return self.cache_hash()

    @property
    def __globals__(self) -> dict:
        """The function's globals (Triton's JITFunction exposes them)."""
        return self.fn.__globals__

    @src.setter
    def src(self, new_src: str) -> None:
        self.update_src(new_src)

    def _source_changed(self) -> None:
        """A new source: the launch state follows the new parameters, and every kernel
        forgets what it compiled (callers included, whose keys hold this source)."""
        self._derive_launch_state()
        for kernel in list(_ALL_KERNELS):
            kernel._kernels.clear()
            kernel._by_spec.clear()
            kernel._warm.clear()
            kernel._cache_hash = None
            kernel.__dict__.pop("_checked_by_frontend", None)

    def _derive_launch_state(self) -> None:
        self.do_not_specialize = {self.arg_names[i] if isinstance(i, int) else i for i in self._do_not_specialize}
        self._kernels: dict[tuple, Any] = {}  # launch key (see _value_key) -> LoadedKernel
        self._by_spec: dict[tuple, Any] = {}  # (device, specialisation, options) -> LoadedKernel
        self._warm: dict[tuple, Any] = {}  # warmup's cheap key (as a launch's) -> LaunchableKernel
        # host descriptor arguments seen before (see _descriptor_argument)
        self._descriptors: dict[tuple, tuple] = {}
        self._param_defaults = [p.default if p.default is not inspect.Parameter.empty else _MISSING
                                for p in self.params]
        self._n_params = len(self.params)
        self._arg_index = {name: i for i, name in enumerate(self.arg_names)}
        # The launch options a call may pass by keyword: those no parameter is named after.
        self._option_names = frozenset(o for o in LAUNCH_OPTIONS if o not in self.arg_names)
        # Parameters after `*` (`def k(x, *, BLOCK: tl.constexpr)`) are passed by keyword only.
        self._n_positional = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in self.params)
        # `*args`/`**kwargs` serve @jit functions called from kernels; a launched kernel has none.
        self._variadic = [("*" if p.kind == p.VAR_POSITIONAL else "**") + p.name for p in self.params
                          if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        self._cache_hash: str | None = None
        self._key_fns = [_constexpr_key if i in self.constexprs else
                         _unspecialized_key if name in self.do_not_specialize else _value_key
                         for i, name in enumerate(self.arg_names)]
        self._fast_run = self._make_fast_run()

    # ------------------------------------------------------------------ user API
    def __getitem__(self, grid) -> Callable:
        """`kernel[grid]`: a callable taking the kernel's arguments and launch options."""
        if self._fast_run_torch is not (sys.modules.get("torch") is not None):
            if launched_in_torch_compile():  # torch.compile traces this launch: a graph break (tilec.torch_compile)
                return launch_outside_graphs(self, grid)
            self._fast_run = self._make_fast_run(self._fast_descriptors)
        if self._traced_by_torch_compile():  # torch's own check (no Python call of tilec's), made per torch
            return launch_outside_graphs(self, grid)
        if _GridCall is not None:  # calls _fast_run(grid, ...) from C; _bad_call reports binding errors
            return _GridCall(self._fast_run, grid, self._bad_call)
        fast_run = self._fast_run

        def launch(*args, **kwargs):  # the same in Python, where the extension is not built
            try:
                return fast_run(grid, *args, **kwargs)
            except Exception as error:
                if type(error) is TypeError and error.__traceback__.tb_next is None:  # Python's binding
                    try:
                        self._bad_call(args, kwargs, error)
                    except LaunchError as launch_error:
                        hide_internal_frames(launch_error)
                        raise
                hide_internal_frames(error)  # the user's frames end at this call (see tilec.errors)
                raise

        return launch

    def _bad_call(self, args: tuple, kwargs: dict, error: TypeError) -> None:
        """Raises the LaunchError for arguments that Python could not bind to the
        generated launcher's parameters (missing, unexpected, given twice, too many),
        unchained from Python's TypeError and without tilec's frames.

        GridCall takes any TypeError without a traceback for a binding error, and the
        generated launcher drops the traceback of the errors it reports (LaunchError is
        a TypeError): those are raised again as they are."""
        try:
            if type(error) is not TypeError:
                raise error
            self._split_call(args, dict(kwargs))  # raises a LaunchError naming the argument
            raise LaunchError(f"{self.__name__}(): {error}")
        except TypeError as launch_error:
            launch_error.__suppress_context__ = True  # not "during handling of" the TypeError
            hide_internal_frames(launch_error)
            raise

    def _make_fast_run(self, descriptors: frozenset = frozenset()) -> Callable:
        """Generates `fast_run(grid, <the kernel's parameters>, *, <launch options>)`.

        Python binds the arguments (in C; `__getitem__`'s GridCall reports those that do
        not bind), the in-memory cache key is built inline, and a hit calls the kernel's
        `tilec._launcher.Launcher` directly, with each torch tensor replaced by the
        address its key already read. A miss, anything unusual, the interpreter and
        TILEC_ALWAYS_COMPILE fall back to `run`.

        `descriptors`: the positions of parameters that were host tensor descriptors
        (`run` makes the launcher anew when it first sees them): each is keyed and
        flattened by `_descriptor_argument` (remembered per descriptor), its leaves and
        layout passed in its place; anything else there never matches the key.
        """
        self._fast_descriptors = descriptors
        options = [o for o in LAUNCH_OPTIONS if o not in self.arg_names]
        names = self.arg_names
        params, key_parts, values, pointers = [], [], [], []
        torch = sys.modules.get("torch")
        self._fast_run_torch = torch is not None
        self._traced_by_torch_compile = torch_compile_check(torch)
        if any(name in _GENERATED_NAMES or re.fullmatch(r"_(p|k|default_)\d+", name) for name in names):
            # A parameter named like the generated code's own variables: no fast path.
            def slow_run(_grid, *args, **kwargs):
                try:
                    return self.run(*args, grid=_grid, **kwargs)
                except Exception as error:
                    hide_internal_frames(error)  # the user's frames end at the launch (see tilec.errors)
                    raise
            return slow_run
        from . import driver
        # The stream of a launch without stream=: torch's current one, read by its own
        # accessor (in C); without torch the default stream (this function is made anew
        # when torch is imported).
        stream_of = driver._torch_stream_accessor() if torch is not None else None
        namespace: dict[str, Any] = {"_kernels_get": self._kernels.get, "_self": self, "_config": _config,
                                     "_desc": _fast_descriptor, "_ko": _keyed_option,
                                     "_vk": _value_key, "_uk": _unspecialized_key, "_constexpr": tl.constexpr,
                                     "_Tensor": torch.Tensor if torch is not None else _NoTensor,
                                     "_stream_of": stream_of, "_hide": hide_internal_frames}
        for i, name in enumerate(names):
            if i == self._n_positional:
                params.append("*")  # the keyword-only parameters follow
            default = self._param_defaults[i]
            if default is _MISSING:
                params.append(name)
            else:
                namespace[f"_default_{i}"] = default
                params.append(f"{name}=_default_{i}")
            if i in self.constexprs:
                key_parts.append(f"({name}.value if {name}.__class__ is _constexpr else {name})")
                values.append(name)
            elif i in descriptors:
                pointers.append(f"    _k{i}, _p{i} = _desc(_self, {name!r}, {name})\n")
                key_parts.append(f"_k{i}")
                values.append(f"*_p{i}")
            elif name in self.do_not_specialize:
                key_parts.append(f"_uk({name})")
                values.append(name)
            else:
                # torch tensors: (dtype, 16-byte aligned, device), as _value_key, keeping the
                # address for the launch; ints: 1 -> 1; otherwise 2 + 4*(divisible by 16)
                # + 8*(needs 64 bits) + 16*(beyond int64: uint64) + 32*(divisible by 8)
                pointers.append(f"    _p{i} = {name}\n")
                key_parts.append(f"(({name}.dtype, ((_p{i} := {name}.data_ptr()) & 15) == 0, {name}.get_device()) "
                                 f"if {name}.__class__ is _Tensor else "
                                 f"(1 if {name} == 1 else 2 | (({name} & 15) == 0) << 2 | (({name} & 7) == 0) << 5 | "
                                 f"(not -2147483648 <= {name} <= 2147483647) << 3 | "
                                 f"({name} > 9223372036854775807) << 4) "
                                 f"if {name}.__class__ is int else _vk({name}))")
                values.append(f"_p{i}")
        star = ", *" if self._n_positional == len(names) else ""
        option_params = (star + "".join(f", {o}=None" for o in options)) if options else ""
        keyed = [o for o in _KEYED_OPTIONS if o in options]
        arguments = "(" + "".join(f"{n}, " for n in names) + ")"
        by_keyword = "".join(f"{n}={n}, " for n in names[self._n_positional:])
        run = (f"_self.run({''.join(n + ', ' for n in names[:self._n_positional])}{by_keyword}grid=_grid"
               f"{''.join(f', {o}={o}' for o in options)})")
        stream = "stream if stream is not None else " if "stream" in options else ""
        stream += "_stream_of(_kernel.device)" if torch is not None else "0"
        # Launch attributes: the launcher's optional flags argument, only when asked for.
        flagged = [f"({o} and {bit} or 0)" for o, bit in (("launch_cooperative_grid", 1), ("launch_pdl", 2))
                   if o in options]
        flags = f"{' | '.join(flagged)}" if flagged else "0"
        src = f"""
def {self.__name__}(_grid{''.join(', ' + p for p in params)}{option_params}):
  try:
    if _config.interpret or _config.always_compile:
        return {run}
{''.join(pointers)}    _key = ({''.join(k + ', ' for k in key_parts)}{''.join((f'(None if {o} is None else _ko({o}))' if o == 'extern_libs' else o) + ', ' for o in keyed)}_config.codegen_key)
    try:
        _kernel = _kernels_get(_key)
    except TypeError:  # an unhashable argument: run() names it
        _kernel = None
    if _kernel is None:
        return {run}
    if _grid.__class__ is tuple and len(_grid) == 1 and _grid[0].__class__ is int and 0 <= _grid[0] <= 0x7FFFFFFF:
        _x, _y, _z = _grid[0], 1, 1
    else:
        _x, _y, _z = _self._resolve_grid(_grid, {arguments})
    try:
        _values = ({''.join(v + ', ' for v in values)})
        _flags = {flags}
        if _flags:
            _kernel.launcher(_x, _y, _z, {stream}, _kernel.with_tensormaps(_values, (_x, _y, _z)) if _kernel.tensormaps else _values, _flags)
        else:
            _kernel.launcher(_x, _y, _z, {stream}, _kernel.with_tensormaps(_values, (_x, _y, _z)) if _kernel.tensormaps else _values)
    except Exception as _error:
        raise _kernel.launch_error(_error, (_x, _y, _z)) from None
    return _kernel.compiled
  except Exception as _error:  # the outermost frame of a launch: the user's frames end here
    _hide(_error)
    raise
"""
        self._fast_run_source = src  # for reading, when debugging the launch path
        exec(compile(src, f"<tilec launcher for {self.__name__}>", "exec"), namespace)
        return namespace[self.__name__]

    def run(self, *args, grid, **kwargs):
        if kwargs and pop_warmup(kwargs, self.arg_names):
            return self.warmup(*args, grid=grid, **kwargs)
        if _config.interpret:
            from ..interpreter import interpret_kernel
            return interpret_kernel(self, grid, args, kwargs)
        if kwargs or len(args) != self._n_params:
            options, values = self._split_call(args, kwargs)
        else:
            options, values = _NO_OPTIONS, args
        # The same key as the generated fast path (see _make_fast_run).
        key = tuple([f(v) for f, v in zip(self._key_fns, values)])
        key += tuple(_keyed_option(options.get(name)) for name in _KEYED_OPTIONS if name not in self.arg_names)
        key += (_config.codegen_key,)  # the code-generation switches (config.codegen_flags)
        launch_values = self._launch_values(values)
        if launch_values is not values:  # tuple and descriptor arguments
            key = self._composite_key(values, key)
            if key is not None:  # descriptors only: let the generated launcher take them from now on
                positions = frozenset(i for i, v in enumerate(values) if is_tensor_descriptor(v))
                if positions != self._fast_descriptors and len(values) == self._n_params:
                    self._fast_run = self._make_fast_run(positions)
        try:
            kernel = self._kernels.get(key) if key is not None else None
        except TypeError:  # an unhashable constexpr: _get_kernel's specialisation names it
            kernel, key = None, None
        if kernel is None or _config.always_compile:
            kernel = self._get_kernel(list(values), options)
            if key is not None:
                self._kernels[key] = kernel
        if type(grid) is tuple and len(grid) == 1 and type(grid[0]) is int and 0 <= grid[0] <= _GRID_LIMITS[0]:
            grid3 = (grid[0], 1, 1)
        else:
            grid3 = self._resolve_grid(grid, values)
        if options:
            kernel.launch(grid3, launch_values, options.get("stream"), launch_flags(options))
        else:
            kernel.launch(grid3, launch_values)
        return kernel.compiled

    def _composite_key(self, values: Sequence[Any], key: tuple) -> tuple | None:
        """The in-memory kernel key of a launch with host tensor descriptors: each
        descriptor keyed by what its specialisation reads (block shape, padding, whether
        its rows are whole 16-byte runs, and its base, shape and strides as pointer and
        integer arguments are keyed), so a second launch skips the specialisation. None
        (the slow path each time) with tuple arguments."""
        parts = list(key)
        for index, value in enumerate(values):
            if index in self.constexprs:
                continue
            if is_tensor_descriptor(value):
                parts[index] = self._descriptor_argument(self.arg_names[index], value)[2]
            elif is_tuple_argument(value) or is_aggregate_argument(value):
                return None
        return tuple(parts)

    def _descriptor_argument(self, name: str, value: Any) -> tuple:
        """(layout, leaves, in-memory key part) of a host descriptor argument, checked.
        Remembered per argument, base (address, type, device), shape, strides, block and
        padding, the leaves' tensor map included: a launch with a descriptor seen before
        reads its fields and makes one lookup (descriptors are mutable, so a changed
        field is a new entry)."""
        base = value.base
        try:
            signature = (name, base.data_ptr(), _value_key(base), tuple(map(int, value.shape)),
                         tuple(map(int, value.strides)), tuple(map(int, value.block_shape)),
                         getattr(value, "padding", "zero"), bool(getattr(value, "round_f32_to_tf32", False))) \
                if hasattr(base, "get_device") else None
        except (TypeError, ValueError, AttributeError):
            signature = None  # descriptor_problem says what is wrong
        found = self._descriptors.get(signature) if signature is not None else None
        if found is None:
            problem = descriptor_problem(value)
            if problem is not None:
                raise LaunchError(f"argument '{name}' of {self.__name__}() is a bad tensor descriptor: {problem}")
            layout, leaves = flatten_descriptor_argument(name, value)
            key = ("desc", layout.block_shape, layout.padding, layout.whole_rows, layout.round_tf32, _value_key(base),
                   tuple(_value_key(int(v)) for v in value.shape), tuple(_value_key(int(v)) for v in value.strides))
            if signature is not None:
                if len(self._descriptors) >= 1024:
                    self._descriptors.clear()
                # Not the base itself (the tensor map lets go of it once read).
                self._descriptors[signature] = (layout, [(leaves[0][0], None), *leaves[1:]], key)
            return layout, leaves, key
        layout, leaves, key = found
        return layout, [(leaves[0][0], base), *leaves[1:]], key

    def warmup(self, *args, grid=None, **kwargs):
        """Compiles without launching; returns the CompiledKernel (a LaunchableKernel:
        `compiled[grid](*args)` launches it, and runs this function's source in the interpreter)."""
        try:
            options, values = self._split_call(args, kwargs)
            # The launch's cheap key first: a program that warms up before every launch
            # (Triton's softmax tutorial) pays a dictionary lookup, not a specialisation.
            try:
                key = (tuple([f(v) for f, v in zip(self._key_fns, values)])
                       + (tuple(map(options.get, _KEYED_OPTIONS)) if "extern_libs" not in options
                          else tuple([_keyed_option(options.get(name)) for name in _KEYED_OPTIONS]))
                       + (_config.codegen_key, _config.interpret))
                kernel = None if _config.always_compile else self._warm.get(key)
            except TypeError:  # unhashable arguments: the slow path names them
                key, kernel = None, None
            if kernel is None:
                kernel = self._get_kernel(values, options, load=False)
                if key is not None and not any(is_tuple_argument(v) or is_tensor_descriptor(v) for v in values):
                    if len(self._warm) >= 1024:
                        self._warm.clear()
                    self._warm[key] = kernel
            return kernel
        except Exception as error:
            hide_internal_frames(error)
            raise

    # ------------------------------------------------------------------ binding
    def _split_call(self, args: tuple, kwargs: dict) -> tuple[dict, list]:
        options = {}
        if kwargs:
            for name in [name for name in kwargs if name in self._option_names]:
                value = kwargs.pop(name)
                if value is not None:  # the generated launcher passes unset options as None
                    options[name] = value
        n = len(args)
        if n == self._n_params and not kwargs and n == self._n_positional:
            return options, list(args)
        if self._variadic:
            raise LaunchError(f"{self.__name__}() takes {' and '.join(self._variadic)}, which a kernel launch cannot "
                              "pass: give each argument a parameter of its own (a tuple parameter may hold several)")
        if n > self._n_positional:
            raise LaunchError(too_many_arguments(self.__name__, self._n_positional, n, self.arg_names,
                                                 self.arg_names[self._n_positional:]))
        values = list(args) + [_MISSING] * (self._n_params - n)
        for name, value in kwargs.items():
            index = self._arg_index.get(name)
            if index is None:
                raise LaunchError(f"{self.__name__}() got an unexpected keyword argument '{name}'")
            if index < n:
                if name in LAUNCH_OPTIONS and value is not None:
                    # A launch option the kernel also names a parameter (FlagGems' mse_loss has
                    # `target`), given positionally: the keyword is the option (`warmup(..., target="sm_90")`).
                    options[name] = value
                    continue
                raise LaunchError(f"{self.__name__}() got multiple values for argument '{name}'")
            values[index] = value
        missing = []
        for i, value in enumerate(values):
            if value is _MISSING:
                default = self._param_defaults[i]
                if default is _MISSING:
                    missing.append(f"'{self.arg_names[i]}'")
                values[i] = default
        if missing:
            names = missing[0] if len(missing) == 1 else ", ".join(missing[:-1]) + " and " + missing[-1]
            raise LaunchError(f"{self.__name__}() is missing {'argument' if len(missing) == 1 else 'arguments'} "
                              f"{names}")
        return options, values

    def _resolve_grid(self, grid: Any, values: Sequence[Any]) -> tuple[int, int, int]:
        if type(grid) is tuple and len(grid) == 3:  # the common launch, checked in one line
            x, y, z = grid
            if (type(x) is int and type(y) is int and type(z) is int and 0 <= x <= _GRID_LIMITS[0]
                    and 0 <= y <= _GRID_LIMITS[1] and 0 <= z <= _GRID_LIMITS[2]):
                return grid
        if callable(grid):
            meta = dict(zip(self.arg_names, values))
            try:
                grid = grid(meta)
            except Exception as error:
                note_grid_function_error(error, grid, self.__name__, meta)  # names it, and META's values
                raise
            if type(grid) is tuple and len(grid) == 1 and type(grid[0]) is int and 0 <= grid[0] <= _GRID_LIMITS[0]:
                return grid[0], 1, 1  # a grid lambda's usual answer, checked in one line
        if isinstance(grid, int):
            grid = (grid,)
        try:
            if isinstance(grid, (str, bytes)):
                raise TypeError
            dims = tuple(operator.index(g) for g in grid)  # ints (NumPy, torch too); never floats
        except (TypeError, ValueError):
            raise LaunchError(f"the grid must be a tuple of 1 to 3 integers, or a callable returning one; "
                              f"got {grid!r}") from None
        if not 1 <= len(dims) <= 3:
            raise LaunchError(f"the grid must have 1 to 3 dimensions, got {len(dims)}")
        for d in dims:
            if d < 0:
                raise LaunchError(f"grid dimensions must not be negative, got {dims}")
        for axis, (d, limit) in enumerate(zip(dims, _GRID_LIMITS)):  # the interpreter's as the GPU's
            if d > limit:
                raise LaunchError(f"the grid {dims} has {d} programs along axis {axis}, more than a GPU grid "
                                  f"allows ({_GRID_LIMITS[0]} along axis 0, {_GRID_LIMITS[1]} along axes 1 and 2)")
        return dims + (1,) * (3 - len(dims))

    # ------------------------------------------------------------------ specialisation
    def specialization(self, values: list, types_as_strings: bool = False,
                       host_arrays: bool | None = None) -> list[ArgSpec]:
        """The ArgSpec of every parameter for these argument values.

        A string argument is a constexpr (as in Triton: `activation="gelu"`), except in
        `warmup`, where a string that spells a type ("*fp32:16", "i32") stands for it.
        Host arrays give their pointer type where nothing is launched on the GPU
        (`host_arrays`, by default in warmup); else they are a LaunchError.
        """
        host_arrays = types_as_strings if host_arrays is None else host_arrays
        specs = []
        for index, name, value in self._parameters(values):
            if isinstance(value, ArgumentLayout):
                specs.append(ArgSpec(name, constant=value, is_constant=True))
            else:
                specs.append(self._arg_spec(index, name, value, types_as_strings, host_arrays))
        return specs

    def _parameters(self, values: list) -> list[tuple[int, str, Any]]:
        """(index, name, value) of each parameter as compiled: a tuple argument gives its
        leaves (index -1, named `t.0`, `t.1`, ...) and then its TupleLayout; a host
        tensor descriptor its base, shape and strides and then its DescriptorLayout; an
        aggregate built on the host its fields (`a.offs`, ...) and then its AggregateLayout."""
        parameters = []
        for index, (name, value) in enumerate(zip(self.arg_names, values)):
            if index in self.constexprs:
                parameters.append((index, name, value))
                continue
            if is_tensor_descriptor(value):
                layout, leaves, _ = self._descriptor_argument(name, value)
            elif is_tuple_argument(value):
                self._check_nested_descriptors(name, value)
                layout, leaves = flatten_tuple_argument(name, value)
            elif is_aggregate_argument(value):
                layout, leaves = flatten_aggregate_argument(name, value)
            else:
                parameters.append((index, name, value))
                continue
            parameters.extend((-1, leaf_name, leaf) for leaf_name, leaf in leaves)
            parameters.append((index, name, layout))
        return parameters

    def _check_nested_descriptors(self, name: str, value: tuple) -> None:
        """Checks each host tensor descriptor inside a tuple argument (named by its path,
        `descs.1`), as a descriptor argument is checked."""
        for index, element in enumerate(value):
            if isinstance(element, tuple):
                self._check_nested_descriptors(f"{name}.{index}", element)
            elif is_tensor_descriptor(element):
                problem = descriptor_problem(element)
                if problem is not None:
                    raise LaunchError(f"argument '{name}.{index}' of {self.__name__}() is a bad tensor descriptor: "
                                      f"{problem}")

    def _launch_values(self, values: list) -> list:
        """The values a launch passes, parallel to `specialization(values)`."""
        if not any(is_tuple_argument(v) or is_tensor_descriptor(v) or is_aggregate_argument(v)
                   for i, v in enumerate(values) if i not in self.constexprs):
            return values
        return [value for _, _, value in self._parameters(values)]

    def _arg_spec(self, index: int, name: str, value: Any, types_as_strings: bool = False,
                  host_arrays: bool = False) -> ArgSpec:
        if index in self.constexprs:
            value = tl._unwrap(value)
            try:
                hash(value)
            except TypeError:
                raise LaunchError(f"tl.constexpr argument '{name}' of {self.__name__}() must be a hashable "
                                  f"compile-time value (an int, float, bool, str, tl.dtype or None), got "
                                  f"{type(value).__name__}") from None
            if hasattr(value, "data_ptr") or hasattr(value, "__cuda_array_interface__"):  # hashable by identity
                raise LaunchError(f"tl.constexpr argument '{name}' of {self.__name__}() is a "
                                  f"{specialize.describe(value)}; a constexpr takes a compile-time value (an int, "
                                  "float, bool, str, tl.dtype or None): pass a number, e.g. with .item()")
            return ArgSpec(name, constant=value, is_constant=True)
        if value is None:
            return ArgSpec(name, constant=None, is_constant=True)
        if isinstance(value, TensorMap):  # a host descriptor's tensor map (by value on sm_90: compiler.py)
            return ArgSpec(name, tl.pointer_type(tl.int8), divisibility=16)
        if isinstance(value, tl.constexpr):
            return ArgSpec(name, constant=value.value, is_constant=True)
        try:
            ty = specialize.scalar_type(value)
        except LaunchError as error:
            raise type(error)(f"argument '{name}' of {self.__name__}(): {error}") from None
        annotated = self.annotated_types.get(name)
        if ty is not None and annotated is not None:  # `val: tl.float16`: exactly that type
            ty = specialize.annotated_scalar(annotated, value, name, self.__name__)
            # `stride: tl.int64` keeps its divisibility, as in Triton (without it, strides
            # lose the alignment that vectorised and pipelined loads need); not its 1.
            if ty.is_int() and not ty.is_bool() and name not in self.do_not_specialize:
                divisibility = _divisibility(int(value))
                if divisibility > 1:
                    return ArgSpec(name, ty, divisibility=divisibility)
            return ArgSpec(name, ty)
        if ty is not None:
            if ty.is_int() and not ty.is_bool():
                value = int(value)
                if name not in self.do_not_specialize:
                    if specialize.is_folded_one(ty, value):
                        return ArgSpec(name, constant=1, is_constant=True)
                    divisibility = _divisibility(value)
                    if divisibility > 1:
                        return ArgSpec(name, ty, divisibility=divisibility)
            return ArgSpec(name, ty)
        if isinstance(value, str) and not types_as_strings:
            return ArgSpec(name, constant=value, is_constant=True)
        if isinstance(value, tl.dtype) and not types_as_strings:
            raise LaunchError(dtype_argument_error(self.__name__, name, value))
        if isinstance(value, (str, tl.dtype)):
            # warmup with a type instead of a value: "*fp32", "i32:16", tl.float32
            try:
                return _spec_from_type(name, value)
            except ValueError as error:  # not a type's spelling: a constexpr string, as at launch
                if isinstance(value, str) and value.startswith("*"):  # a misspelt pointer type
                    raise LaunchError(f"argument '{name}' of {self.__name__}(): {value!r} is not a pointer type "
                                      f"({error})") from None
                return ArgSpec(name, constant=value, is_constant=True)
        dtype = specialize.dtype_of_array(value)
        if dtype is None:
            raise LaunchError(f"argument '{name}' of {self.__name__}() is a {specialize.describe(value)}; expected a "
                              "GPU tensor, an int, a float, a bool, a string or None")
        host = getattr(value, "is_cuda", True) is False or (not hasattr(value, "data_ptr")
                                                            and not hasattr(value, "__cuda_array_interface__"))
        if host and not host_arrays and specialize.is_pinned_host_tensor(value):
            host = False  # pinned host memory: the GPU reads and writes it in place
        if host and host_arrays:  # nothing runs on the GPU: a host array gives its type
            address = value.ctypes.data if hasattr(value, "ctypes") else value.data_ptr()
            return ArgSpec(name, tl.pointer_type(dtype), divisibility=16 if address % 16 == 0 else 1)
        if host:
            raise LaunchError(f"argument '{name}' of {self.__name__}() is a host array "
                              f"({specialize.describe(value)}); a GPU launch needs device memory "
                              "(move it with .cuda(), or run with TILEC_INTERPRET=1)")
        pointer = specialize.data_pointer(value)
        aligned = pointer % 16 == 0 and name not in self.do_not_specialize
        return ArgSpec(name, tl.pointer_type(dtype), divisibility=16 if aligned else 1)

    # ------------------------------------------------------------------ compile and cache
    def _get_kernel(self, values: list, options: dict, load: bool = True):
        """The kernel for these arguments: in memory, else on disk, else compiled now.

        The slow path: `run` calls it only when its cheap key misses.
        """
        specs, device, option_values, by_spec = self._kernel_keys(values, options, load)
        kernel = None if _config.always_compile else self._by_spec.get(by_spec)
        if kernel is not None:
            return kernel
        compiled = load_or_compile(self, specs, option_values)
        from .kernel import LaunchableKernel, LoadedKernel
        if not load:
            # warmup's kernel, kept (under device None): a program that warms up before
            # every launch (Triton's softmax tutorial) gets the same object back, with the
            # modules it loaded at its own launches, instead of a disk read and a module load.
            kernel = LaunchableKernel.of(compiled, fn=self)
        else:
            kernel = LoadedKernel(LaunchableKernel.of(compiled), device)  # launches return it
        self._by_spec[by_spec] = kernel
        return kernel

    def compiled_state(self, *args, target: str, **kwargs) -> tuple[tuple | None, bool]:
        """(what identifies in this process the kernel `warmup(*args, target=target,
        **kwargs)` compiles, whether it is compiled already: in this process or in the
        disk cache); (None, False) for arguments warmup would refuse. What the autotuner
        asks before it forks workers to compile its configs; it files the configs it
        learnt cannot run under the first, and skips compiling them again when a new
        tuning key (another shape) asks for the same kernels."""
        try:
            options, values = self._split_call(args, dict(kwargs))
            specs, _, option_values, by_spec = self._kernel_keys(values, {**options, "target": target}, load=False)
        except Exception:
            return None, False
        if _config.always_compile:
            return by_spec, False
        if self._by_spec.get(by_spec) is not None:
            return by_spec, True
        from . import cache
        return by_spec, cache.contains(cache.kernel_key(source_hash(self), tuple(s.key() for s in specs),
                                                        options_cache_key(option_values)))

    def _kernel_keys(self, values: list, options: dict, load: bool) -> tuple:
        """(specialisations, device, option values, in-memory key) of a launch (`load`)
        or a warmup, the options checked."""
        from . import driver
        self._check_options(options)
        specs = self.specialization(values, types_as_strings=not load)
        device = driver.device_of(self._launch_values(values), specs, self.__name__) if load else None
        requested = options.get("target")
        if requested is not None:
            _target(requested)  # a TargetError for a bad one (target="" too), before any lookup
        target = driver.target_of(device) if load else requested if requested is not None else driver.default_target()
        if load and requested is not None and _target(requested).capability != _target(target).capability:
            raise LaunchError(f"{self.__name__}(): launch option target={_target(requested).name!r}, but a launch "
                              f"compiles for the GPU it runs on ({target}); compile for another target with "
                              "kernel.warmup(..., target=...) or tilec.compile")
        option_values = {
            "num_warps": int(options.get("num_warps", 4)),
            "num_stages": int(options.get("num_stages", 3)),
            "target": target,
            "debug": bool(options.get("debug", self.debug if self.debug is not None else _config.debug)),
            "enable_fp_fusion": bool(options.get("enable_fp_fusion", True)),
            "libdevice": _libdevice_option(options.get("extern_libs")),
            "maxnreg": int(options.get("maxnreg") or 0),
        }
        by_spec = (device, tuple(s.key() for s in specs), options_cache_key(option_values), _config.codegen_flags())
        return specs, device, option_values, by_spec

    def _check_options(self, options: dict) -> None:
        """Launch options are checked alike on both backends (the interpreter ignores them
        otherwise), so a launch the GPU would refuse fails in the interpreter too."""
        for name, value in options.items():
            if name in ("num_warps", "num_stages", "maxnreg", "num_ctas") and value is not None and (
                    not isinstance(value, int) or isinstance(value, bool) or value < 0):
                raise LaunchError(f"{self.__name__}(): launch option {name} must be a non-negative int, got {value!r}")
        if options.get("target") is not None:
            try:
                _target(options["target"])
            except ValueError as error:
                raise LaunchError(f"{self.__name__}(): launch option {error}") from None
        extern_libs = options.get("extern_libs")
        if extern_libs is not None:
            if not isinstance(extern_libs, dict) or set(extern_libs) - {"libdevice"}:
                raise LaunchError(f"{self.__name__}(): launch option extern_libs maps 'libdevice' to the path of a "
                                  f"libdevice bitcode file (the only library CUDA kernels link), got {extern_libs!r}")
            path = extern_libs.get("libdevice")
            if path is not None and not os.path.isfile(path):
                raise LaunchError(f"{self.__name__}(): extern_libs['libdevice'] is {str(path)!r}, which is not a file")
            if path is not None and not _is_llvm_bitcode(path):
                raise LaunchError(f"{self.__name__}(): extern_libs['libdevice'] is {str(path)!r}, which is not LLVM "
                                  "bitcode (libdevice.10.bc)")
        num_warps = options.get("num_warps")
        if num_warps is not None and num_warps not in (1, 2, 4, 8, 16, 32):
            raise LaunchOptionError(f"{self.__name__}(): launch option num_warps must be a power of 2 between 1 and "
                                    f"32, got {num_warps}")

    def cache_hash(self) -> str:
        """Hash of this kernel's source, the @jit functions it calls and the globals it reads."""
        if self._cache_hash is None:
            self._cache_hash = _hash_dependencies(self)
        return self._cache_hash


# ----------------------------------------------------------------------------- disk cache and tilec.compile


def source_hash(fn: KernelFunction) -> str:
    """Hash of `fn`'s source, the @jit functions it calls and the globals it reads
    (computed once per JITFunction)."""
    return fn.cache_hash() if isinstance(fn, JITFunction) else _hash_dependencies(fn)


def _hash_dependencies(fn: KernelFunction) -> str:
    import hashlib
    digest = hashlib.sha256()
    for part in sorted(_dependencies(fn)):
        digest.update(part.encode())
    return digest.hexdigest()


def load_or_compile(fn: KernelFunction, specs: list[ArgSpec], option_values: dict[str, Any]):
    """The CompiledKernel of `fn` for this specialisation: from the disk cache, else
    compiled now and stored there.

    `option_values` holds one plain value per `CompileOptions` field, the target as its
    name or a Target: the cache is looked up before a `CompileOptions` is built, since
    parsing a target asks ptxas for its version, which a hit need not know.
    """
    from . import cache
    disk_key = cache.kernel_key(source_hash(fn), tuple(s.key() for s in specs), options_cache_key(option_values))
    compiled = None if _config.always_compile else cache.load(disk_key)
    if compiled is None:
        from ..backend import compiler  # imports MLIR: only when something must be compiled
        target = option_values["target"]
        options = compiler.CompileOptions(**{**option_values,
                                             "target": target if isinstance(target, Target) else Target.parse(target)})
        compiled = compiler.compile_specialized(fn, specs, options)
        cache.store(disk_key, compiled)
    elif _config.dump_dir:  # the files a compilation writes, from the stages the cache kept
        for stage in DUMP_SUFFIXES:
            dump_stage(_config.dump_dir, fn.__name__, specs, options_cache_key(option_values), stage,
                       compiled.asm.get(stage))
    return compiled


def compile_signature(fn: Any, signature: dict[str, Any], constexprs: dict[str, Any], *, target: Any,
                      num_warps: int, num_stages: int, debug: bool | None, enable_fp_fusion: bool,
                      maxnreg: int | None = None):
    """`tilec.compile`: the kernel for a signature, through the disk cache, as a LaunchableKernel."""
    from .kernel import LaunchableKernel
    if not isinstance(fn, KernelFunction):
        raise UsageError(f"tilec.compile expects a @tilec.jit function, got {fn!r}")
    for what, given, example in (("signature", signature, "types, such as {'x_ptr': '*fp32', 'n': 'i32'}"),
                                 ("constexprs", constexprs, "values, such as {'BLOCK': 64}")):
        if not isinstance(given, Mapping):
            raise UsageError(f"tilec.compile: {what} must be a dict from parameter names to {example}, "
                             f"got {given!r}")
    variadic = [("*" if p.kind == p.VAR_POSITIONAL else "**") + p.name for p in fn.params
                if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if variadic:
        raise UsageError(f"tilec.compile: {fn.__name__}() takes {' and '.join(variadic)}, which a kernel cannot take: "
                         "give each argument a parameter of its own (a tuple parameter may hold several)")
    if isinstance(num_warps, bool) or num_warps not in (1, 2, 4, 8, 16, 32):
        raise UsageError(f"tilec.compile: num_warps must be a power of 2 between 1 and 32, got {num_warps!r}")
    if isinstance(num_stages, bool) or not isinstance(num_stages, int) or num_stages < 0:
        raise UsageError(f"tilec.compile: num_stages must be a non-negative int, got {num_stages!r}")
    if maxnreg is not None and (isinstance(maxnreg, bool) or not isinstance(maxnreg, int) or maxnreg < 0):
        raise UsageError(f"tilec.compile: maxnreg must be a non-negative int or None, got {maxnreg!r}")
    specs = signature_specs(fn, signature, constexprs)
    if debug is None:  # as for launches: the @jit flag, else TILEC_DEBUG
        debug = fn.debug if fn.debug is not None else _config.debug
    option_values = {"num_warps": num_warps, "num_stages": num_stages, "target": target or "sm_90",
                     "debug": bool(debug), "enable_fp_fusion": bool(enable_fp_fusion), "libdevice": "",
                     "maxnreg": maxnreg or 0}
    return LaunchableKernel.of(load_or_compile(fn, specs, option_values))


def _dependencies(fn: KernelFunction, seen: set | None = None) -> set[str]:
    """Source of `fn` and its @jit callees (library functions of the language too), plus
    the constant globals they read."""
    import ast
    seen = seen if seen is not None else set()
    if id(fn) in seen:
        return set()
    seen.add(id(fn))
    import types
    parts = {f"{fn.__module__}.{fn.__qualname__}:{fn.source_hash()}"}
    namespaces = [fn.closure_values(), fn.globals]

    def record(name: str, value: Any) -> None:
        callee = kernel_function_of(value)
        if callee is not None:
            parts.update(_dependencies(callee, seen))
        elif isinstance(value, (tl.constexpr, int, float, bool, str, tuple, tl.dtype)) or value is None:
            parts.add(f"global {name}={tl._unwrap(value)!r}")
        elif isinstance(value, ConstexprFunction):  # tilec.cdiv, @tilec.constexpr_function
            parts.add(f"constexpr_function {name}={value.source_key()}")
        elif is_user_aggregate_class(value):  # @tilec.aggregate: its fields and methods
            texts, methods = aggregate_cache_key_parts(value)
            parts.update(texts)
            for method in methods:
                parts.update(_dependencies(kernel_function_of(method), seen))

    for node in ast.walk(fn.parse()):
        # Names, and attributes read through modules (`helpers.BLOCK`, `mylib.kernel`).
        chain = []
        while isinstance(node, ast.Attribute):
            chain.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            continue
        for namespace in namespaces:
            if node.id not in namespace:
                continue
            value, name = namespace[node.id], node.id
            for attr in reversed(chain):
                if not isinstance(value, types.ModuleType):
                    break
                value, name = getattr(value, attr, None), f"{name}.{attr}"
            record(name, value)
            break
    return parts


# ----------------------------------------------------------------------------- launch keys
#
# Each parameter contributes one small hashable value to the in-memory cache key; two
# launches with equal keys need the same compiled kernel. They mirror `_arg_spec`:
# whatever changes the ArgSpec (or the device) must change the key.

_NO_OPTIONS: dict = {}


def _libdevice_option(extern_libs: dict | None) -> str:
    """CompileOptions.libdevice of a launch's `extern_libs` (checked by _check_options):
    the file's absolute path, or "" for the toolkit's libdevice."""
    path = (extern_libs or {}).get("libdevice")
    return os.path.abspath(path) if path else ""


def _is_llvm_bitcode(path: str) -> bool:
    """Whether a file starts as LLVM bitcode does (raw, or in its wrapper header)."""
    with open(path, "rb") as f:
        return f.read(4) in (b"BC\xc0\xde", b"\xde\xc0\x17\x0b")


def _keyed_option(value: Any) -> Any:
    """A launch option as the in-memory kernel key holds it (extern_libs is a dict)."""
    return tuple(sorted(value.items())) if type(value) is dict else value


def launch_flags(options: dict[str, Any]) -> int:
    """The C launcher's flags for a launch's options: 1 for `launch_cooperative_grid`
    (every program resident at once), 2 for `launch_pdl` (programmatic dependent launch:
    the kernel may start while the previous one on its stream still runs; it waits for
    that one's writes at `tl.extra.cuda.gdc_wait()`)."""
    return (1 if options.get("launch_cooperative_grid") else 0) | (2 if options.get("launch_pdl") else 0)
# The names the generated launcher uses besides the kernel's parameters (and _p<i>, _default_<i>).
_GENERATED_NAMES = frozenset({"_grid", "_key", "_kernel", "_values", "_flags", "_desc", "_x", "_y", "_z", "_error",
                              "_self", "_config", "_vk", "_uk", "_ko", "_constexpr", "_Tensor", "_stream_of", "_kernels_get"})
_KEYED_OPTIONS = ("num_warps", "num_stages", "debug", "maxnreg", "num_ctas", "enable_fp_fusion", "target",
                  "extern_libs")
_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1
_INT64_MAX = (1 << 63) - 1


def _constexpr_key(value: Any) -> Any:
    return value.value if isinstance(value, tl.constexpr) else value


def _fast_descriptor(fn: "JITFunction", name: str, value: Any) -> tuple[Any, tuple]:
    """The generated launcher's key part and values (the leaves, then the layout) for a
    parameter that was a host descriptor; a key that never matches for anything else."""
    if not is_tensor_descriptor(value):
        return ("?", object()), ()
    layout, leaves, key = fn._descriptor_argument(name, value)
    return key, (*[leaf for _, leaf in leaves], layout)


def _value_key(value: Any) -> Any:
    kind = type(value)
    if kind is int:  # the same encoding as the generated fast path
        if value == 1:
            return 1
        return (2 | ((value & 15) == 0) << 2 | ((value & 7) == 0) << 5 | (not _INT32_MIN <= value <= _INT32_MAX) << 3
                | (value > _INT64_MAX) << 4)
    if kind is float:
        return "f32"
    data_ptr = getattr(value, "data_ptr", None)
    if data_ptr is not None and hasattr(value, "get_device"):  # torch tensors
        return (value.dtype, data_ptr() % 16 == 0, value.get_device())
    return _slow_key(value, specialize_alignment=True)


def _unspecialized_key(value: Any) -> Any:
    if type(value) is int:
        return "i32" if _INT32_MIN <= value <= _INT32_MAX else "i64" if value <= _INT64_MAX else "u64"
    return _slow_key(value, specialize_alignment=False)


def _slow_key(value: Any, specialize_alignment: bool) -> Any:
    """Keys for everything else: bools, None, NumPy scalars, CUDA-array-interface objects."""
    if value is None or isinstance(value, (bool, str, tl.dtype)):
        return ("v", type(value).__name__, value)
    if isinstance(value, tl.constexpr):
        return ("c", value.value)
    ty = specialize.scalar_type(value)
    if ty is not None:
        return ("s", str(ty), int(value) == 1 and specialize_alignment if ty.is_int() else False,
                _divisibility(int(value)) if ty.is_int() and not ty.is_bool() else 1)
    cai = getattr(value, "__cuda_array_interface__", None)
    if cai is not None:
        from .driver import _device_of_array
        pointer = int(cai["data"][0])
        aligned = pointer % 16 == 0 if specialize_alignment else False
        return ("a", cai["typestr"], aligned, _device_of_array(value, "", ""))
    # Unknown objects: a key that never matches twice, so the slow path explains the error.
    return ("?", id(value), object())


def _divisibility(value: int) -> int:
    """What an integer argument is specialised on: divisible by 16, by 8, or neither."""
    return 16 if value % 16 == 0 else 8 if value % 8 == 0 else 1


def _target(value: str | Target) -> Target:
    return value if isinstance(value, Target) else Target.parse(value)


def _spec_from_type(name: str, value: Any) -> ArgSpec:
    if isinstance(value, tl.dtype):
        return ArgSpec(name, value)
    text, _, div = value.partition(":")
    return ArgSpec(name, tl.dtype_from_signature(text), divisibility=int(div) if div else 1)


# The most programs a CUDA grid has along x, y and z.
_GRID_LIMITS = (2**31 - 1, 65535, 65535)

# Every JITFunction made, so that a source update reaches the caches of its callers.
_ALL_KERNELS: "weakref.WeakSet[JITFunction]" = weakref.WeakSet()


class _NoTensor:
    """Stands for torch.Tensor in generated launchers while torch is not imported."""


class _MissingType:
    def __repr__(self) -> str:
        return "<missing>"


_MISSING = _MissingType()


def jit(fn: Callable | None = None, *, noinline: bool = False, debug: bool | None = None,
        do_not_specialize: Sequence[str | int] = (), src: str | None = None, **unused) -> Any:
    """Decorator: `@tilec.jit` or `@tilec.jit(noinline=True, debug=True)`; `src=` gives the
    function's source where Python kept none (see `KernelFunction`)."""

    def decorate(f: Callable) -> JITFunction:
        if getattr(f, "__name__", None) == "<lambda>":
            raise UsageError("@jit needs a function defined with `def`, not a lambda: a lambda has no name and "
                             "no source of its own to compile")
        return JITFunction(f, noinline=noinline, debug=debug, do_not_specialize=do_not_specialize, src=src)

    return decorate(fn) if fn is not None else decorate

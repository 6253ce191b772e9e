"""`@tilec.jit` and `kernel[grid](*args)`.

A launch binds the arguments, computes the specialisation key (types; integers equal
to 1 or divisible by 16; pointers 16-byte aligned; constexpr values; options), finds
the compiled kernel in memory, else on disk, else compiles it, and launches it through
the C++ launcher on the current stream (torch's when torch is present).
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Sequence

from .. import config as _config_module
from ..errors import LaunchError
from ..frontend import ArgSpec, KernelFunction
from ..language import core as tl
from . import specialize

_config = _config_module.config

LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "debug", "enable_fp_fusion", "stream")


class _Launcher:
    """What `kernel[grid]` returns: call it with the kernel's arguments."""

    __slots__ = ("fn", "grid")

    def __init__(self, fn: "JITFunction", grid: Any):
        self.fn = fn
        self.grid = grid

    def __call__(self, *args, **kwargs):
        return self.fn.run(*args, grid=self.grid, **kwargs)


class JITFunction(KernelFunction):
    """A kernel: launch with `kernel[grid](*args, num_warps=4)`."""

    def __init__(self, fn: Callable, *, noinline: bool = False, debug: bool | None = None,
                 do_not_specialize: Sequence[str | int] = ()):
        super().__init__(fn, noinline=noinline, debug=debug)
        self.do_not_specialize = {self.arg_names[i] if isinstance(i, int) else i for i in do_not_specialize}
        self._kernels: dict[tuple, Any] = {}  # (device, key) -> loaded kernel
        self._param_defaults = [p.default if p.default is not inspect.Parameter.empty else _MISSING
                                for p in self.params]
        self._n_params = len(self.params)
        self._cache_hash: str | None = None

    # ------------------------------------------------------------------ user API
    def __getitem__(self, grid) -> _Launcher:
        return _Launcher(self, grid)

    def run(self, *args, grid, **kwargs):
        if _config.interpret:
            from ..interpreter import interpret_kernel
            return interpret_kernel(self, grid, args, kwargs)
        options, values = self._split_call(args, kwargs)
        kernel = self._get_kernel(values, options)
        kernel.launch(self._resolve_grid(grid, values), values, options.get("stream"))
        return kernel.compiled

    def warmup(self, *args, grid=None, **kwargs):
        """Compiles (and loads, when a GPU answers) without launching; returns the CompiledKernel."""
        options, values = self._split_call(args, kwargs)
        return self._get_kernel(values, options, load=False)

    # ------------------------------------------------------------------ binding
    def _split_call(self, args: tuple, kwargs: dict) -> tuple[dict, list]:
        options = {}
        if kwargs:
            for name in LAUNCH_OPTIONS:
                if name in kwargs and name not in self.arg_names:
                    options[name] = kwargs.pop(name)
        n = len(args)
        if n == self._n_params and not kwargs:
            return options, list(args)
        if n > self._n_params:
            raise LaunchError(f"{self.__name__}() takes {self._n_params} arguments but {n} were given")
        values = list(args) + [_MISSING] * (self._n_params - n)
        for name, value in kwargs.items():
            try:
                index = self.arg_names.index(name)
            except ValueError:
                raise LaunchError(f"{self.__name__}() got an unexpected keyword argument '{name}'") from None
            if index < n:
                raise LaunchError(f"{self.__name__}() got multiple values for argument '{name}'")
            values[index] = value
        for i, value in enumerate(values):
            if value is _MISSING:
                default = self._param_defaults[i]
                if default is _MISSING:
                    raise LaunchError(f"{self.__name__}() is missing argument '{self.arg_names[i]}'")
                values[i] = default
        return options, values

    def _resolve_grid(self, grid: Any, values: list) -> tuple[int, int, int]:
        if callable(grid):
            grid = grid(dict(zip(self.arg_names, values)))
        if isinstance(grid, int):
            grid = (grid,)
        try:
            dims = tuple(int(g) for g in grid)
        except TypeError:
            raise LaunchError(f"the grid must be a tuple of 1 to 3 integers, or a callable returning one; "
                              f"got {grid!r}") from None
        if not 1 <= len(dims) <= 3:
            raise LaunchError(f"the grid must have 1 to 3 dimensions, got {len(dims)}")
        for d in dims:
            if d < 0:
                raise LaunchError(f"grid dimensions must not be negative, got {dims}")
        return dims + (1,) * (3 - len(dims))

    # ------------------------------------------------------------------ specialisation
    def specialization(self, values: list) -> list[ArgSpec]:
        """The ArgSpec of every parameter for these argument values."""
        specs = []
        for index, (name, value) in enumerate(zip(self.arg_names, values)):
            specs.append(self._arg_spec(index, name, value))
        return specs

    def _arg_spec(self, index: int, name: str, value: Any) -> ArgSpec:
        if index in self.constexprs:
            value = tl._unwrap(value)
            try:
                hash(value)
            except TypeError:
                raise LaunchError(f"tl.constexpr argument '{name}' must be hashable, got {type(value).__name__}") from None
            return ArgSpec(name, constant=value, is_constant=True)
        if value is None:
            return ArgSpec(name, constant=None, is_constant=True)
        if isinstance(value, tl.constexpr):
            return ArgSpec(name, constant=value.value, is_constant=True)
        ty = specialize.scalar_type(value)
        if ty is not None:
            if ty.is_int() and not ty.is_bool():
                value = int(value)
                if name not in self.do_not_specialize:
                    if value == 1:
                        return ArgSpec(name, constant=1, is_constant=True)
                    if value % 16 == 0:
                        return ArgSpec(name, ty, divisibility=16)
            return ArgSpec(name, ty)
        if isinstance(value, (str, tl.dtype)):
            # warmup with a type instead of a value: "*fp32", "i32:16", tl.float32
            return _spec_from_type(name, value)
        dtype = specialize.dtype_of_array(value)
        if dtype is None:
            raise LaunchError(f"argument '{name}' of {self.__name__}() is a {specialize.describe(value)}; expected a "
                              "GPU tensor, an int, a float, a bool or None")
        if getattr(value, "is_cuda", True) is False or (not hasattr(value, "data_ptr")
                                                         and not hasattr(value, "__cuda_array_interface__")):
            raise LaunchError(f"argument '{name}' of {self.__name__}() is a host array "
                              f"({specialize.describe(value)}); a GPU launch needs device memory "
                              "(move it with .cuda(), or run with TILEC_INTERPRET=1)")
        pointer = specialize.data_pointer(value)
        aligned = pointer % 16 == 0 and name not in self.do_not_specialize
        return ArgSpec(name, tl.pointer_type(dtype), divisibility=16 if aligned else 1)

    # ------------------------------------------------------------------ compile and cache
    def _get_kernel(self, values: list, options: dict, load: bool = True):
        """The kernel for these arguments: in memory, else on disk, else compiled now."""
        from ..backend.compiler import CompileOptions, compile_specialized
        from . import cache, driver
        specs = self.specialization(values)
        device = driver.device_of(values, specs, self.__name__) if load else None
        compile_options = CompileOptions(
            num_warps=int(options.get("num_warps", 4)),
            num_stages=int(options.get("num_stages", 3)),
            target=driver.target_of(device) if load else options.get("target") or driver.default_target(),
            debug=bool(options.get("debug", self.debug if self.debug is not None else _config.debug)),
        )
        spec_key = tuple(s.key() for s in specs)
        memory_key = (device, spec_key, compile_options)
        kernel = None if _config.always_compile else self._kernels.get(memory_key)
        if kernel is not None:
            return kernel
        disk_key = cache.kernel_key(self.cache_hash(), spec_key, compile_options)
        compiled = None if _config.always_compile else cache.load(disk_key)
        if compiled is None:
            compiled = compile_specialized(self, specs, compile_options)
            cache.store(disk_key, compiled)
        if not load:
            return compiled
        from .kernel import LoadedKernel
        kernel = LoadedKernel(compiled, device)
        self._kernels[memory_key] = kernel
        return kernel

    def cache_hash(self) -> str:
        """Hash of this kernel's source, the @jit functions it calls and the globals it reads."""
        if self._cache_hash is None:
            import hashlib
            digest = hashlib.sha256()
            for part in sorted(_dependencies(self)):
                digest.update(part.encode())
            self._cache_hash = digest.hexdigest()
        return self._cache_hash


def _dependencies(fn: KernelFunction, seen: set | None = None) -> set[str]:
    """Source of `fn` and its @jit callees, plus the constant globals they read."""
    import ast
    seen = seen if seen is not None else set()
    if id(fn) in seen:
        return set()
    seen.add(id(fn))
    parts = {f"{fn.__module__}.{fn.__qualname__}:{fn.source_hash()}"}
    namespaces = [fn.closure_values(), fn.globals]
    for node in ast.walk(fn.parse()):
        if not isinstance(node, ast.Name):
            continue
        for namespace in namespaces:
            if node.id not in namespace:
                continue
            value = namespace[node.id]
            if isinstance(value, KernelFunction):
                parts |= _dependencies(value, seen)
            elif isinstance(value, (tl.constexpr, int, float, bool, str, tl.dtype)) or value is None:
                parts.add(f"global {node.id}={tl._unwrap(value)!r}")
            break
    return parts


def _spec_from_type(name: str, value: Any) -> ArgSpec:
    if isinstance(value, tl.dtype):
        return ArgSpec(name, value)
    text, _, div = value.partition(":")
    return ArgSpec(name, tl.dtype_from_signature(text), divisibility=int(div) if div else 1)


class _MissingType:
    def __repr__(self) -> str:
        return "<missing>"


_MISSING = _MissingType()


def jit(fn: Callable | None = None, *, noinline: bool = False, debug: bool | None = None,
        do_not_specialize: Sequence[str | int] = (), **unused) -> Any:
    """Decorator: `@tilec.jit` or `@tilec.jit(noinline=True, debug=True)`."""

    def decorate(f: Callable) -> JITFunction:
        return JITFunction(f, noinline=noinline, debug=debug, do_not_specialize=do_not_specialize)

    return decorate(fn) if fn is not None else decorate

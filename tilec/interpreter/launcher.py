"""Running a kernel in the interpreter: bind arguments, map memory, run every program.

The interpreter runs the frontend's rewritten kernel as Python (frontend/interpretable.py),
once per program id, with a `Semantic(NumpyBuilder)` active, so every `tl.*` builtin,
tensor operator and Python construct with a kernel meaning (frontend/python_rules.py)
goes through the same code as the compiler's, and only the last step (emitting vs.
computing) differs. Control flow then simply runs: an `if` asks the builder for its
scalar condition's value, a loop iterates over scalar tensors.

Errors are reported against the kernel's source, found by walking the traceback to the
innermost frame that runs kernel code (the launched kernel, or a @jit function it
called): an out-of-bounds access becomes `OutOfBoundsAccess`, a broken language rule a
`KernelSemanticError` (a `CompilationError` located like the compiler's, and still a
`TilecSemanticError`).
"""
from __future__ import annotations

import contextlib
import io
import linecache
import os
from types import CodeType, FrameType, TracebackType
from typing import Any, Callable

import numpy as np

from ..errors import CompilationError, LaunchError, SourceLocation, dtype_argument_error
from ..frontend.kernel_function import KernelFunction
from ..language import core as tl
from ..language.core import TilecSemanticError, activate_semantic, tensor
from ..language.semantic import Semantic
from ..runtime import specialize
from ..runtime.reinterpret import TensorWrapper
from ..runtime.tma import TensorMap
from ..specialization import ArgumentLayout
from .memory import Memory, MemoryFault, OutOfBoundsAccess, is_torch_tensor
from .numpy_builder import NumpyBuilder, numpy_dtype
from .numpy_ops_misc import DeviceAssertionError
from .python_builtins import DEVICE_FUNCTIONS, KernelFunctions


class KernelSemanticError(CompilationError, TilecSemanticError):
    """A language rule broken while interpreting, located at the kernel's source line.

    It is a `CompilationError` (what the compiled path raises for the same mistake, so
    tests expecting one pass under both backends) and a `TilecSemanticError` (what the
    semantic layer raised).
    """


def interpret_kernel(fn: KernelFunction, grid: Any, args: tuple, kwargs: dict) -> None:
    """Runs `fn[grid](*args, **kwargs)` on the CPU; arrays are updated in place.

    Launch options (num_warps, stream, ...) are accepted and ignored. Binding and grid
    resolution are the compiled path's own (`JITFunction._split_call/_resolve_grid`), so
    defaults, keyword arguments, callable grids and their errors behave identically.
    """
    options, values = fn._split_call(tuple(args), dict(kwargs))
    check_options = getattr(fn, "_check_options", None)
    if check_options is not None:
        check_options(options)
    debug = _debug_mode(fn, options)
    num_warps = int(options.get("num_warps") or 4)  # what tl.extra.cuda.num_warps() answers
    dims = fn._resolve_grid(grid, values)
    parameters = fn._parameters(values) if hasattr(fn, "_parameters") else \
        [(index, name, value) for index, (name, value) in enumerate(zip(fn.arg_names, values))]
    with _DeviceMirror() as mirror:
        arrays: dict[str, Any] = {}
        for index, name, value in parameters:
            if (index < 0 or index not in fn.constexprs) and _is_array(value):
                arrays[name] = mirror.host_array(name, value, fn.__name__)
        memory = Memory(arrays, to_host=mirror.to_host)
        # Every parameter as compiled (a tuple argument's leaves, then its layout), and the
        # kernel's arguments: a tuple rebuilt from its leaves, as the frontend rebuilds it.
        made: dict[str, Any] = {}
        for index, name, value in parameters:
            if isinstance(value, ArgumentLayout):
                made[name] = value.rebuild(made, tl.tuple_value)
            else:
                made[name] = _kernel_argument(fn, index, name, value, memory, arrays)
        kernel_args = [made[name] for name in fn.arg_names]
        _check_like_the_compiler(fn, values, debug, num_warps)
        if 0 in dims:
            return
        _run_grid(fn, dims, kernel_args, memory, debug, num_warps)


def _check_like_the_compiler(fn: KernelFunction, values: list, debug: bool, num_warps: int = 4) -> None:
    """Runs the compiler's frontend over this specialisation (once per specialisation),
    so that a kernel the compiler would refuse -- unsupported syntax, a name whose type
    changes in a loop, a runtime value where a constexpr is needed, an early `return` --
    fails here too, with the same located CompilationError, even in code the inputs never
    reach. About 10 ms per specialisation; nothing is lowered."""
    specialization = getattr(fn, "specialization", None)
    if specialization is None:
        return
    # As a launch reads them (strings are constexprs), host arrays allowed; LaunchErrors
    # name the argument, as on the GPU.
    specs = specialization(values, types_as_strings=False, host_arrays=True)
    key = (tuple(s.key() for s in specs), debug, num_warps)
    checked = fn.__dict__.setdefault("_checked_by_frontend", set())
    if key in checked:
        return
    from ..frontend import generate_ttir
    from ..runtime.driver import default_target
    from ..target import Target
    try:
        # tl.static_print prints while the program runs; this check is not a compilation to show.
        with contextlib.redirect_stdout(io.StringIO()):
            generate_ttir(fn, specs, debug=debug, target=Target.parse(default_target()), num_warps=num_warps,
                          fnuz_fp8=True)  # the interpreter runs the fnuz fp8 formats; GPUs do not
    except (CompilationError, Warning):  # a warning the caller turned into an error is theirs too
        raise
    except Exception:  # noqa: BLE001  a frontend bug: the compiled path reports it; interpreting still works
        pass
    checked.add(key)


def _debug_mode(fn: KernelFunction, options: dict) -> bool:
    """Whether device_assert and the overflow checks run: the launch's `debug=`, else the
    kernel's `@jit(debug=)`, else TILEC_DEBUG (as for compiled kernels)."""
    from ..config import config
    if "debug" in options:
        return bool(options["debug"])
    return bool(fn.debug if fn.debug is not None else config.debug)


def _run_grid(fn: KernelFunction, dims: tuple[int, int, int], kernel_args: list[Any], memory: Memory,
              debug: bool, num_warps: int = 4) -> None:
    builder = NumpyBuilder(memory, dims, fn.__name__, debug=debug)
    # A copy of the kernel whose `min`, `max` and `abs` accept tensors (python_builtins.py).
    functions = KernelFunctions()
    body: Callable = functions.get(fn)
    # @jit functions passed as constexpr arguments run patched too.
    kernel_args = [functions.wrap(a) if isinstance(a, DEVICE_FUNCTIONS) else a for a in kernel_args]
    # Parameters after `*` are passed by keyword (`def k(x_ptr, *, BLOCK: tl.constexpr)`).
    keyword_only = {p.name: a for p, a in zip(fn.params, kernel_args) if p.kind is p.KEYWORD_ONLY}
    kernel_args = kernel_args[:len(kernel_args) - len(keyword_only)]
    # Handles are never mutated, so one set of argument tensors serves every program.
    # Combine functions the semantic layer calls (tl.reduce, tl.associative_scan) run patched too.
    activate_caller = getattr(tl, "activate_caller", None)
    calls = activate_caller(functions.call) if activate_caller is not None else contextlib.nullcontext()
    with activate_semantic(Semantic(builder, debug=debug, num_warps=num_warps)), calls, np.errstate(all="ignore"):
        for z in range(dims[2]):
            for y in range(dims[1]):
                for x in range(dims[0]):
                    builder.program = (x, y, z)
                    try:
                        body(*kernel_args, **keyword_only)
                    except MemoryFault as fault:
                        raise _out_of_bounds(fn, fault, builder.program, functions.codes) from None
                    except KernelSemanticError:
                        raise
                    except TilecSemanticError as exc:
                        raise _located_semantic_error(fn, exc, builder.program, functions.codes) from None
                    except DeviceAssertionError:
                        raise
                    except AssertionError as exc:
                        if builder.failed_assert is None:
                            raise
                        raise _failed_assert_statement(fn, exc, builder) from None


def _failed_assert_statement(fn: KernelFunction, exc: AssertionError, builder: NumpyBuilder) -> DeviceAssertionError:
    """The kernel's `assert cond, msg` on a tensor failed (debug mode): reported as
    tl.device_assert reports, at the assert's line."""
    frame = exc.__traceback__
    location = "<unknown>"
    while frame is not None:
        code = frame.tb_frame.f_code
        if not code.co_filename.startswith(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))):
            location = f"{code.co_filename}:{frame.tb_lineno}"
        frame = frame.tb_next
    index, count = builder.failed_assert
    builder.failed_assert = None
    message = str(tl._unwrap(exc.args[0])) if exc.args else ""  # the kernel's strings are constexprs here
    element = f" (element {index}, one of {count} failing)" if index != () else ""
    text = (f"device assertion failed in kernel `{fn.__name__}` at {location}, program id {builder.program}"
            f"{element}: {message}")
    return DeviceAssertionError(text, kernel=fn.__name__, location=location, program_id=builder.program,
                                message=message, index=index)


# ----------------------------------------------------------------------------- arguments


def _is_array(value: Any) -> bool:
    if isinstance(value, (tl.constexpr, str, tl.dtype)) or value is None or isinstance(value, int):
        return False
    return specialize.scalar_type(value) is None and specialize.dtype_of_array(value) is not None


def _kernel_argument(fn: KernelFunction, index: int, name: str, value: Any, memory: Memory,
                     arrays: dict[str, Any]) -> Any:
    """What the kernel body receives for one parameter.

    constexpr parameters get a `tl.constexpr` of the value (as the compiler has them); runtime
    scalars become scalar tensors typed like the compiled path's arguments
    (`specialize.scalar_type`: ints int32/int64/uint64, floats fp32, bools int1); arrays
    become pointer scalars holding their virtual address; None and strings stay as they are.
    """
    if index in fn.constexprs and index >= 0 or isinstance(value, tl.constexpr):
        return tl.constexpr(value)  # as the compiler has it (`BLOCK.type`, `N.dtype`)
    if value is None or isinstance(value, str):
        return value  # as in the compiled path, None and strings are constexprs
    if isinstance(value, TensorMap):
        return None  # a host descriptor's TMA tensor map: the interpreter reads through its pointer form
    if isinstance(value, tl.dtype):
        raise LaunchError(dtype_argument_error(fn.__name__, name, value))
    try:
        ty = specialize.scalar_type(value)
    except LaunchError as error:
        raise type(error)(f"argument '{name}' of {fn.__name__}(): {error}") from None
    annotated = getattr(fn, "annotated_types", {}).get(name)
    if ty is not None and annotated is not None:  # `val: tl.float16`: exactly that type, as compiled
        ty = specialize.annotated_scalar(annotated, value, name, fn.__name__)
        return tensor(np.array(value, dtype=numpy_dtype(ty)), ty)
    if ty is not None:
        if specialize.is_folded_one(ty, value) and name not in getattr(fn, "do_not_specialize", ()):
            return tl.constexpr(1)  # compiled as the constant 1 (JITFunction._arg_spec), a constexpr there
        return tensor(np.array(value, dtype=numpy_dtype(ty)), ty)
    if name in arrays:
        element = specialize.dtype_of_array(value)
        return tensor(np.array(memory.address_of(name), dtype=np.uint64),
                      tl.pointer_type(element, const=name in getattr(fn, "const_params", ())))
    raise LaunchError(f"argument '{name}' of {fn.__name__}() is a {specialize.describe(value)}; the interpreter "
                      "expects a NumPy array, a torch tensor, an int, a float, a bool, a string or None")


class _DeviceMirror:
    """Host copies of CUDA torch tensors for the duration of a launch.

    The interpreter can only address host memory, so each CUDA *storage* an argument (or
    an integer device address the kernel converts to a pointer) lives in is copied to the
    host whole (views keep their offsets and strides, and two
    views of one storage keep sharing it), and copied back when the grid has run, even
    after an error, as the GPU would have kept the writes done so far.
    """

    def __init__(self):
        self._storages: dict[int, tuple[Any, Any]] = {}  # device data_ptr -> (device, host)

    def host_array(self, name: str, value: Any, kernel: str) -> Any:
        if isinstance(value, TensorWrapper):  # tilec.reinterpret: the memory is the base's
            value = value.base
        host = self.to_host(value)
        if host is None:
            raise LaunchError(f"argument '{name}' of {kernel}() is a {specialize.describe(value)}; the "
                              "interpreter supports NumPy arrays and torch tensors (CPU or CUDA)")
        return host

    def to_host(self, value: Any) -> Any | None:
        """`value` itself for a host array; for a CUDA tensor, a host tensor over the host
        copy of its storage (made once per storage); None for anything else. Also how the
        memory reaches an array found through an integer address (a table of data_ptr()s)."""
        if isinstance(value, np.ndarray):
            return value
        if is_torch_tensor(value):
            if value.device.type == "cpu":
                return value
            if value.device.type == "cuda":
                import torch
                storage = value.untyped_storage()
                key = storage.data_ptr()
                if key not in self._storages:
                    self._storages[key] = (storage, storage.cpu())
                host = self._storages[key][1]
                return torch.empty(0, dtype=value.dtype).set_(host, value.storage_offset(), value.size(),
                                                             value.stride())
        return None

    def __enter__(self) -> "_DeviceMirror":
        return self

    def __exit__(self, *exc) -> bool:
        for device, host in self._storages.values():
            device.copy_(host)
        return False


# ----------------------------------------------------------------------------- error locations


def _is_kernel_frame(frame: FrameType, kernel_codes: dict[CodeType, Any]) -> bool:
    """True for the launched kernel's frame and for @jit functions it called.

    The launcher runs copies of kernel functions (python_builtins.py), whose code objects
    it records; a @jit or library function called some other way (through
    `KernelFunction.__call__` or `LibraryFunction.__call__`) is the frame whose caller is
    that method.
    """
    if frame.f_code in kernel_codes:
        return True
    caller = frame.f_back
    return (caller is not None and caller.f_code.co_name == "__call__"
            and isinstance(caller.f_locals.get("self"), DEVICE_FUNCTIONS))


def _kernel_sites(tb: TracebackType | None, kernel_codes: dict[CodeType, Any]) -> list[SourceLocation]:
    """Source locations of the kernel frames in a traceback, outermost first."""
    sites = []
    while tb is not None:
        frame = tb.tb_frame
        if _is_kernel_frame(frame, kernel_codes):
            code = frame.f_code
            sites.append(SourceLocation(code.co_filename, tb.tb_lineno, _column(code, tb.tb_lasti),
                                        _source_line(code, tb.tb_lineno, kernel_codes), code.co_name))
        tb = tb.tb_next
    return sites


def _source_line(code: CodeType, lineno: int, kernel_codes: dict[CodeType, Any]) -> str:
    """Line `lineno` of the file `code` came from; for a kernel whose source is in no file
    (made by exec()), the kernel's own copy of it."""
    line = linecache.getline(code.co_filename, lineno)
    kernel = kernel_codes.get(code)
    if not line and kernel is not None:
        line = kernel.source_line(lineno - kernel.first_line + 1)
    return line


def _column(code: CodeType, lasti: int) -> int:
    """1-based column of the instruction at `lasti` (the call that failed), or 1."""
    positions = getattr(code, "co_positions", None)
    if positions is None or lasti < 0:
        return 1
    for index, position in enumerate(positions()):
        if index == lasti // 2:
            return (position[2] or 0) + 1
    return 1


def _where(fn: KernelFunction, sites: list[SourceLocation]) -> SourceLocation:
    if sites:
        return sites[-1]
    # Not reached in practice (the kernel frame is always on the traceback); be safe.
    return SourceLocation(fn.filename, fn.first_line, 1, fn.source_line(1), fn.__name__)


def _out_of_bounds(fn: KernelFunction, fault: MemoryFault, program: tuple[int, int, int],
                   codes: dict[CodeType, Any]) -> OutOfBoundsAccess:
    sites = _kernel_sites(fault.__traceback__, {**codes, fn.fn.__code__: fn})
    site = _where(fn, sites)
    inner = f" (in @jit function `{site.function}`)" if site.function != fn.__name__ else ""
    lines = [f"out-of-bounds {fault.access} in kernel `{fn.__name__}`{inner} at {site.filename}:{site.lineno}, "
             f"program id {program}:",
             f"    {site.source_line.strip()}",
             fault.detail]
    for caller in reversed(sites[:-1]):
        lines.append(f"called from {caller.filename}:{caller.lineno}: {caller.source_line.strip()}")
    return OutOfBoundsAccess("\n".join(lines), kernel=fn.__name__, filename=site.filename, lineno=site.lineno,
                             source_line=site.source_line.strip(), program_id=program, access=fault.access,
                             argument=fault.argument, element_offset=fault.element_offset)


def _located_semantic_error(fn: KernelFunction, exc: TilecSemanticError, program: tuple[int, int, int],
                            codes: dict[CodeType, Any]) -> KernelSemanticError:
    sites = _kernel_sites(exc.__traceback__, {**codes, fn.fn.__code__: fn})
    message = f"{exc}\n(interpreting kernel `{fn.__name__}`, program id {program})"
    error = KernelSemanticError(message, _where(fn, sites), tuple(sites[:-1]))
    error.original = exc  # its __cause__
    return error


__all__ = ["KernelSemanticError", "OutOfBoundsAccess", "interpret_kernel"]

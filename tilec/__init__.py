"""tilec: a Python-embedded tile language with an MLIR-based JIT compiler for NVIDIA GPUs.

    import tilec
    import tilec.language as tl

    @tilec.jit
    def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)

    add[(tilec.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
"""
from . import language, testing  # noqa: F401
from .errors import (CompilationError, LaunchError, OutOfResources, TargetError, TilecError,  # noqa: F401
                     ToolkitError, ToolNotFoundError)
from .language.aggregates import aggregate_class as aggregate  # noqa: F401
from .language.compile_time import cdiv, constexpr_function, next_power_of_2  # noqa: F401
from .runtime.autotuner import Autotuner, Config, Heuristics, autotune, heuristics  # noqa: F401
from .runtime.jit import JITFunction, KernelInterface, jit  # noqa: F401
from .runtime.reinterpret import TensorWrapper, reinterpret  # noqa: F401

# The Triton language version tilec implements, then tilec's own release (a PEP 440 local
# label): with `import tilec as triton`, libraries' version gates (`triton.__version__ >=
# "3.0.0"`, `packaging.version.parse(...)`) take the paths written for that language.
# The release part is backend.kernel_data.TILEC_VERSION, which keys the kernel cache.
__version__ = "3.9.0+tilec.0.1.0"


def set_allocator(allocator) -> None:
    """Accepted for Triton's `triton.set_allocator`: Triton asks it for global scratch
    memory (device-side TMA descriptors); tilec's descriptors need none, so the allocator
    is kept but not called."""
    global _allocator
    _allocator = allocator


_allocator = None


def compile(fn, signature=None, constexprs=None, target=None, num_warps=4, num_stages=3, debug=None,
            enable_fp_fusion=True, maxnreg=None):
    """Compiles kernel `fn` without a GPU; returns a CompiledKernel (see tilec.backend.kernel_data)
    that `compiled[grid](*args)` launches (tilec.runtime.kernel.LaunchableKernel).

    `signature` maps parameter names to types ("*fp32", "i32"; ":16" appended declares a
    pointer 16-byte aligned or an integer divisible by 16), `constexprs` names to values.
    `target` is a GPU such as "sm_80" or "sm_90"; None (not "") means sm_90.
    `debug=None` follows the kernel's @jit(debug=) and TILEC_DEBUG, as launches do.
    `maxnreg` caps the registers a thread may use (`.maxnreg` in the PTX), as Triton's. The
    result comes from the disk cache when the same kernel was compiled before, by this
    function, `warmup` or a launch.
    """
    from .errors import hide_internal_frames
    from .runtime.jit import compile_signature
    try:
        target = _target_name(target)
        return compile_signature(fn, signature or {}, constexprs or {}, target=target, num_warps=num_warps,
                                 num_stages=num_stages, debug=debug, enable_fp_fusion=enable_fp_fusion,
                                 maxnreg=maxnreg)
    except Exception as error:
        hide_internal_frames(error)  # the user's frames and the error's own location are what matter
        raise


def _target_name(target) -> str | None:
    """`tilec.compile`'s target checked here, where it is given: None means sm_90, and an
    empty name is refused rather than taken for None."""
    from .target import Target
    if target is None or isinstance(target, Target):
        return target
    if isinstance(target, str) and not target.strip():
        raise TargetError(f"tilec.compile: target={target!r} names no GPU; name one, such as 'sm_80', 'sm_90' "
                          "or 'sm_100' (tilec compiles for sm_70 and newer), or leave target out for sm_90")
    return Target.parse(target).name

"""The interpreter: `TILEC_INTERPRET=1` runs @tilec.jit kernels on the CPU with NumPy.

`JITFunction.run` calls `interpret_kernel` instead of compiling when
`tilec.config.config.interpret` is set. The kernel's Python function runs once per
program of the grid, with the shared semantic layer computing on NumPy arrays
(`NumpyBuilder`) over a bounds-checked virtual address space (`Memory`). It exists to
debug kernels: breakpoints work inside them (a tensor's values are `x.handle`), and
every out-of-bounds access is reported (`OutOfBoundsAccess`) with the kernel line and
program id. Programs run one after another, in x-fastest order.

- launcher.py           binding arguments, the grid loop, error locations
- python_builtins.py    Python's min/max/abs on tensors, as the compiler reads them
- numpy_builder.py      the `Builder` that computes each operation as the GPU does, with
  numpy_ops_shape.py    reshapes, joins, gathers, histograms and scans,
  numpy_ops_atomic.py   atomics, and
  numpy_ops_misc.py     dot, device_print/device_assert and hints as mixins
- numpy_common.py       element types (bf16 and fp8 from ml_dtypes) and GPU rounding
- memory.py             virtual addresses for the arguments' buffers, checked loads and
                        stores, read-modify-write for atomics
"""
from .launcher import KernelSemanticError, interpret_kernel
from .memory import Memory, OutOfBoundsAccess
from .numpy_builder import NumpyBuilder
from .numpy_ops_misc import DeviceAssertionError

__all__ = ["DeviceAssertionError", "KernelSemanticError", "Memory", "NumpyBuilder", "OutOfBoundsAccess",
           "interpret_kernel"]

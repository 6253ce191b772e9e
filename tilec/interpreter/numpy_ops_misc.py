"""Matrix products, debugging, hints and hardware reads of the interpreter's builder (a
mixin of `NumpyBuilder`)."""
from __future__ import annotations

import sys
import time
from typing import Any, Sequence

import numpy as np

from ..errors import UserError
from ..language.core import TilecSemanticError, block_type, tensor
from .numpy_common import is_float, is_narrow, kernel_frame, numpy_dtype, round_to, tf32


class DeviceAssertionError(UserError, AssertionError):
    """`tl.device_assert` failed in an interpreted kernel.

    The message names the kernel, the source location, the program id, the message and
    the first failing element; the same facts are attributes.
    """

    def __init__(self, text: str, *, kernel: str, location: str, program_id: tuple[int, int, int],
                 message: str, index: Any):
        super().__init__(text)
        self.kernel = kernel
        self.location = location
        self.program_id = program_id
        self.message = message
        self.index = index


def _format_value(value: Any, dt: np.dtype, hex: bool, is_pointer: bool) -> str:
    """One element as the compiled kernel's printf shows it: floats as %.9g (%.17g for
    float64: enough digits to read back the exact value), integers in decimal, hex bit
    patterns zero-padded to the type's width, pointers as 0x... addresses."""
    if is_pointer:
        return f"0x{int(value):x}"
    if hex:
        width = max(1, dt.itemsize) * 2
        if dt == np.bool_:
            return f"0x{int(value):02x}"
        bits = np.asarray(value, dtype=dt).reshape(1).view(f"u{dt.itemsize}")[0]
        return f"0x{int(bits):0{width}x}"
    if dt == np.bool_:
        return str(int(value))
    if is_float(dt):
        return format(float(np.asarray(value, dtype=dt).astype(np.float64)), ".17g" if dt.itemsize == 8 else ".9g")
    return str(int(value))


class MiscOps:
    """dot, device_print, device_assert, barrier, hint, assume."""

    # -- matrix product
    def dot(self, a: np.ndarray, b: np.ndarray, acc: np.ndarray, input_precision: str, ty: block_type,
            max_num_imprecise_acc: int | None = None) -> np.ndarray:
        """acc + a @ b, computed exactly (float64; int64 for integers) and rounded once to
        the result type. "tf32" first cuts fp32 inputs to tf32's 10 mantissa bits (toward zero); the
        multi-pass precisions (tf32x3, bf16x3, bf16x6) are computed exactly, like "ieee".
        `max_num_imprecise_acc` bounds the GPU's imprecise fp8 sums; exact sums need none."""
        a, b, acc = np.asarray(a), np.asarray(b), np.asarray(acc)
        out = numpy_dtype(ty)
        if not is_float(a.dtype):
            # Integer inputs accumulate exactly; the int32 result wraps as the GPU's.
            total = np.matmul(a.astype(np.int64), b.astype(np.int64)) + acc.astype(np.int64)
            return total.astype(out)
        if input_precision == "tf32" and a.dtype == np.float32 and b.dtype == np.float32:
            a, b = tf32(a), tf32(b)
        elif input_precision not in ("ieee", "tf32", "tf32x3", "bf16x3", "bf16x6"):
            raise TilecSemanticError(f"unknown input_precision {input_precision!r}; expected ieee, tf32, tf32x3, "
                                     f"bf16x3 or bf16x6")
        wide = [round_to(x, np.float64) if is_narrow(x.dtype) else x.astype(np.float64)
                for x in (a, b, acc)]
        return round_to(np.matmul(wide[0], wide[1]) + wide[2], out)

    # -- debugging
    def device_print(self, prefix: str, args: Sequence[tensor], hex: bool) -> None:
        """One line per element of every argument, as the GPU prints:

            pid (0, 0, 0) idx ( 3) x: 1.5

        the element index padded to the width of its dimension; with several arguments,
        each line names its operand ("(operand 1) "), all elements of one operand first.
        """
        x, y, z = self.program
        head = f"pid ({x}, {y}, {z})"  # `prefix` as semantic.device_print made it (Triton's)
        lines = [] if args else [f"{head}{prefix.rstrip()}"]  # a message alone: once per program
        for number, arg in enumerate(args):
            values = np.asarray(arg.handle)
            operand = f"(operand {number}) " if len(args) > 1 else ""
            is_pointer = arg.dtype.is_ptr()
            if values.ndim == 0:
                lines.append(f"{head} idx (){prefix}{operand}"
                             f"{_format_value(values, values.dtype, hex, is_pointer)}")
                continue
            widths = [len(str(max(dim - 1, 0))) for dim in values.shape]
            for index in np.ndindex(*values.shape):
                where = ", ".join(f"{i:>{w}}" for i, w in zip(index, widths))
                lines.append(f"{head} idx ({where}){prefix}{operand}"
                             f"{_format_value(values[index], values.dtype, hex, is_pointer)}")
        if lines:
            sys.stdout.write("\n".join(lines) + "\n")
            sys.stdout.flush()

    def device_assert(self, cond: np.ndarray, message: str, location: str) -> None:
        cond = np.asarray(cond)
        failing = cond == 0
        if not failing.any():
            return
        kernel = getattr(self, "kernel_name", "kernel")
        if cond.ndim == 0:
            index: Any = ()
            element = ""
        else:
            first = tuple(int(i) for i in np.argwhere(failing)[0])
            index = first[0] if len(first) == 1 else first
            element = f" (element {index}, one of {int(failing.sum())} failing)"
        text = (f"device assertion failed in kernel `{kernel}` at {location}, program id {self.program}"
                f"{element}: {message}")
        raise DeviceAssertionError(text, kernel=kernel, location=location, program_id=self.program,
                                   message=message, index=index)

    def source_location(self) -> str:
        """The innermost frame outside tilec: the kernel (or @jit function) line running."""
        frame = kernel_frame()
        return f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame is not None else "<unknown>"

    def inline_asm(self, asm, constraints, args, result_types, is_pure, pack):
        raise TilecSemanticError("inline_asm_elementwise runs PTX, which the interpreter cannot execute; "
                                 "run this kernel on the GPU (or give the interpreter path a tl.* equivalent)")

    # -- synchronisation and hints
    def special_register(self, name: str, ty) -> np.ndarray:
        """%globaltimer is the host's clock in nanoseconds (since the epoch, as the GPU's);
        every program of the interpreter runs on one "SM", 0."""
        if name == "globaltimer":
            return np.array(time.time_ns(), dtype=np.int64)
        if name == "smid":
            return np.array(0, dtype=np.int32)
        raise TilecSemanticError(f"the interpreter has no special register {name!r}")

    def grid_dependency(self, action: str) -> None:
        """Kernels run one after another here: there is nothing to wait for or to release."""

    def barrier(self) -> None:
        return None  # one program runs at a time: nothing to wait for

    def hint(self, x: np.ndarray, kind: str, values: Sequence[int]) -> np.ndarray:
        return x

    def assume(self, cond: np.ndarray) -> None:
        return None


__all__ = ["DeviceAssertionError", "MiscOps"]

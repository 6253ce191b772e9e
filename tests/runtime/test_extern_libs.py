"""The launch option `extern_libs={"libdevice": path}` (Triton's tutorial 07): the kernel
links that libdevice bitcode file instead of the toolkit's. The path and the file's
version are part of the compiled kernel's key; a name other than libdevice, or a path
that is no file, is a LaunchError."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.errors import LaunchError, ToolkitError
from tilec.language.extra import libdevice
from tilec_testing import device_array, to_numpy


@tilec.jit
def asin_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, libdevice.asin(tl.load(x_ptr + offs, mask=mask)), mask=mask)


def _libdevice() -> str:
    from tilec.backend import toolkit
    try:
        return toolkit.libdevice_path()
    except ToolkitError:
        pytest.skip("no libdevice here")


def test_asin_with_the_libdevice_it_names(backend, rng, tmp_path):
    path = tmp_path / "libdevice.10.bc"
    shutil.copy(_libdevice(), path)
    x = rng.uniform(-1, 1, 1000).astype(np.float32)
    y = device_array(np.full(1000, np.nan, np.float32), backend)
    asin_kernel[(4,)](device_array(x, backend), y, 1000, BLOCK=256, extern_libs={"libdevice": str(path)})
    np.testing.assert_allclose(to_numpy(y), np.arcsin(x.astype(np.float64)), rtol=2e-6, atol=1e-7)


def test_the_named_file_is_the_one_linked(tmp_path):
    """Bitcode the linker cannot read makes the compile fail, so the option reaches the
    linker; fixed, the same path compiles (the file's version is in the key)."""
    path = tmp_path / "libdevice.10.bc"
    path.write_bytes(b"BC\xc0\xde but nothing more")
    x = np.zeros(16, np.float32)
    with pytest.raises(tilec.errors.TilecError, match="Failed loading file"):
        asin_kernel.warmup(x, x, 16, BLOCK=16, grid=(1,), target="sm_90", extern_libs={"libdevice": str(path)})
    shutil.copy(_libdevice(), path)
    kernel = asin_kernel.warmup(x, x, 16, BLOCK=16, grid=(1,), target="sm_90", extern_libs={"libdevice": str(path)})
    assert "__nv_asinf" not in kernel.asm["ptx"] and kernel.asm["cubin"]  # linked in, no call left


@pytest.mark.parametrize("extern_libs, words", [
    ({"libm": "/x"}, "maps 'libdevice' to the path of a libdevice bitcode file"),
    ({"libdevice": "/no/such/file.bc"}, "which is not a file"),
    ({"libdevice": __file__}, "which is not LLVM bitcode"),
])
def test_bad_extern_libs(backend, extern_libs, words):
    x = device_array(np.zeros(16, np.float32), backend)
    with pytest.raises(LaunchError, match=words):
        asin_kernel[(1,)](x, x, 16, BLOCK=16, extern_libs=extern_libs)

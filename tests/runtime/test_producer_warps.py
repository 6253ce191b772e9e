"""A warp-specialised kernel runs warps beyond its num_warps (KernelMetadata.producer_warps:
the warps that issue its copies): its launches ask for 32 * (num_warps + producer_warps)
threads, and a kernel compiled before the field existed (a disk-cache entry without it)
reads as having none."""
import types

from tilec.backend.kernel_data import CompiledKernel, KernelMetadata
from tilec.runtime import driver, kernel as kernel_module


def _loaded(monkeypatch, metadata: KernelMetadata) -> dict:
    seen = {}

    class Launcher:
        def __init__(self, function, block, shared, codes, names, context, indices):
            seen["block"] = block

    monkeypatch.setattr(kernel_module, "require_launcher", lambda: None)
    monkeypatch.setattr(kernel_module, "_launcher", types.SimpleNamespace(Launcher=Launcher))
    monkeypatch.setattr(driver, "load_cubin", lambda cubin, name, shared, device: driver.LoadedFunction(
        function=1, module=2, context=3, n_regs=32, n_spills=0, max_threads=1024, static_shared=0))
    kernel_module.LoadedKernel(CompiledKernel(metadata, {"cubin": b"\x7fELF"}), 0)
    return seen


def test_producer_warps_join_the_block(monkeypatch):
    metadata = KernelMetadata(name="k", target="sm_90", num_warps=8, num_stages=3, producer_warps=4)
    assert _loaded(monkeypatch, metadata)["block"] == 384
    plain = KernelMetadata(name="k", target="sm_90", num_warps=8, num_stages=3)
    assert plain.producer_warps == 0 and _loaded(monkeypatch, plain)["block"] == 256


def test_old_cache_entries_have_no_producer_warps():
    old = CompiledKernel(KernelMetadata(name="k", target="sm_90", num_warps=4, num_stages=3), {"cubin": b"\x7fELF"})
    data = old.serialize()
    header = __import__("json").loads(data[8:8 + int.from_bytes(data[:8], "little")])
    del header["metadata"]["producer_warps"]  # as written before the field existed
    assert KernelMetadata(**header["metadata"]).producer_warps == 0

"""One autotune config at a time, on either backend: what `--per-config` of
benchmarks/corpus/run.py and benchmarks/bench_tutorials.py uses to time every config of a
case's autotuned kernels on tilec and on Triton, each run through the case's own host code.

Both autotuners keep their configs in `.configs` and the configs they chose per tuning
key in `.cache`; both run a lone config as it is (no pruning, no timing). So restricting
`.configs` to one config (and emptying `.cache`) makes the next call launch exactly that
config. A module's two loads (tilec's and Triton's) build their configs from the same
source in the same order, so config i of one is config i of the other.
"""
from __future__ import annotations

import types
from contextlib import contextmanager
from typing import Any, Callable, Iterator


def autotuned(module: types.ModuleType) -> dict[str, Any]:
    """The module's @autotune kernels by name (objects with configs, a choice cache and
    the function they tune)."""
    return {name: value for name, value in vars(module).items()
            if isinstance(_attribute(value, "configs"), list) and isinstance(_attribute(value, "cache"), dict)
            and _attribute(value, "fn") is not None}


def _attribute(value: Any, name: str) -> Any:
    """value.name, or None (also where asking raises: a placeholder for a module that
    could not be imported)."""
    try:
        return getattr(value, name, None)
    except Exception:
        return None


@contextmanager
def only_config(tuner: Any, index: int, launched: list | None = None) -> Iterator[Any]:
    """Within the block, `tuner` has config `index` alone (and forgets its choices);
    afterwards its configs and choices are as they were. Yields the config. With
    `launched`, its one element becomes what the first launch of the tuner returns (both
    backends return the compiled kernel: registers, spills, shared memory); the launches
    after it, the timed ones, go straight to the tuner."""
    configs, cache = tuner.configs, dict(tuner.cache)
    tuner.configs = [configs[index]]
    tuner.cache.clear()
    own_run = vars(tuner).get("run")  # an instance's own run (None: the class's)

    def restore_run() -> None:
        if own_run is None:
            vars(tuner).pop("run", None)
        else:
            tuner.run = own_run
    if launched is not None:
        run = tuner.run

        def recording(*args, **kwargs):
            restore_run()
            launched[:] = [run(*args, **kwargs)]
            return launched[0]
        tuner.run = recording  # both backends' kernel[grid](...) calls self.run
    try:
        yield configs[index]
    finally:
        tuner.configs = configs
        tuner.cache.clear()
        tuner.cache.update(cache)
        restore_run()


def resources(kernel: Any) -> str:
    """A compiled kernel's registers a thread, spilled bytes and shared memory, as
    "regs/spill/smem" ("?" where the backend does not say)."""
    shared = getattr(kernel, "shared", None)
    if shared is None:
        shared = getattr(getattr(kernel, "metadata", None), "shared", None)
    values = (getattr(kernel, "n_regs", None), getattr(kernel, "n_spills", None), shared)
    return "/".join("?" if value is None else str(value) for value in values)


def describe(config: Any) -> str:
    """A config as a short label: its meta-parameters, warps and stages."""
    values = " ".join(f"{name}={value}" for name, value in config.kwargs.items())
    return f"{values} w{config.num_warps} s{config.num_stages}".strip()


def launched_configs(module: types.ModuleType, others: list[types.ModuleType],
                     first_call: Callable[[], Any]) -> list[tuple[str, int, str]]:
    """(kernel, config index, label) for every config of each @autotune kernel of
    `module` that `first_call` launches (its choice cache, emptied first, fills again) and
    that every module of `others` has too. A first call that raises leaves the kernels it
    reached; the per-config runs report the error."""
    tuners = autotuned(module)
    for tuner in tuners.values():
        tuner.cache.clear()
    try:
        first_call()
    except Exception:
        pass
    theirs = [autotuned(other) for other in others]
    return [(name, index, describe(config)) for name, tuner in tuners.items()
            if tuner.cache and all(name in t for t in theirs) for index, config in enumerate(tuner.configs)]

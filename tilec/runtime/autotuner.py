"""`@tilec.autotune`, `@tilec.heuristics` and `tilec.Config`, with Triton's meaning.

    @tilec.autotune(configs=[tilec.Config({"BLOCK": 128}, num_warps=4),
                             tilec.Config({"BLOCK": 1024}, num_warps=8)],
                    key=["n"])
    @tilec.jit
    def kernel(x_ptr, n, BLOCK: tl.constexpr): ...

    kernel[lambda meta: (tilec.cdiv(n, meta["BLOCK"]),)](x, n)

The first launch for a new value of the `key` arguments (and new dtypes of the tensor
arguments) times every config that survives pruning and keeps the fastest; later
launches with that key go straight to it. Configs that cannot be built for this GPU
(too much shared memory, a failed `static_assert`) time as infinite; if every config
fails, the first failure is raised. Under `TILEC_INTERPRET=1` nothing is timed: the first
config that survives pruning runs, because NumPy timings say nothing about the GPU.
`TILEC_PRINT_AUTOTUNING=1` prints each choice.
"""
from __future__ import annotations

import builtins
import os
import time
import warnings
from typing import Any, Callable, Sequence

from .. import config as _config_module
from ..errors import CompilationError, LaunchError, OutOfResources, ToolkitError, UsageError, hide_internal_frames
from ..frontend.kernel_function import called_without_grid
from ..torch_compile import launch_outside_graphs, launched_in_torch_compile
from .jit import KernelInterface, pop_warmup

_config = _config_module.config

# Launch options a Config may carry besides its meta-parameters.
_CONFIG_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


class Config:
    """One point of an autotuning space: meta-parameter values plus launch options."""

    def __init__(self, kwargs: dict[str, Any], num_warps: int = 4, num_stages: int = 3, num_ctas: int = 1,
                 maxnreg: int | None = None, pre_hook: Callable | None = None):
        self.kwargs = dict(kwargs)
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.num_ctas = num_ctas
        self.maxnreg = maxnreg
        self.pre_hook = pre_hook

    def all_kwargs(self) -> dict[str, Any]:
        """The meta-parameters and the options that are set, as launch keywords."""
        options = {name: getattr(self, name) for name in _CONFIG_OPTIONS if getattr(self, name) is not None}
        return {**self.kwargs, **options}

    def __repr__(self) -> str:
        parts = [f"{k}: {v}" for k, v in self.kwargs.items()]
        parts += [f"{name}: {getattr(self, name)}" for name in _CONFIG_OPTIONS if getattr(self, name) is not None]
        return ", ".join(parts)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Config) and repr(self) == repr(other) and self.pre_hook is other.pre_hook

    def __hash__(self) -> int:
        return hash(repr(self))


class _Wrapper(KernelInterface):
    """What Autotuner and Heuristics share: they wrap a kernel (or another wrapper) and
    are launched like one, `kernel[grid](*args, **kwargs)`."""

    def __init__(self, fn: Any):
        if not hasattr(fn, "arg_names"):  # a plain Python function: @tilec.jit is missing
            decorator = "tilec.autotune" if isinstance(self, Autotuner) else "tilec.heuristics"
            raise UsageError(f"{decorator} wraps a kernel, and {getattr(fn, '__name__', repr(fn))} is not one: "
                             f"put @tilec.jit under @{decorator}")
        self.fn = fn
        self.arg_names = list(fn.arg_names)
        self.__name__ = fn.__name__
        self.__doc__ = getattr(fn, "__doc__", None)

    def __getitem__(self, grid) -> Callable:
        if launched_in_torch_compile():  # a graph break, not a traced launch (see tilec.torch_compile)
            return launch_outside_graphs(self, grid)

        def launch(*args, **kwargs):
            try:
                return self.run(*args, grid=grid, **kwargs)
            except Exception as error:
                hide_internal_frames(error)  # the user's frames end at this call
                raise
        return launch

    def __call__(self, *args, **kwargs):
        try:  # raised and re-raised here so that the traceback ends at the user's call
            raise called_without_grid(self.__name__)
        except LaunchError as error:
            hide_internal_frames(error)
            raise

    @property
    def kernel(self) -> Any:
        """The @jit function underneath."""
        fn = self.fn
        while isinstance(fn, _Wrapper):
            fn = fn.fn
        return fn

    @property
    def base_fn(self) -> Any:
        """The Python function the @jit function underneath was made from, as Triton's
        Autotuner/Heuristics name it (`kernel.base_fn.__name__` is the kernel's name)."""
        return getattr(self.kernel, "fn", self.kernel)

    def _named(self, args: tuple, kwargs: dict) -> dict[str, Any]:
        if len(args) > len(self.arg_names):
            raise LaunchError(f"{self.__name__}() takes {len(self.arg_names)} arguments but {len(args)} were given "
                              f"(its parameters: {', '.join(self.arg_names)})")
        named = dict(zip(self.arg_names, args))
        for name, value in kwargs.items():
            if name in named:
                raise LaunchError(f"{self.__name__}() got multiple values for argument '{name}'")
            named[name] = value
        return named


def _launch(fn: Any, grid: Any, args: tuple, kwargs: dict) -> Any:
    """Launches `fn` (a @jit kernel or another wrapper) the way a user's `fn[grid](...)`
    does: a @jit kernel through its generated launcher (the in-memory key built inline,
    no binding in Python), anything else through its `run`."""
    if isinstance(fn, _Wrapper) or not hasattr(fn, "_fast_run"):
        return fn.run(*args, grid=grid, **kwargs)
    return fn[grid](*args, **kwargs)


class Heuristics(_Wrapper):
    """Meta-parameters computed from the other arguments: `values` maps a parameter name
    to a function of the dict of arguments (by name) given so far."""

    def __init__(self, fn: Any, values: dict[str, Callable[[dict], Any]]):
        super().__init__(fn)
        from .jit import LAUNCH_OPTIONS
        for name in values:  # a parameter, or a launch option (num_warps, num_stages, ...) as in Triton
            if name not in self.arg_names and name not in LAUNCH_OPTIONS:
                raise ValueError(f"@heuristics sets '{name}', which is neither a parameter of {self.__name__}() "
                                 f"nor a launch option ({', '.join(LAUNCH_OPTIONS)})")
        self.values = dict(values)

    def run(self, *args, grid, **kwargs):
        if kwargs and pop_warmup(kwargs, self.arg_names):
            return self.warmup(*args, grid=grid, **kwargs)
        return _launch(self.fn, grid, args, self._with_values(args, kwargs))

    def warmup(self, *args, grid=None, **kwargs):
        try:
            return self.fn.warmup(*args, grid=grid, **self._with_values(args, kwargs))
        except Exception as error:
            hide_internal_frames(error)
            raise

    def _with_values(self, args: tuple, kwargs: dict) -> dict:
        """`kwargs` plus each heuristic's value, computed in order (a later rule sees the
        earlier ones)."""
        for name, rule in self.values.items():
            kwargs[name] = rule(self._named(args, kwargs))
        return kwargs


class Autotuner(_Wrapper):
    """A kernel launched with the fastest of several Configs (see the module docstring)."""

    # Triton's constructor, argument for argument, so that libraries subclassing Triton's
    # Autotuner (FLA's CachedAutotuner) run on tilec too; `arg_names` is read from `fn`.
    def __init__(self, fn: Any, arg_names: Sequence[str] | None, configs: Sequence[Config], key: Sequence[str],
                 reset_to_zero: Sequence[str] | None = None, restore_value: Sequence[str] | None = None,
                 pre_hook: Callable | None = None, post_hook: Callable | None = None,
                 prune_configs_by: dict | None = None, warmup: int | None = None, rep: int | None = None,
                 use_cuda_graph: bool = False, do_bench: Callable | None = None, cache_results: bool = False):
        super().__init__(fn)
        self.configs = list(configs) or [Config({})]
        for config in self.configs:
            if not isinstance(config, Config):
                raise TypeError(f"@autotune configs must be tilec.Config objects, got {config!r}")
        # A key that names no parameter is skipped, as Triton does (Triton's tutorial 08
        # has one, misspelt), with a warning; what the hooks reset or restore must exist.
        self.keys = [name for name in key if name in self.arg_names]
        unknown = [name for name in key if name not in self.arg_names]
        if unknown:
            warnings.warn(f"@autotune key names {', '.join(repr(n) for n in unknown)}, not parameters of "
                          f"{self.__name__}(); ignored", UserWarning, stacklevel=3)
        for name in [*(reset_to_zero or ()), *(restore_value or ())]:
            if name not in self.arg_names:
                raise ValueError(f"@autotune names '{name}', which is not a parameter of {self.__name__}()")
        prune_configs_by = prune_configs_by or {}
        self.early_config_prune = prune_configs_by.get("early_config_prune")
        self.perf_model = prune_configs_by.get("perf_model")
        self.top_k = prune_configs_by.get("top_k", 1.0)
        self.reset_to_zero = list(reset_to_zero or ())
        self.restore_value = list(restore_value or ())
        # Triton's hook protocol: each timed call runs self.pre_hook(nargs), the kernel, then
        # self.post_hook(nargs, exception=...); tuning ends with self.pre_hook(nargs,
        # reset_only=True). A subclass may replace either. Unlike Triton's, where a user
        # hook replaces the resetting and restoring, both happen here, the user's hook too.
        self.user_defined_pre_hook, self.user_defined_post_hook = pre_hook is not None, post_hook is not None
        self._user_pre_hook, self._user_post_hook = pre_hook, post_hook
        self.restore_copies: dict[str, Any] = {}
        self.pre_hook, self.post_hook = self._reset_and_save, self._restore_saved
        self.warmup_ms = 25 if warmup is None else warmup
        self.rep_ms = 100 if rep is None else rep
        self.user_do_bench = do_bench
        self.cache_results = cache_results
        self.cache: dict[tuple, Config] = {}
        self.configs_timings: dict[Config, float] | None = None
        self.best_config: Config | None = None
        self.bench_time = 0.0
        # Kernels (JITFunction.compiled_state's keys) the compile workers found cannot run: a config
        # too large for shared memory at one tuning key is at the next one too.
        self._cannot_run: set[tuple] = set()

    # ------------------------------------------------------------------ launching
    def run(self, *args, grid, **kwargs):
        if kwargs and pop_warmup(kwargs, self.arg_names):
            return self.warmup(*args, grid=grid, **kwargs)
        named = self._named(args, kwargs)
        key = self._key(named)
        config = self.cache.get(key)
        if config is None:
            # One config runs as it is, unpruned (as on Triton, whose early_config_prune
            # only chooses among several).
            pruned = self.configs if len(self.configs) == 1 else self.prune_configs(named, kwargs)
            if len(pruned) == 1:
                config = pruned[0]
            elif _config.interpret:  # nothing is timed: the first config that can run
                return self._run_first_that_runs(pruned, key, named, args, grid, kwargs)
            else:
                config = self._load_choice(key, pruned)
                if config is None:
                    config = self._tune(pruned, args, grid, kwargs, named)
                    self._store_choice(key, pruned, config)
                # Tuning ends with the reset_to_zero arguments zeroed (also where nothing
                # was timed, so both backends see the same values).
                self.pre_hook({**named, **config.all_kwargs()}, reset_only=True)
            self.cache[key] = config
            if _config.print_autotuning:
                print(f"tilec autotuning {self.__name__} for key {key}: chose {config}"
                      + (f" after {self.bench_time:.2f} s" if self.configs_timings else ""))
        self.best_config = config
        launch_kwargs = self._with_config(kwargs, config)
        if config.pre_hook is not None:
            config.pre_hook({**named, **launch_kwargs})
        return _launch(self.fn, grid, args, launch_kwargs)

    def _run_first_that_runs(self, configs: list[Config], key: tuple, named: dict, args: tuple, grid: Any,
                             kwargs: dict) -> Any:
        """In the interpreter: launches the configs in order until one runs, skipping those
        that cannot (a failed `tl.static_assert`, found by the frontend's check before
        anything runs), as a GPU's tuning times them as infinite; remembers that one."""
        self.pre_hook({**named, **configs[0].all_kwargs()}, reset_only=True)
        for index, config in enumerate(configs):
            self.best_config = config
            if config.pre_hook is not None:
                config.pre_hook({**named, **config.all_kwargs()})
            try:
                result = _launch(self.fn, grid, args, self._with_config(dict(kwargs), config))
            except Exception as error:
                if index + 1 < len(configs) and _config_cannot_run(error):
                    continue
                raise
            self.cache[key] = config
            return result

    def warmup(self, *args, grid=None, **kwargs):
        """Compiles every config that survives pruning; returns their CompiledKernels."""
        try:
            named = self._named(args, kwargs)
            configs = self.prune_configs(named, kwargs)
            if not _config.interpret:  # compile them at once; the loop below then reads them from disk
                self._compile_in_parallel(configs, args, grid, kwargs, named, target=kwargs.get("target"))
            return [self.fn.warmup(*args, grid=grid, **self._with_config(kwargs, config)) for config in configs]
        except Exception as error:
            hide_internal_frames(error)
            raise

    def prune_configs(self, named: dict, kwargs: dict) -> list[Config]:
        configs = self.configs
        if self.early_config_prune is not None:
            configs = list(self.early_config_prune(configs, named, **kwargs))
            if not configs:
                raise ValueError(f"early_config_prune of @autotune on {self.__name__}() left no config")
        if self.perf_model is not None and len(configs) > 1:
            top_k = self.top_k
            if isinstance(top_k, float) and top_k <= 1.0:
                top_k = int(len(configs) * top_k)
            top_k = builtins.max(1, int(top_k))
            if len(configs) > top_k:
                estimates = [self.perf_model(**named, **kwargs, **c.all_kwargs()) for c in configs]
                configs = [c for _, c in sorted(zip(estimates, configs), key=lambda pair: pair[0])][:top_k]
        return configs

    # ------------------------------------------------------------------ tuning
    def _key(self, named: dict) -> tuple:
        key = []
        for name in self.keys:
            value = named.get(name)
            key.append(getattr(value, "value", value) if not hasattr(value, "dtype") else str(value.dtype))
        key += [str(value.dtype) for value in named.values() if hasattr(value, "dtype")]
        return tuple(key)

    def _choice_path(self, key: tuple, configs: list[Config]):
        """Where `cache_results=True` keeps the choice for `key`: named by the kernel's
        source hash, the key, the configs and the GPU, under TILEC_CACHE_DIR/autotune."""
        import hashlib
        from pathlib import Path
        from . import driver
        digest = hashlib.sha256()
        for part in (self.kernel.cache_hash(), repr(key), repr(configs), driver.default_target()):
            digest.update(repr(part).encode() + b"\0")
        return Path(_config.cache_dir) / "autotune" / (digest.hexdigest() + ".txt")

    def _load_choice(self, key: tuple, configs: list[Config]) -> Config | None:
        if not self.cache_results:
            return None
        try:
            index = int(self._choice_path(key, configs).read_text())
        except (OSError, ValueError):
            return None
        return configs[index] if 0 <= index < len(configs) else None

    def _store_choice(self, key: tuple, configs: list[Config], choice: Config) -> None:
        if not self.cache_results:
            return
        import tempfile
        path = self._choice_path(key, configs)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "w") as f:
                f.write(str(configs.index(choice)))
            os.replace(tmp, path)  # atomic: concurrent tuners write whole files
        except OSError:
            pass  # a read-only cache directory only costs a re-tune

    def _with_config(self, kwargs: dict, config: Config) -> dict:
        if not kwargs:
            return config.all_kwargs()
        clash = sorted(set(kwargs) & set(config.kwargs))
        if clash:
            raise LaunchError(f"{self.__name__}(): {', '.join(clash)} {'is' if len(clash) == 1 else 'are'} set "
                              "by the @autotune configs and must not be passed at launch")
        return {**kwargs, **config.all_kwargs()}

    def _tune(self, configs: list[Config], args: tuple, grid, kwargs: dict, named: dict) -> Config:
        start = time.perf_counter()
        unrunnable = self._compile_in_parallel(configs, args, grid, kwargs, named)
        timings: dict[Config, float] = {}
        first_error: BaseException | None = None
        for config in configs:
            if config in unrunnable:
                timings[config] = float("inf")
                continue
            try:
                timings[config] = self._bench(config, args, grid, kwargs, named)
            except (OutOfResources, CompilationError, ToolkitError) as error:
                if not _config_cannot_run(error):
                    raise
                timings[config] = float("inf")
                first_error = first_error or error
        self.bench_time = time.perf_counter() - start
        self.configs_timings = timings
        best = builtins.min(timings, key=timings.get)
        if timings[best] == float("inf"):
            raise LaunchError(f"{self.__name__}(): none of the {len(configs)} @autotune configs can run here; "
                              f"the first failed with: {first_error}") from first_error
        return best

    def _compile_in_parallel(self, configs: list[Config], args: tuple, grid, kwargs: dict,
                             named: dict, target: str | None = None) -> set[Config]:
        """Compiles `configs` at once in forked worker processes, into the disk cache, so
        that timing them one by one then loads each instead of compiling it; returns the
        configs a worker found cannot run here (out of resources, a failed static_assert,
        refused by ptxas), which need not be compiled again to learn it. Every other
        outcome, a worker's own failure included, leaves the config to the serial path,
        which then compiles it and reports its errors as before.

        The workers only compile (the target is read here, in the parent): none touches
        the GPU, which a forked process must not. TILEC_COMPILE_WORKERS caps their number
        (default: the cores this process may use); 0 or 1 compiles serially. `target`:
        warmup's, else the current GPU's."""
        if _compile_workers(len(configs)) < 2 or _config.always_compile or not hasattr(os, "fork"):
            return set()
        if target is None:
            from . import driver
            try:
                target = driver.target_of(driver.current_device())
            except Exception:
                return set()
        kwargs = {name: value for name, value in kwargs.items() if name != "target"}
        # Configs already compiled (in this process or on disk: a new key of a kernel tuned
        # before), or found before to be unable to run, are not worth a fork; forking a
        # large process costs about a second.
        jobs, known = [], set()
        for index, config in enumerate(configs):
            launch_kwargs = self._with_config(kwargs, config)
            key, compiled = self._compiled(config, launch_kwargs, args, named, target)
            if key is not None and key in self._cannot_run:
                known.add(config)
            elif not compiled:
                jobs.append((index, config, launch_kwargs, key))
        count = _compile_workers(len(jobs))
        if count < 2:
            return known if len(known) < len(configs) else set()
        import selectors
        import signal
        import sys
        children: dict[int, int] = {}  # pid -> read end of its pipe
        for worker in range(count):
            read, write = os.pipe()
            for stream in (sys.stdout, sys.stderr):
                stream.flush()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)  # "multi-threaded, use of fork()"
                pid = os.fork()
            if pid == 0:  # the worker: compile its share, report, and leave without cleanup
                os.close(read)
                status = 0
                if worker:  # one worker's warnings (a toolkit's, say) are enough; not one per core
                    warnings.simplefilter("ignore")
                try:
                    for index, config, launch_kwargs, _ in jobs[worker::count]:
                        outcome = "ok"
                        try:
                            if config.pre_hook is not None:  # may set descriptor block shapes
                                config.pre_hook({**named, **config.all_kwargs()})
                            self.fn.warmup(*args, grid=grid, target=target, **launch_kwargs)
                        except Exception as error:
                            outcome = "cannot-run" if _config_cannot_run(error) else "error"
                        os.write(write, f"{index} {outcome}\n".encode())
                except BaseException:
                    status = 1
                finally:
                    os._exit(status)
            os.close(write)
            children[pid] = read
        reports = b""
        deadline = time.monotonic() + _COMPILE_WORKER_TIMEOUT_S
        quiet_since = time.monotonic()
        with selectors.DefaultSelector() as selector:
            for read in children.values():
                selector.register(read, selectors.EVENT_READ)
            while selector.get_map():
                now = time.monotonic()
                if now >= deadline or now - quiet_since >= _COMPILE_WORKER_SILENCE_S:
                    break  # stuck: the serial path compiles what is left
                for ready, _ in selector.select(timeout=1.0):
                    chunk = os.read(ready.fd, 4096)
                    quiet_since = time.monotonic()
                    if chunk:
                        reports += chunk
                    else:
                        selector.unregister(ready.fd)
            stuck = {key.fd for key in selector.get_map().values()}
        for pid, read in children.items():
            os.close(read)
            try:
                if read in stuck:
                    os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except OSError:
                pass
        unrunnable = set(known)
        keys = {index: key for index, _, _, key in jobs}
        for line in reports.decode(errors="replace").splitlines():
            index, _, outcome = line.partition(" ")
            if outcome == "cannot-run" and index.isdigit() and int(index) in keys:
                unrunnable.add(configs[int(index)])
                if keys[int(index)] is not None:
                    self._cannot_run.add(keys[int(index)])
        # Every config ruled out: compile them here, so that the error raised is a real one.
        return unrunnable if len(unrunnable) < len(configs) else set()

    def _compiled(self, config: Config, launch_kwargs: dict, args: tuple, named: dict,
                  target: str) -> tuple[tuple | None, bool]:
        """(the key of `config`'s kernel, whether it is compiled already), asked of a @jit
        kernel directly under the autotuner ((None, False) for anything else). Its
        pre-hook runs first, as in a worker and before each timed call: it may set
        descriptors' block shapes, which the kernel is keyed by."""
        from .jit import JITFunction
        if not isinstance(self.fn, JITFunction):
            return None, False
        try:
            if config.pre_hook is not None:
                config.pre_hook({**named, **config.all_kwargs()})
        except Exception:
            return None, False  # the worker, then the serial path, report it
        return self.fn.compiled_state(*args, target=target, **launch_kwargs)

    def _reset_and_save(self, nargs: dict, reset_only: bool = False) -> None:
        """The default pre_hook: zeroes the reset_to_zero arguments, keeps copies of the
        restore_value ones, then runs the user's pre_hook (only the zeroing when
        reset_only)."""
        for name in self.reset_to_zero:
            if nargs[name] is not None:  # an optional pointer left out (Triton's would raise)
                _zero(nargs[name])
        if reset_only:
            return
        self.restore_copies = {name: _copy(nargs[name]) for name in self.restore_value if nargs[name] is not None}
        if self._user_pre_hook is not None:
            self._user_pre_hook(nargs)

    def _restore_saved(self, nargs: dict, exception: BaseException | None) -> None:
        """The default post_hook: the user's post_hook, then the restore_value arguments
        put back as they were before the call."""
        if self._user_post_hook is not None:
            self._user_post_hook(nargs, exception=exception)
        for name, saved in self.restore_copies.items():
            _restore(nargs[name], saved)
        self.restore_copies = {}

    def _bench(self, config: Config, args: tuple, grid, kwargs: dict, named: dict) -> float:
        launch_kwargs = self._with_config(kwargs, config)
        full = {**named, **config.all_kwargs()}

        def call():
            if config.pre_hook is not None:
                config.pre_hook(full)
            self.pre_hook(full)
            try:
                self.fn.run(*args, grid=grid, **launch_kwargs)
            except Exception as error:
                self.post_hook(full, exception=error)
                raise
            self.post_hook(full, exception=None)

        call()  # compiles and loads outside the timed region; raises what the config cannot do
        if self.user_do_bench is not None:
            return _first(self.user_do_bench(call))
        from ..testing import do_bench
        return _first(do_bench(call, warmup=self.warmup_ms, rep=self.rep_ms, quantiles=(0.5,)))


def _zero(array) -> None:
    if hasattr(array, "zero_"):
        array.zero_()
    else:
        array[...] = 0


def _copy(array):
    return array.clone() if hasattr(array, "clone") else array.copy()


def _restore(array, saved) -> None:
    if hasattr(array, "copy_"):
        array.copy_(saved)
    else:
        array[...] = saved


def _first(value) -> float:
    return float(value[0] if isinstance(value, (list, tuple)) else value)


def autotune(configs: Sequence[Config], key: Sequence[str], prune_configs_by: dict | None = None,
             reset_to_zero: Sequence[str] | None = None, restore_value: Sequence[str] | None = None,
             pre_hook: Callable | None = None, post_hook: Callable | None = None, warmup: int | None = None,
             rep: int | None = None, use_cuda_graph: bool = False, do_bench: Callable | None = None,
             cache_results: bool = False) -> Callable:
    """Decorator: launch the kernel with the fastest of `configs` for each value of `key`."""

    def decorate(fn: Any) -> Autotuner:
        try:
            return Autotuner(fn, None, configs, key, prune_configs_by=prune_configs_by, reset_to_zero=reset_to_zero,
                             restore_value=restore_value, pre_hook=pre_hook, post_hook=post_hook, warmup=warmup,
                             rep=rep, do_bench=do_bench, cache_results=cache_results, use_cuda_graph=use_cuda_graph)
        except UsageError as error:
            hide_internal_frames(error)  # the user's frames end at the decorator
            raise

    return decorate


def heuristics(values: dict[str, Callable[[dict], Any]]) -> Callable:
    """Decorator: meta-parameters computed from the launch arguments."""

    def decorate(fn: Any) -> Heuristics:
        try:
            return Heuristics(fn, values)
        except UsageError as error:
            hide_internal_frames(error)  # the user's frames end at the decorator
            raise

    return decorate


# How long the parent waits for the compile workers of one tuning before it kills them
# (they should never take this long; the serial path then compiles what they did not).
_COMPILE_WORKER_TIMEOUT_S = 600
# ... or once no worker has reported a config for this long (no one config compiles
# this slowly: a worker that says nothing for so long is stuck, and is killed).
_COMPILE_WORKER_SILENCE_S = 180


def _compile_workers(configs: int) -> int:
    """How many processes compile `configs` autotune configs at once."""
    text = os.environ.get("TILEC_COMPILE_WORKERS", "")
    try:
        cap = int(text) if text.strip() else None
    except ValueError:
        warnings.warn(f"tilec: ignoring TILEC_COMPILE_WORKERS={text!r}, which is not a number", RuntimeWarning)
        cap = None
    if cap is None:
        try:
            cap = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            cap = os.cpu_count() or 1
    return builtins.max(0, builtins.min(cap, configs))


def _config_cannot_run(error: BaseException) -> bool:
    """Whether a config's failure only rules that config out, as Triton's autotuner
    judges it: it needs more of the GPU than there is, a `tl.static_assert` refused its
    values, or ptxas refused the kernel. Any other compile error is the kernel's and is
    raised, not hidden behind an infinite time."""
    if isinstance(error, OutOfResources):
        return True
    if isinstance(error, CompilationError):
        return error.message.startswith("static_assert failed")
    return isinstance(error, ToolkitError) and "ptxas failed" in str(error)

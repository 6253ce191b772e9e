"""What a user sees on stderr when a kernel or a launch is wrong.

Each test writes a small program into a file, runs it in a fresh Python, and checks the
whole of stderr, as the user would read it: Python's traceback of the user's own
frames (the call into tilec), then tilec's error with the kernel's file, line, the
quoted source line and a caret. tilec's internal frames appear only with TILEC_DEBUG=1,
and no error is chained to another ("During handling of the above exception ...").

No GPU is needed: kernels are compiled with `tilec.compile(..., target="sm_90")` or
`kernel.warmup`, or launched under TILEC_INTERPRET=1.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import pytest

import tilec


def printed_cause(error: BaseException):
    """The cause Python prints above an error (its own field, not a property)."""
    return BaseException.__dict__["__cause__"].__get__(error)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(tilec.__file__)))
TILEC_DIR = os.path.dirname(os.path.abspath(tilec.__file__))
HEADER = "import numpy as np\nimport tilec\nimport tilec.language as tl\n"
CHAINED = ("During handling of the above exception", "The above exception was the direct cause")


def run_program(tmp_path, body: str, *, interpret: bool = False, debug: bool = False) -> tuple[str, str]:
    """Runs HEADER + `body` as tmp_path/kernels.py; returns (the file's path, stderr).
    The program must fail."""
    path = tmp_path / "kernels.py"
    path.write_text(HEADER + textwrap.dedent(body))
    env = {key: value for key, value in os.environ.items() if not key.startswith("TILEC_")}
    env.update(PYTHONPATH=REPO, TILEC_CACHE_DIR=str(tmp_path / "cache"))
    if interpret:
        env["TILEC_INTERPRET"] = "1"
    if debug:
        env["TILEC_DEBUG"] = "1"
    result = subprocess.run([sys.executable, str(path)], cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode != 0, f"the program did not fail:\n{result.stdout}\n{result.stderr}"
    return str(path), result.stderr


def line_of(path: str, text: str) -> int:
    """The 1-based number of the one line of `path` containing `text`."""
    hits = [i + 1 for i, line in enumerate(open(path).read().splitlines()) if text in line]
    assert len(hits) == 1, f"{text!r} is on {len(hits)} lines of {path}"
    return hits[0]


def assert_user_traceback(stderr: str, path: str, call: str, error: str, *, max_lines: int = 12) -> list[str]:
    """stderr is one short traceback: first the frame of the user's line containing
    `call`, no frame of tilec's, no chained exception, and the last line ends with `error` (a
    regex). Returns the lines."""
    lines = without_the_frames_python310_adds(stderr.rstrip("\n").splitlines())
    assert lines[0] == "Traceback (most recent call last):", stderr
    frames = [line for line in lines if line.startswith("  File ")]
    assert frames and frames[0] == f'  File "{path}", line {line_of(path, call)}, in <module>', stderr
    assert not any(TILEC_DIR in line or "<tilec" in line for line in frames), f"tilec's frames leak:\n{stderr}"
    assert not any(chain in stderr for chain in CHAINED), f"a chained exception:\n{stderr}"
    assert counted_lines(lines) <= max_lines, f"{counted_lines(lines)} lines:\n{stderr}"
    assert re.search(error, stderr), f"{error!r} not in:\n{stderr}"
    return [line for i, line in enumerate(lines) if not is_position_marker(lines, i)]


def without_the_frames_python310_adds(lines: list[str]) -> list[str]:
    """On Python 3.10, whose bare `raise` restores the traceback it caught, the error is
    raised again by tilec.errors.hide_internal_frames: its frame and the API entry
    point's (two lines each) stand where tilec's frames were. Elsewhere, `lines`."""
    if sys.version_info >= (3, 11):
        return lines
    hide = [i for i, line in enumerate(lines) if line.startswith(f'  File "{TILEC_DIR}{os.sep}errors.py"')
            and line.endswith(", in hide_internal_frames")]
    if not hide:
        return lines
    i = hide[0]
    entry = max(j for j in range(i) if lines[j].startswith("  File "))  # generated launchers show no source
    assert len(hide) == 1 and lines[entry].startswith((f'  File "{TILEC_DIR}', '  File "<tilec')), "\n".join(lines)
    return lines[:entry] + lines[i + 2:]


def is_position_marker(lines: list[str], i: int) -> bool:
    """Whether lines[i] is the `~~~^^^` line Python 3.11+ puts under a frame's source line
    (3.13 puts it under more of them)."""
    return i >= 2 and lines[i - 2].startswith("  File ") and re.fullmatch(r" +[~^]+", lines[i]) is not None


def counted_lines(lines: list[str]) -> int:
    """How many lines a report has, Python's position markers left out (how many of them
    there are changes with the Python version, not with tilec)."""
    return sum(not is_position_marker(lines, i) for i in range(len(lines)))


def assert_points_at(stderr: str, path: str, source: str, kernel: str = "k", role: str = "at") -> None:
    """The error names `path` at the line containing `source`, quotes it and puts a caret under it."""
    lines = stderr.splitlines()
    lineno = line_of(path, source)
    header = re.compile(rf"(.*: )?{role} {re.escape(path)}:{lineno}:\d+ in {kernel}:")
    found = [i for i, line in enumerate(lines) if header.fullmatch(line)]
    assert found, f"no '{header.pattern}' line in:\n{stderr}"
    i = found[0]
    assert lines[i + 1].strip() == open(path).read().splitlines()[lineno - 1].strip(), stderr
    assert re.fullmatch(r" +\^", lines[i + 2]), f"no caret under the source line:\n{stderr}"


BAD_ARANGE = """
@tilec.jit
def k(x_ptr, n):
    offs = tl.arange(0, n)
    tl.store(x_ptr + offs, 1.0)
"""
MISSING_CONSTEXPR = ("arange's start and end must be constexpr integers, and its end is only known when the kernel "
                     "runs; 'n' is a parameter of k without tl.constexpr: declare it `n: tl.constexpr`")

# ============================================================================= compile errors


def test_compile_error_from_tilec_compile(tmp_path):
    path, stderr = run_program(tmp_path, BAD_ARANGE + """
tilec.compile(k, signature={"x_ptr": "*fp32", "n": "i32"}, target="sm_90")
""")
    assert_user_traceback(stderr, path, "tilec.compile(k", r"tilec.errors.CompilationError: at ")
    assert_points_at(stderr, path, "offs = tl.arange(0, n)")
    assert stderr.rstrip().splitlines()[-1] == MISSING_CONSTEXPR


def test_compile_error_from_warmup(tmp_path):
    path, stderr = run_program(tmp_path, BAD_ARANGE + """
k.warmup("*fp32", "i32", grid=(1,))
""")
    assert_user_traceback(stderr, path, "k.warmup(", r"CompilationError: at ")
    assert_points_at(stderr, path, "offs = tl.arange(0, n)")


def test_compile_error_from_a_launch_in_the_interpreter(tmp_path):
    path, stderr = run_program(tmp_path, BAD_ARANGE + """
k[(1,)](np.zeros(16, np.float32), 16)
""", interpret=True)
    assert_user_traceback(stderr, path, "k[(1,)](", r"CompilationError: at ")
    assert_points_at(stderr, path, "offs = tl.arange(0, n)")
    assert stderr.rstrip().splitlines()[-1] == MISSING_CONSTEXPR


def test_compile_error_in_a_called_function_lists_the_call_site(tmp_path):
    path, stderr = run_program(tmp_path, """
@tilec.jit
def load_block(ptr, BLOCK: tl.constexpr):
    return tl.load(ptr + tl.arange(0, BLOCK))


@tilec.jit
def k(x_ptr):
    x = load_block(x_ptr, 100)
    tl.store(x_ptr, tl.sum(x, axis=0))


tilec.compile(k, signature={"x_ptr": "*fp32"}, target="sm_90")
""")
    assert_user_traceback(stderr, path, "tilec.compile(k", r"the number of elements must be a power of 2 \(Triton: arange's range must be a power of 2\)$",
                          max_lines=15)
    assert_points_at(stderr, path, "x = load_block(x_ptr, 100)", role="called from")
    assert_points_at(stderr, path, "return tl.load(ptr + tl.arange(0, BLOCK))", kernel="load_block")


def test_compile_error_from_an_autotuned_launch(tmp_path):
    path, stderr = run_program(tmp_path, """
@tilec.autotune(configs=[tilec.Config({"BLOCK": 16}), tilec.Config({"BLOCK": 32})], key=["n"])
@tilec.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, n)


k[(1,)](np.zeros(16, np.float32), 16)
""", interpret=True)
    assert_user_traceback(stderr, path, "k[(1,)](", r"CompilationError: at ")
    assert_points_at(stderr, path, "offs = tl.arange(0, n)")


def test_tilec_debug_shows_tilec_frames(tmp_path):
    path, stderr = run_program(tmp_path, BAD_ARANGE + """
tilec.compile(k, signature={"x_ptr": "*fp32", "n": "i32"}, target="sm_90")
""", debug=True)
    assert f'File "{TILEC_DIR}{os.sep}frontend{os.sep}code_generator.py"' in stderr
    assert_points_at(stderr, path, "offs = tl.arange(0, n)")


def test_tilec_debug_shows_the_exception_a_compilation_error_was_made_from(tmp_path):
    # Folding the constants raises Python's ZeroDivisionError, which becomes a located
    # CompilationError; with TILEC_DEBUG=1 that exception and its frames are its cause.
    program = """
@tilec.jit
def k(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK // 0)


tilec.compile(k, signature={"x_ptr": "*fp32"}, constexprs={"BLOCK": 16}, target="sm_90")
"""
    path, stderr = run_program(tmp_path, program)
    assert_user_traceback(stderr, path, "tilec.compile(k", r"\nZeroDivisionError: integer division or modulo by zero$")
    assert_points_at(stderr, path, "offs = tl.arange(0, BLOCK // 0)")
    path, stderr = run_program(tmp_path, program, debug=True)
    cause, _, error = stderr.partition("The above exception was the direct cause of the following exception")
    assert "ZeroDivisionError: integer division or modulo by zero" in cause and TILEC_DIR in cause, stderr
    assert "CompilationError" in error


# ============================================================================= interpreter errors


def test_semantic_error_while_interpreting(tmp_path):
    # Inline PTX passes the frontend (it compiles) but the interpreter cannot run it.
    path, stderr = run_program(tmp_path, """
@tilec.jit
def k(x_ptr):
    v = tl.load(x_ptr + tl.arange(0, 16))
    w = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [v], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(x_ptr + tl.arange(0, 16), w)


k[(1,)](np.zeros(16, np.float32))
""", interpret=True)
    lines = assert_user_traceback(stderr, path, "k[(1,)](", r"\(interpreting kernel `k`, program id \(0, 0, 0\)\)$")
    assert_points_at(stderr, path, "w = tl.inline_asm_elementwise(")
    assert lines[-2].startswith("inline_asm_elementwise runs PTX, which the interpreter cannot execute")


def test_out_of_bounds_access_in_the_interpreter(tmp_path):
    path, stderr = run_program(tmp_path, """
@tilec.jit
def k(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 32))
    tl.store(x_ptr + tl.arange(0, 32), x)


k[(1,)](np.zeros(16, np.float32))
""", interpret=True)
    assert_user_traceback(stderr, path, "k[(1,)](", r"OutOfBoundsAccess: out-of-bounds load in kernel `k` at "
                          + re.escape(path))


def test_failed_device_assertion_in_the_interpreter(tmp_path):
    path, stderr = run_program(tmp_path, """
@tilec.jit
def k(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    tl.device_assert(x > 0, "x must be positive")


k[(1,)](np.zeros(16, np.float32), debug=True)
""", interpret=True)
    assert_user_traceback(stderr, path, "k[(1,)](", r"DeviceAssertionError: device assertion failed in kernel `k`"
                          r" at .*: x must be positive")


# ============================================================================= launch errors

SCALE = """
@tilec.jit
def k(x_ptr, n, factor, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * factor, mask=offs < n)


x = np.zeros(16, np.float32)
"""


@pytest.mark.parametrize("interpret", [True, False], ids=["interpreter", "gpu-path"])
def test_missing_arguments_at_launch(tmp_path, interpret):
    # Python's own binding fails first (a TypeError); the LaunchError replaces it, unchained.
    path, stderr = run_program(tmp_path, SCALE + "k[(1,)](x, 16)\n", interpret=interpret)
    assert_user_traceback(stderr, path, "k[(1,)](x, 16)",
                          r"\ntilec.errors.LaunchError: k\(\) is missing arguments 'factor' and 'BLOCK'$", max_lines=4)


@pytest.mark.parametrize("interpret", [True, False], ids=["interpreter", "gpu-path"])
def test_too_many_arguments_at_launch(tmp_path, interpret):
    path, stderr = run_program(tmp_path, SCALE + "k[(1,)](x, 16, 2.0, 16, 5)\n", interpret=interpret)
    assert_user_traceback(stderr, path, "k[(1,)](x, 16, 2.0, 16, 5)",
                          r"\ntilec.errors.LaunchError: k\(\) takes 4 arguments but 5 were given "
                          r"\(its parameters: x_ptr, n, factor, BLOCK\)$", max_lines=4)


def test_unknown_keyword_at_launch(tmp_path):
    path, stderr = run_program(tmp_path, SCALE + "k[(1,)](x, 16, 2.0, BLOK=16)\n", interpret=True)
    assert_user_traceback(stderr, path, "k[(1,)](x, 16, 2.0, BLOK=16)",
                          r"\ntilec.errors.LaunchError: k\(\) got an unexpected keyword argument 'BLOK'$", max_lines=4)


def test_bad_argument_at_launch(tmp_path):
    path, stderr = run_program(tmp_path, SCALE + "k[(1,)](x, [16], 2.0, BLOCK=16)\n", interpret=True)
    assert_user_traceback(stderr, path, "k[(1,)](x, [16], 2.0, BLOCK=16)",
                          r"\ntilec.errors.LaunchError: argument 'n' of k\(\) is a list \[16\]", max_lines=4)


def test_bad_launch_option(tmp_path):
    path, stderr = run_program(tmp_path, SCALE + "k[(1,)](x, 16, 2.0, BLOCK=16, num_warps=3)\n", interpret=True)
    assert_user_traceback(stderr, path, "num_warps=3", r"num_warps must be a power of 2 between 1 and 32, got 3$",
                          max_lines=4)


def test_bad_arguments_to_warmup(tmp_path):
    path, stderr = run_program(tmp_path, SCALE + 'k.warmup("*fp32", "i32", grid=(1,))\n')
    assert_user_traceback(stderr, path, "k.warmup(",
                          r"\ntilec.errors.LaunchError: k\(\) is missing arguments 'factor' and 'BLOCK'$", max_lines=4)


def test_wrong_argument_count_for_a_compiled_kernel(tmp_path):
    path, stderr = run_program(tmp_path, SCALE + """
compiled = k.warmup("*fp32", "i32", "fp32", BLOCK=16, grid=(1,))
compiled[(1,)](x, 16)
""", interpret=True)
    assert_user_traceback(stderr, path, "compiled[(1,)](x, 16)",
                          r"LaunchError: k\(\) takes 4 arguments but 2 were given", max_lines=4)


@pytest.mark.parametrize("interpret", [True, False], ids=["interpreter", "gpu-path"])
def test_kernel_called_without_a_grid(tmp_path, interpret):
    # Triton: RuntimeError "Cannot call @triton.jit'd outside of the scope of a kernel".
    path, stderr = run_program(tmp_path, SCALE + "k(x, 16, 2.0, BLOCK=16)\n", interpret=interpret)
    assert_user_traceback(stderr, path, "k(x, 16, 2.0, BLOCK=16)",
                          r"\ntilec.errors.LaunchError: k\(\) is a kernel: launch it on a grid of programs with "
                          r"k\[grid\]\(\.\.\.\), e.g. k\[\(num_programs,\)\]\(\.\.\.\); a @jit function is called "
                          r"directly only from inside another kernel$", max_lines=4)


def test_autotuned_kernel_called_without_a_grid(tmp_path):
    path, stderr = run_program(tmp_path, """
@tilec.autotune(configs=[tilec.Config({"BLOCK": 16})], key=["n"])
@tilec.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)


k(np.zeros(16, np.float32), 16)
""", interpret=True)
    assert_user_traceback(stderr, path, "k(np.zeros(16, np.float32), 16)",
                          r"LaunchError: k\(\) is a kernel: launch it on a grid of programs with k\[grid\]", max_lines=4)


# ============================================================================= errors in the user's own code


def test_error_in_a_grid_function_shows_the_users_frames_only(tmp_path):
    path, stderr = run_program(tmp_path, SCALE + """
def grid(meta):
    return (tilec.cdiv(meta["n"], meta["BLOK"]),)


k[grid](x, 16, 2.0, BLOCK=16)
""", interpret=True)
    lines = assert_user_traceback(stderr, path, "k[grid](x, 16, 2.0, BLOCK=16)", r"\nKeyError: 'BLOK'\n")
    assert f'  File "{path}", line {line_of(path, "return (tilec.cdiv")}, in grid' in lines
    if sys.version_info >= (3, 11):  # the note naming the grid function (3.10 prints no notes)
        assert lines[-1] == (f"raised by the grid function grid ({path}:{line_of(path, 'def grid(meta)')}), called "
                             "by k's launch with META = {x_ptr: ndarray, n: 16, factor: 2.0, BLOCK: 16}"), stderr


def test_error_in_a_heuristic_shows_the_users_frames_only(tmp_path):
    path, stderr = run_program(tmp_path, """
@tilec.heuristics({"BLOCK": lambda args: args["N"] * 2})
@tilec.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)


k.warmup("*fp32", "i32", grid=(1,))
""")
    lines = assert_user_traceback(stderr, path, 'k.warmup("*fp32", "i32", grid=(1,))', r"\nKeyError: 'N'$")
    assert any(line.endswith("in <lambda>") for line in lines), stderr


def test_bad_arguments_to_tilec_compile(tmp_path):
    path, stderr = run_program(tmp_path, BAD_ARANGE + """
tilec.compile(k, signature={"x_ptr": "*fp32"}, target="sm_90")
""")
    assert_user_traceback(stderr, path, "tilec.compile(k", r"\ntilec.errors.UsageError: tilec.compile: parameter 'n' "
                          r"of k is in neither signature nor constexprs$", max_lines=4)


def test_bad_target_for_tilec_compile(tmp_path):
    path, stderr = run_program(tmp_path, BAD_ARANGE + """
tilec.compile(k, signature={"x_ptr": "*fp32", "n": "i32"}, target="hopper")
""")
    assert_user_traceback(stderr, path, "tilec.compile(k", r"\ntilec.errors.TargetError: target must look like "
                          r"'sm_90', got 'hopper'$", max_lines=4)


# ============================================================================= both launch paths, in process

import traceback  # noqa: E402

import numpy as np  # noqa: E402

import tilec.language as tl  # noqa: E402
from tilec.config import config  # noqa: E402
from tilec.runtime import jit as jit_module  # noqa: E402


@tilec.jit
def in_process(x_ptr, n, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, n), 1.0)


LAUNCH_MISTAKES = {
    "binding": (lambda x: in_process[(1,)](x), tilec.LaunchError, r"missing arguments 'n' and 'BLOCK'$"),
    "argument": (lambda x: in_process[(1,)](x, [4], BLOCK=4), tilec.LaunchError, r"^argument 'n' of in_process"),
    "kernel": (lambda x: in_process[(1,)](x, 4, BLOCK=4), tilec.CompilationError, r"'n' is a parameter of"),
}


@pytest.mark.parametrize("grid_call", [True, False], ids=["GridCall", "Python-launch"])
@pytest.mark.parametrize("mistake", list(LAUNCH_MISTAKES))
def test_both_launch_paths_leave_tilecs_frames_out(monkeypatch, grid_call, mistake):
    # GridCall (the C extension) calls the generated launcher without a Python frame of
    # its own; without the extension a Python closure does. Both end the traceback at the
    # user's call.
    if grid_call and jit_module._GridCall is None:
        pytest.skip("the tilec._launcher extension is not built")
    if not grid_call:
        monkeypatch.setattr(jit_module, "_GridCall", None)
    monkeypatch.setattr(config, "interpret", True)
    launch, kind, message = LAUNCH_MISTAKES[mistake]
    with pytest.raises(kind) as info:
        launch(np.zeros(16, np.float32))
    assert re.search(message, info.value.args[0].splitlines()[-1]), info.value
    frames = traceback.extract_tb(info.value.__traceback__)
    if sys.version_info < (3, 11):  # the entry point's frame and the one that raised again (see tilec.errors)
        assert [frame.name for frame in frames[-2:]] == ["launch", "hide_internal_frames"], frames
        frames = frames[:-2]
    assert {frame.filename for frame in frames} == {__file__}, frames  # the test and its lambda
    assert printed_cause(info.value) is None and \
        (info.value.__context__ is None or info.value.__suppress_context__)


# ============================================================================= every place an error is printed
# Python prints an uncaught error in C on 3.10-3.12 and through the `traceback` module on
# 3.13; traceback.format_exc(), logging.exception, pytest and IPython/Jupyter print it in
# Python. Each shows the same short report: the user's frames, the location, the message
# once, no chained error, none of tilec's frames.

COMPILE_BAD_ARANGE = 'tilec.compile(k, signature={"x_ptr": "*fp32", "n": "i32"}, target="sm_90")'
MISSING_CONSTEXPR_END = "declare it `n: tl.constexpr`"


def assert_one_short_report(text: str, path: str, *, max_lines: int) -> None:
    """`text` reports BAD_ARANGE's CompilationError at the line of `path` that has it,
    once, in at most `max_lines` lines, without chained errors or tilec's frames."""
    text = "\n".join(without_the_frames_python310_adds(text.splitlines()))
    assert not any(chain in text for chain in CHAINED), f"a chained exception:\n{text}"
    assert TILEC_DIR not in text and "<tilec" not in text, f"tilec's frames leak:\n{text}"
    assert text.count(MISSING_CONSTEXPR_END) == 1, f"the message is not there once:\n{text}"
    assert_points_at(text, path, "offs = tl.arange(0, n)")
    assert counted_lines(text.rstrip("\n").splitlines()) <= max_lines, f"{len(text.splitlines())} lines:\n{text}"


@pytest.mark.parametrize("printer", ["format_exc", "print_exception", "logging_exception", "TracebackException"])
def test_a_compile_error_printed_by_the_traceback_module_is_short(tmp_path, printer):
    report = {
        "format_exc": "sys.stderr.write(traceback.format_exc())",
        "print_exception": "traceback.print_exception(*sys.exc_info())",
        "logging_exception": 'logging.basicConfig(format="%(message)s")\n    logging.exception("the kernel failed")',
        # what Python 3.13's default hook prints with
        "TracebackException": "print(''.join(traceback.TracebackException(*sys.exc_info()).format()), file=sys.stderr)",
    }[printer]
    path, stderr = run_program(tmp_path, BAD_ARANGE + f"""
import logging, sys, traceback
try:
    {COMPILE_BAD_ARANGE}
except tilec.CompilationError:
    {report}
    sys.exit(1)
""")
    assert_one_short_report(stderr, path, max_lines=9)
    assert stderr.startswith("the kernel failed\n" if printer == "logging_exception" else "Traceback"), stderr


@pytest.mark.skipif(sys.version_info < (3, 11), reason="on Python 3.10, pytest shows the frame of tilec's entry "
                    "point (see without_the_frames_python310_adds)")
@pytest.mark.parametrize("style", ["auto", "short", "long"])
def test_a_compile_error_in_a_pytest_report_is_short(tmp_path, style):
    # A failing test of the user's, run by pytest in a fresh process: its report shows
    # the test's lines, then the error once.
    (tmp_path / "test_kernel.py").write_text(HEADER + textwrap.dedent(BAD_ARANGE) + f"""

def test_compiles():
    {COMPILE_BAD_ARANGE}
""")
    env = {key: value for key, value in os.environ.items() if not key.startswith(("TILEC_", "PYTEST_"))}
    env.update(PYTHONPATH=REPO, TILEC_CACHE_DIR=str(tmp_path / "cache"))
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--tb={style}",
                             "test_kernel.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    report = result.stdout.split("short test summary info")[0]
    report = report[report.index("_ test_compiles _"):]
    assert_one_short_report("\n".join(line[1:] if line.startswith("E") else line for line in report.splitlines()),
                            str(tmp_path / "test_kernel.py"), max_lines=20)


def test_a_compile_error_in_ipython_is_short(tmp_path):
    # IPython's InteractiveShell formats errors as Jupyter does (ultratb).
    pytest.importorskip("IPython")
    program = tmp_path / "notebook.py"
    program.write_text(textwrap.dedent(f'''
        from IPython.core.interactiveshell import InteractiveShell
        shell = InteractiveShell.instance(colors="nocolor")
        shell.run_cell({HEADER + textwrap.dedent(BAD_ARANGE)!r})
        shell.run_cell({COMPILE_BAD_ARANGE!r})
    '''))
    env = {key: value for key, value in os.environ.items() if not key.startswith("TILEC_")}
    env.update(PYTHONPATH=REPO, TILEC_CACHE_DIR=str(tmp_path / "cache"))
    result = subprocess.run([sys.executable, str(program)], cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=120)
    text = result.stdout + result.stderr
    assert "CompilationError" in text and not any(chain in text for chain in CHAINED), text
    assert TILEC_DIR not in text and text.count(MISSING_CONSTEXPR_END) == 1, text
    assert len(text.strip().splitlines()) <= 12, text


def compile_bad_arange() -> tilec.CompilationError:
    @tilec.jit
    def k(x_ptr, n):
        offs = tl.arange(0, n)
        tl.store(x_ptr + offs, 1.0)

    with pytest.raises(tilec.CompilationError) as info:
        tilec.compile(k, signature={"x_ptr": "*fp32", "n": "i32"}, target="sm_90")
    return info.value


def test_the_cause_is_there_for_the_users_code_and_not_for_printers():
    # Triton's tests read `__cause__` (the exception the error was made from); Python's
    # library and installed packages (traceback, logging, pytest, IPython) are told none.
    import sysconfig
    error = compile_bad_arange()
    assert isinstance(error.__cause__, tl.core.ConstexprRequired)
    assert error.__cause__ is error.__cause__  # one object, however often it is read
    library_reader = compile("cause = error.__cause__", os.path.join(sysconfig.get_paths()["stdlib"], "reader.py"),
                             "exec")
    namespace = {"error": error}
    exec(library_reader, namespace)
    assert namespace["cause"] is None
    text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    assert not any(chain in text for chain in CHAINED) and text.count(MISSING_CONSTEXPR_END) == 1, text


def test_tilec_debug_prints_the_cause_everywhere(monkeypatch):
    monkeypatch.setattr(config, "debug", True)
    error = compile_bad_arange()
    text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    assert "The above exception was the direct cause" in text and "ConstexprRequired" in text, text
    assert f"{os.sep}frontend{os.sep}code_generator.py" in text, text


# ============================================================================= the toolkit, grid functions, decorators


def test_a_toolkit_error_shows_no_frames_of_tilec(tmp_path):
    # CUDA 13's ptxas does not compile for sm_70: the message says so and what to do.
    from tilec.backend import toolkit
    try:
        if toolkit.ptxas_version().split(".")[0] != "13":
            pytest.skip("needs CUDA 13's ptxas")
    except toolkit.ToolkitError:
        pytest.skip("needs ptxas")
    path, stderr = run_program(tmp_path, BAD_ARANGE.replace("(x_ptr, n)", "(x_ptr, n: tl.constexpr)") + """
tilec.compile(k, signature={"x_ptr": "*fp32"}, constexprs={"n": 16}, target="sm_70")
""")
    assert_user_traceback(stderr, path, "tilec.compile(k", r"\ntilec.errors.ToolkitError: cannot make a cubin of k: "
                          r".* does not compile for sm_70; CUDA 13 compiles for sm_75 and newer only", max_lines=4)


def test_a_grid_function_dividing_by_a_zero_block_names_itself(tmp_path):
    path, stderr = run_program(tmp_path, SCALE + """
BLOCK = 0
k[lambda META: (tilec.cdiv(16, META["BLOCK"]),)](x, 16, 2.0, BLOCK=BLOCK)
""", interpret=True)
    lines = assert_user_traceback(stderr, path, "k[lambda META", r"\nZeroDivisionError: integer division or modulo "
                                  r"by zero\n", max_lines=10)
    # tilec.cdiv's inside is left out: the last frame is the user's grid function
    assert [line for line in lines if line.startswith("  File ")][-1] == \
        f'  File "{path}", line {line_of(path, "k[lambda META")}, in <lambda>', stderr
    if sys.version_info >= (3, 11):
        assert lines[-1] == (f"raised by the grid function <lambda> ({path}:{line_of(path, 'k[lambda META')}), called "
                             "by k's launch with META = {x_ptr: ndarray, n: 16, factor: 2.0, BLOCK: 0}"), stderr


@pytest.mark.parametrize("decorator", ["autotune", "heuristics"])
def test_a_plain_function_under_autotune_or_heuristics_says_jit_is_missing(tmp_path, decorator):
    wrap = {"autotune": 'tilec.autotune(configs=[tilec.Config({"BLOCK": 16})], key=["n"])',
            "heuristics": 'tilec.heuristics({"BLOCK": lambda args: 16})'}[decorator]
    path, stderr = run_program(tmp_path, f"""
def k(x_ptr, n, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)


tuned = {wrap}(k)
""")
    assert_user_traceback(stderr, path, "tuned = ", rf"\ntilec.errors.UsageError: tilec.{decorator} wraps a kernel, "
                          rf"and k is not one: put @tilec.jit under @tilec.{decorator}$", max_lines=5)

"""The examples of README.md and docs/*.md, read from the Markdown, run, and compared with
the output the docs show (tests/docs/test_markdown_examples.py makes each one a test).

How the docs are read
---------------------
- A ```python block is a script. Its file name is a `save` marker's, else the one its
  output's first command runs (`$ python show.py`, `$ TILEC_INTERPRET=1 python
  /tmp/example/oob.py`), else the one the prose before it gives (saved as
  `/tmp/example/errors.py`); a script named nowhere is `example.py`. A script with no
  output shown must run without error.
- The fenced block right after a script (nothing but markers between them) is its output. When its
  first line starts with `$ `, it is a shell session: each `$ command` runs in bash and
  the lines up to the next `$ ` are what it prints (stdout and stderr together, `python`
  and `tilec` being the repository's); otherwise the block is what `python <file>`
  prints. A block right after an output block continues it.
- A block whose first line starts with `$ ` elsewhere is a shell session on its own.
- Every example runs in a fresh directory, shown as `/tmp/example`, holding every named
  script and `save`d block of its document (so `from show import show` finds show.py)
  and a link to the repository's `examples/`, with a fresh kernel cache. Paths under
  `/tmp/` in commands and `env` markers are moved into a fresh directory too (and shown
  back as `/tmp/...`).
- In a shown output, a line `...` stands for any run of lines (none included), and
  `/…/` for any part of a path. Nothing else is approximate unless a marker says so.

Markers, HTML comments on the lines before a block (several may precede one block):

    <!-- docs-test: skip (why) -->          not run; every block is run, shown by an
                                            example, or marked
    <!-- docs-test: gpu (why) -->           run only where a GPU answers (marked `gpu`)
    <!-- docs-test: save NAME -->           the block's file name in the example directory
    <!-- docs-test: before CODE -->         a hidden line put before the script (imports,
    <!-- docs-test: after CODE -->          inputs) or after it (a check)
    <!-- docs-test: env NAME=VALUE -->      an environment variable for the example
    <!-- docs-test: copy PATH -->           a repository file copied into the directory
    <!-- docs-test: setup COMMAND -->       a command run first, its output not compared
    <!-- docs-test: run COMMAND -->         a command run after saving the block (exit status 0)
    <!-- docs-test: output -->              this block is output of the example before it
    <!-- docs-test: shows FILE [from SCRIPT] -->  this block shows FILE as the example before
                                            (or the last one running SCRIPT) wrote it
    <!-- docs-test: excerpt -->             ... inside a line (or …) matches any text, and the
                                            block may start and end anywhere in the output
    <!-- docs-test: varies PLACEHOLDER REGEX -->  text matching REGEX (a key, a time) is
                                            compared as PLACEHOLDER, on both sides

`python tests/docs/markdown_examples.py [--update] DOC[:LINE] ...` runs a document's
examples (those at or after LINE only) and prints what differs; `--update` writes the
actual output into the blocks that hold no `...` (the others are excerpts to trim by hand).
"""
from __future__ import annotations

import argparse
import difflib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
DOCUMENTS = [REPOSITORY / "README.md", *sorted((REPOSITORY / "docs").glob("*.md"))]
SHOWN_ROOT = "/tmp"                      # where the docs say examples ran (in /tmp/example)
COMMAND_TIMEOUT_S = 300

_FENCE = re.compile(r"^(\s*)```(\w*)\s*$")
_MARKER = re.compile(r"<!--\s*docs-test:\s*(\w[\w-]*)\s*(.*?)\s*-->")
_SAVED_AS = re.compile(r"saved as\s+`(?:/tmp/example/)?([\w.-]+\.py)`")
_RUNS_FILE = re.compile(r"^(?:\w+=\S*\s+)*python3?\s+(?:/tmp/example/)?([\w.-]+\.py)\b")
MARKER_KINDS = {"skip", "gpu", "save", "before", "after", "env", "copy", "setup", "run", "output", "shows",
                "excerpt", "varies"}


# ----------------------------------------------------------------------------- reading the Markdown


@dataclass
class Block:
    """One fenced block: its lines (fence and common indentation removed) and the markers before it."""
    document: Path
    line: int                    # of the opening fence, from 1
    info: str                    # python, mlir, ... or ""
    lines: list[str]
    markers: list[tuple[str, str]]
    prose_before: str            # the text between the previous block and this one
    follows_previous: bool       # only markers between the previous block's fence and this one's

    def marker(self, kind: str) -> str | None:
        for name, value in self.markers:
            if name == kind:
                return value
        return None

    def all(self, kind: str) -> list[str]:
        return [value for name, value in self.markers if name == kind]

    @property
    def is_session(self) -> bool:
        return bool(self.lines) and self.lines[0].startswith("$ ")

    @property
    def where(self) -> str:
        return f"{self.document.relative_to(REPOSITORY)}:{self.line}"


def read_blocks(document: Path) -> list[Block]:
    lines = document.read_text().split("\n")
    blocks: list[Block] = []
    previous_end, i = -1, 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        indent, info = match.group(1), match.group(2)
        end = i + 1
        while end < len(lines) and not re.match(r"^\s*```\s*$", lines[end]):
            end += 1
        if end == len(lines):
            raise ValueError(f"{document}:{i + 1}: a fenced block that is never closed")
        between = lines[previous_end + 1:i]
        markers = [(m.group(1), m.group(2)) for text in between for m in _MARKER.finditer(text)]
        for kind, _ in markers:
            if kind not in MARKER_KINDS:
                raise ValueError(f"{document}:{i + 1}: unknown docs-test marker {kind!r}")
        body = [line[len(indent):] if line.startswith(indent) else line.lstrip() for line in lines[i + 1:end]]
        adjacent = previous_end >= 0 and all(_MARKER.fullmatch(text.strip()) for text in between)
        blocks.append(Block(document, i + 1, info, body, markers, "\n".join(between), follows_previous=adjacent))
        previous_end = i = end
        i += 1
    return blocks


# ----------------------------------------------------------------------------- examples


@dataclass
class Step:
    """A command and what the docs show it prints (None: not compared, exit status 0 required)."""
    command: str
    shown: list[str] | None = None
    excerpt: bool = False
    varies: list[tuple[str, str]] = field(default_factory=list)
    block: Block | None = None       # the block that shows the output
    shows_file: str | None = None    # compare this file's text instead of the command's output

    @property
    def where(self) -> str:
        return self.block.where if self.block is not None else ""


@dataclass
class Example:
    document: Path
    line: int
    name: str
    steps: list[Step]
    files: dict[str, str]            # written into the example directory
    copies: list[str]
    env: dict[str, str]
    gpu: str | None = None
    blocks: list[Block] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.document.name}:{self.line}:{self.name}"


@dataclass
class Skipped:
    block: Block
    reason: str


def _script_name(block: Block, output: Block | None) -> str:
    if block.marker("save"):
        return block.marker("save")
    if output is not None and output.is_session:
        match = _RUNS_FILE.match(output.lines[0][2:])
        if match:
            return match.group(1)
    match = _SAVED_AS.search(block.prose_before)
    return match.group(1) if match else "example.py"


def _script_text(block: Block) -> str:
    return "\n".join([*block.all("before"), *block.lines, *block.all("after")]) + "\n"


def _steps_of(block: Block, default_command: str | None) -> list[Step]:
    """The commands a shown output holds, or the default command with the whole block shown."""
    excerpt, varies = block.marker("excerpt") is not None, [_parse_varies(v) for v in block.all("varies")]
    if not block.is_session:
        if default_command is None:
            raise ValueError(f"{block.where}: an output block with no command and no script before it")
        return [Step(default_command, _shown(block.lines, excerpt), excerpt, varies, block)]
    steps: list[Step] = []
    for line in block.lines:
        if line.startswith("$ "):
            steps.append(Step(line[2:], [], excerpt, varies, block))
        else:
            steps[-1].shown.append(line)
    for step in steps:
        step.shown = _shown(step.shown, excerpt)
    return steps


def _shown(lines: list[str], excerpt: bool) -> list[str]:
    """What a block shows of an output: an excerpt may start and end anywhere in it."""
    return ["...", *lines, "..."] if excerpt else list(lines)


def _parse_varies(value: str) -> tuple[str, str]:
    placeholder, _, regex = value.partition(" ")
    re.compile(regex)
    return placeholder, regex.strip()


def read_examples(document: Path) -> tuple[list[Example], list[Skipped], list[Block]]:
    """The document's examples, the blocks marked skip, and the blocks that are neither
    (each of which should be run or marked)."""
    blocks = read_blocks(document)
    files: dict[str, str] = {}
    names: dict[int, str] = {}
    for index, block in enumerate(blocks):
        if block.info == "python" or block.marker("save"):
            following = blocks[index + 1] if index + 1 < len(blocks) and blocks[index + 1].follows_previous else None
            name = _script_name(block, following if following is not None and following.info != "python" else None)
            names[index] = name
            if name != "example.py":
                if name in files and files[name] != _script_text(block):
                    raise ValueError(f"{block.where}: a second, different block saved as {name}")
                files[name] = _script_text(block)
    examples: list[Example] = []
    skipped: list[Skipped] = []
    unclaimed: list[Block] = []
    current: Example | None = None
    output_chain = False                       # the previous block was (part of) an output
    for index, block in enumerate(blocks):
        env = dict(value.split("=", 1) for value in block.all("env"))
        continues = block.follows_previous and output_chain and block.info != "python"
        if block.marker("skip") is not None:
            skipped.append(Skipped(block, block.marker("skip")))
            current, output_chain = None, False
            continue
        if block.marker("shows") is not None:
            shown_file, _, script = block.marker("shows").partition(" from ")
            if script:
                current = next((e for e in reversed(examples) if e.name == script.strip()), None)
            if current is None:
                raise ValueError(f"{block.where}: `shows` with no example before it")
            current.steps.append(Step("", _shown(block.lines, block.marker("excerpt") is not None),
                                      block.marker("excerpt") is not None,
                                      [_parse_varies(v) for v in block.all("varies")], block,
                                      shows_file=shown_file.strip()))
            current.blocks.append(block)
            output_chain = True
            continue
        if block.marker("output") is not None or continues:
            if current is None:
                raise ValueError(f"{block.where}: an output with no example before it")
            steps = _steps_of(block, current.steps[-1].command if current.steps else None)
            if steps[0].command == current.steps[-1].command and not block.is_session:
                last = current.steps[-1]
                last.shown = (last.shown or []) + (["..."] if block.marker("output") is not None and last.shown else []) \
                    + steps[0].shown
                last.excerpt = last.excerpt or steps[0].excerpt
                last.varies += steps[0].varies
            else:
                current.steps += steps
            current.blocks.append(block)
            output_chain = True
            continue
        if block.info == "python" or block.marker("save"):
            name = names[index]
            example_files = dict(files)
            example_files[name] = _script_text(block)
            following = blocks[index + 1] if index + 1 < len(blocks) else None
            has_output = following is not None and following.follows_previous and following.info != "python" \
                and following.marker("skip") is None
            steps = [Step(command) for command in block.all("setup")]
            if block.info == "python" and not has_output:
                steps.append(Step(f"python {name}"))
            steps += [Step(command) for command in block.all("run")]
            if not steps and not has_output:
                current, output_chain = None, False   # a saved file other examples use
                continue
            current = Example(document, block.line, name, steps, example_files, block.all("copy"), env,
                              block.marker("gpu"), [block])
            if has_output:
                own = _steps_of(following, f"python {name}")
                current.steps += own
                current.blocks.append(following)
                current.env.update(dict(v.split("=", 1) for v in following.all("env")))
                current.copies += following.all("copy")
                current.steps[:0] = [Step(command) for command in following.all("setup")]
                if following.marker("gpu") is not None:
                    current.gpu = following.marker("gpu")
            examples.append(current)
            output_chain = False
            continue
        if current is not None and current.blocks and current.blocks[-1] is block:
            output_chain = True
            continue
        if block.is_session:
            steps = [Step(command) for command in block.all("setup")] + _steps_of(block, None)
            current = Example(document, block.line, "session", steps, dict(files), block.all("copy"), env,
                              block.marker("gpu"), [block])
            examples.append(current)
            output_chain = True
            continue
        unclaimed.append(block)
        current, output_chain = None, False
    return examples, skipped, unclaimed


def all_examples() -> tuple[list[Example], list[Skipped], list[Block]]:
    examples, skipped, unclaimed = [], [], []
    for document in DOCUMENTS:
        e, s, u = read_examples(document)
        examples += e
        skipped += s
        unclaimed += u
    return examples, skipped, unclaimed


# ----------------------------------------------------------------------------- running


@dataclass
class Result:
    step: Step
    actual: list[str]
    returncode: int


def _environment(root: Path, example: Example) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items()
           if not name.startswith("TILEC_") and name not in ("COLUMNS", "LINES")}
    # `python` and `tilec` are this interpreter with this checkout's tilec, whatever the PATH holds
    commands = root / "bin"
    commands.mkdir(exist_ok=True)
    for name, line in (("python", f'exec {shlex.quote(sys.executable)} "$@"'),
                       ("python3", f'exec {shlex.quote(sys.executable)} "$@"'),
                       ("tilec", f'exec {shlex.quote(sys.executable)} -m tilec "$@"')):
        (commands / name).write_text(f"#!/bin/sh\n{line}\n")
        (commands / name).chmod(0o755)
    env["PATH"] = str(commands) + os.pathsep + env.get("PATH", "")
    import tilec  # the examples import the tilec these tests import
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(tilec.__file__).parents[1]), env.get("PYTHONPATH")]))
    env["PYTHONUNBUFFERED"] = "1"     # stdout and stderr interleaved as on a terminal
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["TILEC_CACHE_DIR"] = str(root / "tilec-cache")
    for name, value in example.env.items():
        env[name] = _to_actual(value, root)
    return env


def _to_actual(text: str, root: Path) -> str:
    """A command or value as the docs write it, with /tmp/... moved under `root`."""
    return re.sub(r"(?<![\w.])/tmp/", str(root) + "/", text)


def _to_shown(text: str, root: Path) -> str:
    return text.replace(str(root) + "/", SHOWN_ROOT + "/").replace(str(root), SHOWN_ROOT)


def prepare(example: Example, root: Path) -> Path:
    directory = root / "example"
    directory.mkdir(parents=True)
    for name, text in example.files.items():
        (directory / name).write_text(text)
    for path in example.copies:
        shutil.copy(REPOSITORY / path, directory / Path(path).name)
    (directory / "examples").symlink_to(REPOSITORY / "examples")
    return directory


def run(example: Example, root: Path) -> list[Result]:
    """Runs the example's commands in order under `root`; the output of each, as the docs would show it."""
    directory = prepare(example, root)
    env = _environment(root, example)
    results = []
    seen: dict[str, str] = {}        # a varying value as shown -> as it came out
    for step in example.steps:
        if step.shows_file is not None:
            path = directory / _to_actual(step.shows_file, root)
            text = path.read_text() if path.exists() else f"(no file {step.shows_file})"
            results.append(Result(step, _lines(_to_shown(text, root)), 0))
            continue
        command = _with_actual_values(_to_actual(step.command, root), seen)
        process = subprocess.run(["bash", "-c", command], cwd=directory, env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                 timeout=COMMAND_TIMEOUT_S)
        results.append(Result(step, _lines(_to_shown(process.stdout, root)), process.returncode))
        for _, regex in step.varies if step.shown is not None else ():
            shown = list(dict.fromkeys(re.findall(regex, "\n".join(step.shown))))
            actual = list(dict.fromkeys(re.findall(regex, "\n".join(results[-1].actual))))
            if len(shown) == len(actual):
                seen.update(zip(shown, actual))
    return results


def _with_actual_values(command: str, seen: dict[str, str]) -> str:
    """A command naming a varying value an earlier output showed (`tilec cache info 49b2`,
    a key's first characters) with the value that came out in its place instead."""
    def actual(word: re.Match) -> str:
        for shown, value in seen.items():
            if len(word.group()) >= 4 and shown.startswith(word.group()):
                return value[:len(word.group())]
        return word.group()
    return re.sub(r"\b\w+\b", actual, command)


def _lines(text: str) -> list[str]:
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


# ----------------------------------------------------------------------------- comparing


def _normalise(lines: list[str], varies: list[tuple[str, str]]) -> list[str]:
    for placeholder, regex in varies:
        lines = [re.sub(regex, placeholder, line) for line in lines]
    return lines


def _line_pattern(line: str, excerpt: bool) -> re.Pattern:
    pieces = re.split(r"(/…/|\.\.\.|…)" if excerpt else r"(/…/)", line)
    regex = "".join(".*" if p in ("...", "…") else r"/\S*/" if p == "/…/" else re.escape(p) for p in pieces)
    return re.compile(regex)


def matches(shown: list[str], actual: list[str], excerpt: bool = False,
            varies: list[tuple[str, str]] = ()) -> bool:
    """Whether `actual` is what `shown` shows: line by line, a `...` line standing for any
    run of lines (and, in an excerpt, `...` inside a line for any text)."""
    return _match(shown, actual, excerpt, varies)[0] is None


def _match(shown: list[str], actual: list[str], excerpt: bool,
           varies: list[tuple[str, str]]) -> tuple[int | None, int]:
    """(None, 0) when `actual` is what `shown` shows; else (the index of the first shown
    line that cannot be matched after the ones before it, the first actual line it could
    have been)."""
    shown = _lines("\n".join(_normalise(shown, list(varies))))
    actual = _normalise(actual, list(varies))
    items = [None if line.strip() == "..." else _line_pattern(line.rstrip(), excerpt) for line in shown]
    # reachable[j]: the items so far can match the first j lines
    reachable = [True] + [False] * len(actual)
    for index, item in enumerate(items):
        previous = reachable
        if item is None:
            seen = False
            reachable = []
            for j in range(len(actual) + 1):
                seen = seen or previous[j]
                reachable.append(seen)
        else:
            reachable = [False] + [previous[j] and bool(item.fullmatch(actual[j])) for j in range(len(actual))]
        if not any(reachable):
            return index, previous.index(True)
    return (None, 0) if reachable[len(actual)] else (len(items), len(actual))


def mismatches(example: Example, results: list[Result]) -> list[str]:
    """One report per step whose output is not what the docs show."""
    reports = []
    for result in results:
        step = result.step
        if step.shown is None:
            if result.returncode != 0:
                reports.append(f"`{step.command}` exited with status {result.returncode}:\n" + "\n".join(result.actual))
            continue
        line, at = _match(step.shown, result.actual, step.excerpt, step.varies)
        if line is None:
            continue
        what = f"the file {step.shows_file}" if step.shows_file else f"`{step.command}`"
        if "..." in [s.strip() for s in step.shown]:   # an excerpt: where it stops matching
            shown_line = step.shown[line] if line < len(step.shown) else "(the end of the output)"
            difference = (f"--- the first shown line not found in order: {shown_line!r}\n"
                          f"--- actual output from line {at + 1} on:\n" + "\n".join(result.actual[at:at + 12]))
        else:
            difference = "--- diff, shown -> actual:\n" + "\n".join(
                difflib.unified_diff(step.shown, result.actual, "shown", "actual", lineterm="", n=2))
        reports.append(f"{step.where}: {what} prints something else than the docs show (exit status "
                       f"{result.returncode}).\n{difference}\n--- actual output:\n" + "\n".join(result.actual))
    return reports


# ----------------------------------------------------------------------------- command line


def _update(results: list[Result]) -> None:
    """Writes each actual output into the block that shows it, where the block has no elision."""
    by_block: dict[int, list[Result]] = {}
    for result in results:
        if result.step.shown is not None and result.step.block is not None:
            by_block.setdefault(id(result.step.block), []).append(result)
    for block_results in by_block.values():
        block = block_results[0].step.block
        where, document = block.where, block.document
        if any(r.step.excerpt or r.step.varies or r.step.shows_file or "..." in [s.strip() for s in r.step.shown]
               or any("/…/" in line for line in r.step.shown) for r in block_results):
            print(f"{where}: not updated (an excerpt: trim the actual output by hand)")
            continue
        new = []
        for r in block_results:
            if block.is_session:
                new.append("$ " + r.step.command)
            new += r.actual
        if new == block.lines:
            continue
        text = document.read_text()
        old_body, new_body = "\n".join(block.lines), "\n".join(new)
        if text.count("\n" + old_body + "\n") != 1:
            print(f"{where}: cannot update (block text not unique)")
            continue
        document.write_text(text.replace("\n" + old_body + "\n", "\n" + new_body + "\n"))
        print(f"{where}: updated")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("documents", nargs="*", help="DOC or DOC:LINE (examples at or after LINE)")
    parser.add_argument("--update", action="store_true", help="write actual outputs into exact blocks")
    parser.add_argument("--gpu", action="store_true", help="run the GPU examples too")
    args = parser.parse_args(argv)
    examples, _, unclaimed = all_examples()
    for block in unclaimed:
        print(f"{block.where}: neither run nor marked")
    failures = 0
    for spec in args.documents or [str(d.relative_to(REPOSITORY)) for d in DOCUMENTS]:
        path, _, line = spec.partition(":")
        for example in examples:
            if example.document != (REPOSITORY / path).resolve() or (line and example.line < int(line)):
                continue
            if example.gpu is not None and not args.gpu:
                print(f"{example.id}: GPU only {example.gpu}")
                continue
            with tempfile.TemporaryDirectory(prefix="docs-test-") as root:
                results = run(example, Path(root))
            reports = mismatches(example, results)
            failures += bool(reports)
            print(f"{example.id}: {'differs' if reports else 'ok'}")
            for report in reports:
                print(report)
            if args.update and reports:
                _update(results)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""Every example of README.md and docs/*.md runs and prints what the docs show.

The conventions the Markdown follows (which block is a script, which its output, the
`<!-- docs-test: ... -->` markers) are described in markdown_examples.py. A failure
prints the difference and the actual output; `python tests/docs/markdown_examples.py
--update docs/<doc>.md` writes actual outputs back into the blocks that show them whole.
"""
from __future__ import annotations

import pytest

from markdown_examples import _with_actual_values, all_examples, matches, mismatches, run

EXAMPLES, SKIPPED, UNCLAIMED = all_examples()


@pytest.mark.parametrize("example", [
    pytest.param(example, id=example.id, marks=[pytest.mark.gpu] if example.gpu is not None else [])
    for example in EXAMPLES])
def test_example(example, tmp_path):
    reports = mismatches(example, run(example, tmp_path))
    assert not reports, "\n\n".join(reports)


def test_every_block_is_run_shown_or_marked():
    """A fenced block that is neither an example, nor output an example shows, nor marked
    `skip (why)` would drift unseen."""
    assert not UNCLAIMED, "blocks neither run nor marked (add a <!-- docs-test: ... --> marker):\n" + "\n".join(
        f"  {block.where}: {block.lines[0] if block.lines else ''}" for block in UNCLAIMED)


def test_skips_give_reasons():
    assert all(skipped.reason.strip("() ") for skipped in SKIPPED), [s.block.where for s in SKIPPED if not s.reason]


@pytest.mark.parametrize("shown, actual, excerpt, expected", [
    (["a", "b"], ["a", "b"], False, True),
    (["a", "b"], ["a", "c"], False, False),
    (["a", "b"], ["a", "b", "c"], False, False),           # nothing left out unless marked
    (["a", "...", "d"], ["a", "b", "c", "d"], False, True),
    (["a", "...", "d"], ["a", "d"], False, True),            # `...` may stand for no line
    (["a", "...", "d"], ["a", "b", "c"], False, False),
    (["x = ...(y)"], ["x = f(y)"], False, False),            # inside a line only in excerpts
    (["x = ...(y)"], ["x = f(y)"], True, True),
    (["...", "b", "..."], ["a", "b", "c"], False, True),
    (["File /…/tilec/cli.py"], ["File /work/main/tilec/cli.py"], False, True),
    (["File /…/tilec/cli.py"], ["File /work/x y/tilec/cli.py"], False, False),
])
def test_matching(shown, actual, excerpt, expected):
    assert matches(shown, actual, excerpt) is expected


def test_a_command_names_the_value_that_came_out():
    seen = {"49b2eb9b5323": "8e5154ae29ee"}   # a key's first characters, as shown -> as printed
    assert _with_actual_values("tilec cache info 49b2 --stage ptx", seen) == "tilec cache info 8e51 --stage ptx"
    assert _with_actual_values("tilec cache info 49", seen) == "tilec cache info 49"   # too short to tell


def test_varies():
    varies = [("<key>", r"[0-9a-f]{12}")]
    assert matches(["key 49b2eb9b5323 ok"], ["key 0123456789ab ok"], varies=varies)
    assert not matches(["key 49b2eb9b5323 ok"], ["key 0123456789ab no"], varies=varies)

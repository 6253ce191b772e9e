"""Pass pipelines: parsing (nested anchors included) and how run_pipeline reports failures."""
from __future__ import annotations

import pytest
from mlir import ir

from tilec.dialects import make_context
from tilec.passes import Nested, PassFailure, parse_pipeline, pipeline_text, run_pipeline

# A canonicalize that fails whenever it changes anything: a deterministic upstream failure.
FAILING = "canonicalize{max-iterations=1 test-convergence=true}"

FOLDABLE = """module {
  gpu.module @g {
    llvm.func @f(%a: i32) -> i32 {
      %zero = arith.constant 0 : i32
      %b = arith.addi %a, %zero : i32
      llvm.return %b : i32
    }
  }
}"""


def parse(text: str) -> ir.Module:
    return ir.Module.parse(text, make_context())


def test_flat_pipeline():
    assert parse_pipeline("a,b{x=1 y=2}, c") == [("a", {}), ("b", {"x": "1", "y": "2"}), ("c", {})]
    assert parse_pipeline("") == []


def test_nested_pipeline():
    items = parse_pipeline("gpu.module(convert-scf-to-cf,convert-arith-to-llvm{index-bitwidth=32}),cse")
    assert items == [Nested("gpu.module", (("convert-scf-to-cf", {}), ("convert-arith-to-llvm", {"index-bitwidth": "32"}))),
                     ("cse", {})]
    assert pipeline_text(items) == "gpu.module(convert-scf-to-cf,convert-arith-to-llvm{index-bitwidth=32}),cse"


def test_builtin_module_wrapper_is_the_pipeline_inside():
    assert parse_pipeline("builtin.module(gpu.module(a,b),c)") == [Nested("gpu.module", (("a", {}), ("b", {}))),
                                                                   ("c", {})]


@pytest.mark.parametrize("text", ["gpu.module(a,b", "a,,b", "a(b))", "(a)", "a b"])
def test_malformed_pipelines(text):
    with pytest.raises(ValueError, match="pass pipeline"):
        parse_pipeline(text)


def test_nested_upstream_passes_run_on_the_anchor():
    module = parse(FOLDABLE)
    run_pipeline(module, "gpu.module(convert-arith-to-llvm),canonicalize")
    text = str(module)
    assert "arith." not in text and "llvm.return %arg0" in text


def test_tilec_passes_cannot_be_nested():
    with pytest.raises(ValueError, match="tile-dce cannot be nested in gpu.module"):
        run_pipeline(parse(FOLDABLE), "gpu.module(tile-dce)")


def test_unknown_upstream_pass():
    with pytest.raises(ValueError, match="unknown pass 'no-such-pass'"):
        run_pipeline(parse(FOLDABLE), "no-such-pass")


def test_failing_upstream_pass_is_named_with_its_input():
    module = parse(FOLDABLE)
    with pytest.raises(PassFailure) as info:
        run_pipeline(module, f"gpu.module(convert-scf-to-cf,{FAILING}),cse")
    failure = info.value
    assert failure.pass_name == "canonicalize"
    assert failure.pipeline_item == f"gpu.module({FAILING})"
    assert isinstance(failure.error, ir.MLIRError)
    assert "arith.addi" in failure.ir_before  # the input of the failing pass, parseable again
    with pytest.raises(PassFailure, match="canonicalize"):  # the reproducer: that input, that one pass
        run_pipeline(parse(failure.ir_before), failure.pipeline_item)


def test_failing_upstream_pass_after_a_tilec_pass():
    with pytest.raises(PassFailure) as info:
        run_pipeline(parse(FOLDABLE), f"tile-dce,cse,{FAILING}")
    assert info.value.pass_name == "canonicalize" and info.value.pipeline_item == FAILING
    assert "arith.addi" in info.value.ir_before

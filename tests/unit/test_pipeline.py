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


def _dumps(text: str) -> list[tuple[str, str]]:
    """(header, module text) of each IR dump in `text`."""
    pieces = text.split("// -----// ")[1:]
    return [(("// -----// " + piece).split("\n", 1)[0], piece.split("\n", 1)[1]) for piece in pieces]


def test_print_ir_names_each_pass_and_the_kernel(capsys):
    module = parse(FOLDABLE)
    run_pipeline(module, "tile-dce,gpu.module(canonicalize,convert-arith-to-llvm),cse", print_ir=True,
                 kernel="folded")
    dumps = _dumps(capsys.readouterr().err)
    assert [header for header, _ in dumps] == [
        f"// -----// IR dump after {name} (kernel folded) //----- //"
        for name in ("tile-dce", "canonicalize", "convert-arith-to-llvm", "cse")]
    # Each dump is the whole module as that pass left it: the nested passes' too.
    assert "arith.addi" in dumps[0][1] and "arith.addi" not in dumps[1][1]
    assert "arith.constant" not in dumps[2][1] and dumps[3][1].startswith("module")
    assert str(module).strip() == dumps[3][1].strip()


def test_print_ir_without_a_kernel_and_off(capsys):
    run_pipeline(parse(FOLDABLE), "cse", print_ir=True)
    assert capsys.readouterr().err.startswith("// -----// IR dump after cse //----- //\nmodule")
    run_pipeline(parse(FOLDABLE), "cse", kernel="quiet")
    assert capsys.readouterr().err == ""

"""Op facts live beside each op (tilec/dialects/op_facts.py), and passes ask for them.

Every op the tile and tilegpu dialects define has one record; layout assignment has a
rule for each (or takes it as elementwise) and refuses an op it does not know.
"""
from __future__ import annotations

import re

import pytest
from mlir import ir

from tilec.dialects import op_facts, tile, tilegpu
from tilec.dialects._mlir import make_context
from tilec.passes import PassFailure, run_pipeline
from tilec.passes.convert_tile_to_tilegpu import _RULES, LayoutAssignmentError


def _defined_ops() -> set[str]:
    ops = set()
    for dialect, text in (("tile", tile.IRDL), ("tilegpu", tilegpu.IRDL)):
        ops |= {f"{dialect}.{name}" for name in re.findall(r"irdl\.operation @(\w+)", text)}
    return ops


def test_every_defined_op_has_facts():
    assert _defined_ops() == set(op_facts.OPS)


def test_every_op_has_a_layout_rule():
    missing = [name for name in op_facts.OPS
               if name not in _RULES and not callable(op_facts.OPS[name].elementwise)
               and not op_facts.OPS[name].elementwise]
    assert not missing


def _op(text: str) -> ir.Operation:
    module = ir.Module.parse(text)
    func = module.body.operations[0]
    return module, list(func.regions[0].blocks[0].operations)


def test_facts_follow_attributes():
    with make_context():
        _, ops = _op("""
        func.func @f(%p: !tile.ptr<f32>, %x: f32) {
          %a = "tile.load"(%p) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = false} : (!tile.ptr<f32>) -> f32
          %b = "tile.load"(%p) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 0, 0>, volatile = true} : (!tile.ptr<f32>) -> f32
          %c = arith.addf %a, %b : f32
          %d = arith.constant 1.0 : f32
          "tile.store"(%p, %c) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (!tile.ptr<f32>, f32) -> ()
          return
        }""")
        load, volatile_load, add, constant, store, ret = ops
        assert op_facts.is_pure(load) and not op_facts.is_pure(volatile_load)
        assert op_facts.is_pure(add) and op_facts.is_elementwise(add)
        assert op_facts.is_pure(constant) and not op_facts.is_elementwise(constant)
        assert not op_facts.is_pure(store) and not op_facts.is_elementwise(store)
        assert op_facts.facts_of(ret) is None and not op_facts.is_pure(ret)
        assert op_facts.verifier_of(store) is not None
        # Loads are pure but read memory: removable when unused, never recomputed.
        assert op_facts.reads_memory(load) and not op_facts.reads_memory(add)


def test_dot_operands_read_in_any_layout_on_the_fma_path_only():
    facts = op_facts.OPS["tile.dot"]
    assert facts.pure
    with make_context():
        _, (fma, mma, _ret) = _op("""
        #b = #tilegpu.blocked<{order = array<i32: 1, 0>, sizePerThread = array<i32: 1, 1>, threadsPerWarp = array<i32: 4, 8>, warpsPerCTA = array<i32: 4, 1>}>
        #mma = #tilegpu.mma<{instrShape = array<i32: 16, 8>, versionMajor = 2 : i32, warpsPerCTA = array<i32: 2, 2>}>
        #a = #tilegpu.dot_op<{kWidth = 2 : i32, opIdx = 0 : i32, parent = #mma}>
        #bb = #tilegpu.dot_op<{kWidth = 2 : i32, opIdx = 1 : i32, parent = #mma}>
        func.func @f(%x: tensor<32x32xf16, #b>, %c: tensor<32x32xf32, #b>, %xa: tensor<32x32xf16, #a>,
                     %xb: tensor<32x32xf16, #bb>, %cm: tensor<32x32xf32, #mma>) {
          %0 = "tile.dot"(%x, %x, %c) {input_precision = "ieee"} : (tensor<32x32xf16, #b>, tensor<32x32xf16, #b>, tensor<32x32xf32, #b>) -> tensor<32x32xf32, #b>
          %1 = "tile.dot"(%xa, %xb, %cm) {input_precision = "ieee"} : (tensor<32x32xf16, #a>, tensor<32x32xf16, #bb>, tensor<32x32xf32, #mma>) -> tensor<32x32xf32, #mma>
          return
        }""")
        assert op_facts.reads_any_layout(fma, 0) and op_facts.reads_any_layout(fma, 1)
        assert not op_facts.reads_any_layout(mma, 0) and not op_facts.reads_any_layout(mma, 1)


def test_a_second_definition_is_refused():
    with pytest.raises(ValueError, match="defined twice"):
        op_facts.define_op("tile.load")


def test_layout_assignment_refuses_an_unknown_op():
    context = make_context()
    context.allow_unregistered_dialects = True
    with context:
        module = ir.Module.parse("""
        func.func @f(%x: tensor<16xf32>) {
          %y = "mystery.op"(%x) : (tensor<16xf32>) -> tensor<16xf32>
          return
        }""")
        with pytest.raises(PassFailure) as failure:
            run_pipeline(module, "convert-tile-to-tilegpu")
    assert isinstance(failure.value.error, LayoutAssignmentError)
    assert "no layout rule for 'mystery.op'" in str(failure.value.error)

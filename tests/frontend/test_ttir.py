"""Frontend tests without a GPU: small kernels -> ttir, checked with FileCheck.

Each test compiles a kernel with `tilec.compile(..., target="sm_90")` through
`compile_to_cubin`, which also checks that ptxas accepted the PTX (a cubin, registers
counted), and checks one stage's text with FileCheck:

- `k.asm["ttir"]` (after canonicalize and cse) for what the kernel computes;
- `frontend_ir(...)`, the frontend's own output before any pass, where the claim is that
  the *frontend* did something (folded a constexpr, took one side of a static `if`,
  unrolled a static_range, built an scf.if) and canonicalize must not get the credit;
- `k.asm["ttgir"]` and `k.asm["ptx"]` for the two facts that only show there (num_warps,
  and what `:16` divisibility buys).

FileCheck patterns name SSA values with `%[[NAME:[0-9]+]]` so the checks follow the data
flow; `-DNAME=value` fills parametrized patterns (`[[ELEM]]`). Known bugs are strict
xfails that check the frontend's IR only: they fail loudly once fixed, so the marker
gets removed (and the kernel can then join the ptxas check).
"""
import subprocess
import tempfile

import pytest

import tilec
import tilec.language as tl
from tilec import CompilationError
from tilec.backend import toolkit
from tilec.frontend import generate_ttir
from tilec.specialization import ArgSpec
from tilec.language.core import dtype_from_signature

try:
    toolkit.ptxas_path()
    FILECHECK = toolkit.llvm_tool("FileCheck")
except toolkit.ToolkitError as exc:
    pytest.skip(f"needs ptxas and FileCheck: {exc}", allow_module_level=True)


# ----------------------------------------------------------------------------- helpers


def compile_to_cubin(fn, signature: dict, constexprs: dict | None = None, **options):
    """tilec.compile for sm_90, checking that ptxas accepted the PTX."""
    kernel = tilec.compile(fn, signature=signature, constexprs=constexprs or {}, target="sm_90", **options)
    assert kernel.asm["cubin"], "ptxas produced an empty cubin"
    assert kernel.n_regs > 0, "ptxas reported no registers"
    return kernel


def frontend_ir(fn, signature: dict, constexprs: dict | None = None) -> str:
    """The frontend's ttir for this specialisation, before any pass runs."""
    constexprs = constexprs or {}
    specs = []
    for name in fn.arg_names:
        if name in constexprs:
            specs.append(ArgSpec(name, constant=constexprs[name], is_constant=True))
        else:
            type_name, _, divisibility = signature[name].partition(":")
            specs.append(ArgSpec(name, dtype_from_signature(type_name), divisibility=int(divisibility or 1)))
    return str(generate_ttir(fn, specs))


def filecheck(text: str, checks: str, *flags: str, **defines: str) -> None:
    """Runs FileCheck with `checks` as the check file on `text`; `defines` become -DNAME=value."""
    with tempfile.NamedTemporaryFile("w", suffix=".checks") as check_file:
        check_file.write(checks)
        check_file.flush()
        command = [FILECHECK, check_file.name, *flags, *(f"-D{k}={v}" for k, v in defines.items())]
        result = subprocess.run(command, input=text, capture_output=True, text=True)
    if result.returncode != 0:
        pytest.fail(f"FileCheck failed:\n{result.stderr}", pytrace=False)


# ----------------------------------------------------------------------------- constexprs


@tilec.jit
def scaled_range(out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK * 2)
    tl.store(out_ptr + offs, offs * (BLOCK // 4 + 1))


def test_constexpr_arithmetic_is_folded_by_the_frontend():
    signature, constexprs = {"out_ptr": "*i32"}, {"BLOCK": 32}
    compile_to_cubin(scaled_range, signature, constexprs)
    # BLOCK * 2 -> 64 and BLOCK // 4 + 1 -> 9 before any pass; no scalar arithmetic is left.
    filecheck(frontend_ir(scaled_range, signature, constexprs), """
        CHECK-LABEL: func.func public @scaled_range(%arg0: !tile.ptr<i32>)
        CHECK:       %[[RANGE:[0-9]+]] = "tile.make_range"() {end = 64 : i32, start = 0 : i32} : () -> tensor<64xi32>
        CHECK:       %[[SPLAT:[0-9]+]] = "tile.splat"(%c9_i32{{.*}}) : (i32) -> tensor<64xi32>
        CHECK:       arith.muli %[[RANGE]], %[[SPLAT]] : tensor<64xi32>
    """, "--implicit-check-not=arith.divsi", "--implicit-check-not=arith.addi")


@tilec.jit
def static_branch(out_ptr, BLOCK: tl.constexpr, MODE: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    if MODE == "mul":
        values = offs * 3
    elif MODE == "add":
        values = offs + 7
    else:
        tl.static_assert(False, "unknown MODE")  # never compiled for "mul" and "add"
    tl.store(out_ptr + offs, values)


@pytest.mark.parametrize("mode, op, constant", [("mul", "muli", 3), ("add", "addi", 7)])
def test_static_if_emits_only_the_branch_taken(mode, op, constant):
    signature, constexprs = {"out_ptr": "*i32"}, {"BLOCK": 64, "MODE": mode}
    compile_to_cubin(static_branch, signature, constexprs)
    filecheck(frontend_ir(static_branch, signature, constexprs), """
        CHECK: %[[RANGE:[0-9]+]] = "tile.make_range"
        CHECK: %[[SPLAT:[0-9]+]] = "tile.splat"(%c[[CONSTANT]]_i32{{.*}}) : (i32) -> tensor<64xi32>
        CHECK: arith.[[OP]] %[[RANGE]], %[[SPLAT]] : tensor<64xi32>
    """, "--implicit-check-not=scf.if", "--implicit-check-not=arith.cmpi", OP=op, CONSTANT=str(constant))


def test_static_if_compiles_the_else_branch_for_other_values():
    with pytest.raises(CompilationError, match="static_assert failed: unknown MODE"):
        frontend_ir(static_branch, {"out_ptr": "*i32"}, {"BLOCK": 64, "MODE": "div"})


# ----------------------------------------------------------------------------- arguments


@tilec.jit
def add_ints(out_ptr, a, b):
    tl.store(out_ptr, a + b)


def test_integer_arguments_are_i32_and_i64():
    kernel = compile_to_cubin(add_ints, {"out_ptr": "*i64", "a": "i32", "b": "i64"})
    # int32 + int64 promotes to int64 (sign-extending a), as in C and Triton.
    filecheck(kernel.asm["ttir"], """
        CHECK-LABEL: func.func public @add_ints(%arg0: !tile.ptr<i64>, %arg1: i32, %arg2: i64) {
        CHECK-NEXT:    %[[A:[0-9]+]] = arith.extsi %arg1 : i32 to i64
        CHECK-NEXT:    %[[SUM:[0-9]+]] = arith.addi %[[A]], %arg2 : i64
        CHECK-NEXT:    "tile.store"(%arg0, %[[SUM]]) {{.*}} : (!tile.ptr<i64>, i64) -> ()
    """)


def test_divisibility_16_becomes_an_argument_attribute():
    kernel = compile_to_cubin(add_ints, {"out_ptr": "*i64:16", "a": "i32:16", "b": "i64"})
    filecheck(kernel.asm["ttir"], """
        CHECK: func.func public @add_ints(%arg0: !tile.ptr<i64> {tile.divisibility = 16 : i32}, %arg1: i32 {tile.divisibility = 16 : i32}, %arg2: i64) {
    """)


@tilec.jit
def copy(src_ptr, dst_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs))


@pytest.mark.parametrize("suffix, access, flags", [
    (":16", "v4.b32", []),
    ("", "b32", ["--implicit-check-not=global.v"]),  # without :16 no vector access at all
])
def test_divisibility_16_lets_fp32_accesses_use_128_bit_vectors(suffix, access, flags):
    signature = {"src_ptr": "*fp32" + suffix, "dst_ptr": "*fp32" + suffix}
    kernel = compile_to_cubin(copy, signature, {"BLOCK": 1024})
    filecheck(kernel.asm["ptx"], """
        CHECK: ld.global.[[ACCESS]]
        CHECK: st.global.[[ACCESS]]
    """, *flags, ACCESS=access)


@pytest.mark.parametrize("type_name, element", [
    ("fp16", "f16"), ("bf16", "bf16"), ("fp32", "f32"), ("fp64", "f64"), ("i1", "i1"),
    ("i8", "i8"), ("i16", "i16"), ("i32", "i32"), ("i64", "i64"),
    ("u8", "i8"),  # MLIR integers are signless; the signedness lives in tilec's types
])
def test_pointer_element_types(type_name, element):
    kernel = compile_to_cubin(copy, {"src_ptr": "*" + type_name, "dst_ptr": "*" + type_name}, {"BLOCK": 128})
    filecheck(kernel.asm["ttir"], """
        CHECK:       func.func public @copy(%arg0: !tile.ptr<[[ELEM]]>, %arg1: !tile.ptr<[[ELEM]]>)
        CHECK:       %[[PID:[0-9]+]] = "tile.get_program_id"() {axis = 0 : i32} : () -> i32
        CHECK:       %[[BASE:[0-9]+]] = arith.muli %[[PID]], %c128_i32 : i32
        CHECK:       %[[RANGE:[0-9]+]] = "tile.make_range"() {end = 128 : i32, start = 0 : i32} : () -> tensor<128xi32>
        CHECK:       %[[BASES:[0-9]+]] = "tile.splat"(%[[BASE]]) : (i32) -> tensor<128xi32>
        CHECK:       %[[OFFS:[0-9]+]] = arith.addi %[[BASES]], %[[RANGE]] : tensor<128xi32>
        CHECK:       %[[SRC:[0-9]+]] = "tile.splat"(%arg0) : (!tile.ptr<[[ELEM]]>) -> tensor<128x!tile.ptr<[[ELEM]]>>
        CHECK:       %[[PTRS:[0-9]+]] = "tile.addptr"(%[[SRC]], %[[OFFS]])
        CHECK:       "tile.load"(%[[PTRS]]) {{.*}} -> tensor<128x[[ELEM]]>
    """, ELEM=element)


# ----------------------------------------------------------------------------- 2-D blocks


@tilec.jit
def positive_exp_2d(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)
    cols = tl.arange(0, N)
    offs = rows[:, None] * N + cols[None, :]
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.where(x > 0, tl.exp(x), 0.0))


def test_broadcasting_into_2d_and_where_exp():
    kernel = compile_to_cubin(positive_exp_2d, {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {"M": 16, "N": 32})
    filecheck(kernel.asm["ttir"], """
        CHECK: %[[ROWS:[0-9]+]] = "tile.make_range"() {end = 16 : i32, start = 0 : i32} : () -> tensor<16xi32>
        CHECK: %[[COLS:[0-9]+]] = "tile.make_range"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32>
        CHECK: %[[ROWS2:[0-9]+]] = "tile.expand_dims"(%[[ROWS]]) {axis = 1 : i32} : (tensor<16xi32>) -> tensor<16x1xi32>
        CHECK: %[[STRIDE:[0-9]+]] = "tile.splat"(%c32_i32) : (i32) -> tensor<16x1xi32>
        CHECK: %[[ROWOFFS:[0-9]+]] = arith.muli %[[ROWS2]], %[[STRIDE]] : tensor<16x1xi32>
        CHECK: %[[COLS2:[0-9]+]] = "tile.expand_dims"(%[[COLS]]) {axis = 0 : i32} : (tensor<32xi32>) -> tensor<1x32xi32>
        CHECK: %[[ROWB:[0-9]+]] = "tile.broadcast"(%[[ROWOFFS]]) : (tensor<16x1xi32>) -> tensor<16x32xi32>
        CHECK: %[[COLB:[0-9]+]] = "tile.broadcast"(%[[COLS2]]) : (tensor<1x32xi32>) -> tensor<16x32xi32>
        CHECK: %[[OFFS:[0-9]+]] = arith.addi %[[ROWB]], %[[COLB]] : tensor<16x32xi32>
        CHECK: %[[X:[0-9]+]] = "tile.load"
        CHECK: %[[POSITIVE:[0-9]+]] = arith.cmpf ogt, %[[X]], %{{[0-9]+}} : tensor<16x32xf32>
        CHECK: %[[EXP:[0-9]+]] = math.exp %[[X]] : tensor<16x32xf32>
        CHECK: %[[Y:[0-9]+]] = arith.select %[[POSITIVE]], %[[EXP]], %{{[0-9]+}} : tensor<16x32xi1>, tensor<16x32xf32>
        CHECK: "tile.store"(%{{[0-9]+}}, %[[Y]])
    """)


@tilec.jit
def reduce_2d(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr, REDUCE: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    result = REDUCE(tl.load(x_ptr + offs), axis=AXIS)
    out_offs = tl.arange(0, N) if AXIS == 0 else tl.arange(0, M)
    tl.store(out_ptr + out_offs, result)


@pytest.mark.parametrize("reduce, in_type, out_type, elem, combiner", [
    (tl.sum, "fp32", "fp32", "f32", "addf"),
    (tl.max, "fp32", "fp32", "f32", "maxnumf"),
    (tl.min, "fp16", "fp32", "f32", "minnumf"),  # narrow values reduce in fp32, as in Triton
    (tl.sum, "i32", "i32", "i32", "addi"),
    (tl.max, "i32", "i32", "i32", "maxsi"),
    (tl.min, "u32", "u32", "i32", "minui"),
    (tl.sum, "i8", "i32", "i32", "addi"),  # small integers accumulate in 32 bits, as in Triton
], ids=lambda v: getattr(v, "__name__", None))
@pytest.mark.parametrize("axis, kept", [(0, 32), (1, 16)])
def test_reductions_along_each_axis(reduce, in_type, out_type, elem, combiner, axis, kept):
    kernel = compile_to_cubin(reduce_2d, {"x_ptr": f"*{in_type}", "out_ptr": f"*{out_type}"},
                              {"M": 16, "N": 32, "AXIS": axis, "REDUCE": reduce})
    filecheck(kernel.asm["ttir"], """
        CHECK:      %[[INPUT:[0-9]+]] = {{"tile.load"|arith.extsi|arith.extf}}{{.*}} tensor<16x32x[[ELEM]]>
        CHECK-NOT:  tile.load
        CHECK:      %[[RESULT:[0-9]+]] = "tile.reduce"(%[[INPUT]]) ({
        CHECK-NEXT: ^bb0(%[[LHS:arg[0-9]+]]: [[ELEM]], %[[RHS:arg[0-9]+]]: [[ELEM]]):
        CHECK-NEXT:   %[[COMBINED:[0-9]+]] = arith.[[COMBINER]] %[[LHS]], %[[RHS]] : [[ELEM]]
        CHECK-NEXT:   gpu.yield %[[COMBINED]] : [[ELEM]]
        CHECK-NEXT: }) {axis = [[AXIS]] : i32, {{.*}}} : (tensor<16x32x[[ELEM]]>) -> tensor<[[KEPT]]x[[ELEM]]>
        CHECK:      "tile.store"(%{{[0-9]+}}, %[[RESULT]])
    """, ELEM=elem, COMBINER=combiner, AXIS=str(axis), KEPT=str(kept))


# ----------------------------------------------------------------------------- runtime if


@tilec.jit
def branchy(out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    if pid < n:
        a = offs.to(tl.float32) * 2.0
        b = pid + 1
    else:
        a = tl.zeros((BLOCK,), tl.float32)
        b = n
    tl.store(out_ptr + offs, a + b)


def test_runtime_if_yields_the_names_assigned_in_both_branches():
    kernel = compile_to_cubin(branchy, {"out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 32})
    filecheck(kernel.asm["ttir"], """
        CHECK:      %[[PID:[0-9]+]] = "tile.get_program_id"() {axis = 0 : i32} : () -> i32
        CHECK:      %[[COND:[0-9]+]] = arith.cmpi slt, %[[PID]], %arg1 : i32
        CHECK:      %[[IF:[0-9]+]]:2 = scf.if %[[COND]] -> (tensor<32xf32>, i32) {
        CHECK:        arith.sitofp
        CHECK:        %[[A:[0-9]+]] = arith.mulf
        CHECK:        %[[B:[0-9]+]] = arith.addi %[[PID]], %c1_i32 : i32
        CHECK-NEXT:   scf.yield %[[A]], %[[B]] : tensor<32xf32>, i32
        CHECK-NEXT: } else {
        CHECK-NEXT:   %[[ZEROS:[0-9]+]] = "tile.splat"(%cst{{.*}}) : (f32) -> tensor<32xf32>
        CHECK-NEXT:   scf.yield %[[ZEROS]], %arg1 : tensor<32xf32>, i32
        CHECK-NEXT: }
        CHECK:      %[[BF:[0-9]+]] = arith.sitofp %[[IF]]#1 : i32 to f32
        CHECK:      %[[BS:[0-9]+]] = "tile.splat"(%[[BF]]) : (f32) -> tensor<32xf32>
        CHECK:      arith.addf %[[IF]]#0, %[[BS]] : tensor<32xf32>
    """)


@tilec.jit
def maybe_halve(x_ptr, n):
    value = tl.load(x_ptr)
    scale = 1.0
    if n > 4:
        scale = 0.5
    tl.store(x_ptr, value * scale)


def test_runtime_if_without_else_yields_the_value_from_before():
    signature = {"x_ptr": "*fp32", "n": "i32"}
    compile_to_cubin(maybe_halve, signature)
    filecheck(frontend_ir(maybe_halve, signature), """
        CHECK:      %[[COND:[0-9]+]] = arith.cmpi sgt, %arg1, %{{.*}} : i32
        CHECK:      %[[SCALE:[0-9]+]] = scf.if %[[COND]] -> (f32) {
        CHECK:        %[[HALF:[a-z0-9_]+]] = arith.constant 5.000000e-01 : f32
        CHECK-NEXT:   scf.yield %[[HALF]] : f32
        CHECK-NEXT: } else {
        CHECK-NEXT:   %[[ONE:[a-z0-9_]+]] = arith.constant 1.000000e+00 : f32
        CHECK-NEXT:   scf.yield %[[ONE]] : f32
        CHECK-NEXT: }
        CHECK:      arith.mulf %{{[0-9]+}}, %[[SCALE]] : f32
    """)


@tilec.jit
def guarded_ternary(x_ptr, out_ptr, n):
    pid = tl.program_id(0)
    value = tl.load(x_ptr + pid) if pid < n else 0.0
    tl.store(out_ptr + pid, value)


def test_runtime_ternary_only_loads_when_its_condition_holds():
    signature = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}
    filecheck(frontend_ir(guarded_ternary, signature), """
        CHECK:      scf.if %{{[0-9]+}} -> (f32) {
        CHECK:        %[[VALUE:[0-9]+]] = "tile.load"
        CHECK-NEXT:   scf.yield %[[VALUE]] : f32
        CHECK-NEXT: } else {
    """)


@tilec.jit
def int_or_float(out_ptr):
    if tl.program_id(0) == 0:
        a = 1
    else:
        a = 2.5
    tl.store(out_ptr, a)


def test_runtime_if_does_not_truncate_a_float_constant_to_int():
    try:
        ir_text = frontend_ir(int_or_float, {"out_ptr": "*fp32"})
    except CompilationError:
        return  # refusing the kernel, as Triton does ("Mismatched type for a"), is a fix too
    filecheck(ir_text, """
        CHECK: scf.if %{{[0-9]+}} -> (f32)
        CHECK: arith.constant 2.500000e+00 : f32
    """)


# ----------------------------------------------------------------------------- loops


@tilec.jit
def running_mean(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), tl.float32)
    ptrs = x_ptr + tl.arange(0, BLOCK)
    count = 0
    for i in range(n):
        acc += tl.load(ptrs)
        ptrs += BLOCK
        count += 1
    tl.store(out_ptr + tl.arange(0, BLOCK), acc / count)


def test_for_range_carries_tensors_pointers_and_scalars():
    """The frontend's loop (tile-carry-pointer-bases later carries the pointers' scalar base)."""
    compile_to_cubin(running_mean, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 32})
    filecheck(frontend_ir(running_mean, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 32}), """
        CHECK:      %[[ACC0:[0-9]+]] = "tile.splat"(%cst{{.*}}) : (f32) -> tensor<32xf32>
        CHECK:      %[[PTRS0:[0-9]+]] = "tile.addptr"
        CHECK:      %[[LOOP:[0-9]+]]:3 = scf.for %[[I:arg[0-9]+]] = %c0_i32 to %arg2 step %c1_i32
        CHECK-SAME:     iter_args(%[[ACC:arg[0-9]+]] = %[[ACC0]], %[[PTRS:arg[0-9]+]] = %[[PTRS0]], %[[COUNT:arg[0-9]+]] = %c0_i32{{[_0-9]*}})
        CHECK-SAME:     -> (tensor<32xf32>, tensor<32x!tile.ptr<f32>>, i32) {{ *}}: i32 {
        CHECK-NEXT:   %[[X:[0-9]+]] = "tile.load"(%[[PTRS]])
        CHECK-NEXT:   %[[ACC1:[0-9]+]] = arith.addf %[[ACC]], %[[X]] : tensor<32xf32>
        CHECK:        %[[PTRS1:[0-9]+]] = "tile.addptr"(%[[PTRS]], %{{[0-9]+}})
        CHECK:        %[[COUNT1:[0-9]+]] = arith.addi %[[COUNT]], %c1_i32{{.*}} : i32
        CHECK-NEXT:   scf.yield %[[ACC1]], %[[PTRS1]], %[[COUNT1]] : tensor<32xf32>, tensor<32x!tile.ptr<f32>>, i32
        CHECK-NEXT: }
        CHECK:      %[[COUNTF:[0-9]+]] = arith.sitofp %[[LOOP]]#2 : i32 to f32
        CHECK:      %[[COUNTS:[0-9]+]] = "tile.splat"(%[[COUNTF]]) : (f32) -> tensor<32xf32>
        CHECK:      arith.divf %[[LOOP]]#0, %[[COUNTS]] : tensor<32xf32>
    """)


@tilec.jit
def overwritten_in_loop(out_ptr, n):
    x = 0
    for i in range(n):
        x = 2.5
    tl.store(out_ptr, x)


def test_loop_does_not_truncate_a_float_constant_to_int():
    try:
        ir_text = frontend_ir(overwritten_in_loop, {"out_ptr": "*fp32", "n": "i32"})
    except CompilationError:
        return  # refusing the kernel, as Triton does ("Loop-carried variable x has initial type int32 but
        #         is re-assigned to fp32"), is a fix too
    filecheck(ir_text, """
        CHECK: scf.for {{.*}} -> (f32)
        CHECK: arith.constant 2.500000e+00 : f32
    """)


@tilec.jit
def pipelined_sum(x_ptr, out_ptr, n):
    total = 0.0
    for i in tl.range(0, n, num_stages=2):
        total += tl.load(x_ptr + i)
    tl.store(out_ptr, total)


def test_tl_range_with_an_i64_bound_and_num_stages():
    kernel = compile_to_cubin(pipelined_sum, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i64"})
    filecheck(kernel.asm["ttir"], """
        CHECK:      %[[TOTAL:[0-9]+]] = scf.for %[[I:arg[0-9]+]] = %c0_i64 to %arg2 step %c1_i64 iter_args(%[[ACC:arg[0-9]+]] = %cst) -> (f32) : i64 {
        CHECK-NEXT:   %[[PTR:[0-9]+]] = "tile.addptr"(%arg0, %[[I]]) : (!tile.ptr<f32>, i64) -> !tile.ptr<f32>
        CHECK-NEXT:   %[[X:[0-9]+]] = "tile.load"(%[[PTR]])
        CHECK-NEXT:   %[[SUM:[0-9]+]] = arith.addf %[[ACC]], %[[X]] : f32
        CHECK-NEXT:   scf.yield %[[SUM]] : f32
        CHECK-NEXT: } {tile.num_stages = 2 : i32}
        CHECK-NEXT: "tile.store"(%arg1, %[[TOTAL]])
    """)


@tilec.jit
def countdown(out_ptr, n):
    for i in range(n, 0, -2):
        tl.store(out_ptr + i, 1.0)


def test_for_with_a_negative_constant_step_counts_iterations_upwards():
    kernel = compile_to_cubin(countdown, {"out_ptr": "*fp32", "n": "i32"})
    # scf.for needs a positive step: k = 0 .. (n + 1) // 2, i = n - 2 * k.
    filecheck(kernel.asm["ttir"], """
        CHECK:      %[[NP1:[0-9]+]] = arith.addi %arg1, %c1_i32 : i32
        CHECK-NEXT: %[[TRIPS:[0-9]+]] = arith.divsi %[[NP1]], %c2_i32 : i32
        CHECK-NEXT: scf.for %[[K:arg[0-9]+]] = %c0_i32 to %[[TRIPS]] step %c1_i32 : i32 {
        CHECK-NEXT:   %[[STEP:[0-9]+]] = arith.muli %[[K]], %c-2_i32 : i32
        CHECK-NEXT:   %[[I:[0-9]+]] = arith.addi %arg1, %[[STEP]] : i32
        CHECK-NEXT:   "tile.addptr"(%arg0, %[[I]])
    """)


@tilec.jit
def unrolled_sum(x_ptr, out_ptr, BLOCK: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for i in tl.static_range(N):
        acc += tl.load(x_ptr + i * BLOCK + offs)
    tl.store(out_ptr + offs, acc)


def test_static_range_is_unrolled_by_the_frontend():
    signature, constexprs = {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {"BLOCK": 32, "N": 3}
    compile_to_cubin(unrolled_sum, signature, constexprs)
    # i * BLOCK is a constant in each copy of the body: 0, 32, 64.
    filecheck(frontend_ir(unrolled_sum, signature, constexprs), """
        CHECK:      %[[OFF0:.+]] = arith.constant 0 : i32
        CHECK-NEXT: "tile.addptr"(%arg0, %[[OFF0]])
        CHECK:      %[[X0:[0-9]+]] = "tile.load"
        CHECK:      %[[ACC1:[0-9]+]] = arith.addf %{{[0-9]+}}, %[[X0]]
        CHECK:      %[[OFF1:.+]] = arith.constant 32 : i32
        CHECK-NEXT: "tile.addptr"(%arg0, %[[OFF1]])
        CHECK:      %[[X1:[0-9]+]] = "tile.load"
        CHECK:      %[[ACC2:[0-9]+]] = arith.addf %[[ACC1]], %[[X1]]
        CHECK:      %[[OFF2:.+]] = arith.constant 64 : i32
        CHECK-NEXT: "tile.addptr"(%arg0, %[[OFF2]])
        CHECK:      %[[X2:[0-9]+]] = "tile.load"
        CHECK:      %[[ACC3:[0-9]+]] = arith.addf %[[ACC2]], %[[X2]]
        CHECK-NOT:  "tile.load"
        CHECK:      "tile.store"(%{{[0-9]+}}, %[[ACC3]])
    """, "--implicit-check-not=scf.for")


@tilec.jit
def list_literals(x_ptr, out_ptr, N: tl.constexpr):
    values = []
    for i in tl.static_range(N):
        values = values + [tl.load(x_ptr + i)]  # the way to grow a list (no append: it is a tuple)
    a, b, c = values
    block = tl.zeros([16], tl.float32) + a * b + c
    tl.store(out_ptr + tl.arange(0, 16), block)


def test_list_literals_are_constant_tuples():
    # As in Triton: shapes, unpacking, and concatenation in an unrolled loop.
    signature = {"x_ptr": "*fp32", "out_ptr": "*fp32"}
    compile_to_cubin(list_literals, signature, {"N": 3})
    filecheck(frontend_ir(list_literals, signature, {"N": 3}), """
        CHECK-COUNT-3: "tile.load"
        CHECK-NOT:     "tile.load"
        CHECK:         arith.mulf
        CHECK:         "tile.store"
    """)


@tilec.jit
def optional_bias(x_ptr, bias_ptr, ACTIVATION: tl.constexpr):
    offs = tl.arange(0, tl.constexpr(16))
    x = tl.load(x_ptr + offs)
    if bias_ptr is not None:  # a None argument is a constant: decided while compiling, as in Triton
        x += tl.load(bias_ptr + offs)
    if ACTIVATION.startswith("relu"):  # a method of a constant runs while compiling
        x = tl.maximum(x, 0.0)
    tl.store(x_ptr + offs, x)


@pytest.mark.parametrize("bias, loads", [("*fp32", 2), (None, 1)])
def test_compile_time_tests_of_arguments(bias, loads):
    signature = {"x_ptr": "*fp32"}
    constexprs = {"ACTIVATION": "relu6"}
    if bias is None:
        constexprs["bias_ptr"] = None
    else:
        signature["bias_ptr"] = bias
    compile_to_cubin(optional_bias, signature, constexprs)
    filecheck(frontend_ir(optional_bias, signature, constexprs), f"""
        CHECK-COUNT-{loads}: "tile.load"
        CHECK:               arith.maxnumf
        CHECK:               "tile.store"
    """, "--implicit-check-not=scf.if", "--implicit-check-not=tile.load")


# ----------------------------------------------------------------------------- calls


@tilec.jit
def scale_and_shift(x, SCALE: tl.constexpr, SHIFT: tl.constexpr = 1):
    return x * SCALE, x + SHIFT


@tilec.jit
def twice_scaled(x, SCALE: tl.constexpr):
    scaled, _ = scale_and_shift(x, SCALE)
    return scaled * 2


@tilec.jit
def call_helpers(out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a, b = scale_and_shift(offs, 5)
    c = twice_scaled(offs, SCALE=BLOCK)
    tl.store(out_ptr + offs, a + b + c)


def test_jit_calls_are_inlined_with_constexpr_arguments_and_tuple_returns():
    kernel = compile_to_cubin(call_helpers, {"out_ptr": "*i32"}, {"BLOCK": 64})
    filecheck(kernel.asm["ttir"], """
        CHECK-LABEL: func.func public @call_helpers
        CHECK:       %[[OFFS:[0-9]+]] = "tile.make_range"
        CHECK:       %[[FIVE:[0-9]+]] = "tile.splat"(%c5_i32)
        CHECK-NEXT:  %[[A:[0-9]+]] = arith.muli %[[OFFS]], %[[FIVE]] : tensor<64xi32>
        CHECK-NEXT:  %[[ONE:[0-9]+]] = "tile.splat"(%c1_i32)
        CHECK-NEXT:  %[[B:[0-9]+]] = arith.addi %[[OFFS]], %[[ONE]] : tensor<64xi32>
        CHECK:       %[[BLOCK:[0-9]+]] = "tile.splat"(%c64_i32)
        CHECK-NEXT:  %[[SCALED:[0-9]+]] = arith.muli %[[OFFS]], %[[BLOCK]] : tensor<64xi32>
        CHECK:       %[[TWO:[0-9]+]] = "tile.splat"(%c2_i32)
        CHECK-NEXT:  %[[C:[0-9]+]] = arith.muli %[[SCALED]], %[[TWO]] : tensor<64xi32>
        CHECK:       %[[AB:[0-9]+]] = arith.addi %[[A]], %[[B]]
        CHECK-NEXT:  %[[ABC:[0-9]+]] = arith.addi %[[AB]], %[[C]]
        CHECK-NEXT:  "tile.store"(%{{[0-9]+}}, %[[ABC]])
    """, "--implicit-check-not=func.call", "--implicit-check-not=func.func")


# ----------------------------------------------------------------------------- operators


@tilec.jit
def clamp_window(x_ptr, out_ptr, lo, BLOCK: tl.constexpr):
    offs = tl.arange(0, max(BLOCK, 16))
    x = tl.load(x_ptr + offs)
    clamped = max(min(x, 4.0), lo, 0.5)
    inside = 0 < offs < 10
    tl.store(out_ptr + offs, clamped.to(tl.float16), mask=inside)


def test_python_min_max_chained_comparisons_and_a_cast():
    kernel = compile_to_cubin(clamp_window, {"x_ptr": "*fp32", "out_ptr": "*fp16", "lo": "fp32"}, {"BLOCK": 8})
    # max(BLOCK, 16) folds to 16; min/max on tensors are minnumf/maxnumf, as tl.minimum/tl.maximum;
    # 0 < offs < 10 is (0 < offs) & (offs < 10).
    filecheck(kernel.asm["ttir"], """
        CHECK:      %[[OFFS:[0-9]+]] = "tile.make_range"() {end = 16 : i32, start = 0 : i32}
        CHECK:      %[[X:[0-9]+]] = "tile.load"
        CHECK:      %[[LOW:[0-9]+]] = arith.minnumf %[[X]], %{{[0-9]+}} : tensor<16xf32>
        CHECK:      %[[LOS:[0-9]+]] = "tile.splat"(%arg2) : (f32) -> tensor<16xf32>
        CHECK-NEXT: %[[MID:[0-9]+]] = arith.maxnumf %[[LOW]], %[[LOS]] : tensor<16xf32>
        CHECK:      %[[CLAMPED:[0-9]+]] = arith.maxnumf %[[MID]], %{{[0-9]+}} : tensor<16xf32>
        CHECK:      %[[ABOVE:[0-9]+]] = arith.cmpi sgt, %[[OFFS]], %{{[0-9]+}} : tensor<16xi32>
        CHECK:      %[[BELOW:[0-9]+]] = arith.cmpi slt, %[[OFFS]], %{{[0-9]+}} : tensor<16xi32>
        CHECK-NEXT: %[[INSIDE:[0-9]+]] = arith.andi %[[ABOVE]], %[[BELOW]] : tensor<16xi1>
        CHECK:      %[[HALF:[0-9]+]] = arith.truncf %[[CLAMPED]] : tensor<16xf32> to tensor<16xf16>
        CHECK-NEXT: "tile.store"(%{{[0-9]+}}, %[[HALF]], %[[INSIDE]])
    """)


@tilec.jit
def convert(src_ptr, dst_ptr, BLOCK: tl.constexpr, DTYPE: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs).to(DTYPE))


CASTS = [
    ("fp32", "fp16", "arith.truncf %[[X]] : tensor<128xf32> to tensor<128xf16>"),
    ("fp16", "fp32", "arith.extf %[[X]] : tensor<128xf16> to tensor<128xf32>"),
    ("fp32", "i32", "arith.fptosi %[[X]] : tensor<128xf32> to tensor<128xi32>"),
    ("i32", "fp32", "arith.sitofp %[[X]] : tensor<128xi32> to tensor<128xf32>"),
    ("u32", "fp32", "arith.uitofp %[[X]] : tensor<128xi32> to tensor<128xf32>"),
    ("i64", "i32", "arith.trunci %[[X]] : tensor<128xi64> to tensor<128xi32>"),
    ("i8", "i32", "arith.extsi %[[X]] : tensor<128xi8> to tensor<128xi32>"),
    ("u8", "i32", "arith.extui %[[X]] : tensor<128xi8> to tensor<128xi32>"),
    ("fp32", "i1", "arith.cmpf une, %[[X]], %{{[0-9]+}} : tensor<128xf32>"),
]


@pytest.mark.parametrize("src, dst, conversion", CASTS, ids=[f"{src}-to-{dst}" for src, dst, _ in CASTS])
def test_to_casts(src, dst, conversion):
    kernel = compile_to_cubin(convert, {"src_ptr": f"*{src}", "dst_ptr": f"*{dst}"},
                              {"BLOCK": 128, "DTYPE": dtype_from_signature(dst)})
    filecheck(kernel.asm["ttir"], f"""
        CHECK:      %[[X:[0-9]+]] = "tile.load"
        CHECK:      %[[Y:[0-9]+]] = {conversion}
        CHECK-NEXT: "tile.store"(%{{{{[0-9]+}}}}, %[[Y]])
    """)


def test_fp8_to_fp8_goes_through_fp16_and_saturates():
    kernel = compile_to_cubin(convert, {"src_ptr": "*fp8e5", "dst_ptr": "*fp8e4nv"},
                              {"BLOCK": 128, "DTYPE": tl.float8e4nv})
    filecheck(kernel.asm["ttir"], """
        CHECK: %[[X:[0-9]+]] = "tile.load"
        CHECK: %[[H:[0-9]+]] = "tile.fp_to_fp"(%[[X]]) : (tensor<128xf8E5M2>) -> tensor<128xf16>
        CHECK: "tile.fp_to_fp"(%[[H]]) : (tensor<128xf16>) -> tensor<128xf8E4M3FN>
    """)
    filecheck(kernel.asm["ptx"], """
        CHECK: cvt.rn.f16x2.e5m2x2
        CHECK: cvt.rn.satfinite.e4m3x2.f32
    """)


@tilec.jit
def fp8_constant(dst_ptr, BLOCK: tl.constexpr, DTYPE: tl.constexpr):
    tl.store(dst_ptr + tl.arange(0, BLOCK), tl.full([BLOCK], 1.5, DTYPE).to(tl.float32))


def test_fp8_constants_and_conversions_are_not_folded():
    """An fp8 constant is its byte, bitcast by a tile op, and conversions are tile.fp_to_fp:
    MLIR's folders would round by their own rules (and read f8E4M3B11FNUZ, which stands for
    fp8e4b15, with bias 11: 1.5 is byte 0x7C, which they would read as 24.0)."""
    kernel = compile_to_cubin(fp8_constant, {"dst_ptr": "*fp32"}, {"BLOCK": 128, "DTYPE": tl.float8e4b15})
    filecheck(kernel.asm["ttir"], """
        CHECK: %[[C:.+]] = arith.constant 124 : i8
        CHECK: %[[F:[0-9]+]] = "tile.bitcast"(%[[C]]) : (i8) -> f8E4M3B11FNUZ
        CHECK: "tile.fp_to_fp"(%{{[0-9]+}}) : (tensor<128xf8E4M3B11FNUZ>) -> tensor<128xf32>
        CHECK-NOT: arith.extf
    """)
    assert "e4m3" not in kernel.asm["ptx"]  # converted in software, not by an fp8 instruction


def test_fp8_conversions_need_sm89():
    with pytest.raises(CompilationError, match=r"(?s)\.to\(DTYPE\).*converting fp32 to fp8e4nv needs an sm_89 or newer GPU \(the target is sm_80\)"):
        tilec.compile(convert, signature={"src_ptr": "*fp32", "dst_ptr": "*fp8e4nv"},
                      constexprs={"BLOCK": 128, "DTYPE": tl.float8e4nv}, target="sm_80")


@tilec.jit
def sum_of_exps(x_ptr, out_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(out_ptr, x.exp().sum(axis=0))


def test_tensor_methods_mirror_the_builtins():
    kernel = compile_to_cubin(sum_of_exps, {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {"BLOCK": 64})
    filecheck(kernel.asm["ttir"], """
        CHECK: %[[E:[0-9]+]] = math.exp
        CHECK: "tile.reduce"(%[[E]])
        CHECK: arith.addf
    """)


# ----------------------------------------------------------------------------- ttgir


@tilec.jit
def row_max(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)
    x = tl.load(x_ptr + rows[:, None] * N + tl.arange(0, N)[None, :])
    tl.store(out_ptr + rows, tl.max(x, axis=1))


def test_ttgir_has_num_warps_and_a_sliced_layout_for_the_reduction():
    kernel = compile_to_cubin(row_max, {"x_ptr": "*fp32:16", "out_ptr": "*fp32:16"}, {"M": 64, "N": 64},
                              num_warps=8)
    filecheck(kernel.asm["ttgir"], """
        CHECK-DAG:  #[[ROWS:slice[0-9]+]] = #tilegpu.slice<{dim = 1 : i32, parent = #tilegpu.blocked<{{.*}}warpsPerCTA = array<i32: [[WARPS:.*]]>}>}>
        CHECK-DAG:  #[[BLOCKED:blocked[0-9]+]] = #tilegpu.blocked<{{.*}}warpsPerCTA = array<i32: [[WARPS]]>}>
        CHECK:      module attributes {"tilegpu.num-warps" = 8 : i32, tilegpu.target = "sm_90"}
        CHECK:      %[[X:[0-9]+]] = "tile.load"{{.*}} -> tensor<64x64xf32, #[[BLOCKED]]>
        CHECK:      "tile.reduce"(%[[X]])
        CHECK:      }) {axis = 1 : i32, {{.*}}} : (tensor<64x64xf32, #[[BLOCKED]]>) -> tensor<64xf32, #[[ROWS]]>
    """)


@tilec.jit
def half_divide(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) / 2)


def test_half_precision_division_happens_in_fp32():
    # As in Triton: PTX has no fp16 division, so `/` widens fp16 operands to fp32.
    kernel = compile_to_cubin(half_divide, {"x_ptr": "*fp16", "out_ptr": "*fp32"}, {"BLOCK": 64})
    filecheck(kernel.asm["ttir"], """
        CHECK: %[[X:[0-9]+]] = "tile.load"
        CHECK: %[[W:[0-9]+]] = arith.extf %[[X]] : tensor<64xf16> to tensor<64xf32>
        CHECK: arith.divf %[[W]], %{{[0-9]+}} : tensor<64xf32>
    """)


@tilec.jit
def store_hint_on_load(x_ptr, out_ptr):
    tl.store(out_ptr, tl.load(x_ptr, cache_modifier=".wb"))


def test_store_cache_modifier_on_a_load_is_a_user_error():
    with pytest.raises(CompilationError, match=r"load's cache_modifier '\.wb' is not one of"):
        frontend_ir(store_hint_on_load, {"x_ptr": "*fp32", "out_ptr": "*fp32"})

"""An interpreter of a kernel's LLVM IR for one block of threads on the CPU: enough to run
tilec's lowering of layout conversions, reductions and scans (and the loops, masks and
stores around them) without a GPU (tests/codegen/test_convert_layout_vectorized.py,
test_cross_warp_reduce_slots.py, test_scan_lowering_runs.py).

It runs the threads of the block over a byte-addressed global and shared memory, with
integer and vector arithmetic, casts, getelementptr, basic blocks, branches and phis
(loops, a branch around stores), float arithmetic rounded to the element type, warp shuffles (`shfl.sync` idx, up, down
and bfly, as PTX defines them, clamp and segment mask included), predicated global loads
and stores written as inline assembly, and several pointer parameters. Each thread runs
until it reaches a shuffle or a barrier; when every thread has, the shuffle is answered
warp by warp (or the barrier released) and they go on. A thread that reaches another
synchronisation point than the others, or an instruction the interpreter does not know,
fails the run loudly."""
from __future__ import annotations

import re
import struct
from typing import Iterator

import numpy as np


# ----------------------------------------------------------------------------- values
# Types as tuples: ("int", bits), ("float",), ("half",), ("bfloat",), ("double",),
# ("ptr",), ("vec", count, element type).


def parse_type(text):
    text = text.strip()
    m = re.fullmatch(r"<(\d+) x (.+)>", text)
    if m:
        return ("vec", int(m.group(1)), parse_type(m.group(2)))
    if text.startswith("ptr"):
        return ("ptr",)
    if text in ("half", "float", "double", "bfloat"):
        return (text,)
    m = re.fullmatch(r"i(\d+)", text)
    if m:
        return ("int", int(m.group(1)))
    raise ValueError(f"type {text!r}")


def nbytes(ty):
    if ty[0] == "vec":
        return ty[1] * nbytes(ty[2])
    if ty[0] == "int":
        return max(1, ty[1] // 8)
    return {"half": 2, "bfloat": 2, "float": 4, "double": 8, "ptr": 8}[ty[0]]


def to_bytes(value, ty):
    if ty[0] == "vec":
        return b"".join(to_bytes(v, ty[2]) for v in value)
    if ty[0] == "int":
        return int(value & ((1 << (8 * nbytes(ty))) - 1)).to_bytes(nbytes(ty), "little")
    if ty[0] == "half":
        return np.float16(value).tobytes()
    if ty[0] == "float":
        return np.float32(value).tobytes()
    if ty[0] == "double":
        return struct.pack("<d", value)
    if ty[0] == "ptr":
        return int(value).to_bytes(8, "little")
    raise ValueError(ty)


def from_bytes(data, ty):
    if ty[0] == "vec":
        n = nbytes(ty[2])
        return [from_bytes(data[i * n:(i + 1) * n], ty[2]) for i in range(ty[1])]
    if ty[0] == "int":
        return int.from_bytes(data, "little") & ((1 << ty[1]) - 1)
    if ty[0] == "half":
        return np.frombuffer(data, np.float16)[0]
    if ty[0] == "float":
        return np.frombuffer(data, np.float32)[0]
    if ty[0] == "double":
        return struct.unpack("<d", data)[0]
    if ty[0] == "ptr":
        return int.from_bytes(data, "little")


def signed(v, bits):
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


INT_OPS = {
    "add": lambda a, b, w: a + b, "sub": lambda a, b, w: a - b, "mul": lambda a, b, w: a * b,
    "and": lambda a, b, w: a & b, "or": lambda a, b, w: a | b, "xor": lambda a, b, w: a ^ b,
    "shl": lambda a, b, w: a << b, "lshr": lambda a, b, w: (a & ((1 << w) - 1)) >> b,
    "ashr": lambda a, b, w: signed(a, w) >> b,
    "udiv": lambda a, b, w: (a & ((1 << w) - 1)) // b, "urem": lambda a, b, w: (a & ((1 << w) - 1)) % b,
}


PARAM_STRIDE = 1 << 40  # pointer parameter k points at (k + 1) << 40

_FLOAT = {"float": np.float32, "half": np.float16, "double": np.float64}


def param_base(k: int) -> int:
    return (k + 1) * PARAM_STRIDE


class Memory:
    """Global memory as bytes at addresses; shared memory as another such map."""

    def __init__(self):
        self.global_bytes: dict[int, int] = {}
        self.shared: dict[int, int] = {}
        # every shared access: (thread, (synchronisation interval, instruction, how many
        # times the thread ran it in that interval), address, bytes)
        self.shared_accesses: list[tuple[int, tuple, int, int]] = []

    def write(self, space: dict, address: int, data: bytes) -> None:
        for i, b in enumerate(data):
            space[address + i] = b

    def read(self, space: dict, address: int, n: int) -> bytes:
        missing = [address + i for i in range(n) if address + i not in space]
        if space is self.global_bytes and missing:
            raise AssertionError(f"global load of {n} bytes at {address:#x}: bytes never written")
        return bytes(space.get(address + i, 0xCD) for i in range(n))

    def shared_wavefronts(self) -> dict[tuple, int]:
        """Per warp-wide shared access (the same instruction, the same time, by the lanes
        of one warp): how many passes the banks need (1: no conflict). Lanes reading
        the same word share it; 4-byte banks, 32 of them, at most 128 bytes a pass."""
        groups: dict[tuple, list[tuple[int, int]]] = {}
        for tid, when, address, size in self.shared_accesses:
            groups.setdefault((tid // 32, when), []).append((address, size))
        out = {}
        for key, accesses in groups.items():
            size = max(s for _, s in accesses)
            lanes_per_pass = max(1, 128 // max(size, 4))
            passes = 0
            for start in range(0, len(accesses), lanes_per_pass):
                words_of_bank: dict[int, set[int]] = {}
                for address, n in accesses[start:start + lanes_per_pass]:
                    for word in range(address // 4, (address + max(n, 1) - 1) // 4 + 1):
                        words_of_bank.setdefault(word % 32, set()).add(word)
                passes += max(len(w) for w in words_of_bank.values())
            out[key] = passes
        return out

    def put_array(self, param: int, array: np.ndarray) -> None:
        self.write(self.global_bytes, param_base(param), array.tobytes())

    def get_array(self, param: int, like: np.ndarray) -> np.ndarray:
        data = bytes(self.global_bytes.get(param_base(param) + i, 0xFF) for i in range(like.nbytes))
        return np.frombuffer(data, like.dtype).reshape(like.shape).copy()


def _blocks(llir: str) -> tuple[list[str], dict[str, list[str]], str]:
    """The kernel's parameters, its basic blocks by label, and the entry block's label."""
    start = llir.index("define ptx_kernel")
    header = llir[start:llir.index("{", start)]
    params = re.findall(r"(%\d+)(?=[,)])", header)
    body = llir[llir.index("{", start) + 1:llir.index("\n}", start)]
    entry = f"%{len(params)}"
    blocks: dict[str, list[str]] = {entry: []}
    current = entry
    for raw in body.splitlines():
        # drop LLVM's comments ("; preds = ..."), but not the ';' inside inline assembly
        line = raw.strip() if "asm" in raw else raw.split(";", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"(\d+):", line)
        if m:
            current = f"%{m.group(1)}"
            blocks[current] = []
            continue
        blocks[current].append(line)
    return params, blocks, entry


def _operand(env: dict, text: str, ty=None):
    text = text.strip()
    if text.startswith("%"):
        return env[text]
    if text in ("poison", "undef", "zeroinitializer"):
        return [0] * ty[1] if ty and ty[0] == "vec" else 0
    if text in ("true", "false"):
        return int(text == "true")
    if text.startswith("0xH"):
        return np.frombuffer(int(text[3:], 16).to_bytes(2, "little"), np.float16)[0]
    if text.startswith("0x"):  # LLVM prints float constants as the double's bits
        value = struct.unpack("<d", int(text[2:], 16).to_bytes(8, "little"))[0]
        return np.float32(value) if ty is None or ty == ("float",) else value
    if text.startswith("<"):  # a vector constant: <float 1.0, float 2.0>
        return [_operand(env, part.split()[-1]) for part in text.strip("<>").split(",")]
    try:
        return int(text)
    except ValueError:
        return np.float32(float(text)) if ty is None or ty == ("float",) else float(text)


def _shared_address(env: dict, text: str) -> int:
    """A shared-memory address operand: a value, the buffer itself, or a constant
    getelementptr into it."""
    text = text.strip()
    if text.startswith("%"):
        return env[text]
    if text.startswith("@"):
        return 0
    m = re.fullmatch(r"getelementptr (?:inbounds )?\((\w+), ptr addrspace\(3\) @\w+, i\d+ (-?\d+)\)", text)
    if not m:
        raise NotImplementedError(text)
    return int(m.group(2)) * nbytes(parse_type(m.group(1)))


def _float(value, ty):
    return _FLOAT[ty[0]](value)


def _split_args(text: str) -> list[str]:
    """Top-level comma split (commas inside <...>, [...], {...} or (...) kept)."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "<[{(":
            depth += 1
        elif ch in ">]})":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def _shuffle(kind: str, values: list, sources: list[int], clamps: list[int]) -> list:
    """shfl.sync over one warp (every lane taking part), as PTX specifies it."""
    out = []
    for lane in range(len(values)):
        b, c = sources[lane] & 31, clamps[lane]
        segmask, cval = (c >> 8) & 31, c & 31
        max_lane = (lane & segmask) | (cval & ~segmask & 31)
        min_lane = lane & segmask
        if kind == "up":
            j = lane - b
            ok = j >= max_lane
        elif kind == "down":
            j = lane + b
            ok = j <= max_lane
        elif kind == "bfly":
            j = lane ^ b
            ok = j <= max_lane
        else:
            j = min_lane | (b & ~segmask & 31)
            ok = j <= max_lane
        out.append(values[j] if ok and 0 <= j < len(values) else values[lane])
    return out


def _asm(text: str, constraints: str, args: list, memory: Memory, result_types: list):
    """The inline assembly tilec writes for global memory: predicated ld/st.global (scalar
    or vector), with tied defaults and plain movs."""
    cons = [c.strip() for c in constraints.split(",")]
    outputs = [c for c in cons if c.startswith("=")]
    inputs = [c for c in cons if not c.startswith("=")]
    regs: dict[int, object] = {}
    for k, c in enumerate(inputs):
        regs[len(outputs) + k] = args[k][1]
        if c.isdigit():  # tied to an output: its value before the asm
            regs[int(c)] = args[k][1]
    for statement in [s.strip() for s in text.replace("\\0A", ";").replace("\\09", " ").split(";") if s.strip()]:
        m = re.match(r"@(!?)\$(\d+)\s+(.*)", statement)
        if m:
            taken = bool(regs[int(m.group(2))])
            if taken == bool(m.group(1)):
                continue
            statement = m.group(3)
        op = statement.split()[0]
        rest = statement[len(op):].strip()
        if op.startswith("mov"):
            dst, src = [x.strip() for x in rest.split(",")]
            regs[int(dst[1:])] = regs[int(src[1:])]
            continue
        vm = re.match(r"(ld|st)\.global(?:\.[a-z]+)*?(?:\.v(\d))?\.b(\d+)$", op)
        if not vm:
            raise NotImplementedError(statement)
        count, width = int(vm.group(2) or 1), int(vm.group(3)) // 8
        if vm.group(1) == "ld":
            dsts, addr = re.match(r"\{?([^}\[]*?)\}?,\s*\[\$(\d+)\]", rest).groups()
            address = regs[int(addr)]
            for i, d in enumerate(dsts.split(",")):
                data = memory.read(memory.global_bytes, address + i * width, width)
                regs[int(d.strip()[1:])] = int.from_bytes(data, "little")
        else:
            addr, srcs = re.match(r"\[\$(\d+)\],\s*\{?([^}]*)\}?", rest).groups()
            address = regs[int(addr)]
            for i, s in enumerate(srcs.split(",")):
                index = int(s.strip()[1:])
                value, ty = regs[index], (args[index - len(outputs)][0] if index >= len(outputs) else ("int", 32))
                memory.write(memory.global_bytes, address + i * width, to_bytes(value, ty)[:width])
            assert len(srcs.split(",")) == count
    results = []
    for k, ty in enumerate(result_types):
        value = regs.get(k, 0)
        results.append(from_bytes(to_bytes(value, ("int", 32)), ty) if ty[0] != "int" else value)
    return results


def _thread(params, blocks, entry, tid: int, ctaid: int, memory: Memory, scalars: dict) -> Iterator:
    env: dict = {}
    for k, p in enumerate(params):
        env[p] = scalars.get(k, param_base(k))
    label, previous = entry, None
    interval, runs = 0, {}  # synchronisation points passed; per instruction, runs since

    def when(instruction) -> tuple:
        runs[instruction] = runs.get(instruction, 0) + 1
        return interval, instruction, runs[instruction]

    while True:
        jumped = False
        for position, line in enumerate(blocks[label]):
            m = re.match(r"(%[\w.]+) = (.*)", line)
            dest, rhs = (m.group(1), m.group(2)) if m else (None, line)
            rhs = re.sub(r",\s*!\w+ !\d+", "", rhs)
            words = rhs.split()
            op = words[0]
            if op == "ret":
                return
            if op == "br":
                if words[1] == "label":
                    target = words[2]
                else:
                    cond, yes, no = [x.strip() for x in rhs[len("br i1"):].split(",")]
                    target = (yes if _operand(env, cond) else no).split()[-1]
                previous, label, jumped = label, target, True
                break
            if op == "phi":
                ty = parse_type(words[1])
                for value, source in re.findall(r"\[\s*([^,]+),\s*(%\w+)\s*\]", rhs):
                    if source == previous:
                        env[dest] = _operand(env, value, ty)
                        break
                else:
                    raise AssertionError(f"phi without an entry for {previous}: {line}")
                continue
            if op in INT_OPS or op in ("sdiv", "srem"):
                rest = [w for w in words[1:] if w not in ("nuw", "nsw", "disjoint", "exact")]
                ty = parse_type(rest[0])
                a, b = [_operand(env, x) for x in " ".join(rest[1:]).split(",")]
                w = ty[1]
                if op == "sdiv":
                    q = abs(signed(a, w)) // abs(signed(b, w))
                    value = q if (signed(a, w) < 0) == (signed(b, w) < 0) else -q
                elif op == "srem":
                    r = abs(signed(a, w)) % abs(signed(b, w))
                    value = r if signed(a, w) >= 0 else -r
                else:
                    value = INT_OPS[op](a, b, w)
                env[dest] = value & ((1 << w) - 1)
            elif op in ("fadd", "fsub", "fmul", "fdiv"):
                rest = [w for w in words[1:] if w not in ("fast", "contract", "nnan", "ninf", "nsz", "arcp", "afn",
                                                           "reassoc")]
                ty = parse_type(rest[0])
                a, b = [_float(_operand(env, x, ty), ty) for x in " ".join(rest[1:]).split(",")]
                with np.errstate(all="ignore"):
                    env[dest] = {"fadd": a + b, "fsub": a - b, "fmul": a * b, "fdiv": a / b}[op]
            elif op == "fneg":
                ty = parse_type(words[1])
                env[dest] = -_float(_operand(env, words[2], ty), ty)
            elif op == "icmp":
                pred, ty = words[1], parse_type(words[2])
                a, b = [_operand(env, x) for x in " ".join(words[3:]).split(",")]
                w = ty[1]
                env[dest] = int({"eq": a == b, "ne": a != b, "ult": a < b, "slt": signed(a, w) < signed(b, w),
                                 "ugt": a > b, "sgt": signed(a, w) > signed(b, w), "uge": a >= b, "ule": a <= b,
                                 "sge": signed(a, w) >= signed(b, w), "sle": signed(a, w) <= signed(b, w)}[pred])
            elif op == "fcmp":
                pred, ty = words[1], parse_type(words[2])
                a, b = [_float(_operand(env, x, ty), ty) for x in " ".join(words[3:]).split(",")]
                unordered = bool(np.isnan(a) or np.isnan(b))
                base = {"eq": a == b, "ne": a != b, "lt": a < b, "gt": a > b, "le": a <= b, "ge": a >= b}
                if pred in ("true", "false"):
                    env[dest] = int(pred == "true")
                elif pred == "ord":
                    env[dest] = int(not unordered)
                elif pred == "uno":
                    env[dest] = int(unordered)
                else:
                    env[dest] = int(bool(base[pred[1:]]) or (pred[0] == "u" and unordered))
            elif op == "select":
                parts = _split_args(rhs[len("select"):])
                c = _operand(env, parts[0].split()[-1])
                ty = parse_type(parts[1].rsplit(" ", 1)[0])
                pick = parts[1] if c else parts[2]
                env[dest] = _operand(env, pick.rsplit(" ", 1)[1], ty)
            elif op == "getelementptr":
                m = re.match(r"getelementptr (?:inbounds )?(?:nuw )?([^,]+), ptr(?: addrspace\(\d\))? ([^,]+), "
                             r"i(\d+) (\S+)$", rhs)
                if not m:
                    raise NotImplementedError(line)
                elem, base, index = parse_type(m.group(1)), m.group(2), _operand(env, m.group(4))
                base_value = 0 if base.startswith("@") else _operand(env, base)
                env[dest] = base_value + signed(index, int(m.group(3))) * nbytes(elem)
            elif op == "load":
                m = re.match(r"load ([^,]+), ptr addrspace\(3\) (.+?)(?:, align \d+)?$", rhs)
                if not m:
                    raise NotImplementedError(line)
                ty = parse_type(m.group(1))
                address = _shared_address(env, m.group(2))
                memory.shared_accesses.append((tid, when((label, position)), address, nbytes(ty)))
                env[dest] = from_bytes(memory.read(memory.shared, address, nbytes(ty)), ty)
            elif op == "store":
                m = re.match(r"store (.+?) (\S+), ptr addrspace\(3\) (.+?)(?:, align \d+)?$", rhs)
                if not m:
                    raise NotImplementedError(line)
                ty = parse_type(m.group(1))
                address = _shared_address(env, m.group(3))
                memory.shared_accesses.append((tid, when((label, position)), address, nbytes(ty)))
                memory.write(memory.shared, address, to_bytes(_operand(env, m.group(2), ty), ty))
            elif op == "insertelement":
                m = re.match(r"insertelement (<[^>]+>) (\S+), (\S+) (\S+), i\d+ (\S+)", rhs)
                ty = parse_type(m.group(1))
                vec = list(_operand(env, m.group(2), ty))
                vec[_operand(env, m.group(5))] = _operand(env, m.group(4), ty[2])
                env[dest] = vec
            elif op == "extractelement":
                m = re.match(r"extractelement (<[^>]+>) (\S+), i\d+ (\S+)", rhs)
                env[dest] = _operand(env, m.group(2))[_operand(env, m.group(3))]
            elif op == "extractvalue":
                m = re.match(r"extractvalue \{[^}]*\} (%\w+), (\d+)", rhs)
                env[dest] = env[m.group(1)][int(m.group(2))]
            elif op in ("bitcast", "sitofp", "uitofp", "trunc", "sext", "zext", "fptosi", "fpext", "fptrunc",
                        "ptrtoint", "inttoptr"):
                m = re.match(r"\w+ (.+?) (\S+) to (.+)", rhs)
                src_ty, dst_ty = parse_type(m.group(1)), parse_type(m.group(3))
                value = _operand(env, m.group(2), src_ty)
                if op == "bitcast":
                    env[dest] = from_bytes(to_bytes(value, src_ty), dst_ty)
                elif op in ("sitofp", "uitofp"):
                    env[dest] = _float(signed(value, src_ty[1]) if op == "sitofp" else value, dst_ty)
                elif op == "trunc":
                    env[dest] = value & ((1 << dst_ty[1]) - 1)
                elif op == "sext":
                    env[dest] = signed(value, src_ty[1]) & ((1 << dst_ty[1]) - 1)
                elif op in ("zext", "ptrtoint", "inttoptr"):
                    env[dest] = value
                elif op == "fptosi":
                    env[dest] = int(value) & ((1 << dst_ty[1]) - 1)
                else:
                    env[dest] = _float(value, dst_ty)
            elif op in ("call", "tail"):
                if "sreg.tid.x" in rhs:
                    env[dest] = tid
                elif "sreg.ctaid.x" in rhs:
                    env[dest] = ctaid
                elif re.search(r"sreg\.(ctaid|nctaid)\.[yz]", rhs):
                    env[dest] = 0
                elif "barrier" in rhs:
                    yield ("barrier", None)
                    interval, runs = interval + 1, {}
                elif "shfl.sync" in rhs:
                    m = re.search(r"shfl\.sync\.(idx|up|down|bfly)\.(f32|i32)\((.*)\)$", rhs)
                    args = [a.rsplit(" ", 1)[1] for a in _split_args(m.group(3))]
                    ty = ("float",) if m.group(2) == "f32" else ("int", 32)
                    env[dest] = yield ("shfl", (m.group(1), _operand(env, args[1], ty), _operand(env, args[2]),
                                                _operand(env, args[3])))
                    interval, runs = interval + 1, {}
                elif "asm" in rhs:
                    m = re.search(r'asm sideeffect "([^"]*)", "([^"]*)"\((.*)\)$', rhs)
                    args = [(parse_type(a.rsplit(" ", 1)[0]), _operand(env, a.rsplit(" ", 1)[1]))
                            for a in _split_args(m.group(3))]
                    rm = re.match(r"call (\{[^}]*\}|\S+) asm", rhs)
                    result = rm.group(1)
                    types = [] if result == "void" else [parse_type(t) for t in result.strip("{}").split(",")] \
                        if result.startswith("{") else [parse_type(result)]
                    values = _asm(m.group(1), m.group(2), args, memory, types)
                    if dest is not None:
                        env[dest] = values if result.startswith("{") else values[0]
                else:
                    raise NotImplementedError(line)
            else:
                raise NotImplementedError(line)
        if not jumped:
            raise AssertionError(f"block {label} ends without a branch")


def run(llir: str, threads: int, memory: Memory, ctaid: int = 0, scalars: dict | None = None) -> None:
    """Runs one block of the kernel in `llir` (`threads` threads, program id `ctaid`):
    pointer parameter k points at param_base(k) of `memory`, integer parameters take
    `scalars[k]`."""
    params, blocks, entry = _blocks(llir)
    memory.shared.clear()
    memory.shared_accesses.clear()
    gens = [_thread(params, blocks, entry, tid, ctaid, memory, scalars or {}) for tid in range(threads)]
    pending = [None] * threads
    alive = [True] * threads
    while any(alive):
        events = []
        for tid, gen in enumerate(gens):
            if not alive[tid]:
                events.append(None)
                continue
            try:
                events.append(gen.send(pending[tid]))  # None starts a thread
            except StopIteration:
                alive[tid] = False
                events.append(None)
        kinds = {e[0] for e in events if e is not None}
        if not kinds:
            break
        if len(kinds) > 1 or any(e is None for e in events):
            raise AssertionError(f"threads reached different synchronisation points: {kinds}, "
                                 f"{sum(e is None for e in events)} finished")
        if kinds == {"barrier"}:
            pending = [0] * threads  # what a barrier yields back (unused)
            continue
        pending = [None] * threads
        for warp in range(0, threads, 32):
            lanes = events[warp:warp + 32]
            kind = {e[1][0] for e in lanes}
            if len(kind) != 1:
                raise AssertionError(f"one warp's lanes shuffle differently: {kind}")
            values = _shuffle(kind.pop(), [e[1][1] for e in lanes], [e[1][2] for e in lanes],
                              [e[1][3] for e in lanes])
            for lane, value in enumerate(values):
                pending[warp + lane] = value

"""A small interpreter of straight-line LLVM IR, enough to run tilec's lowering of a
layout conversion on the CPU (tests/codegen/test_convert_layout_vectorized.py).

It runs every thread of one block, all threads up to a barrier before any goes past it,
over a byte-addressed shared memory, and records the global stores the kernel makes
(tilec writes global memory through inline `st.global` assembly). It knows the handful
of instructions those kernels use (integer arithmetic, casts, getelementptr, vector
insert/extract, shared loads and stores, tid.x, barriers) and raises NotImplementedError
on anything else, so a kernel it cannot run fails loudly instead of passing."""
import re
import struct

import numpy as np

GLOBAL_BASE = 1 << 40


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


def run(llir: str, threads: int) -> list[tuple[int, bytes]]:
    """Runs the kernel of `llir` (its first parameter a global pointer at GLOBAL_BASE) with
    `threads` threads; returns the (address, bytes) of every global store, in order."""
    body = llir[llir.index("define ptx_kernel"):]
    body = body[body.index("{") + 1:body.index("\n}")]
    lines = [l.strip() for l in body.splitlines() if l.strip() and not l.strip().endswith(":")]
    shared: dict[int, int] = {}
    stores: list[tuple[int, bytes]] = []
    # Split at barriers.
    steps, current = [], []
    for line in lines:
        if "barrier" in line:
            steps.append(current)
            current = []
        else:
            current.append(line)
    steps.append(current)
    envs = [{"%0": GLOBAL_BASE} for _ in range(threads)]
    for step in steps:
        for tid in range(threads):
            for line in step:
                execute(line, envs[tid], tid, shared, stores)
    return stores


def operand(env, text, ty=None):
    text = text.strip()
    if text.startswith("%"):
        return env[text]
    if text in ("poison", "undef", "zeroinitializer"):
        return [0] * ty[1] if ty and ty[0] == "vec" else 0
    if text in ("true", "false"):
        return int(text == "true")
    if text.startswith("0xH"):
        return np.frombuffer(int(text[3:], 16).to_bytes(2, "little"), np.float16)[0]
    if text.startswith("0x"):
        return np.float32(struct.unpack("<d", int(text[2:], 16).to_bytes(8, "little"))[0])
    try:
        return int(text)
    except ValueError:
        return float(text)


INT_OPS = {
    "add": lambda a, b, w: a + b, "sub": lambda a, b, w: a - b, "mul": lambda a, b, w: a * b,
    "and": lambda a, b, w: a & b, "or": lambda a, b, w: a | b, "xor": lambda a, b, w: a ^ b,
    "shl": lambda a, b, w: a << b, "lshr": lambda a, b, w: (a & ((1 << w) - 1)) >> b,
    "ashr": lambda a, b, w: signed(a, w) >> b,
    "udiv": lambda a, b, w: (a & ((1 << w) - 1)) // b, "urem": lambda a, b, w: (a & ((1 << w) - 1)) % b,
}


def execute(line, env, tid, shared, stores):
    if line.startswith("ret"):
        return
    m = re.match(r"(%\w+) = (.*)", line)
    dest, rhs = (m.group(1), m.group(2)) if m else (None, line)
    rhs = re.sub(r",\s*!\w+ !\d+", "", rhs)
    words = rhs.split()
    op = words[0]
    if op in INT_OPS:
        rest = [w for w in words[1:] if w not in ("nuw", "nsw", "disjoint", "exact")]
        ty = parse_type(rest[0])
        a, b = " ".join(rest[1:]).split(",")
        width = ty[1]
        env[dest] = INT_OPS[op](operand(env, a), operand(env, b), width) & ((1 << width) - 1)
    elif op == "icmp":
        pred, ty = words[1], parse_type(words[2])
        a, b = " ".join(words[3:]).split(",")
        a, b = operand(env, a), operand(env, b)
        w = ty[1]
        env[dest] = int({"eq": a == b, "ne": a != b, "ult": a < b, "slt": signed(a, w) < signed(b, w),
                         "ugt": a > b, "sgt": signed(a, w) > signed(b, w), "uge": a >= b, "ule": a <= b,
                         "sge": signed(a, w) >= signed(b, w), "sle": signed(a, w) <= signed(b, w)}[pred])
    elif op == "select":
        parts = [p.strip() for p in rhs[len("select"):].split(",")]
        c = operand(env, parts[0].split()[-1])
        env[dest] = operand(env, parts[1].split()[-1]) if c else operand(env, parts[2].split()[-1])
    elif op == "getelementptr":
        m = re.match(r"getelementptr (?:inbounds )?(?:nuw )?([^,]+), ptr(?: addrspace\(\d\))? ([^,]+), i(\d+) (\S+)", rhs)
        elem, base, index = parse_type(m.group(1)), m.group(2), operand(env, m.group(4))
        base_value = 0 if base.startswith("@") else operand(env, base)
        env[dest] = base_value + signed(index, int(m.group(3))) * nbytes(elem)
    elif op == "load":
        m = re.match(r"load ([^,]+), ptr addrspace\(3\) (%\w+)", rhs)
        ty = parse_type(m.group(1))
        address = operand(env, m.group(2))
        env[dest] = from_bytes(bytes(shared.get(address + i, 0xCD) for i in range(nbytes(ty))), ty)
    elif op == "store":
        m = re.match(r"store (.+) (\S+), ptr addrspace\(3\) (%\w+)", rhs)
        ty = parse_type(m.group(1))
        data = to_bytes(operand(env, m.group(2), ty), ty)
        address = operand(env, m.group(3))
        for i, b in enumerate(data):
            shared[address + i] = b
    elif op == "insertelement":
        m = re.match(r"insertelement (<[^>]+>) (\S+), (\S+) (\S+), i\d+ (\S+)", rhs)
        ty = parse_type(m.group(1))
        vec = list(operand(env, m.group(2), ty))
        vec[operand(env, m.group(5))] = operand(env, m.group(4))
        env[dest] = vec
    elif op == "extractelement":
        m = re.match(r"extractelement (<[^>]+>) (\S+), i\d+ (\S+)", rhs)
        env[dest] = operand(env, m.group(2))[operand(env, m.group(3))]
    elif op in ("bitcast", "sitofp", "trunc", "sext", "zext", "fptosi", "fpext", "fptrunc", "uitofp"):
        m = re.match(r"\w+ (.+) (\S+) to (.+)", rhs)
        src_ty, value, dst_ty = parse_type(m.group(1)), operand(env, m.group(2)), parse_type(m.group(3))
        if op == "bitcast":
            env[dest] = from_bytes(to_bytes(value, src_ty), dst_ty)
        elif op == "sitofp":
            env[dest] = signed(value, src_ty[1])
        elif op == "uitofp":
            env[dest] = value
        elif op == "trunc":
            env[dest] = value & ((1 << dst_ty[1]) - 1)
        elif op == "sext":
            env[dest] = signed(value, src_ty[1]) & ((1 << dst_ty[1]) - 1)
        elif op == "zext":
            env[dest] = value
        elif op == "fptosi":
            env[dest] = int(value) & ((1 << dst_ty[1]) - 1)
        else:
            env[dest] = float(value)
    elif op == "extractvalue":
        raise NotImplementedError(line)
    elif op == "call" or op == "tail":
        if "tid.x" in rhs:
            env[dest] = tid
        elif "asm" in rhs:
            m = re.search(r'asm sideeffect "([^"]*)", "([^"]*)"\((.*)\)$', rhs)
            text, args = m.group(1), [a.strip() for a in m.group(3).split(",")]
            values = [(parse_type(a.rsplit(" ", 1)[0]), operand(env, a.rsplit(" ", 1)[1])) for a in args]
            predicated = text.startswith("@")
            if predicated:
                pred_index = int(re.match(r"@\$(\d+)", text).group(1))
                if not values[pred_index][1]:
                    return
            sm = re.search(r"st\.global(?:\.v(\d))?\.b(\d+) \[\$0\], \{?([^;}]*)\}?;", text)
            if not sm:
                raise NotImplementedError(text)
            width = int(sm.group(2)) // 8
            data = b"".join(to_bytes(values[int(r.strip()[1:])][1], values[int(r.strip()[1:])][0])[:width]
                            for r in sm.group(3).split(","))
            stores.append((values[0][1], data))
        else:
            raise NotImplementedError(line)
    else:
        raise NotImplementedError(line)

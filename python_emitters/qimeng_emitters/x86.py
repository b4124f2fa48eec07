"""x86-64 vector ISA tables, a small AT&T assembly writer, and what the
x86-64 generators (sgemm.py, dotgemm.py, amx.py) share below their loop
nest (blis.py): strides as operands, register transposes, and the
epilogue's activations.

Per-ISA knowledge is data: one row per ISA.
"""

from dataclasses import dataclass

from .errors import RequestError
from .fields import float_bits
from .isa import CallingConvention, kernel_file
from .smooth import ABS_MASK, VALUES, Const, constants_used, program


@dataclass(frozen=True)
class VectorIsa:
    name: str          # "avx2", "avx512"
    reg_prefix: str    # "ymm", "zmm"
    lanes: int         # f32 lanes per register
    registers: int     # architectural vector registers
    features: tuple    # LLVM features the emitted code needs

    @property
    def vector_bytes(self):
        return self.lanes * 4

    def reg(self, index):
        if not 0 <= index < self.registers:
            raise RequestError(
                f"vector register {index} does not exist on {self.name}")
        return f"%{self.reg_prefix}{index}"

    def zero(self, index):
        """The instruction that zeroes register `index` (an xor with
        itself, which breaks the dependency on its old value)."""
        r = self.reg(index)
        op = "vpxord" if self.name == "avx512" else "vxorps"
        return f"{op} {r}, {r}, {r}"


ISAS = {
    "avx2": VectorIsa("avx2", "ymm", 8, 16, ("avx", "avx2", "fma")),
    "avx512": VectorIsa("avx512", "zmm", 16, 32, ("avx512f", "fma")),
}


SYSV = CallingConvention(
    "sysv", ("rdi", "rsi", "rdx", "rcx"),
    ("rbx", "r12", "r13", "r14", "r15"),
    ("rax", "rbx", "rcx", "rdx", "rsi", "rdi",
     "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"),
    ("dirflag", "fpsr", "flags"))


def lookup_isa(name):
    if name not in ISAS:
        raise RequestError(
            f"unknown isa {name!r}; expected one of " + ", ".join(sorted(ISAS)))
    return ISAS[name]


def isa_field(request):
    """The VectorIsa row named by the request's 'isa' field."""
    name = request.get("isa")
    if not isinstance(name, str):
        raise RequestError("field 'isa' must be a string such as \"avx2\"")
    return lookup_isa(name)


def xmm(index):
    return f"%xmm{index}"


class Asm:
    """Collects AT&T assembly lines.

    Labels are GNU numeric local labels (``10:`` / ``jb 10b``), so a body
    stays valid if a compiler ever duplicates the inline asm holding it.
    """

    def __init__(self):
        self.lines = []
        self._next_label = 10

    def label(self, comment):
        """Reserves a label number; place it with ``place``."""
        number = self._next_label
        self._next_label += 1
        return (number, comment)

    def place(self, label):
        number, comment = label
        self.lines.append(f"{number}:  # {comment}")

    def ins(self, text):
        self.lines.append("\t" + text)

    def comment(self, text):
        self.lines.append(f"\t# {text}")

    def raw(self, text):
        self.lines.append(text)

    def text(self):
        return "\n".join(self.lines) + "\n"


def fwd(label):
    return f"{label[0]}f"


def back(label):
    return f"{label[0]}b"


def emit_fault_entry(asm, fault):
    """The body's first lines for the test-only faults that stop it from
    running at all: a store through a null pointer, or a spin forever."""
    if fault == "segfault":
        asm.comment("fault segfault: store through a null pointer")
        asm.ins("xorl %eax, %eax")
        asm.ins("movl %eax, (%rax)")
    elif fault == "hang":
        spin = asm.label("fault hang: spin forever")
        asm.place(spin)
        asm.ins(f"jmp {back(spin)}")


def check_disp(value, what):
    """x86 displacements are signed 32-bit."""
    if not -(1 << 31) <= value < (1 << 31):
        raise RequestError(f"{what} offset {value} does not fit in 32 bits")
    return value


def function_text(kind, summary, symbol, body, request, workspace_bytes,
                  runtime_ld, clobbers, features, headers=(),
                  runtime_sizes=()):
    """The whole kernel file of an x86-64 kernel (isa.kernel_file) in the
    function form of SYSV: the callee-saved registers pushed, the body,
    popped, returned."""
    return kernel_file(
        comment="#", kind=kind, summary=summary, symbol=symbol,
        workspace_bytes=workspace_bytes, runtime_ld=runtime_ld,
        args=SYSV.args, clobbers=list(SYSV.gprs) + list(clobbers),
        features=features, request=request, align=5,
        prologue=[f"\tpushq\t%{reg}" for reg in SYSV.callee_saved],
        body=[body.rstrip("\n")],
        epilogue=[f"\tpopq\t%{reg}" for reg in reversed(SYSV.callee_saved)]
        + ["\tretq"],
        runtime_sizes=runtime_sizes, headers=headers)


def emit_transpose_16x16(asm):
    """zmm0..15 hold 16 rows of 16 floats; leaves their transpose in
    zmm0..15 (zmm j = element j of every row); zmm16..31 clobbered."""
    z = [f"%zmm{i}" for i in range(32)]
    # Pairs of rows interleaved within each 128-bit lane.
    for i in range(8):
        asm.ins(f"vunpcklps {z[2 * i + 1]}, {z[2 * i]}, {z[16 + 2 * i]}")
        asm.ins(f"vunpckhps {z[2 * i + 1]}, {z[2 * i]}, {z[17 + 2 * i]}")
    # Quads: zmm 4i + j holds, in lane L, rows 4i..4i+3 at k = 4L + j.
    for i in range(4):
        t = 16 + 4 * i
        asm.ins(f"vunpcklpd {z[t + 2]}, {z[t]}, {z[4 * i]}")
        asm.ins(f"vunpckhpd {z[t + 2]}, {z[t]}, {z[4 * i + 1]}")
        asm.ins(f"vunpcklpd {z[t + 3]}, {z[t + 1]}, {z[4 * i + 2]}")
        asm.ins(f"vunpckhpd {z[t + 3]}, {z[t + 1]}, {z[4 * i + 3]}")
    # Lanes: k = 4L + j gathers lane L of the four quads' register j.
    for j in range(4):
        v0, v1, w0, w1 = (z[16 + 4 * j + x] for x in range(4))
        asm.ins(f"vshuff32x4 $0x44, {z[4 + j]}, {z[j]}, {v0}")
        asm.ins(f"vshuff32x4 $0xee, {z[4 + j]}, {z[j]}, {v1}")
        asm.ins(f"vshuff32x4 $0x44, {z[12 + j]}, {z[8 + j]}, {w0}")
        asm.ins(f"vshuff32x4 $0xee, {z[12 + j]}, {z[8 + j]}, {w1}")
    for j in range(4):
        v0, v1, w0, w1 = (z[16 + 4 * j + x] for x in range(4))
        asm.ins(f"vshuff32x4 $0x88, {w0}, {v0}, {z[j]}")
        asm.ins(f"vshuff32x4 $0xdd, {w0}, {v0}, {z[4 + j]}")
        asm.ins(f"vshuff32x4 $0x88, {w1}, {v1}, {z[8 + j]}")
        asm.ins(f"vshuff32x4 $0xdd, {w1}, {v1}, {z[12 + j]}")


def emit_transpose_8x8(asm):
    """ymm0..7 hold 8 rows of 8 floats; leaves their transpose in ymm8..15
    (ymm8 + j = element j of every row), ymm0..7 clobbered."""
    y = [f"%ymm{i}" for i in range(16)]
    # Pairs of rows interleaved, then quads, then the 128-bit halves.
    for i in range(4):
        asm.ins(f"vunpcklps {y[2 * i + 1]}, {y[2 * i]}, {y[8 + 2 * i]}")
        asm.ins(f"vunpckhps {y[2 * i + 1]}, {y[2 * i]}, {y[9 + 2 * i]}")
    for half in range(2):
        a, b = 8 + 4 * half, 10 + 4 * half
        asm.ins(f"vshufps $0x44, {y[b]}, {y[a]}, {y[4 * half]}")
        asm.ins(f"vshufps $0xee, {y[b]}, {y[a]}, {y[4 * half + 1]}")
        asm.ins(f"vshufps $0x44, {y[b + 1]}, {y[a + 1]}, {y[4 * half + 2]}")
        asm.ins(f"vshufps $0xee, {y[b + 1]}, {y[a + 1]}, {y[4 * half + 3]}")
    for j in range(4):
        asm.ins(f"vperm2f128 $0x20, {y[4 + j]}, {y[j]}, {y[8 + j]}")
        asm.ins(f"vperm2f128 $0x31, {y[4 + j]}, {y[j]}, {y[12 + j]}")


class Stride:
    """A byte stride the code steps by: an immediate, or (runtime_ld) the
    workspace header slot that holds it, read as a memory operand."""

    def __init__(self, nbytes=None, slot=None):
        self.nbytes, self.slot = nbytes, slot

    @property
    def static(self):
        return self.slot is None

    def operand(self, what="stride"):
        if self.static:
            return f"${check_disp(self.nbytes, what)}"
        return f"{self.slot}(%rbx)"

    def add_to(self, asm, reg):
        """reg += stride."""
        asm.ins(f"addq {self.operand()}, {reg}")

    def multiply(self, asm, src, dst, what="stride"):
        """dst = src * stride (src may be dst)."""
        if self.static:
            asm.ins(f"imulq {self.operand(what)}, {src}, {dst}")
            return
        if src != dst:
            asm.ins(f"movq {src}, {dst}")
        asm.ins(f"imulq {self.slot}(%rbx), {dst}")

    def times(self, count, what="stride"):
        """count * stride as a displacement (static strides only)."""
        assert self.static
        return check_disp(count * self.nbytes, what)


def emit_relu_constants(asm, p):
    """relu's floor (relu_min, where not 0) and bound (relu_max), or leaky
    relu's slope (leaky_slope), as data in the body (jumped over), where
    the epilogue loads them from (%rip-relative: resolved by the
    assembler, no relocation). Sets p.relu_min_label, p.relu_max_label and
    (with a slope) p.leaky_slope_label (sgemm.py's, dotgemm.py's and
    amx.py's kernels)."""
    p.relu_min_label = p.relu_max_label = None
    constants = [(name, value) for name, value in (
        ("floor", p.relu_min), ("bound", p.relu_max),
        ("slope", p.leaky_slope)) if value is not None]
    if not constants:
        return
    over = asm.label("past relu's constants")
    asm.ins(f"jmp {fwd(over)}")
    asm.ins(".p2align 2")
    for name, value in constants:
        label = asm.label(("leaky relu's" if name == "slope" else "relu's")
                          + f" {name}, {value!r}")
        asm.place(label)
        asm.ins(f".long {float_bits(value):#010x}")
        setattr(p, {"floor": "relu_min_label", "bound": "relu_max_label",
                    "slope": "leaky_slope_label"}[name], label)
    asm.place(over)


#: Constants that x86's spelling of an op reads beyond its operands: neg
#: multiplies by -1, abs masks the sign.
SMOOTH_OP_CONSTANTS = {"neg": "minus_one", "abs": "abs_mask"}


def emit_smooth_constants(asm, p):
    """The smooth activation's constants (p.smooth: those its program and
    SMOOTH_OP_CONSTANTS read, smooth.constants_used), as data in the body (jumped over) that
    the epilogue reads %rip-relative, each a whole vector of one binary32
    value (64 bytes, so that every ISA's vectors read it as a memory
    operand, AVX2's without a broadcast); sets p.smooth_labels. Nothing
    without one."""
    p.smooth_labels = {}
    if p.smooth is None:
        return
    over = asm.label(f"past {p.smooth}'s constants")
    asm.ins(f"jmp {fwd(over)}")
    asm.ins(".p2align 6")
    for name in constants_used(program(p.smooth), SMOOTH_OP_CONSTANTS):
        label = asm.label(f"{p.smooth}: {name}")
        asm.place(label)
        bits = ABS_MASK if name == "abs_mask" else float_bits(VALUES[name])
        asm.ins(".rept 16")
        asm.ins(f".long {bits:#010x}")
        asm.ins(".endr")
        p.smooth_labels[name] = label
    asm.place(over)


#: smooth.program's ops that read their destination too (d += s1 * s2, d
#: -= s * c, d |= m).
_READS_DESTINATION = ("fma", "fms", "or_mask")


def _dead_roles(ops, i):
    """The scratch roles (a, b, t, and x once the program has read it for
    the last time) whose values no op after the i-th reads before writing
    them: free to hold a constant during the i-th op."""
    dead = []
    for role in ("a", "b", "t", "x"):
        for op, d, *src in ops[i + 1:]:
            if role in src or (op in _READS_DESTINATION and d == role):
                break
            if d == role:
                dead.append(role)
                break
        else:
            if role != "x":
                dead.append(role)
    return dead


def emit_smooth_activation(asm, p, x, temps):
    """x = p.smooth(x) (fields.SMOOTH_ACTIVATIONS): smooth.program spelled
    in AVX-512 or AVX2 for a vector register `x` of any width (an AVX2
    scalar loop's xmm, the matrix-vector form's ymm sums) through the
    three vector registers `temps` of its width (the program's a, b and
    t), its constants memory operands where emit_smooth_constants placed
    them. A constant an instruction cannot read from memory (the first
    source of a subtraction or division; min's and max's, below) is loaded
    into the destination, or into a role the program no longer needs.
    VMINPS and VMAXPS return their second source for a NaN: with the
    constant in a register and x's value second they keep a NaN, so every
    op does, and nan_mask and or_mask are nothing here."""
    role = {"x": x, "a": temps[0], "b": temps[1], "t": temps[2]}
    # EVEX forms (VRNDSCALEPS, VPANDD, VPXORD) for zmm and for registers
    # past 15, which VEX cannot name (dotgemm.py's ymm16-26); VEX
    # elsewhere (AVX2).
    wide = any(r.startswith("%zmm") or int(r.lstrip("%xyzm")) >= 16
               for r in role.values())
    labels = p.smooth_labels

    def mem(name):
        return f"{labels[name][0]}b(%rip)"

    def operand(s):
        return mem(s.name) if isinstance(s, Const) else role[s]

    ops = program(p.smooth)

    def in_register(i, c, d, sources):
        # Constant `c` into d, or into a role the program no longer needs.
        if d not in sources:
            into = d
        else:
            into = next(r for r in _dead_roles(ops, i)
                        if r != d and r not in sources)
        asm.ins(f"vmovups {mem(c.name)}, {role[into]}")
        return role[into]

    asm.comment(f"{p.smooth}({x})")
    for i, (op, d, *src) in enumerate(ops):
        dst = role[d]
        if op in ("nan_mask", "or_mask"):
            continue
        if op == "horner":
            asm.ins(f"vmovups {mem(src[1].name)}, {dst}")
            for c in src[2:]:
                asm.ins(f"vfmadd213ps {mem(c.name)}, {role[src[0]]}, {dst}")
        elif op in ("add", "mul"):
            s1, s2 = src if not isinstance(src[0], Const) else src[::-1]
            asm.ins(f"v{op}ps {operand(s2)}, {role[s1]}, {dst}")
        elif op in ("sub", "div"):
            s1, s2 = src
            first = (in_register(i, s1, d, src) if isinstance(s1, Const)
                     else role[s1])
            asm.ins(f"v{op}ps {operand(s2)}, {first}, {dst}")
        elif op in ("min", "max"):
            c = in_register(i, src[1], d, src)
            asm.ins(f"v{op}ps {role[src[0]]}, {c}, {dst}")
        elif op == "fma":
            asm.ins(f"vfmadd231ps {operand(src[1])}, {role[src[0]]}, {dst}")
        elif op == "fms":
            asm.ins(f"vfnmadd231ps {operand(src[1])}, {role[src[0]]}, {dst}")
        elif op == "iadd":
            asm.ins(f"vpaddd {operand(src[1])}, {role[src[0]]}, {dst}")
        elif op == "neg":
            asm.ins(f"vmulps {mem('minus_one')}, {role[src[0]]}, {dst}")
        elif op == "abs":
            andps = "vpandd" if wide else "vandps"
            asm.ins(f"{andps} {mem('abs_mask')}, {role[src[0]]}, {dst}")
        elif op == "round":
            asm.ins(f"vrndscaleps $0, {role[src[0]]}, {dst}" if wide
                    else f"vroundps $0, {role[src[0]]}, {dst}")
        elif op == "exp2_bits":
            asm.ins(f"vcvtps2dq {role[src[0]]}, {dst}")
            asm.ins(f"vpslld $23, {dst}, {dst}")
        elif op == "relu":
            # max(+0, s): s's NaN, and -0 for -0 (as x * 0.5 * (1 +
            # erf(x)) gives).
            asm.ins(f"vpxord {dst}, {dst}, {dst}" if wide
                    else f"vxorps {dst}, {dst}, {dst}")
            asm.ins(f"vmaxps {role[src[0]]}, {dst}, {dst}")
        else:
            raise ValueError(f"smooth.program op {op!r} has no x86 spelling")


def relu_max_address(p):
    return f"{p.relu_max_label[0]}b(%rip)"


def relu_min_address(p):
    return f"{p.relu_min_label[0]}b(%rip)"


def leaky_slope_address(p):
    return f"{p.leaky_slope_label[0]}b(%rip)"


def emit_leaky_relu(asm, p, acc, slope, product, suffix="ps"):
    """acc = leaky relu of acc, its slope in register `slope`: the larger
    (a slope below 1) or the smaller (above 1) of acc and slope * acc
    (computed into `product`), which is NaN where acc is. `suffix` "ss":
    the scalar spill loop's."""
    choose = "vmax" if p.leaky_slope < 1.0 else "vmin"
    asm.ins(f"vmul{suffix} {slope}, {acc}, {product}")
    asm.ins(f"{choose}{suffix} {product}, {acc}, {acc}")


def emit_relu(asm, p, acc, floor, suffix="ps"):
    """acc = relu(acc), its floor (zero, or relu_min) in register `floor`,
    as arith.maximumf(x, floor) computes it: max with NaN and the floor's
    +0 from the second operand, then + 0 turns -0 into +0 for the floor 0
    (with another floor, max alone: -0 and the floor differ). With
    relu_nan_to_floor the floor goes second instead, which a NaN then
    takes (and -0 the floor 0). `suffix` "ss": the scalar spill loop's.
    sgemm.py's, dotgemm.py's and amx.py's kernels."""
    if p.relu_nan_to_floor:
        asm.ins(f"vmax{suffix} {floor}, {acc}, {acc}")
        return
    asm.ins(f"vmax{suffix} {acc}, {floor}, {acc}")
    if p.relu_min is None:
        asm.ins(f"vadd{suffix} {floor}, {acc}, {acc}")


def emit_relu_floor(asm, p, reg, zero):
    """`reg` = relu's floor in every lane: `zero` (the instruction that
    zeroes it) for 0, else relu_min broadcast."""
    if p.relu_min is None:
        asm.ins(zero)
    else:
        asm.ins(f"vbroadcastss {relu_min_address(p)}, {reg}")

"""x86-64 vector ISA tables and a small AT&T assembly writer.

Per-ISA knowledge is data: one row per ISA.
"""

from dataclasses import dataclass

from .errors import RequestError
from .isa import CallingConvention, kernel_file


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


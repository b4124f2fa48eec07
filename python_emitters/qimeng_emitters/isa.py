"""What every ISA writer shares: the table row of a vector ISA, a calling
convention row, and numeric local labels.

Per-ISA knowledge is data: x86.py, aarch64.py and riscv.py each hold their
rows; sketch.py holds the loop nest they all follow.
"""

from dataclasses import dataclass

from .errors import RequestError


@dataclass(frozen=True)
class VectorIsaRow:
    """A vector ISA of the sketch-driven generator."""
    name: str             # "neon", "rvv"
    arch: str             # the triple's architecture: "aarch64", "riscv64"
    lanes: int            # f32 lanes of one register (0: set by the request)
    registers: int        # architectural vector registers
    features: tuple       # LLVM features the emitted code needs
    vector_bits_fixed: bool  # a kernel is built for one vector length

    def check_target_features(self, request, extra=()):
        """With 'target_features', refuses code whose instructions the
        target lacks: the assembler is not an ISA gate."""
        features = request.get("target_features")
        if features is None:
            return
        if not isinstance(features, list) or not all(
                isinstance(f, str) for f in features):
            raise RequestError(
                "field 'target_features' must be a list of strings")
        missing = [f for f in self.features + tuple(extra)
                   if f not in features]
        if missing:
            raise RequestError(f"isa {self.name} needs " + ", ".join(missing)
                               + " which the target lacks")


@dataclass(frozen=True)
class CallingConvention:
    """How a kernel function receives its arguments and what it must keep:
    the function form's prologue and epilogue follow it, and the pass reads
    `args` from the kernel header (qm.args) to bind the inline-asm body's
    operands. Data, one row per ABI."""
    name: str
    args: tuple           # integer argument registers, in order
    callee_saved: tuple   # general-purpose registers the callee preserves
    gprs: tuple           # every general-purpose register a body may use
    machine_state: tuple = ()  # flags and modes the body changes


class Labels:
    """GNU numeric local labels (``10:``, branch to ``10b``), so that a body
    stays valid if a compiler ever duplicates the inline asm holding it."""

    def __init__(self):
        self.next = 10

    def place(self, lines, comment, comment_prefix="//"):
        number = self.next
        self.next += 1
        lines.append(f"{number}:\t{comment_prefix} {comment}")
        return number

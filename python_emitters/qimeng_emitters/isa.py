"""What every ISA writer shares: the table row of a vector ISA, a calling
convention row, numeric local labels and the kernel file's form.

Per-ISA knowledge is data: x86.py, aarch64.py and riscv.py each hold their
rows; sketch.py holds the loop nest they all follow.
"""

import json
from dataclasses import dataclass

from . import GENERATOR_VERSION, PROTOCOL_VERSION
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

    def reserve(self):
        """A label's number for a forward branch (``10f``), its line
        appended where the branch lands."""
        number = self.next
        self.next += 1
        return number

    def place(self, lines, comment, comment_prefix="//"):
        number = self.reserve()
        lines.append(f"{number}:\t{comment_prefix} {comment}")
        return number


def kernel_file(*, comment, kind, summary, symbol, workspace_bytes,
                runtime_ld, args, clobbers, features, request, align,
                prologue, body, epilogue, runtime_sizes=(), headers=()):
    """A kernel file in the protocol's form (docs/EmitterProtocol.md,
    Output), for any ISA: two comment lines (`comment` is the assembler's
    comment prefix), the qm. header lines (qm.runtime_sizes when the kernel
    reads some of M, N and K from its header, `headers` after qm.features),
    then the function: `prologue` lines, the `body` lines between their
    markers, `epilogue` lines (its return included), aligned to
    2^`align` bytes."""
    meta = {k: request[k] for k in sorted(request)}
    out = [
        f"{comment} QiMeng-TensorOp {kind} kernel, qimeng_emitters "
        f"{GENERATOR_VERSION}, protocol {PROTOCOL_VERSION}",
        f"{comment} {summary}",
        f"# qm.symbol: {symbol}",
        f"# qm.workspace_bytes: {workspace_bytes}",
        "# qm.leading_dims: " + ("runtime" if runtime_ld else "immediate"),
        *(["# qm.runtime_sizes: " + ",".join(runtime_sizes)]
          if runtime_sizes else []),
        "# qm.args: " + ",".join(args),
        "# qm.clobbers: " + ",".join(clobbers),
        "# qm.features: " + ",".join(features),
        *headers,
        f"# qm.generator: {GENERATOR_VERSION}",
        "# qm.request: " + json.dumps(meta, sort_keys=True,
                                      separators=(",", ":")),
        "\t.text",
        f"\t.globl\t{symbol}",
        f"\t.p2align\t{align}",
        f"\t.type\t{symbol},@function",
        f"{symbol}:",
        *prologue,
        "# qm.body.begin",
        *body,
        "# qm.body.end",
        *epilogue,
        f"\t.size\t{symbol}, .-{symbol}",
        "\t.section\t.note.GNU-stack,\"\",@progbits",
    ]
    return "\n".join(out) + "\n"

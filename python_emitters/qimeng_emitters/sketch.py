"""The GEMM sketch shared by every ISA writer, and the loop nest that drives a
writer through it.

libxsmm's generator and BLIS split a GEMM the same way: one description of
the blocking and the loops, and per-architecture code that only writes
instructions. Here the sketch is the register block (MR rows by a row of
vectors), the K unroll, the loop order (column panels outside, row blocks
inside, K innermost) and the edge plan: the column panels of the last
columns and the row block of the last rows, each a narrower instance of the
same microkernel. An ISA writer (aarch64.NeonWriter, riscv.RvvWriter)
supplies the instructions: loops, pointer steps and the microkernel body.

Kernels of this generator take their leading dimensions at run time from
the workspace header (docs/KernelContract.md, the runtime_ld form) and read
A in place: C[M x N] (+)= A[M x K] * op(B), row-major. B is read in place
too, unless it is stored transposed (trans_b: N x K, as a torch linear
layer's weights): then each column panel of B is first packed into the
workspace as K rows of the panel's width, where the microkernel reads it
as it reads B itself, only with the panel's width as the row step.

Loop nest, for each column panel kind (full panels, then the edge panels):

    for jr in panels of that kind:               B columns j .. j + width
      [PACK B^T rows j .. j + width -> workspace + 128, K x width]
      for ir in 0..M - M % MR step MR:           full row blocks
        MICROKERNEL(MR rows, panel vectors)
      MICROKERNEL(M % MR rows, panel vectors)    row edge, when M % MR
"""

import json
from dataclasses import dataclass

from .errors import RequestError
from .fields import bool_field, check_known, int_field
from .isa import Labels, kernel_file

HEADER_BYTES = 128   # the workspace header (docs/KernelContract.md)
LD_OFFSET = 64       # lda, ldb, ldc as int64 elements, written by the caller
PACKED_B = HEADER_BYTES  # where a transposed B's panel is packed

# Test-only deliberately broken kernels: validation and isolation must catch
# each (under emulation as on the host).
FAULTS = (None, "drop-k", "write-past-edge", "segfault", "hang")

# Rows of a register block: each keeps a pointer to its row of A.
MAX_ROWS = 8

# Request fields of the x86 generator this one accepts only at their
# defaults (a descriptor always sends the transposes).
UNSUPPORTED = {"trans_a": False, "parallel": False,
               "dynamic_m": False, "bias": "none", "relu": False}


@dataclass(frozen=True)
class Panel:
    """Columns the microkernel covers at once: one vector per entry of
    `widths` (f32 lanes each, the last ones possibly partial), repeated
    `count` times side by side."""
    count: int
    widths: tuple

    @property
    def columns(self):
        return sum(self.widths)


@dataclass(frozen=True)
class Sketch:
    """One GEMM's blocking and edge plan, independent of the ISA."""
    m: int
    n: int
    k: int
    mr: int
    lanes: int        # f32 lanes of one vector (register group)
    nv: int           # vectors per row of the full register block
    k_unroll: int
    overwrite: bool   # C = A * B: C is never read
    fault: object     # None or one of FAULTS
    trans_b: bool = False  # B stored N x K: each panel packed first

    @property
    def nr(self):
        return self.nv * self.lanes

    @property
    def row_blocks(self):
        return self.m // self.mr

    @property
    def row_edge(self):
        return self.m % self.mr

    @property
    def k_steps(self):
        """K steps the microkernel runs (one fewer under drop-k)."""
        return self.k - 1 if self.fault == "drop-k" else self.k

    def panels(self, split_width):
        """The column plan: full panels, then the edge columns as panels of
        whole vectors and a panel of the last partial vector, split into
        the widths the ISA can load (`split_width(w)`, e.g. NEON's 3 -> 2 +
        1). No panel has more vectors than the full one."""
        plan = []
        if self.n // self.nr:
            plan.append(Panel(self.n // self.nr, (self.lanes,) * self.nv))
        rest = self.n % self.nr
        if rest >= self.lanes:
            plan.append(Panel(1, (self.lanes,) * (rest // self.lanes)))
        if rest % self.lanes:
            plan.append(Panel(1, tuple(split_width(rest % self.lanes))))
        return plan

    def workspace_bytes(self, split_width):
        """The header, and with trans_b the packed panel: K rows of the
        widest panel's columns, rounded to 64 bytes."""
        if not self.trans_b:
            return HEADER_BYTES
        widest = max(p.columns for p in self.panels(split_width))
        return HEADER_BYTES + (self.k * widest * 4 + 63) // 64 * 64

    @property
    def layout(self):
        """The symbol's transposes: nn, or nt with B stored N x K."""
        return "nt" if self.trans_b else "nn"


def registers_needed(rows, vectors, a_registers):
    """Vector registers (groups) of a block: the accumulators, one B vector
    per column vector, and `a_registers` for A."""
    return rows * vectors + vectors + a_registers


def parse_request(request, isa, extra_fields=()):
    """The fields every sketch-driven ISA shares, checked; returns (sketch
    fields as a dict, the request's k_unroll)."""
    check_known(request, (
        "isa", "m", "n", "k", "mr", "nr", "k_unroll", "overwrite",
        "trans_b", "runtime_ld", "fault", "target_features")
                + tuple(UNSUPPORTED)
                + tuple(extra_fields))
    if request.get("runtime_ld") is not True:
        raise RequestError(
            f"isa {isa} kernels read lda, ldb and ldc from the workspace "
            "header at run time: the request needs runtime_ld true")
    for field, default in UNSUPPORTED.items():
        if request.get(field, default) != default:
            raise RequestError(f"isa {isa} kernels do not support "
                               f"{field} = {json.dumps(request[field])} yet")
    fault = request.get("fault")
    if fault not in FAULTS:
        raise RequestError(
            f"unknown fault {fault!r}; expected one of drop-k, "
            "write-past-edge, segfault, hang (test-only)")
    fields = {
        "m": int_field(request, "m"),
        "n": int_field(request, "n"),
        "k": int_field(request, "k"),
        "mr": int_field(request, "mr"),
        "overwrite": bool_field(request, "overwrite"),
        "trans_b": bool_field(request, "trans_b"),
        "fault": fault,
    }
    if fields["mr"] > MAX_ROWS:
        raise RequestError(
            f"mr = {fields['mr']} is more rows than the {MAX_ROWS} A row "
            "pointers the writers keep in registers")
    if fault == "drop-k" and fields["k"] < 2:
        raise RequestError("fault drop-k needs k >= 2")
    return fields


class Writer:
    """What every ISA writer keeps: its lines, labels and K unroll, and the
    inner loop it marks for the static performance model."""

    comment_prefix = "#"

    def __init__(self, k_unroll):
        self.k_unroll = k_unroll
        self.lines = []
        self.labels = Labels()
        # Flops of one iteration of the marked inner loop; None until one
        # is marked (the header's qm.inner_loop_flops).
        self.inner_loop_flops = None

    def ins(self, text):
        self.lines.append("\t" + text)

    def mark_inner_loop(self, sk, rows, widths, model_lines=()):
        """Marks the K loop of the first full register block (all MR rows,
        all NV vectors full) for the static performance model: the lines
        between `qm.inner_loop.begin` and `qm.inner_loop.end` (end_inner_loop)
        are one iteration without its back branch, ready for llvm-mca.
        Returns whether it marked."""
        if (self.inner_loop_flops is not None or rows != sk.mr
                or tuple(widths) != (sk.lanes,) * sk.nv):
            return False
        self.inner_loop_flops = 2 * rows * sk.nr * self.k_unroll
        self.lines.append(f"{self.comment_prefix} qm.inner_loop.begin")
        self.lines.extend(model_lines)
        return True

    def end_inner_loop(self):
        """Closes the mark, before the loop's back branch."""
        self.lines.append(f"{self.comment_prefix} qm.inner_loop.end")


def fault_suffix(sk):
    """The symbol's mark of a test-only broken kernel."""
    return "" if sk.fault is None else "_fault_" + sk.fault.replace("-", "_")


def drive(sk, writer):
    """Writes the loop nest through `writer`: the same control structure on
    every ISA. Returns the body's assembly lines."""
    writer.begin(sk)
    for panel in sk.panels(writer.split_width):
        writer.panel_loop(sk, panel, lambda: _panel_body(sk, writer, panel))
    if sk.fault == "segfault":
        writer.fault_segfault()
    if sk.fault == "hang":
        writer.fault_hang()
    writer.end(sk)
    return writer.lines


def _panel_body(sk, writer, panel):
    if sk.trans_b:
        writer.pack_b_panel(sk, panel)
    if sk.row_blocks:
        writer.row_loop(sk.row_blocks, sk.mr, lambda: writer.microkernel(
            sk, sk.mr, panel.widths))
    if sk.row_edge:
        writer.microkernel(sk, sk.row_edge, panel.widths)


def kernel_text(sk, writer, symbol, request, conv):
    """The whole kernel file (isa.kernel_file) in the function form of
    `conv`, the ISA's calling convention (the writer's prologue and
    epilogue)."""
    body = drive(sk, writer)  # marks the inner loop: inner_loop_flops
    headers = []
    if writer.isa.vector_bits_fixed:
        headers.append(f"# qm.vector_bits: {writer.isa_vector_bits}")
    if writer.inner_loop_flops:
        headers.append(f"# qm.inner_loop_flops: {writer.inner_loop_flops}")
    return kernel_file(
        comment=writer.comment_prefix, kind="sgemm",
        summary=f"C[{sk.m}x{sk.n}] {'=' if sk.overwrite else '+='} A * "
        f"{'B^T' if sk.trans_b else 'B'}, K = {sk.k}",
        symbol=symbol, workspace_bytes=sk.workspace_bytes(writer.split_width),
        runtime_ld=True,
        args=conv.args, clobbers=writer.clobbers(),
        features=writer.isa.features, request=request, align=4,
        prologue=writer.prologue(), body=body, epilogue=writer.epilogue(),
        headers=headers)

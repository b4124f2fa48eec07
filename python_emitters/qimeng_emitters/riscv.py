"""RISC-V: the RVV 1.0 table row, the LP64D calling convention and the RVV
instruction writer of the shared GEMM sketch (sketch.py).

The microkernel is the vfmacc.vf form: each k step loads a row of B as
register groups (LMUL registers each) and multiplies it by one scalar of A
per row. A kernel is built for one VLEN (a group holds VLEN * LMUL / 32
floats): the symbol and the `qm.vector_bits` header say which, and
validation runs it at that VLEN. The last columns need no packing: the
edge panel sets vl to its width.

The epilogue (bias, relu, relu's floor and bound) is applied where a block
stores C, as on the other ISAs, with arith.maximumf's and arith.minimumf's
NaN rules (relu_lines, clamp_lines): RVV's vfmax and vfmin are IEEE maximumNumber and
minimumNumber, which drop a NaN against a number, and a masked form would
need v0, which holds an accumulator group.
"""

from .errors import RequestError
from .fields import float_bits, int_field
from .isa import CallingConvention, VectorIsaRow
from .header import BIAS_OFFSET, K_SLOT, LD_OFFSET, RANGE_OFFSET
from .sketch import (COLUMN_BIAS_SLOT, EDGE_LANES_SLOT, EDGE_VECTORS_SLOT,
                     FULL_PANELS_SLOT, IMAGE_SLOT, IMAGES_LEFT_SLOT,
                     K_BLOCKS_SLOT, OUTPUT_SLOT, RUNTIME_LANES, ROW_BIAS_SLOT,
                     ROW_BLOCKS_SLOT, ROW_EDGE_SLOT, Sketch, Writer,
                     fault_suffix, blocking_suffix, kernel_text, parse_request,
                     registers_needed)

RVV = VectorIsaRow(name="rvv", arch="riscv64", lanes=0, registers=32,
                   features=("v",), vector_bits_fixed=True)

LP64D = CallingConvention(
    name="lp64d", args=("a0", "a1", "a2", "a3"),
    callee_saved=tuple(f"s{i}" for i in range(12)),
    # s0 is the frame pointer; gp and tp are the platform's.
    gprs=tuple(f"a{i}" for i in range(8)) + tuple(
        f"t{i}" for i in range(7)) + tuple(f"s{i}" for i in range(1, 12)),
    machine_state=())

# Register map of the body.
A, B, C, WS = "a0", "a1", "a2", "a3"
LDA, LDB, LDC = "a4", "a5", "a6"
BPANEL = "a7"
TMP, JR, IR, KI, CPANEL, ABLOCK, CBLOCK = (
    "t0", "t1", "t2", "t3", "t4", "t5", "t6")
BPTR, CROW, A_STEP = "s1", "s10", "s11"
A_ROWS = tuple(f"s{i}" for i in range(2, 10))
USED_GPRS = ("a4", "a5", "a6", "a7", "t0", "t1", "t2", "t3", "t4", "t5",
             "t6") + tuple(f"s{i}" for i in range(1, 12))
# A's scalars: two banks of caller-saved float registers, alternating k.
F_BANKS = (tuple(f"ft{i}" for i in range(8)), tuple(f"fa{i}" for i in
                                                      range(8)))
VLENS = (128, 256, 512, 1024)
LMULS = (1, 2, 4, 8)
K_UNROLLS = (1, 2, 4, 8)
SAVED = tuple(f"s{i}" for i in range(1, 12))


# The epilogue's scalars: relu's bound, a row's bias, relu's floor other
# than 0 or leaky relu's slope (A's scalars are free once the K loop is
# done), and +inf's bits.
F_BOUND, F_ROW_BIAS, F_FLOOR = "ft0", "ft1", "ft2"
INF_BITS = 0x7F800000


def leaky_relu_lines(acc, tmp, slope_reg, slope):
    """Leaky relu of vector `acc`, its slope in f register `slope_reg`:
    tmp = slope * acc, then the larger of the two (a slope below 1) or the
    smaller. vfmax.vv and vfmin.vv are maximumNumber and minimumNumber,
    which drop a NaN against a number; here a NaN acc makes tmp NaN too,
    and two NaNs give NaN."""
    choose = "vfmax.vv" if slope < 1.0 else "vfmin.vv"
    return [f"vfmul.vf\t{tmp}, {acc}, {slope_reg}",
            f"{choose}\t{acc}, {acc}, {tmp}"]


def relu_lines(acc, tmp, bound=None, inf=None):
    """relu of vector `acc` as arith.maximumf(x, 0): NaN stays NaN, -0 and
    anything below 0 become +0; with `bound` (an f register holding relu's
    bound, `inf` an x register holding INF_BITS), then min(x, bound) as
    arith.minimumf, NaN kept. Unmasked, `tmp` as scratch.

    x - x is +0 for a number and NaN for an infinity or a NaN, so
    maximumNumber(x, x - x) is +0 below zero and x above, keeps +inf and,
    both operands NaN, gives the canonical NaN; only -inf stays, which a
    signed integer max with 0 turns into +0 (it is the one negative bit
    pattern left). Then, the value being +0 .. +inf or the canonical NaN,
    its bits above +inf's mark the NaN: a saturating subtract, shifted to
    the sign and spread, selects it, and an unsigned max puts it back
    after minimumNumber(x, bound) replaced it."""
    out = [f"vfsub.vv\t{tmp}, {acc}, {acc}",
           f"vfmax.vv\t{acc}, {acc}, {tmp}",
           f"vmax.vx\t{acc}, {acc}, zero"]
    if bound is not None:
        out += [f"vssubu.vx\t{tmp}, {acc}, {inf}",
                f"vsll.vi\t{tmp}, {tmp}, 9",
                f"vsra.vi\t{tmp}, {tmp}, 31",
                f"vand.vv\t{tmp}, {tmp}, {acc}",
                f"vfmin.vf\t{acc}, {acc}, {bound}",
                f"vmaxu.vv\t{acc}, {acc}, {tmp}"]
    return out


def clamp_lines(acc, tmp, inf, floor, bound=None):
    """relu with a floor other than 0 of vector `acc`: arith.maximumf(x,
    floor), then with `bound` arith.minimumf(x, bound) (f registers; `inf`
    an x register holding INF_BITS; `tmp` scratch), NaN kept, unmasked.

    vfmax.vf and vfmin.vf (maximumNumber, minimumNumber) clamp every
    number as the arith ops do (-0 stays -0 against a floor other than
    0) but turn a NaN into the floor or the bound, so the NaN is put back:
    x's bits without the sign (shifted out and back) less +inf's,
    saturating, are above zero for a NaN alone; negated, their sign spread
    makes all ones there and zero elsewhere, and OR-ing that in makes each
    NaN lane a NaN again (all bits set)."""
    out = [f"vsll.vi\t{tmp}, {acc}, 1",
           f"vsrl.vi\t{tmp}, {tmp}, 1",
           f"vssubu.vx\t{tmp}, {tmp}, {inf}",
           f"vrsub.vx\t{tmp}, {tmp}, zero",
           f"vsra.vi\t{tmp}, {tmp}, 31",
           f"vfmax.vf\t{acc}, {acc}, {floor}"]
    if bound is not None:
        out.append(f"vfmin.vf\t{acc}, {acc}, {bound}")
    out.append(f"vor.vv\t{acc}, {acc}, {tmp}")
    return out


def nan_to_floor_lines(acc, floor, bound=None):
    """relu that makes a NaN its floor (torch-mlir's clamp: select(cmpf
    ult(x, floor), floor, x)), then min(x, bound): vfmax.vf and vfmin.vf as
    they are, maximumNumber giving the floor for a NaN (and +0 for -0
    against the floor 0), after which no NaN is left for the bound."""
    out = [f"vfmax.vf\t{acc}, {acc}, {floor}"]
    if bound is not None:
        out.append(f"vfmin.vf\t{acc}, {acc}, {bound}")
    return out


def add_imm(lines, reg, value):
    if value == 0:
        return
    if -2048 <= value < 2048:
        lines.append(f"\taddi\t{reg}, {reg}, {value}")
    else:
        lines.append(f"\tli\t{TMP}, {value}")
        lines.append(f"\tadd\t{reg}, {reg}, {TMP}")


class RvvWriter(Writer):
    """Writes the sketch's loops and microkernel in RVV 1.0."""

    isa = RVV
    conv = LP64D
    comment_prefix = "#"
    runtime_lanes = True

    def __init__(self, vlen, lmul, k_unroll):
        super().__init__(k_unroll)
        self.isa_vector_bits = vlen
        self.lmul = lmul
        self.lanes = vlen * lmul // 32

    def split_width(self, width):
        return [width]

    def label(self, comment):
        return self.labels.place(self.lines, comment, "#")

    def loop_back(self, counter, label):
        """counter -= 1, back to `label` while non-zero."""
        self.ins(f"addi\t{counter}, {counter}, -1")
        self.loop_back_unless_zero(counter, label)

    def loop_back_unless_zero(self, reg, label):
        """Back to `label` while reg is non-zero; a jal reaches any body
        size (a conditional branch only 4 KiB)."""
        done = self.labels.reserve()
        self.ins(f"beqz\t{reg}, {done}f")
        self.ins(f"j\t{label}b")
        self.lines.append(f"{done}:")

    def ws_address(self, reg, offset):
        """reg = workspace + offset (TMP as scratch beyond addi's range)."""
        if -2048 <= offset < 2048:
            self.ins(f"addi\t{reg}, {WS}, {offset}")
        else:
            self.ins(f"li\t{TMP}, {offset}")
            self.ins(f"add\t{reg}, {WS}, {TMP}")

    def vreg(self, group):
        return f"v{group * self.lmul}"

    def clobbers(self):
        return (list(USED_GPRS) + list(F_BANKS[0]) + list(F_BANKS[1])
                + [f"v{i}" for i in range(32)] + ["vl", "vtype"]
                + list(self.conv.machine_state))

    def prologue(self):
        out = [f"\taddi\tsp, sp, -{8 * len(SAVED) + 8}"]
        out += [f"\tsd\t{r}, {8 * i}(sp)" for i, r in enumerate(SAVED)]
        return out

    def epilogue(self):
        out = [f"\tld\t{r}, {8 * i}(sp)" for i, r in enumerate(SAVED)]
        out += [f"\taddi\tsp, sp, {8 * len(SAVED) + 8}", "\tret"]
        return out

    # -- the loop nest ------------------------------------------------------

    def begin(self, sk):
        self.sketch = sk
        if sk.conv is not None:
            self.conv_tables(sk)
        self.ins("# leading dimensions from the workspace header, in bytes")
        for i, reg in enumerate((LDA, LDB, LDC)):
            self.ins(f"ld\t{reg}, {LD_OFFSET + 8 * i}({WS})")
            self.ins(f"slli\t{reg}, {reg}, 2")
        if sk.trans_a:
            self.transpose_a(sk)
        if sk.gathers_a:
            # A row block is MR entries of the pixel table.
            self.ins(f"li\t{A_STEP}, {sk.mr * 8}")
        else:
            self.ins(f"li\t{TMP}, {sk.mr}")
            self.ins(f"mul\t{A_STEP}, {LDA}, {TMP}")
        if sk.reads_rows:
            self.runtime_rows(sk)
        if sk.reads_columns:
            self.runtime_columns(sk)
        if sk.bias == "columns":
            self.ins("# the column panels' bias cursor")
            self.ins(f"ld\t{CROW}, {BIAS_OFFSET}({WS})")
            self.ins(f"sd\t{CROW}, {COLUMN_BIAS_SLOT}({WS})")

    def start_panels(self, sk):
        """The first column panel's B and C (an nchw convolution's come
        from its image loop)."""
        self.ins(f"mv\t{BPANEL}, {B}")
        self.ins(f"mv\t{CPANEL}, {C}")

    def next_k_block(self, sk):
        """A on by kc columns, B by kc rows (a transposed B's columns)."""
        self.ins(f"# the next K block: A and B on by {sk.kc} k")
        add_imm(self.lines, A, sk.kc * 4)
        if sk.trans_b:
            add_imm(self.lines, B, sk.kc * 4)
        else:
            # ldb from the header: a copied panel's step may be in LDB.
            self.ins(f"ld\t{TMP}, {LD_OFFSET + 8}({WS})")
            self.ins(f"li\t{CROW}, {sk.kc * 4}")
            self.ins(f"mul\t{TMP}, {TMP}, {CROW}")
            self.ins(f"add\t{B}, {B}, {TMP}")

    def k_block_loop(self, count, body):
        """`body` `count` times, the count in the header (the nest uses
        every register)."""
        self.ins(f"li\t{TMP}, {count}")
        self.ins(f"sd\t{TMP}, {K_BLOCKS_SLOT}({WS})")
        loop = self.label("a K block")
        body()
        self.ins(f"ld\t{TMP}, {K_BLOCKS_SLOT}({WS})")
        self.ins(f"addi\t{TMP}, {TMP}, -1")
        self.ins(f"sd\t{TMP}, {K_BLOCKS_SLOT}({WS})")
        self.loop_back_unless_zero(TMP, loop)

    def runtime_rows(self, sk):
        """Rows [m_begin, m_end) from the header: A and C start at row
        m_begin (an nhwc convolution's A at its pixel: panel_loop); the
        full row blocks and the last block's rows go to the header's slots
        for every panel's row loops."""
        first, rows, blocks, mr = IR, KI, JR, CROW
        self.ins("# run-time M: rows m_begin .. m_end from the header")
        self.ins(f"ld\t{first}, {RANGE_OFFSET}({WS})")
        self.ins(f"ld\t{rows}, {RANGE_OFFSET + 8}({WS})")
        self.ins(f"sub\t{rows}, {rows}, {first}")
        if not sk.gathers_a:
            # An nchw convolution's A is the filter, its second argument.
            base = B if sk.gathers_b else A
            self.ins(f"mul\t{TMP}, {first}, {LDA}")
            self.ins(f"add\t{base}, {base}, {TMP}")
        self.ins(f"mul\t{TMP}, {first}, {LDC}")
        self.ins(f"add\t{C}, {C}, {TMP}")
        self.ins(f"li\t{mr}, {sk.mr}")
        self.ins(f"divu\t{blocks}, {rows}, {mr}")
        self.ins(f"remu\t{rows}, {rows}, {mr}")
        self.ins(f"sd\t{blocks}, {ROW_BLOCKS_SLOT}({WS})")
        self.ins(f"sd\t{rows}, {ROW_EDGE_SLOT}({WS})")
        if sk.bias == "rows":
            # Row m_begin's bias first.
            self.ins(f"ld\t{mr}, {BIAS_OFFSET}({WS})")
            self.ins(f"slli\t{first}, {first}, 2")
            self.ins(f"add\t{mr}, {mr}, {first}")
            self.ins(f"sd\t{mr}, {BIAS_OFFSET}({WS})")

    def runtime_columns(self, sk):
        """Columns [n_begin, n_end) from the header: B, C and the column
        bias start at column n_begin; the full panels, the edge's whole
        vectors and its last vector's lanes go to the header's slots for
        the panel plan (Sketch.panels)."""
        first, cols, full = IR, KI, JR
        self.ins("# run-time N: columns n_begin .. n_end from the header")
        self.ins(f"ld\t{first}, {RANGE_OFFSET + 16}({WS})")
        self.ins(f"ld\t{cols}, {RANGE_OFFSET + 24}({WS})")
        self.ins(f"sub\t{cols}, {cols}, {first}")
        self.ins(f"slli\t{TMP}, {first}, 2")
        self.ins(f"add\t{C}, {C}, {TMP}")
        if sk.trans_b:
            self.ins(f"mul\t{CROW}, {first}, {LDB}")
            self.ins(f"add\t{B}, {B}, {CROW}")
        else:
            self.ins(f"add\t{B}, {B}, {TMP}")
        if sk.bias == "columns":
            self.ins(f"ld\t{CROW}, {BIAS_OFFSET}({WS})")
            self.ins(f"add\t{CROW}, {CROW}, {TMP}")
            self.ins(f"sd\t{CROW}, {BIAS_OFFSET}({WS})")
        self.ins(f"li\t{CROW}, {sk.nr}")
        self.ins(f"divu\t{full}, {cols}, {CROW}")
        self.ins(f"remu\t{cols}, {cols}, {CROW}")
        self.ins(f"sd\t{full}, {FULL_PANELS_SLOT}({WS})")
        self.ins(f"srli\t{full}, {cols}, {sk.lanes.bit_length() - 1}")
        self.ins(f"sd\t{full}, {EDGE_VECTORS_SLOT}({WS})")
        self.ins(f"andi\t{cols}, {cols}, {sk.lanes - 1}")
        self.ins(f"sd\t{cols}, {EDGE_LANES_SLOT}({WS})")

    def when(self, slot, value, body):
        """`body` where the header's `slot` holds `value` (None: is not
        0)."""
        skip = self.labels.reserve()
        self.ins(f"ld\t{CROW}, {slot}({WS})")
        if value is None:
            self.jump_unless(f"bnez\t{CROW}, {{}}", skip)
        else:
            self.ins(f"li\t{TMP}, {value}")
            self.jump_unless(f"beq\t{CROW}, {TMP}, {{}}", skip)
        body()
        self.lines.append(f"{skip}:")

    def conv_tables(self, sk):
        """A convolution's entry: its leading dimensions into the header,
        then its tap and pixel tables (Sketch.tables), each by nested
        loops."""
        self.ins("# convolution: leading dimensions, tap and pixel tables")
        for i, value in enumerate(sk.immediate_lds()):
            self.ins(f"li\t{TMP}, {value}")
            self.ins(f"sd\t{TMP}, {LD_OFFSET + 8 * i}({WS})")
        for offset, levels, absolute in sk.tables():
            self.fill_table(offset, levels, absolute)

    def fill_table(self, offset, levels, absolute):
        """The int64 table at workspace + offset: for each index of
        `levels` ((count, bytes a step), outermost first, at most three),
        the sum of index x step, plus the input's address (A) when
        `absolute`."""
        depth = len(levels)
        entry = A_ROWS[0]
        values, steps = A_ROWS[1:1 + depth], A_ROWS[4:4 + depth]
        counters = (IR, KI, BPTR)[:depth]
        self.ws_address(entry, offset)
        for (_, step), reg in zip(levels, steps):
            self.ins(f"li\t{reg}, {step}")
        self.ins(f"mv\t{values[0]}, {A if absolute else 'zero'}")
        loops = []
        for d, (count, _) in enumerate(levels):
            if d:
                self.ins(f"mv\t{values[d]}, {values[d - 1]}")
            self.ins(f"li\t{counters[d]}, {count}")
            loops.append(self.label(f"table level {d}"))
        self.ins(f"sd\t{values[-1]}, 0({entry})")
        self.ins(f"addi\t{entry}, {entry}, 8")
        for d in reversed(range(depth)):
            self.ins(f"add\t{values[d]}, {values[d]}, {steps[d]}")
            self.ins(f"addi\t{counters[d]}, {counters[d]}, -1")
            self.ins(f"bnez\t{counters[d]}, {loops[d]}b")

    def image_loop(self, sk, body):
        """An nchw convolution's images, one GEMM each: the image's input
        and output and the images left in the header's slots (the panel
        loops use every register); the panels start at the pixel table."""
        step_in, step_out = sk.image_steps()
        self.ins("# nchw: a GEMM an image, B gathered from the image")
        self.ins(f"sd\t{A}, {IMAGE_SLOT}({WS})")
        self.ins(f"sd\t{C}, {OUTPUT_SLOT}({WS})")
        self.ins(f"li\t{TMP}, {sk.conv.n}")
        self.ins(f"sd\t{TMP}, {IMAGES_LEFT_SLOT}({WS})")
        loop = self.label("an image")
        self.ins(f"ld\t{CPANEL}, {OUTPUT_SLOT}({WS})")
        self.ws_address(BPANEL, sk.pixel_table)
        body()
        for slot, step in ((IMAGE_SLOT, step_in), (OUTPUT_SLOT, step_out)):
            self.ins(f"ld\t{CROW}, {slot}({WS})")
            add_imm(self.lines, CROW, step)
            self.ins(f"sd\t{CROW}, {slot}({WS})")
        self.ins(f"ld\t{CROW}, {IMAGES_LEFT_SLOT}({WS})")
        self.ins(f"addi\t{CROW}, {CROW}, -1")
        self.ins(f"sd\t{CROW}, {IMAGES_LEFT_SLOT}({WS})")
        self.loop_back_unless_zero(CROW, loop)

    def set_panel_vl(self, panel):
        """One vl for the whole panel: its vectors are all as wide (the
        call's edge lanes for a RUNTIME_LANES panel)."""
        if panel.widths[0] == RUNTIME_LANES:
            self.ins(f"ld\t{TMP}, {EDGE_LANES_SLOT}({WS})")
        else:
            self.ins(f"li\t{TMP}, {panel.widths[0]}")
        self.ins(f"vsetvli\tzero, {TMP}, e32, m{self.lmul}, ta, ma")

    def panel_loop(self, sk, panel, body):
        count = "the call's" if panel.count is None else panel.count
        self.ins(f"# {count} panel(s) of {panel.columns} columns")
        self.set_panel_vl(panel)
        loop = skip = None
        if panel.count is None:
            self.ins(f"ld\t{JR}, {FULL_PANELS_SLOT}({WS})")
            skip = self.labels.reserve()
            self.jump_unless(f"bnez\t{JR}, {{}}", skip)
            loop = self.label("column panel")
        elif panel.count > 1:
            self.ins(f"li\t{JR}, {panel.count}")
            loop = self.label("column panel")
        if sk.gathers_a:
            self.ws_address(ABLOCK, sk.pixel_table)
            if sk.reads_rows:
                # A part's first pixel.
                self.ins(f"ld\t{TMP}, {RANGE_OFFSET}({WS})")
                self.ins(f"slli\t{TMP}, {TMP}, 3")
                self.ins(f"add\t{ABLOCK}, {ABLOCK}, {TMP}")
        else:
            # An nchw convolution's A is the filter, its second argument.
            self.ins(f"mv\t{ABLOCK}, {B if sk.gathers_b else A}")
        self.ins(f"mv\t{CBLOCK}, {CPANEL}")
        if sk.bias == "rows":
            # The row blocks' bias cursor, from the first row's.
            self.ins(f"ld\t{CROW}, {BIAS_OFFSET}({WS})")
            self.ins(f"sd\t{CROW}, {ROW_BIAS_SLOT}({WS})")
        body()
        if sk.gathers_b:
            pass  # the gather walked BPANEL through the panel's pixels
        elif sk.trans_b:
            # The next panel's columns are B^T's next rows.
            self.ins(f"ld\t{TMP}, {LD_OFFSET + 8}({WS})")
            self.ins(f"li\t{CROW}, {panel.columns * 4}")
            self.ins(f"mul\t{TMP}, {TMP}, {CROW}")
            self.ins(f"add\t{BPANEL}, {BPANEL}, {TMP}")
        else:
            add_imm(self.lines, BPANEL, panel.columns * 4)
        add_imm(self.lines, CPANEL, panel.columns * 4)
        if sk.bias == "columns":
            self.ins(f"ld\t{CROW}, {COLUMN_BIAS_SLOT}({WS})")
            add_imm(self.lines, CROW, panel.columns * 4)
            self.ins(f"sd\t{CROW}, {COLUMN_BIAS_SLOT}({WS})")
        if loop is not None:
            self.loop_back(JR, loop)
        if skip is not None:
            self.lines.append(f"{skip}:")

    def jump_unless(self, condition, label):
        """To `label` (forward) unless `condition` (a branch to 1f) holds;
        a jal reaches past any body (a conditional branch only 4 KiB)."""
        taken = self.labels.reserve()
        self.ins(condition.format(f"{taken}f"))
        self.ins(f"j\t{label}f")
        self.lines.append(f"{taken}:")

    def row_loop(self, count, rows, body):
        """`count` blocks of `rows` rows; count None: as many as the header
        says (run-time M), perhaps none."""
        skip = None
        if count is None:
            self.ins(f"ld\t{IR}, {ROW_BLOCKS_SLOT}({WS})")
            skip = self.labels.reserve()
            self.jump_unless(f"bnez\t{IR}, {{}}", skip)
        else:
            self.ins(f"li\t{IR}, {count}")
        loop = self.label(f"{rows}-row block")
        body()
        self.ins(f"add\t{ABLOCK}, {ABLOCK}, {A_STEP}")
        for _ in range(rows):
            self.ins(f"add\t{CBLOCK}, {CBLOCK}, {LDC}")
        if self.sketch.bias == "rows":
            self.ins(f"ld\t{CROW}, {ROW_BIAS_SLOT}({WS})")
            self.ins(f"addi\t{CROW}, {CROW}, {rows * 4}")
            self.ins(f"sd\t{CROW}, {ROW_BIAS_SLOT}({WS})")
        self.loop_back(IR, loop)
        if skip is not None:
            self.lines.append(f"{skip}:")

    def row_edges(self, sk, microkernel):
        """Run-time M's last rows: the microkernel for the count in the
        header (none for 0)."""
        done = self.labels.reserve()
        # Loaded once: a count that does not match runs no microkernel.
        self.ins(f"ld\t{CROW}, {ROW_EDGE_SLOT}({WS})")
        for rows in range(1, sk.mr):
            self.ins(f"li\t{TMP}, {rows}")
            other = self.labels.reserve()
            self.jump_unless(f"beq\t{CROW}, {TMP}, {{}}", other)
            microkernel(rows)
            self.ins(f"j\t{done}f")
            self.lines.append(f"{other}:")
        self.lines.append(f"{done}:")

    def gather_b_panel(self, sk, panel):
        """An nchw convolution's B columns j .. j + width (output pixels)
        gathered from the image into the workspace as K rows of `width`
        floats, a pixel at a time: its offset from the pixel table
        (BPANEL walks it), each k's from the tap table. LDB then holds the
        packed row step."""
        width = panel.columns
        image, column, taps, src, dst, offset = A_ROWS[:6]
        self.ins(f"# gather B: {sk.k} x {width} at workspace + "
                 f"{sk.packed_b}")
        self.ins(f"ld\t{image}, {IMAGE_SLOT}({WS})")
        self.ins(f"li\t{LDB}, {width * 4}")
        self.ws_address(column, sk.packed_b)
        self.ins(f"li\t{IR}, {width}")
        pixel = self.label("gather: a pixel")
        self.ins(f"ld\t{src}, 0({BPANEL})")
        self.ins(f"addi\t{BPANEL}, {BPANEL}, 8")
        self.ins(f"add\t{src}, {src}, {image}")
        self.ws_address(taps, sk.tap_table)
        self.ins(f"mv\t{dst}, {column}")
        self.ins(f"li\t{KI}, {sk.k}")
        k = self.label("gather: a k")
        self.ins(f"ld\t{offset}, 0({taps})")
        self.ins(f"addi\t{taps}, {taps}, 8")
        self.ins(f"add\t{offset}, {offset}, {src}")
        self.ins(f"flw\tft0, 0({offset})")
        self.ins(f"fsw\tft0, 0({dst})")
        self.ins(f"add\t{dst}, {dst}, {LDB}")
        self.ins(f"addi\t{KI}, {KI}, -1")
        self.ins(f"bnez\t{KI}, {k}b")
        self.ins(f"addi\t{column}, {column}, 4")
        self.ins(f"addi\t{IR}, {IR}, -1")
        self.ins(f"bnez\t{IR}, {pixel}b")

    def packed_widths(self, panel):
        """For packing the panel: LDB = the packed row step, IR = the
        columns to pack (the call's edge lanes for a RUNTIME_LANES
        panel)."""
        if panel.widths == (RUNTIME_LANES,):
            self.ins(f"ld\t{IR}, {EDGE_LANES_SLOT}({WS})")
            self.ins(f"slli\t{LDB}, {IR}, 2")
        else:
            self.ins(f"li\t{LDB}, {panel.columns * 4}")
            self.ins(f"li\t{IR}, {panel.columns}")

    def start_packing(self, sk, panel, what):
        """The start of packing a panel of B (`what` names it): A's first
        three row pointers = the panel in B, its place in the workspace,
        ldb in bytes; LDB and IR as packed_widths sets them."""
        src, dst, ldb = A_ROWS[:3]
        self.ins(f"# {what} {sk.k} x {panel.columns} at workspace + "
                 f"{sk.packed_b}")
        self.ins(f"ld\t{ldb}, {LD_OFFSET + 8}({WS})")
        self.ins(f"slli\t{ldb}, {ldb}, 2")
        self.packed_widths(panel)
        self.ins(f"mv\t{src}, {BPANEL}")
        self.ws_address(dst, sk.packed_b)
        return src, dst, ldb

    def copy_b_panel(self, sk, panel):
        """B's rows (the K block's, ldb apart) of the panel's columns into
        the workspace, a packed row apart, each as long vectors (LMUL 8,
        vl from vsetvli). LDB then holds the packed row step; the panel's
        vl is set again after."""
        src, dst, ldb = self.start_packing(sk, panel, "pack B:")
        row_src, row_dst, left, vl, scratch = A_ROWS[3:8]
        self.ins(f"li\t{KI}, {sk.k}")
        row = self.label("pack B: a row")
        self.ins(f"mv\t{row_src}, {src}")
        self.ins(f"mv\t{row_dst}, {dst}")
        self.ins(f"mv\t{left}, {IR}")
        chunk = self.label("pack B: as many as a vector holds")
        self.ins(f"vsetvli\t{vl}, {left}, e32, m8, ta, ma")
        self.ins(f"vle32.v\tv0, ({row_src})")
        self.ins(f"vse32.v\tv0, ({row_dst})")
        self.ins(f"sub\t{left}, {left}, {vl}")
        self.ins(f"slli\t{scratch}, {vl}, 2")
        self.ins(f"add\t{row_src}, {row_src}, {scratch}")
        self.ins(f"add\t{row_dst}, {row_dst}, {scratch}")
        self.ins(f"bnez\t{left}, {chunk}b")
        self.ins(f"add\t{src}, {src}, {ldb}")
        self.ins(f"add\t{dst}, {dst}, {LDB}")
        self.ins(f"addi\t{KI}, {KI}, -1")
        self.ins(f"bnez\t{KI}, {row}b")
        self.set_panel_vl(panel)

    def pack_bt_panel(self, sk, panel):
        """B^T's rows j .. j + width (each K floats, ldb apart) into the
        workspace as K rows of `width` floats: a row of B^T loaded as long
        vectors (LMUL 8, vl from vsetvli) and stored with a stride of one
        packed row (vsse32). LDB then holds that stride for the
        microkernels of this panel; the panel's vl is set again after."""
        src, dst, ldb = self.start_packing(sk, panel, "pack B^T rows ->")
        self.transpose_rows(src, ldb, dst, LDB, sk.k)
        self.set_panel_vl(panel)

    def transpose_rows(self, src, stride, dst, step, length):
        """IR rows of `length` floats (a number, or a register holding it:
        a part's rows) (`src`, `stride` bytes apart) into columns of the
        destination (`dst`, rows `step` bytes apart): a row loaded as long
        vectors (LMUL 8, vl from vsetvli) and stored with a stride of one
        destination row (vsse32). Changes vtype; uses IR, v0 and the row
        pointers of A after the first three."""
        col_src, col_dst, left, vl, scratch = A_ROWS[3:8]
        column = self.label("transpose: a row")
        self.ins(f"mv\t{col_src}, {src}")
        self.ins(f"mv\t{col_dst}, {dst}")
        empty = None
        if isinstance(length, int):
            self.ins(f"li\t{left}, {length}")
        else:
            # An empty part copies nothing.
            empty = self.labels.reserve()
            self.ins(f"mv\t{left}, {length}")
            self.ins(f"beqz\t{left}, {empty}f")
        chunk = self.label("transpose: as many as a vector holds")
        self.ins(f"vsetvli\t{vl}, {left}, e32, m8, ta, ma")
        self.ins(f"vle32.v\tv0, ({col_src})")
        self.ins(f"vsse32.v\tv0, ({col_dst}), {step}")
        self.ins(f"sub\t{left}, {left}, {vl}")
        self.ins(f"slli\t{scratch}, {vl}, 2")
        self.ins(f"add\t{col_src}, {col_src}, {scratch}")
        self.ins(f"mul\t{scratch}, {vl}, {step}")
        self.ins(f"add\t{col_dst}, {col_dst}, {scratch}")
        self.ins(f"bnez\t{left}, {chunk}b")
        if empty is not None:
            self.lines.append(f"{empty}:")
        self.ins(f"add\t{src}, {src}, {stride}")
        self.ins(f"addi\t{dst}, {dst}, 4")
        self.ins(f"addi\t{IR}, {IR}, -1")
        self.ins(f"bnez\t{IR}, {column}b")

    def transpose_a(self, sk):
        """A stored K x M (LDA bytes a row) copied once into the workspace
        as M rows of K (the parallel form: its part's rows [m_begin, m_end)
        alone, in their places); A and LDA then name the copy."""
        src, dst, step = A_ROWS[:3]
        offset = sk.packed_a(self.split_width)
        self.ins(f"# A stored transposed: M x K copy at workspace + {offset}")
        self.ins(f"mv\t{src}, {A}")
        self.ws_address(dst, offset)
        self.ins(f"li\t{step}, {sk.k * 4}")
        length = sk.m
        if sk.reads_rows:
            # The part's rows: A^T's columns from m_begin, the copy's rows
            # from row m_begin.
            length = KI
            self.ins(f"ld\t{TMP}, {RANGE_OFFSET}({WS})")
            self.ins(f"ld\t{length}, {RANGE_OFFSET + 8}({WS})")
            self.ins(f"sub\t{length}, {length}, {TMP}")
            self.ins(f"mul\t{IR}, {TMP}, {step}")
            self.ins(f"add\t{dst}, {dst}, {IR}")
            self.ins(f"slli\t{TMP}, {TMP}, 2")
            self.ins(f"add\t{src}, {src}, {TMP}")
        self.ins(f"li\t{IR}, {sk.k}")
        self.transpose_rows(src, LDA, dst, step, length)
        self.ws_address(A, offset)
        self.ins(f"li\t{LDA}, {sk.k * 4}")

    def end(self, sk):
        if sk.fault == "write-past-edge":
            # One float just past the last column of C's last row (past
            # a convolution's whole output).
            if sk.conv is not None:
                self.ins(f"mv\t{CROW}, {C}")
                add_imm(self.lines, CROW, sk.output_floats * 4)
            else:
                self.ins(f"li\t{CROW}, {sk.m - 1}")
                self.ins(f"mul\t{CROW}, {CROW}, {LDC}")
                self.ins(f"add\t{CROW}, {CROW}, {C}")
                add_imm(self.lines, CROW, sk.n * 4)
            self.ins(f"sw\tzero, 0({CROW})")

    def fault_segfault(self):
        self.ins(f"ld\t{TMP}, 0(zero)")

    def fault_hang(self):
        loop = self.label("hang")
        self.ins(f"j\t{loop}b")

    # -- the microkernel ----------------------------------------------------

    def microkernel(self, sk, rows, widths):
        nv = len(widths)
        groups = 32 // self.lmul
        if registers_needed(rows, nv, 0) > groups:
            raise RequestError(
                f"a {rows}-row block of {nv} vectors needs "
                f"{registers_needed(rows, nv, 0)} register groups; LMUL "
                f"{self.lmul} gives {groups}")
        acc = lambda i, v: self.vreg(i * nv + v)
        # Two sets of B vectors, alternating k, where the groups allow: an
        # in-order core (the X60) then loads the next row of B while the
        # FMAs of this one issue, instead of waiting for them to read it.
        b_sets = 2 if registers_needed(rows, nv, 0) + nv <= groups else 1
        b_reg = lambda v, u=0: self.vreg(rows * nv + (u % b_sets) * nv + v)
        offsets = [sum(widths[:v]) * 4 for v in range(nv)]
        self.ins(f"# {rows} x {sum(widths)} block")
        if not sk.gathers_a:
            self.ins(f"mv\t{A_ROWS[0]}, {ABLOCK}")
            for i in range(1, rows):
                self.ins(f"add\t{A_ROWS[i]}, {A_ROWS[i - 1]}, {LDA}")
        if sk.packs_b:
            self.ws_address(BPTR, sk.packed_b)
        else:
            self.ins(f"mv\t{BPTR}, {BPANEL}")
        for i in range(rows):
            for v in range(nv):
                self.ins(f"vmv.v.i\t{acc(i, v)}, 0")

        def a_loads(u):
            bank = F_BANKS[u % 2]
            return [f"flw\t{bank[i]}, {4 * u}({A_ROWS[i]})"
                    for i in range(rows)]

        def b_loads(u):
            out = []
            for v in range(nv):
                if offsets[v]:
                    out.append(f"addi\t{TMP}, {BPTR}, {offsets[v]}")
                    out.append(f"vle32.v\t{b_reg(v, u)}, ({TMP})")
                else:
                    out.append(f"vle32.v\t{b_reg(v, u)}, ({BPTR})")
            out.append(f"add\t{BPTR}, {BPTR}, {LDB}")
            return out

        def fmas(u):
            bank = F_BANKS[u % 2]
            return [f"vfmacc.vf\t{acc(i, v)}, {bank[i]}, {b_reg(v, u)}"
                    for i in range(rows) for v in range(nv)]

        def k_steps(count):
            """`count` k steps, software-pipelined for an in-order core:
            the loads of step u + 1 (into the other bank of A scalars and,
            where there are two, the other set of B vectors) issue between
            the FMAs of step u."""
            pending = a_loads(0) + b_loads(0)
            for line in pending:
                self.ins(line)
            for u in range(count):
                ahead = []
                if u + 1 < count:
                    # B first: its load is the longest.
                    ahead = a_loads(u + 1)
                    if b_sets == 2:
                        ahead = b_loads(u + 1) + ahead
                work = fmas(u)
                for n, line in enumerate(work):
                    self.ins(line)
                    if n < len(ahead):
                        self.ins(ahead[n])
                for line in ahead[len(work):]:
                    self.ins(line)
                if u + 1 < count and b_sets == 1:
                    for line in b_loads(u + 1):
                        self.ins(line)

        def advance_a(steps):
            for i in range(rows):
                self.ins(f"addi\t{A_ROWS[i]}, {A_ROWS[i]}, {4 * steps}")

        def load_k():
            self.ins(f"ld\t{KI}, {K_SLOT}({WS})")
            if sk.fault == "drop-k":
                self.ins(f"addi\t{KI}, {KI}, -1")

        def k_loop():
            """K / k_unroll unrolled iterations, then the steps left; with
            K from the header (perhaps no iteration), those in a loop of
            single steps."""
            if sk.dynamic_k:
                load_k()
                self.ins(f"srli\t{KI}, {KI}, "
                         f"{self.k_unroll.bit_length() - 1}")
                skip = self.labels.reserve()
                self.ins(f"beqz\t{KI}, {skip}f")
                iterations, rest = None, 0
            else:
                iterations, rest = divmod(sk.k_steps, self.k_unroll)
                if iterations:
                    self.ins(f"li\t{KI}, {iterations}")
            if iterations != 0:
                loop = self.label("k")
                # llvm-mca reads the vector type from these comments.
                marked = self.mark_inner_loop(sk, rows, widths, [
                    f"# LLVM-MCA-RISCV-LMUL M{self.lmul}",
                    "# LLVM-MCA-RISCV-SEW E32"])
                k_steps(self.k_unroll)
                advance_a(self.k_unroll)
                self.ins(f"addi\t{KI}, {KI}, -1")
                if marked:
                    self.end_inner_loop()
                self.ins(f"bnez\t{KI}, {loop}b")
            if sk.dynamic_k:
                self.lines.append(f"{skip}:")
                load_k()
                self.ins(f"andi\t{KI}, {KI}, {self.k_unroll - 1}")
                done = self.labels.reserve()
                self.ins(f"beqz\t{KI}, {done}f")
                tail = self.label("a k of the tail")
                k_steps(1)
                advance_a(1)
                self.ins(f"addi\t{KI}, {KI}, -1")
                self.ins(f"bnez\t{KI}, {tail}b")
                self.lines.append(f"{done}:")
            if rest:
                k_steps(rest)

        if not sk.gathers_a:
            k_loop()
        else:
            # Once per filter tap: A's row pointers the block's pixels plus
            # the tap's offset (LDA, unused by a convolution, walks the tap
            # table).
            self.ws_address(LDA, sk.tap_table)
            tap = self.label("a filter tap")
            self.ins(f"ld\t{CROW}, 0({LDA})")
            self.ins(f"addi\t{LDA}, {LDA}, 8")
            for i in range(rows):
                self.ins(f"ld\t{A_ROWS[i]}, {8 * i}({ABLOCK})")
                self.ins(f"add\t{A_ROWS[i]}, {A_ROWS[i]}, {CROW}")
            k_loop()
            self.ws_address(TMP, sk.tap_table + 8 * sk.taps)
            self.ins(f"sub\t{TMP}, {LDA}, {TMP}")
            self.loop_back_unless_zero(TMP, tap)

        self.store_c(sk, rows, nv, acc, b_reg, offsets)

    def store_c(self, sk, rows, nv, acc, b_reg, offsets):
        """C (+)= the block's accumulators, row by row, with the epilogue:
        + the column bias (a vector loaded from the panel's cursor, BPTR)
        or the row's (a scalar), relu and its bound (relu_lines; with a
        floor other than 0, clamp_lines; a floor a NaN takes,
        nan_to_floor_lines) or leaky relu (leaky_relu_lines). B's
        registers are free: each vector's serves as its scratch."""
        if sk.bias == "columns":
            self.ins(f"ld\t{BPTR}, {COLUMN_BIAS_SLOT}({WS})")
        if sk.bias == "rows":
            self.ins(f"ld\t{BPTR}, {ROW_BIAS_SLOT}({WS})")
        if sk.relu_nan_to_floor:
            # vfmax.vf gives the floor for a NaN, as asked: no tricks (the
            # floor 0 here, another below).
            if sk.relu_min is None:
                self.ins(f"fmv.w.x\t{F_FLOOR}, zero")
        elif sk.relu_max is not None or sk.relu_min is not None:
            self.ins(f"li\t{KI}, {INF_BITS}")
        for value, reg in ((sk.relu_max, F_BOUND), (sk.relu_min, F_FLOOR),
                           (sk.leaky_slope, F_FLOOR)):
            if value is not None:
                self.ins(f"li\t{TMP}, {float_bits(value)}")
                self.ins(f"fmv.w.x\t{reg}, {TMP}")
        self.ins(f"mv\t{CROW}, {CBLOCK}")
        for i in range(rows):
            if i:
                self.ins(f"add\t{CROW}, {CROW}, {LDC}")
            if sk.bias == "rows":
                self.ins(f"flw\t{F_ROW_BIAS}, {4 * i}({BPTR})")
            for v in range(nv):
                if offsets[v]:
                    self.ins(f"addi\t{TMP}, {CROW}, {offsets[v]}")
                    addr = TMP
                else:
                    addr = CROW
                if not sk.overwrite:
                    self.ins(f"vle32.v\t{b_reg(v)}, ({addr})")
                    self.ins(f"vfadd.vv\t{acc(i, v)}, {acc(i, v)}, "
                             f"{b_reg(v)}")
                if sk.bias == "columns":
                    # A's row pointers are free: the first addresses the
                    # vector's bias (TMP may hold C's address).
                    bias = BPTR
                    if offsets[v]:
                        bias = A_ROWS[0]
                        self.ins(f"addi\t{bias}, {BPTR}, {offsets[v]}")
                    self.ins(f"vle32.v\t{b_reg(v)}, ({bias})")
                    self.ins(f"vfadd.vv\t{acc(i, v)}, {acc(i, v)}, "
                             f"{b_reg(v)}")
                if sk.bias == "rows":
                    self.ins(f"vfadd.vf\t{acc(i, v)}, {acc(i, v)}, "
                             f"{F_ROW_BIAS}")
                bound = F_BOUND if sk.relu_max is not None else None
                if sk.relu and sk.relu_nan_to_floor:
                    lines = nan_to_floor_lines(acc(i, v), F_FLOOR, bound)
                elif sk.relu and sk.relu_min is None:
                    lines = relu_lines(acc(i, v), b_reg(v), bound, KI)
                elif sk.relu:
                    lines = clamp_lines(acc(i, v), b_reg(v), KI, F_FLOOR,
                                        bound)
                elif sk.leaky_slope is not None:
                    lines = leaky_relu_lines(acc(i, v), b_reg(v), F_FLOOR,
                                             sk.leaky_slope)
                else:
                    lines = []
                for line in lines:
                    self.ins(line)
                self.ins(f"vse32.v\t{acc(i, v)}, ({addr})")


def emit(request):
    fields = parse_request(request, "rvv", extra_fields=("vlen", "lmul"))
    vlen = int_field(request, "vlen", default=128)
    if vlen not in VLENS:
        raise RequestError(f"vlen must be one of 128, 256, 512, 1024, got "
                           f"{vlen}")
    lmul = int_field(request, "lmul", default=1)
    if lmul not in LMULS:
        raise RequestError(f"lmul must be 1, 2, 4 or 8, got {lmul}")
    k_unroll = int_field(request, "k_unroll", default=1)
    if k_unroll not in K_UNROLLS:
        raise RequestError(f"k_unroll must be 1, 2, 4 or 8, got {k_unroll}")
    lanes = vlen * lmul // 32
    nr = int_field(request, "nr")
    if nr % lanes:
        raise RequestError(
            f"nr = {nr} must be a multiple of {lanes} (f32 lanes of a "
            f"LMUL {lmul} group at VLEN {vlen})")
    extra = (f"zvl{vlen}b",) if vlen > 128 else ()
    RVV.check_target_features(request, extra)
    sk = Sketch(lanes=lanes, nv=nr // lanes, k_unroll=k_unroll, **fields)
    groups = RVV.registers // lmul
    needed = registers_needed(sk.mr, sk.nv, 0)
    if needed > groups:
        raise RequestError(
            f"a {sk.mr}x{nr} register block needs {needed} register groups "
            f"(accumulators and B vectors); LMUL {lmul} gives {groups}")
    symbol = (f"{sk.symbol_stem()}_{sk.mr}x{nr}_m{lmul}"
              f"_ku{k_unroll}{blocking_suffix(sk)}{fault_suffix(sk)}"
              f"_riscv64_rvv_vlen{vlen}")
    return kernel_text(sk, RvvWriter(vlen, lmul, k_unroll), symbol, request,
                       LP64D)

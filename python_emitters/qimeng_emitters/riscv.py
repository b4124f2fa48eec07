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
from .smooth import Const, VALUES, constants_used, program
from .sketch import (COLUMN_BIAS_SLOT, EDGE_LANES_SLOT, NestRegisters,
                     RUNTIME_LANES, ROW_BIAS_SLOT, Sketch, Writer,
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
# A smooth activation's constants (smooth.program's, at most 21), each in
# a float register for the .vf forms: A's, relu's (not with one), then
# ft8-ft11 and the callee-saved fs0 and fs1, which the function form saves.
SMOOTH_F = (F_BANKS[1] + ("ft0",) + tuple(f"ft{i}" for i in range(2, 12))
            + ("fs0", "fs1"))
F_SAVED = ("fs0", "fs1")
# Scratch vectors of a smooth activation, at LMUL 1 past the accumulators:
# smooth.program's a, b and t, and one for a Horner step's constant.
SMOOTH_TEMPS = 4

#: The nest's scalar operations that are one fixed instruction sequence
#: (sketch.Writer.scalar_forms); {tmp} is TMP.
SCALAR_FORMS = {
    "load": ("ld\t{reg}, {offset}({base})",),
    "store": ("sd\t{reg}, {offset}({base})",),
    "load_next": ("ld\t{reg}, 0({pointer})", "addi\t{pointer}, {pointer}, 8"),
    "store_next": ("sd\t{reg}, 0({pointer})",
                   "addi\t{pointer}, {pointer}, 8"),
    "move": ("mv\t{dst}, {src}",),
    "add": ("add\t{dst}, {a}, {b}",),
    "sub": ("sub\t{dst}, {a}, {b}",),
    "mul": ("mul\t{dst}, {a}, {b}",),
    "add_shifted": ("slli\t{tmp}, {b}, {shift}", "add\t{dst}, {a}, {tmp}"),
    "mul_add": ("mul\t{tmp}, {a}, {b}", "add\t{dst}, {c}, {tmp}"),
    "shift_left": ("slli\t{dst}, {src}, {bits}",),
    "shift_right": ("srli\t{dst}, {src}, {bits}",),
    "and_imm": ("andi\t{dst}, {src}, {mask}",),
    "div_rem": ("divu\t{quotient}, {x}, {divisor}",
                "remu\t{x}, {x}, {divisor}"),
    "copy_f32": ("add\t{index}, {index}, {base}", "flw\tft0, 0({index})",
                 "fsw\tft0, 0({dst})"),
    "store_zero_f32": ("sw\tzero, 0({pointer})",),
    "jump": ("j\t{number}{direction}",),
    "decrement": ("addi\t{reg}, {reg}, -1",),
}


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


def nan_mark_lines(mark, x, inf):
    """`mark` = all ones in the lanes where vector `x` is a NaN, zero
    elsewhere (`inf` an x register holding INF_BITS): x's bits without the
    sign, less +inf's (unsigned, saturating), are above zero for a NaN
    alone; negated, their sign spread makes the mark."""
    return [f"vsll.vi\t{mark}, {x}, 1",
            f"vsrl.vi\t{mark}, {mark}, 1",
            f"vssubu.vx\t{mark}, {mark}, {inf}",
            f"vrsub.vx\t{mark}, {mark}, zero",
            f"vsra.vi\t{mark}, {mark}, 31"]


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
    out = nan_mark_lines(tmp, acc, inf) + [
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


class RvvWriter(Writer):
    """Writes the sketch's loops and microkernel in RVV 1.0."""

    isa = RVV
    conv = LP64D
    comment_prefix = "#"
    runtime_lanes = True
    regs = NestRegisters(
        a=A, b=B, c=C, ws=WS, lda=LDA, ldb=LDB, ldc=LDC, jr=JR, ir=IR, ki=KI,
        bpanel=BPANEL, cpanel=CPANEL, ablock=ABLOCK, cblock=CBLOCK,
        bptr=BPTR, crow=CROW, a_step=A_STEP, c_step=None, a_rows=A_ROWS,
        zero="zero")

    def __init__(self, vlen, lmul, k_unroll):
        super().__init__(k_unroll)
        self.isa_vector_bits = vlen
        self.lmul = lmul
        self.lanes = vlen * lmul // 32

    def split_width(self, width):
        return [width]

    # -- scalar operations (sketch.Writer); TMP is their scratch ----------

    scalar_forms = SCALAR_FORMS
    scalar_tmp = TMP

    def set(self, reg, value):
        self.ins(f"li\t{reg}, {value}")

    def add_imm(self, reg, value, scratch=None):
        if -2048 <= value < 2048:
            if value:
                self.ins(f"addi\t{reg}, {reg}, {value}")
        else:
            self.set(TMP, value)
            self.add(reg, reg, TMP)

    def ws_address(self, reg, offset, scratch=None):
        if -2048 <= offset < 2048:
            self.ins(f"addi\t{reg}, {WS}, {offset}")
        else:
            self.set(TMP, offset)
            self.add(reg, WS, TMP)

    def jump_unless(self, condition, number):
        """Forward to label `number` unless `condition` (a branch to 1f)
        holds; a jal reaches past any body (a conditional branch only 4
        KiB)."""
        taken = self.labels.reserve()
        self.ins(condition.format(f"{taken}f"))
        self.jump(number, "f")
        self.place(taken)

    def skip_if_zero(self, reg, number, near=False):
        if near:
            self.ins(f"beqz\t{reg}, {number}f")
        else:
            self.jump_unless(f"bnez\t{reg}, {{}}", number)

    def skip_unless_equal(self, reg, value, number):
        self.set(TMP, value)
        self.jump_unless(f"beq\t{reg}, {TMP}, {{}}", number)

    def back_if_nonzero(self, reg, number, near=False):
        if near:
            self.ins(f"bnez\t{reg}, {number}b")
            return
        done = self.labels.reserve()
        self.ins(f"beqz\t{reg}, {done}f")
        self.jump(number, "b")
        self.place(done)

    def vector_zero(self, reg):
        self.ins(f"vmv.v.i\t{reg}, 0")

    def vreg(self, group):
        return f"v{group * self.lmul}"

    def smooth_registers(self):
        """The float registers the kernel's smooth activation keeps its
        constants in (none without one)."""
        sk = self.sketch
        if sk.smooth is None:
            return ()
        return SMOOTH_F[:len(constants_used(program(sk.smooth)))]

    def clobbers(self):
        extra = [r for r in self.smooth_registers()
                 if r not in F_BANKS[0] + F_BANKS[1]]
        return (list(USED_GPRS) + list(F_BANKS[0]) + list(F_BANKS[1])
                + extra + [f"v{i}" for i in range(32)] + ["vl", "vtype"]
                + list(self.conv.machine_state))

    def saved_float_registers(self):
        return [r for r in F_SAVED if r in self.smooth_registers()]

    def frame_bytes(self):
        """s1-s11, the float registers saved, 16-byte aligned."""
        return -(-8 * (len(SAVED) + len(self.saved_float_registers())) // 16
                 ) * 16

    def prologue(self):
        out = [f"\taddi\tsp, sp, -{self.frame_bytes()}"]
        out += [f"\tsd\t{r}, {8 * i}(sp)" for i, r in enumerate(SAVED)]
        out += [f"\tfsd\t{r}, {8 * (len(SAVED) + i)}(sp)"
                for i, r in enumerate(self.saved_float_registers())]
        return out

    def epilogue(self):
        out = [f"\tld\t{r}, {8 * i}(sp)" for i, r in enumerate(SAVED)]
        out += [f"\tfld\t{r}, {8 * (len(SAVED) + i)}(sp)"
                for i, r in enumerate(self.saved_float_registers())]
        out += [f"\taddi\tsp, sp, {self.frame_bytes()}", "\tret"]
        return out

    # -- the nest's vector parts: vl, B's copy, transposes -----------------

    def start_panel_vectors(self, panel):
        """One vl for the whole panel: its vectors are all as wide (the
        call's edge lanes for a RUNTIME_LANES panel)."""
        if panel.widths[0] == RUNTIME_LANES:
            self.load(TMP, EDGE_LANES_SLOT)
        else:
            self.ins(f"li\t{TMP}, {panel.widths[0]}")
        self.ins(f"vsetvli\tzero, {TMP}, e32, m{self.lmul}, ta, ma")

    def copy_b_panel(self, sk, panel):
        """B's rows (the K block's, ldb apart) of the panel's columns into
        the workspace, a packed row apart, each as long vectors (LMUL 8,
        vl from vsetvli). LDB then holds the packed row step; the panel's
        vl is set again after."""
        src, dst, ldb = self.start_packing(sk, panel, "pack B:")
        row_src, row_dst, left, vl, scratch = A_ROWS[3:8]
        self.set(KI, sk.k)
        row = self.label("pack B: a row")
        self.move(row_src, src)
        self.move(row_dst, dst)
        self.move(left, IR)
        chunk = self.label("pack B: as many as a vector holds")
        self.ins(f"vsetvli\t{vl}, {left}, e32, m8, ta, ma")
        self.ins(f"vle32.v\tv0, ({row_src})")
        self.ins(f"vse32.v\tv0, ({row_dst})")
        self.ins(f"sub\t{left}, {left}, {vl}")
        self.ins(f"slli\t{scratch}, {vl}, 2")
        self.ins(f"add\t{row_src}, {row_src}, {scratch}")
        self.ins(f"add\t{row_dst}, {row_dst}, {scratch}")
        self.back_if_nonzero(left, chunk, near=True)
        self.add(src, src, ldb)
        self.add(dst, dst, LDB)
        self.count_down(KI, row, near=True)
        self.start_panel_vectors(panel)

    def transpose_rows(self, src, stride, dst, step, length):
        """IR rows of `length` floats (a number, or a register holding it:
        a part's rows) (`src`, `stride` bytes apart) into columns of the
        destination (`dst`, rows `step` bytes apart): a row loaded as long
        vectors (LMUL 8, vl from vsetvli) and stored with a stride of one
        destination row (vsse32). Changes vtype; uses IR, v0 and the row
        pointers of A after the first three."""
        col_src, col_dst, left, vl, scratch = A_ROWS[3:8]
        column = self.label("transpose: a row")
        self.move(col_src, src)
        self.move(col_dst, dst)
        empty = None
        if isinstance(length, int):
            self.set(left, length)
        else:
            # An empty part copies nothing.
            empty = self.labels.reserve()
            self.move(left, length)
            self.skip_if_zero(left, empty, near=True)
        chunk = self.label("transpose: as many as a vector holds")
        self.ins(f"vsetvli\t{vl}, {left}, e32, m8, ta, ma")
        self.ins(f"vle32.v\tv0, ({col_src})")
        self.ins(f"vsse32.v\tv0, ({col_dst}), {step}")
        self.ins(f"sub\t{left}, {left}, {vl}")
        self.ins(f"slli\t{scratch}, {vl}, 2")
        self.ins(f"add\t{col_src}, {col_src}, {scratch}")
        self.ins(f"mul\t{scratch}, {vl}, {step}")
        self.ins(f"add\t{col_dst}, {col_dst}, {scratch}")
        self.back_if_nonzero(left, chunk, near=True)
        if empty is not None:
            self.place(empty)
        self.add(src, src, stride)
        self.add_imm(dst, 4, scratch=None)
        self.count_down(IR, column, near=True)

    def fault_segfault(self):
        self.ins(f"ld\t{TMP}, 0(zero)")

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
        self.start_block(sk, rows, [acc(i, v) for i in range(rows)
                                    for v in range(nv)])

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

        def steps(count, advance=True):
            k_steps(count)
            if advance:
                for i in range(rows):
                    self.add_imm(A_ROWS[i], 4 * count, scratch=None)

        # llvm-mca reads the vector type from these comments.
        self.k_loops(sk, rows, widths, steps, [
            f"# LLVM-MCA-RISCV-LMUL M{self.lmul}", "# LLVM-MCA-RISCV-SEW E32"])
        self.store_c(sk, rows, nv, acc, b_reg, offsets)

    def store_c(self, sk, rows, nv, acc, b_reg, offsets):
        """C (+)= the block's accumulators, row by row, with the epilogue:
        + the column bias (a vector loaded from the panel's cursor, BPTR)
        or the row's (a scalar), relu and its bound (relu_lines; with a
        floor other than 0, clamp_lines; a floor a NaN takes,
        nan_to_floor_lines) or leaky relu (leaky_relu_lines). B's
        registers are free: each vector's serves as its scratch."""
        if sk.bias == "columns":
            self.load(BPTR, COLUMN_BIAS_SLOT)
        if sk.bias == "rows":
            self.load(BPTR, ROW_BIAS_SLOT)
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
        if sk.smooth is not None:
            temps = self.smooth_setup(sk, rows, nv)
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
                if sk.smooth is not None:
                    self.smooth_group(sk, i * nv + v, temps)
                self.ins(f"vse32.v\t{acc(i, v)}, ({addr})")

    # -- smooth activations (smooth.program) --------------------------------

    # GPRs of the activation, free once the K loop is done: the panel's vl
    # while LMUL 1 computes, and vsetvli's result.
    SMOOTH_VL, SMOOTH_VLMAX = A_ROWS[1], A_ROWS[2]

    def smooth_setup(self, sk, rows, nv):
        """Before a block's activations: the constants into their float
        registers (SMOOTH_F), +inf's bits into KI (nan_mask), the panel's
        vl kept where LMUL is above 1; returns the scratch vectors, the
        first SMOOTH_TEMPS registers past the accumulators, which each
        group's activation uses at LMUL 1 (B's groups among them: each
        group's C and bias are added before its activation)."""
        first = rows * nv * self.lmul
        if first + SMOOTH_TEMPS > 32:
            raise RequestError(
                f"a {rows}-row block of {nv} LMUL {self.lmul} groups leaves "
                f"{32 - first} vector registers; {sk.smooth} needs "
                f"{SMOOTH_TEMPS}")
        self.smooth_f = {}
        for name, reg in zip(constants_used(program(sk.smooth)), SMOOTH_F):
            self.ins(f"li\t{TMP}, {float_bits(VALUES[name])}")
            self.ins(f"fmv.w.x\t{reg}, {TMP}")
            self.smooth_f[name] = reg
        if any(op[0] == "nan_mask" for op in program(sk.smooth)):
            self.ins(f"li\t{KI}, {INF_BITS}")
        if self.lmul > 1:
            self.ins(f"csrr\t{self.SMOOTH_VL}, vl")
        return [f"v{first + j}" for j in range(SMOOTH_TEMPS)]

    def smooth_group(self, sk, group, temps):
        """sk.smooth of accumulator group `group`, a register of it at a
        time at LMUL 1 (all of each: the lanes past vl are computed and not
        stored), then the panel's vl and LMUL again."""
        if self.lmul > 1:
            self.ins(f"vsetvli\t{self.SMOOTH_VLMAX}, zero, e32, m1, ta, ma")
        for j in range(self.lmul):
            self.smooth_activation(sk, f"v{group * self.lmul + j}", temps)
        if self.lmul > 1:
            self.ins(f"vsetvli\tzero, {self.SMOOTH_VL}, e32, "
                     f"m{self.lmul}, ta, ma")

    def smooth_activation(self, sk, x, temps):
        """Vector `x` = sk.smooth(x), smooth.program spelled in RVV: the
        constants as .vf operands, a Horner step a splat and a fused
        vfmadd. vfmin and vfmax drop a NaN: relu is relu_lines' (NaN
        kept), nan_mask nan_mark_lines (clamp_lines' sign trick)."""
        self.ins(f"# {sk.smooth}({x})")
        role = {"x": x, "a": temps[0], "b": temps[1], "t": temps[2]}
        spare = temps[3]
        f = self.smooth_f
        for op, d, *src in program(sk.smooth):
            dst = role[d]
            if op == "horner":
                var = role[src[0]]
                self.ins(f"vfmv.v.f\t{dst}, {f[src[1].name]}")
                for c in src[2:]:
                    self.ins(f"vfmv.v.f\t{spare}, {f[c.name]}")
                    self.ins(f"vfmadd.vv\t{dst}, {var}, {spare}")
            elif op == "nan_mask":
                for line in nan_mark_lines(dst, role[src[0]], KI):
                    self.ins(line)
            elif op == "or_mask":
                self.ins(f"vor.vv\t{dst}, {dst}, {role[src[0]]}")
            elif op == "relu":
                s = role[src[0]]
                self.ins(f"vfsub.vv\t{dst}, {s}, {s}")
                self.ins(f"vfmax.vv\t{dst}, {s}, {dst}")
                self.ins(f"vmax.vx\t{dst}, {dst}, zero")
            elif op == "exp2_bits":
                self.ins(f"vfcvt.x.f.v\t{dst}, {role[src[0]]}")
                self.ins(f"vsll.vi\t{dst}, {dst}, 23")
            elif op == "round":
                self.ins(f"vfcvt.x.f.v\t{dst}, {role[src[0]]}")
                self.ins(f"vfcvt.f.x.v\t{dst}, {dst}")
            elif op == "fms":
                self.ins(f"vfnmsac.vf\t{dst}, {f[src[1].name]}, "
                         f"{role[src[0]]}")
            elif op in ("neg", "abs"):
                s = role[src[0]]
                name = "vfsgnjn.vv" if op == "neg" else "vfsgnjx.vv"
                self.ins(f"{name}\t{dst}, {s}, {s}")
            elif op == "iadd":
                second = src[1]
                if isinstance(second, Const):
                    # Its bits: the float splat, added as integers.
                    self.ins(f"vfmv.v.f\t{spare}, {f[second.name]}")
                    second = spare
                else:
                    second = role[second]
                self.ins(f"vadd.vv\t{dst}, {role[src[0]]}, {second}")
            elif op == "fma":
                self.ins(f"vfmacc.vv\t{dst}, {role[src[0]]}, "
                         f"{role[src[1]]}")
            else:
                name = {"add": "vfadd", "sub": "vfsub", "mul": "vfmul",
                        "div": "vfdiv", "min": "vfmin", "max": "vfmax"}[op]
                first, second = src
                if isinstance(first, Const):
                    # c - v, c / v: the reversed forms.
                    name = {"vfsub": "vfrsub", "vfdiv": "vfrdiv"}[name]
                    self.ins(f"{name}.vf\t{dst}, {role[second]}, "
                             f"{f[first.name]}")
                elif isinstance(second, Const):
                    self.ins(f"{name}.vf\t{dst}, {role[first]}, "
                             f"{f[second.name]}")
                else:
                    self.ins(f"{name}.vv\t{dst}, {role[first]}, "
                             f"{role[second]}")


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

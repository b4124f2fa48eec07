"""AArch64: the NEON table row, the AAPCS64 calling convention and the NEON
instruction writer of the shared GEMM sketch (sketch.py).

The microkernel is the fmla-by-element form: a row of A is loaded four k at a
time into one q register, and each k step multiplies a row of B vectors by
one of its lanes. Column edges load narrower registers (q: 4 lanes, d: 2,
s: 1), so no edge needs packing or a workspace tile. The SVE writers (the
same loop nest; one vector length, or any: SveScalableWriter) follow.
"""

from .errors import RequestError
from .fields import int_field
from .isa import CallingConvention, VectorIsaRow
from .fields import float_bits
from .header import LD_OFFSET
from .smooth import Const, VALUES, constants_used, program
from .sketch import (COLUMN_BIAS_SLOT, COLUMNS_SLOT, EDGE_LANES_SLOT,
                     NestRegisters, RUNTIME_LANES, ROW_BIAS_SLOT, Panel,
                     Sketch, Writer, fault_suffix, blocking_suffix,
                     kernel_text, parse_request, registers_needed)

NEON = VectorIsaRow(name="neon", arch="aarch64", lanes=4, registers=32,
                    features=("neon",), vector_bits_fixed=False)

AAPCS64 = CallingConvention(
    name="aapcs64", args=("x0", "x1", "x2", "x3"),
    callee_saved=tuple(f"x{i}" for i in range(19, 29)),
    # x18 is the platform register, x29/x30 the frame and link registers.
    gprs=tuple(f"x{i}" for i in range(0, 18)) + tuple(
        f"x{i}" for i in range(19, 29)),
    machine_state=("nzcv",))

# Register map of the body.
A, B, C, WS = "x0", "x1", "x2", "x3"
LDA, LDB, LDC = "x4", "x5", "x6"
JR, IR, KI = "x7", "x8", "x9"
BPANEL, CPANEL, ABLOCK, CBLOCK = "x10", "x11", "x12", "x13"
BPTR, CROW = "x14", "x15"
A_STEP, C_STEP = "x16", "x17"      # MR rows of A and of C, in bytes
A_ROWS = tuple(f"x{i}" for i in range(19, 27))
USED_GPRS = ("x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11", "x12", "x13",
             "x14", "x15", "x16", "x17") + A_ROWS

#: Register form of a vector `width` lanes wide: (load/store prefix, the
#: arrangement fmla and fadd use, bytes).
WIDTH_FORMS = {4: ("q", "4s", 16), 2: ("d", "2s", 8), 1: ("s", None, 4)}

K_UNROLLS = (4, 8)

# The A64 mnemonics of smooth.program's ops that are one instruction on
# NEON and SVE alike (the forms differ: SVE's predicated ones).
SMOOTH_MNEMONICS = {"neg": "fneg", "abs": "fabs", "round": "frintn",
                    "add": "fadd", "sub": "fsub", "mul": "fmul",
                    "div": "fdiv", "min": "fmin", "max": "fmax",
                    "iadd": "add"}

# Scratch vectors of a smooth activation: smooth.program's a, b and t, and
# one for a constant or the other half of a Horner step (FMLA adds to its
# destination).
SMOOTH_TEMPS = 4

#: The nest's scalar operations that are one fixed instruction sequence
#: (sketch.Writer.scalar_forms).
SCALAR_FORMS = {
    "load": ("ldr\t{reg}, [{base}, #{offset}]",),
    "store": ("str\t{reg}, [{base}, #{offset}]",),
    "load_next": ("ldr\t{reg}, [{pointer}], #8",),
    "store_next": ("str\t{reg}, [{pointer}], #8",),
    "move": ("mov\t{dst}, {src}",),
    "add": ("add\t{dst}, {a}, {b}",),
    "sub": ("sub\t{dst}, {a}, {b}",),
    "mul": ("mul\t{dst}, {a}, {b}",),
    "add_shifted": ("add\t{dst}, {a}, {b}, lsl #{shift}",),
    "mul_add": ("madd\t{dst}, {a}, {b}, {c}",),
    "shift_left": ("lsl\t{dst}, {src}, #{bits}",),
    "shift_right": ("lsr\t{dst}, {src}, #{bits}",),
    "and_imm": ("and\t{dst}, {src}, #{mask}",),
    "div_rem": ("udiv\t{quotient}, {x}, {divisor}",
                "msub\t{x}, {quotient}, {divisor}, {x}"),
    "copy_f32": ("ldr\ts0, [{base}, {index}]", "str\ts0, [{dst}]"),
    "store_zero_f32": ("str\twzr, [{pointer}]",),
    "jump": ("b\t{number}{direction}",),
    "skip_unless_equal": ("cmp\t{reg}, #{value}", "b.ne\t{number}f"),
    "decrement": ("sub\t{reg}, {reg}, #1",),
}


def epilogue_registers(sk, rows, nv, acc, b_reg):
    """Vector registers for the epilogue of a `rows` x `nv` block, from
    those the accumulators (`acc(i, v)`) and B (`b_reg(v)`) leave: A's,
    free after the K loop, and the unused ones. Returns (a bias register
    per vector for a bias per column, else none; relu's floor (zero or
    relu_min), or leaky relu's slope; relu's bound; a row's bias for a
    bias per row; a smooth activation's SMOOTH_TEMPS scratch vectors),
    None (or none) where the epilogue has no use for one; refuses a block
    that leaves too few. B's registers serve as scratch too: each vector's
    C and bias are added before its activation."""
    used = {acc(i, v) for i in range(rows) for v in range(nv)} | {
        b_reg(v) for v in range(nv)}
    free = [r for r in range(32) if r not in used]
    columns, row = sk.bias == "columns", sk.bias == "rows"
    floor = sk.relu or sk.leaky_slope is not None
    wanted = ((nv if columns else 0) + int(floor)
              + int(sk.relu_max is not None) + int(row))
    temps = SMOOTH_TEMPS if sk.smooth is not None else 0
    if wanted > len(free) or wanted + temps > len(free) + nv:
        raise RequestError(
            f"a {rows}-row block of {nv} vectors leaves {len(free)} vector "
            f"registers for its epilogue, which needs {wanted}"
            + (f" and {temps} more for {sk.smooth}" if temps else ""))
    take = iter(free + [b_reg(v) for v in range(nv)])
    bias_v = [next(take) for _ in range(nv)] if columns else []
    zero = next(take) if floor else None
    bound = next(take) if sk.relu_max is not None else None
    row_bias = next(take) if row else None
    return (bias_v, zero, bound, row_bias,
            [next(take) for _ in range(temps)])


def leaky_choice(sk):
    """Leaky relu's instruction: of x and slope * x the larger for a slope
    below 1, else the smaller (both NaN where x is: FMAX and FMIN keep
    it)."""
    return "fmax" if sk.leaky_slope < 1.0 else "fmin"


def chunk_steps(chunk):
    """The microkernel's `steps` (sketch.Writer.k_loop) from its `chunk`:
    chunk(4) writes four k steps (A's rows loaded four k at a time),
    chunk(1) one; each moves A's row pointers on (post-increment loads)."""
    def steps(count, advance=True):
        for _ in range(count // 4):
            chunk(4)
        for _ in range(count % 4):
            chunk(1)
    return steps


def split_width(width):
    """NEON loads 4, 2 or 1 lanes: 3 is a d and an s register."""
    return {1: [1], 2: [2], 3: [2, 1]}[width]


class NeonWriter(Writer):
    """Writes the sketch's loops and microkernel in AArch64 NEON."""

    isa = NEON
    conv = AAPCS64
    comment_prefix = "//"
    regs = NestRegisters(
        a=A, b=B, c=C, ws=WS, lda=LDA, ldb=LDB, ldc=LDC, jr=JR, ir=IR, ki=KI,
        bpanel=BPANEL, cpanel=CPANEL, ablock=ABLOCK, cblock=CBLOCK,
        bptr=BPTR, crow=CROW, a_step=A_STEP, c_step=C_STEP, a_rows=A_ROWS,
        zero="xzr")

    split_width = staticmethod(split_width)

    def clobbers(self):
        return (list(USED_GPRS) + [f"v{i}" for i in range(32)]
                + list(self.conv.machine_state))

    def prologue(self):
        return ["\tstp\tx19, x20, [sp, #-128]!",
                "\tstp\tx21, x22, [sp, #16]",
                "\tstp\tx23, x24, [sp, #32]",
                "\tstp\tx25, x26, [sp, #48]",
                "\tstp\td8, d9, [sp, #64]",
                "\tstp\td10, d11, [sp, #80]",
                "\tstp\td12, d13, [sp, #96]",
                "\tstp\td14, d15, [sp, #112]"]

    def epilogue(self):
        return ["\tldp\td14, d15, [sp, #112]",
                "\tldp\td12, d13, [sp, #96]",
                "\tldp\td10, d11, [sp, #80]",
                "\tldp\td8, d9, [sp, #64]",
                "\tldp\tx25, x26, [sp, #48]",
                "\tldp\tx23, x24, [sp, #32]",
                "\tldp\tx21, x22, [sp, #16]",
                "\tldp\tx19, x20, [sp], #128",
                "\tret"]

    # -- scalar operations (sketch.Writer) ---------------------------------

    scalar_forms = SCALAR_FORMS

    def set(self, reg, value):
        """movz/movk, no literal pool."""
        if value < (1 << 16):
            self.ins(f"mov\t{reg}, #{value}")
            return
        self.ins(f"movz\t{reg}, #{value & 0xffff}")
        for shift in (16, 32, 48):
            part = (value >> shift) & 0xffff
            if part:
                self.ins(f"movk\t{reg}, #{part}, lsl #{shift}")

    def add_imm(self, reg, value, scratch):
        if value < 0:
            self.ins(f"sub\t{reg}, {reg}, #{-value}")
        elif 0 < value < 4096:
            self.ins(f"add\t{reg}, {reg}, #{value}")
        elif value:
            self.set(scratch, value)
            self.add(reg, reg, scratch)

    def ws_address(self, reg, offset, scratch):
        self.move(reg, WS)
        self.add_imm(reg, offset, scratch)

    # CBZ and CBNZ reach 1 MiB: any body.
    def skip_if_zero(self, reg, number, near=False):
        self.ins(f"cbz\t{reg}, {number}f")

    def back_if_nonzero(self, reg, number, near=False):
        self.ins(f"cbnz\t{reg}, {number}b")

    # -- the nest's vector parts: B's copy, transposes ---------------------

    def copy_b_panel(self, sk, panel):
        """B's rows (the K block's, ldb apart) of the panel's columns into
        the workspace, a packed row apart: four floats at a time, then
        one. LDB then holds the packed row step; the row pointers of A
        and the K counter are free here."""
        src, dst, ldb = self.start_packing(sk, panel, "pack B:")
        row_src, row_dst, count = A_ROWS[3:6]
        self.set(KI, sk.k)
        row = self.label("pack B: a row")
        self.move(row_src, src)
        self.move(row_dst, dst)
        for lanes, reg in ((4, "q0"), (1, "s0")):
            skip = self.labels.reserve()
            if lanes == 4:
                self.shift_right(count, IR, 2)
            else:
                self.and_imm(count, IR, 3)
            self.skip_if_zero(count, skip)
            copy = self.label(f"pack B: {lanes} floats")
            self.ins(f"ldr\t{reg}, [{row_src}], #{4 * lanes}")
            self.ins(f"str\t{reg}, [{row_dst}], #{4 * lanes}")
            self.count_down(count, copy)
            self.place(skip)
        self.add(src, src, ldb)
        self.add(dst, dst, LDB)
        self.count_down(KI, row)

    def transpose_rows(self, src, stride, dst, step, length):
        """IR rows of `length` floats (a number, or a register holding it:
        a part's rows) (`src`, `stride` bytes apart) into columns of the
        destination (`dst`, rows `step` bytes apart): four of a row at a
        time, stored lane by lane a destination row apart. Uses IR, KI, v0
        and the row pointers of A after the first three."""
        col_src, col_dst = A_ROWS[3], A_ROWS[4]
        column = self.label("transpose: a row")
        self.move(col_src, src)
        self.move(col_dst, dst)

        def four():
            self.ins(f"ld1\t{{v0.4s}}, [{col_src}], #16")
            for lane in range(4):
                self.ins(f"st1\t{{v0.s}}[{lane}], [{col_dst}], {step}")

        def one():
            self.ins(f"ld1\t{{v0.s}}[0], [{col_src}], #4")
            self.ins(f"st1\t{{v0.s}}[0], [{col_dst}], {step}")

        def loop(name, body):
            """`body` KI times (KI at least 1)."""
            top = self.label(f"transpose: {name}")
            body()
            self.count_down(KI, top)

        if isinstance(length, int):
            if length // 4:
                self.set(KI, length // 4)
                loop("four", four)
            for _ in range(length % 4):
                one()
        else:
            # Run-time: length / 4 fours, then length % 4 ones, each loop
            # skipped at a count of 0.
            for count, name, body in (
                    (lambda: self.shift_right(KI, length, 2), "four", four),
                    (lambda: self.and_imm(KI, length, 3), "one", one)):
                skip = self.labels.reserve()
                count()
                self.skip_if_zero(KI, skip)
                loop(name, body)
                self.place(skip)
        self.add(src, src, stride)
        self.add_imm(dst, 4, scratch=None)
        self.count_down(IR, column)

    def fault_segfault(self):
        self.ins(f"mov\t{CROW}, #0")
        self.ins(f"ldr\t{CROW}, [{CROW}]")

    # -- the microkernel ----------------------------------------------------

    def microkernel(self, sk, rows, widths):
        nv = len(widths)
        acc = lambda i, v: i * nv + v
        a_reg = lambda i: rows * nv + i
        b_reg = lambda v: rows * nv + rows + v
        if registers_needed(rows, nv, rows) > 32:
            raise RequestError(f"a {rows}-row block of {nv} vectors needs "
                               f"{registers_needed(rows, nv, rows)} vector "
                               "registers; neon has 32")
        offsets = [sum(widths[:v]) * 4 for v in range(nv)]
        self.ins(f"// {rows} x {sum(widths)} block")
        self.start_block(sk, rows, [acc(i, v) for i in range(rows)
                                    for v in range(nv)])

        def k_step(lane):
            # Two q vectors of B in one ldp: a Neoverse-N1 load is two
            # micro-ops either way, and dispatch (three a cycle) is what
            # the FMAs otherwise wait on.
            v = 0
            while v < nv:
                if (v + 1 < nv and widths[v] == widths[v + 1] == 4
                        and offsets[v] <= 1008):
                    self.ins(f"ldp\tq{b_reg(v)}, q{b_reg(v + 1)}, "
                             f"[{BPTR}, #{offsets[v]}]")
                    v += 2
                    continue
                prefix = WIDTH_FORMS[widths[v]][0]
                self.ins(f"ldr\t{prefix}{b_reg(v)}, [{BPTR}, #{offsets[v]}]")
                v += 1
            self.ins(f"add\t{BPTR}, {BPTR}, {LDB}")
            for i in range(rows):
                for v, w in enumerate(widths):
                    arr = WIDTH_FORMS[w][1]
                    if arr:
                        self.ins(f"fmla\tv{acc(i, v)}.{arr}, v{b_reg(v)}.{arr},"
                                 f" v{a_reg(i)}.s[{lane}]")
                    else:
                        self.ins(f"fmla\ts{acc(i, v)}, s{b_reg(v)}, "
                                 f"v{a_reg(i)}.s[{lane}]")

        def chunk(lanes):
            prefix = "q" if lanes == 4 else "s"
            for i in range(rows):
                self.ins(f"ldr\t{prefix}{a_reg(i)}, [{A_ROWS[i]}], "
                         f"#{4 * lanes}")
            for lane in range(lanes):
                k_step(lane)

        self.k_loops(sk, rows, widths, chunk_steps(chunk))

        bias_v, zero, bound, row_bias, temps = epilogue_registers(
            sk, rows, nv, acc, b_reg)
        self.epilogue_setup(
            sk, [f"ldr\t{WIDTH_FORMS[w][0]}{reg}, [{BPTR}, #{offset}]"
                 for w, reg, offset in zip(widths, bias_v, offsets)],
            zero, bound)

        def op(name, reg, other, w):
            arr = WIDTH_FORMS[w][1]
            if arr:
                self.ins(f"{name}\tv{reg}.{arr}, v{reg}.{arr}, v{other}.{arr}")
            else:
                self.ins(f"{name}\ts{reg}, s{reg}, s{other}")

        self.ins(f"mov\t{CROW}, {CBLOCK}")
        for i in range(rows):
            if i:
                self.ins(f"add\t{CROW}, {CROW}, {LDC}")
            if sk.bias == "rows":
                self.ins(f"ld1r\t{{v{row_bias}.4s}}, [{BPTR}], #4")
            for v, w in enumerate(widths):
                prefix, arr, _ = WIDTH_FORMS[w]
                if not sk.overwrite:
                    self.ins(f"ldr\t{prefix}{b_reg(v)}, [{CROW}, "
                             f"#{offsets[v]}]")
                    op("fadd", acc(i, v), b_reg(v), w)
                if sk.bias != "none":
                    op("fadd", acc(i, v),
                       bias_v[v] if sk.bias == "columns" else row_bias, w)
                if sk.relu:
                    # FMAXNM gives the floor for a NaN.
                    op("fmaxnm" if sk.relu_nan_to_floor else "fmax",
                       acc(i, v), zero, w)
                if sk.relu_max is not None:
                    op("fmin", acc(i, v), bound, w)
                if sk.leaky_slope is not None:
                    # slope * x into the C load's register, then the larger
                    # (slope below 1) or the smaller: NaN where x is.
                    arr = WIDTH_FORMS[w][1]
                    self.ins(f"fmul\tv{b_reg(v)}.{arr}, v{acc(i, v)}.{arr}, "
                             f"v{zero}.{arr}" if arr else
                             f"fmul\ts{b_reg(v)}, s{acc(i, v)}, s{zero}")
                    op(leaky_choice(sk), acc(i, v), b_reg(v), w)
                if sk.smooth is not None:
                    self.smooth_activation(sk, acc(i, v), temps)
                self.ins(f"str\t{prefix}{acc(i, v)}, [{CROW}, #{offsets[v]}]")

    def epilogue_setup(self, sk, column_loads, zero, bound):
        """Before a block stores C: the column bias of each vector
        (`column_loads`: the loads from BPTR, the panel's bias), relu's
        floor (zero, or relu_min) or leaky relu's slope in `zero`, the
        bound for relu_max; for a row bias
        BPTR points at the block's first row's. FMAX of -0 and +0 is +0,
        as arith.maximumf's; with another floor -0 stays -0, as there."""
        if sk.bias == "columns":
            self.load(BPTR, COLUMN_BIAS_SLOT)
            for load in column_loads:
                self.ins(load)
        if sk.bias == "rows":
            self.load(BPTR, ROW_BIAS_SLOT)
        if sk.relu and sk.relu_min is None:
            self.vector_zero(zero)
        elif sk.relu or sk.leaky_slope is not None:
            self.set(KI, float_bits(
                sk.relu_min if sk.relu else sk.leaky_slope))
            self.vector_splat(zero, f"w{KI[1:]}")
        if sk.relu_max is not None:
            self.set(KI, float_bits(sk.relu_max))
            self.vector_splat(bound, f"w{KI[1:]}")
        if sk.smooth is not None:
            self.ins(f"adr\t{KI}, {self.smooth_table}b")

    # -- smooth activations (smooth.program) --------------------------------

    def smooth_constants(self, sk):
        """The activation's constants as data at the body's start, jumped
        over; the epilogue points KI at them (adr) and loads each where it
        is used (load_constant)."""
        names = constants_used(program(sk.smooth))
        over = self.labels.reserve()
        self.jump(over, "f")
        self.ins(".p2align\t4")
        self.smooth_table = self.label(f"{sk.smooth}'s constants")
        self.smooth_offsets = {}
        for i, name in enumerate(names):
            self.smooth_offsets[name] = i * self.constant_bytes
            bits = float_bits(VALUES[name])
            self.ins(".long\t" + ", ".join(
                [f"{bits:#010x}"] * (self.constant_bytes // 4)))
        self.place(over)

    #: A constant's bytes in the table: a q register's (ldr q fills one).
    constant_bytes = 16

    def load_constant(self, reg, name):
        self.ins(f"ldr\tq{reg}, [{KI}, #{self.smooth_offsets[name]}]")

    def smooth_activation(self, sk, x, temps):
        """Vector `x` = sk.smooth(x), smooth.program through the four
        `temps` (the program's a, b and t, and a spare for a constant or a
        Horner step: FMLA adds to its destination, so each step loads the
        next coefficient into the spare, which then becomes the
        polynomial's register). FMIN and FMAX keep a NaN, so every op
        does: nan_mask and or_mask are nothing here. smooth_op and
        smooth_fmla spell the rest (NEON here, SVE below)."""
        self.ins(f"// {sk.smooth}({self.vector_name(x)})")
        role = {"x": x, "a": temps[0], "b": temps[1], "t": temps[2]}
        spare = temps[3]

        def reg(operand):
            if isinstance(operand, Const):
                self.load_constant(spare, operand.name)
                return spare
            return role[operand]

        for op, d, *src in program(sk.smooth):
            if op == "horner":
                var, dst = role[src[0]], role[d]
                self.load_constant(dst, src[1].name)
                for c in src[2:]:
                    self.load_constant(spare, c.name)
                    self.smooth_fmla(spare, dst, var)
                    dst, spare = spare, dst
                role[d] = dst
            elif op not in ("nan_mask", "or_mask"):
                # (At most one constant an op: the spare holds it.)
                self.smooth_op(op, role[d], [reg(s) for s in src])

    @staticmethod
    def vector_name(reg):
        return f"v{reg}"

    def smooth_fmla(self, acc, x, y):
        """acc += x * y, on whole q registers."""
        self.ins(f"fmla\tv{acc}.4s, v{x}.4s, v{y}.4s")

    def smooth_op(self, op, d, src):
        """One op of smooth.program (not horner) in NEON, on whole q
        registers: `d` and `src` register numbers."""
        v = [f"v{r}.4s" for r in [d] + src]
        if op == "relu":
            # max(x, +0): FMAX keeps a NaN.
            self.ins(f"movi\tv{d}.16b, #0")
            self.ins(f"fmax\t{v[0]}, {v[1]}, {v[0]}")
        elif op == "exp2_bits":
            self.ins(f"fcvtzs\t{v[0]}, {v[1]}")
            self.ins(f"shl\t{v[0]}, {v[0]}, #23")
        elif op == "fms":
            self.ins(f"fmls\t{v[0]}, {v[1]}, {v[2]}")
        elif op == "fma":
            self.smooth_fmla(d, *src)
        else:
            # One instruction: unary (neg, abs, round) or binary.
            self.ins(f"{SMOOTH_MNEMONICS[op]}\t" + ", ".join(v))

    def vector_zero(self, reg):
        self.ins(f"movi\tv{reg}.16b, #0")

    def vector_splat(self, reg, wreg):
        """Every f32 lane of vector `reg` = the bits in `wreg`."""
        self.ins(f"dup\tv{reg}.4s, {wreg}")


def emit(request):
    fields = parse_request(request, "neon")
    k_unroll = int_field(request, "k_unroll", default=4)
    if k_unroll not in K_UNROLLS:
        raise RequestError(f"k_unroll must be 4 or 8 on neon (A is loaded "
                           f"four k at a time), got {k_unroll}")
    nr = int_field(request, "nr")
    if nr % NEON.lanes:
        raise RequestError(f"nr = {nr} must be a multiple of 4 (f32 lanes "
                           "of neon)")
    NEON.check_target_features(request)
    sk = Sketch(lanes=NEON.lanes, nv=nr // NEON.lanes, k_unroll=k_unroll,
                **fields)
    needed = registers_needed(sk.mr, sk.nv, sk.mr)
    if needed > NEON.registers:
        raise RequestError(
            f"a {sk.mr}x{nr} register block needs {needed} vector registers "
            f"(accumulators, B vectors and one A register a row); neon has "
            f"{NEON.registers}")
    symbol = (f"{sk.symbol_stem()}_{sk.mr}x{nr}_ku{k_unroll}"
              f"{blocking_suffix(sk)}{fault_suffix(sk)}_aarch64_neon")
    return kernel_text(sk, NeonWriter(k_unroll), symbol, request, AAPCS64)



# -- SVE ---------------------------------------------------------------------

SVE = VectorIsaRow(name="sve", arch="aarch64", lanes=0, registers=32,
                   features=("sve",), vector_bits_fixed=True)
SVE_VLS = (128, 256, 512)
# Element offsets of a block's second and third B (and C) vectors: SVE's
# register-offset addressing, which does not scale with the hardware's
# vector length as `mul vl` immediates would.
B_OFFSETS = ("x27", "x28")
FULL, PARTIAL = "p0", "p1"


class SveWriter(NeonWriter):
    """The NEON loop nest with an SVE microkernel, built for one vector
    length: A four k at a time replicated into every 128-bit segment
    (ld1rqw) and multiplied by lane (indexed fmla); B and C through
    predicates, `ptrue ... vlN` for whole vectors (so a kernel built for 256
    bits stays correct on a longer machine) and `whilelt` for the last
    columns, which therefore need no special code."""

    isa = SVE
    runtime_lanes = True

    def __init__(self, vl_bits, k_unroll):
        super().__init__(k_unroll)
        self.isa_vector_bits = vl_bits
        self.lanes = vl_bits // 32

    def split_width(self, width):
        return [width]

    def clobbers(self):
        return (list(USED_GPRS) + list(B_OFFSETS)
                + [f"z{i}" for i in range(32)] + [FULL, PARTIAL]
                + list(self.conv.machine_state))

    def prologue(self):
        return (["\tstp\tx27, x28, [sp, #-16]!"] + super().prologue())

    def epilogue(self):
        return (super().epilogue()[:-1]
                + ["\tldp\tx27, x28, [sp], #16", "\tret"])

    def block_predicates(self, widths):
        """The predicate of each B (and C) vector of a block: `ptrue vlN`
        for whole vectors, `whilelt` for the last partial one; A's FULL;
        the second and third vectors' element offsets."""
        pred = [FULL if w == self.lanes else PARTIAL for w in widths]
        self.ins(f"ptrue\t{FULL}.s, vl{self.lanes}")
        if PARTIAL in pred:
            if widths[-1] == RUNTIME_LANES:
                self.load(CROW, EDGE_LANES_SLOT)
            else:
                self.set(CROW, widths[-1])
            self.ins(f"whilelt\t{PARTIAL}.s, xzr, {CROW}")
        for v in range(1, len(widths)):
            self.set(B_OFFSETS[v - 1], sum(widths[:v]))
        return pred

    def vector_zero(self, reg):
        self.ins(f"mov\tz{reg}.s, #0")

    def vector_splat(self, reg, wreg):
        self.ins(f"mov\tz{reg}.s, {wreg}")

    #: A constant's bytes in the table: one f32, which ld1rw broadcasts.
    constant_bytes = 4

    def load_constant(self, reg, name):
        self.ins(f"ld1rw\t{{z{reg}.s}}, {FULL}/z, "
                 f"[{KI}, #{self.smooth_offsets[name]}]")

    @staticmethod
    def vector_name(reg):
        return f"z{reg}"

    def smooth_fmla(self, acc, x, y):
        self.ins(f"fmla\tz{acc}.s, {FULL}/m, z{x}.s, z{y}.s")

    def smooth_op(self, op, d, src):
        """One op of smooth.program in SVE, under FULL (the block's whole
        vectors; lanes past the stored ones are computed too):
        unpredicated FADD, FSUB, FMUL and ADD, the others predicated and
        destructive (MOVPRFX first where the destination is not the first
        source; FDIVR where it is the second)."""
        z = [f"z{r}.s" for r in [d] + src]
        if op == "relu":
            self.ins(f"mov\t{z[0]}, #0")
            self.ins(f"fmax\t{z[0]}, {FULL}/m, {z[0]}, {z[1]}")
        elif op == "exp2_bits":
            self.ins(f"fcvtzs\t{z[0]}, {FULL}/m, {z[1]}")
            self.ins(f"lsl\t{z[0]}, {z[0]}, #23")
        elif op == "fms":
            self.ins(f"fmls\t{z[0]}, {FULL}/m, {z[1]}, {z[2]}")
        elif op == "fma":
            self.smooth_fmla(d, *src)
        elif op in ("neg", "abs", "round"):
            self.ins(f"{SMOOTH_MNEMONICS[op]}\t{z[0]}, {FULL}/m, {z[1]}")
        elif op in ("add", "sub", "mul", "iadd"):
            self.ins(f"{SMOOTH_MNEMONICS[op]}\t{z[0]}, {z[1]}, {z[2]}")
        else:
            name = SMOOTH_MNEMONICS[op]
            first, second = src
            if d == second and name == "fdiv":
                self.ins(f"fdivr\t{z[0]}, {FULL}/m, {z[0]}, {z[1]}")
                return
            assert d != second, (op, d, second)
            if d != first:
                self.ins(f"movprfx\tz{d}, z{first}")
            self.ins(f"{name}\t{z[0]}, {FULL}/m, {z[0]}, {z[2]}")

    def microkernel(self, sk, rows, widths):
        nv = len(widths)
        if nv > len(B_OFFSETS) + 1:
            raise RequestError(f"sve blocks have at most "
                               f"{len(B_OFFSETS) + 1} vectors, got {nv}")
        # The indexed fmla takes its multiplier from z0-z7: A first.
        a_reg = lambda i: i
        acc = lambda i, v: rows + i * nv + v
        b_reg = lambda v: rows + rows * nv + v
        if registers_needed(rows, nv, rows) > 32:
            raise RequestError(f"a {rows}-row block of {nv} vectors needs "
                               f"{registers_needed(rows, nv, rows)} vector "
                               "registers; sve has 32")
        self.ins(f"// {rows}-row block of {nv} vectors")
        pred = self.block_predicates(widths)

        def addr(base, v):
            return f"[{base}]" if v == 0 else \
                f"[{base}, {B_OFFSETS[v - 1]}, lsl #2]"

        self.start_block(sk, rows, [acc(i, v) for i in range(rows)
                                    for v in range(nv)])

        def k_step(lane):
            for v in range(nv):
                self.ins(f"ld1w\t{{z{b_reg(v)}.s}}, {pred[v]}/z, "
                         f"{addr(BPTR, v)}")
            self.ins(f"add\t{BPTR}, {BPTR}, {LDB}")
            for i in range(rows):
                for v in range(nv):
                    self.ins(f"fmla\tz{acc(i, v)}.s, z{b_reg(v)}.s, "
                             f"z{a_reg(i)}.s[{lane}]")

        def chunk(lanes):
            # Four k of a row replicated into each 128-bit segment, or one
            # broadcast into every lane (the K tail: no read past the row).
            op = "ld1rqw" if lanes == 4 else "ld1rw"
            for i in range(rows):
                self.ins(f"{op}\t{{z{a_reg(i)}.s}}, {FULL}/z, [{A_ROWS[i]}]")
                self.ins(f"add\t{A_ROWS[i]}, {A_ROWS[i]}, #{4 * lanes}")
            for lane in range(lanes):
                k_step(lane)

        self.k_loops(sk, rows, widths, chunk_steps(chunk))

        bias_v, zero, bound, row_bias, temps = epilogue_registers(
            sk, rows, nv, acc, b_reg)
        self.epilogue_setup(
            sk, [f"ld1w\t{{z{reg}.s}}, {pred[v]}/z, {addr(BPTR, v)}"
                 for v, reg in enumerate(bias_v)], zero, bound)

        self.ins(f"mov\t{CROW}, {CBLOCK}")
        for i in range(rows):
            if i:
                self.ins(f"add\t{CROW}, {CROW}, {LDC}")
            if sk.bias == "rows":
                self.ins(f"ld1rw\t{{z{row_bias}.s}}, {FULL}/z, [{BPTR}]")
                self.ins(f"add\t{BPTR}, {BPTR}, #4")
            for v in range(nv):
                a = f"z{acc(i, v)}.s"
                if not sk.overwrite:
                    self.ins(f"ld1w\t{{z{b_reg(v)}.s}}, {pred[v]}/z, "
                             f"{addr(CROW, v)}")
                    self.ins(f"fadd\t{a}, {a}, z{b_reg(v)}.s")
                if sk.bias != "none":
                    other = bias_v[v] if sk.bias == "columns" else row_bias
                    self.ins(f"fadd\t{a}, {a}, z{other}.s")
                # FMAX and FMIN keep a NaN; FMAXNM makes it the floor.
                if sk.relu:
                    name = "fmaxnm" if sk.relu_nan_to_floor else "fmax"
                    self.ins(f"{name}\t{a}, {FULL}/m, {a}, z{zero}.s")
                if sk.relu_max is not None:
                    self.ins(f"fmin\t{a}, {FULL}/m, {a}, z{bound}.s")
                if sk.leaky_slope is not None:
                    self.ins(f"fmul\tz{b_reg(v)}.s, {a}, z{zero}.s")
                    self.ins(f"{leaky_choice(sk)}\t{a}, {FULL}/m, {a}, "
                             f"z{b_reg(v)}.s")
                if sk.smooth is not None:
                    self.smooth_activation(sk, acc(i, v), temps)
                self.ins(f"st1w\t{{z{acc(i, v)}.s}}, {pred[v]}, "
                         f"{addr(CROW, v)}")


#: Predicates of a vector-length-agnostic block's B and C vectors.
SCALABLE_PREDICATES = ("p1", "p2", "p3")


class SveScalableWriter(SveWriter):
    """The SVE writer for any vector length (the hardware's, read at run
    time): one kind of column panel, NV vectors wide, stepping by NV
    vectors' lanes (`incw`) while columns are left; each vector's predicate
    is `whilelt` of its first column against N, so the last panel needs no
    code of its own; B and C advance by `addvl`, the vectors' element
    offsets come from `cntw`. Its K loop is not marked for the model (no
    fixed length to model)."""

    def __init__(self, k_unroll):
        super().__init__(128, k_unroll)
        self.isa_vector_bits = None

    def clobbers(self):
        return super().clobbers() + [p for p in SCALABLE_PREDICATES
                                     if p not in (FULL, PARTIAL)]

    def panel_plan(self, sk):
        return [Panel(count=0, widths=(0,) * sk.nv)]

    def column_counts(self, sk, cols, scratch):
        """One kind of panel, while columns are left: the call's columns
        into the header."""
        self.store(cols, COLUMNS_SLOT)

    def columns(self, reg, sk):
        """reg = N: the request's, or the call's (run-time N, a part)."""
        if sk.reads_columns:
            self.load(reg, COLUMNS_SLOT)
        else:
            self.set(reg, sk.n)

    def block_predicates(self, widths):
        self.ins(f"ptrue\t{FULL}.s")
        return list(SCALABLE_PREDICATES[:len(widths)])

    def panel_loop(self, sk, panel, body):
        nv = len(panel.widths)
        self.ins(f"// panels of {nv} vectors of the hardware's length")
        self.ins(f"mov\t{JR}, #0")
        for v in range(1, nv):
            self.ins(f"cntw\t{B_OFFSETS[v - 1]}, all, mul #{v}")
        loop = self.label("column panel")
        self.columns(CROW, sk)
        self.ins(f"whilelt\t{SCALABLE_PREDICATES[0]}.s, {JR}, {CROW}")
        for v in range(1, nv):
            self.ins(f"add\t{BPTR}, {JR}, {B_OFFSETS[v - 1]}")
            self.ins(f"whilelt\t{SCALABLE_PREDICATES[v]}.s, {BPTR}, "
                     f"{CROW}")
        self.panel_start(sk)
        body()
        self.panel_bias(sk, lambda: self.ins(
            f"addvl\t{CROW}, {CROW}, #{nv}"))
        if sk.gathers_b:
            pass  # the gather walked BPANEL through the panel's pixels
        elif sk.trans_b:
            # The next panel's columns are B^T's next NV x VL rows.
            self.load(BPTR, LD_OFFSET + 8)
            self.ins(f"cntw\t{CROW}, all, mul #{nv}")
            self.ins(f"mul\t{BPTR}, {BPTR}, {CROW}")
            self.ins(f"add\t{BPANEL}, {BPANEL}, {BPTR}, lsl #2")
        else:
            self.ins(f"addvl\t{BPANEL}, {BPANEL}, #{nv}")
        self.ins(f"addvl\t{CPANEL}, {CPANEL}, #{nv}")
        self.ins(f"incw\t{JR}, all, mul #{nv}")
        self.columns(CROW, sk)
        self.ins(f"cmp\t{JR}, {CROW}")
        self.ins(f"b.lt\t{loop}b")

    def packed_widths(self, sk, panel):
        """LDB = NV vectors' bytes (the packed row step); IR = the columns
        left, at most NV vectors' lanes."""
        nv = len(panel.widths)
        self.ins(f"cntb\t{LDB}, all, mul #{nv}")
        self.ins(f"cntw\t{BPTR}, all, mul #{nv}")
        self.columns(CROW, sk)
        self.ins(f"sub\t{CROW}, {CROW}, {JR}")
        self.ins(f"cmp\t{CROW}, {BPTR}")
        self.ins(f"csel\t{IR}, {CROW}, {BPTR}, lo")


def _sve_k_unroll(request):
    """The request's K unroll, one SVE takes (A loaded four k at a time)."""
    k_unroll = int_field(request, "k_unroll", default=4)
    if k_unroll not in K_UNROLLS:
        raise RequestError(f"k_unroll must be 4 or 8 on sve (A is loaded "
                           f"four k at a time), got {k_unroll}")
    return k_unroll


def _check_sve_block(sk, nr, block, registers_detail):
    """Refuses an SVE block of more B vectors than the writers address or
    more registers than SVE has; `block` names it in the message."""
    if sk.nv > len(B_OFFSETS) + 1:
        raise RequestError(f"sve blocks have at most {len(B_OFFSETS) + 1} "
                           f"vectors; nr = {nr} is {sk.nv}")
    needed = registers_needed(sk.mr, sk.nv, sk.mr)
    if needed > SVE.registers:
        raise RequestError(
            f"{block} needs {needed} vector registers{registers_detail}; "
            f"sve has {SVE.registers}")


def emit_sve(request):
    fields = parse_request(request, "sve", extra_fields=("vlen",))
    if request.get("vlen") == "scalable":
        return emit_sve_scalable(request, fields)
    vl = int_field(request, "vlen", default=128)
    if vl not in SVE_VLS:
        raise RequestError(f"vlen must be 128, 256, 512 or \"scalable\" on "
                           f"sve, got {vl}")
    k_unroll = _sve_k_unroll(request)
    lanes = vl // 32
    nr = int_field(request, "nr")
    if nr % lanes:
        raise RequestError(f"nr = {nr} must be a multiple of {lanes} (f32 "
                           f"lanes of sve at {vl} bits)")
    SVE.check_target_features(request)
    sk = Sketch(lanes=lanes, nv=nr // lanes, k_unroll=k_unroll, **fields)
    _check_sve_block(sk, nr, f"a {sk.mr}x{nr} register block",
                     " (accumulators, B vectors and one A register a row)")
    symbol = (f"{sk.symbol_stem()}_{sk.mr}x{nr}_ku{k_unroll}"
              f"{blocking_suffix(sk)}{fault_suffix(sk)}_aarch64_sve_vl{vl}")
    return kernel_text(sk, SveWriter(vl, k_unroll), symbol, request, AAPCS64)


def emit_sve_scalable(request, fields):
    """A vector-length-agnostic SVE kernel (vlen "scalable"): `nr` counts
    the block's columns at the least length, 128 bits (4 lanes a vector);
    the hardware's length scales them."""
    k_unroll = _sve_k_unroll(request)
    nr = int_field(request, "nr")
    if nr % 4:
        raise RequestError(f"nr = {nr} must be a multiple of 4 (f32 lanes "
                           "of a 128-bit vector, the least sve length)")
    SVE.check_target_features(request)
    sk = Sketch(lanes=4, nv=nr // 4, k_unroll=k_unroll, scalable=True,
                **fields)
    _check_sve_block(sk, nr, f"a {sk.mr}-row block of {sk.nv} vectors", "")
    symbol = (f"{sk.symbol_stem()}_{sk.mr}x{sk.nv}v_ku{k_unroll}"
              f"{blocking_suffix(sk)}{fault_suffix(sk)}_aarch64_sve_scalable")
    return kernel_text(sk, SveScalableWriter(k_unroll), symbol, request,
                       AAPCS64)

"""The GEMM sketch shared by every ISA writer, and the loop nest that drives a
writer through it.

libxsmm's generator and BLIS split a GEMM the same way: one description of
the blocking and the loops, and per-architecture code that only writes
instructions. Here the sketch is the register block (MR rows by a row of
vectors), the K unroll, the loop order (column panels outside, row blocks
inside, K innermost) and the edge plan: the column panels of the last
columns and the row block of the last rows, each a narrower instance of the
same microkernel. The Writer below writes the nest's bookkeeping once
(header slots, pointer steps, loop counts, the K loops around the
microkernel's steps) through scalar operations an ISA writer
(aarch64.NeonWriter, riscv.RvvWriter) spells, mostly as a table of
instruction forms; the ISA writer supplies the microkernel's steps and
epilogue and the copy loops of its vectors.

Kernels of this generator take their leading dimensions at run time from
the workspace header (docs/KernelContract.md, the runtime_ld form) and read
A in place: C[M x N] (+)= A[M x K] * op(B), row-major. B is read in place
too, unless it is stored transposed (trans_b: N x K, as a torch linear
layer's weights): then each column panel of B is first packed into the
workspace as K rows of the panel's width, where the microkernel reads it
as it reads B itself, only with the panel's width as the row step.

Loop nest, for each column panel kind (full panels, then the edge panels):

    for pc in 0..K step KC:                      K blocks (kc < K only)
      for jr in panels of that kind:             B columns j .. j + width
        [PACK B^T rows j .. j + width, k pc .. pc + KC -> workspace]
        for ir in 0..M - M % MR step MR:         full row blocks
          MICROKERNEL(MR rows, panel vectors, KC steps)
        MICROKERNEL(M % MR rows, panel vectors)  row edge, when M % MR

A static K may be blocked (`kc`, BLIS's pc loop): each K block runs the
whole nest over kc rows of B (columns of a transposed B), which stay in L1
across the row blocks, and A's kc columns. The first block overwrites C or
adds to it as the kernel does; the blocks after it add to C, and only the
last applies the epilogue. The nest is written three times at most: the
first block, a loop over the middle ones (its count in header slot
K_BLOCKS_SLOT), the last (perhaps shorter) one; between blocks A moves on
by kc columns and B by kc rows. A packed panel then holds kc rows.

With a run-time M (dynamic_m) the kernel reads rows [m_begin, m_end) from
the header (RANGE_OFFSET), keeps the number of full blocks and the rows of
the last one in its header slots, and chooses the row edge's microkernel
(one for each count below MR) at run time. With a run-time K (dynamic_k)
the K loop's iterations and the steps after them come from K in the
header (K_SLOT) at each call; B and A are read in place then (a packed or
copied operand would be sized by the request's k). With a run-time N
(dynamic_n) the kernel reads columns [n_begin, n_end) from the header,
moves B, C and the column bias to n_begin, and keeps the full panels'
count, the edge's whole vectors and its last vector's lanes in header
slots; the plan then has a panel kind for each edge the call may have
(one per count of whole vectors below NV, one per count of lanes below a
vector's where the ISA loads only fixed widths, or one whose lanes are
set at run time where its vectors take a length: RVV's vl, SVE's
predicates), each run when the call's edge is that one.

The parallel form of a GEMM or an nhwc convolution (parallel) computes
one part of C a call: it reads its rows [m_begin, m_end) and columns
[n_begin, n_end) from the header as the run-time M and N do, with M and N
static (an nhwc convolution's rows are its output pixels: the part's
first row block starts at its pixel's entry of the pixel table; an nchw
convolution's are its filters, and its parts take all of each image's
pixels, the header slots of a run-time N being its image loop's); the
caller runs
the parts (docs/KernelContract.md, Partition.h) on its threads, each with
a workspace of its own.

A convolution in an nhwc layout (kind sconv2d) is the same GEMM with A
gathered from the input as the loop goes: M = N*OH*OW output pixels, N = F
filters, K = KH*KW*C in (kh, kw, c) order, B the filter (HWCF: K x F as
stored; FHWC: F x K, the transposed form above), C the output. At entry
the kernel writes two tables into its workspace: each output pixel's
address in the input (its first tap, channel 0) and each filter tap's
offset from it. The microkernel's K loop then runs once per tap over the C
channels, the block's A row pointers set from the two tables; B and C walk
on unchanged.

In nchw_fchw (torch's layout) the pixels are B's columns instead: one GEMM
an image, M = F filters (A: the filter, F x K as stored), N = OH*OW, K =
C*KH*KW in (c, kh, kw) order, C the image's output. The tables hold each
k's offset in an image and each output pixel's; each column panel of B is
gathered from the image into the workspace (as a transposed B is packed)
before its row blocks run.

A convolution's geometry is immediate (qm.leading_dims: immediate): the
kernel writes its own leading dimensions into the header slots the runtime
form reads.
"""

from dataclasses import dataclass, replace

from .conv2d import GEOMETRY_FIELDS, conv_geometry
from .errors import RequestError
from .fields import (SMOOTH_FIELD, bool_field, check_known, int_field,
                     leaky_relu_field, relu_bounds, relu_nan_to_floor_field,
                     relu_suffix, round_up, smooth_activation_field)
from .header import (BIAS_OFFSET, HEADER_BYTES, K_SLOT, LD_OFFSET,
                     RANGE_OFFSET)
from .isa import Labels, kernel_file

# The workspace header's slots the caller writes (header.py:
# HEADER_BYTES, LD_OFFSET, RANGE_OFFSET, K_SLOT, BIAS_OFFSET); the
# kernel's own below.
# A static K blocked along K (Sketch.kc): the kernel's own count of the
# middle K blocks left, in the slot a run-time K would be read from.
K_BLOCKS_SLOT = K_SLOT
# Run-time M: the kernel's own header slots for its full row blocks and the
# rows of its last block, from m_end - m_begin.
ROW_BLOCKS_SLOT = 96
ROW_EDGE_SLOT = 104
# The kernel's own cursors into the epilogue's bias (BIAS_OFFSET): the
# column panel's bias and the row block's.
COLUMN_BIAS_SLOT = 88
ROW_BIAS_SLOT = 120
# An nchw convolution's image loop: the kernel's own slots for the image's
# input, the images left and the image's output.
IMAGE_SLOT = 0
IMAGES_LEFT_SLOT = 8
OUTPUT_SLOT = 16
# A run-time N's columns (a GEMM's; the same slots as a convolution's image
# loop): the full panels, the edge's whole vectors and its last vector's
# lanes; a vector-length-agnostic kernel keeps the call's columns instead.
FULL_PANELS_SLOT = 0
EDGE_VECTORS_SLOT = 8
EDGE_LANES_SLOT = 16
COLUMNS_SLOT = 0
# A panel's width in lanes that the call's edge gives (EDGE_LANES_SLOT).
RUNTIME_LANES = 0

# Test-only deliberately broken kernels: validation and isolation must catch
# each (under emulation as on the host).
FAULTS = (None, "drop-k", "write-past-edge", "segfault", "hang")

# Rows of a register block: each keeps a pointer to its row of A.
MAX_ROWS = 8

EPILOGUE_FIELDS = ("bias", "relu", "relu_min", "relu_max",
                   "relu_nan_to_floor", "leaky_relu", SMOOTH_FIELD)

#: Convolution layouts of this generator: A's rows are pixels (nhwc) or
#: B's columns are (nchw).
CONV_LAYOUTS = ("nhwc_hwcf", "nhwc_fhwc", "nchw_fchw")
# Filter taps of an nhwc kernel (the end of its tap table is an add
# immediate).
MAX_TAPS = 200
# f32 lanes of the longest scalable vector (SVE: 2048 bits), for the
# packed panel of a vector-length-agnostic kernel.
MAX_SCALABLE_LANES = 64


@dataclass(frozen=True)
class Panel:
    """Columns the microkernel covers at once: one vector per entry of
    `widths` (f32 lanes each, the last ones possibly partial; RUNTIME_LANES:
    the call's edge lanes), repeated `count` times side by side (None: the
    call's full panels, perhaps none). With `when` = (slot, value), the
    panel runs only when that header slot holds the value (None: anything
    but 0)."""
    count: object
    widths: tuple
    when: tuple = None

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
    trans_a: bool = False  # A stored K x M: transposed once at entry
    conv: object = None    # conv2d.ConvGeometry: A or B gathered
    dynamic_m: bool = False  # rows [m_begin, m_end) from the header
    dynamic_k: bool = False  # K from the header (K_SLOT)
    dynamic_n: bool = False  # columns [n_begin, n_end) from the header
    # The parallel form: rows [m_begin, m_end) and columns [n_begin, n_end)
    # of a static M and N from the header, one part of C a call.
    parallel: bool = False
    # Vector-length agnostic (SVE): `lanes` is the least length's (4); a
    # vector holds a multiple of it, known at run time.
    scalable: bool = False
    # The epilogue where C is stored: + bias[j] ("columns") or bias[i]
    # ("rows"), then relu (arith.maximumf(x, relu_min), relu_min None for
    # 0), then min(x, relu_max).
    bias: str = "none"
    relu: bool = False
    relu_min: object = None
    relu_max: object = None
    # relu makes a NaN its floor (torch-mlir's clamp) instead of keeping it.
    relu_nan_to_floor: bool = False
    # Leaky relu's slope instead of relu (x > 0 ? x : slope * x), or None.
    leaky_slope: object = None
    # Or a smooth activation (fields.SMOOTH_ACTIVATIONS; smooth.program,
    # which each writer spells), or None.
    smooth: object = None
    # K steps of one K block (0, or at least K: all of K in one).
    kc: int = 0
    # B as stored, copied a panel (a K block's rows) at a time into the
    # workspace, where the rows lie a panel's width apart (BLIS's packed
    # B): no row of the panel then shares a cache set with another.
    pack_b: bool = False

    @property
    def reads_rows(self):
        """The call's rows come from the header (run-time M, or a part)."""
        return self.dynamic_m or self.parallel

    @property
    def reads_columns(self):
        """The call's columns come from the header (run-time N, or a
        part; an nchw convolution's parts are whole images' pixels, whose
        header slots its image loop keeps)."""
        return self.dynamic_n or (self.parallel and not self.gathers_b)

    @property
    def k_blocked(self):
        """K runs in blocks of kc (BLIS's pc loop)."""
        return 0 < self.kc < self.k

    @property
    def depth(self):
        """Rows of B one run of the nest reads: a K block's, or all of
        K."""
        return self.kc if self.k_blocked else self.k

    def k_block_sketches(self):
        """A blocked K's nests: (first, middle, middle blocks, last). The
        first overwrites C or not as the kernel does, the others add to
        it; only the last applies the epilogue; the last takes the steps
        left (at most kc)."""
        blocks = -(-self.k // self.kc)
        first = replace(self, k=self.kc, kc=0, bias="none", relu=False,
                        relu_min=None, relu_max=None,
                        relu_nan_to_floor=False, leaky_slope=None,
                        smooth=None)
        last = replace(self, k=self.k - (blocks - 1) * self.kc, kc=0,
                       overwrite=False)
        return first, replace(first, overwrite=False), blocks - 2, last

    @property
    def has_epilogue(self):
        return (self.bias != "none" or self.relu
                or self.leaky_slope is not None or self.smooth is not None)

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
    def gathers_a(self):
        """An nhwc convolution: A's rows are output pixels."""
        return self.conv is not None and self.conv.nhwc

    @property
    def gathers_b(self):
        """An nchw convolution: B's columns are output pixels, gathered a
        panel at a time."""
        return self.conv is not None and not self.conv.nhwc

    @property
    def packs_b(self):
        """Each column panel of B is packed (copied or transposed) or
        gathered into the workspace before its row blocks."""
        return self.trans_b or self.gathers_b or self.pack_b

    @property
    def k_steps(self):
        """K steps of one run of the microkernel's K loop (one fewer under
        drop-k): all of K, or an nhwc convolution's C channels of one tap."""
        steps = self.conv.c if self.gathers_a else self.k
        return steps - 1 if self.fault == "drop-k" else steps

    # -- a convolution's workspace: header, tap table, pixel table, packed B

    @property
    def taps(self):
        """Entries of the tap table: the filter taps (nhwc), every k
        (nchw)."""
        return self.conv.kh * self.conv.kw if self.gathers_a else self.k

    @property
    def pixels(self):
        """Entries of the pixel table: every output pixel of the batch
        (nhwc), of one image (nchw)."""
        return self.m if self.gathers_a else self.conv.oh * self.conv.ow

    @property
    def tap_table(self):
        return HEADER_BYTES

    @property
    def pixel_table(self):
        return self.tap_table + round_up(self.taps * 8, 64)

    @property
    def packed_b(self):
        """Where B's panel is packed (transposed) or gathered."""
        if self.conv is None:
            return HEADER_BYTES
        return self.pixel_table + round_up(self.pixels * 8, 64)

    def tables(self):
        """A convolution's two tables as (workspace offset, levels,
        absolute): an int64 for each index of the levels ((count, bytes a
        step), outermost first), the sum of index x step, plus the input's
        address when absolute. nhwc: the taps' offsets (kh, kw) and the
        pixels' addresses (n, oh, ow); nchw: each k's offset in an image
        (c, kh, kw) and each pixel's (oh, ow)."""
        g = self.conv
        s0, s1, s2 = g.strides
        if g.nhwc:
            return [(self.tap_table, [(g.kh, 4 * g.dh * s1),
                                      (g.kw, 4 * g.dw * s2)], False),
                    (self.pixel_table, [(g.n, 4 * s0), (g.oh, 4 * g.sh * s1),
                                        (g.ow, 4 * g.sw * s2)], True)]
        return [(self.tap_table, [(g.c, 4 * s1), (g.kh, 4 * g.dh * s2),
                                  (g.kw, 4 * g.dw)], False),
                (self.pixel_table, [(g.oh, 4 * g.sh * s2),
                                    (g.ow, 4 * g.sw)], False)]

    def image_steps(self):
        """An nchw convolution's bytes from one image to the next: in the
        input and in the output."""
        g = self.conv
        return 4 * g.strides[0], 4 * g.f * g.oh * g.ow

    @property
    def output_floats(self):
        """The elements a convolution's whole output spans (an nhwc one's
        pixels output_pixel_stride apart)."""
        g = self.conv
        if g.nhwc:
            return (g.n * g.oh * g.ow - 1) * g.output_pixel_stride + g.f
        return g.n * g.oh * g.ow * g.f

    def immediate_lds(self):
        """A convolution's lda, ldb and ldc in elements, which its kernel
        writes into the header (a gathered operand's is not read): an nhwc
        output's rows (pixels) output_pixel_stride apart."""
        ldc = self.conv.output_pixel_stride if self.conv.nhwc else self.n
        return (self.k, self.k if self.trans_b else self.n, ldc)

    def symbol_stem(self):
        """The symbol up to the register block: the problem, its layout
        and overwrite."""
        b0 = "_b0" if self.overwrite else ""
        epilogue = (("_bias" if self.bias != "none" else "")
                    + relu_suffix(self.relu, self.relu_max, self.relu_min,
                                 self.relu_nan_to_floor, self.leaky_slope)
                    + (f"_{self.smooth}" if self.smooth else ""))
        if self.conv is not None:
            return f"{self.conv.symbol_stem()}{b0}{epilogue}"
        mrt = (("_mrt" if self.dynamic_m else "")
               + ("_nrt" if self.dynamic_n else "")
               + ("_krt" if self.dynamic_k else ""))
        return (f"qm_sgemm_{self.m}x{self.n}x{self.k}_{self.layout}{mrt}{b0}"
                f"{epilogue}_ldrt")

    def panels(self, split_width, runtime_lanes=False):
        """The column plan: full panels, then the edge columns as panels of
        whole vectors and a panel of the last partial vector, split into
        the widths the ISA can load (`split_width(w)`, e.g. NEON's 3 -> 2 +
        1). No panel has more vectors than the full one. With a run-time N,
        every edge the call may have, each when the call has it; the last
        vector's lanes at run time where the ISA can (`runtime_lanes`)."""
        if self.reads_columns:
            plan = [Panel(None, (self.lanes,) * self.nv)]
            plan += [Panel(1, (self.lanes,) * q, (EDGE_VECTORS_SLOT, q))
                     for q in range(1, self.nv)]
            if runtime_lanes:
                plan.append(Panel(1, (RUNTIME_LANES,),
                                  (EDGE_LANES_SLOT, None)))
            else:
                plan += [Panel(1, tuple(split_width(w)), (EDGE_LANES_SLOT, w))
                         for w in range(1, self.lanes)]
            return plan
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
        """The header, a convolution's tables, and when B is packed the
        panel: K (a K block's) rows of the widest panel's columns, rounded
        to 64 bytes."""
        return self.packed_a(split_width) + (
            round_up(self.m * self.k * 4, 64) if self.trans_a else 0)

    def packed_a(self, split_width):
        """Where a transposed A is copied, M rows of K (after B's panel)."""
        if not self.packs_b:
            return self.packed_b
        widest = (self.nv * MAX_SCALABLE_LANES if self.scalable else
                  max(p.columns for p in self.panels(split_width)))
        return self.packed_b + round_up(self.depth * widest * 4, 64)

    @property
    def layout(self):
        """The symbol's transposes: t for an operand stored transposed (A
        K x M, B N x K)."""
        return ("t" if self.trans_a else "n") + ("t" if self.trans_b else "n")


def registers_needed(rows, vectors, a_registers):
    """Vector registers (groups) of a block: the accumulators, one B vector
    per column vector, and `a_registers` for A."""
    return rows * vectors + vectors + a_registers


def parse_request(request, isa, extra_fields=()):
    """The fields every sketch-driven ISA shares, checked, for a GEMM
    (kind sgemm) or a convolution (kind sconv2d); returns the sketch's
    fields as a dict."""
    common = ("isa", "mr", "nr", "k_unroll", "overwrite", "fault",
              "target_features", "kc", "pack_b") + EPILOGUE_FIELDS + \
        ("parallel",) + tuple(extra_fields)
    if request.get("kind") == "sconv2d":
        check_known(request, common + GEOMETRY_FIELDS)
        for field in ("kc", "pack_b"):
            if field in request:
                raise RequestError(
                    f"isa {isa} convolutions run all of K (every filter "
                    f"tap) in one block, B packed as the layout needs: "
                    f"{field} is for a GEMM")
        g = conv_geometry(request, CONV_LAYOUTS, strided_output=True)
        if g.nhwc:
            fields = {"m": g.n * g.oh * g.ow, "n": g.f,
                      "k": g.kh * g.kw * g.c,
                      "trans_b": g.layout == "nhwc_fhwc", "conv": g}
        else:
            fields = {"m": g.f, "n": g.oh * g.ow, "k": g.c * g.kh * g.kw,
                      "conv": g}
        # A bias per output channel: B's columns (nhwc) or A's rows (nchw).
        fields["bias"] = ("none" if not bool_field(request, "bias")
                          else "columns" if g.nhwc else "rows")
        if g.nhwc and g.kh * g.kw > MAX_TAPS:
            raise RequestError(
                f"a {g.kh}x{g.kw} filter has more than {MAX_TAPS} taps")
    else:
        check_known(request, common + ("m", "n", "k", "trans_a", "trans_b",
                                       "dynamic_m", "dynamic_n",
                                       "dynamic_k", "runtime_ld"))
        if request.get("runtime_ld") is not True:
            raise RequestError(
                f"isa {isa} kernels read lda, ldb and ldc from the workspace "
                "header at run time: the request needs runtime_ld true")
        fields = {"m": int_field(request, "m"), "n": int_field(request, "n"),
                  "k": int_field(request, "k"),
                  "trans_b": bool_field(request, "trans_b"),
                  "trans_a": bool_field(request, "trans_a"),
                  "dynamic_m": bool_field(request, "dynamic_m"),
                  "dynamic_n": bool_field(request, "dynamic_n"),
                  "dynamic_k": bool_field(request, "dynamic_k"),
                  "bias": request.get("bias", "none")}
        if fields["dynamic_k"] and (fields["trans_a"] or fields["trans_b"]):
            raise RequestError(
                f"isa {isa} kernels pack a transposed operand into the "
                "workspace, sized by the request's k: dynamic_k needs A and B "
                "as stored (trans_a and trans_b false)")
        fields["kc"] = int_field(request, "kc", minimum=0, default=0)
        if fields["kc"] and fields["dynamic_k"]:
            raise RequestError(
                f"isa {isa} kernels block a static K: a run-time K "
                "(dynamic_k) runs in one block (no kc)")
        fields["pack_b"] = bool_field(request, "pack_b")
        if fields["pack_b"] and (fields["trans_b"] or fields["dynamic_k"]):
            raise RequestError(
                f"isa {isa} kernels pack B as stored, a panel of the "
                "request's k (or kc) rows: pack_b needs trans_b and "
                "dynamic_k false (a transposed B is packed anyway)")
        if fields["trans_a"] and fields["dynamic_m"]:
            raise RequestError(
                f"isa {isa} kernels copy a transposed A into the workspace "
                "whole, which a run-time M does not size: trans_a needs a "
                "static m")
        if fields["bias"] not in ("none", "columns", "rows"):
            raise RequestError("field 'bias' must be \"none\", "
                               "\"columns\" or \"rows\"")
    fault = request.get("fault")
    if fault not in FAULTS:
        raise RequestError(
            f"unknown fault {fault!r}; expected one of drop-k, "
            "write-past-edge, segfault, hang (test-only)")
    relu = bool_field(request, "relu")
    relu_min, relu_max = relu_bounds(request, relu)
    # The parallel form: parts of C, or of a convolution's GEMM view (nhwc:
    # pixels x filters; nchw: filters x an image's pixels, split by
    # filters).
    fields.update(mr=int_field(request, "mr"),
                  overwrite=bool_field(request, "overwrite"), fault=fault,
                  relu=relu, relu_min=relu_min, relu_max=relu_max,
                  relu_nan_to_floor=relu_nan_to_floor_field(request, relu),
                  leaky_slope=leaky_relu_field(request, relu),
                  parallel=bool_field(request, "parallel"))
    fields["smooth"] = smooth_activation_field(request, relu,
                                               fields["leaky_slope"])
    if fields["mr"] > MAX_ROWS:
        raise RequestError(
            f"mr = {fields['mr']} is more rows than the {MAX_ROWS} A row "
            "pointers the writers keep in registers")
    conv = fields.get("conv")
    steps = conv.c if conv is not None and conv.nhwc else fields["k"]
    if fault == "drop-k" and steps < 2:
        raise RequestError("fault drop-k needs k >= 2 (c >= 2 for a "
                           "convolution: it drops a k of each tap)")
    return fields


def _scalar_op(op, params, doc=None):
    """A Writer method writing the ISA's form of scalar operation `op`
    (Writer.scalar_forms), its operands named by `params` in order."""
    names = params.split()

    def write(self, *operands):
        if len(operands) != len(names):
            raise TypeError(f"{op} takes {len(names)} operands ({params}), "
                            f"got {len(operands)}")
        self.scalar(op, **dict(zip(names, operands)))
    write.__name__ = op
    write.__doc__ = doc
    return write


@dataclass(frozen=True)
class NestRegisters:
    """The general registers of an ISA writer's loop nest: the four
    arguments, the leading dimensions in bytes, the counters of the column
    panels (jr), row blocks (ir) and K (ki), the cursors of the panel and
    of the block in B, C and A, B's and C's within a block (bptr, crow,
    also the nest's scratch where they are free), MR rows of A and of C in
    bytes (c_step None: too few registers, the row loop adds ldc MR
    times), a pointer for each row of A, and the register that reads as
    zero."""
    a: str
    b: str
    c: str
    ws: str
    lda: str
    ldb: str
    ldc: str
    jr: str
    ir: str
    ki: str
    bpanel: str
    cpanel: str
    ablock: str
    cblock: str
    bptr: str
    crow: str
    a_step: str
    c_step: object
    a_rows: tuple
    zero: str


class Writer:
    """What every ISA writer shares: its lines, labels and K unroll, the
    inner loop it marks for the static performance model, and the loop
    nest's bookkeeping (header slots, pointer steps, loop counts, the
    packing of B's panels, the K loops around the microkernel's steps),
    written once here through the scalar operations each ISA spells
    (load, store, move, set, add ... back_if_nonzero below) on its
    register map (`regs`, NestRegisters). The ISA writes its microkernel's
    steps and epilogue, the copy and transpose loops of its vectors, its
    prologue and epilogue."""

    comment_prefix = "#"
    regs = None

    def __init__(self, k_unroll):
        self.k_unroll = k_unroll
        self.lines = []
        self.labels = Labels()
        # Flops of one iteration of the marked inner loop; None until one
        # is marked (the header's qm.inner_loop_flops).
        self.inner_loop_flops = None

    def ins(self, text):
        self.lines.append("\t" + text)

    def comment(self, text):
        self.ins(f"{self.comment_prefix} {text}")

    def label(self, comment):
        """A label placed here (its number, for a backward branch)."""
        return self.labels.place(self.lines, comment, self.comment_prefix)

    def place(self, number):
        """A reserved label (Labels.reserve) placed here."""
        self.lines.append(f"{number}:")

    #: Whether the ISA's vectors take a length at run time (a run-time N's
    #: last vector is one panel kind, not one per count of lanes).
    runtime_lanes = False

    def panel_plan(self, sk):
        """The column panels the loop nest runs (Sketch.panels)."""
        return sk.panels(self.split_width, self.runtime_lanes)

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

    # -- scalar operations, spelled by each ISA -----------------------------
    # On 64-bit integer registers. Those that are a fixed instruction
    # sequence are the ISA's table `scalar_forms` (op name -> lines, each
    # formatted with the op's operands and `tmp`, the ISA's scratch
    # register where it keeps one); set, add_imm, ws_address, skip_if_zero
    # and back_if_nonzero are the ISA's methods, as is any operation an ISA
    # writes around a branch of its own (RISC-V's skip_unless_equal).
    # `scratch` names a register free at that point for an ISA that needs
    # one (a large immediate); an ISA with a scratch of its own ignores it.
    # Labels are numbers (Labels); a branch `near` stays within a short
    # loop body.

    scalar_forms = {}
    scalar_tmp = None

    def scalar(self, op, **operands):
        for form in self.scalar_forms[op]:
            self.ins(form.format(tmp=self.scalar_tmp, **operands))

    def load(self, reg, offset, base=None):
        """reg = the 8 bytes at base + offset (base: the workspace)."""
        self.scalar("load", reg=reg, offset=offset, base=base or self.regs.ws)

    def store(self, reg, offset, base=None):
        """The 8 bytes at base + offset (base: the workspace) = reg."""
        self.scalar("store", reg=reg, offset=offset,
                    base=base or self.regs.ws)

    load_next = _scalar_op("load_next", "reg pointer",
                           "reg = the 8 bytes at pointer, then pointer += 8.")
    store_next = _scalar_op("store_next", "reg pointer",
                            "The 8 bytes at pointer = reg, then pointer += 8.")
    move = _scalar_op("move", "dst src")
    add = _scalar_op("add", "dst a b")
    sub = _scalar_op("sub", "dst a b")
    mul = _scalar_op("mul", "dst a b")
    add_shifted = _scalar_op("add_shifted", "dst a b shift",
                             "dst = a + (b << shift).")
    mul_add = _scalar_op("mul_add", "dst a b c", "dst = a * b + c.")
    shift_left = _scalar_op("shift_left", "dst src bits")
    shift_right = _scalar_op("shift_right", "dst src bits", "Logical.")
    and_imm = _scalar_op("and_imm", "dst src mask")
    div_rem = _scalar_op("div_rem", "quotient x divisor",
                         "quotient = x / divisor, then x = x % divisor "
                         "(unsigned).")
    copy_f32 = _scalar_op("copy_f32", "dst base index",
                          "The float at base + index to the one at dst "
                          "(index may be consumed).")
    store_zero_f32 = _scalar_op("store_zero_f32", "pointer")
    jump = _scalar_op("jump", "number direction",
                      'To label `number`, "f" forward or "b" back.')
    skip_unless_equal = _scalar_op(
        "skip_unless_equal", "reg value number",
        "Forward to label `number` unless reg holds `value` (a small "
        "immediate).")
    decrement = _scalar_op("decrement", "reg")

    def set(self, reg, value):
        """reg = value, any unsigned 64-bit immediate."""
        raise NotImplementedError

    def add_imm(self, reg, value, scratch):
        """reg += value (negative too)."""
        raise NotImplementedError

    def ws_address(self, reg, offset, scratch):
        """reg = the workspace's address + offset."""
        raise NotImplementedError

    def skip_if_zero(self, reg, number, near=False):
        """Forward to label `number` where reg is 0."""
        raise NotImplementedError

    def back_if_nonzero(self, reg, number, near=False):
        """Back to label `number` while reg is not 0."""
        raise NotImplementedError

    def count_down(self, reg, number, near=False):
        """reg -= 1, back to label `number` while it is not 0."""
        self.decrement(reg)
        self.back_if_nonzero(reg, number, near)

    def vector_zero(self, reg):
        """Every lane of vector register `reg` = 0."""
        raise NotImplementedError

    def start_panel_vectors(self, panel):
        """What the ISA's vectors need set for a panel's columns (RVV: its
        vl), at the panel loop's start and after packing changed it."""

    # -- the loop nest ------------------------------------------------------

    def smooth_constants(self, sk):
        """What the writer's smooth activation (sk.smooth) needs placed at
        the body's start: NEON's and SVE's table of constants; RVV keeps
        them in float registers."""

    def begin(self, sk):
        r = self.regs
        self.sketch = sk
        if sk.smooth is not None:
            self.smooth_constants(sk)
        if sk.conv is not None:
            self.conv_tables(sk)
        self.comment("leading dimensions from the workspace header, in "
                     "bytes")
        for i, reg in enumerate((r.lda, r.ldb, r.ldc)):
            self.load(reg, LD_OFFSET + 8 * i)
            self.shift_left(reg, reg, 2)
        if sk.trans_a:
            self.transpose_a(sk)
        self.set(r.a_step, sk.mr)
        if r.c_step is not None:
            self.mul(r.c_step, r.ldc, r.a_step)
        if sk.gathers_a:
            # A row block is MR entries of the pixel table.
            self.set(r.a_step, sk.mr * 8)
        else:
            self.mul(r.a_step, r.lda, r.a_step)
        if sk.reads_rows:
            self.runtime_rows(sk)
        if sk.reads_columns:
            self.runtime_columns(sk)
        if sk.bias == "columns":
            self.comment("the column panels' bias cursor")
            self.load(r.crow, BIAS_OFFSET)
            self.store(r.crow, COLUMN_BIAS_SLOT)

    def conv_tables(self, sk):
        """A convolution's entry: its leading dimensions into the header,
        then its tap and pixel tables (Sketch.tables), each by nested
        loops."""
        r = self.regs
        self.comment("convolution: leading dimensions, tap and pixel "
                     "tables")
        for i, value in enumerate(sk.immediate_lds()):
            self.set(r.crow, value)
            self.store(r.crow, LD_OFFSET + 8 * i)
        for offset, levels, absolute in sk.tables():
            self.fill_table(offset, levels, absolute)

    def fill_table(self, offset, levels, absolute):
        """The int64 table at workspace + offset: for each index of
        `levels` ((count, bytes a step), outermost first, at most three),
        the sum of index x step, plus the input's address (A) when
        `absolute`."""
        r = self.regs
        depth = len(levels)
        entry = r.a_rows[0]
        values, steps = r.a_rows[1:1 + depth], r.a_rows[4:4 + depth]
        counters = (r.ir, r.ki, r.bptr)[:depth]
        self.ws_address(entry, offset, scratch=r.crow)
        for (_, step), reg in zip(levels, steps):
            self.set(reg, step)
        self.move(values[0], r.a if absolute else r.zero)
        loops = []
        for d, (count, _) in enumerate(levels):
            if d:
                self.move(values[d], values[d - 1])
            self.set(counters[d], count)
            loops.append(self.label(f"table level {d}"))
        self.store_next(values[-1], entry)
        for d in reversed(range(depth)):
            self.add(values[d], values[d], steps[d])
            self.count_down(counters[d], loops[d], near=True)

    def transpose_a(self, sk):
        """A stored K x M (LDA bytes a row) copied once into the workspace
        as M rows of K (the parallel form: its part's rows [m_begin, m_end)
        alone, in their places); A and LDA then name the copy. The
        ISA's transpose_rows writes it (IR rows; JR, free before the
        panels, holds a part's row count)."""
        r = self.regs
        src, dst, step = r.a_rows[:3]
        offset = sk.packed_a(self.split_width)
        self.comment(f"A stored transposed: M x K copy at workspace + "
                     f"{offset}")
        self.move(src, r.a)
        self.ws_address(dst, offset, scratch=r.crow)
        self.set(step, sk.k * 4)
        length = sk.m
        if sk.reads_rows:
            # The part's rows: A^T's columns from m_begin, the copy's rows
            # from row m_begin.
            length = r.jr
            self.load(r.crow, RANGE_OFFSET)
            self.load(length, RANGE_OFFSET + 8)
            self.sub(length, length, r.crow)
            self.add_shifted(src, src, r.crow, 2)
            self.mul_add(dst, r.crow, step, dst)
        self.set(r.ir, sk.k)
        self.transpose_rows(src, r.lda, dst, step, length)
        self.ws_address(r.a, offset, scratch=r.crow)
        self.set(r.lda, sk.k * 4)

    def runtime_rows(self, sk):
        """Rows [m_begin, m_end) from the header: A and C start at row
        m_begin (an nhwc convolution's A at its pixel: panel_start); the
        full row blocks and the last block's rows go to the header's slots
        for every panel's row loops."""
        r = self.regs
        first, rows, blocks, mr = r.ir, r.ki, r.jr, r.crow
        self.comment("run-time M: rows m_begin .. m_end from the header")
        self.load(first, RANGE_OFFSET)
        self.load(rows, RANGE_OFFSET + 8)
        self.sub(rows, rows, first)
        if not sk.gathers_a:
            # An nchw convolution's A is the filter, its second argument.
            base = r.b if sk.gathers_b else r.a
            self.mul_add(base, first, r.lda, base)
        self.mul_add(r.c, first, r.ldc, r.c)
        self.set(mr, sk.mr)
        self.div_rem(blocks, rows, mr)
        self.store(blocks, ROW_BLOCKS_SLOT)
        self.store(rows, ROW_EDGE_SLOT)
        if sk.bias == "rows":
            # Row m_begin's bias first.
            self.load(mr, BIAS_OFFSET)
            self.add_shifted(mr, mr, first, 2)
            self.store(mr, BIAS_OFFSET)

    def runtime_columns(self, sk):
        """Columns [n_begin, n_end) from the header: B, C and the column
        bias start at column n_begin; the full panels, the edge's whole
        vectors and its last vector's lanes go to the header's slots for
        the panel plan (Sketch.panels)."""
        r = self.regs
        first, cols, full = r.ir, r.ki, r.jr
        self.comment("run-time N: columns n_begin .. n_end from the header")
        self.load(first, RANGE_OFFSET + 16)
        self.load(cols, RANGE_OFFSET + 24)
        self.sub(cols, cols, first)
        self.add_shifted(r.c, r.c, first, 2)
        if sk.trans_b:
            self.mul_add(r.b, first, r.ldb, r.b)
        else:
            self.add_shifted(r.b, r.b, first, 2)
        if sk.bias == "columns":
            self.load(r.crow, BIAS_OFFSET)
            self.add_shifted(r.crow, r.crow, first, 2)
            self.store(r.crow, BIAS_OFFSET)
        self.column_counts(sk, cols, full)

    def column_counts(self, sk, cols, scratch):
        """The panel plan's counts of the call's `cols` columns into the
        header (`cols` and `scratch` are consumed)."""
        r = self.regs
        self.set(r.crow, sk.nr)
        self.div_rem(scratch, cols, r.crow)
        self.store(scratch, FULL_PANELS_SLOT)
        self.shift_right(scratch, cols, sk.lanes.bit_length() - 1)
        self.store(scratch, EDGE_VECTORS_SLOT)
        self.and_imm(cols, cols, sk.lanes - 1)
        self.store(cols, EDGE_LANES_SLOT)

    def start_panels(self, sk):
        """The first column panel's B and C (an nchw convolution's come
        from its image loop)."""
        self.move(self.regs.bpanel, self.regs.b)
        self.move(self.regs.cpanel, self.regs.c)

    def next_k_block(self, sk):
        """A on by kc columns, B by kc rows (a transposed B's columns)."""
        r = self.regs
        self.comment(f"the next K block: A and B on by {sk.kc} k")
        self.add_imm(r.a, sk.kc * 4, scratch=r.crow)
        if sk.trans_b:
            self.add_imm(r.b, sk.kc * 4, scratch=r.crow)
        else:
            # ldb from the header: a copied panel's step may be in LDB.
            self.load(r.bptr, LD_OFFSET + 8)
            self.set(r.crow, sk.kc * 4)
            self.mul_add(r.b, r.crow, r.bptr, r.b)

    def count_down_slot(self, slot, loop):
        """The count in header slot `slot` less one, back to `loop` while
        it is not 0 (for loops around the whole nest, which uses every
        register)."""
        r = self.regs
        self.load(r.crow, slot)
        self.decrement(r.crow)
        self.store(r.crow, slot)
        self.back_if_nonzero(r.crow, loop)

    def k_block_loop(self, count, body):
        """`body` `count` times, the count in the header."""
        r = self.regs
        self.set(r.crow, count)
        self.store(r.crow, K_BLOCKS_SLOT)
        loop = self.label("a K block")
        body()
        self.count_down_slot(K_BLOCKS_SLOT, loop)

    def image_loop(self, sk, body):
        """An nchw convolution's images, one GEMM each: the image's input
        and output and the images left in the header's slots (the panel
        loops use every register); the panels start at the pixel table."""
        r = self.regs
        step_in, step_out = sk.image_steps()
        self.comment("nchw: a GEMM an image, B gathered from the image")
        self.store(r.a, IMAGE_SLOT)
        self.store(r.c, OUTPUT_SLOT)
        self.set(r.crow, sk.conv.n)
        self.store(r.crow, IMAGES_LEFT_SLOT)
        loop = self.label("an image")
        self.load(r.cpanel, OUTPUT_SLOT)
        self.ws_address(r.bpanel, sk.pixel_table, scratch=r.crow)
        body()
        for slot, step in ((IMAGE_SLOT, step_in), (OUTPUT_SLOT, step_out)):
            self.load(r.crow, slot)
            self.add_imm(r.crow, step, scratch=r.bptr)
            self.store(r.crow, slot)
        self.count_down_slot(IMAGES_LEFT_SLOT, loop)

    def when(self, slot, value, body):
        """`body` where the header's `slot` holds `value` (None: is not
        0)."""
        r = self.regs
        skip = self.labels.reserve()
        self.load(r.crow, slot)
        if value is None:
            self.skip_if_zero(r.crow, skip)
        else:
            self.skip_unless_equal(r.crow, value, skip)
        body()
        self.place(skip)

    def panel_loop(self, sk, panel, body):
        r = self.regs
        count = "the call's" if panel.count is None else panel.count
        self.comment(f"{count} panel(s) of {panel.columns} columns "
                     f"({'+'.join(map(str, panel.widths))})")
        self.start_panel_vectors(panel)
        loop = skip = None
        if panel.count is None:
            self.load(r.jr, FULL_PANELS_SLOT)
            skip = self.labels.reserve()
            self.skip_if_zero(r.jr, skip)
            loop = self.label("column panel")
        elif panel.count > 1:
            self.set(r.jr, panel.count)
            loop = self.label("column panel")
        self.panel_start(sk)
        body()
        if sk.gathers_b:
            pass  # the gather walked BPANEL through the panel's pixels
        elif sk.trans_b:
            # The next panel's columns are B^T's next rows.
            self.load(r.bptr, LD_OFFSET + 8)
            self.set(r.crow, panel.columns * 4)
            self.mul_add(r.bpanel, r.bptr, r.crow, r.bpanel)
        else:
            self.add_imm(r.bpanel, panel.columns * 4, scratch=r.crow)
        self.add_imm(r.cpanel, panel.columns * 4, scratch=r.crow)
        self.panel_bias(sk, lambda: self.add_imm(
            r.crow, panel.columns * 4, scratch=r.bptr))
        if loop is not None:
            self.count_down(r.jr, loop)
        if skip is not None:
            self.place(skip)

    def panel_start(self, sk):
        """A column panel's first row block: A's (the pixel table for an
        nhwc convolution, the filter for an nchw one), C's, and the rows'
        bias cursor."""
        r = self.regs
        if sk.gathers_a:
            self.ws_address(r.ablock, sk.pixel_table, scratch=r.crow)
            if sk.reads_rows:
                # A part's first pixel.
                self.load(r.crow, RANGE_OFFSET)
                self.add_shifted(r.ablock, r.ablock, r.crow, 3)
        else:
            # An nchw convolution's A is the filter, its second argument.
            self.move(r.ablock, r.b if sk.gathers_b else r.a)
        self.move(r.cblock, r.cpanel)
        self.panel_bias(sk)

    def panel_bias(self, sk, step=None):
        """At a panel's start (step None): the row blocks' bias cursor
        from the bias (rows); at its end: the column cursor `step` on (a
        callable that adds to CROW)."""
        r = self.regs
        if step is None and sk.bias == "rows":
            self.load(r.crow, BIAS_OFFSET)
            self.store(r.crow, ROW_BIAS_SLOT)
        if step is not None and sk.bias == "columns":
            self.load(r.crow, COLUMN_BIAS_SLOT)
            step()
            self.store(r.crow, COLUMN_BIAS_SLOT)

    def row_loop(self, count, rows, body):
        """`count` blocks of `rows` rows; count None: as many as the header
        says (run-time M), perhaps none."""
        r = self.regs
        skip = None
        if count is None:
            self.load(r.ir, ROW_BLOCKS_SLOT)
            skip = self.labels.reserve()
            self.skip_if_zero(r.ir, skip)
        else:
            self.set(r.ir, count)
        loop = self.label(f"{rows}-row block")
        body()
        self.add(r.ablock, r.ablock, r.a_step)
        if r.c_step is not None:
            self.add(r.cblock, r.cblock, r.c_step)
        else:
            for _ in range(rows):
                self.add(r.cblock, r.cblock, r.ldc)
        if self.sketch.bias == "rows":
            self.load(r.crow, ROW_BIAS_SLOT)
            self.add_imm(r.crow, rows * 4, scratch=r.bptr)
            self.store(r.crow, ROW_BIAS_SLOT)
        self.count_down(r.ir, loop)
        if skip is not None:
            self.place(skip)

    def row_edges(self, sk, microkernel):
        """Run-time M's last rows: the microkernel for the count in the
        header (none for 0)."""
        r = self.regs
        done = self.labels.reserve()
        # Loaded once: a count that does not match runs no microkernel.
        self.load(r.crow, ROW_EDGE_SLOT)
        for rows in range(1, sk.mr):
            other = self.labels.reserve()
            self.skip_unless_equal(r.crow, rows, other)
            microkernel(rows)
            self.jump(done, "f")
            self.place(other)
        self.place(done)

    # -- packing a panel of B ----------------------------------------------

    def pack_b_panel(self, sk, panel):
        """A panel of B into the workspace before its row blocks: gathered
        from an nchw convolution's image, packed from a transposed B, or
        copied (the ISA's copy_b_panel). LDB then holds the packed row
        step."""
        if sk.gathers_b:
            self.gather_b_panel(sk, panel)
        elif sk.trans_b:
            self.pack_bt_panel(sk, panel)
        else:
            self.copy_b_panel(sk, panel)

    def packed_widths(self, sk, panel):
        """For packing the panel: LDB = the packed row step, IR = the
        columns to pack (the call's edge lanes for a RUNTIME_LANES
        panel)."""
        r = self.regs
        if panel.widths == (RUNTIME_LANES,):
            self.load(r.ir, EDGE_LANES_SLOT)
            self.shift_left(r.ldb, r.ir, 2)
            return
        self.set(r.ldb, panel.columns * 4)
        self.set(r.ir, panel.columns)

    def start_packing(self, sk, panel, what):
        """The start of packing a panel of B (`what` names it): A's first
        three row pointers = the panel in B, its place in the workspace,
        ldb in bytes; LDB and IR as packed_widths sets them."""
        r = self.regs
        src, dst, ldb = r.a_rows[:3]
        self.comment(f"{what} {sk.k} x {panel.columns} at workspace + "
                     f"{sk.packed_b}")
        self.load(ldb, LD_OFFSET + 8)
        self.shift_left(ldb, ldb, 2)
        self.packed_widths(sk, panel)
        self.move(src, r.bpanel)
        self.ws_address(dst, sk.packed_b, scratch=r.a_rows[5])
        return src, dst, ldb

    def pack_bt_panel(self, sk, panel):
        """B^T's rows j .. j + width (each K floats, ldb apart) into the
        workspace as K rows of `width` floats, by the ISA's
        transpose_rows; the row pointers of A and the K and row counters
        are free here."""
        src, dst, ldb = self.start_packing(sk, panel, "pack B^T rows ->")
        self.transpose_rows(src, ldb, dst, self.regs.ldb, sk.k)
        self.start_panel_vectors(panel)

    def gather_b_panel(self, sk, panel):
        """An nchw convolution's B columns j .. j + width (output pixels)
        gathered from the image into the workspace as K rows of `width`
        floats, a pixel at a time: its offset from the pixel table
        (BPANEL walks it), each k's from the tap table."""
        r = self.regs
        image, column, taps, src, dst, offset = r.a_rows[:6]
        self.comment(f"gather B: {sk.k} x {panel.columns} at workspace + "
                     f"{sk.packed_b}")
        self.load(image, IMAGE_SLOT)
        self.packed_widths(sk, panel)
        self.ws_address(column, sk.packed_b, scratch=r.crow)
        pixel = self.label("gather: a pixel")
        self.load_next(src, r.bpanel)
        self.add(src, src, image)
        self.ws_address(taps, sk.tap_table, scratch=r.crow)
        self.move(dst, column)
        self.set(r.ki, sk.k)
        k = self.label("gather: a k")
        self.load_next(offset, taps)
        self.copy_f32(dst, src, offset)
        self.add(dst, dst, r.ldb)
        self.count_down(r.ki, k, near=True)
        self.add_imm(column, 4, scratch=None)
        self.count_down(r.ir, pixel, near=True)

    # -- around the microkernel's K steps -----------------------------------

    def start_block(self, sk, rows, accumulators):
        """A's row pointers and B's from the block's and the panel's (the
        packed panel where B is packed; a convolution sets A's per tap,
        k_loops), and the `accumulators` zeroed (the ISA's
        vector_zero)."""
        r = self.regs
        if not sk.gathers_a:
            self.move(r.a_rows[0], r.ablock)
            for i in range(1, rows):
                self.add(r.a_rows[i], r.a_rows[i - 1], r.lda)
        if sk.packs_b:
            self.ws_address(r.bptr, sk.packed_b, scratch=r.crow)
        else:
            self.move(r.bptr, r.bpanel)
        for reg in accumulators:
            self.vector_zero(reg)

    def k_loops(self, sk, rows, widths, steps, model_lines=()):
        """The block's K loop (k_loop); a convolution's once per filter
        tap, A's row pointers each time the block's pixels plus the tap's
        offset (LDA, unused by a convolution, walks the tap table)."""
        if not sk.gathers_a:
            self.k_loop(sk, rows, widths, steps, model_lines)
            return
        r = self.regs
        self.ws_address(r.lda, sk.tap_table, scratch=r.crow)
        loop = self.label("a filter tap")
        self.load_next(r.crow, r.lda)
        for i in range(rows):
            self.load(r.a_rows[i], 8 * i, base=r.ablock)
            self.add(r.a_rows[i], r.a_rows[i], r.crow)
        self.k_loop(sk, rows, widths, steps, model_lines)
        # Below 4096 (MAX_TAPS): no scratch register on any ISA.
        self.ws_address(r.crow, sk.tap_table + 8 * sk.taps, scratch=None)
        self.sub(r.crow, r.lda, r.crow)
        self.back_if_nonzero(r.crow, loop)

    def k_loop(self, sk, rows, widths, steps, model_lines=()):
        """The block's K steps: `steps(count)` writes `count` k steps of
        the microkernel and moves A's row pointers past them
        (`steps(count, advance=False)`: need not move them, none follow).
        k_unroll steps an iteration, marked for the model when the block
        is a full one (`model_lines` after the mark). With K from the
        header: K / k_unroll iterations (perhaps none), then K % k_unroll
        single steps in a loop of their own."""
        r = self.regs

        def load_k():
            self.load(r.ki, K_SLOT)
            if sk.fault == "drop-k":
                self.decrement(r.ki)

        if sk.dynamic_k:
            load_k()
            self.shift_right(r.ki, r.ki, self.k_unroll.bit_length() - 1)
            skip = self.labels.reserve()
            self.skip_if_zero(r.ki, skip, near=True)
            iterations, rest = None, 0
        else:
            iterations, rest = divmod(sk.k_steps, self.k_unroll)
            if iterations:
                self.set(r.ki, iterations)
        if iterations != 0:
            loop = self.label("k")
            marked = self.mark_inner_loop(sk, rows, widths, model_lines)
            steps(self.k_unroll)
            self.decrement(r.ki)
            if marked:
                self.end_inner_loop()
            self.back_if_nonzero(r.ki, loop, near=True)
        if sk.dynamic_k:
            self.place(skip)
            load_k()
            self.and_imm(r.ki, r.ki, self.k_unroll - 1)
            done = self.labels.reserve()
            self.skip_if_zero(r.ki, done, near=True)
            tail = self.label("a k of the tail")
            steps(1)
            self.count_down(r.ki, tail, near=True)
            self.place(done)
        if rest:
            steps(rest, advance=False)

    # -- the end ------------------------------------------------------------

    def end(self, sk):
        r = self.regs
        if sk.fault == "write-past-edge":
            # One float just past the last column of C's last row (past
            # a convolution's whole output).
            if sk.conv is not None:
                self.move(r.crow, r.c)
                self.add_imm(r.crow, sk.output_floats * 4, scratch=r.bptr)
            else:
                self.set(r.crow, sk.m - 1)
                self.mul_add(r.crow, r.crow, r.ldc, r.c)
                self.add_imm(r.crow, sk.n * 4, scratch=r.bptr)
            self.store_zero_f32(r.crow)

    def fault_hang(self):
        loop = self.label("hang")
        self.jump(loop, "b")


def blocking_suffix(sk):
    """The symbol's K block, where K is blocked, a copied B and the
    parallel form."""
    return ((f"_kc{sk.kc}" if sk.k_blocked else "")
            + ("_pb" if sk.pack_b else "") + ("_par" if sk.parallel else ""))


def fault_suffix(sk):
    """The symbol's mark of a test-only broken kernel."""
    return "" if sk.fault is None else "_fault_" + sk.fault.replace("-", "_")


def drive(sk, writer):
    """Writes the loop nest through `writer`: the same control structure on
    every ISA. Returns the body's assembly lines."""
    writer.begin(sk)
    if sk.k_blocked:
        first, middle, middles, last = sk.k_block_sketches()
        _nest(first, writer)
        writer.next_k_block(sk)
        if middles:
            def middle_block():
                _nest(middle, writer)
                writer.next_k_block(sk)
            writer.k_block_loop(middles, middle_block)
        _nest(last, writer)
    else:
        _nest(sk, writer)
    if sk.fault == "segfault":
        writer.fault_segfault()
    if sk.fault == "hang":
        writer.fault_hang()
    writer.end(sk)
    return writer.lines


def _nest(sk, writer):
    """The column panels and their row blocks, over `sk`'s K (a K
    block's when K is blocked)."""
    def panels():
        for panel in writer.panel_plan(sk):
            def run(panel=panel):
                writer.panel_loop(sk, panel,
                                  lambda: _panel_body(sk, writer, panel))
            if panel.when is None:
                run()
            else:
                writer.when(*panel.when, run)
    if sk.gathers_b:
        writer.image_loop(sk, panels)
    else:
        writer.start_panels(sk)
        panels()


def _panel_body(sk, writer, panel):
    if sk.packs_b:
        writer.pack_b_panel(sk, panel)
    if sk.reads_rows:
        # Full blocks as many as the header says, then the last rows: one
        # microkernel for each count below MR, chosen at run time.
        writer.row_loop(None, sk.mr, lambda: writer.microkernel(
            sk, sk.mr, panel.widths))
        writer.row_edges(sk, lambda rows: writer.microkernel(
            sk, rows, panel.widths))
        return
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
    if writer.isa.vector_bits_fixed and writer.isa_vector_bits:
        headers.append(f"# qm.vector_bits: {writer.isa_vector_bits}")
    if writer.inner_loop_flops:
        headers.append(f"# qm.inner_loop_flops: {writer.inner_loop_flops}")
    if sk.conv is None:
        summary = (f"C[{sk.m}x{sk.n}] {'=' if sk.overwrite else '+='} A * "
                   f"{'B^T' if sk.trans_b else 'B'}, K = {sk.k}")
    else:
        g = sk.conv
        summary = (f"output {'=' if sk.overwrite else '+='} conv2d "
                   f"{g.layout}: input {g.n}x{g.h}x{g.w}x{g.c}, {g.f} "
                   f"filters {g.kh}x{g.kw}, output {g.n}x{g.oh}x{g.ow}x{g.f}"
                   f" (GEMM {sk.m}x{sk.n}x{sk.k})")
    return kernel_file(
        comment=writer.comment_prefix,
        kind="sgemm" if sk.conv is None else "sconv2d", summary=summary,
        symbol=symbol, workspace_bytes=sk.workspace_bytes(writer.split_width),
        runtime_ld=sk.conv is None,
        runtime_sizes=tuple(name for name, dynamic in (
            ("m", sk.dynamic_m), ("n", sk.dynamic_n), ("k", sk.dynamic_k))
            if dynamic),
        args=conv.args, clobbers=writer.clobbers(),
        features=writer.isa.features, request=request, align=4,
        prologue=writer.prologue(), body=body, epilogue=writer.epilogue(),
        headers=headers)

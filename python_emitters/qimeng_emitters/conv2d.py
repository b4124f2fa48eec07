"""2-D convolution (f32) as an implicit GEMM on the SGEMM kernel's loops.

One request = one kernel for one convolution: output += conv(input, filter),
with the strides, dilations and layout baked in. Padding is the caller's:
the input is the padded buffer (or a strided view of one). The input's
outer strides are immediates (input_strides), or with runtime_strides read
from the workspace header at each call (three int64 elements at 64: the
n, h and w strides for nhwc, whose w stride must be C; the n, c and h
strides for nchw_fchw), so one kernel serves any view of the input.

    nhwc_hwcf: out[n, oh, ow, f] += in[n, oh*sh + kh*dh, ow*sw + kw*dw, c]
                                    * flt[kh, kw, c, f]
      GEMM M = N*OH*OW (output pixels), N = F, K = KH*KW*C (kh, kw, c).
      A (pixels x K) is gathered from the input; B is the filter as it is
      stored (a K x F row-major matrix); C is the output (ldc = F, or
      output_pixel_stride: the output a channel slice of a wider buffer,
      as a concatenation written in place makes it; symbol `_ldo<stride>`).
    nhwc_fhwc: the same with flt[f, kh, kw, c]: B is the filter transposed
      (an F x K row-major matrix, read as B^T with ldb = K).
    nchw_fchw: out[n, f, oh, ow] += in[n, c, oh*sh + kh*dh, ow*sw + kw*dw]
                                    * flt[f, c, kh, kw]
      Per image: GEMM M = F, N = OH*OW, K = C*KH*KW (c, kh, kw).
      A is the filter (an F x K row-major matrix); B (K x pixels) is
      gathered from the input; C is the image's output (ldc = OH*OW).

The gathered operand's element (k, r) sits at input + row[r] + col[k]
(bytes): both tables live in the workspace, and the kernel fills them at
each call. Its PACK gathers one kc x mc (or kc x nc) panel at a time into
the layout the COMPUTE microkernel reads, so the im2col matrix never exists
(docs/KernelContract.md, "Convolution").
"""

from dataclasses import dataclass

from .errors import RequestError
from .fields import (ACTIVATION_FIELDS, SMOOTH_FIELD, activation_suffix,
                     bool_field, check_known, int_field, round_up)
from .blis import KB, PC
from .header import LD_OFFSET
from .sgemm import Params, emit_row_zero, kernel_text
from .x86 import back, check_disp, fwd, xmm

LAYOUTS = ("nhwc_hwcf", "nhwc_fhwc", "nchw_fchw")

# Fields passed through to the GEMM underneath, as sgemm.py reads them.
GEMM_FIELDS = ("isa", "mr", "nr", "k_unroll", "kc", "mc", "nc", "prefetch_a",
               "prefetch_b", "order", "pack_b", "fuse_pack_b", "b_prepacked",
               "fault", "target_features", "parallel", "loop_order",
               "a_layout", "overwrite") + ACTIVATION_FIELDS + (SMOOTH_FIELD,)

# The convolution's scratch slots (bytes into its workspace region).
KEND_SLOT = 0     # address one past the panel's last column-table entry
VALID_SLOT = 8    # valid rows of an edge sliver
IMAGES_SLOT = 16  # images left in the batch (nchw_fchw)
COUNTER_SLOT = 24  # row counter of a scratch copy
BASE_SLOT = 32    # the sliver's base pointer (segmented K loop)
CONV_SCRATCH = 64
# nchw_fchw's PACK B on AVX-512: a piece is a pointer and lane masks (int64
# each); per vector of a sliver up to a piece a lane and the zero mask that
# ends them.
PIECE_BYTES = 16
PIECES_STEP = (16 + 1) * PIECE_BYTES
# runtime_strides: the table and image steps in bytes, computed at entry
# from the strides in the header (the scratch grows by these slots).
STEP_SLOTS = 64


#: The request fields of a convolution's geometry (conv_geometry).
GEOMETRY_FIELDS = ("layout", "n", "h", "w", "c", "f", "kh", "kw", "stride_h",
                   "stride_w", "dilation_h", "dilation_w", "input_strides",
                   "output_pixel_stride")


@dataclass(frozen=True)
class ConvGeometry:
    """A convolution's shape, checked: what every ISA's generator reads."""
    layout: str
    n: int
    h: int
    w: int
    c: int
    f: int
    kh: int
    kw: int
    sh: int
    sw: int
    dh: int
    dw: int
    oh: int
    ow: int
    strides: tuple  # input strides in elements: (n, h, w) or (n, c, h)
    dense: bool     # the strides of a contiguous input
    # nhwc: elements from one output pixel to the next (f: dense; more: a
    # channel slice of a wider output)
    output_pixel_stride: int

    @property
    def nhwc(self):
        return self.layout.startswith("nhwc")

    def symbol_stem(self, kind="sconv2d"):
        """qm_<kind>_<layout>_<input>_f<F>_k<KH>x<KW>_s.._d..[_is..]"""
        strides = "" if self.dense else "_is" + "x".join(
            str(v) for v in self.strides)
        ldo = ("" if self.output_pixel_stride == self.f
               else f"_ldo{self.output_pixel_stride}")
        return (f"qm_{kind}_{self.layout}"
                f"_{self.n}x{self.h}x{self.w}x{self.c}_f{self.f}"
                f"_k{self.kh}x{self.kw}_s{self.sh}x{self.sw}"
                f"_d{self.dh}x{self.dw}{strides}{ldo}")


def conv_geometry(request, layouts=LAYOUTS, strided_output=False):
    """The geometry fields of a convolution request, checked (`layouts`: the
    ones the caller generates; `strided_output`: whether it writes an nhwc
    output whose pixels are more than F apart, output_pixel_stride)."""
    layout = request.get("layout")
    if layout not in layouts:
        raise RequestError(
            f"unknown layout {layout!r}; expected one of "
            + ", ".join(layouts))
    n, h, w, c, f, kh, kw = (int_field(request, name) for name in
                             ("n", "h", "w", "c", "f", "kh", "kw"))
    sh = int_field(request, "stride_h", default=1)
    sw = int_field(request, "stride_w", default=1)
    dh = int_field(request, "dilation_h", default=1)
    dw = int_field(request, "dilation_w", default=1)
    span_h = dh * (kh - 1) + 1
    span_w = dw * (kw - 1) + 1
    if span_h > h or span_w > w:
        raise RequestError(
            f"a {kh}x{kw} filter with dilation {dh}x{dw} spans "
            f"{span_h}x{span_w}, more than the {h}x{w} input")
    nhwc = layout.startswith("nhwc")
    # Input strides in elements: (n, h, w) with unit c for nhwc_hwcf,
    # (n, c, h) with unit w for nchw_fchw; contiguous by default.
    dense = ((h * w * c, w * c, c) if nhwc else (c * h * w, h * w, w))
    strides = request.get("input_strides", list(dense))
    if (not isinstance(strides, list) or len(strides) != 3
            or not all(type(v) is int and v >= 1 for v in strides)):
        raise RequestError(
            "field 'input_strides' must be a list of three positive "
            "integers (elements)")
    s0, s1, s2 = strides
    inner = c if nhwc else w
    if s2 < inner or s1 < (w * s2 if nhwc else h * s2) or \
            s0 < (h * s1 if nhwc else c * s1):
        raise RequestError(
            f"input_strides {list(strides)} overlap for a "
            f"{n}x{h}x{w}x{c} input in {layout}")
    pixel_stride = int_field(request, "output_pixel_stride", default=f)
    if pixel_stride != f:
        if not strided_output or not nhwc:
            raise RequestError(
                "output_pixel_stride: this generator writes "
                + ("an nhwc" if nhwc else "every") + " output dense "
                "(pixels F apart)" + ("" if nhwc else "; the field is for "
                                      "nhwc outputs"))
        if pixel_stride < f:
            raise RequestError(
                f"output_pixel_stride {pixel_stride} overlaps the output's "
                f"{f} channels")
    return ConvGeometry(
        layout=layout, n=n, h=h, w=w, c=c, f=f, kh=kh, kw=kw, sh=sh, sw=sw,
        dh=dh, dw=dw, oh=(h - span_h) // sh + 1, ow=(w - span_w) // sw + 1,
        strides=tuple(strides), dense=tuple(strides) == dense,
        output_pixel_stride=pixel_stride)


def runtime_strides_field(request):
    """The request's `runtime_strides`, which excludes `input_strides`."""
    runtime = bool_field(request, "runtime_strides")
    if runtime and "input_strides" in request:
        raise RequestError(
            "runtime_strides reads the input's strides from the workspace "
            "header at each call; input_strides gives them as immediates: "
            "pass one or the other")
    return runtime


class StrideSteps:
    """The byte step of factor * strides[index] input elements (a call
    returns it): an immediate, or with run-time strides the operand of a
    workspace slot (from `first_slot`, 8 bytes each) that the kernel fills
    at entry (emit_gather_tables); `steps` lists those slots as (slot
    operand, header stride index, bytes per element of that stride)."""

    def __init__(self, geometry, element_bytes, runtime, first_slot):
        self.geometry, self.element_bytes = geometry, element_bytes
        self.runtime, self.first_slot = runtime, first_slot
        self.steps = []

    def __call__(self, index, factor):
        bytes_ = factor * self.element_bytes
        if not self.runtime:
            return bytes_ * self.geometry.strides[index]
        slot = f"{self.first_slot + 8 * len(self.steps)}(%rbx)"
        self.steps.append((slot, index, bytes_))
        return slot


def gather_dims(g, element_bytes, stride_step):
    """The gathered operand's rows (pixels) and columns (k) as offset-table
    dimensions [(count, byte step)], outer first: a step is bytes or, for a
    run-time stride, a slot (stride_step, a StrideSteps). With run-time
    strides the nhwc pixel step stays the immediate C."""
    eb, s2 = element_bytes, g.strides[2]
    if g.nhwc:
        return ([(g.n, stride_step(0, 1)), (g.oh, stride_step(1, g.sh)),
                 (g.ow, g.sw * s2 * eb)],
                [(g.kh, stride_step(1, g.dh)), (g.kw, g.dw * s2 * eb),
                 (g.c, eb)])
    return ([(g.oh, stride_step(2, g.sh)), (g.ow, g.sw * eb)],
            [(g.c, stride_step(1, 1)), (g.kh, stride_step(2, g.dh)),
             (g.kw, g.dw * eb)])


def contiguous_run(col_dims, element_bytes):
    """How many consecutive k lie in consecutive elements of the input (the
    innermost dimensions whose step is the run so far), e.g. C, or KW*C
    for nhwc with unit width dilation and dense pixels; a run-time step
    ends it (ConvDesc::contiguousRun)."""
    run = 1
    for count, step in reversed(col_dims):
        if count != 1 and step != run * element_bytes:
            break
        run *= count
    return run


def emit_gather_tables(asm, runtime_steps, tables):
    """The steps that depend on run-time strides (StrideSteps.steps), then
    each offset table [(workspace offset, dims)]: the gathered rows' and
    columns' byte offsets into the input, int64."""
    if runtime_steps:
        asm.comment("runtime_strides: the input's strides (elements, "
                    "header) -> the tables' and images' byte steps")
        for slot, index, factor in runtime_steps:
            asm.ins(f"imulq ${factor}, {LD_OFFSET + 8 * index}(%rbx), %rax")
            asm.ins(f"movq %rax, {slot}")
    asm.comment("offset tables of the gathered operand: row (pixel) "
                "and column (k) byte offsets into the input")
    for (offset, dims), name in zip(tables, ("row", "column")):
        asm.ins(f"leaq {offset}(%rbx), %rdi")
        _emit_offset_table(asm, name, dims)


def emit_next_image(asm, image_bytes, images_slot, image_loop):
    """nchw_fchw's image loop (sgemm.py's and dotgemm.py's bodies): the
    input (B, header slot 8) and output (C, slot 16) pointers moved on by
    `image_bytes` (the input's step an immediate or a run-time step's slot),
    then back to `image_loop` while the count in `images_slot` lasts."""
    input_bytes, output_bytes = image_bytes
    if isinstance(input_bytes, int):
        asm.ins(f"addq ${input_bytes}, 8(%rbx)")
    else:
        asm.ins(f"movq {input_bytes}, %rax")
        asm.ins("addq %rax, 8(%rbx)")
    asm.ins(f"addq ${output_bytes}, 16(%rbx)")
    asm.ins(f"decq {images_slot}(%rbx)")
    asm.ins(f"jnz {back(image_loop)}")


def emit_piece_table(asm, name, table, vectors, lanes, valid, input_slot,
                     lane_bytes, compress):
    """The pieces of a sliver of gathered pixels (nchw's PACK B, here and in
    dotgemm._emit_pack_gathered_b): for each of its `vectors` vectors of
    `lanes` lanes, the runs of lanes whose pixels lie `lane_bytes` apart in
    the input (one output row at a unit width stride, or 2 with
    `compress`; a lane each otherwise), each a pointer (input + row[first
    lane] - that lane's lane_bytes) and its lane mask at 8 (with
    `compress`, at 12 the mask of the elements a move loads: the even ones
    of twice its lanes), PIECE_BYTES an entry, at %rbx + table + v *
    PIECES_STEP, a zero mask after the last. %r12 points to the sliver's
    first row-table entry, `valid` is the operand of its pixels before the
    edge, `input_slot` the header slot of the input. Clobbers %rax, %rcx,
    %rdx, %rsi, %rdi, %r13, %r15."""
    for v in range(vectors):
        start = asm.label(f"{name}: vector {v}'s next piece")
        lane = asm.label(f"{name}: vector {v}'s next lane")
        close = asm.label(f"{name}: vector {v}'s last piece")
        end = asm.label(f"{name}: vector {v}'s pieces done")
        asm.comment(f"vector {v}'s pieces (lanes {lanes * v} ..)")
        asm.ins(f"leaq {table + v * PIECES_STEP}(%rbx), %rdi")
        asm.ins(f"movl ${lanes * v}, %r13d")
        asm.ins(f"cmpq {valid}, %r13")
        asm.ins(f"jae {fwd(end)}")
        asm.place(start)
        asm.comment("a piece from lane %r13: pointer, then its mask in %rsi; "
                    "%r15 = the input offset its next lane continues at")
        asm.ins("movq (%r12,%r13,8), %r15")
        asm.ins(f"leaq {-lanes * v}(%r13), %rax")
        if lane_bytes > 1:
            asm.ins(f"imulq ${lane_bytes}, %rax")
        asm.ins("movq %r15, %rcx")
        asm.ins("subq %rax, %rcx")
        asm.ins(f"addq {input_slot}(%rbx), %rcx")
        asm.ins("movq %rcx, (%rdi)")
        asm.ins("xorl %esi, %esi")
        if compress:
            asm.ins("xorl %edx, %edx")   # the load's mask: even elements
        asm.place(lane)
        asm.ins(f"leaq {-lanes * v}(%r13), %rcx")
        asm.ins("btsq %rcx, %rsi")
        if compress:
            asm.ins("addq %rcx, %rcx")
            asm.ins("btsq %rcx, %rdx")
        asm.ins("incq %r13")
        asm.ins(f"addq ${lane_bytes}, %r15")
        asm.ins(f"cmpq {valid}, %r13")
        asm.ins(f"jae {fwd(close)}")
        asm.ins(f"cmpq ${lanes * (v + 1)}, %r13")
        asm.ins(f"jae {fwd(close)}")
        asm.ins("cmpq (%r12,%r13,8), %r15")
        asm.ins(f"je {back(lane)}")

        def store_masks():
            asm.ins("movl %esi, 8(%rdi)")
            if compress:
                asm.ins("movl %edx, 12(%rdi)")
            asm.ins(f"addq ${PIECE_BYTES}, %rdi")
        store_masks()
        asm.ins(f"jmp {back(start)}")
        asm.place(close)
        store_masks()
        asm.place(end)
        asm.ins("movl $0, 8(%rdi)")


class Conv:
    """A validated convolution request and the GEMM that computes it."""

    def __init__(self, request):
        check_known(request, GEMM_FIELDS + GEOMETRY_FIELDS
                    + ("bias", "runtime_strides"))
        self.runtime_strides = runtime_strides_field(request)
        self.geometry = conv_geometry(request, strided_output=True)
        for name, value in vars(self.geometry).items():
            setattr(self, name, value)
        nhwc = self.geometry.nhwc
        s0, s1, s2 = self.strides
        if nhwc:
            self.gathers = "A"
            self.images = 1
            gemm = {"m": self.n * self.oh * self.ow, "n": self.f,
                    "k": self.kh * self.kw * self.c}
            gemm["lda"] = gemm["k"]
            gemm["ldb"] = self.f
            # C's rows are the output's pixels.
            gemm["ldc"] = self.output_pixel_stride
            if self.layout == "nhwc_fhwc":
                gemm["trans_b"] = True
                gemm["ldb"] = gemm["k"]
        else:
            self.gathers = "B"
            self.images = self.n
            if request.get("pack_b", True) is not True or \
                    request.get("fuse_pack_b", False) is not False or \
                    request.get("b_prepacked", False) is not False:
                raise RequestError(
                    "pack_b = false, fuse_pack_b and b_prepacked skip PACK "
                    "B; nchw_fchw gathers B from the input (the filter is "
                    "A), so its PACK B always runs")
            gemm = {"m": self.f, "n": self.oh * self.ow,
                    "k": self.c * self.kh * self.kw}
            gemm["lda"] = gemm["k"]
            gemm["ldb"] = gemm["ldc"] = gemm["n"]
        gemm.update({k: request[k] for k in GEMM_FIELDS if k in request})
        # A bias per output channel (the epilogue): the GEMM's rows for
        # nchw_fchw (M = F), its columns for the nhwc layouts (N = F).
        self.bias = bool_field(request, "bias")
        if self.bias:
            gemm["bias"] = "columns" if nhwc else "rows"
        # a_layout "direct": the microkernel reads A where it lies in the
        # input (rows one pixel step apart); only slivers that are not in
        # one output row are copied, into scratch rows kc floats apart.
        # nchw_fchw's A is the filter as stored: "direct" is the GEMM's own
        # A in place (sgemm.py), rows lda = K floats apart.
        self.direct = nhwc and gemm.get("a_layout") == "direct"
        self.segmented = False
        if self.direct:
            gemm["a_layout"] = "rows"
        self.gemm = Params(gemm)
        self.gemm.conv = self
        p = self.gemm
        # Workspace: the GEMM's, then scratch and the two offset tables.
        self.offset = round_up(p.workspace_bytes, 64)
        stride_step = StrideSteps(self.geometry, 4, self.runtime_strides,
                                  self.offset + STEP_SLOTS)
        self.runtime_steps = stride_step.steps

        scratch = CONV_SCRATCH
        if self.runtime_strides:
            scratch = STEP_SLOTS + 8 * (3 if nhwc else 4)
        self.row_table = self.offset + round_up(scratch, 64)
        rows = p.m if nhwc else p.n
        self.col_table = self.row_table + round_up(rows * 8, 64)
        p.workspace_bytes = self.col_table + round_up(p.k * 8, 64)
        # nchw on AVX-512: PACK B's pieces of a sliver (per vector up to a
        # piece a lane and the zero mask after them), then VPERMT2PS's
        # index for a width stride of 2 (_emit_gather_b_pieces).
        self.pieces = not nhwc and p.isa.name == "avx512"
        if self.pieces:
            self.piece_table = p.workspace_bytes
            self.index_offset = p.nr // p.isa.lanes * PIECES_STEP
            p.workspace_bytes += round_up(self.index_offset + 64, 64)
        check_disp(p.workspace_bytes, "workspace")
        self.row_dims, self.col_dims = gather_dims(self.geometry, 4,
                                                   stride_step)
        # Consecutive gathered rows in one output row are this far apart.
        self.row_step = self.row_dims[-1][1]
        self.run = contiguous_run(self.col_dims, 4)
        if self.direct:
            if self.run % p.kc and p.kc % self.run:
                raise RequestError(
                    f"a_layout 'direct' needs kc ({p.kc}) to divide "
                    f"{self.run}, the k that lie in consecutive floats of "
                    f"the input, or to be a multiple of it, so that each "
                    f"panel row is one run or whole runs")
            p.a_row_stride = self.row_step
            # Pointer table (one int64 per row of an mc block; slivers use
            # the entry of their first row), then the scratch for slivers
            # that cross output rows: packed in rows kc floats apart.
            p.a_pointer_table = p.workspace_bytes
            # kc a multiple of the run: the microkernel's K loop walks the
            # panel's runs, each from its own column offset (segments).
            self.segmented = p.kc > self.run
            self.scratch = p.a_pointer_table + round_up(p.mc * 8, 64)
            p.workspace_bytes = self.scratch + round_up(p.mc * p.kc * 4, 64)
            check_disp(p.mr * self.row_step, "gather")
        for count, bytes_ in self.row_dims + self.col_dims:
            if isinstance(bytes_, int):
                check_disp(count * bytes_, "input")
        check_disp(max(p.mr, p.nr) * self.row_step, "gather")
        # The steps to the next image (nchw_fchw) of the input and output.
        self.image_bytes = (s0 * 4 if nhwc else stride_step(0, 1),
                            check_disp(p.m * p.n * 4, "image"))
        if isinstance(self.image_bytes[0], int):
            check_disp(self.image_bytes[0], "image")

    def symbol(self):
        p = self.gemm
        epilogue = (("_b0" if p.overwrite else "")
                    + ("_bias" if self.bias else "")
                    + activation_suffix(p))
        return (f"{self.geometry.symbol_stem()}"
                f"{'_isrt' if self.runtime_strides else ''}{epilogue}"
                + (p.blocking_suffix().replace("_arows", "_adirect")
                   if self.direct else p.blocking_suffix()))

    # -- code the GEMM body calls ------------------------------------------

    def emit_save_pointers(self, asm):
        """Slots 0, 8, 16 hold the GEMM's A, B and C; the kernel's arguments
        are (input, filter, output, workspace)."""
        a, b = ("%rdi", "%rsi") if self.gathers == "A" else ("%rsi", "%rdi")
        asm.ins(f"movq {a}, 0(%rcx)")
        asm.ins(f"movq {b}, 8(%rcx)")
        asm.ins("movq %rdx, 16(%rcx)")

    def emit_tables(self, asm):
        """Fills the row and column offset tables (int64 bytes), after the
        steps that depend on run-time strides."""
        emit_gather_tables(asm, self.runtime_steps,
                           ((self.row_table, self.row_dims),
                            (self.col_table, self.col_dims)))
        if self.pieces and self.row_step == 8:
            asm.comment("the even floats of two vectors: PACK B's VPERMT2PS "
                        "index (_emit_gather_b_pieces)")
            for q in range(self.gemm.isa.lanes // 2):
                value = (4 * q) | ((4 * q + 2) << 32)
                asm.ins(f"movabsq ${value:#x}, %rax")
                asm.ins(f"movq %rax, "
                        f"{self.piece_table + self.index_offset + 8 * q}(%rbx)")

    def emit_batch_begin(self, asm):
        asm.ins(f"movq ${self.images}, {self.offset + IMAGES_SLOT}(%rbx)")

    def emit_batch_next(self, asm, image_loop):
        """Moves the input (B) and output (C) pointers to the next image."""
        emit_next_image(asm, self.image_bytes, self.offset + IMAGES_SLOT,
                        image_loop)

    def _emit_unless_in_row(self, asm, R, label):
        """Jumps to `label` unless the R table rows at %r15 are pixels of
        one output row (their offsets step by row_step); clobbers %rax."""
        asm.ins(f"movq {(R - 1) * 8}(%r15), %rax")
        asm.ins("subq (%r15), %rax")
        asm.ins(f"cmpq ${(R - 1) * self.row_step}, %rax")
        asm.ins(f"jne {fwd(label)}")

    def emit_gather_pack(self, asm, p, name, R, width_reg, src_slot,
                         inner_index, dst_offset):
        """PACK of the gathered operand: R-wide slivers, k-major, zero-padded,
        like sgemm's, with element (k, r) at src + row[inner + r] + col[pc+k].

        A full sliver whose R rows lie in one output row (their row offsets
        step by row_step) copies with fixed displacements, vectors when the
        rows are adjacent floats; any other sliver (across output rows, or
        an edge) reads each row's offset from the table.
        """
        if name == "A" and self.direct:
            return self._emit_gather_direct(asm, p, R, width_reg, src_slot,
                                            inner_index)
        if name == "B" and self.pieces:
            return self._emit_gather_b_pieces(asm, p, R, width_reg,
                                              src_slot, inner_index,
                                              dst_offset)
        if name == "A" and p.a_rows and (p.kc % self.run == 0
                                          or self.run % p.kc == 0):
            return self._emit_gather_rows_runs(asm, p, R, width_reg,
                                               src_slot, inner_index,
                                               dst_offset)
        if name == "A" and p.a_rows:
            return self._emit_gather_rows(asm, p, R, width_reg, src_slot,
                                          inner_index, dst_offset)
        isa = p.isa
        kend = f"{self.offset + KEND_SLOT}(%rbx)"
        valid = f"{self.offset + VALID_SLOT}(%rbx)"
        loop = asm.label(f"gather {name}: next sliver")
        slow_full = asm.label(f"gather {name}: full sliver across rows")
        slow = asm.label(f"gather {name}: sliver by row table")
        done = asm.label(f"gather {name}: sliver done")
        asm.comment(f"PACK {name}: {R}-wide slivers gathered from the input")
        asm.ins("xorl %r14d, %r14d")
        asm.place(loop)
        asm.ins("movq %r14, %rax")
        asm.ins(f"imulq {KB}, %rax")
        asm.ins(f"leaq {dst_offset}(%rbx,%rax,4), %rdi")
        asm.ins(f"leaq ({inner_index},%r14), %rax")
        asm.ins(f"leaq {self.row_table}(%rbx,%rax,8), %r15")
        asm.ins(f"leaq {self.col_table}(%rbx,{PC},8), %rdx")
        asm.ins(f"leaq (%rdx,{KB},8), %rax")
        asm.ins(f"movq %rax, {kend}")
        asm.ins(f"movq {width_reg}, %rax")
        asm.ins("subq %r14, %rax")
        asm.ins(f"cmpq ${R}, %rax")
        asm.ins(f"jb {fwd(slow)}")
        self._emit_unless_in_row(asm, R, slow_full)
        asm.ins(f"movq {src_slot}(%rbx), %rsi")
        asm.ins("addq (%r15), %rsi")
        fast_k = asm.label(f"gather {name}: one output row, next k")
        asm.place(fast_k)
        asm.ins("movq (%rdx), %rcx")
        if self.row_step == 4 and R % isa.lanes == 0:
            for v in range(R // isa.lanes):
                off = v * isa.vector_bytes
                asm.ins(f"vmovups {off}(%rsi,%rcx), {isa.reg(0)}")
                asm.ins(f"vmovups {isa.reg(0)}, {off}(%rdi)")
        else:
            for r in range(R):
                asm.ins(f"vmovss {r * self.row_step}(%rsi,%rcx), {xmm(0)}")
                asm.ins(f"vmovss {xmm(0)}, {r * 4}(%rdi)")
        asm.ins(f"addq ${R * 4}, %rdi")
        asm.ins("addq $8, %rdx")
        asm.ins(f"cmpq {kend}, %rdx")
        asm.ins(f"jb {back(fast_k)}")
        asm.ins(f"jmp {fwd(done)}")
        asm.place(slow_full)
        asm.ins(f"movq ${R}, %rax")
        asm.place(slow)
        asm.ins(f"movq %rax, {valid}")
        asm.ins(f"vxorps {xmm(1)}, {xmm(1)}, {xmm(1)}")
        slow_k = asm.label(f"gather {name}: by row table, next k")
        slow_r = asm.label(f"gather {name}: by row table, next row")
        asm.place(slow_k)
        for r in range(R):
            asm.ins(f"vmovss {xmm(1)}, {r * 4}(%rdi)")
        asm.ins(f"movq {src_slot}(%rbx), %rsi")
        asm.ins("addq (%rdx), %rsi")
        asm.ins("xorl %eax, %eax")
        asm.place(slow_r)
        asm.ins("movq (%r15,%rax,8), %rcx")
        asm.ins(f"vmovss (%rsi,%rcx), {xmm(0)}")
        asm.ins(f"vmovss {xmm(0)}, (%rdi,%rax,4)")
        asm.ins("incq %rax")
        asm.ins(f"cmpq {valid}, %rax")
        asm.ins(f"jb {back(slow_r)}")
        asm.ins(f"addq ${R * 4}, %rdi")
        asm.ins("addq $8, %rdx")
        asm.ins(f"cmpq {kend}, %rdx")
        asm.ins(f"jb {back(slow_k)}")
        asm.place(done)
        asm.ins(f"addq ${R}, %r14")
        asm.ins(f"cmpq {width_reg}, %r14")
        asm.ins(f"jb {back(loop)}")


    def _emit_gather_b_pieces(self, asm, p, R, width_reg, src_slot,
                              inner_index, dst_offset):
        """nchw_fchw's PACK B on AVX-512: per R-pixel sliver, first its
        pieces, for each vector of it the runs of its lanes whose pixels
        are consecutive floats of the input (one output row at a unit
        width stride, a lane each otherwise), each a pointer (input +
        row[first lane] - that lane's bytes) and a lane mask, a zero mask
        ending them (piece_table, PIECES_STEP a vector); then per k of the
        panel, per vector, each piece's lanes in one masked move from
        pointer + column[k] (masked lanes are not read), lanes past the
        edge zero. At a width stride of 2 a piece's lanes are every other
        float: two moves load the even floats of twice its lanes (the
        masks at 12 and 14 of the entry) and VPERMT2PS keeps them
        (dotgemm._emit_pack_gathered_b does the same for bf16 and bytes)."""
        isa, lanes = p.isa, p.isa.lanes
        base = f"{self.offset + BASE_SLOT}(%rbx)"
        kend = f"{self.offset + KEND_SLOT}(%rbx)"
        valid = f"{self.offset + VALID_SLOT}(%rbx)"
        table = self.piece_table
        compress = self.row_step == 8
        lane_bytes = self.row_step if compress else 4
        sliver = asm.label("gather B: next sliver")
        k_loop = asm.label("gather B: next k")
        whole = asm.label("gather B: a whole sliver of consecutive floats")
        whole_k = asm.label("gather B: next k of a whole sliver")
        start_pieces = asm.label("gather B: the sliver's pieces")
        next_sliver = asm.label("gather B: sliver done")
        asm.comment(f"PACK B: {R}-wide slivers gathered from the input a "
                    "piece at a time (a sliver of R consecutive floats: "
                    "vector moves)")
        if compress:
            asm.ins(f"vmovdqu32 {table + self.index_offset}(%rbx), %zmm6")
        asm.ins("xorl %r14d, %r14d")
        asm.place(sliver)
        asm.ins("movq %r14, %rax")
        asm.ins(f"imulq {KB}, %rax")
        asm.ins(f"leaq {dst_offset}(%rbx,%rax,4), %rdi")
        asm.ins(f"movq %rdi, {base}")
        asm.ins(f"movq {width_reg}, %rax")
        asm.ins("subq %r14, %rax")
        asm.ins(f"movl ${R}, %edx")
        asm.ins("cmpq %rdx, %rax")
        asm.ins("cmovaq %rdx, %rax")
        asm.ins(f"movq %rax, {valid}")
        asm.ins(f"leaq ({inner_index},%r14), %rdx")
        asm.ins(f"leaq {self.row_table}(%rbx,%rdx,8), %r12")
        if self.row_step == 4:
            asm.ins(f"cmpq ${R}, %rax")
            asm.ins(f"jb {fwd(start_pieces)}")
            asm.ins(f"movq {(R - 1) * 8}(%r12), %rax")
            asm.ins("subq (%r12), %rax")
            asm.ins(f"cmpq ${(R - 1) * 4}, %rax")
            asm.ins(f"je {fwd(whole)}")
            asm.place(start_pieces)
        emit_piece_table(asm, "gather B", table, R // lanes, lanes, valid,
                         src_slot, lane_bytes, compress)

        def start_k():
            asm.comment("per k of the panel: %rsi = &column[pc + k], %rdx "
                        "its packed row")
            asm.ins(f"leaq {self.col_table}(%rbx,{PC},8), %rsi")
            asm.ins(f"leaq (%rsi,{KB},8), %rdx")
            asm.ins(f"movq %rdx, {kend}")
            asm.ins(f"movq {base}, %rdx")

        start_k()
        asm.place(k_loop)
        asm.ins("movq (%rsi), %rcx")
        for v in range(R // lanes):
            piece = asm.label(f"gather B: vector {v}, next piece")
            loaded = asm.label(f"gather B: vector {v} loaded")
            asm.ins(f"vpxord {isa.reg(0)}, {isa.reg(0)}, {isa.reg(0)}")
            asm.ins(f"leaq {table + v * PIECES_STEP}(%rbx), %rdi")
            asm.place(piece)
            asm.ins("kmovw 8(%rdi), %k6")
            asm.ins("kortestw %k6, %k6")
            asm.ins(f"jz {fwd(loaded)}")
            asm.ins("movq (%rdi), %rax")
            if compress:
                asm.ins("kmovw 12(%rdi), %k5")
                asm.ins("kmovw 14(%rdi), %k4")
                asm.ins("vmovups (%rax,%rcx), %zmm4 {%k5} {z}")
                asm.ins("vmovups 64(%rax,%rcx), %zmm5 {%k4} {z}")
                asm.ins("vpermt2ps %zmm5, %zmm6, %zmm4")
                asm.ins("vmovaps %zmm4, %zmm0 {%k6}")
            else:
                asm.ins("vmovups (%rax,%rcx), %zmm0 {%k6}")
            asm.ins(f"addq ${PIECE_BYTES}, %rdi")
            asm.ins(f"jmp {back(piece)}")
            asm.place(loaded)
            asm.ins(f"vmovups {isa.reg(0)}, {v * isa.vector_bytes}(%rdx)")
        asm.ins("addq $8, %rsi")
        asm.ins(f"addq ${R * 4}, %rdx")
        asm.ins(f"cmpq {kend}, %rsi")
        asm.ins(f"jb {back(k_loop)}")
        if self.row_step == 4:
            asm.ins(f"jmp {fwd(next_sliver)}")
            asm.place(whole)
            asm.ins("movq (%r12), %rax")
            asm.ins(f"addq {src_slot}(%rbx), %rax")
            start_k()
            asm.place(whole_k)
            asm.ins("movq (%rsi), %rcx")
            for v in range(R // lanes):
                off = v * isa.vector_bytes
                asm.ins(f"vmovups {off}(%rax,%rcx), {isa.reg(v % 8)}")
                asm.ins(f"vmovups {isa.reg(v % 8)}, {off}(%rdx)")
            asm.ins("addq $8, %rsi")
            asm.ins(f"addq ${R * 4}, %rdx")
            asm.ins(f"cmpq {kend}, %rsi")
            asm.ins(f"jb {back(whole_k)}")
            asm.place(next_sliver)
        asm.ins(f"addq ${R}, %r14")
        asm.ins(f"cmpq {width_reg}, %r14")
        asm.ins(f"jb {back(sliver)}")

    def _emit_rows_loops(self, asm, p, R, width_reg, src_slot, inner_index,
                         dst_offset, name, copy_row):
        """The sliver and row loops of PACK A in the rows layout (sgemm's
        a_layout "rows"): sliver s holds its MR pixels' rows of kb floats,
        kc floats apart. For each row inside M, %rsi is its pixel's input
        (input + row[inner + r0 + r]) and %rdi its destination, and
        copy_row() emits the copy of its kb floats, which may clobber %rax,
        %rcx, %rdx and vector 0; rows past M are zero."""
        valid = f"{self.offset + VALID_SLOT}(%rbx)"
        sliver = asm.label(f"{name}: next sliver")
        row = asm.label(f"{name}: next row")
        zero = asm.label(f"{name}: row past M")
        next_row = asm.label(f"{name}: row done")
        asm.ins("xorl %r14d, %r14d")
        asm.place(sliver)
        asm.ins(f"imulq ${check_disp(p.kc * 4, 'A row')}, %r14, %rax")
        asm.ins(f"leaq {dst_offset}(%rbx,%rax), %rdi")
        asm.ins(f"movq {width_reg}, %rax")
        asm.ins("subq %r14, %rax")
        asm.ins(f"movq %rax, {valid}")
        asm.ins("xorl %r15d, %r15d")
        asm.place(row)
        asm.ins(f"cmpq {valid}, %r15")
        asm.ins(f"jae {fwd(zero)}")
        asm.ins(f"leaq ({inner_index},%r14), %rax")
        asm.ins("addq %r15, %rax")
        asm.ins(f"movq {self.row_table}(%rbx,%rax,8), %rsi")
        asm.ins(f"addq {src_slot}(%rbx), %rsi")
        copy_row()
        asm.ins(f"jmp {fwd(next_row)}")
        asm.place(zero)
        emit_row_zero(asm, p, name, "%rdi")
        asm.place(next_row)
        asm.ins(f"addq ${p.kc * 4}, %rdi")
        asm.ins("incq %r15")
        asm.ins(f"cmpq ${R}, %r15")
        asm.ins(f"jb {back(row)}")
        asm.ins(f"addq ${R}, %r14")
        asm.ins(f"cmpq {width_reg}, %r14")
        asm.ins(f"jb {back(sliver)}")

    def _emit_gather_rows(self, asm, p, R, width_reg, src_slot, inner_index,
                          dst_offset):
        """PACK A, rows layout: row r's float k is
        input[row[inner + r0 + r] + col[pc + k]]. Runs of `lanes` columns
        whose offsets are consecutive floats (a channel run) are copied as
        one vector, the rest one float at a time."""
        isa = p.isa
        lanes = isa.lanes

        def copy_row():
            chunk = asm.label("gather A rows: next run")
            one = asm.label("gather A rows: one float")
            copied = asm.label("gather A rows: row copied")
            asm.ins(f"leaq {self.col_table}(%rbx,{PC},8), %rdx")
            asm.ins("xorl %eax, %eax")
            asm.place(chunk)
            asm.ins(f"leaq {lanes}(%rax), %rcx")
            asm.ins(f"cmpq {KB}, %rcx")
            asm.ins(f"ja {fwd(one)}")
            asm.ins(f"movq {(lanes - 1) * 8}(%rdx,%rax,8), %rcx")
            asm.ins("subq (%rdx,%rax,8), %rcx")
            asm.ins(f"cmpq ${(lanes - 1) * 4}, %rcx")
            asm.ins(f"jne {fwd(one)}")
            asm.ins("movq (%rdx,%rax,8), %rcx")
            asm.ins(f"vmovups (%rsi,%rcx), {isa.reg(0)}")
            asm.ins(f"vmovups {isa.reg(0)}, (%rdi,%rax,4)")
            asm.ins(f"addq ${lanes}, %rax")
            asm.ins(f"jmp {back(chunk)}")
            asm.place(one)
            asm.ins(f"cmpq {KB}, %rax")
            asm.ins(f"jae {fwd(copied)}")
            asm.ins("movq (%rdx,%rax,8), %rcx")
            asm.ins(f"vmovss (%rsi,%rcx), {xmm(0)}")
            asm.ins(f"vmovss {xmm(0)}, (%rdi,%rax,4)")
            asm.ins("incq %rax")
            asm.ins(f"jmp {back(chunk)}")
            asm.place(copied)

        asm.comment(f"PACK A: {R}-pixel slivers gathered from the input, rows "
                    f"of kb floats {p.kc} apart")
        self._emit_rows_loops(asm, p, R, width_reg, src_slot, inner_index,
                              dst_offset, "gather A rows", copy_row)

    def _emit_gather_rows_runs(self, asm, p, R, width_reg, src_slot,
                               inner_index, dst_offset):
        """PACK A, rows layout, when kc is a multiple or a divisor of the
        run: every panel row is whole pieces of U = min(kc, run) floats,
        each contiguous in the input, so each piece is a fixed sequence of
        vector moves (the last one masked, or scalar on AVX2) from the
        offset its first column has in the table."""
        U = min(p.kc, self.run)
        pieces_vary = p.kc > U

        def copy_row():
            asm.ins("movq %rdi, %rcx")
            self._emit_copy_pieces(asm, p, U, pieces_vary, "gather A runs")

        asm.comment(f"PACK A: {R}-pixel slivers gathered from the input, rows "
                    f"of kb floats {p.kc} apart, in pieces of {U} "
                    f"contiguous floats")
        self._emit_pieces_setup(asm, p, U, pieces_vary)
        self._emit_rows_loops(asm, p, R, width_reg, src_slot, inner_index,
                              dst_offset, "gather A runs", copy_row)

    def _emit_pieces_setup(self, asm, p, U, pieces_vary):
        """Before _emit_copy_pieces: the tail mask (AVX-512) and the end of
        this panel's column-table entries; clobbers %rax."""
        tail = U % p.isa.lanes
        if tail and p.isa.name == "avx512":
            asm.ins(f"movl ${(1 << tail) - 1}, %eax")
            asm.ins("kmovw %eax, %k1")
        if pieces_vary:
            asm.ins(f"leaq {self.col_table}(%rbx,{PC},8), %rax")
            asm.ins(f"leaq (%rax,{KB},8), %rax")
            asm.ins(f"movq %rax, {self.offset + KEND_SLOT}(%rbx)")

    def _emit_copy_pieces(self, asm, p, U, pieces_vary, name):
        """Copies one panel row, kb floats, to %rcx onwards: pieces of U
        contiguous floats, piece j from %rsi + col[pc + j*U], each a fixed
        sequence of vector moves (the last masked by %k1 on AVX-512, or
        scalar). Clobbers %rax, %rcx, %rdx and vector 0."""
        isa = p.isa
        tail = U % isa.lanes
        full = U - tail
        piece = asm.label(f"{name}: next piece")
        asm.ins(f"leaq {self.col_table}(%rbx,{PC},8), %rdx")
        asm.place(piece)
        asm.ins("movq (%rdx), %rax")
        for off in range(0, full * 4, isa.vector_bytes):
            asm.ins(f"vmovups {off}(%rsi,%rax), {isa.reg(0)}")
            asm.ins(f"vmovups {isa.reg(0)}, {off}(%rcx)")
        if tail and isa.name == "avx512":
            off = full * 4
            asm.ins(f"vmovups {off}(%rsi,%rax), {isa.reg(0)} {{%k1}} {{z}}")
            asm.ins(f"vmovups {isa.reg(0)}, {off}(%rcx) {{%k1}}")
        else:
            for j in range(full, U):
                asm.ins(f"vmovss {j * 4}(%rsi,%rax), {xmm(0)}")
                asm.ins(f"vmovss {xmm(0)}, {j * 4}(%rcx)")
        if pieces_vary:
            asm.ins(f"addq ${U * 4}, %rcx")
            asm.ins(f"addq ${U * 8}, %rdx")
            asm.ins(f"cmpq {self.offset + KEND_SLOT}(%rbx), %rdx")
            asm.ins(f"jb {back(piece)}")

    def emit_segmented_k_loops(self, asm, p, b, k_step):
        """The K loop of a sliver read in place when kc is a multiple of the
        run: %rax holds the sliver's base (input + row[r0]); each run of
        the panel starts at base + col[pc + j*run] and is `run` k steps
        (k_step(u) emits step u), B advancing throughout."""
        run = self.run
        ku = p.k_unroll
        base = f"{self.offset + BASE_SLOT}(%rbx)"
        seg = asm.label("segmented K: next run")
        k_loop = asm.label(f"segmented K: k loop, unrolled by {ku}")
        asm.comment(f"K in runs of {run}: each from its own column offset")
        asm.ins(f"movq %rax, {base}")
        asm.ins(f"leaq {self.col_table}(%rbx,{PC},8), %rdx")
        asm.place(seg)
        asm.ins(f"movq {base}, %rax")
        asm.ins("addq (%rdx), %rax")
        steps = run
        if p.fault == "drop-k":
            asm.comment("fault drop-k: the last k term of every run is lost")
            steps -= 1
        if steps // ku:
            asm.ins(f"movq ${steps // ku}, %rcx")
            asm.raw("\t.p2align 5")
            asm.place(k_loop)
            for u in range(ku):
                k_step(u)
            asm.ins(f"addq ${ku * 4}, %rax")
            b.emit_advance(asm, ku)
            asm.ins("decq %rcx")
            asm.ins(f"jnz {back(k_loop)}")
        rem = steps % ku
        for u in range(rem):
            k_step(u)
        if rem or steps < run:
            b.emit_advance(asm, run - steps // ku * ku)
        asm.ins(f"addq ${run * 8}, %rdx")
        asm.ins(f"cmpq {self.offset + KEND_SLOT}(%rbx), %rdx")
        asm.ins(f"jb {back(seg)}")

    def _emit_gather_direct(self, asm, p, R, width_reg, src_slot,
                            inner_index):
        """A in place: for each sliver, its pointer for the microkernel. A
        full sliver whose R pixels lie in one output row points into the
        input (input + row[r0] + col[pc], or input + row[r0] when the K
        loop walks runs); any other is copied, row by row (kb floats each:
        one piece of kc floats, or whole runs), into scratch rows kc floats
        apart, zero past M, and points there with bit 0 set (the
        microkernel's scratch-rows variant)."""
        step = self.row_step
        valid = f"{self.offset + VALID_SLOT}(%rbx)"
        sliver = asm.label("direct A: next sliver")
        copy = asm.label("direct A: sliver to scratch")
        row = asm.label("direct A: scratch, next row")
        zero = asm.label("direct A: scratch row past M")
        next_row = asm.label("direct A: scratch row done")
        done = asm.label("direct A: sliver done")
        # A copied row is one piece of kc floats (kc divides the run) or
        # whole runs (segmented).
        piece = min(p.kc, self.run)
        asm.comment(f"A in place: {R}-pixel slivers read from the input, "
                    f"rows {step} bytes apart"
                    + (f", K in runs of {self.run}" if self.segmented else ""))
        self._emit_pieces_setup(asm, p, piece, self.segmented)
        asm.ins("xorl %r14d, %r14d")
        asm.place(sliver)
        # %r15 = &row[inner + r0]; %rdx = col[pc] (this panel's offset).
        asm.ins(f"leaq ({inner_index},%r14), %rax")
        asm.ins(f"leaq {self.row_table}(%rbx,%rax,8), %r15")
        asm.ins(f"movq {self.col_table}(%rbx,{PC},8), %rdx")
        asm.ins(f"movq {width_reg}, %rax")
        asm.ins("subq %r14, %rax")
        asm.ins(f"movq %rax, {valid}")
        asm.ins(f"cmpq ${R}, %rax")
        asm.ins(f"jb {fwd(copy)}")
        self._emit_unless_in_row(asm, R, copy)
        asm.ins(f"movq {src_slot}(%rbx), %rax")
        asm.ins("addq (%r15), %rax")
        if not self.segmented:
            asm.ins("addq %rdx, %rax")
        asm.ins(f"movq %rax, {p.a_pointer_table}(%rbx,%r14,8)")
        asm.ins(f"jmp {fwd(done)}")
        asm.place(copy)
        # %rdi = scratch + r0 * kc * 4; its pointer, bit 0 set (rows kc
        # floats apart), goes in the table.
        asm.ins(f"imulq ${check_disp(p.kc * 4, 'A row')}, %r14, %rdi")
        asm.ins(f"leaq {self.scratch}(%rbx,%rdi), %rdi")
        asm.ins(f"leaq 1(%rdi), %rax")
        asm.ins(f"movq %rax, {p.a_pointer_table}(%rbx,%r14,8)")
        # The row counter lives in a scratch slot: the copy clobbers %rcx.
        counter = f"{self.offset + COUNTER_SLOT}(%rbx)"
        asm.ins(f"movq $0, {counter}")
        asm.place(row)
        asm.ins(f"movq {counter}, %rcx")
        asm.ins(f"cmpq {valid}, %rcx")
        asm.ins(f"jae {fwd(zero)}")
        asm.ins("movq (%r15,%rcx,8), %rsi")
        asm.ins(f"addq {src_slot}(%rbx), %rsi")
        asm.ins("movq %rdi, %rcx")
        self._emit_copy_pieces(asm, p, piece, self.segmented, "direct A")
        asm.ins(f"jmp {fwd(next_row)}")
        asm.place(zero)
        emit_row_zero(asm, p, "direct A", "%rdi")
        asm.place(next_row)
        asm.ins(f"addq ${p.kc * 4}, %rdi")
        asm.ins(f"incq {counter}")
        asm.ins(f"cmpq ${R}, {counter}")
        asm.ins(f"jb {back(row)}")
        asm.place(done)
        asm.ins(f"addq ${R}, %r14")
        asm.ins(f"cmpq {width_reg}, %r14")
        asm.ins(f"jb {back(sliver)}")


# (position, count) registers of each level of an offset table's loop nest.
_TABLE_REGS = (("%rax", "%r8"), ("%rsi", "%r9"), ("%rdx", "%r10"))


def _emit_offset_table(asm, name, dims):
    """Writes sum(i_d * step_d) for every index tuple, last index fastest,
    as int64 at %rdi onwards. dims: [(count, step)], outer first, the step
    bytes or the operand of a slot holding them."""
    asm.ins(f"xorl {_TABLE_REGS[0][0].replace('%r', '%e')}, "
            f"{_TABLE_REGS[0][0].replace('%r', '%e')}")

    def level(i):
        pos, count = _TABLE_REGS[i]
        top = asm.label(f"{name} table: next index {i}")
        asm.ins(f"movq ${dims[i][0]}, {count}")
        asm.place(top)
        if i + 1 == len(dims):
            asm.ins(f"movq {pos}, (%rdi)")
            asm.ins("addq $8, %rdi")
        else:
            asm.ins(f"movq {pos}, {_TABLE_REGS[i + 1][0]}")
            level(i + 1)
        step = dims[i][1]
        asm.ins(f"addq {f'${step}' if isinstance(step, int) else step}, "
                f"{pos}")
        asm.ins(f"decq {count}")
        asm.ins(f"jnz {back(top)}")

    level(0)


def emit(request):
    conv = Conv(request)
    p = conv.gemm
    summary = (f"{conv.layout}: {conv.n}x{conv.h}x{conv.w}x{conv.c} input, "
               f"{conv.f} filters {conv.kh}x{conv.kw}, stride "
               f"{conv.sh}x{conv.sw}, dilation {conv.dh}x{conv.dw}; GEMM "
               f"{p.m}x{p.n}x{p.k}")
    return kernel_text(p, conv.symbol(), request, "sconv2d", summary,
                       headers=(["# qm.input_strides: runtime"]
                                if conv.runtime_strides else []))

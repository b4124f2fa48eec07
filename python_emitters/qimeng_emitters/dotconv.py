"""2-D convolutions on the dot-product instructions of x86-64 AVX-512:
bf16 with f32 accumulation (kind "sbconv2d", VDPBF16PS) and 8-bit
integers with s32 accumulation (kind "iconv2d", VPDPBUSD; a u8 or s8
input, `a_type`, and an s8 filter).

conv2d.py's implicit GEMM for the nhwc layouts on dotgemm.py's kernel:

    nhwc_hwcf: out[n, oh, ow, f] += in[n, oh*sh + kh*dh, ow*sw + kw*dw, c]
                                    * flt[kh, kw, c, f]
      GEMM M = N*OH*OW (pixels), N = F, K = KH*KW*C (kh, kw, c): A is
      gathered from the input, B is the filter as stored (K x F), C the
      output (F a row).
    nhwc_fhwc: the same with flt[f, kh, kw, c] (B transposed, K a row).

The GEMM's PACK A reads pixel r's k from input + row[r] + column[k]
(bytes; the offset tables conv2d.py's convolutions fill at each call,
here in the element's bytes), so the im2col matrix never exists. A kc
block lies within one run of consecutive k (kc divides the run: C, or
KW*C with a unit width dilation and dense pixels), so a row of the block
is one piece of the input, its groups in order, and a group that
straddles two filter taps (C = 3) finds their k side by side. Where the
run is not whole groups (3 channels: KW*C = 21), kc is not either: every
block ends in a partial group that the packs complete with zero (for
bytes the same partial quad each time, kc dividing K). The pack then
copies a row's groups as a GEMM's (8 x 8 dword transposes for 8 whole
rows at a time).

With a_layout "direct" nothing is packed: a sliver of MR pixels in one
output row is read where it lies (its rows the pixel step apart, the
block's k consecutive), as oneDNN's brgemm convolutions read an nhwc input;
only a sliver across output rows (or short of rows) is copied (dotgemm.py,
A in place). K and kc are then whole K steps (k_unroll groups), or kc
divides K and each block is runs of whole K steps and perhaps a partial
group (masked). kc may then be a multiple of the run (k_runs = kc / run
runs a block, at most 8: the stem's seven rows of 21 k in one block), the
K loop stepping from run to run through the column table.

The input's strides are immediates (input_strides) or, with
runtime_strides, read from the workspace header at 64 at each call (n, h,
w; the w stride must be C), as for f32. The output is the GEMM's C (dense,
F a row); overwrite, bias per output channel (C's columns), relu and its
bound (bf16 only) are the GEMM's. bf16_output (f16_output for f16) rounds
the sums once into D, a dense 16-bit output of the output's shape (its
pointer in the header at 120: the GEMM's D, ldd F), as torch-mlir's truncf
after a bf16 convolution; the f32 output is then the GEMM's scratch.

    nchw_fchw: out[n, f, oh, ow] += in[n, c, oh*sh + kh*dh, ow*sw + kw*dw]
                                    * flt[f, c, kh, kw]
      one GEMM an image (an image loop in the kernel, as conv2d.py's):
      M = F, N = OH*OW (pixels), K = C*KH*KW (c, kh, kw): A is the filter
      as stored (F x K), B is gathered from the image, C is the image's
      output (ldc = OH*OW); a 16-bit D steps an image with it (the header's
      pointer moved on, and back after the last image).

The GEMM's PACK B reads B(k, j) from input + column[k] + row[j]
(dotgemm._emit_pack_gathered_b): a sliver of pixels in one output row
(unit width stride) loads each k's pixels as one masked vector; others
are gathered an element at a time. Any kc of whole groups (the tables
reach any k). For 8-bit types the filter is the GEMM's A, so VPDPBUSD's
unsigned operand would be the filter: an s8 input only (the filter packed
plus 128, as an s8 A always is; read in place, a_layout direct, it stays
signed and the gathered B is packed plus 128 instead); a u8 input in nchw
is refused. A bias
per output channel is a row of C there, added broadcast from the row's.
"""

from .conv2d import (GEOMETRY_FIELDS, PIECES_STEP, StrideSteps,
                     contiguous_run, conv_geometry, emit_gather_tables,
                     emit_next_image, gather_dims, runtime_strides_field)
from .dotgemm import Params, half_output_field, kernel_text
from .errors import RequestError
from .fields import (ACTIVATION_FIELDS, SMOOTH_FIELD, activation_suffix,
                     bool_field, check_known, round_up)
from .header import OUTPUT_OFFSET
from .x86 import check_disp

#: Layouts whose gathered operand is A (the pixels), and nchw_fchw's B.
LAYOUTS = ("nhwc_hwcf", "nhwc_fhwc", "nchw_fchw")
# The convolution's scratch slots after the GEMM's workspace (bytes from
# its start): the gathered block's base, up to four run-time steps, the
# images left, a B sliver's pixels before the edge and the end of its
# whole groups in the column table.
STEPS_SLOT, IMAGES_SLOT, VALID_SLOT, KEND_SLOT = 8, 40, 48, 56
SCRATCH = 64

#: Request fields passed to the GEMM underneath, as dotgemm.py reads them.
GEMM_FIELDS = ("isa", "mr", "nr", "k_unroll", "kc", "mc", "nc", "overwrite",
               "fault", "target_features", "parallel", "a_layout",
               "b_prepacked")
SBGEMM_FIELDS = ACTIVATION_FIELDS + (SMOOTH_FIELD,)
IGEMM_FIELDS = ("a_type",)


class DotConv:
    """A validated convolution request and the dot-product GEMM that
    computes it; the GEMM's PACK A reads its tables (dotgemm._gather)."""

    def __init__(self, request):
        self.kind = request.get("kind")
        gemm_kind = {"iconv2d": "igemm", "shconv2d": "shgemm"}.get(
            self.kind, "sbgemm")
        half_output = half_output_field(gemm_kind)
        typed = (IGEMM_FIELDS if self.kind == "iconv2d" else
                 SBGEMM_FIELDS + (half_output,))
        check_known(request, GEMM_FIELDS + GEOMETRY_FIELDS + typed
                    + (("runtime_strides",) if self.kind == "iconv2d" else
                       ("runtime_strides", "bias")))
        self.runtime_strides = runtime_strides_field(request)
        g = self.geometry = conv_geometry(request, LAYOUTS)
        k = g.kh * g.kw * g.c
        gemm = {"kind": gemm_kind}
        if g.nhwc:
            self.gathers, self.images = "A", 1
            gemm.update(m=g.n * g.oh * g.ow, n=g.f, k=k, lda=k, ldb=g.f,
                        ldc=g.f)
        else:
            self.gathers, self.images = "B", g.n
            gemm.update(m=g.f, n=g.oh * g.ow, k=k, lda=k, ldb=g.oh * g.ow,
                        ldc=g.oh * g.ow)
        if g.layout == "nhwc_fhwc":
            gemm["trans_b"] = True
            gemm["ldb"] = k
        gemm.update({name: request[name] for name in GEMM_FIELDS + typed
                     if name in request})
        if bool_field(gemm, half_output):
            gemm["ldd"] = gemm["ldc"]  # D dense, as C
        if not g.nhwc:
            why = ("a u8 input (the filter is the GEMM's A, VPDPBUSD's "
                   "unsigned operand: s8 inputs only)"
                   if gemm.get("a_type", "u8") != "s8"
                   and self.kind == "iconv2d" else
                   "b_prepacked (B is the gathered input)"
                   if bool_field(request, "b_prepacked") else None)
            if why:
                raise RequestError(f"{self.kind} nchw_fchw: not with {why}")
        # A bias per output channel: the GEMM's columns (nhwc), rows (nchw).
        if bool_field(request, "bias"):
            gemm["bias"] = "columns" if g.nhwc else "rows"
        # An nhwc kc block read in place may hold several runs of
        # consecutive k (the stem's seven rows of 21): the GEMM's K loop
        # steps from one to the next through the column table.
        run = contiguous_run(gather_dims(g, 1, StrideSteps(
            g, 1, self.runtime_strides, 0))[1], 1)
        kc = min(request.get("kc", 0), k)
        if (g.nhwc and request.get("a_layout") == "direct" and kc > run
                and kc % run == 0):
            gemm["k_runs"] = kc // run
        p = self.gemm = Params(gemm)
        p.conv = self
        eb, group = p.dt.element_bytes, p.dt.group
        offset = round_up(p.workspace_bytes, 64)
        self.base_slot = offset  # input + column[pc] of the packed block
        self.images_slot = offset + IMAGES_SLOT
        self.valid_slot = offset + VALID_SLOT
        self.kend_slot = offset + KEND_SLOT
        steps = StrideSteps(g, eb, self.runtime_strides, offset + STEPS_SLOT)
        self.row_dims, self.col_dims = gather_dims(g, eb, steps)
        # Consecutive pixels of one output row are this far apart.
        self.row_step = self.row_dims[-1][1]
        self.run = run   # (in elements: the same whatever their bytes)
        # The steps to the next image (nchw_fchw) of the input and output
        # (and of a 16-bit D).
        self.image_bytes = (None if g.nhwc else steps(0, 1),
                            check_disp(p.m * p.n * 4, "image"))
        self.d_image_bytes = p.m * p.n * 2 if p.half_output else None
        if self.d_image_bytes is not None:
            check_disp(self.d_image_bytes * self.images, "16-bit output")
        if isinstance(self.image_bytes[0], int):
            check_disp(self.image_bytes[0], "image")
        self.runtime_steps = steps.steps
        assert len(self.runtime_steps) <= 4
        if not g.nhwc:
            if p.kc % group and p.kc < p.k:
                raise RequestError(
                    f"kc = {p.kc} must be whole groups of {group} k (an nchw "
                    "filter's K runs on across channels)")
        elif p.a_direct:
            # A in place: a sliver's pixels in one output row are the pixel
            # step apart (dotgemm._emit_a_in_place checks each sliver).
            p.a_row_stride = self.row_dims[-1][1]
            check_disp(p.a_row_stride * p.mr, "gather")
        if g.nhwc and self.run % p.kc and p.k_runs == 1:
            raise RequestError(
                f"kc = {p.kc} must divide {self.run}, the k that lie in "
                "consecutive elements of the input, so that each row of a "
                "packed block is one piece of it, or be a multiple of it "
                "(A in place: a_layout direct)")
        self.row_table = offset + SCRATCH
        self.col_table = self.row_table + round_up(
            (p.m if g.nhwc else p.n) * 8, 64)
        p.workspace_bytes = self.col_table + round_up(k * 8, 64)
        if not g.nhwc:
            # PACK B's pieces of a sliver (dotgemm._emit_pack_gathered_b),
            # and the sliver's packed base in the slot A's gather would use.
            self.piece_table = p.workspace_bytes
            self.sliver_slot = self.base_slot
            p.workspace_bytes += round_up(p.nv * PIECES_STEP, 64)
        check_disp(p.workspace_bytes, "workspace")
        for count, bytes_ in self.row_dims + self.col_dims:
            if isinstance(bytes_, int):
                check_disp(count * bytes_, "input")

    def symbol(self):
        p = self.gemm
        kind = {"bf16": "sbconv2d", "f16": "shconv2d"}.get(
            p.dt.name, f"{p.dt.name}conv2d")
        return (f"{self.geometry.symbol_stem(kind)}"
                f"{'_isrt' if self.runtime_strides else ''}"
                f"{'_adirect' if p.a_direct else ''}"
                f"{'_bpre' if p.b_prepacked else ''}"
                f"{'_b0' if p.overwrite else ''}"
                f"{'_o' + p.dt.name if p.half_output else ''}"
                f"{'_bias' if p.bias != 'none' else ''}"
                f"{activation_suffix(p)}"
                f"_{p.mr}x{p.nr}_ku{p.k_unroll}"
                f"_kc{p.kc}_mc{p.mc}_nc{p.nc}"
                f"{'_par' if p.parallel else ''}"
                + ("" if p.fault is None else
                   "_fault_" + p.fault.replace("-", "_"))
                + f"_x86_64_{p.dt.suffix}")

    def emit_tables(self, asm):
        """At entry (dotgemm._emit_body): the row and column tables."""
        emit_gather_tables(asm, self.runtime_steps,
                           ((self.row_table, self.row_dims),
                            (self.col_table, self.col_dims)))

    def emit_batch_begin(self, asm):
        """nchw_fchw (dotgemm._emit_body): the images left."""
        asm.ins(f"movq ${self.images}, {self.images_slot}(%rbx)")

    def emit_batch_next(self, asm, image_loop):
        """The input (B) and output (C) pointers to the next image; a 16-bit
        D's (the caller's header slot) too, put back after the last."""
        if self.d_image_bytes is not None:
            asm.ins(f"addq ${self.d_image_bytes}, {OUTPUT_OFFSET}(%rbx)")
        emit_next_image(asm, self.image_bytes, self.images_slot, image_loop)
        if self.d_image_bytes is not None:
            asm.ins(f"subq ${self.d_image_bytes * self.images}, "
                    f"{OUTPUT_OFFSET}(%rbx)")


def conv_summary(g, types, gemm):
    """The kernel file's summary of a convolution of geometry `g` with
    element `types` (input, filter, output), as the GEMM `gemm`."""
    a_type, b_type, c_type = types
    return (f"{g.layout}: {g.n}x{g.h}x{g.w}x{g.c} input ({a_type}), "
            f"{g.f} filters {g.kh}x{g.kw} ({b_type}), stride "
            f"{g.sh}x{g.sw}, dilation {g.dh}x{g.dw}, output {c_type}; "
            f"GEMM {gemm.m}x{gemm.n}x{gemm.k}")


def emit(request):
    conv = DotConv(request)
    g, p = conv.geometry, conv.gemm
    summary = conv_summary(g, p.dt.types, p)
    return kernel_text(p, conv.symbol(), request, conv.kind, summary,
                       headers=(["# qm.input_strides: runtime"]
                                if conv.runtime_strides else []))

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
A in place). K and kc are then whole K steps (k_unroll groups).

The input's strides are immediates (input_strides) or, with
runtime_strides, read from the workspace header at 64 at each call (n, h,
w; the w stride must be C), as for f32. The output is the GEMM's C (dense,
F a row); overwrite, bias per output channel (C's columns), relu and its
bound (bf16 only) are the GEMM's. nchw_fchw gathers B, which the dot
kernels' packs do not: refused.
"""

from .conv2d import (GEOMETRY_FIELDS, StrideSteps, contiguous_run,
                     conv_geometry, emit_gather_tables, gather_dims,
                     runtime_strides_field)
from .dotgemm import Params, kernel_text
from .errors import RequestError
from .fields import bool_field, check_known, relu_suffix, round_up
from .x86 import check_disp

#: Layouts whose gathered operand is A (the pixels).
LAYOUTS = ("nhwc_hwcf", "nhwc_fhwc")

#: Request fields passed to the GEMM underneath, as dotgemm.py reads them.
GEMM_FIELDS = ("isa", "mr", "nr", "k_unroll", "kc", "mc", "nc", "overwrite",
               "fault", "target_features", "parallel", "a_layout",
               "b_prepacked")
SBGEMM_FIELDS = ("relu", "relu_max")
IGEMM_FIELDS = ("a_type",)


class DotConv:
    """A validated convolution request and the dot-product GEMM that
    computes it; the GEMM's PACK A reads its tables (dotgemm._gather)."""

    def __init__(self, request):
        self.kind = request.get("kind")
        typed = IGEMM_FIELDS if self.kind == "iconv2d" else SBGEMM_FIELDS
        check_known(request, GEMM_FIELDS + GEOMETRY_FIELDS + typed
                    + (("runtime_strides",) if self.kind == "iconv2d" else
                       ("runtime_strides", "bias")))
        self.runtime_strides = runtime_strides_field(request)
        layout = request.get("layout")
        if layout == "nchw_fchw":
            raise RequestError(
                f"{self.kind} kernels gather A (the pixels of an nhwc "
                "input); nchw_fchw gathers B, which their packs do not")
        g = self.geometry = conv_geometry(request, LAYOUTS)
        k = g.kh * g.kw * g.c
        gemm = {"kind": "igemm" if self.kind == "iconv2d" else "sbgemm",
                "m": g.n * g.oh * g.ow, "n": g.f, "k": k, "lda": k,
                "ldb": g.f, "ldc": g.f}
        if layout == "nhwc_fhwc":
            gemm["trans_b"] = True
            gemm["ldb"] = k
        gemm.update({name: request[name] for name in GEMM_FIELDS + typed
                     if name in request})
        # A bias per output channel: the GEMM's columns.
        if bool_field(request, "bias"):
            gemm["bias"] = "columns"
        p = self.gemm = Params(gemm)
        p.conv = self
        eb, group = p.dt.element_bytes, p.dt.group
        offset = round_up(p.workspace_bytes, 64)
        self.base_slot = offset  # input + column[pc] of the packed block
        steps = StrideSteps(g, eb, self.runtime_strides, offset + 8)
        self.row_dims, self.col_dims = gather_dims(g, eb, steps)
        self.runtime_steps = steps.steps
        self.run = contiguous_run(self.col_dims, eb)
        if p.a_direct:
            # A in place: a sliver's pixels in one output row are the pixel
            # step apart (dotgemm._emit_a_in_place checks each sliver).
            p.a_row_stride = self.row_dims[-1][1]
            check_disp(p.a_row_stride * p.mr, "gather")
        if self.run % p.kc:
            raise RequestError(
                f"kc = {p.kc} must divide {self.run}, the k that lie in "
                "consecutive elements of the input, so that each row of a "
                "packed block is one piece of it")
        scratch = 8 + 8 * 2  # the block's base, at most two run-time steps
        self.row_table = offset + round_up(scratch, 64)
        self.col_table = self.row_table + round_up(p.m * 8, 64)
        p.workspace_bytes = self.col_table + round_up(k * 8, 64)
        check_disp(p.workspace_bytes, "workspace")
        for count, bytes_ in self.row_dims + self.col_dims:
            if isinstance(bytes_, int):
                check_disp(count * bytes_, "input")

    def symbol(self):
        p = self.gemm
        kind = "sbconv2d" if p.dt.name == "bf16" else f"{p.dt.name}conv2d"
        return (f"{self.geometry.symbol_stem(kind)}"
                f"{'_isrt' if self.runtime_strides else ''}"
                f"{'_adirect' if p.a_direct else ''}"
                f"{'_bpre' if p.b_prepacked else ''}"
                f"{'_b0' if p.overwrite else ''}"
                f"{'_bias' if p.bias != 'none' else ''}"
                f"{relu_suffix(p.relu, p.relu_max)}"
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


def emit(request):
    conv = DotConv(request)
    g, p = conv.geometry, conv.gemm
    a_type, b_type, c_type = p.dt.types
    summary = (f"{g.layout}: {g.n}x{g.h}x{g.w}x{g.c} input ({a_type}), "
               f"{g.f} filters {g.kh}x{g.kw} ({b_type}), stride "
               f"{g.sh}x{g.sw}, dilation {g.dh}x{g.dw}, output {c_type}; "
               f"GEMM {p.m}x{p.n}x{p.k}")
    return kernel_text(p, conv.symbol(), request, conv.kind, summary,
                       headers=(["# qm.input_strides: runtime"]
                                if conv.runtime_strides else []))

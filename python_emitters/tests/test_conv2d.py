"""Convolution kernels (kind sconv2d) against a naive C reference.

As test_execution.py does for GEMM: small integer inputs make every sum
exact, so the output must equal out0 + 2 * conv(input, filter) bit for bit
after two calls. The input's stride gaps hold NaN (a kernel must not read
them), guard zones around the output a sentinel (it must not write them),
and a wrapper checks the callee-saved registers. The input's strides also
go into the workspace header, where a runtime_strides kernel reads them.
"""

import json
import unittest

from .support import LLVM_MC, cpu_has, emit, header, run_emitter
from .test_execution import GCC, HarnessTest

HARNESS_C = r"""
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void kernel_fn(const float *, const float *, float *, void *);
extern kernel_fn qm_kernel;
extern long qm_call_checked(kernel_fn *, const float *, const float *,
                            float *, void *);

#define GUARD 256
static const float SENTINEL = -0.0f;

static float *guarded(long count, float fill) {
    float *buf = malloc(sizeof(float) * (count + 2 * GUARD));
    if (!buf) { perror("malloc"); exit(3); }
    for (long i = 0; i < count + 2 * GUARD; i++) buf[i] = fill;
    return buf + GUARD;
}

int main(int argc, char **argv) {
    /* Three more arguments: the strides the header says (default: the
       input's), to see that a kernel reads them there. */
    if (argc != 17 && argc != 20) { fprintf(stderr, "usage\n"); return 3; }
    long a[19];
    for (int i = 0; i < argc - 1; i++) a[i] = atol(argv[i + 1]);
    int nchw = a[0] == 1, fhwc = a[0] == 2;
    long N = a[1], H = a[2], W = a[3], C = a[4], F = a[5], KH = a[6],
         KW = a[7], SH = a[8], SW = a[9], DH = a[10], DW = a[11], s0 = a[12],
         s1 = a[13], s2 = a[14], ws_bytes = a[15];
    long OH = (H - DH * (KH - 1) - 1) / SH + 1;
    long OW = (W - DW * (KW - 1) - 1) / SW + 1;
    /* Input element (n, c, h, w) at n*s0 + (nhwc: h*s1 + w*s2 + c;
       nchw: c*s1 + h*s2 + w). */
    long in_count = N * s0;
    float *in = guarded(in_count, NAN);
    #define IN(n, c, h, w) in[(n) * s0 + (nchw ? (c) * s1 + (h) * s2 + (w) \
                                               : (h) * s1 + (w) * s2 + (c))]
    for (long n = 0; n < N; n++)
        for (long c = 0; c < C; c++)
            for (long h = 0; h < H; h++)
                for (long w = 0; w < W; w++)
                    IN(n, c, h, w) = (float)((n * 3 + c * 2 + h * 5 + w * 11)
                                             % 7) - 3.0f;
    float *flt = guarded(KH * KW * C * F, NAN);
    #define FLT(f, c, kh, kw) flt[nchw ? (((f) * C + (c)) * KH + (kh)) * KW \
                                           + (kw) \
                                  : fhwc ? (((f) * KH + (kh)) * KW + (kw)) * C \
                                           + (c) \
                                     : (((kh) * KW + (kw)) * C + (c)) * F + (f)]
    for (long f = 0; f < F; f++)
        for (long c = 0; c < C; c++)
            for (long kh = 0; kh < KH; kh++)
                for (long kw = 0; kw < KW; kw++)
                    FLT(f, c, kh, kw) = (float)((f * 3 + c * 4 + kh * 7
                                                 + kw * 2) % 5) - 2.0f;
    long out_count = N * OH * OW * F;
    float *out = guarded(out_count, SENTINEL);
    #define OUT(n, f, oh, ow) out[nchw ? (((n) * F + (f)) * OH + (oh)) * OW \
                                           + (ow) \
                                     : (((n) * OH + (oh)) * OW + (ow)) * F + (f)]
    double *ref = malloc(sizeof(double) * out_count);
    for (long n = 0; n < N; n++)
        for (long f = 0; f < F; f++)
            for (long oh = 0; oh < OH; oh++)
                for (long ow = 0; ow < OW; ow++) {
                    OUT(n, f, oh, ow) = (float)((n + f + oh + ow) % 3);
                    double s = 0;
                    for (long c = 0; c < C; c++)
                        for (long kh = 0; kh < KH; kh++)
                            for (long kw = 0; kw < KW; kw++)
                                s += (double)IN(n, c, oh * SH + kh * DH,
                                                ow * SW + kw * DW)
                                     * FLT(f, c, kh, kw);
                    long i = &OUT(n, f, oh, ow) - out;
                    ref[i] = OUT(n, f, oh, ow) + 2 * s;
                }
    void *ws = aligned_alloc(64, (ws_bytes + 63) / 64 * 64);
    if (!ws) { perror("aligned_alloc"); return 3; }
    memset(ws, 0xff, ws_bytes);
    /* The header's stride slots (runtime_strides kernels read them). */
    long *header = ws;
    header[8] = argc == 20 ? a[16] : s0;
    header[9] = argc == 20 ? a[17] : s1;
    header[10] = argc == 20 ? a[18] : s2;
    for (int rep = 0; rep < 2; rep++)
        if (qm_call_checked(qm_kernel, in, flt, out, ws)) {
            printf("callee-saved register or %%rsp not preserved\n");
            return 2;
        }
    long bad = 0;
    for (long i = 0; i < out_count; i++)
        if (out[i] != (float)ref[i] && bad++ < 5)
            printf("mismatch out[%ld] = %g, want %g\n", i, out[i], ref[i]);
    for (long g = 1; g <= GUARD; g++) {
        if (memcmp(&out[-g], &SENTINEL, 4) && bad++ < 5)
            printf("write before the output at %ld\n", -g);
        if (memcmp(&out[out_count - 1 + g], &SENTINEL, 4) && bad++ < 5)
            printf("write past the output at +%ld\n", g);
    }
    if (bad) { printf("%ld bad elements\n", bad); return 1; }
    printf("ok\n");
    return 0;
}
"""


def conv_request(**fields):
    req = {"version": 1, "kind": "sconv2d", "layout": "nhwc_hwcf",
           "isa": "avx2", "n": 1, "h": 8, "w": 8, "c": 4, "f": 16, "kh": 3,
           "kw": 3, "mr": 6, "nr": 16, "k_unroll": 4, "kc": 32, "mc": 24,
           "nc": 32}
    for key, value in fields.items():
        if value is None:
            req.pop(key, None)
        else:
            req[key] = value
    return req


LAYOUT_CODES = {"nhwc_hwcf": 0, "nchw_fchw": 1, "nhwc_fhwc": 2}


def dense_strides(req):
    n, h, w, c = req["n"], req["h"], req["w"], req["c"]
    if req["layout"].startswith("nhwc"):
        return [h * w * c, w * c, c]
    return [c * h * w, h * w, w]


CORRECT = [
    ("nhwc_3x3_avx2", conv_request()),
    ("nhwc_c1_stride2_edges", conv_request(h=11, w=9, c=1, f=5,
                                           stride_h=2, stride_w=2)),
    ("nhwc_dilation2_batch2_ku1", conv_request(n=2, h=9, w=10, c=3, f=20,
                                               dilation_h=2, dilation_w=2,
                                               k_unroll=1, kc=8)),
    ("nhwc_1x1_b_in_place", conv_request(h=5, w=7, c=16, f=32, kh=1, kw=1,
                                         pack_b=False)),
    ("nhwc_strided_input_ir_jr", conv_request(
        h=7, w=6, c=3, f=8, nr=8, input_strides=[7 * 9 * 5, 9 * 5, 5],
        loop_order="ir-jr")),
    ("nhwc_avx512_7x7_stride2", conv_request(
        isa="avx512", h=23, w=21, c=3, f=32, kh=7, kw=7, stride_h=2,
        stride_w=2, mr=12, nr=32, kc=64, mc=48, nc=64)),
    ("nhwc_fhwc_3x3_edges", conv_request(layout="nhwc_fhwc", h=9, w=7, c=5,
                                         f=21)),
    ("nhwc_fhwc_avx512_stride2", conv_request(
        layout="nhwc_fhwc", isa="avx512", h=12, w=11, c=16, f=40,
        stride_h=2, stride_w=2, mr=14, nr=32, mc=28, nc=32)),
    ("nhwc_a_rows_c16_runs", conv_request(h=9, w=10, c=16, f=20,
                                          a_layout="rows", kc=40)),
    ("nhwc_a_rows_c3_stride2_avx512", conv_request(
        isa="avx512", h=15, w=13, c=3, f=32, kh=5, kw=5, stride_h=2,
        stride_w=2, mr=12, nr=32, mc=24, nc=32, kc=32, a_layout="rows")),
    ("nhwc_a_rows_strided_dilated", conv_request(
        h=9, w=8, c=5, f=16, dilation_h=2, dilation_w=2, a_layout="rows",
        input_strides=[9 * 10 * 7, 10 * 7, 7])),
    ("nchw_a_rows_filter", conv_request(layout="nchw_fchw", c=3, f=13,
                                        a_layout="rows")),
    ("nhwc_direct_c16_edges", conv_request(h=9, w=10, c=16, f=20, kc=16,
                                           a_layout="direct")),
    ("nhwc_direct_avx512_stride2_c32", conv_request(
        isa="avx512", h=13, w=12, c=32, f=40, stride_h=2, stride_w=2,
        mr=12, nr=32, mc=24, nc=32, kc=16, a_layout="direct",
        prefetch_a=256)),
    ("nhwc_direct_strided_dilated_kc_c", conv_request(
        h=11, w=9, c=8, f=16, dilation_h=2, dilation_w=2, kc=8, mc=12,
        a_layout="direct", input_strides=[11 * 10 * 9, 10 * 9, 9])),
    ("nhwc_direct_in_row_slivers", conv_request(
        h=8, w=14, c=32, f=24, kc=16, a_layout="direct")),
    ("nhwc_direct_in_row_avx512", conv_request(
        isa="avx512", n=2, h=6, w=26, c=32, f=32, mr=12, nr=32, mc=48, nc=32,
        kc=16, a_layout="direct", order="embedded")),
    ("nhwc_direct_1x1_batch2", conv_request(n=2, h=5, w=7, c=16, f=32, kh=1,
                                            kw=1, kc=16, a_layout="direct",
                                            k_unroll=8)),
    # kc spanning the kw of one kh (the run is KW*C), slivers across rows
    # in scratch rows.
    ("nhwc_direct_kc_kw_c", conv_request(h=9, w=10, c=16, f=20, kc=48,
                                         a_layout="direct")),
    ("nhwc_direct_kc_half_run_avx512", conv_request(
        isa="avx512", h=11, w=13, c=16, f=40, mr=12, nr=32, mc=36, nc=32,
        kc=24, a_layout="direct", order="pipelined")),
    ("nhwc_direct_stem_c3_stride2", conv_request(
        isa="avx512", h=23, w=21, c=3, f=32, kh=7, kw=7, stride_h=2,
        stride_w=2, mr=14, nr=32, mc=28, nc=32, kc=21, a_layout="direct")),
    # kc a multiple of the run: the K loop walks the panel's runs (the last
    # panel shorter), slivers across rows copied a run at a time.
    ("nhwc_direct_segmented_avx2", conv_request(
        h=9, w=10, c=16, f=20, kc=96, a_layout="direct")),
    ("nhwc_direct_segmented_ku_remainder", conv_request(
        h=8, w=9, c=10, f=16, kc=60, k_unroll=8, a_layout="direct")),
    ("nhwc_direct_segmented_stem_avx512", conv_request(
        isa="avx512", h=23, w=33, c=3, f=32, kh=7, kw=7, stride_h=2,
        stride_w=2, mr=14, nr=32, mc=28, nc=32, kc=147, a_layout="direct",
        order="embedded")),
    ("nhwc_direct_segmented_dilated_batch2", conv_request(
        isa="avx512", n=2, h=11, w=12, c=16, f=32, dilation_w=2, mr=12,
        nr=32, mc=24, nc=32, kc=64, a_layout="direct")),
    # Rows gathered in pieces: kc a multiple of the run (last panel short)
    # or a divisor of it.
    ("nhwc_a_rows_pieces_c3_avx2", conv_request(
        h=13, w=11, c=3, f=16, kh=5, kw=5, stride_h=2, stride_w=2, kc=30,
        a_layout="rows")),
    ("nhwc_a_rows_pieces_stem_avx512", conv_request(
        isa="avx512", h=23, w=21, c=3, f=32, kh=7, kw=7, stride_h=2,
        stride_w=2, mr=14, nr=32, mc=28, nc=32, kc=147, a_layout="rows")),
    ("nhwc_a_rows_piece_divides_run", conv_request(
        h=9, w=10, c=16, f=20, kc=24, a_layout="rows")),
    ("nhwc_a_rows_pieces_dilated", conv_request(
        isa="avx512", h=11, w=9, c=8, f=16, dilation_w=2, mr=12, nr=16,
        mc=24, nc=16, kc=16, a_layout="rows")),
    # The filter packed by each sliver's first tile (fuse_pack_b), with A
    # in place (scratch slivers across rows too), in segments, and in rows
    # over a batch (each image packs it again).
    ("nhwc_direct_fused_b", conv_request(
        h=9, w=10, c=16, f=32, kc=48, a_layout="direct", fuse_pack_b=True)),
    ("nhwc_direct_segmented_fused_b_avx512", conv_request(
        isa="avx512", n=2, h=11, w=12, c=16, f=64, mr=12, nr=32, mc=24,
        nc=32, kc=96, a_layout="direct", loop_order="ir-jr",
        fuse_pack_b=True)),
    ("nhwc_a_rows_fused_b_batch2", conv_request(
        n=2, h=8, w=9, c=3, f=16, kc=27, a_layout="rows", fuse_pack_b=True)),
    # The conv model's 7x64 (bmem) block: one panel of all of K, and K in
    # segments of whole runs.
    ("nhwc_direct_fused_b_7x64_bmem", conv_request(
        isa="avx512", h=9, w=9, c=16, f=64, mr=7, nr=64, mc=14, nc=64,
        kc=144, a_layout="direct", fuse_pack_b=True, order="bmem")),
    ("nhwc_direct_segmented_7x64_bmem_batch2", conv_request(
        isa="avx512", n=2, h=10, w=11, c=16, f=128, mr=7, nr=64, mc=21,
        nc=64, kc=96, a_layout="direct", fuse_pack_b=True, order="bmem")),
    ("nchw_3x3_avx2", conv_request(layout="nchw_fchw", c=3, f=7)),
    ("nchw_stride1_vector_gather_batch3", conv_request(
        layout="nchw_fchw", n=3, h=20, w=19, c=2, f=5, nr=16)),
    ("nchw_stride2_dilation2_strided", conv_request(
        layout="nchw_fchw", n=2, h=13, w=12, c=3, f=6, stride_h=2,
        stride_w=2, dilation_h=2, dilation_w=2,
        input_strides=[3 * 14 * 13 + 5, 14 * 13, 13])),
    ("nchw_avx512_8x16_edges", conv_request(
        layout="nchw_fchw", isa="avx512", h=10, w=10, c=4, f=9, mr=8,
        nr=16, mc=16, nc=32)),
    # AVX-512's PACK B a piece at a time: 32-pixel slivers in one output
    # row and across rows (34 a row), a width stride of 2 (pieces of every
    # other float: 19 a row) and of 3 (a piece a pixel), a view.
    ("nchw_avx512_pieces", conv_request(
        layout="nchw_fchw", isa="avx512", n=2, h=6, w=36, c=3, f=9, mr=8,
        nr=32, mc=16, nc=64, kc=16)),
    ("nchw_avx512_pieces_stride2", conv_request(
        layout="nchw_fchw", isa="avx512", n=2, h=7, w=39, c=3, f=9, mr=8,
        nr=32, mc=16, nc=64, stride_h=2, stride_w=2)),
    # The filter (the GEMM's A) read where it lies, as sgemm's A.
    ("nchw_avx512_filter_in_place", conv_request(
        layout="nchw_fchw", isa="avx512", n=2, h=9, w=20, c=5, f=21, mr=6,
        nr=32, mc=12, nc=32, kc=16, a_layout="direct")),
    ("nchw_avx512_pieces_stride3_view", conv_request(
        layout="nchw_fchw", isa="avx512", h=7, w=40, c=2, f=9, mr=8,
        nr=32, mc=16, nc=32, stride_w=3,
        input_strides=[2 * 8 * 43 + 3, 8 * 43, 43])),
]


# runtime_strides kernels: (name, request, the input strides of each call);
# one kernel runs on a dense input and on views of larger buffers.
RUNTIME_STRIDES = [
    ("nhwc_3x3_avx2", conv_request(runtime_strides=True),
     [[8 * 8 * 4, 8 * 4, 4], [9 * 11 * 4 + 3, 11 * 4, 4]]),
    ("nhwc_rows_stride2_avx512", conv_request(
        isa="avx512", n=2, h=11, w=9, c=3, f=32, mr=12, nr=32, kc=27,
        stride_h=2, stride_w=2, a_layout="rows", runtime_strides=True),
     [[11 * 9 * 3, 9 * 3, 3], [13 * 12 * 3 + 1, 12 * 3 + 2, 3]]),
    # With the h stride at run time the run is KW*C (48): kc 48.
    ("nhwc_direct_fused_b", conv_request(
        n=2, h=9, w=10, c=16, f=32, kc=48, a_layout="direct",
        fuse_pack_b=True, runtime_strides=True),
     [[9 * 10 * 16, 10 * 16, 16], [3 * 9 * 10 * 16, 13 * 16, 16]]),
    ("nhwc_fhwc_dilation2_direct_avx512", conv_request(
        layout="nhwc_fhwc", isa="avx512", h=11, w=12, c=16, f=40, mr=12,
        nr=32, kc=16, dilation_h=2, dilation_w=2, a_layout="direct",
        runtime_strides=True),
     [[11 * 12 * 16, 12 * 16, 16], [12 * 20 * 16, 20 * 16 + 16, 16]]),
    ("nchw_batch3", conv_request(
        layout="nchw_fchw", n=3, h=12, w=11, c=3, f=7, runtime_strides=True),
     [[3 * 12 * 11, 12 * 11, 11], [4 * 14 * 16 + 7, 14 * 16 + 5, 16]]),
    ("nchw_stride2_dilation2_avx512", conv_request(
        layout="nchw_fchw", isa="avx512", n=2, h=13, w=12, c=4, f=9, mr=8,
        nr=16, mc=16, stride_h=2, stride_w=2, dilation_h=2, dilation_w=2,
        runtime_strides=True),
     [[4 * 13 * 12, 13 * 12, 12], [5 * 15 * 13, 15 * 13, 13]]),
]


@unittest.skipUnless(LLVM_MC, "llvm-mc not found")
@unittest.skipUnless(GCC, "gcc not found on PATH")
@unittest.skipUnless(cpu_has("avx2") and cpu_has("fma"),
                     "host CPU lacks avx2/fma")
class ConvExecutionTest(HarnessTest):

    HARNESS_C = HARNESS_C

    @staticmethod
    def args(req, text, strides=None):
        """The harness's arguments: the convolution, the input's strides
        (`strides`, or the request's), the workspace size."""
        strides = strides or req.get("input_strides", dense_strides(req))
        return [LAYOUT_CODES[req["layout"]], req["n"], req["h"], req["w"],
                req["c"], req["f"], req["kh"], req["kw"],
                req.get("stride_h", 1), req.get("stride_w", 1),
                req.get("dilation_h", 1), req.get("dilation_w", 1)] + \
            strides + [int(header(text, "workspace_bytes"))]

    def run_kernel(self, name, req, strides=None):
        return self.run_harness(
            name, req, lambda text: self.args(req, text, strides))

    def test_kernels_match_reference(self):
        for name, req in CORRECT:
            with self.subTest(name=name):
                if req["isa"] == "avx512" and not cpu_has("avx512f"):
                    self.skipTest("host CPU lacks avx512f")
                status, output = self.run_kernel(name, req)
                self.assertEqual(status, 0, output)
                self.assertEqual(output.strip(), "ok")

    def test_runtime_strides_serve_every_view(self):
        for name, req, calls in RUNTIME_STRIDES:
            for strides in calls:
                with self.subTest(name=name, strides=strides):
                    if req["isa"] == "avx512" and not cpu_has("avx512f"):
                        self.skipTest("host CPU lacks avx512f")
                    status, output = self.run_kernel(name, req, strides)
                    self.assertEqual(status, 0, output)
                    self.assertEqual(output.strip(), "ok")

    def test_harness_catches_a_wrong_kernel(self):
        status, output = self.run_kernel(
            "drop_k", conv_request(fault="drop-k"))
        self.assertEqual(status, 1, output)
        self.assertIn("bad elements", output)

    def test_runtime_strides_come_from_the_header(self):
        # A view of a larger input while the header says dense: a kernel
        # that reads its strides from the header computes the wrong pixels.
        for layout in ("nhwc_hwcf", "nchw_fchw"):
            with self.subTest(layout=layout):
                req = conv_request(layout=layout, n=2, h=9, w=8, c=3, f=7,
                                   runtime_strides=True)
                view = ([11 * 10 * 3, 10 * 3, 3] if layout == "nhwc_hwcf"
                        else [3 * 11 * 10, 11 * 10, 10])
                status, output = self.run_harness(
                    "stale_header", req,
                    lambda text: self.args(req, text, view)
                    + dense_strides(req))
                self.assertEqual(status, 1, output)
                self.assertIn("bad elements", output)


class ConvRequestTest(unittest.TestCase):
    """Bad convolution requests: exit 1 and one error line naming the field."""

    def check_error(self, req, words):
        proc = run_emitter(json.dumps(req))
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertEqual(proc.stdout, "")
        lines = proc.stderr.splitlines()
        self.assertEqual(len(lines), 1, proc.stderr)
        self.assertTrue(lines[0].startswith("error: "), lines[0])
        for word in words:
            self.assertIn(word.lower(), lines[0].lower())

    def test_bad_requests(self):
        for req, words in [
            (conv_request(layout="nhwc_chwf"), ["layout", "nhwc_chwf"]),
            (conv_request(layout="nhwc_fhwc", pack_b=False), ["pack_b"]),
            (conv_request(kh=9), ["spans", "9x3"]),
            (conv_request(stride_h=0), ["stride_h", ">= 1"]),
            (conv_request(c=None), ["'c'"]),
            (conv_request(input_strides=[1, 2]), ["input_strides"]),
            (conv_request(input_strides=[256, 32, 3]), ["overlap"]),
            (conv_request(layout="nchw_fchw", pack_b=False), ["pack_b"]),
            (conv_request(layout="nchw_fchw", fuse_pack_b=True),
             ["fuse_pack_b", "nchw_fchw"]),
            (conv_request(layout="nhwc_fhwc", fuse_pack_b=True),
             ["fuse_pack_b", "transposed"]),
            (conv_request(m=5), ["unknown field", "m"]),
            (conv_request(a_layout="direct", kc=18), ["direct", "divide",
                                                      "12", "multiple"]),
            (conv_request(mc=25), ["mc", "mr"]),
            (conv_request(runtime_strides=True,
                          input_strides=[8 * 8 * 4, 8 * 4, 4]),
             ["runtime_strides", "input_strides", "one or the other"]),
            (conv_request(runtime_strides=1), ["runtime_strides",
                                               "true or false"]),
            # A 3-wide input: KH*KW*C = 36 floats in a row when dense
            # (kc 18 divides it); at run time the h stride ends the run at
            # KW*C = 12.
            (conv_request(w=3, runtime_strides=True, a_layout="direct",
                          kc=18), ["direct", "divide", "12"]),
            # A channel slice's pixels lie at least F (16) apart; nchw
            # outputs are dense.
            (conv_request(output_pixel_stride=12), ["output_pixel_stride",
                                                    "overlaps", "16"]),
            (conv_request(layout="nchw_fchw", output_pixel_stride=20),
             ["output_pixel_stride", "nhwc"]),
        ]:
            with self.subTest(req=req):
                self.check_error(req, words)

    def test_symbol_names_the_convolution(self):
        text = emit(conv_request(stride_h=2, dilation_w=2, h=9, w=9))
        self.assertEqual(
            header(text, "symbol"),
            "qm_sconv2d_nhwc_hwcf_1x9x9x4_f16_k3x3_s2x1_d1x2_6x16_ku4_kc32"
            "_mc24_nc16_pfa0_pfb0_x86_64_avx2")
        strided = emit(conv_request(input_strides=[8 * 8 * 6, 8 * 6, 6]))
        self.assertIn("_is384x48x6_", header(strided, "symbol"))
        # A channel slice of a 24-channel output: C's rows 24 apart.
        sliced = emit(conv_request(output_pixel_stride=24))
        self.assertIn("_d1x1_ldo24_6x16_", header(sliced, "symbol"))
        self.assertEqual(header(text, "symbol").find("_ldo"), -1)
        runtime = emit(conv_request(runtime_strides=True))
        self.assertIn("_d1x1_isrt_6x16_", header(runtime, "symbol"))
        self.assertEqual(header(runtime, "input_strides"), "runtime")
        self.assertEqual(header(text, "input_strides"), None)

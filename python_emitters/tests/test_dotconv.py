"""Convolutions on the dot-product instructions (dotconv.py): sbconv2d
(bf16 x bf16 -> f32) and iconv2d (u8 or s8 x s8 -> s32), nhwc layouts.
Requests, and kernels run on this CPU against an exact reference: small
integers in bf16 (every f32 sum exact), 8-bit values over their whole
ranges (no s32 sum overflows at these sizes); the input's stride gaps and
the bytes past it hold values a kernel must not read, the output's tail a
sentinel it must not write; broken variants caught."""

import unittest

from qimeng_emitters.dotconv import emit as emit_conv

from .support import RefusalTestCase, header, runs_kernels
from .test_dotgemm import (PREPACK_B, KernelHarness, f16_harness,
                           prepacked_b_args)

BASE = {"version": 1, "kind": "sbconv2d", "isa": "avx512",
        "layout": "nhwc_hwcf", "n": 2, "h": 7, "w": 9, "c": 6, "f": 37,
        "kh": 3, "kw": 2, "mr": 8, "nr": 32, "k_unroll": 2, "kc": 12,
        "mc": 16, "nc": 32}

# Arguments: type (0 bf16, 1 u8 input, 2 s8 input), layout (0 nhwc_hwcf,
# 1 nhwc_fhwc, 2 nchw_fchw: strides n, c, h with unit w), N H W C F KH KW
# SH SW DH DW, the input's strides s0 s1 s2 (elements; s2 > C leaves gaps
# between pixels), workspace bytes, overwrite, runtime strides (written to
# the header at 64), epilogue bits (1 bias per channel, 2 relu), and two
# parts of the output's rows (split > 0) or one call (0); for a b_prepacked
# kernel, NR, k_groups and plus128: the filter packed by the harness.
HARNESS = r"""
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
void qm_kernel(const void *, const void *, void *, void *);
""" + PREPACK_B + r"""
static uint16_t bf(float f) { uint32_t u; memcpy(&u, &f, 4); return u >> 16; }
int main(int argc, char **argv) {
  long a[24] = {0};
  for (int i = 1; i < argc && i <= 24; i++) a[i - 1] = atol(argv[i]);
  int type = a[0], fhwc = a[1] == 1, nchw = a[1] == 2;
  long N = a[2], H = a[3], W = a[4], C = a[5], F = a[6], KH = a[7], KW = a[8];
  long SH = a[9], SW = a[10], DH = a[11], DW = a[12];
  long s0 = a[13], s1 = a[14], s2 = a[15], ws = a[16];
  int ow = a[17], rt = a[18], epi = a[19]; long split = a[20];
  long OH = (H - DH * (KH - 1) - 1) / SH + 1, OW = (W - DW * (KW - 1) - 1) / SW + 1;
  long M = N * OH * OW, K = KH * KW * C, tail = 64;
  int eb = type ? 1 : 2;
  long in_n = N * s0 + tail, flt_n = K * F + tail, out_n = (M + 16) * F + tail;
  unsigned char *in = malloc(in_n * eb), *flt = malloc(flt_n * eb);
  float *out = malloc(4 * out_n); int32_t *iout = (int32_t *)out;
  double *val = malloc(8 * in_n), *fv = malloc(8 * flt_n);
  srand(5);
  /* Every element, gaps and tail too, gets a value; the reference reads
     only the input's elements. Gaps are NaN (bf16) or the extremes. */
  for (long i = 0; i < in_n; i++) {
    long n = i / s0, r = i % s0, h = r / s1, w = (r % s1) / s2, c = r % s1 % s2;
    int inside = n < N && h < H && w < W && c < C && r % s1 < W * s2;
    if (nchw) {
      c = r / s1; h = (r % s1) / s2; w = r % s1 % s2;
      inside = n < N && c < C && h < H && w < W && r % s1 < H * s2;
    }
    double v;
    if (type == 0) {
      v = inside ? rand() % 9 - 4 : NAN;
      ((uint16_t *)in)[i] = bf((float)v);
    } else {
      v = inside ? (type == 1 ? rand() % 256 : rand() % 256 - 128) : (type == 1 ? 255 : -128);
      in[i] = (unsigned char)(int)v;
    }
    val[i] = v;
  }
  for (long i = 0; i < flt_n; i++) {
    double v = type ? (i % 5 == 0 ? -128 : rand() % 256 - 128) : rand() % 9 - 4;
    if (type) flt[i] = (unsigned char)(int)v; else ((uint16_t *)flt)[i] = bf((float)v);
    fv[i] = v;
  }
  float bias[1024];
  for (long j = 0; j < F; j++) bias[j] = (float)(j % 7 - 3);
  for (long i = 0; i < out_n; i++) {
    if (type) iout[i] = i < M * F ? (ow ? 0x7fa5a5a5 : rand() % 1000 - 500) : 0x7fa5a5a5;
    else out[i] = i < M * F ? (ow ? NAN : (float)(rand() % 5)) : -7.25f;
  }
  unsigned char *in0 = malloc(in_n * eb), *flt0 = malloc(flt_n * eb);
  memcpy(in0, in, in_n * eb); memcpy(flt0, flt, flt_n * eb);
  double *R = malloc(8 * M * F);
  for (long n = 0; n < N; n++) for (long y = 0; y < OH; y++) for (long x = 0; x < OW; x++)
    for (long f = 0; f < F; f++) {
      long o = nchw ? ((n * F + f) * OH + y) * OW + x : ((n * OH + y) * OW + x) * F + f;
      double s = ow ? 0 : (type ? iout[o] : out[o]);
      for (long i = 0; i < KH; i++) for (long j = 0; j < KW; j++) for (long c = 0; c < C; c++) {
        long k = (i * KW + j) * C + c;
        if (nchw)
          s += val[n * s0 + c * s1 + (y * SH + i * DH) * s2 + x * SW + j * DW]
               * fv[f * K + (c * KH + i) * KW + j];
        else
          s += val[n * s0 + (y * SH + i * DH) * s1 + (x * SW + j * DW) * s2 + c]
               * fv[fhwc ? f * K + k : k * F + f];
      }
      if (epi & 1) s += bias[f];
      if ((epi & 2) && s < 0) s = 0;
      if ((epi & 4) && s < 0) s *= 0.25;  /* leaky relu */
      R[o] = s;
    }
  int64_t *Wk = aligned_alloc(64, (ws + 63) / 64 * 64);
  Wk[14] = (int64_t)bias;
  if (rt) { Wk[8] = s0; Wk[9] = s1; Wk[10] = s2; }
  const void *fk = a[21] ? (const void *)prepack_b(flt, K, F, fhwc ? K : F, fhwc, eb, a[21], a[22], a[23]) : (const void *)flt;
  if (split > 0) {
    /* Parts of the GEMM's rows: pixels (nhwc), filters (nchw). */
    long gm = nchw ? F : M, gn = nchw ? OH * OW : F;
    Wk[3] = 0; Wk[4] = split; Wk[5] = 0; Wk[6] = gn; qm_kernel(in, fk, out, Wk);
    Wk[3] = split; Wk[4] = gm; qm_kernel(in, fk, out, Wk);
  } else {
    qm_kernel(in, fk, out, Wk);
  }
  long bad = 0;
  for (long i = 0; i < out_n; i++) {
    int inside = i < M * F;
    int ok = type ? iout[i] == (inside ? (int32_t)(int64_t)R[i] : 0x7fa5a5a5)
                  : out[i] == (inside ? (float)R[i] : -7.25f);
    if (!ok) {
      if (bad < 3) printf("out[%ld] = %g, want %g\n", i, type ? (double)iout[i] : out[i], inside ? R[i] : -1.0);
      bad++;
    }
  }
  if (memcmp(in, in0, in_n * eb) || memcmp(flt, flt0, flt_n * eb)) { printf("input or filter changed\n"); bad++; }
  if (bad) { printf("%ld bad elements\n", bad); return 1; }
  printf("ok\n");
  return 0;
}
"""


def request(**changes):
    return dict(BASE, **changes)


class DotConvRequestTest(RefusalTestCase):
    emit_under_test = staticmethod(emit_conv)

    def test_refusals(self):
        # nchw: the filter is A, the input B (gathered).
        nchw = request(layout="nchw_fchw")
        self.refuses(dict(nchw, kind="iconv2d", kc=16),
                     "s8 inputs only")
        self.refuses(dict(nchw, b_prepacked=True), "gathered input")
        self.refuses(dict(nchw, kc=5), "whole groups of 2")
        # bf16 takes an odd C (blocks ending in half a pair) where kc
        # divides the run: KW*C = 10 here.
        self.refuses(request(c=5), "must divide 10")
        # A in place from blocks ending in a partial group: their whole
        # groups whole K steps (10 pairs of the stem's 21 k: not ku 4).
        self.refuses(request(c=3, kh=3, kw=7, w=13, kc=21, k_unroll=4,
                             a_layout="direct"), "the same partial group")
        # Blocks of several runs: A in place only, B as stored where the
        # runs are padded to whole groups, at most 8 runs.
        stem = dict(c=3, kh=3, kw=7, w=13, kc=63, k_unroll=1)
        self.refuses(request(**stem), "or be a multiple of it")
        self.refuses(request(a_layout="direct", layout="nhwc_fhwc", **stem),
                     "B^T")
        self.refuses(request(a_layout="direct", c=3, kh=9, kw=1, h=12,
                             kc=27, k_unroll=1), "at most 8")
        # Bytes: kc whole quads, or a divisor of K (C = 6: the run is 12).
        self.refuses(request(kind="iconv2d", c=6, kc=10), "or divide K = 36")
        # A kc block must lie in one run of consecutive k (C = 6 here: the
        # width dilation breaks KW*C).
        self.refuses(request(dilation_w=2, kc=12), "must divide 6")
        self.refuses(request(kind="iconv2d", c=8, kc=8, relu=True),
                     "unknown field")
        self.refuses(request(runtime_strides=True,
                             input_strides=[200, 20, 6]), "one or the other")
        self.refuses(request(bias="columns"), "must be true or false")
        # A 16-bit output: bf16's and f16's, not 8-bit convolutions'.
        self.refuses(request(kind="iconv2d", c=8, kc=8, bf16_output=True),
                     "unknown field")
        self.refuses(request(f16_output=True), "unknown field")

    def test_header(self):
        text = emit_conv(request(runtime_strides=True, overwrite=True))
        self.assertEqual(header(text, "input_strides"), "runtime")
        self.assertEqual(
            header(text, "symbol"),
            "qm_sbconv2d_nhwc_hwcf_2x7x9x6_f37_k3x2_s1x1_d1x1_isrt_b0_8x32"
            "_ku2_kc12_mc16_nc32_x86_64_avx512bf16")
        text = emit_conv(request(kind="iconv2d", a_type="s8", c=8, kc=16))
        self.assertTrue(header(text, "symbol").startswith(
            "qm_s8s8conv2d_nhwc_hwcf_2x7x9x8_f37"))
        self.assertIn("avx512vnni", header(text, "features"))
        # bf16_output: D in the symbol; nchw steps it an image with C and
        # puts the header's pointer (at 120) back after the last.
        text = emit_conv(request(layout="nchw_fchw", n=3, overwrite=True,
                                 bf16_output=True))
        self.assertIn("_b0_obf16_", header(text, "symbol"))
        self.assertEqual(text.count("addq $2960, 120(%rbx)"), 1)
        self.assertEqual(text.count("subq $8880, 120(%rbx)"), 1)


@runs_kernels("avx512_bf16", "avx512_vnni", "avx512bw",
              lacks="AVX512-BF16 or AVX512-VNNI")
class DotConvExecutionTest(KernelHarness):
    HARNESS = HARNESS
    #: The emitter whose kernels run_kernel runs.
    EMIT = staticmethod(emit_conv)

    def run_kernel(self, name, req, strides=None, split=0):
        """Runs req's kernel on an input with `strides` (elements; the
        dense ones by default) and returns (status, output)."""
        text = self.EMIT(req)
        c, h, w = req["c"], req["h"], req["w"]
        nchw = req["layout"] == "nchw_fchw"
        s0, s1, s2 = strides or req.get(
            "input_strides", [c * h * w, h * w, w] if nchw else
            [h * w * c, w * c, c])
        kind = (0 if req["kind"] == "sbconv2d" else
                1 if req.get("a_type", "u8") == "u8" else 2)
        args = [kind, ("nhwc_hwcf", "nhwc_fhwc",
                       "nchw_fchw").index(req["layout"]),
                req["n"], h, w, c, req["f"], req["kh"], req["kw"],
                req.get("stride_h", 1), req.get("stride_w", 1),
                req.get("dilation_h", 1), req.get("dilation_w", 1),
                s0, s1, s2, header(text, "workspace_bytes"),
                1 if req.get("overwrite") else 0,
                1 if req.get("runtime_strides") else 0,
                (1 if req.get("bias") else 0)
                | (2 if req.get("relu") else 0)
                | (4 if req.get("leaky_relu") == 0.25 else 0), split]
        return self.run_harness(name, text, args + prepacked_b_args(text))

    def check(self, name, req, **kwargs):
        status, output = self.run_kernel(name, req, **kwargs)
        self.assertEqual(status, 0, output)
        self.assertEqual(output.strip(), "ok")

    CASES = [
        # (name, changes): layouts, blocks of one tap and of several
        # (kc 12 of a run of KW*C = 12), strides, dilations, edges in M
        # and N, the 8-row transposed copies (mr 16), K unrolls.
        ("hwcf", {}),
        ("fhwc", {"layout": "nhwc_fhwc"}),
        ("tap_blocks", {"kc": 6, "k_unroll": 1}),
        ("strided", {"stride_h": 2, "stride_w": 2, "h": 9, "w": 11}),
        ("dilated", {"dilation_h": 2, "dilation_w": 2, "kc": 6}),
        ("mr16", {"mr": 16, "nr": 16, "mc": 32, "nc": 16, "c": 16,
                  "kc": 32, "f": 40}),
        ("overwrite", {"overwrite": True}),
        ("epilogue", {"bias": True, "relu": True}),
        ("leaky", {"bias": True, "leaky_relu": 0.25}),
        ("one_block", {"kh": 1, "kw": 1, "c": 24, "kc": 24}),
    ]

    def test_odd_channels(self):
        """3 channels (an RGB image: ResNet's stem): blocks of an odd run
        of k (KW*C = 21, or C = 3 where the pixels are not dense), each
        ending in half a pair (bf16) or a partial quad (bytes), both filter
        layouts, K even and odd, stride 2."""
        for name, changes in [
                ("stem", {"c": 3, "kh": 3, "kw": 7, "w": 13, "kc": 21,
                          "stride_h": 2, "stride_w": 2}),
                ("even_k", {"c": 3, "kh": 2, "kw": 3, "kc": 9}),
                ("fhwc", {"layout": "nhwc_fhwc", "c": 3, "kw": 3, "kc": 9}),
                ("channel_blocks", {"c": 3, "kw": 3, "kc": 3,
                                    "k_unroll": 1}),
                ("view", {"c": 3, "kw": 3, "kc": 3, "k_unroll": 1,
                          "input_strides": [7 * 13 * 5, 13 * 5, 5]})]:
            with self.subTest(name):
                req = request(**changes)
                self.check("odd_" + name, req,
                           strides=req.get("input_strides"))
        # Bytes: every block ends in the same partial quad (kc 21: 5 quads
        # and 1 byte; kc 9 of K 18: 2 and 1; kc 3: 3 bytes), u8 and s8 (its
        # packed A plus 128 in the real bytes only).
        for a_type in ("u8", "s8"):
            for name, changes in [
                    ("stem", {"c": 3, "kh": 3, "kw": 7, "w": 13, "kc": 21,
                              "stride_h": 2, "stride_w": 2}),
                    ("even_k", {"c": 3, "kh": 2, "kw": 3, "kc": 9}),
                    ("fhwc", {"layout": "nhwc_fhwc", "c": 3, "kw": 3,
                              "kc": 9, "k_unroll": 1}),
                    ("channel_blocks", {"c": 3, "kw": 3, "kc": 3,
                                        "k_unroll": 1})]:
                with self.subTest(f"{a_type} {name}"):
                    self.check(f"odd_{a_type}_{name}", request(
                        kind="iconv2d", a_type=a_type, **changes))

    def test_bf16(self):
        for name, changes in self.CASES:
            with self.subTest(name):
                self.check("bf16_" + name, request(**changes))

    def test_int8(self):
        for a_type in ("u8", "s8"):
            for name, changes in self.CASES:
                if "bias" in changes:
                    continue
                changes = dict(changes, kind="iconv2d", a_type=a_type)
                # C whole quads of bytes, kc whole quads in one run.
                changes["c"] = 8 if changes.get("c", 6) == 6 else \
                    changes["c"]
                changes["kc"] = {12: 16, 6: 8}.get(changes.get("kc", 12),
                                                   changes.get("kc"))
                with self.subTest(f"{a_type} {name}"):
                    self.check(f"{a_type}_{name}", request(**changes))

    def test_a_direct(self):
        """A read in place: slivers of 8 pixels in one output row read
        where they lie, the others (across rows, W = 9 output pixels a
        row) copied; strides, views and run-time strides."""
        for name, changes in [
                ("hwcf", {"c": 8, "kc": 16}),
                ("fhwc", {"layout": "nhwc_fhwc", "c": 8, "kc": 8,
                          "k_unroll": 4}),
                ("strided_16_rows", {"stride_w": 2, "w": 21, "c": 16,
                                     "kc": 32, "mr": 16, "nr": 16,
                                     "mc": 32, "nc": 16}),
                ("rt", {"c": 8, "kc": 16, "runtime_strides": True}),
                ("epilogue", {"c": 8, "kc": 16, "bias": True, "relu": True,
                              "overwrite": True})]:
            with self.subTest(name):
                req = request(a_layout="direct", **changes)
                self.check("direct_" + name, req)
                if changes.get("runtime_strides"):
                    self.check("direct_rt_window", req,
                               strides=[8 * 13 * 8 + 3, 13 * 8, 8])
        for a_type in ("u8", "s8"):
            # s8: the filter packed plus 128, each pixel's 128 sum_k
            # subtracted (dotgemm.py, shift_b).
            self.check(f"{a_type}_direct", request(
                kind="iconv2d", a_type=a_type, c=8, kc=16,
                a_layout="direct"))
            # The second image 1669 bytes on: its slivers at odd addresses.
            odd = [8 * 13 * 16 + 5, 13 * 16, 16]
            self.check(f"{a_type}_direct_odd_image", request(
                kind="iconv2d", a_type=a_type, c=16, kc=32, k_unroll=4,
                a_layout="direct", input_strides=odd), strides=odd)
            self.check(f"{a_type}_direct_rt", request(
                kind="iconv2d", a_type=a_type, c=16, kc=32, k_unroll=4,
                runtime_strides=True, a_layout="direct"),
                strides=[8 * 13 * 16 + 5, 13 * 16, 16])
        self.check("direct_view", request(a_layout="direct", c=8, kc=8,
                                          input_strides=[1500, 150, 12]),
                   strides=[1500, 150, 12])

    def test_a_direct_odd_channels(self):
        """A in place from 3 channels: every kc block's whole groups read
        as K steps, its last k (bf16: one; bytes: 1 to 3) under a mask, so
        nothing of the next run (or past the input) is read. The stem's
        blocks of 21 k (OW 9: slivers of 8 in one output row in place,
        across rows copied), 4 pairs and one k at K unrolls 1 to 4, the
        pixels of a view (kc 3), u8 and s8 (its row sums of 21 bytes).
        And kc blocks of several runs (k_runs: all three filter rows of
        the stem's a block, B packed run by run; runs of whole groups;
        the view's runs of C, run-time strides), the K loop stepping from
        run to run through the column table."""
        stem = {"c": 3, "kh": 3, "kw": 7, "w": 23, "kc": 21,
                "stride_h": 2, "stride_w": 2}
        for name, changes in [
                ("stem", dict(stem, k_unroll=1)),
                ("stem_ku2", dict(stem, k_unroll=2)),
                ("stem_epilogue", dict(stem, k_unroll=2, bias=True,
                                       relu=True, overwrite=True)),
                ("fhwc", {"layout": "nhwc_fhwc", "c": 3, "kh": 2, "kw": 3,
                          "kc": 9, "k_unroll": 4}),
                ("view", {"c": 3, "kw": 3, "kc": 3, "k_unroll": 1,
                          "input_strides": [7 * 13 * 5, 13 * 5, 5]}),
                ("stem_runs", dict(stem, kc=63, k_unroll=2)),
                ("stem_two_runs", dict(stem, kh=4, kc=42, k_unroll=1,
                                       bias=True, relu=True)),
                ("view_runs", {"c": 3, "kw": 3, "kc": 9, "k_unroll": 1,
                               "input_strides": [7 * 13 * 5, 13 * 5, 5]}),
                ("rt_runs", {"c": 3, "kw": 3, "kh": 2, "kc": 18,
                             "k_unroll": 1, "runtime_strides": True}),
                ("whole_runs", {"c": 8, "kc": 48, "k_unroll": 2}),
                ("whole_runs_fhwc", {"layout": "nhwc_fhwc", "c": 8,
                                     "kc": 48, "k_unroll": 4})]:
            with self.subTest(name):
                req = request(a_layout="direct", **changes)
                self.check("direct_odd_" + name, req,
                           strides=req.get("input_strides"))
        for a_type in ("u8", "s8"):
            for name, changes in [
                    ("stem", dict(stem, k_unroll=1)),
                    ("three_bytes", {"c": 3, "kh": 2, "kw": 5, "kc": 15,
                                     "k_unroll": 1}),
                    ("two_bytes", {"c": 2, "kh": 2, "kw": 3, "kc": 6,
                                   "k_unroll": 1}),
                    ("stem_runs", dict(stem, kc=63, k_unroll=1)),
                    ("three_byte_runs", {"c": 3, "kh": 2, "kw": 5,
                                         "kc": 30, "k_unroll": 1}),
                    ("whole_runs", {"c": 8, "kc": 48, "k_unroll": 2})]:
                with self.subTest(f"{a_type} {name}"):
                    self.check(f"direct_odd_{a_type}_{name}", request(
                        kind="iconv2d", a_type=a_type, a_layout="direct",
                        **changes))

    def test_b_prepacked(self):
        """The filter packed once by the caller (b_prepacked): both filter
        layouts, bf16, u8 and s8 (A packed, and in place: B plus 128),
        two parts of the rows."""
        for name, changes in [
                ("hwcf", {"c": 8, "kc": 16}),
                ("fhwc", {"layout": "nhwc_fhwc", "c": 8, "kc": 8,
                          "k_unroll": 4}),
                ("direct", {"c": 8, "kc": 16, "a_layout": "direct"}),
                ("u8", {"kind": "iconv2d", "a_type": "u8", "c": 8,
                        "kc": 16}),
                ("s8", {"kind": "iconv2d", "a_type": "s8", "c": 8,
                        "kc": 16}),
                ("s8_direct", {"kind": "iconv2d", "a_type": "s8", "c": 16,
                               "kc": 32, "k_unroll": 4,
                               "a_layout": "direct"})]:
            with self.subTest(name):
                self.check("pre_" + name, request(b_prepacked=True,
                                                  **changes))
        self.check("pre_parts", request(b_prepacked=True, c=8, kc=16,
                                        parallel=True), split=40)

    def test_strides(self):
        """A view of a larger input (gaps hold NaN or byte extremes): as
        immediates, and read from the header at run time, where one kernel
        takes the dense input and the view (whose pixels are C apart, as
        the run-time form requires: a window of a padded image)."""
        # Pixels 10 apart: a block is one tap's C = 6 channels at most.
        view = [7 * 13 * 10 + 3, 13 * 10, 10]
        self.check("bf16_view", request(input_strides=view, kc=6),
                   strides=view)
        rt = request(runtime_strides=True)
        window = [8 * 13 * 6 + 3, 13 * 6, 6]
        self.check("bf16_rt_dense", rt)
        self.check("bf16_rt_window", rt, strides=window)
        self.check("s8_rt_window", request(kind="iconv2d", a_type="s8", c=8,
                                           kc=16, runtime_strides=True),
                   strides=[8 * 13 * 8 + 5, 13 * 8, 8])

    def test_parts(self):
        """The parallel form: two parts of the output's rows (pixels)."""
        self.check("bf16_parts", request(parallel=True), split=37)
        self.check("s8_parts", request(kind="iconv2d", a_type="s8", c=8,
                                       kc=16, parallel=True), split=21)

    NCHW = [
        # (name, changes): 18 output pixels a row, so 16-pixel slivers
        # both lie in one row (vector loads) and cross rows or the edge
        # (element by element); K odd (a partial last group), strides,
        # a view and run-time strides, the image loop (n = 2).
        ("rows", {"w": 20, "kw": 3, "nr": 16, "nc": 48}),
        ("cross_rows", {}),
        ("odd_k", {"c": 3, "kh": 3, "kw": 3, "w": 20, "nr": 16,
                   "kc": 8}),
        ("strided", {"stride_h": 2, "stride_w": 2, "h": 9, "w": 11}),
        # Width stride 2: pieces of every other element (16 pixels an
        # output row here); 3: a piece a pixel.
        ("strided_rows", {"stride_h": 2, "stride_w": 2, "w": 33,
                          "nr": 16}),
        ("stride_3", {"stride_w": 3, "w": 20, "kw": 3}),
        ("one_by_one", {"kh": 1, "kw": 1, "c": 16, "w": 19, "nr": 16,
                        "kc": 16, "mr": 4}),
        ("overwrite_relu", {"overwrite": True, "relu": True, "w": 20,
                            "nr": 16}),
        # A bias per channel: along the GEMM's rows (8 a tile, 37 filters).
        ("bias_relu", {"bias": True, "relu": True, "w": 20, "nr": 16}),
        ("bias_leaky", {"bias": True, "leaky_relu": 0.25, "w": 20,
                        "nr": 16}),
        ("rt", {"runtime_strides": True, "w": 20, "nr": 16}),
        # The filter read where it lies (an s8 one signed, B plus 128).
        ("direct", {"a_layout": "direct", "c": 8, "w": 20, "nr": 16,
                    "kc": 24, "k_unroll": 2}),
        ("direct_edges", {"a_layout": "direct", "c": 8, "f": 21,
                          "kc": 72, "k_unroll": 2, "mr": 6, "mc": 18,
                          "nr": 32}),
        # K 27 (13 pairs and one k; 6 quads and three bytes) in one block,
        # the filter's last group loaded under a mask.
        ("direct_odd_k", {"a_layout": "direct", "c": 3, "kh": 3, "kw": 3,
                          "w": 20, "nr": 16, "kc": 27, "k_unroll": 1}),
    ]

    def test_nchw(self):
        """nchw_fchw (torch's layout): the filter is A, B gathered from
        the image (dotgemm._emit_pack_gathered_b), one GEMM an image."""
        for name, changes in self.NCHW:
            req = request(layout="nchw_fchw", **changes)
            with self.subTest(name):
                self.check("nchw_" + name, req)
            with self.subTest("s8 " + name):
                ireq = dict(req, kind="iconv2d", a_type="s8",
                            kc=16 if req["kc"] == 12 else req["kc"])
                for field in ("relu", "leaky_relu", "bias"):
                    ireq.pop(field, None)
                self.check("nchw_s8_" + name, ireq)
        view = [6 * 8 * 23 + 5, 8 * 23, 23]
        self.check("nchw_view", request(layout="nchw_fchw", w=20, nr=16,
                                        input_strides=view), strides=view)
        rt = request(layout="nchw_fchw", w=20, nr=16, runtime_strides=True)
        self.check("nchw_rt_window", rt, strides=view)
        self.check("nchw_parts", request(layout="nchw_fchw", w=20, nr=16,
                                         parallel=True), split=21)
        self.check("nchw_s8_parts", request(
            layout="nchw_fchw", kind="iconv2d", a_type="s8", w=20, nr=16,
            kc=16, parallel=True), split=8)
        for fault in ("drop-k", "swap-pairs", "write-past-edge"):
            with self.subTest(fault):
                for kind in ({}, {"kind": "iconv2d", "a_type": "s8",
                                  "kc": 16}):
                    status, output = self.run_kernel(
                        "nchw_fault_" + fault.replace("-", "_"),
                        request(layout="nchw_fchw", w=20, nr=16,
                                fault=fault, **kind))
                    self.assertEqual(status, 1, output)
                    self.assertIn("bad elements", output)

    def test_faults_are_caught(self):
        for fault in ("drop-k", "swap-pairs", "write-past-edge"):
            with self.subTest(fault):
                status, output = self.run_kernel(
                    "fault_" + fault.replace("-", "_"),
                    request(fault=fault))
                self.assertEqual(status, 1, output)
                self.assertIn("bad elements", output)


@runs_kernels("avx512bw", "avx512vl", "f16c", lacks="AVX512BW/VL or F16C")
class F16DotConvExecutionTest(KernelHarness):
    """shconv2d on isa avx512 (hosts without AMX-BF16, and the layouts and
    runs the tiles do not take): dotgemm.py's f16 kernels, each f16
    widened to f32 where PACK A gathers the input (nhwc) or PACK B the
    image (nchw), f32 FMAs; run by the harness on f16 values (its type 0:
    the requests say sbconv2d there and are emitted as shconv2d)."""
    HARNESS = f16_harness(HARNESS)
    EMIT = staticmethod(lambda req: emit_conv(dict(req, kind="shconv2d")))
    run_kernel = DotConvExecutionTest.run_kernel
    check = DotConvExecutionTest.check

    def test_convolutions(self):
        """The layouts, the blocks, any run of k (a group is one k: the
        3-channel stem's run of 21 too), nchw and its views, parts."""
        for name, changes in DotConvExecutionTest.CASES + [
                ("stem", {"c": 3, "kh": 3, "kw": 7, "w": 13, "kc": 21,
                          "stride_h": 2, "stride_w": 2}),
                ("fhwc_odd", {"layout": "nhwc_fhwc", "c": 3, "kw": 3,
                              "kc": 9})] + [
                ("nchw_" + name, dict(changes, layout="nchw_fchw"))
                for name, changes in DotConvExecutionTest.NCHW
                # (The filter is A: packed, never read in place.)
                if changes.get("a_layout") != "direct"]:
            req = request(**changes)
            with self.subTest(name):
                self.check("f16_" + name, req,
                           strides=req.get("input_strides"))
        self.check("f16_parts", request(parallel=True), split=17)
        self.check("f16_nchw_parts", request(
            layout="nchw_fchw", w=20, nr=16, parallel=True), split=21)

    def test_faults_are_caught(self):
        for fault, layout in (("drop-k", "nhwc_hwcf"),
                              ("drop-low", "nhwc_hwcf"),
                              ("drop-low", "nchw_fchw"),
                              ("write-past-edge", "nchw_fchw")):
            with self.subTest(fault=fault, layout=layout):
                status, output = self.run_kernel(
                    f"f16_fault_{fault}_{layout}".replace("-", "_"),
                    request(fault=fault, layout=layout, w=20, nr=16))
                self.assertEqual(status, 1, output)
                self.assertIn("bad elements", output)


if __name__ == "__main__":
    unittest.main()

"""The dot-product GEMMs (dotgemm.py): sbgemm (bf16 x bf16 -> f32,
AVX512-BF16) and igemm (u8 or s8 x s8 -> s32, AVX512-VNNI). Requests, and
kernels run on this CPU against a reference, with guards; broken variants
caught."""

import os
import re
import subprocess
import tempfile
import unittest

from qimeng_emitters.dotgemm import GEMV_THREE_ROWS_FROM
from qimeng_emitters.dotgemm import emit as emit_dot
from qimeng_emitters.dotgemm import half_output_field

from .support import (GCC, LLVM_MC, RefusalTestCase, changed, header,
                      runs_kernels)
from .support import emit as emit_protocol


BASE = {"version": 1, "kind": "sbgemm", "isa": "avx512", "m": 37, "n": 45,
        "k": 29, "mr": 8, "nr": 48, "k_unroll": 2, "kc": 10, "mc": 16,
        "nc": 48, "runtime_ld": True}

# C harness: bf16 operands of small integers (exact in bf16 and in every
# f32 sum), leading dimensions padded by 3, 5 and 7, NaN sentinels in C's
# gaps and after it; C checked element by element against a double
# reference, the gaps and A and B unchanged. Arguments: M N K overwrite
# workspace-bytes trans-a trans-b (A stored K x M, B stored N x K), an
# unused one, the split and bf16-output: then D (ldd N + 9, NaN before the
# call) is checked against the reference rounded to bf16 (to nearest even;
# the sums of most cases need more than bf16's 8 bits), C only outside its
# M x N elements (the kernel's scratch inside); then the epilogue: bit 0 a
# bias per column (its pointer in the header), bit 1 relu, bit 2 relu's
# bound 6, bit 3 relu's floor -2.5 instead of 0, bit 4 leaky relu of slope
# 0.25, bit 5 of slope 4.
# The reference packer of a prepacked B (b_prepacked; docs/KernelContract.md,
# "B prepacked"), shared by the harnesses: per NR-wide sliver of N, k_groups
# groups of NR dwords, each dword the k of one group of one column (zero past
# K and N), every byte plus 128 for an s8 A read in place.
PREPACK_B = r"""
static unsigned char *prepack_b(const unsigned char *B, long K, long N,
                                long ldb, int tb, int eb, long nr, long kg,
                                int plus128) {
  long group = 4 / eb, slivers = (N + nr - 1) / nr, bytes = slivers * kg * nr * 4;
  unsigned char *P = malloc(bytes + 64);
  memset(P, 0, bytes + 64);
  for (long s = 0; s < slivers; s++)
    for (long g = 0; g < kg; g++)
      for (long j = 0; j < nr; j++)
        for (long t = 0; t < group; t++) {
          long k = g * group + t, c = s * nr + j;
          unsigned char *d = P + ((s * kg + g) * nr + j) * 4 + t * eb;
          if (k < K && c < N)
            memcpy(d, B + (tb ? c * ldb + k : k * ldb + c) * eb, eb);
          if (plus128) d[0] ^= 0x80;
        }
  return P;
}
"""

HARNESS = r"""
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
void qm_kernel(const void *, const void *, float *, void *);
""" + PREPACK_B + r"""
static uint16_t bf(float f) { uint32_t u; memcpy(&u, &f, 4); return u >> 16; }
static float fl(uint16_t h) { uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f; }
static uint16_t rne(float f) { uint32_t u; memcpy(&u, &f, 4); return (u + 0x7fff + ((u >> 16) & 1)) >> 16; }
int main(int argc, char **argv) {
  long M = atol(argv[1]), N = atol(argv[2]), K = atol(argv[3]);
  int ow = atoi(argv[4]); long ws = atol(argv[5]);
  int ta = atoi(argv[6]), tb = atoi(argv[7]);
  long split = atol(argv[9]);
  int out = argc > 10 && atoi(argv[10]);
  int epi = argc > 11 ? atoi(argv[11]) : 0;
  float *bias = malloc(4 * (N + 64));
  for (long j = 0; j < N + 64; j++) bias[j] = (float)(j % 7 - 3);
  long ar = ta ? K : M, br = tb ? N : K;
  long lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 5, ldc = N + 7, tail = 64;
  long ldd = N + 9;
  /* C and D have room for 16 rows past M: a kernel that stores past the
     last row (the write-past-edge fault) overwrites the checked tail
     after row M instead of faulting on memory past the allocation. */
  uint16_t *D = malloc(2 * ((M + 16) * ldd + tail));
  for (long i = 0; i < M * ldd + tail; i++) D[i] = (i % ldd) < N && i < M * ldd ? 0x7fc0 : 0xdead;
  uint16_t *A = malloc(2 * (ar * lda + tail)), *B = malloc(2 * (br * ldb + tail));
  float *C = malloc(4 * ((M + 16) * ldc + tail));
  int64_t *W = aligned_alloc(64, (ws + 63) / 64 * 64);
  /* 56: a 16-bit D's ldd, else a run-time K's K */
  W[8] = lda; W[9] = ldb; W[10] = ldc; W[7] = out ? ldd : K; W[15] = (int64_t)D;
  W[14] = (int64_t)bias;
  srand(7);
  for (long i = 0; i < ar * lda + tail; i++) A[i] = bf((float)(rand() % 9 - 4));
  for (long i = 0; i < br * ldb + tail; i++) B[i] = bf((float)(rand() % 9 - 4));
  for (long i = 0; i < M * ldc + tail; i++) C[i] = (i % ldc) < N && i < M * ldc ? (ow ? NAN : (float)(rand() % 5)) : -7.25f;
  uint16_t *A0 = malloc(2 * (ar * lda + tail)), *B0 = malloc(2 * (br * ldb + tail));
  memcpy(A0, A, 2 * (ar * lda + tail)); memcpy(B0, B, 2 * (br * ldb + tail));
  double *R = malloc(8 * M * N);
  for (long i = 0; i < M; i++)
    for (long j = 0; j < N; j++) {
      double s = ow ? 0 : C[i * ldc + j];
      for (long k = 0; k < K; k++)
        s += (double)fl(A[ta ? k * lda + i : i * lda + k]) * fl(B[tb ? j * ldb + k : k * ldb + j]);
      if (epi & 1) s += bias[j];
      double floor = (epi & 8) ? -2.5 : 0;
      if ((epi & 2) && s < floor) s = floor;
      if ((epi & 4) && s > 6) s = 6;
      if ((epi & 16) && s < 0) s *= 0.25;
      if ((epi & 32) && s < 0) s *= 4;
      R[i * N + j] = s;
    }
  /* b_prepacked (arguments 12-14: NR, k_groups, plus128): B packed here */
  const void *Bk = argc > 12 ? prepack_b((const unsigned char *)B, K, N, ldb, tb, 2, atol(argv[12]), atol(argv[13]), atoi(argv[14])) : (const void *)B;
  if (split < 0) {
    qm_kernel(A, Bk, C, W);
  } else {  /* the part of C in the header: rows [0, split), [split, M) */
    W[3] = 0; W[4] = split > 0 ? split : M; W[5] = 0; W[6] = N;
    qm_kernel(A, Bk, C, W);
    if (split > 0) { W[3] = split; W[4] = M; qm_kernel(A, Bk, C, W); }
  }
  long bad = 0;
  for (long i = 0; i < M * ldc + tail; i++) {
    long r = i / ldc, c = i % ldc;
    int inside = r < M && c < N;
    float want = inside ? (float)R[r * N + c] : -7.25f;
    if (out && inside) continue;
    if (!(C[i] == want)) { if (bad < 3) printf("C[%ld] (%ld,%ld) = %g, want %g\n", i, r, c, C[i], want); bad++; }
  }
  for (long i = 0; i < M * ldd + tail; i++) {
    long r = i / ldd, c = i % ldd;
    int inside = out && r < M && c < N;
    uint16_t want = inside ? rne((float)R[r * N + c]) : (r < M && c < N ? 0x7fc0 : 0xdead);
    if (D[i] != want) { if (bad < 3) printf("D[%ld] (%ld,%ld) = %#x, want %#x\n", i, r, c, D[i], want); bad++; }
  }
  if (memcmp(A, A0, 2 * (ar * lda + tail)) || memcmp(B, B0, 2 * (br * ldb + tail))) { printf("A or B changed\n"); bad++; }
  if (bad) { printf("%ld bad elements\n", bad); return 1; }
  printf("ok\n");
  return 0;
}
"""


def f16_harness(harness):
    """A bf16 harness (test_dotgemm's, test_dotconv's) on f16 operands:
    its conversions (and D's rounding) by F16C, its values multiples of
    2^-6 up to 260/64 in magnitude (9 significant bits, so that most have a
    low part past bf16's 8; every product and every sum of up to 200 of
    them exact in f32, and an f16 D finite)."""
    return harness.replace(
        "static uint16_t bf(float f) { uint32_t u; memcpy(&u, &f, 4); "
        "return u >> 16; }",
        "#include <immintrin.h>\n"
        "__attribute__((target(\"f16c\"))) static uint16_t bf(float f) "
        "{ return _cvtss_sh(f, 0); }").replace(
        "static float fl(uint16_t h) { uint32_t u = (uint32_t)h << 16; "
        "float f; memcpy(&f, &u, 4); return f; }",
        "__attribute__((target(\"f16c\"))) static float fl(uint16_t h) "
        "{ return _cvtsh_ss(h); }").replace(
        "rand() % 9 - 4", "(rand() % 521 - 260) / 64.0").replace(
        "static uint16_t rne(float f) { uint32_t u; memcpy(&u, &f, 4); "
        "return (u + 0x7fff + ((u >> 16) & 1)) >> 16; }",
        "__attribute__((target(\"f16c\"))) static uint16_t rne(float f) "
        "{ return _cvtss_sh(f, 0); }")


F16_HARNESS = f16_harness(HARNESS)


INT8_BASE = dict(BASE, kind="igemm", a_type="s8", kc=12)

# The int8 harness: A u8 or s8 (argument 8), B s8, over their whole ranges
# (and the extremes), C s32; compared exactly (no sum can overflow at these
# K); NaN-pattern sentinels in C's gaps and after it.
INT8_HARNESS = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
void qm_kernel(const void *, const void *, int32_t *, void *);
""" + PREPACK_B + r"""
int main(int argc, char **argv) {
  long M = atol(argv[1]), N = atol(argv[2]), K = atol(argv[3]);
  int ow = atoi(argv[4]); long ws = atol(argv[5]);
  int ta = atoi(argv[6]), tb = atoi(argv[7]), au = atoi(argv[8]);
  long split = atol(argv[9]);
  long ar = ta ? K : M, br = tb ? N : K;
  long lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 5, ldc = N + 7, tail = 64;
  uint8_t *A = malloc(ar * lda + tail); int8_t *B = malloc(br * ldb + tail);
  int32_t *C = malloc(4 * ((M + 16) * ldc + tail));  /* as the bf16 harness's */
  int64_t *W = aligned_alloc(64, (ws + 63) / 64 * 64);
  const int32_t sentinel = 0x7fa5a5a5;
  W[8] = lda; W[9] = ldb; W[10] = ldc; W[7] = K;  /* a run-time K's */
  srand(11);
  for (long i = 0; i < ar * lda + tail; i++) A[i] = (uint8_t)(i % 7 == 0 ? (au ? 255 : 128) : rand());
  for (long i = 0; i < br * ldb + tail; i++) B[i] = (int8_t)(i % 5 == 0 ? -128 : rand());
  for (long i = 0; i < M * ldc + tail; i++) C[i] = (i % ldc) < N && i < M * ldc ? (ow ? sentinel : rand() % 1000 - 500) : sentinel;
  uint8_t *A0 = malloc(ar * lda + tail); int8_t *B0 = malloc(br * ldb + tail);
  memcpy(A0, A, ar * lda + tail); memcpy(B0, B, br * ldb + tail);
  int64_t *R = malloc(8 * M * N);
  for (long i = 0; i < M; i++)
    for (long j = 0; j < N; j++) {
      int64_t s = ow ? 0 : C[i * ldc + j];
      for (long k = 0; k < K; k++) {
        uint8_t a = A[ta ? k * lda + i : i * lda + k];
        s += (int64_t)(au ? (int)a : (int)(int8_t)a) * B[tb ? j * ldb + k : k * ldb + j];
      }
      R[i * N + j] = s;
    }
  const void *Bk = argc > 12 ? prepack_b((const unsigned char *)B, K, N, ldb, tb, 1, atol(argv[12]), atol(argv[13]), atoi(argv[14])) : (const void *)B;
  if (split < 0) {
    qm_kernel(A, Bk, C, W);
  } else {  /* the part of C in the header: rows [0, split), [split, M) */
    W[3] = 0; W[4] = split > 0 ? split : M; W[5] = 0; W[6] = N;
    qm_kernel(A, Bk, C, W);
    if (split > 0) { W[3] = split; W[4] = M; qm_kernel(A, Bk, C, W); }
  }
  long bad = 0;
  for (long i = 0; i < M * ldc + tail; i++) {
    long r = i / ldc, c = i % ldc;
    int inside = r < M && c < N;
    int64_t want = inside ? R[r * N + c] : sentinel;
    if (C[i] != want) { if (bad < 3) printf("C[%ld] (%ld,%ld) = %d, want %lld\n", i, r, c, C[i], (long long)want); bad++; }
  }
  if (memcmp(A, A0, ar * lda + tail) || memcmp(B, B0, br * ldb + tail)) { printf("A or B changed\n"); bad++; }
  if (bad) { printf("%ld bad elements\n", bad); return 1; }
  printf("ok\n");
  return 0;
}
"""


def prepacked_b_args(text):
    """The harness arguments that pack B for a b_prepacked kernel, from its
    qm.b_prepacked header (NR, k_groups, plus128); none otherwise."""
    line = header(text, "b_prepacked")
    if line is None:
        return []
    fields = dict(f.split("=") for f in line.split())
    return [fields["nr"], fields["k_groups"], fields["plus128"]]


def int8_request(**changes):
    return changed(INT8_BASE, **changes)


def request(**changes):
    return changed(BASE, **changes)


# The product transposed of a 37x45x64 GEMM against B^T (the harness's
# leading dimensions: K + 3, K + 5, N + 7).
CT = dict(runtime_ld=None, m=37, n=45, k=64, lda=67, ldb=69, ldc=52,
          trans_b=True, a_layout="direct", product="transposed", mr=12,
          nr=32, mc=24, nc=64, kc=64)


class RequestTest(RefusalTestCase):
    emit_under_test = staticmethod(emit_dot)

    def test_refusals(self):
        self.refuses(request(dynamic_k=True, runtime_ld=None),
                     "needs runtime_ld")
        for field, why in (("overwrite", "overwrite or an epilogue"),
                           ("bias", "overwrite or an epilogue"),
                           ("bf16_output", "a 16-bit D"),
                           ("b_prepacked", "a prepacked B")):
            self.refuses(request(dynamic_k=True, kc=12, **{
                field: "columns" if field == "bias" else True}), why)
        self.refuses(request(dynamic_k=True, trans_b=True, pack_b=False,
                             m=1), "B read in place")
        self.refuses(int8_request(kc=9), "or divide K = 29")
        self.refuses(int8_request(kc=10), "must be a multiple of 4")
        self.refuses(int8_request(a_type="u16"), "a_type")
        self.refuses(request(a_type="u8"), "unknown field")
        self.refuses(int8_request(target_features=["avx512f", "avx512bw",
                                                   "avx512vl", "bmi2"]),
                     "avx512vnni")
        self.refuses(request(nr=40), "multiple of 16")
        self.refuses(request(mr=14, nr=48), "vector registers")
        self.refuses(request(isa="avx2"), "avx512")
        self.refuses(request(order="bcast"), "unknown field")
        self.refuses(request(k_unroll=3), "k_unroll")
        self.refuses(request(runtime_ld=None, lda=10), ">= 29")
        self.refuses(request(lda=40), "must not fix them")
        self.refuses(request(target_features=["avx512f", "avx512bw"]),
                     "avx512bf16")
        self.refuses(request(ldd=50), "needs bf16_output")
        self.refuses(request(bf16_output=True, ldd=50), "must not fix it")
        self.refuses(int8_request(bf16_output=True), "unknown field")
        self.refuses(int8_request(bias="columns"), "unknown field")
        self.refuses(request(bias="diagonal"), "along the columns")
        self.refuses(request(relu_max=6.0), "needs 'relu'")
        self.refuses(request(pack_b=True), "may only be false")
        self.refuses(request(pack_b=False, trans_a=True), "A not transposed")
        self.refuses(request(pack_b=False, trans_b=True, trans_a=True),
                     "A not transposed")
        self.refuses(request(trans_b=True, pack_b=False, fault="drop-low"),
                     "only f16")
        # A in place: rows of k where A lies, whole K steps, no shift.
        direct = dict(request(runtime_ld=None, k=64, lda=67, ldb=50,
                              ldc=52, kc=16), a_layout="direct")
        self.refuses(dict(direct, a_layout="rows"), "k-major")
        self.refuses(request(k=64, kc=16, a_layout="direct", mr=28, nr=16,
                             mc=28),
                     "reaches 17 rows")
        self.refuses(dict(direct, trans_a=True, lda=40), "A transposed")
        self.refuses(dict(direct, k=62, lda=65), "whole K steps of 4")
        self.refuses(dict(direct, kc=18), "whole K steps of 4")
        # Blocks that end in a partial group: the same one each (kc
        # dividing K), their whole groups whole K steps.
        self.refuses(dict(direct, k=64, kc=21, k_unroll=1), "partial group")
        self.refuses(dict(direct, k=63, kc=21, k_unroll=4), "partial group")
        self.refuses(dict(direct, k=63, kc=63, k_runs=3, k_unroll=1),
                     "a convolution's")
        # The product transposed: B^T against A as stored, static, s8 or
        # bf16 (a u8 A would be VPDPBUSD's signed operand), at most 16 of
        # C's columns a tile.
        self.refuses(request(**dict(CT, trans_b=False, ldb=50)),
                     "B not transposed")
        self.refuses(int8_request(**dict(CT, a_type="u8")), "a u8 A")
        self.refuses(request(**dict(CT, mr=28, nr=16)), "mr <= 16")
        self.refuses(request(**dict(CT, fault="swap-pairs")), "swap-pairs")
        self.refuses(request(**dict(CT, runtime_ld=True, lda=None,
                                    ldb=None, ldc=None, dynamic_m=True)),
                     "run-time sizes")
        # f16: widened where it is packed (never in place), one k a lane.
        gemv = dict(kind="shgemm", trans_b=True, pack_b=False)
        self.refuses(request(kind="shgemm", b_prepacked=True), "f16")
        self.refuses(request(kind="shgemm", fault="swap-pairs"),
                     "no pairs")
        self.refuses(dict(direct, kind="shgemm"), "f16")
        rows = dict(kind="shgemm", pack_b=False)
        self.refuses(request(**dict(rows, trans_a=True)),
                     "B's rows streamed in place) needs A not transposed")
        self.refuses(request(**dict(rows, bias="rows")),
                     "no bias along the rows")
        self.refuses(request(**dict(rows, dynamic_n=True)), "a static N")
        # The matrix-vector form reads its columns from the header: a
        # run-time N too (GemmKernelTest validates it).
        self.assertEqual(
            header(emit_dot(request(**dict(gemv, m=1, k=77, dynamic_n=True,
                                           runtime_ld=True))), "symbol"),
            "qm_shgemm_1x45x77_nt_nrt_ldrt_gemv8_x86_64_avx512")
        self.refuses(request(**dict(gemv, bf16_output=True)),
                     "unknown field")
        # B prepacked: kc whole K steps unless K is one block; not the
        # matrix-vector form, nor the fault of a PACK B it does not run.
        self.refuses(request(b_prepacked=True), "whole K steps of 4")
        self.refuses(request(b_prepacked=True, pack_b=False, trans_b=True),
                     "matrix-vector")
        self.refuses(request(b_prepacked=True, kc=12, fault="swap-pairs"),
                     "swap-pairs")

    def test_header(self):
        text = emit_dot(request())
        self.assertEqual(header(text, "leading_dims"), "runtime")
        self.assertIn("avx512bf16", header(text, "features"))
        self.assertTrue(header(text, "symbol").startswith(
            "qm_sbgemm_37x45x29_nn_ldrt_8x48_ku2_kc10_mc16_nc48"))
        # Mask registers k1-k3, one per B vector, are declared clobbered.
        self.assertIn("k3", header(text, "clobbers").split(","))
        self.assertNotIn("k4", header(text, "clobbers").split(","))
        # The K loop is VDPBF16PS on zmm registers, one per accumulator and
        # k pair of the unroll.
        self.assertEqual(text.count("vdpbf16ps"), 8 * 3 * 2)

    def test_f32_gemv_header(self):
        """An sgemm with B^T read in place on AVX-512 is the dot kernels'
        matrix-vector form (the protocol's entry routes it here): 16 f32
        a step from A and each of 8 rows of B^T, FMAs from memory; none
        of sgemm.py's own fields, and no other form of it here."""
        sgemm = dict(kind="sgemm", trans_b=True, pack_b=False)
        text = emit_protocol(request(m=1, k=77, **sgemm))
        self.assertEqual(header(text, "symbol"),
                         "qm_sgemm_1x45x77_nt_ldrt_gemv8_x86_64_avx512")
        self.assertEqual(header(text, "features"),
                         "avx512f,avx512bw,avx512vl,bmi2")
        self.assertEqual(header(text, "inner_loop_flops"), str(8 * 16 * 2))
        self.assertEqual(text.count("vfmadd231ps"), 2 * 8)
        self.assertRegex(text, r"vfmadd231ps \(%r8, %rax\), %zmm16, %zmm0")
        # The K tail: A and each row under a dword mask.
        self.assertEqual(len(re.findall(r"vmovups \(%r\w+, %rax\), "
                                        r"%zmm\d+\{%k1\}\{z\}", text)), 9)
        self.assertNotIn("vmovdqu16", text)
        self.assertIn("_bias_leaky",
                      header(emit_protocol(request(m=3, k=40, bias="columns",
                                          leaky_relu=0.25, **sgemm)),
                             "symbol"))
        # A run-time N: the columns from the header, as a part's are.
        self.assertEqual(
            header(emit_protocol(request(m=1, k=77, dynamic_n=True, **sgemm)),
                   "symbol"),
            "qm_sgemm_1x45x77_nt_nrt_ldrt_gemv8_x86_64_avx512")
        self.refuses(request(prefetch_a=64, **sgemm), "unknown field")
        self.refuses(request(bf16_output=True, **sgemm), "unknown field")
        self.refuses(request(kind="sgemm"), "matrix-vector form only")

    def test_f16_gemv_header(self):
        """shgemm's matrix-vector form needs AVX-512F/BW/VL and F16C (no
        FP16 arithmetic): 16 k a step from A and each of 8 rows of B^T,
        widened and multiplied-added in f32."""
        text = emit_dot(request(kind="shgemm", m=1, k=77, trans_b=True,
                                pack_b=False))
        self.assertEqual(header(text, "symbol"),
                         "qm_shgemm_1x45x77_nt_ldrt_gemv8_x86_64_avx512")
        self.assertEqual(header(text, "features"),
                         "avx512f,avx512bw,avx512vl,bmi2,f16c")
        self.assertEqual(header(text, "inner_loop_flops"), str(8 * 16 * 2))
        # The K loop and the tail: A and 8 rows each, widened.
        self.assertEqual(text.count("vcvtph2ps"), 2 * 9)
        self.assertEqual(text.count("vfmadd231ps"), 2 * 8)
        # The epilogue is in the symbol, as the blocked kernels'.
        self.assertEqual(
            header(emit_dot(request(kind="shgemm", m=1, k=77, trans_b=True,
                                    pack_b=False, bias="columns",
                                    relu=True, overwrite=True)), "symbol"),
            "qm_shgemm_1x45x77_nt_b0_bias_relu_ldrt_gemv8_x86_64_avx512")
        # relu's floor other than 0: broadcast where the zero was, no
        # + 0 after the max (-0 stays -0 above a negative floor).
        text = emit_dot(request(kind="shgemm", m=1, k=77, trans_b=True,
                                pack_b=False, relu=True, relu_min=-2.5,
                                relu_max=6.0, overwrite=True))
        self.assertEqual(
            header(text, "symbol"),
            "qm_shgemm_1x45x77_nt_b0_relu_minc0200000_max40c00000_ldrt_gemv8"
            "_x86_64_avx512")
        floor = re.search(r"^(\d+):  # relu's floor, -2.5\n\t\.long "
                          r"0xc0200000$", text, re.M)
        self.assertIsNotNone(floor, text)
        self.assertRegex(
            text, rf"vbroadcastss {floor.group(1)}b\(%rip\), (%ymm\d+)\n"
            r"(?:.*\n)*?\tvmaxps (%ymm\d+), \1, \2\n\tvminps")


class KernelHarness(unittest.TestCase):
    """Kernels run by a C harness (HARNESS, compiled once per class): each
    kernel assembled with llvm-mc, linked against it under the name
    qm_kernel, run as a process."""
    HARNESS = None
    MATTR = "+avx512f,+avx512bw,+avx512vl,+avx512bf16,+avx512vnni,+bmi2"

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        src = os.path.join(cls.tmp.name, "harness.c")
        with open(src, "w") as f:
            f.write(cls.HARNESS)
        cls.harness_o = os.path.join(cls.tmp.name, "harness.o")
        subprocess.run([GCC, "-O1", "-c", src, "-o", cls.harness_o],
                       check=True, timeout=60)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_harness(self, name, text, args):
        """Assembles the kernel `text`, links it to the harness, runs it
        with `args`: (exit status, stdout)."""
        symbol = header(text, "symbol")
        source = text + f"\t.globl\tqm_kernel\n\t.set\tqm_kernel, {symbol}\n"
        obj = os.path.join(self.tmp.name, name + ".o")
        exe = os.path.join(self.tmp.name, name)
        proc = subprocess.run(
            [LLVM_MC, "-triple=x86_64-unknown-linux-gnu",
             "-mattr=" + self.MATTR, "-filetype=obj", "-o", obj],
            input=source, capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        subprocess.run([GCC, self.harness_o, obj, "-o", exe, "-lm"],
                       check=True, timeout=60)
        run = subprocess.run([exe] + [str(a) for a in args],
                             capture_output=True, text=True, timeout=60)
        return run.returncode, run.stdout


@runs_kernels()
class HarnessTest(KernelHarness):
    HARNESS = HARNESS
    #: The emitter whose kernels run_kernel runs.
    EMIT = staticmethod(emit_dot)

    def check_runtime_parts(self, req):
        """A run-time M (blocked for req's m) at fewer, as many and more
        rows, a run-time N likewise for columns; the parallel form on two
        parts of the rows."""
        for size in ("m", "n"):
            dyn = dict(req, **{f"dynamic_{size}": True})
            for v in (1, 13, req[size], 2 * req[size] + 5):
                with self.subTest(**{f"dynamic_{size}": v}):
                    status, output = self.run_kernel(
                        f"dyn{size}{v}", dyn, split=0, **{size: v})
                    self.assertEqual(status, 0, output)
                    self.assertEqual(output.strip(), "ok")
        par = dict(req, parallel=True)
        with self.subTest(parallel=True):
            status, output = self.run_kernel("par", par, split=16)
            self.assertEqual(status, 0, output)
            self.assertEqual(output.strip(), "ok")

    def check_runtime_k(self, req, layouts=("nn", "nt", "tn")):
        """A run-time K (blocked for req's k): none, fewer than a group,
        each partial group, several kc blocks, B as stored or transposed
        and A transposed (`layouts`: both packs of each operand)."""
        for trans in layouts:
            dyn = dict(req, dynamic_k=True, trans_a=trans[0] == "t",
                       trans_b=trans[1] == "t")
            self.assertIn("_krt", header(self.EMIT(dyn), "symbol"))
            for k in (0, 1, 2, 3, 5, req["k"], 3 * req["kc"] + 2):
                with self.subTest(trans=trans, dynamic_k=k):
                    status, output = self.run_kernel(
                        f"dynk{trans}{k}", dyn, k=k)
                    self.assertEqual(status, 0, output)
                    self.assertEqual(output.strip(), "ok")

    def check_all_sizes_at_run_time(self, req):
        """M, N and K all from the header, B as stored and transposed."""
        for trans_b in (False, True):
            dyn = dict(req, dynamic_m=True, dynamic_n=True, dynamic_k=True,
                       trans_b=trans_b)
            for m, n, k in ((1, 1, 1), (13, 50, 3), (85, 17, 150)):
                with self.subTest(trans_b=trans_b, m=m, n=n, k=k):
                    status, output = self.run_kernel(
                        f"dynmnk{trans_b}{m}", dyn, split=0, m=m, n=n, k=k)
                    self.assertEqual(status, 0, output)
                    self.assertEqual(output.strip(), "ok")

    def check_cases(self, cases):
        """Each kernel of `cases` (name: request) matches the reference."""
        for name, req in cases.items():
            with self.subTest(name=name):
                status, output = self.run_kernel(name, req)
                self.assertEqual(status, 0, output)
                self.assertEqual(output.strip(), "ok")

    def run_kernel(self, name, req, m=None, split=-1, n=None, k=None):
        """Runs req's kernel on an M x N x K problem (M = req's m unless
        given: a run-time M; N and K likewise, K written to the header);
        `split` >= 0 writes the part of C into the header, rows [0, split)
        and [split, M) in two calls (0: one call on all of them)."""
        text = self.EMIT(req)
        args = [m or req["m"], n or req["n"], req["k"] if k is None else k,
                1 if req.get("overwrite") else 0,
                header(text, "workspace_bytes"),
                1 if req.get("trans_a") else 0,
                1 if req.get("trans_b") else 0,
                1 if req.get("a_type") == "u8" else 0, split,
                1 if req.get("bf16_output") or req.get("f16_output") else 0,
                (1 if req.get("bias") == "columns" else 0)
                | (2 if req.get("relu") else 0)
                | (4 if req.get("relu_max") == 6.0 else 0)
                | (8 if req.get("relu_min") == -2.5 else 0)
                | (16 if req.get("leaky_relu") == 0.25 else 0)
                | (32 if req.get("leaky_relu") == 4.0 else 0)]
        return self.run_harness(name, text, args + prepacked_b_args(text))



def check_product_transposed(test, make):
    """The product transposed (CT) in two parts of C's rows (the header's
    columns of C^T); a kernel that drops k or writes past C's edge is
    caught."""
    status, output = test.run_kernel("ct_parts", make(**dict(
        CT, parallel=True)), split=17)
    test.assertEqual((status, output.strip()), (0, "ok"))
    for fault in ("drop-k", "write-past-edge"):
        status, _ = test.run_kernel(f"ct_{fault}", make(**dict(CT,
                                                              fault=fault)))
        test.assertNotEqual(status, 0, fault)


def check_gemv(test, make, faults=("drop-k", "write-past-edge")):
    """pack_b false: B^T read in place, a matrix-vector product per row of
    A; K in whole chunks, a tail only and both; N a multiple of 8 or not;
    accumulating or not; several rows of A, a run-time M and two parts of
    the rows; faults caught. `make` makes the requests."""
    gemv = dict(m=1, n=45, k=77, trans_b=True, pack_b=False)
    cases = {
        "gemv": make(**gemv),
        "gemv_tail_only": make(**dict(gemv, k=12, overwrite=True)),
        "gemv_whole_chunks": make(**dict(gemv, k=64, n=16, overwrite=True)),
        "gemv_immediate": make(**dict(gemv, runtime_ld=None, lda=80,
                                      ldb=82, ldc=52)),
        "gemv_rows": make(**dict(gemv, m=5, overwrite=True)),
        "gemv_rows_accumulating": make(**dict(gemv, m=11, n=20)),
        # The epilogue where C is stored: + bias[j], relu, its bound 6.
        "gemv_bias_relu": make(**dict(gemv, m=3, bias="columns", relu=True,
                                      overwrite=True)),
        "gemv_bias_relu6_accumulating": make(**dict(
            gemv, m=2, bias="columns", relu=True, relu_max=6.0)),
        "gemv_bias_leaky": make(**dict(gemv, m=3, bias="columns",
                                       leaky_relu=0.25, overwrite=True)),
    }
    # A 16-bit D (torch's truncf after the f32 product), rounded where the
    # sums are stored: rows a pair and one, accumulating, the epilogue,
    # immediate leading dimensions.
    half = half_output_field(make()["kind"])
    test.assertIn("_o" + ("f16" if half == "f16_output" else "bf16")
                  + "_ldrt_gemv8", header(emit_dot(make(**dict(
                      gemv, m=3, **{half: True}))), "symbol"))
    cases.update({
        "gemv_half_rows": make(**dict(gemv, m=3, overwrite=True,
                                      **{half: True})),
        "gemv_half_accumulating_bias_relu": make(**dict(
            gemv, m=2, bias="columns", relu=True, **{half: True})),
        "gemv_half_immediate": make(**dict(
            gemv, m=5, runtime_ld=None, lda=80, ldb=82, ldc=52, ldd=54,
            overwrite=True, **{half: True})),
    })
    # From GEMV_THREE_ROWS_FROM rows: three rows a pass (the last pass's
    # past the part its last row again, not stored), the epilogue, a 16-bit
    # D, two parts of the rows, faults.
    three = dict(gemv, m=GEMV_THREE_ROWS_FROM + 1)
    test.assertIn("_gemv8x3_", header(emit_dot(make(**three)), "symbol"))
    test.assertIn("_gemv8_", header(emit_dot(make(**dict(
        three, m=GEMV_THREE_ROWS_FROM - 1))), "symbol"))
    cases.update({
        "gemv_three_rows": make(**dict(three, overwrite=True)),
        "gemv_three_rows_bias_relu_accumulating": make(**dict(
            three, m=GEMV_THREE_ROWS_FROM, bias="columns", relu=True)),
        "gemv_three_rows_leaky": make(**dict(
            three, bias="columns", leaky_relu=0.25, overwrite=True)),
        "gemv_three_rows_half": make(**dict(
            three, m=GEMV_THREE_ROWS_FROM + 2, overwrite=True,
            **{half: True})),
    })
    with test.subTest(parallel="three rows"):
        status, output = test.run_kernel(
            "par3", make(**dict(three, parallel=True)), split=5)
        test.assertEqual(status, 0, output)
        test.assertEqual(output.strip(), "ok")
    faulty = {fault: make(**dict(gemv, m=3, fault=fault)) for fault in faults}
    faulty.update({f"{fault} (three rows)": make(**dict(three, fault=fault))
                   for fault in ("drop-k", "write-past-edge")})
    check_in_place_form(
        test, cases, make(**dict(gemv, dynamic_m=True)), (1, 3),
        make(**dict(gemv, m=4, parallel=True)), 2, faulty)


def check_b_rows_streamed(test, make, faults):
    """B's rows streamed in place (pack_b false, B as stored), requests by
    `make`: an edge block alone, blocks and the edge, whole chunks of K, a
    tail only, several passes, immediate leading dimensions, the epilogue,
    a 16-bit D; run-time M and parts; `faults` caught."""
    half = half_output_field(make()["kind"])
    rows = dict(m=1, n=45, k=77, pack_b=False)
    cases = {
        "edge_block_only": make(**rows),
        "blocks_and_edge": make(**dict(rows, n=150, m=4)),
        "whole_chunks": make(**dict(rows, k=32, n=128, m=6,
                                    overwrite=True)),
        "tail_only": make(**dict(rows, k=5, m=2)),
        "passes": make(**dict(rows, m=13, n=70, overwrite=True)),
        # Two groups of passes (48 rows, then 7), the last pass short;
        # one group of six passes.
        "groups": make(**dict(rows, m=55, n=150, bias="columns",
                              relu=True)),
        "one_group": make(**dict(rows, m=31, n=70, overwrite=True)),
        "immediate": make(**dict(rows, m=3, runtime_ld=None, lda=80,
                                 ldb=50, ldc=52)),
        "bias_relu": make(**dict(rows, m=7, n=150, bias="columns",
                                 relu=True, overwrite=True)),
        "bias_relu6": make(**dict(rows, m=2, bias="columns", relu=True,
                                  relu_max=6.0)),
        "bias_leaky": make(**dict(rows, m=7, n=150, bias="columns",
                                  leaky_relu=0.25, overwrite=True)),
        # A 16-bit D, C read and not written: passes, the edge block,
        # the epilogue, immediate leading dimensions.
        "half_output": make(**dict(rows, m=8, n=150, **{half: True})),
        "half_output_bias_relu": make(**dict(
            rows, m=3, bias="columns", relu=True, overwrite=True,
            **{half: True})),
        "half_output_immediate": make(**dict(
            rows, m=7, runtime_ld=None, lda=80, ldb=50, ldc=52, ldd=54,
            overwrite=True, **{half: True})),
        # An even K (no last k paired with zeros), one k.
        "even_k": make(**dict(rows, k=64, m=5, n=100)),
        "one_k": make(**dict(rows, k=1, m=3, n=20)),
        # K in blocks of kc (10 above): one block over two passes (the
        # buffer); a first and a last block, the last's epilogue into D.
        "one_k_block": make(**dict(rows, m=9, n=70, kc=80)),
        "two_k_blocks_half": make(**dict(
            rows, m=9, n=150, k=23, kc=16, bias="columns", relu=True,
            **{half: True})),
    }
    for req in cases.values():
        test.assertIn("_brows64x", header(emit_dot(req), "symbol"))
    check_in_place_form(
        test, cases, make(**dict(rows, m=6, dynamic_m=True)), (1, 7, 20),
        make(**dict(rows, m=9, parallel=True)), 4,
        {fault: make(**dict(rows, m=3, fault=fault)) for fault in faults})



def check_in_place_form(test, cases, dynamic, rows, parallel, split,
                        faulty):
    """A form that reads B in place: each of `cases` (name: request)
    matches the reference; `dynamic` (a run-time M) does at each of
    `rows`, `parallel` on two parts of the rows split at `split`; each of
    `faulty` (fault: request) is caught."""
    test.check_cases(cases)
    for m in rows:
        with test.subTest(dynamic_m=m):
            status, output = test.run_kernel(f"dyn{m}", dynamic, split=0,
                                             m=m)
            test.assertEqual(status, 0, output)
            test.assertEqual(output.strip(), "ok")
    with test.subTest(parallel=True):
        status, output = test.run_kernel("par", parallel, split=split)
        test.assertEqual(status, 0, output)
        test.assertEqual(output.strip(), "ok")
    for fault, req in faulty.items():
        with test.subTest(fault=fault):
            status, output = test.run_kernel(fault, req)
            test.assertEqual(status, 1, output)
            test.assertIn("bad elements", output)


@runs_kernels("avx512_bf16", "avx512bw", lacks="AVX512-BF16")
class Bf16ExecutionTest(HarnessTest):

    def test_runtime_rows_and_parts(self):
        self.check_runtime_parts(request(m=24, k=37, trans_b=True))
        # A in place, its rows from base registers (12 a block, K 37 in
        # one block: 18 pairs and one k).
        self.check_runtime_parts(request(m=24, k=37, kc=37, k_unroll=2,
                                         mr=12, nr=32, mc=24, nc=64,
                                         a_layout="direct"))

    def test_runtime_k(self):
        self.check_runtime_k(request(m=24, k=37, kc=16))
        self.check_all_sizes_at_run_time(request(m=24, k=37, kc=16))

    def test_gemv(self):
        check_gemv(self, request)

    def test_b_rows_streamed(self):
        """pack_b false with B as stored: passes of up to 6 rows of A
        (copied into the workspace, K padded with zeros) against B's rows
        in place, two rows interleaved into pairs of k as they are loaded
        (an odd K's last k paired with zeros), 64 columns a block, the
        block at N's edge masked; several passes; run-time M and parts;
        faults caught (swap-pairs: the rows interleaved the other way)."""
        check_b_rows_streamed(self, request,
                              ("drop-k", "swap-pairs", "write-past-edge"))

    def test_bf16_output_rows_and_parts(self):
        self.check_runtime_parts(request(m=24, k=37, trans_b=True,
                                         bf16_output=True, overwrite=True))

    def test_product_transposed_parts_and_faults(self):
        check_product_transposed(self, request)

    def test_kernels_match_reference(self):
        cases = {
            "edges_odd_k": request(),
            "one_element": request(m=1, n=1, k=1, kc=2, mc=8, nc=48),
            "k_two": request(m=9, n=17, k=2),
            "several_blocks": request(m=70, n=200, k=301, mr=4, nr=96,
                                      k_unroll=4, kc=128, mc=32, nc=96),
            "tall_block": request(m=100, n=33, k=64, mr=14, nr=32,
                                  k_unroll=8, kc=32, mc=28, nc=64),
            "wide": request(m=5, n=130, k=40, mr=6, nr=64, k_unroll=1,
                            kc=40, mc=6, nc=128),
            "overwrite": request(overwrite=True, kc=8),
            # kc odd: every block ends in half a pair (a convolution of 3
            # channels, dotconv.py), with K even and odd.
            "odd_kc": request(kc=9),
            "odd_kc_even_k": request(k=36, kc=9, trans_b=True),
            "odd_kc_trans_a": request(kc=7, trans_a=True),
            # Panels of 256 columns and more: column counts past BZHI's
            # 8-bit index.
            "wide_panels": request(m=9, n=600, k=20, nc=576),
            # Slivers of whole rows with 8 pairs or more: A packed by
            # transposes, the rest of each row one pair at a time.
            "transposed_a": request(m=37, n=45, k=77, kc=40, mc=24),
            "transposed_a_16_rows": request(m=40, n=20, k=99, mr=16, nr=16,
                                            kc=64, mc=32, nc=32),
            "immediate_lds": request(runtime_ld=None, lda=32, ldb=50,
                                     ldc=52),
            # Transposes: a transposed operand is packed as the other one
            # as stored (B^T as A, by rows and transposes; A^T as B, two
            # rows of k interleaved, a sliver of 8 lanes under a mask).
            "trans_b": request(trans_b=True, k=77, kc=40, mc=24),
            "trans_a": request(trans_a=True),
            "trans_ab": request(trans_a=True, trans_b=True, m=70, n=100,
                                k=61, mr=12, nr=32, kc=24, mc=36, nc=64),
            "trans_a_16_rows": request(trans_a=True, m=40, n=20, k=99,
                                       mr=16, nr=16, kc=64, mc=32, nc=32),
            "trans_ab_immediate": request(trans_a=True, trans_b=True,
                                          runtime_ld=None, lda=40, ldb=34,
                                          ldc=52),
            # D = bf16(C + A * B), rounded once: from the only kc block
            # (C never touched when it overwrites), and from the last of
            # several (the earlier ones sum into C).
            "bf16_output_one_block": request(bf16_output=True,
                                             overwrite=True, kc=30),
            "bf16_output_blocks": request(bf16_output=True, overwrite=True,
                                          m=70, n=200, k=301, mr=4, nr=96,
                                          k_unroll=4, kc=128, mc=32,
                                          nc=96),
            "bf16_output_accumulates": request(bf16_output=True,
                                               trans_b=True),
            "bf16_output_one_block_accumulates": request(
                bf16_output=True, kc=30),
            "bf16_output_immediate": request(bf16_output=True,
                                             overwrite=True,
                                             runtime_ld=None, lda=32,
                                             ldb=50, ldc=52, ldd=54),
            # The epilogue where the last kc block stores, into C or D:
            # from the only block and from the last of several, over
            # column edges (the bias read under the lane masks), a
            # single B vector (relu's bound past A's register).
            "bias_relu": request(bias="columns", relu=True, overwrite=True),
            "bias_relu_one_block": request(bias="columns", relu=True,
                                           kc=30, overwrite=True),
            "relu6_accumulates": request(relu=True, relu_max=6.0),
            # hardtanh's clamp: relu's floor -2.5 where the zero was.
            "bias_clamp": request(bias="columns", relu=True, relu_min=-2.5,
                                  relu_max=6.0, overwrite=True),
            "bias_torch_clamp": request(bias="columns", relu=True,
                                        relu_min=-2.5, relu_max=6.0,
                                        relu_nan_to_floor=True),
            "bias_relu6_bf16_output": request(
                bias="columns", relu=True, relu_max=6.0, bf16_output=True,
                overwrite=True, m=70, n=200, k=301, mr=4, nr=96,
                k_unroll=4, kc=128, mc=32, nc=96),
            "bias_bf16_output_one_block": request(
                bias="columns", bf16_output=True, overwrite=True, kc=30),
            "relu6_one_vector": request(relu=True, relu_max=6.0, mr=14,
                                        nr=16, mc=28, nc=32,
                                        overwrite=True),
            # Leaky relu: its slope where relu's floor would be, its
            # products where the bound would (past A's register for a
            # single B vector); a slope below 1 (max) and above (min).
            "bias_leaky": request(bias="columns", leaky_relu=0.25,
                                  overwrite=True),
            "steep_leaky_accumulates_bf16_output": request(
                leaky_relu=4.0, bf16_output=True, m=70, n=200, k=301,
                mr=4, nr=96, k_unroll=4, kc=128, mc=32, nc=96),
            "leaky_one_vector": request(leaky_relu=0.25, mr=14, nr=16,
                                        mc=28, nc=32, overwrite=True),
            # K whole groups of whole unrolls: the last B vectors loaded
            # are data, not the packs' zero padding, in the registers the
            # epilogue takes over.
            "relu_unpadded": request(relu=True, k=64, kc=32, k_unroll=4,
                                     overwrite=True),
            "relu_unpadded_bf16_output": request(
                relu=True, relu_max=6.0, k=64, kc=32, k_unroll=4,
                bf16_output=True),
            # A in place: slivers read where A lies (lda 67), the last one
            # short of rows copied; several kc blocks, a K unroll of 4;
            # with an epilogue and a bf16 output.
            "a_direct": request(runtime_ld=None, k=64, lda=67, ldb=50,
                                ldc=52, kc=16, a_layout="direct"),
            "a_direct_blocks": request(runtime_ld=None, m=70, n=100, k=96,
                                       lda=99, ldb=105, ldc=107, mr=12,
                                       nr=32, k_unroll=4, kc=32, mc=36,
                                       nc=64, a_layout="direct"),
            "a_direct_epilogue_bf16_output": request(
                runtime_ld=None, m=70, n=100, k=96, lda=99, ldb=105,
                ldc=107, ldd=109, mr=12, nr=32, k_unroll=4, kc=32, mc=36,
                nc=64, a_layout="direct", overwrite=True, bias="columns",
                relu=True, bf16_output=True),
            "a_direct_trans_b": request(runtime_ld=None, k=64, lda=67,
                                        ldb=69, ldc=52, kc=64,
                                        trans_b=True, a_layout="direct"),
            # The product transposed (C^T = B^T A^T, B^T's rows read in
            # place, the tiles stored into C through 16 x 16 transposes):
            # edges of C's rows and columns, several kc blocks, A's rows
            # packed as B^T's, the epilogue (a bias per column of C) and a
            # bf16 D, a 14-row block.
            "ct": request(**CT),
            "ct_blocks": request(**dict(CT, kc=32)),
            "ct_packed_a": request(**dict(CT, a_layout="k-major")),
            "ct_epilogue": request(**dict(CT, overwrite=True,
                                          bias="columns", relu=True)),
            "ct_bf16_output": request(**dict(
                CT, bf16_output=True, ldd=54, bias="columns", relu=True,
                relu_max=6.0, kc=32)),
            "ct_14_rows": request(**dict(
                CT, m=70, n=100, k=96, lda=99, ldb=101, ldc=107, mr=14,
                mc=28, kc=32, k_unroll=4)),
            # Blocks of 10 pairs and one k (kc 21 dividing K 63): each
            # block's last k under a mask; and an odd K in one block.
            "a_direct_odd_blocks": request(
                runtime_ld=None, m=70, n=100, k=63, lda=66, ldb=105,
                ldc=107, mr=12, nr=32, k_unroll=2, kc=21, mc=36, nc=64,
                a_layout="direct"),
            "a_direct_odd_k": request(runtime_ld=None, k=63, lda=66,
                                      ldb=50, ldc=52, kc=63, k_unroll=1,
                                      a_layout="direct", overwrite=True,
                                      relu=True),
            # A in place with run-time leading dimensions: rows from three
            # bases and lda, 3 lda in registers (8, 12, 14 and 16 rows),
            # blocks ending in a partial group, the product transposed.
            "a_direct_runtime_ld": request(k=64, kc=16, a_layout="direct"),
            "a_direct_runtime_ld_12_rows": request(
                m=70, n=100, k=96, mr=12, nr=32, k_unroll=4, kc=32, mc=36,
                nc=64, a_layout="direct", overwrite=True, bias="columns",
                relu=True, bf16_output=True),
            "a_direct_runtime_ld_14_rows_odd_blocks": request(
                m=70, n=100, k=63, mr=14, nr=32, k_unroll=2, kc=21, mc=28,
                nc=64, a_layout="direct"),
            "a_direct_runtime_ld_16_rows": request(
                m=40, n=100, k=96, mr=16, nr=16, k_unroll=4, kc=96, mc=32,
                nc=64, a_layout="direct", trans_b=True),
            "ct_runtime_ld": request(**dict(CT, runtime_ld=True, lda=None,
                                            ldb=None, ldc=None)),
            "ct_runtime_ld_bf16_output": request(**dict(
                CT, runtime_ld=True, lda=None, ldb=None, ldc=None,
                bf16_output=True, bias="columns", relu=True, kc=32)),
        }
        for name, req in cases.items():
            with self.subTest(name=name):
                status, output = self.run_kernel(name, req)
                self.assertEqual(status, 0, output)
                self.assertEqual(output.strip(), "ok")

    def test_b_prepacked(self):
        """B packed by the caller (the harness's reference packer from the
        kernel's qm.b_prepacked): one kc block and several, K and N edges,
        B transposed as stored, A in place, two parts of the rows, a
        run-time N, an epilogue into D; a kernel that drops k is caught."""
        cases = {
            "blocks": request(kc=12),
            "one_block": request(kc=30),
            "several_blocks": request(m=70, n=200, k=301, mr=4, nr=96,
                                      k_unroll=4, kc=128, mc=32, nc=96),
            "trans_b": request(trans_b=True, k=77, kc=40, mc=24),
            "a_direct": request(runtime_ld=None, m=70, n=100, k=96,
                                lda=99, ldb=105, ldc=107, mr=12, nr=32,
                                k_unroll=4, kc=32, mc=36, nc=64,
                                a_layout="direct"),
            "epilogue_bf16_output": request(
                m=70, n=200, k=301, mr=4, nr=96, k_unroll=4, kc=128,
                mc=32, nc=96, bias="columns", relu=True, bf16_output=True,
                overwrite=True),
        }
        for name, req in cases.items():
            with self.subTest(name=name):
                status, output = self.run_kernel(
                    "pre_" + name, dict(req, b_prepacked=True))
                self.assertEqual(status, 0, output)
                self.assertEqual(output.strip(), "ok")
        req = request(kc=12, b_prepacked=True)
        with self.subTest(parallel=True):
            status, output = self.run_kernel(
                "pre_par", dict(req, parallel=True), split=16)
            self.assertEqual(status, 0, output)
            self.assertEqual(output.strip(), "ok")
        with self.subTest(dynamic_n=60):
            status, output = self.run_kernel(
                "pre_dyn_n", dict(req, dynamic_n=True), split=0, n=60)
            self.assertEqual(status, 0, output)
            self.assertEqual(output.strip(), "ok")
        with self.subTest(fault="drop-k"):
            status, output = self.run_kernel("pre_drop_k",
                                             dict(req, fault="drop-k"))
            self.assertEqual(status, 1, output)
            self.assertIn("bad elements", output)

    def test_faults_are_caught(self):
        for fault in ("drop-k", "swap-pairs", "write-past-edge"):
            for out in (False, True):
                with self.subTest(fault=fault, bf16_output=out):
                    status, output = self.run_kernel(
                        fault, request(fault=fault, bf16_output=out))
                    self.assertEqual(status, 1, output)
                    self.assertIn("bad elements", output)


def f16_request(**changes):
    return request(**dict(dict(kind="shgemm"), **changes))


@runs_kernels("avx512bw", "avx512vl", "f16c", lacks="AVX512BW/VL, F16C")
class F16ExecutionTest(HarnessTest):
    """shgemm on AVX-512: f16 widened to f32 where it is packed (or, in
    the matrix-vector form, loaded), f32 products and sums (the f16
    harness's operands, whose every product and sum is exact in f32)."""
    HARNESS = F16_HARNESS

    def test_gemv(self):
        check_gemv(self, f16_request,
                   faults=("drop-k", "write-past-edge", "drop-low"))

    def test_kernels_match_reference(self):
        """A packed k-major (B as stored) and lane-major (A; B^T), whole
        8 x 8 transposes and the rows after them, edges of every kind,
        several blocks, K unrolls, immediate leading dimensions, the
        epilogue and an f16 D."""
        self.check_cases({
            "edges": f16_request(),
            "one_element": f16_request(m=1, n=1, k=1, kc=8, mc=8, nc=48),
            "several_blocks": f16_request(m=100, n=150, k=197, kc=64,
                                          mc=48, nc=96, k_unroll=4),
            "whole_slivers": f16_request(m=64, n=96, k=64, kc=32, mc=32,
                                         nc=96, overwrite=True),
            "trans_b": f16_request(trans_b=True),
            "trans_b_blocks": f16_request(trans_b=True, m=100, n=150,
                                          k=197, kc=64, mc=48, nc=96,
                                          overwrite=True),
            "immediate": f16_request(runtime_ld=None, lda=32, ldb=50,
                                     ldc=52),
            "trans_b_immediate": f16_request(trans_b=True, runtime_ld=None,
                                             lda=32, ldb=34, ldc=52),
            "bias_relu": f16_request(bias="columns", relu=True,
                                     overwrite=True, m=30, k=100, kc=48),
            "bias_steep_leaky": f16_request(bias="columns", leaky_relu=4.0,
                                            m=30, k=100, kc=48),
            "f16_output": f16_request(f16_output=True, overwrite=True),
            "f16_output_blocks_trans_b": f16_request(
                f16_output=True, trans_b=True, m=50, n=70, k=150, kc=64,
                mc=32, nc=48),
            "f16_output_immediate": f16_request(
                f16_output=True, overwrite=True, runtime_ld=None, lda=32,
                ldb=50, ldc=52, ldd=54),
        })

    def test_runtime_rows_and_parts(self):
        self.check_runtime_parts(f16_request(m=24, k=37, trans_b=True))

    def test_runtime_k(self):
        self.check_runtime_k(f16_request(m=24, k=37, kc=16))
        self.check_all_sizes_at_run_time(f16_request(m=24, k=37, kc=16))

    def test_b_rows_streamed(self):
        """pack_b false with B as stored: passes of up to 6 rows of A
        (widened into the workspace, a tail of K under a mask) against
        B's rows in place, 64 columns a block, the block at N's edge
        masked; several passes, the last short; run-time M and parts;
        faults caught."""
        check_b_rows_streamed(self, f16_request,
                              ("drop-k", "drop-low", "write-past-edge"))

    def test_faults_are_caught(self):
        """drop-low cuts B's widened f16 to bf16's 8 bits, which these
        operands exceed, B as stored and transposed (both packs)."""
        for fault, trans_b in (("drop-k", False), ("drop-low", False),
                               ("drop-low", True),
                               ("write-past-edge", False)):
            with self.subTest(fault=fault, trans_b=trans_b):
                status, output = self.run_kernel(
                    f"{fault}_{trans_b}",
                    f16_request(fault=fault, trans_b=trans_b, m=40, k=70,
                                kc=32, overwrite=True))
                self.assertEqual(status, 1, output)
                self.assertIn("bad elements", output)


@runs_kernels("avx512_vnni", "avx512bw", lacks="AVX512-VNNI")
class Int8ExecutionTest(HarnessTest):
    HARNESS = INT8_HARNESS

    def test_product_transposed_parts_and_faults(self):
        """s8: B^T's rows in place (signed), A's packed plus 128, B^T's
        row sums subtracted."""
        check_product_transposed(self, lambda **c: int8_request(a_type="s8",
                                                                **c))

    def test_runtime_rows_and_parts(self):
        self.check_runtime_parts(int8_request(m=24, k=37))
        for a_type in ("s8", "u8"):
            self.check_runtime_parts(int8_request(
                m=24, k=64, kc=64, mr=12, nr=32, mc=24, nc=64,
                a_layout="direct", a_type=a_type))

    def test_runtime_k(self):
        for a_type in ("s8", "u8"):
            with self.subTest(a_type=a_type):
                self.check_runtime_k(int8_request(m=24, k=37, kc=16,
                                                  a_type=a_type))

    def test_kernels_match_reference(self):
        cases = {}
        for a_type in ("s8", "u8"):
            for name, req in {
                "edges": int8_request(),
                "k_rem_1": int8_request(k=33, kc=16),
                "k_rem_3": int8_request(k=7, kc=8),
                "one_element": int8_request(m=1, n=1, k=1, kc=4, mc=8,
                                            nc=48),
                "transposed_a_rows": int8_request(m=37, n=45, k=130, kc=64,
                                                  mc=24),
                "several_blocks": int8_request(m=70, n=200, k=301, mr=4,
                                               nr=96, k_unroll=4, kc=128,
                                               mc=32, nc=96),
                "overwrite": int8_request(overwrite=True, k=50),
                "wide_panels": int8_request(m=9, n=600, k=20, nc=576),
                "trans_b": int8_request(trans_b=True, k=77, kc=40, mc=24),
                # (s8 only: see the loop's end.)
                "ct": int8_request(**CT),
                "ct_blocks": int8_request(**dict(CT, kc=32)),
                "ct_packed_a": int8_request(**dict(CT, a_layout="k-major")),
                "ct_runtime_ld": int8_request(**dict(
                    CT, runtime_ld=True, lda=None, ldb=None, ldc=None)),
                "trans_a": int8_request(trans_a=True, k=31),
                "trans_ab": int8_request(trans_a=True, trans_b=True, m=70,
                                         n=100, k=61, mr=12, nr=32, kc=24,
                                         mc=36, nc=64),
                "immediate_lds": int8_request(runtime_ld=None, lda=32,
                                              ldb=50, ldc=52),
            }.items():
                # (The product transposed takes no u8 A: it would be
                # VPDPBUSD's signed operand.)
                if not (name.startswith("ct") and a_type == "u8"):
                    cases[f"{a_type}_{name}"] = dict(req, a_type=a_type)
        # A in place.
        for name, req in {
                "a_direct": int8_request(runtime_ld=None, k=64, lda=67,
                                         ldb=50, ldc=52, kc=16),
                "a_direct_blocks": int8_request(
                    runtime_ld=None, m=70, n=100, k=96, lda=99, ldb=105,
                    ldc=107, mr=12, nr=32, k_unroll=2, kc=32, mc=36,
                    nc=64, overwrite=True),
                # Rows of 200 bytes: three whole 64-byte chunks and a
                # tail in the row sums; B transposed.
                "a_direct_long_rows": int8_request(
                    runtime_ld=None, m=30, n=50, k=200, lda=203, ldb=55,
                    ldc=57, kc=200, mc=24),
                "a_direct_trans_b": int8_request(
                    runtime_ld=None, m=30, n=50, k=64, lda=67, ldb=69,
                    ldc=57, kc=32, trans_b=True),
                # 7 rows of 67 bytes: slivers start at odd addresses (a
                # tag in bit 0 would take one for a copied sliver).
                "a_direct_odd_rows": int8_request(
                    runtime_ld=None, m=30, n=50, k=64, lda=67, ldb=55,
                    ldc=57, mr=7, nr=48, kc=32, mc=14, nc=48),
                # Blocks of 5 quads and 1 to 3 bytes (kc dividing K): each
                # block's last bytes under a mask.
                "a_direct_partial_quads": int8_request(
                    runtime_ld=None, m=30, n=50, k=63, lda=66, ldb=55,
                    ldc=57, mr=7, nr=48, kc=21, mc=14, nc=48, k_unroll=1),
                "a_direct_three_bytes": int8_request(
                    runtime_ld=None, m=30, n=50, k=46, lda=49, ldb=55,
                    ldc=57, mr=7, nr=48, kc=23, mc=14, nc=48, k_unroll=1),
                # Run-time leading dimensions: rows from three bases (12
                # and 16 rows), the row sums from lda.
                "a_direct_runtime_ld": int8_request(
                    m=70, n=100, k=96, mr=12, nr=32, k_unroll=2, kc=32,
                    mc=36, nc=64),
                "a_direct_runtime_ld_16_rows_partial_quads": int8_request(
                    m=40, n=50, k=63, mr=16, nr=16, kc=21, mc=32, nc=48,
                    k_unroll=1, overwrite=True),
            }.items():
            # s8: B packed plus 128, A signed where it lies, each row's
            # 128 sum_k A subtracted.
            for a_type in ("u8", "s8"):
                cases[f"{a_type}_{name}"] = dict(req, a_type=a_type,
                                                 a_layout="direct")
        for name, req in cases.items():
            with self.subTest(name=name):
                status, output = self.run_kernel(name, req)
                self.assertEqual(status, 0, output)
                self.assertEqual(output.strip(), "ok")

    def test_b_prepacked(self):
        """B packed by the caller: u8 A, s8 A packed (its column sums from
        the prepacked panel), s8 A in place (the prepacked B plus 128);
        K remainders (k 33: a partial last group), several blocks."""
        cases = {
            "k_rem_1": int8_request(k=33, kc=16, k_unroll=2),
            "several_blocks": int8_request(m=70, n=200, k=301, mr=4,
                                           nr=96, k_unroll=4, kc=128,
                                           mc=32, nc=96),
            "trans_b": int8_request(trans_b=True, k=77, kc=40, k_unroll=2,
                                    mc=24),
        }
        for a_type in ("u8", "s8"):
            for name, req in cases.items():
                with self.subTest(name=name, a_type=a_type):
                    status, output = self.run_kernel(
                        f"pre_{a_type}_{name}",
                        dict(req, a_type=a_type, b_prepacked=True))
                    self.assertEqual(status, 0, output)
                    self.assertEqual(output.strip(), "ok")
            with self.subTest(name="a_direct", a_type=a_type):
                status, output = self.run_kernel(
                    f"pre_{a_type}_direct", int8_request(
                        runtime_ld=None, m=30, n=50, k=64, lda=67, ldb=55,
                        ldc=57, mr=7, nr=48, kc=32, mc=14, nc=48,
                        a_type=a_type, a_layout="direct",
                        b_prepacked=True))
                self.assertEqual(status, 0, output)
                self.assertEqual(output.strip(), "ok")

    def test_b_rows_streamed(self):
        """pack_b false with B as stored: passes of up to 6 rows of A
        (copied into the workspace, K padded with zeros; s8: each row's
        -128 sum_k A) against B's rows in place, four rows interleaved into
        quads of k as they are loaded (K's last one to three k padded with
        zero rows), the sums put back in column order where they are
        stored, 64 columns a block, the block at N's edge masked; u8 and
        s8 A; run-time M and parts; faults caught (swap-pairs: rows k and
        k + 1 the other way round)."""
        rows = dict(m=1, n=45, k=77, pack_b=False)
        for a_type in ("u8", "s8"):
            def make(**changes):
                return int8_request(**dict(rows, a_type=a_type, **changes))
            cases = {
                "edge_block_only": make(),
                "blocks_and_edge": make(n=150, m=4),
                "whole_chunks": make(k=128, n=128, m=6, overwrite=True),
                "k_rem_2": make(k=6, m=2),
                "k_rem_3": make(k=67, m=5, n=100),
                "one_k": make(k=1, m=3, n=20),
                "passes": make(m=13, n=70, overwrite=True),
                # Two groups of passes (48 rows, then 7), the last pass
                # short.
                "groups": make(m=55, n=150),
                "immediate": make(m=3, runtime_ld=None, lda=80, ldb=50,
                                  ldc=52),
                # K in blocks of kc (12 above): one block, then a first and
                # a last (its partial quad), no middle one.
                "one_k_block": make(m=9, n=70, kc=80),
                "two_k_blocks": make(m=9, n=70, k=23, kc=16,
                                     overwrite=True),
            }
            for req in cases.values():
                self.assertIn("_brows64x", header(emit_dot(req), "symbol"))
            with self.subTest(a_type=a_type):
                check_in_place_form(
                    self, {f"{a_type}_{n}": r for n, r in cases.items()},
                    make(m=6, dynamic_m=True), (1, 7, 20),
                    make(m=9, parallel=True), 4,
                    {fault: make(m=3, fault=fault) for fault in
                     ("drop-k", "swap-pairs", "write-past-edge")})

    def test_gemv(self):
        """pack_b false with B^T: a matrix-vector product per row of A,
        64 bytes of k a chunk, VPDPBUSD (s8 A: against B^T's bytes plus
        128, each row's 128 sum_k A subtracted), the s32 sums reduced by
        VPHADDD; K in whole chunks, a tail of up to 63 k, both; one and
        two rows a pass, u8 and s8 A, run-time M, parts, faults."""
        gemv = dict(m=1, n=45, k=77, trans_b=True, pack_b=False)
        for a_type in ("u8", "s8"):
            def make(**changes):
                return int8_request(**dict(gemv, a_type=a_type, **changes))
            cases = {
                "gemv": make(),
                "tail_only": make(k=12, overwrite=True),
                "long_tail": make(k=63, m=2),
                "whole_chunks": make(k=128, n=16, overwrite=True),
                "immediate": make(runtime_ld=None, lda=80, ldb=82, ldc=52),
                "rows": make(m=5, overwrite=True),
                "rows_accumulating": make(m=11, n=20, k=200),
            }
            for req in cases.values():
                self.assertIn("_gemv8_", header(emit_dot(req), "symbol"))
            with self.subTest(a_type=a_type):
                check_in_place_form(
                    self, {f"{a_type}_{n}": r for n, r in cases.items()},
                    make(m=4, dynamic_m=True), (1, 3, 9),
                    make(m=9, parallel=True), 4,
                    {fault: make(m=3, fault=fault)
                     for fault in ("drop-k", "write-past-edge")})

    def test_faults_are_caught(self):
        for fault in ("drop-k", "swap-pairs", "write-past-edge"):
            with self.subTest(fault=fault):
                status, output = self.run_kernel(
                    fault, int8_request(fault=fault))
                # write-past-edge's masks read past the operands too, which
                # may end the process on this harness's small buffers.
                self.assertNotEqual(status, 0, output)
                if status == 1:
                    self.assertIn("bad elements", output)


if __name__ == "__main__":
    unittest.main()

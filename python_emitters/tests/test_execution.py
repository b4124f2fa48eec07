"""Runs emitted kernels on the host CPU against a naive C reference.

Each kernel is assembled with llvm-mc and linked with a small C harness
(compiled once with gcc). The harness fills A and B with small integers (so
every sum is exact in float), puts NaN in the padding of A and B (which a
kernel must not read), a sentinel in the padding of C and in guard zones
around C (which a kernel must not write), NaN bytes in the workspace, calls
the kernel twice through an assembly wrapper that checks the callee-saved
registers and %rsp, and compares C with C0 + 2*op(A)*op(B) exactly.
A runtime_ld kernel finds lda, ldb and ldc where the harness writes them,
in the workspace header (docs/KernelContract.md); a dynamic_m kernel finds
the rows there too (the range [0, M) x [0, N)), M other than the request's.
"""

import os
import shutil
import subprocess
import tempfile
import unittest

from . import specials
from .support import (LLVM_MC, assemble, cpu_has, emit, header, request,
                      runs_kernels)
from .test_dotgemm import PREPACK_B, prepacked_b_args

GCC = shutil.which("gcc")

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
/* -0.0: a stray "C += 0" (an out-of-bounds update with a zero-padded
   accumulator) turns it into +0.0, so even that write shows. */
static const float SENTINEL = -0.0f;

static float val(long r, long c, long salt) {
    return (float)((r * 7 + c * 13 + salt * 5) % 9) - 4.0f;
}

/* rows x ld floats (ld >= cols) between guards; padding NaN. */
static float *matrix(long rows, long cols, long ld, long salt, float pad) {
    long total = rows * ld + 2 * GUARD;
    float *buf = malloc(sizeof(float) * total);
    if (!buf) { perror("malloc"); exit(3); }
    for (long i = 0; i < total; i++) buf[i] = pad;
    float *m = buf + GUARD;
    for (long r = 0; r < rows; r++)
        for (long c = 0; c < cols; c++) m[r * ld + c] = val(r, c, salt);
    return m;
}

""" + PREPACK_B + r"""
int main(int argc, char **argv) {
    /* Arguments 12-14 (b_prepacked): NR, the layout's rows, plus128. */
    if (argc != 12 && argc != 15) { fprintf(stderr, "usage\n"); return 3; }
    long M = atol(argv[1]), N = atol(argv[2]), K = atol(argv[3]);
    long lda = atol(argv[4]), ldb = atol(argv[5]), ldc = atol(argv[6]);
    int ta = atoi(argv[7]), tb = atoi(argv[8]);
    long ws_bytes = atol(argv[9]);
    int header = atoi(argv[10]);  /* 1: leading dims, 2: the range, 4: K */
    /* 1: bias per column, 2: relu, 4: bias per row, 8: relu bounded by 6,
       16: relu's floor -2.5 instead of 0, 32: leaky relu of slope 0.25,
       64: leaky relu of slope 4, 128: sigmoid, 256: silu, 512: gelu_tanh,
       1024: gelu_erf (within SMOOTH_TOLERANCE, not exactly) */
    int epilogue = atoi(argv[11]);
    float *A = ta ? matrix(K, M, lda, 1, NAN) : matrix(M, K, lda, 1, NAN);
    float *B = tb ? matrix(N, K, ldb, 2, NAN) : matrix(K, N, ldb, 2, NAN);
    float *C = matrix(M, N, ldc, 3, SENTINEL);
    float *bias = (epilogue & 4) ? matrix(1, M, M, 5, NAN)
                                 : matrix(1, N, N, 4, NAN);
    double *ref = malloc(sizeof(double) * M * N);
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            double s = 0;
            for (long k = 0; k < K; k++) {
                double a = ta ? A[k * lda + i] : A[i * lda + k];
                double b = tb ? B[j * ldb + k] : B[k * ldb + j];
                s += a * b;
            }
            /* Two calls: C = epilogue(epilogue(C0 + s) + s). */
            double r = C[i * ldc + j];
            for (int rep = 0; rep < 2; rep++) {
                r += s;
                if (epilogue & 1) r += bias[j];
                if (epilogue & 4) r += bias[i];
                double floor = (epilogue & 16) ? -2.5 : 0.0;
                if ((epilogue & 2) && !(r > floor)) r = isnan(r) ? r : floor;
                if ((epilogue & 8) && r > 6.0) r = 6.0;
                if ((epilogue & 32) && !(r > 0 || isnan(r))) r *= 0.25;
                if ((epilogue & 64) && !(r > 0 || isnan(r))) r *= 4.0;
                if (epilogue & 128) r = 1.0 / (1.0 + exp(-r));
                if (epilogue & 256) r = r / (1.0 + exp(-r));
                if (epilogue & 512)
                    r = 0.5 * r * (1.0 + tanh(sqrt(2.0 / 3.14159265358979323846)
                                              * (r + 0.044715 * r * r * r)));
                if (epilogue & 1024) r = 0.5 * r * (1.0 + erf(r / sqrt(2.0)));
            }
            ref[i * N + j] = r;
        }
    void *ws = aligned_alloc(64, ws_bytes);
    if (!ws) { perror("aligned_alloc"); return 3; }
    memset(ws, 0xff, ws_bytes);
    if (header & 1) {
        long lds[3] = {lda, ldb, ldc};
        memcpy((char *)ws + 64, lds, sizeof lds);
    }
    if (header & 2) {
        long range[4] = {0, M, 0, N};
        memcpy((char *)ws + 24, range, sizeof range);
    }
    if (header & 4)
        memcpy((char *)ws + 56, &K, sizeof K);
    memcpy((char *)ws + 112, &bias, sizeof bias);
    const float *Bk = argc == 15
        ? (const float *)prepack_b((const unsigned char *)B, K, N, ldb, tb, 4,
                                   atol(argv[12]), atol(argv[13]),
                                   atoi(argv[14]))
        : B;
    for (int rep = 0; rep < 2; rep++)
        if (qm_call_checked(qm_kernel, A, Bk, C, ws)) {
            printf("callee-saved register or %%rsp not preserved\n");
            return 2;
        }
    long bad = 0;
    /* A smooth activation is computed to a few ulps: its result (and the
       second call's input) within 2^-19 of the magnitude. */
    int smooth = epilogue & (128 | 256 | 512 | 1024);
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++)
            if ((smooth ? !(fabs(C[i * ldc + j] - ref[i * N + j])
                            <= ldexp(fabs(ref[i * N + j]) + 1.0, -19))
                        : C[i * ldc + j] != (float)ref[i * N + j])
                && bad++ < 5)
                printf("mismatch C[%ld][%ld] = %g, want %g\n", i, j,
                       C[i * ldc + j], ref[i * N + j]);
    float *buf = C - GUARD;
    long total = M * ldc + 2 * GUARD;
    for (long x = 0; x < total; x++) {
        long off = x - GUARD;
        int inside = off >= 0 && off < M * ldc && off % ldc < N;
        if (!inside && memcmp(&buf[x], &SENTINEL, sizeof(float)) && bad++ < 5)
            printf("write outside C at element offset %ld\n", off);
    }
    if (bad) { printf("%ld bad elements\n", bad); return 1; }
    printf("ok\n");
    return 0;
}
"""

# long qm_call_checked(fn, A, B, C, ws): calls fn(A, B, C, ws) with known
# values in the callee-saved registers; returns 0 if they and %rsp survive.
WRAPPER_S = r"""
	.text
	.globl	qm_call_checked
	.type	qm_call_checked,@function
qm_call_checked:
	pushq	%rbp
	pushq	%rbx
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	subq	$8, %rsp
	movq	%rsp, (%rsp)
	movq	%rdi, %rax
	movq	%rsi, %rdi
	movq	%rdx, %rsi
	movq	%rcx, %rdx
	movq	%r8, %rcx
	movabsq	$0x1111111111111111, %rbx
	movabsq	$0x2222222222222222, %rbp
	movabsq	$0x3333333333333333, %r12
	movabsq	$0x4444444444444444, %r13
	movabsq	$0x5555555555555555, %r14
	movabsq	$0x6666666666666666, %r15
	callq	*%rax
	movl	$1, %eax
	cmpq	%rsp, (%rsp)
	jne	1f
	movabsq	$0x1111111111111111, %rcx
	cmpq	%rcx, %rbx
	jne	1f
	movabsq	$0x2222222222222222, %rcx
	cmpq	%rcx, %rbp
	jne	1f
	movabsq	$0x3333333333333333, %rcx
	cmpq	%rcx, %r12
	jne	1f
	movabsq	$0x4444444444444444, %rcx
	cmpq	%rcx, %r13
	jne	1f
	movabsq	$0x5555555555555555, %rcx
	cmpq	%rcx, %r14
	jne	1f
	movabsq	$0x6666666666666666, %rcx
	cmpq	%rcx, %r15
	jne	1f
	xorl	%eax, %eax
1:
	addq	$8, %rsp
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbx
	popq	%rbp
	retq
	.size	qm_call_checked, .-qm_call_checked
	.section	.note.GNU-stack,"",@progbits
"""


def swept_b_in_place(**fields):
    """An AVX-512 request whose B is read in place, each row sliver
    sweeping it (ir-jr), with its next panel prefetched (sweep_b)."""
    return request(isa="avx512", pack_b=False, loop_order="ir-jr",
                   sweep_b=True, **fields)


# Requests whose kernels must compute C += op(A) * op(B) exactly.
CORRECT = [
    ("avx2_64x64x64_exact_tiles", request()),
    ("avx2_13x33x8_edges_ku1", request(m=13, n=33, k=8, k_unroll=1)),
    ("avx2_1x1x1", request(m=1, n=1, k=1, k_unroll=1)),
    ("avx2_37x29x50_ta_multiblock_ku8",
     request(m=37, n=29, k=50, trans_a=True, kc=16, mc=12, nc=16,
             k_unroll=8)),
    ("avx2_30x40x17_tt_padded_prefetch",
     request(m=30, n=40, k=17, trans_a=True, trans_b=True, lda=33, ldb=20,
             ldc=45, k_unroll=4, prefetch_a=256, prefetch_b=512)),
    ("avx2_25x19x23_tb_8x8_vector_pack_a",
     request(m=25, n=19, k=23, trans_a=True, trans_b=True, mr=8, nr=8,
             mc=16, nc=16, kc=8, k_unroll=2)),
    ("avx2_71x9x3_14x8_ku16", request(m=71, n=9, k=3, mr=14, nr=8, mc=28,
                                      nc=8, k_unroll=16)),
    ("avx512_57x70x33_14x32_tb_ku8",
     request(isa="avx512", m=57, n=70, k=33, mr=14, nr=32, mc=28, nc=64,
             kc=16, trans_b=True, k_unroll=8, ldc=75)),
    ("avx512_20x50x9_6x48_tt",
     request(isa="avx512", m=20, n=50, k=9, mr=6, nr=48, mc=12, nc=48,
             trans_a=True, trans_b=True, k_unroll=2, prefetch_b=128)),
    ("avx2_31x45x20_ir_jr_edges",
     request(m=31, n=45, k=20, mc=18, nc=32, kc=8, loop_order="ir-jr")),
    ("avx2_29x37x41_a_rows_edges_ku2",
     request(m=29, n=37, k=41, mc=18, nc=32, kc=16, k_unroll=2,
             a_layout="rows", prefetch_a=256)),
    ("avx512_45x70x35_a_rows_14x32_embedded",
     request(isa="avx512", m=45, n=70, k=35, mr=14, nr=32, mc=28, nc=64,
             kc=24, a_layout="rows", order="embedded", k_unroll=4)),
    ("avx512_40x96x17_ir_jr_b_in_place",
     request(isa="avx512", m=40, n=96, k=17, mr=12, nr=32, mc=24, nc=64,
             kc=8, pack_b=False, loop_order="ir-jr")),
    # B in place, its last sliver short of columns (N not a multiple of
    # nr): that sliver's loads masked to N. One row of a classifier's 1000
    # columns (40 in the last sliver: two vectors and a half, a fourth
    # masked off), two column blocks; the B vector read by the FMAs from
    # memory (bmem) masked by the FMA's own mask, a padded ldb; a swept B
    # with row edges.
    ("avx512_1x1000x30_b_in_place_column_edge",
     request(isa="avx512", m=1, n=1000, k=30, mr=1, nr=64, mc=1, nc=512,
             kc=8, pack_b=False, loop_order="ir-jr", a_layout="direct")),
    ("avx512_13x70x21_b_in_place_column_edge_bmem",
     request(isa="avx512", m=13, n=70, k=21, ldb=75, mr=7, nr=64, mc=14,
             nc=128, kc=8, order="bmem", pack_b=False, loop_order="ir-jr")),
    ("avx512_5x100x40_b_in_place_swept_column_edge",
     swept_b_in_place(m=5, n=100, k=40, mr=3, nr=32, mc=6, nc=64, kc=16,
                      a_layout="direct")),
    # B in place, swept: the K loops prefetch the next panel (eight and
    # six lines an iteration), K's last block short, row edges, rows
    # longer than N, two column blocks.
    ("avx512_8x512x100_b_in_place_swept",
     swept_b_in_place(m=8, n=512, k=100, mr=8, nr=32, mc=8, nc=512, kc=16,
                      a_layout="direct")),
    ("avx512_13x512x70_b_in_place_swept_edges",
     swept_b_in_place(m=13, n=512, k=70, ldb=520, ldc=530, mr=6, nr=64,
                      mc=18, nc=512, kc=16)),
    ("avx512_8x96x50_b_in_place_swept_two_column_blocks",
     swept_b_in_place(m=8, n=96, k=50, ldb=100, mr=8, nr=32, mc=8, nc=64,
                      kc=8)),
    # B packed by each sliver's first tile: several jc, pc and ic blocks
    # (only the first row block packs), a K remainder, row edges.
    ("avx2_61x48x70_fused_b_multiblock",
     request(m=61, n=48, k=70, ldb=53, mc=24, nc=32, kc=32, k_unroll=4,
             fuse_pack_b=True)),
    ("avx512_45x64x35_fused_b_ir_jr_a_rows",
     request(isa="avx512", m=45, n=64, k=35, mr=14, nr=32, mc=28, nc=64,
             kc=24, a_layout="rows", order="embedded", loop_order="ir-jr",
             fuse_pack_b=True)),
    ("avx2_5x32x9_fused_b_one_tile_ta",
     request(m=5, n=32, k=9, trans_a=True, k_unroll=8, fuse_pack_b=True)),
    # The last B vector read by the FMAs from memory: row and column edges,
    # a K remainder; A in rows; B packed by the tiles (in place, copied).
    ("avx512_50x130x37_7x64_bmem_edges",
     request(isa="avx512", m=50, n=130, k=37, mr=7, nr=64, mc=14, nc=128,
             kc=16, order="bmem", k_unroll=4)),
    ("avx2_23x40x19_7x16_bmem_a_rows",
     request(m=23, n=40, k=19, mr=7, nr=16, mc=14, nc=32, kc=8,
             order="bmem", a_layout="rows")),
    ("avx512_30x128x41_7x64_bmem_fused_b",
     request(isa="avx512", m=30, n=128, k=41, mr=7, nr=64, mc=14, nc=128,
             kc=16, ldb=133, order="bmem", fuse_pack_b=True)),
    # A read in place, rows lda apart: the last sliver short of rows (one
    # and MR-1 rows) copied to scratch; several ic and pc blocks, a K
    # remainder, prefetch along the rows, B in place and packed by tiles.
    ("avx512_55x70x37_a_direct_edges_prefetch",
     request(isa="avx512", m=55, n=70, k=37, lda=41, mr=6, nr=64, mc=24,
             nc=128, kc=16, k_unroll=4, a_layout="direct", prefetch_a=256)),
    ("avx512_61x64x35_a_direct_fused_b_ir_jr",
     request(isa="avx512", m=61, n=64, k=35, mr=14, nr=32, mc=28, nc=64,
             kc=24, a_layout="direct", order="embedded", loop_order="ir-jr",
             fuse_pack_b=True)),
    ("avx2_23x32x19_a_direct_b_in_place_bmem",
     request(m=23, n=32, k=19, mr=7, nr=16, mc=14, nc=32, kc=8,
             order="bmem", a_layout="direct", pack_b=False)),
    # B prepacked by the caller (the harness packs it from the kernel's
    # qm.b_prepacked): several jc, pc and ic blocks, a K remainder, column
    # edges (zero columns in the last sliver), B transposed as stored,
    # A in place, the epilogue, the B vectors read from memory.
    ("avx2_61x45x70_b_prepacked_blocks",
     request(m=61, n=45, k=70, ldb=53, mc=24, nc=32, kc=32, k_unroll=4,
             b_prepacked=True)),
    ("avx512_50x130x37_b_prepacked_bmem_tb",
     request(isa="avx512", m=50, n=130, k=37, mr=7, nr=64, mc=14, nc=128,
             kc=16, order="bmem", k_unroll=4, trans_b=True,
             b_prepacked=True)),
    ("avx512_55x70x37_b_prepacked_a_direct_bias_relu",
     request(isa="avx512", m=55, n=70, k=37, lda=41, mr=6, nr=64, mc=24,
             nc=128, kc=16, k_unroll=4, a_layout="direct", bias="columns",
             relu=True, b_prepacked=True)),
    ("avx512_40x96x17_b_prepacked_ir_jr",
     request(isa="avx512", m=40, n=96, k=17, mr=12, nr=32, mc=24, nc=64,
             kc=8, loop_order="ir-jr", b_prepacked=True)),
    # Few rows against B^T on AVX-512: the matrix-vector form (B^T's rows
    # read in place, dotgemm.py): one row and an odd count (rows two at a
    # time), a K tail and whole chunks of 16, columns past N in the last
    # group of 8 rows of B^T, padded leading dimensions, overwrite.
    ("avx512_1x45x37_matrix_vector",
     request(isa="avx512", m=1, n=45, k=37, ldb=40, ldc=50, trans_b=True,
             pack_b=False)),
    ("avx512_5x70x96_matrix_vector_padded",
     request(isa="avx512", m=5, n=70, k=96, lda=100, ldb=99, ldc=75,
             trans_b=True, pack_b=False)),
    # B^T packed with all of M in one row block: the K loops prefetch the
    # next panel's rows of B^T (several pc and jc blocks, edges, A in
    # place and in rows, the epilogue).
    ("avx512_20x130x70_tb_sweep_a_direct",
     request(isa="avx512", m=20, n=130, k=70, lda=73, ldb=75, mr=6, nr=32,
             mc=24, nc=64, kc=16, k_unroll=4, trans_b=True,
             a_layout="direct", bias="columns", relu=True)),
    ("avx512_13x70x37_tb_sweep_a_rows_one_pc",
     request(isa="avx512", m=13, n=70, k=37, mr=14, nr=32, mc=28, nc=64,
             kc=40, trans_b=True, a_layout="rows")),
    # The product transposed (C^T = B^T * A^T, the blocking the kernel's:
    # mr of C's columns, nr of its rows): C's tiles gathered and scattered
    # along its columns, with edges both ways (short columns of C stop
    # the tile's rows, short rows of C mask its lanes), several pc, ic and
    # jc blocks, one vector and two, B^T in place and packed, A
    # transposed (then stored as the kernel's B).
    ("avx512_20x130x70_nt_product_transposed",
     request(isa="avx512", m=20, n=130, k=70, lda=73, ldb=75, ldc=140,
             trans_b=True, mr=6, nr=16, mc=24, nc=32, kc=16, k_unroll=4,
             a_layout="direct", product="transposed")),
    ("avx512_45x37x33_nt_product_transposed_two_vectors",
     request(isa="avx512", m=45, n=37, k=33, trans_b=True, mr=4, nr=32,
             mc=8, nc=32, kc=16, a_layout="direct", product="transposed")),
    ("avx512_33x29x20_tt_product_transposed_packed",
     request(isa="avx512", m=33, n=29, k=20, lda=35, trans_a=True,
             trans_b=True, mr=6, nr=16, mc=12, nc=32, kc=8, k_unroll=2,
             order="embedded", product="transposed")),
    ("avx512_64x96x40_nt_product_transposed_full_tiles",
     request(isa="avx512", m=64, n=96, k=40, trans_b=True, mr=12, nr=32,
             mc=48, nc=64, kc=40, order="embedded", a_layout="direct",
             prefetch_a=512, product="transposed")),
]

# runtime_ld kernels, each run with the leading dimensions given here
# (padded, odd: immediates from the shape would read the wrong elements).
RUNTIME_LD = [
    ("avx512_rt_45x37x33_nt_product_transposed",
     request(isa="avx512", m=45, n=37, k=33, trans_b=True, mr=4, nr=48,
             mc=8, nc=48, kc=16, a_layout="direct", product="transposed",
             runtime_ld=True), (40, 35, 50)),
    ("avx512_rt_50x70x37_edges_nn",
     request(isa="avx512", m=50, n=70, k=37, mr=6, nr=64, mc=12, nc=128,
             kc=16, k_unroll=4, runtime_ld=True), (41, 77, 73)),
    ("avx512_rt_30x40x17_tt_prefetch",
     request(isa="avx512", m=30, n=40, k=17, trans_a=True, trans_b=True,
             mr=6, nr=32, mc=12, nc=64, k_unroll=4, prefetch_a=256,
             prefetch_b=512, runtime_ld=True), (33, 20, 45)),
    ("avx512_rt_40x96x17_b_in_place_ir_jr",
     request(isa="avx512", m=40, n=96, k=17, mr=12, nr=32, mc=24, nc=64,
             kc=8, k_unroll=2, pack_b=False, loop_order="ir-jr",
             prefetch_b=64, runtime_ld=True), (19, 101, 99)),
    ("avx512_rt_61x128x70_fused_b_sweep",
     request(isa="avx512", m=61, n=128, k=70, mr=6, nr=64, mc=24, nc=64,
             kc=32, k_unroll=4, fuse_pack_b=True, runtime_ld=True),
     (75, 131, 129)),
    ("avx512_rt_20x130x70_tb_sweep",
     request(isa="avx512", m=20, n=130, k=70, mr=6, nr=32, mc=24, nc=64,
             kc=16, k_unroll=4, trans_b=True, runtime_ld=True),
     (73, 75, 133)),
    ("avx512_rt_45x70x35_a_rows_embedded",
     request(isa="avx512", m=45, n=70, k=35, mr=14, nr=32, mc=28, nc=64,
             kc=24, a_layout="rows", order="embedded", k_unroll=4,
             runtime_ld=True), (36, 70, 71)),
    ("avx2_rt_13x33x8_edges_ta",
     request(m=13, n=33, k=8, trans_a=True, k_unroll=1, runtime_ld=True),
     (15, 35, 34)),
    ("avx2_rt_23x40x19_bmem_a_rows",
     request(m=23, n=40, k=19, mr=7, nr=16, mc=14, nc=32, kc=8,
             order="bmem", a_layout="rows", runtime_ld=True), (20, 41, 40)),
    # A in place with a run-time lda: rows from two bases (six rows) and
    # three (eight); B packed by the tiles (eight rows: the first sliver
    # copied), in place and in panels; row edges, K remainders, prefetch.
    ("avx512_rt_55x70x37_a_direct_prefetch",
     request(isa="avx512", m=55, n=70, k=37, mr=6, nr=64, mc=24, nc=128,
             kc=16, k_unroll=4, a_layout="direct", prefetch_a=256,
             runtime_ld=True), (45, 77, 73)),
    ("avx512_rt_61x96x70_8x48_a_direct_fused_b",
     request(isa="avx512", m=61, n=96, k=70, mr=8, nr=48, mc=24, nc=96,
             kc=32, k_unroll=4, a_layout="direct", fuse_pack_b=True,
             runtime_ld=True), (75, 101, 99)),
    ("avx512_rt_29x64x35_6x64_a_direct_fused_b",
     request(isa="avx512", m=29, n=64, k=35, mr=6, nr=64, mc=18, nc=64,
             kc=16, k_unroll=2, a_layout="direct", fuse_pack_b=True,
             runtime_ld=True), (36, 70, 71)),
    ("avx2_rt_23x32x19_7x16_bmem_a_direct_b_in_place",
     request(m=23, n=32, k=19, mr=7, nr=16, mc=14, nc=32, kc=8,
             order="bmem", a_layout="direct", pack_b=False,
             runtime_ld=True), (20, 41, 40)),
    # B packed (no register holds its row step): 3 lda in %rdx too, the
    # rows from three bases at rows 0, 3 and 10 (12, 14 and 16 rows; 6 on
    # AVX2), B packed by the tiles in one kc block (no next panel swept:
    # twelve rows, the first sliver copied), the product transposed.
    ("avx512_rt_70x100x37_12x32_a_direct_three_lda",
     request(isa="avx512", m=70, n=100, k=37, mr=12, nr=32, mc=24, nc=64,
             kc=16, k_unroll=4, a_layout="direct", runtime_ld=True),
     (45, 103, 101)),
    ("avx512_rt_45x50x33_16x16_a_direct_three_lda",
     request(isa="avx512", m=45, n=50, k=33, mr=16, nr=16, mc=32, nc=32,
             kc=33, k_unroll=2, a_layout="direct", runtime_ld=True),
     (40, 53, 51)),
    ("avx512_rt_61x70x35_14x32_a_direct_three_lda_epilogue",
     request(isa="avx512", m=61, n=70, k=35, mr=14, nr=32, mc=28, nc=64,
             kc=35, k_unroll=4, a_layout="direct", bias="columns",
             relu=True, runtime_ld=True), (36, 70, 71)),
    ("avx512_rt_61x96x32_12x32_a_direct_three_lda_fused_b",
     request(isa="avx512", m=61, n=96, k=32, mr=12, nr=32, mc=24, nc=64,
             kc=32, k_unroll=4, a_layout="direct", fuse_pack_b=True,
             runtime_ld=True), (75, 101, 99)),
    ("avx512_rt_40x100x37_12x32_product_transposed_three_lda",
     request(isa="avx512", m=40, n=100, k=37, trans_b=True, mr=12, nr=32,
             mc=24, nc=64, kc=37, k_unroll=4, a_layout="direct",
             product="transposed", runtime_ld=True), (40, 45, 103)),
    # B in place swept with a run-time ldb (the walk in %r12, IC's, ldb in
    # %rdx, A's rows from two bases, or three with %rdi): rows longer than
    # N, row edges, two column blocks.
    ("avx512_rt_16x512x100_b_in_place_swept",
     swept_b_in_place(m=16, n=512, k=100, mr=6, nr=64, mc=18, nc=512,
                      kc=16, a_layout="direct", runtime_ld=True),
     (103, 520, 530)),
    ("avx512_rt_8x96x50_b_in_place_swept_two_column_blocks",
     swept_b_in_place(m=8, n=96, k=50, mr=4, nr=32, mc=8, nc=64, kc=8,
                      a_layout="direct", runtime_ld=True), (53, 100, 97)),
    ("avx512_rt_16x512x100_b_in_place_swept_nine_rows",
     swept_b_in_place(m=16, n=512, k=100, mr=9, nr=32, mc=18, nc=512,
                      kc=16, a_layout="direct", runtime_ld=True),
     (101, 515, 513)),
    ("avx512_rt_7x96x50_b_in_place_swept_seven_rows_bias_relu",
     swept_b_in_place(m=7, n=96, k=50, mr=7, nr=32, mc=7, nc=96, kc=16,
                      a_layout="direct", runtime_ld=True, bias="columns",
                      relu=True), (51, 99, 98)),
    # All of the product's rows in one block (B^T's next panel would be
    # swept through %rdx): 3 lda wins, no sweep.
    ("avx512_rt_20x100x40_12x32_product_transposed_one_block",
     request(isa="avx512", m=20, n=100, k=40, trans_b=True, mr=12, nr=32,
             mc=108, nc=32, kc=40, k_unroll=4, a_layout="direct",
             product="transposed", bias="columns", relu=True,
             runtime_ld=True), (43, 45, 103)),
    ("avx2_rt_23x32x19_6x16_a_direct_three_lda",
     request(m=23, n=32, k=19, mr=6, nr=16, mc=12, nc=32, kc=8,
             a_layout="direct", runtime_ld=True), (20, 41, 40)),
]

# dynamic_m kernels (generated for the request's m), each run for the M
# given here: fewer rows, one, more (several mc blocks), with row edges.
DYNAMIC_M = [
    ("avx512_dm_rep64_nn", request(isa="avx512", m=64, n=70, k=37, mr=6,
                                   nr=64, mc=24, nc=128, kc=16, k_unroll=4,
                                   dynamic_m=True), (1, 13, 64, 151)),
    ("avx512_dm_rep32_fused_b_rt_ta",
     request(isa="avx512", m=32, n=128, k=70, mr=6, nr=64, mc=12, nc=64,
             kc=32, k_unroll=4, fuse_pack_b=True, trans_a=True,
             runtime_ld=True, dynamic_m=True), (5, 32, 77)),
    # B in place swept (the m-bucket kernels' form): fewer rows than the
    # representative (one short sliver), as many, and more (several mc
    # blocks, the walk running past the next panel), with a run-time ldb.
    ("avx512_dm_rep8_b_in_place_swept",
     swept_b_in_place(m=8, n=96, k=50, mr=8, nr=32, mc=8, nc=96, kc=16,
                      a_layout="direct", dynamic_m=True), (3, 8, 21)),
    ("avx512_dm_rep8_b_in_place_swept_rt",
     swept_b_in_place(m=8, n=96, k=50, mr=8, nr=32, mc=8, nc=64, kc=16,
                      a_layout="direct", runtime_ld=True, dynamic_m=True),
     (1, 8, 19)),
    ("avx2_dm_rep16_b_in_place_a_rows",
     request(m=16, n=32, k=19, mr=6, nr=16, mc=12, nc=32, kc=8,
             pack_b=False, a_layout="rows", dynamic_m=True), (2, 16, 31)),
    ("avx512_dm_rep16_matrix_vector",
     request(isa="avx512", m=16, n=70, k=37, trans_b=True, pack_b=False,
             dynamic_m=True), (1, 16, 23)),
    # The product transposed: C's rows are its columns, from the header.
    ("avx512_dm_rep32_product_transposed",
     request(isa="avx512", m=32, n=70, k=37, trans_b=True, mr=6, nr=32,
             mc=12, nc=32, kc=16, a_layout="direct", runtime_ld=True,
             dynamic_m=True, product="transposed", bias="columns",
             relu=True), (1, 17, 32, 77)),
    ("avx512_dm_rep32_product_transposed_immediate_ld",
     request(isa="avx512", m=32, n=70, k=37, lda=40, ldb=41, ldc=75,
             trans_b=True, mr=12, nr=32, mc=24, nc=32, kc=16,
             a_layout="direct", dynamic_m=True, product="transposed"),
     (1, 16, 33, 77)),
]

# Run-time N (and M): columns [0, N) from the header, with run-time
# leading dimensions; fewer, as many as and more columns than the
# representative (column edges, several nc blocks), B transposed too, and
# an epilogue whose bias follows the columns.
DYNAMIC_N = [
    ("avx512_dn_rep64", request(isa="avx512", m=37, n=64, k=29, mr=6,
                                nr=32, mc=24, nc=64, kc=16, k_unroll=4,
                                runtime_ld=True, dynamic_n=True),
     ((37, 1), (37, 21), (37, 64), (37, 97))),
    ("avx512_dn_dm_tb_bias_relu",
     request(isa="avx512", m=16, n=48, k=40, mr=6, nr=32, mc=12, nc=64,
             kc=16, trans_b=True, runtime_ld=True, dynamic_m=True,
             dynamic_n=True, bias="columns", relu=True),
     ((1, 1), (5, 16), (16, 48), (25, 131))),
    ("avx2_dn_rep32", request(m=13, n=32, k=19, mr=6, nr=16, mc=12, nc=32,
                              kc=8, runtime_ld=True, dynamic_n=True),
     ((13, 3), (13, 32), (13, 49))),
    # A in place with run-time M and N (lda at run time): row edges of
    # every count, an epilogue.
    ("avx512_dn_dm_8x48_a_direct_bias_relu",
     request(isa="avx512", m=40, n=96, k=37, mr=8, nr=48, mc=24, nc=96,
             kc=16, runtime_ld=True, dynamic_m=True, dynamic_n=True,
             a_layout="direct", bias="columns", relu=True),
     ((1, 1), (7, 50), (40, 96), (61, 145))),
    ("avx512_dn_dm_product_transposed",
     request(isa="avx512", m=24, n=40, k=21, trans_b=True, mr=6, nr=16,
             mc=12, nc=32, kc=8, runtime_ld=True, dynamic_m=True,
             dynamic_n=True, a_layout="direct", product="transposed"),
     ((1, 1), (5, 16), (24, 40), (37, 61))),
]

# Run-time K: from the header at each call (with run-time leading
# dimensions); none, fewer than one kc block, several blocks and a
# remainder of the K unroll; with a run-time N and B transposed too.
DYNAMIC_K = [
    ("avx512_dk_rep32", request(isa="avx512", m=37, n=70, k=32, mr=6,
                                nr=32, mc=24, nc=64, kc=16, k_unroll=4,
                                runtime_ld=True, dynamic_k=True),
     ((37, 70, 0), (37, 70, 1), (37, 70, 11), (37, 70, 32), (37, 70, 53))),
    ("avx2_dk_dn_tb", request(m=13, n=32, k=24, mr=6, nr=16, mc=12, nc=32,
                              kc=8, k_unroll=2, trans_b=True, trans_a=True,
                              runtime_ld=True, dynamic_n=True,
                              dynamic_k=True),
     ((13, 5, 3), (13, 32, 24), (13, 40, 41))),
    ("avx512_dk_a_direct", request(isa="avx512", m=29, n=64, k=32, mr=6,
                                   nr=64, mc=18, nc=64, kc=16, k_unroll=4,
                                   runtime_ld=True, dynamic_k=True,
                                   a_layout="direct"),
     ((29, 64, 0), (29, 64, 1), (29, 64, 19), (29, 64, 45))),
    # An epilogue over a run-time K: applied in the block that ends K (the
    # first too), and at K = 0 to C as it is.
    ("avx2_dk_bias_relu", request(m=13, n=33, k=24, mr=6, nr=16, mc=12,
                                  nc=32, kc=8, k_unroll=2, runtime_ld=True,
                                  dynamic_k=True, bias="columns", relu=True),
     ((13, 33, 0), (13, 33, 1), (13, 33, 5), (13, 33, 24), (13, 33, 41))),
    ("avx512_dk_relu6_trans_a", request(isa="avx512", m=37, n=70, k=32,
                                        mr=6, nr=32, mc=24, nc=64, kc=16,
                                        k_unroll=4, trans_a=True,
                                        runtime_ld=True, dynamic_k=True,
                                        relu=True, relu_max=6.0),
     ((37, 70, 0), (37, 70, 3), (37, 70, 32), (37, 70, 53))),
    ("avx512_dk_product_transposed_bias_rows",
     request(isa="avx512", m=21, n=40, k=24, trans_b=True, mr=6, nr=16,
             mc=12, nc=32, kc=8, runtime_ld=True, dynamic_k=True,
             a_layout="direct", product="transposed", bias="rows",
             relu=True),
     ((21, 40, 0), (21, 40, 5), (21, 40, 24), (21, 40, 41))),
]

# Epilogues: bias per column and relu where the last kc block stores C
# (called twice: the second call's epilogue applies to the first's
# result). Full tiles, row edges, column edges (AVX-512 masks, the AVX2
# spill path), one and several kc blocks, B in place and packed by the
# tiles, run-time leading dimensions and M.
EPILOGUES = [
    ("avx512_bias_relu_edges_multiblock",
     request(isa="avx512", m=50, n=70, k=37, mr=6, nr=64, mc=12, nc=128,
             kc=16, k_unroll=4, bias="columns", relu=True)),
    ("avx512_relu_one_block_14x32_embedded",
     request(isa="avx512", m=45, n=70, k=20, mr=14, nr=32, mc=28, nc=64,
             kc=24, order="embedded", a_layout="rows", relu=True)),
    ("avx512_bias_fused_b_rt_dm",
     request(isa="avx512", m=32, n=128, k=70, mr=6, nr=64, mc=12, nc=64,
             kc=32, fuse_pack_b=True, runtime_ld=True, dynamic_m=True,
             bias="columns", relu=True)),
    ("avx2_bias_relu_edges_spill",
     request(m=13, n=33, k=19, kc=8, mc=12, nc=32, bias="columns",
             relu=True)),
    ("avx2_bias_b_in_place_one_block",
     request(m=23, n=32, k=8, kc=8, pack_b=False, bias="columns")),
    ("avx512_row_bias_relu_edges_multiblock",
     request(isa="avx512", m=50, n=70, k=37, mr=6, nr=64, mc=12, nc=128,
             kc=16, k_unroll=4, bias="rows", relu=True)),
    ("avx2_row_bias_relu_edges_spill",
     request(m=13, n=33, k=19, kc=8, mc=12, nc=32, bias="rows",
             relu=True)),
    # relu6: the bound from data in the body, on vectors, masked columns
    # and the AVX2 spill path.
    ("avx512_bias_relu6_edges_multiblock",
     request(isa="avx512", m=50, n=70, k=37, mr=6, nr=64, mc=12, nc=128,
             kc=16, k_unroll=4, bias="columns", relu=True, relu_max=6.0)),
    ("avx2_relu6_edges_spill",
     request(m=13, n=33, k=19, kc=8, mc=12, nc=32, relu=True,
             relu_max=6.0)),
    # A floor other than 0 (hardtanh's clamp [-2.5, 6]), from data in the
    # body: vectors, masked columns, the AVX2 spill path.
    ("avx512_bias_floor_edges_multiblock",
     request(isa="avx512", m=50, n=70, k=37, mr=6, nr=64, mc=12, nc=128,
             kc=16, k_unroll=4, bias="columns", relu=True, relu_min=-2.5)),
    ("avx2_clamp_edges_spill",
     request(m=13, n=33, k=19, kc=8, mc=12, nc=32, bias="columns",
             relu=True, relu_min=-2.5, relu_max=6.0)),
    # torch-mlir's clamp, the floor from the second operand (a NaN would
    # take it): the same on numbers.
    ("avx2_torch_clamp_edges_spill",
     request(m=13, n=33, k=19, kc=8, mc=12, nc=32, bias="columns",
             relu=True, relu_min=-2.5, relu_max=6.0,
             relu_nan_to_floor=True)),
    ("avx512_torch_relu_edges_multiblock",
     request(isa="avx512", m=50, n=70, k=37, mr=6, nr=64, mc=12, nc=128,
             kc=16, k_unroll=4, relu=True, relu_nan_to_floor=True)),
    # Leaky relu: max(x, 0.25 x) and min(x, 4 x), the slope from data in
    # the body: vectors, masked columns, the AVX2 spill path.
    ("avx2_bias_leaky_edges_spill",
     request(m=13, n=33, k=19, kc=8, mc=12, nc=32, bias="columns",
             leaky_relu=0.25)),
    ("avx2_row_bias_steep_leaky_edges_spill",
     request(m=13, n=33, k=19, kc=8, mc=12, nc=32, bias="rows",
             leaky_relu=4.0)),
    ("avx512_leaky_edges_multiblock",
     request(isa="avx512", m=50, n=70, k=37, mr=6, nr=64, mc=12, nc=128,
             kc=16, k_unroll=4, bias="columns", leaky_relu=0.25)),
    ("avx512_matrix_vector_bias_clamp",
     request(isa="avx512", m=3, n=70, k=37, trans_b=True, pack_b=False,
             bias="columns", relu=True, relu_min=-2.5, relu_max=6.0)),
    ("avx512_matrix_vector_torch_clamp",
     request(isa="avx512", m=5, n=45, k=37, trans_b=True, pack_b=False,
             relu=True, relu_min=-2.5, relu_max=6.0,
             relu_nan_to_floor=True)),
    ("avx512_matrix_vector_steep_leaky_rt",
     request(isa="avx512", m=2, n=45, k=40, trans_b=True, pack_b=False,
             runtime_ld=True, leaky_relu=4.0)),
    # The product transposed: C's column bias is the kernel's along its
    # rows, C's row bias along its columns (masked lanes).
    ("avx512_product_transposed_bias_columns_relu6",
     request(isa="avx512", m=37, n=50, k=37, trans_b=True, mr=6, nr=32,
             mc=12, nc=64, kc=16, a_layout="direct", product="transposed",
             bias="columns", relu=True, relu_max=6.0)),
    ("avx512_product_transposed_bias_rows_leaky",
     request(isa="avx512", m=37, n=50, k=20, trans_b=True, mr=5, nr=48,
             mc=10, nc=48, kc=24, a_layout="direct", product="transposed",
             bias="rows", leaky_relu=0.25)),
    # Smooth activations: vectors, masked columns, the AVX2 spill path,
    # the transposed store (x86.emit_smooth_activation; accuracy in
    # test_smooth_activations).
    ("avx512_bias_gelu_erf_edges_multiblock",
     request(isa="avx512", m=50, n=70, k=3, mr=6, nr=64, mc=12, nc=128,
             kc=16, k_unroll=4, bias="columns", activation="gelu_erf")),
    ("avx512_row_bias_silu_edges",
     request(isa="avx512", m=50, n=70, k=2, mr=6, nr=64, mc=12, nc=128,
             kc=16, bias="rows", activation="silu")),
    ("avx2_bias_gelu_tanh_edges_spill",
     request(m=13, n=33, k=2, kc=8, mc=12, nc=32, bias="columns",
             activation="gelu_tanh")),
    ("avx2_sigmoid_edges_spill",
     request(m=13, n=33, k=1, kc=8, mc=12, nc=32, activation="sigmoid")),
    ("avx2_gelu_erf_edges_spill",
     request(m=13, n=33, k=1, kc=8, mc=12, nc=32, bias="rows",
             activation="gelu_erf")),
    ("avx512_product_transposed_gelu_tanh",
     request(isa="avx512", m=37, n=50, k=2, trans_b=True, mr=6, nr=32,
             mc=12, nc=64, kc=16, a_layout="direct", product="transposed",
             bias="columns", activation="gelu_tanh")),
    ("avx512_product_transposed_sigmoid",
     request(isa="avx512", m=37, n=50, k=1, trans_b=True, mr=5, nr=48,
             mc=10, nc=48, kc=24, a_layout="direct", product="transposed",
             bias="rows", activation="sigmoid")),
]

# Fault variants the harness must catch (it would be useless otherwise).
# write-past-edge only shows when the extra column holds a live
# accumulator: a row edge of >= 2 rows with full-width tiles.
FAULTY = [
    ("avx2_drop_k", request(m=13, n=33, k=8, k_unroll=4, fault="drop-k")),
    ("avx2_write_past_edge", request(m=14, n=32, k=8,
                                     fault="write-past-edge")),
    ("avx512_drop_k", request(isa="avx512", m=20, n=20, k=9, mr=8, nr=16,
                              mc=16, nc=32, k_unroll=2, fault="drop-k")),
    ("avx512_matrix_vector_drop_k",
     request(isa="avx512", m=3, n=20, k=40, trans_b=True, pack_b=False,
             fault="drop-k")),
    ("avx512_matrix_vector_write_past_edge",
     request(isa="avx512", m=3, n=20, k=40, trans_b=True, pack_b=False,
             fault="write-past-edge")),
    ("avx512_product_transposed_drop_k",
     request(isa="avx512", m=20, n=30, k=40, trans_b=True, mr=6, nr=16,
             mc=12, nc=16, kc=16, a_layout="direct", product="transposed",
             fault="drop-k")),
    ("avx512_product_transposed_write_past_edge",
     request(isa="avx512", m=13, n=23, k=40, trans_b=True, mr=6, nr=16,
             mc=12, nc=16, kc=16, a_layout="direct", product="transposed",
             fault="write-past-edge")),
]


def _args(req, text, lds=None, m=None, n=None, k=None):
    """The harness's arguments; `lds` (lda, ldb, ldc) for a runtime_ld
    kernel, whose request has none; `m` the rows for a dynamic_m one, `n`
    the columns for a dynamic_n one, `k` the depth for a dynamic_k one."""
    m, n = m or req["m"], n or req["n"]
    k = req["k"] if k is None else k
    ta, tb = req.get("trans_a", False), req.get("trans_b", False)
    lda = req.get("lda", m if ta else k)
    ldb = req.get("ldb", k if tb else n)
    ldc = req.get("ldc", n)
    if lds:
        lda, ldb, ldc = lds
    ws = int(header(text, "workspace_bytes"))
    header_fields = (int(req.get("runtime_ld", False))
                     | 2 * int(req.get("dynamic_m", False)
                               or req.get("dynamic_n", False))
                     | 4 * int(req.get("dynamic_k", False)))
    if req.get("relu_max") not in (None, 6.0):
        raise ValueError("the harness bounds relu by 6 only")
    if req.get("relu_min") not in (None, -2.5):
        raise ValueError("the harness floors relu at 0 or -2.5 only")
    if req.get("leaky_relu") not in (None, 0.25, 4.0):
        raise ValueError("the harness's leaky relu slopes are 0.25 and 4")
    epilogue = (int(req.get("bias", "none") == "columns")
                | 2 * int(req.get("relu", False))
                | 4 * int(req.get("bias", "none") == "rows")
                | 8 * int(req.get("relu_max") is not None)
                | 16 * int(req.get("relu_min") is not None)
                | 32 * int(req.get("leaky_relu") == 0.25)
                | 64 * int(req.get("leaky_relu") == 4.0)
                | {None: 0, "sigmoid": 128, "silu": 256, "gelu_tanh": 512,
                   "gelu_erf": 1024}[req.get("activation")])
    return [str(x) for x in (m, n, k, lda, ldb, ldc, int(ta), int(tb), ws,
                             header_fields, epilogue)] + prepacked_b_args(text)


class HarnessTest(unittest.TestCase):
    """Compiles HARNESS_C (a class attribute) and the register-checking
    wrapper once per class; run_harness links a kernel with them and runs
    it with the given arguments."""

    HARNESS_C = HARNESS_C

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="qm_exec_")
        cls.harness_o = os.path.join(cls.tmp.name, "harness.o")
        cls.wrapper_o = os.path.join(cls.tmp.name, "wrapper.o")
        src = os.path.join(cls.tmp.name, "harness.c")
        with open(src, "w", encoding="ascii") as f:
            f.write(cls.HARNESS_C)
        subprocess.run([GCC, "-std=c11", "-O1", "-Wall", "-c", src, "-o",
                        cls.harness_o], check=True, capture_output=True,
                       timeout=60)
        proc = assemble(WRAPPER_S, cls.wrapper_o)
        if proc.returncode:
            raise RuntimeError(proc.stderr)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_harness(self, name, req, args_for):
        """(exit status, output) of the harness on req's kernel, called
        with args_for(text)."""
        text = emit(req)
        symbol = header(text, "symbol")
        source = text + f"\t.globl\tqm_kernel\n\t.set\tqm_kernel, {symbol}\n"
        obj = os.path.join(self.tmp.name, name + ".o")
        exe = os.path.join(self.tmp.name, name)
        proc = assemble(source, obj)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        link = subprocess.run(
            [GCC, self.harness_o, self.wrapper_o, obj, "-o", exe, "-lm"],
            capture_output=True, text=True, timeout=60)
        self.assertEqual(link.returncode, 0, link.stderr)
        run = subprocess.run([exe] + [str(a) for a in args_for(text)],
                             capture_output=True, text=True, timeout=30)
        return run.returncode, run.stdout + run.stderr


@unittest.skipUnless(LLVM_MC, "llvm-mc not found: set QIMENG_LLVM_MC or put "
                     "llvm-mc-22 on PATH")
@unittest.skipUnless(GCC, "gcc not found on PATH")
@unittest.skipUnless(cpu_has("avx2") and cpu_has("fma"),
                     "host CPU lacks avx2/fma")
class ExecutionTest(HarnessTest):

    def run_kernel(self, name, req):
        """Returns (exit status, output) of the harness on req's kernel."""
        return self.run_harness(name, req, lambda text: _args(req, text))

    def skip_unless_cpu_runs(self, req):
        if req["isa"] == "avx512" and not cpu_has("avx512f"):
            self.skipTest("host CPU lacks avx512f")

    def test_kernels_match_reference(self):
        for name, req in CORRECT:
            with self.subTest(name=name):
                self.skip_unless_cpu_runs(req)
                status, output = self.run_kernel(name, req)
                self.assertEqual(status, 0, output)
                self.assertEqual(output.strip(), "ok")

    def test_runtime_ld_kernels_match_reference(self):
        for name, req, lds in RUNTIME_LD:
            with self.subTest(name=name):
                self.skip_unless_cpu_runs(req)
                status, output = self.run_harness(
                    name, req, lambda text: _args(req, text, lds))
                self.assertEqual(status, 0, output)
                self.assertEqual(output.strip(), "ok")

    def test_runtime_ld_sweep_is_taken(self):
        """The swept run-time-ldb kernels above do sweep (symbol _sweepb,
        the walk in %r12, IC waiting in its slot), with up to nine rows of
        A in place (%rdi a row base past six)."""
        for name, req, _ in RUNTIME_LD:
            if "swept" in name:
                with self.subTest(name=name):
                    text = emit(req)
                    self.assertIn("_sweepb", header(text, "symbol"))
                    self.assertIn("prefetcht1 (%r12)", text)
                    self.assertIn("movq %r12, ", text)
                    self.assertEqual(req["mr"] > 6,
                                     "leaq (%r13,%r9,2), %rdi" in text)
                    # B's rows two k at a time in the unrolled K loop:
                    # the second at (%rsi,%rdx), then %rsi on by two.
                    if req.get("k_unroll", 4) % 2 == 0:
                        self.assertIn("0(%rsi,%rdx), %zmm", text)
                        self.assertIn("leaq (%rsi,%rdx,2), %rsi", text)

    def test_dynamic_m_sweep_is_taken(self):
        """The swept run-time-M kernels above do sweep."""
        for name, req, _ in DYNAMIC_M:
            if "swept" in name:
                with self.subTest(name=name):
                    text = emit(req)
                    self.assertIn("_sweepb", header(text, "symbol"))
                    self.assertIn("prefetcht1", text)

    def test_dynamic_m_kernels_match_reference(self):
        for name, req, ms in DYNAMIC_M:
            for m in ms:
                with self.subTest(name=name, m=m):
                    self.skip_unless_cpu_runs(req)
                    lds = None
                    if req.get("runtime_ld"):
                        # A transposed A is K x M: lda follows M.
                        lds = (m + 3 if req.get("trans_a") else req["k"] + 3,
                               req["n"] + 1, req["n"] + 2)
                    status, output = self.run_harness(
                        f"{name}_m{m}", req,
                        lambda text: _args(req, text, lds, m))
                    self.assertEqual(status, 0, output)
                    self.assertEqual(output.strip(), "ok")

    def test_dynamic_n_kernels_match_reference(self):
        for name, req, sizes in DYNAMIC_N:
            for m, n in sizes:
                with self.subTest(name=name, m=m, n=n):
                    self.skip_unless_cpu_runs(req)
                    k = req["k"]
                    lds = (k + 3, (k if req.get("trans_b") else n) + 1,
                           n + 2)
                    status, output = self.run_harness(
                        f"{name}_m{m}_n{n}", req,
                        lambda text: _args(req, text, lds, m, n))
                    self.assertEqual(status, 0, output)
                    self.assertEqual(output.strip(), "ok")

    def test_dynamic_k_kernels_match_reference(self):
        for name, req, sizes in DYNAMIC_K:
            for m, n, k in sizes:
                with self.subTest(name=name, m=m, n=n, k=k):
                    self.skip_unless_cpu_runs(req)
                    ta, tb = req.get("trans_a"), req.get("trans_b")
                    lds = ((m if ta else k) + 3, (k if tb else n) + 1, n + 2)
                    status, output = self.run_harness(
                        f"{name}_m{m}_n{n}_k{k}", req,
                        lambda text: _args(req, text, lds, m, n, k))
                    self.assertEqual(status, 0, output)
                    self.assertEqual(output.strip(), "ok")

    def test_epilogue_kernels_match_reference(self):
        for name, req in EPILOGUES:
            with self.subTest(name=name):
                self.skip_unless_cpu_runs(req)
                lds = (req["k"] + 3, req["n"] + 1, req["n"] + 2) \
                    if req.get("runtime_ld") else None
                status, output = self.run_harness(
                    name, req, lambda text: _args(req, text, lds))
                self.assertEqual(status, 0, output)
                self.assertEqual(output.strip(), "ok")

    def test_harness_catches_a_missing_epilogue(self):
        """The kernel without its relu, checked as one with it."""
        _, req = EPILOGUES[0]
        self.skip_unless_cpu_runs(req)
        plain = dict(req)
        del plain["relu"]
        status, output = self.run_harness(
            "missing_relu", plain,
            lambda text: _args(dict(plain, relu=True), text))
        self.assertEqual(status, 1, output)

    def test_harness_catches_a_missing_bound(self):
        """The relu6 kernel without its bound, checked as one with it."""
        req = dict(dict(EPILOGUES)["avx2_relu6_edges_spill"])
        self.skip_unless_cpu_runs(req)
        del req["relu_max"]
        status, output = self.run_harness(
            "missing_bound", req,
            lambda text: _args(dict(req, relu_max=6.0), text))
        self.assertEqual(status, 1, output)

    def test_harness_catches_a_wrong_floor(self):
        """The clamp kernel with relu's floor 0, checked as one whose floor
        is -2.5."""
        req = dict(dict(EPILOGUES)["avx2_clamp_edges_spill"])
        self.skip_unless_cpu_runs(req)
        del req["relu_min"]
        status, output = self.run_harness(
            "floor_zero", req,
            lambda text: _args(dict(req, relu_min=-2.5), text))
        self.assertEqual(status, 1, output)

    def test_harness_catches_a_wrong_slope(self):
        """The leaky kernel of slope 0.25 checked as one of slope 4, and
        as relu."""
        req = dict(EPILOGUES)["avx2_bias_leaky_edges_spill"]
        self.skip_unless_cpu_runs(req)
        for name, as_if in (("slope_4", dict(req, leaky_relu=4.0)),
                            ("as_relu", dict(req, leaky_relu=None,
                                             relu=True))):
            with self.subTest(name=name):
                status, output = self.run_harness(
                    name, req, lambda text, as_if=as_if: _args(as_if, text))
                self.assertEqual(status, 1, output)

    def test_harness_catches_faults(self):
        for name, req in FAULTY:
            with self.subTest(name=name):
                self.skip_unless_cpu_runs(req)
                status, output = self.run_kernel(name, req)
                self.assertEqual(status, 1, output)
                self.assertIn("bad elements", output)


@runs_kernels("avx2", "fma")
class X86EpilogueSpecialsTest(unittest.TestCase):
    """The x86 epilogues, in whole kernels, on the special values of
    tests/specials.py: relu and its clamps keep a NaN (the accumulator the
    second operand of VMAXPS and VMINPS), torch-mlir's clamp makes it the
    floor (the floor second), leaky relu keeps it; -0, infinities,
    denormals and the largest finite values as arith.maximumf and minimumf
    have them. AVX2 on full tiles and in the spill loop of a tile short of
    columns (a 24-column block), and AVX-512 where the host has it."""

    def test_special_values_through_each_epilogue(self):
        gxx = shutil.which("g++")
        if not gxx:
            self.skipTest("no g++ on PATH")
        for name, isa, nr in (("avx2", "avx2", 16),
                              ("avx2_spill", "avx2", 24),
                              ("avx512", "avx512", 16)):
            with self.subTest(name=name):
                if isa == "avx512" and not cpu_has("avx512f"):
                    self.skipTest("host CPU lacks avx512f")
                specials.check_kernels(
                    self,
                    lambda isa=isa, nr=nr, **f: request(isa=isa, nr=nr,
                                                        nc=48, **f),
                    assemble,
                    lambda sources, exe: subprocess.run(
                        [gxx, "-O1", *sources, "-o", exe], check=True,
                        timeout=300),
                    lambda exe: subprocess.run([exe], capture_output=True,
                                               text=True, timeout=60))


if __name__ == "__main__":
    unittest.main()

/* Calls the module's C interface `bmm(A, B) -> C` (tensors bufferized at
   the function boundary: strided memrefs in, a fresh memref out) with A and
   B of leading dimensions LDA and LDB, and compares C = A * B per batch with
   a reference computed here. Small integers: bit for bit. */
#include <stdio.h>
#include "memref.h"

void _mlir_ciface_bmm(Memref3D *c, Memref3D *a, Memref3D *b);

static float A[BATCH * M * LDA], B[BATCH * K * LDB];

int main(void) {
  for (long i = 0; i < BATCH * M * LDA; ++i)
    A[i] = (float)((i * 7 + 1) % 9 - 4);
  for (long i = 0; i < BATCH * K * LDB; ++i)
    B[i] = (float)((i * 5 + 2) % 9 - 4);
  Memref3D a = {A, A, 0, {BATCH, M, K}, {M * LDA, LDA, 1}};
  Memref3D b = {B, B, 0, {BATCH, K, N}, {K * LDB, LDB, 1}};
  Memref3D c;
  _mlir_ciface_bmm(&c, &a, &b);
  for (long p = 0; p < BATCH; ++p)
    for (long i = 0; i < M; ++i)
      for (long j = 0; j < N; ++j) {
        double ref = 0;
        for (long k = 0; k < K; ++k)
          ref += (double)A[p * M * LDA + i * LDA + k] *
                 B[p * K * LDB + k * LDB + j];
        float got = c.aligned[c.offset + p * c.strides[0] +
                              i * c.strides[1] + j * c.strides[2]];
        if (got != (float)ref) {
          printf("FAIL: C(%ld,%ld,%ld) = %g, expected %g\n", p, i, j, got,
                 ref);
          return 1;
        }
      }
  printf("PASS %dx%dx%dx%d\n", BATCH, M, N, K);
  return 0;
}

/* Calls the module's C interface `gemm(A, B, C)` on strided memrefs (the
   leading dimensions LDA, LDB, LDC padded past the rows) and compares all
   of C, gaps included, with a reference computed here: C0 + A * B, or A * B
   with -DOVERWRITE (the module zero-fills C first). Small integers make
   every sum exact, so the comparison is bit for bit. Prints PASS or the
   first mismatch. */
#include <stdio.h>
#include "memref.h"

void _mlir_ciface_gemm(Memref2D *a, Memref2D *b, Memref2D *c);

static float A[M * LDA], B[K * LDB], C[M * LDC];
static double ref[M * LDC];

int main(void) {
  for (long i = 0; i < M * LDA; ++i)
    A[i] = (float)((i * 7 + 1) % 9 - 4);
  for (long i = 0; i < K * LDB; ++i)
    B[i] = (float)((i * 5 + 2) % 9 - 4);
  for (long i = 0; i < M * LDC; ++i)
    C[i] = (float)((i * 3 + 4) % 9 - 4);
  for (long i = 0; i < M * LDC; ++i)
    ref[i] = C[i];
  for (long i = 0; i < M; ++i)
    for (long j = 0; j < N; ++j) {
      double sum = 0;
      for (long k = 0; k < K; ++k)
        sum += (double)A[i * LDA + k] * B[k * LDB + j];
#ifdef OVERWRITE
      ref[i * LDC + j] = sum;
#else
      ref[i * LDC + j] += sum;
#endif
    }
  Memref2D a = {A, A, 0, {M, K}, {LDA, 1}};
  Memref2D b = {B, B, 0, {K, N}, {LDB, 1}};
  Memref2D c = {C, C, 0, {M, N}, {LDC, 1}};
  _mlir_ciface_gemm(&a, &b, &c);
  for (long i = 0; i < M * LDC; ++i)
    if (C[i] != (float)ref[i]) {
      printf("FAIL: C[%ld] (row %ld, column %ld) = %g, expected %g\n", i,
             i / LDC, i % LDC, C[i], ref[i]);
      return 1;
    }
  printf("PASS %dx%dx%d\n", M, N, K);
  return 0;
}

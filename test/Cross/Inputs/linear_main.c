/* Calls the module's C interfaces `linear(X, W, bias) -> Y` (M rows) and
   `linear_dyn` (any number of rows: 1, 5, M and MAX_ROWS, 29 unless
   defined) (tensors
   bufferized at the function boundary: strided memrefs in, a fresh memref
   out), torch's linear layer with relu: Y = relu(X * W^T + bias), X rows x
   K with leading dimension LDX, the weight W stored N x K (output features
   by input features) with leading dimension LDW. Compares Y with a
   reference computed here; small integers make every sum exact, so the
   comparison is bit for bit. Prints PASS or the first mismatch. */
#include <stdio.h>
#include "memref.h"

void _mlir_ciface_linear(Memref2D *y, Memref2D *x, Memref2D *w, Memref1D *b);
void _mlir_ciface_linear_dyn(Memref2D *y, Memref2D *x, Memref2D *w,
                             Memref1D *b);

#ifndef MAX_ROWS
#define MAX_ROWS 29
#endif
static float X[MAX_ROWS * LDX], W[N * LDW], Bias[N];

/* 0 when Y (rows x N) is relu(X * W^T + bias), else 1 after a message. */
static int check(const char *name, const Memref2D *y, long rows) {
  if (y->sizes[0] != rows || y->sizes[1] != N) {
    printf("FAIL: %s gave %ldx%ld\n", name, y->sizes[0], y->sizes[1]);
    return 1;
  }
  for (long i = 0; i < rows; ++i)
    for (long j = 0; j < N; ++j) {
      double ref = Bias[j];
      for (long k = 0; k < K; ++k)
        ref += (double)X[i * LDX + k] * W[j * LDW + k];
      if (ref < 0)
        ref = 0;
      float got =
          y->aligned[y->offset + i * y->strides[0] + j * y->strides[1]];
      if (got != (float)ref) {
        printf("FAIL: %s with %ld rows: Y(%ld,%ld) = %g, expected %g\n",
               name, rows, i, j, got, ref);
        return 1;
      }
    }
  return 0;
}

int main(void) {
  for (long i = 0; i < MAX_ROWS * LDX; ++i)
    X[i] = (float)((i * 7 + 1) % 9 - 4);
  for (long i = 0; i < N * LDW; ++i)
    W[i] = (float)((i * 5 + 2) % 9 - 4);
  for (long j = 0; j < N; ++j)
    Bias[j] = (float)(j % 7 - 3);
  Memref2D w = {W, W, 0, {N, K}, {LDW, 1}};
  Memref1D b = {Bias, Bias, 0, {N}, {1}};
  Memref2D x = {X, X, 0, {M, K}, {LDX, 1}};
  Memref2D y;
  _mlir_ciface_linear(&y, &x, &w, &b);
  if (check("linear", &y, M))
    return 1;
  const long rows[] = {1, 5, M, MAX_ROWS};
  for (int r = 0; r < 4; ++r) {
    Memref2D xr = {X, X, 0, {rows[r], K}, {LDX, 1}};
    _mlir_ciface_linear_dyn(&y, &xr, &w, &b);
    if (check("linear_dyn", &y, rows[r]))
      return 1;
  }
  printf("PASS %dx%dx%d and 1, 5, %d, %d rows\n", M, N, K, M, MAX_ROWS);
  return 0;
}

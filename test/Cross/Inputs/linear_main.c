/* Calls the module's C interface `linear(X, W, bias) -> Y` (tensors
   bufferized at the function boundary: strided memrefs in, a fresh memref
   out) as torch's linear layer with relu: Y = relu(X * W^T + bias), X M x K
   with leading dimension LDX, the weight W stored N x K (output features
   by input features) with leading dimension LDW. Compares Y with a
   reference computed here; small integers make every sum exact, so the
   comparison is bit for bit. Prints PASS or the first mismatch. */
#include <stdio.h>

typedef struct {
  float *allocated, *aligned;
  long offset, sizes[2], strides[2];
} Memref2D;

typedef struct {
  float *allocated, *aligned;
  long offset, sizes[1], strides[1];
} Memref1D;

void _mlir_ciface_linear(Memref2D *y, Memref2D *x, Memref2D *w, Memref1D *b);

static float X[M * LDX], W[N * LDW], Bias[N];

int main(void) {
  for (long i = 0; i < M * LDX; ++i)
    X[i] = (float)((i * 7 + 1) % 9 - 4);
  for (long i = 0; i < N * LDW; ++i)
    W[i] = (float)((i * 5 + 2) % 9 - 4);
  for (long j = 0; j < N; ++j)
    Bias[j] = (float)(j % 7 - 3);
  Memref2D x = {X, X, 0, {M, K}, {LDX, 1}};
  Memref2D w = {W, W, 0, {N, K}, {LDW, 1}};
  Memref1D b = {Bias, Bias, 0, {N}, {1}};
  Memref2D y;
  _mlir_ciface_linear(&y, &x, &w, &b);
  for (long i = 0; i < M; ++i)
    for (long j = 0; j < N; ++j) {
      double ref = Bias[j];
      for (long k = 0; k < K; ++k)
        ref += (double)X[i * LDX + k] * W[j * LDW + k];
      if (ref < 0)
        ref = 0;
      float got = y.aligned[y.offset + i * y.strides[0] + j * y.strides[1]];
      if (got != (float)ref) {
        printf("FAIL: Y(%ld,%ld) = %g, expected %g\n", i, j, got, ref);
        return 1;
      }
    }
  printf("PASS %dx%dx%d\n", M, N, K);
  return 0;
}

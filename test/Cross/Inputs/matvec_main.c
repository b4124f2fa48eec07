/* Calls the module's C interfaces for matrix-vector products (tensors
   bufferized at the function boundary: strided memrefs in, a fresh memref
   out): `mv(A, x, b)` = relu(A x + b) with A 37 x 70 (aten.mv, a bias and
   relu), `vm(x, W)` = x W with W 70 x 37 as stored (jax's x @ W), and
   `mv_dyn(A, x)` = A x for 1, 5, 37 and 200 rows of A (aten.mv over a
   run-time number of rows). A's rows are LDA apart (LDA >= 70, a view of
   a wider buffer). Small integers make every sum exact: the comparison
   with the reference computed here is bit for bit. Prints PASS or the
   first mismatch. */
#include <stdio.h>
#include "memref.h"

#define K 70
#define N 37
#define MAX_ROWS 200
#ifndef LDA
#define LDA 72
#endif

void _mlir_ciface_mv(Memref1D *y, Memref2D *a, Memref1D *x, Memref1D *b);
void _mlir_ciface_vm(Memref1D *y, Memref1D *x, Memref2D *w);
void _mlir_ciface_mv_dyn(Memref1D *y, Memref2D *a, Memref1D *x);

static float A[MAX_ROWS * LDA], X[K], B[N], W[K * N];

static int check(const char *name, const Memref1D *y, long n,
                 double (*ref)(long)) {
  if (y->sizes[0] != n) {
    printf("FAIL: %s gave %ld elements, expected %ld\n", name, y->sizes[0], n);
    return 1;
  }
  for (long j = 0; j < n; ++j) {
    float got = y->aligned[y->offset + j * y->strides[0]];
    if (got != (float)ref(j)) {
      printf("FAIL: %s: y(%ld) = %g, expected %g\n", name, j, got, ref(j));
      return 1;
    }
  }
  return 0;
}

static double rowDot(long i) {
  double s = 0;
  for (long k = 0; k < K; ++k)
    s += (double)A[i * LDA + k] * X[k];
  return s;
}
static double mvRef(long i) {
  double s = rowDot(i) + B[i];
  return s < 0 ? 0 : s;
}
static double vmRef(long j) {
  double s = 0;
  for (long k = 0; k < K; ++k)
    s += (double)X[k] * W[k * N + j];
  return s;
}

int main(void) {
  for (long i = 0; i < MAX_ROWS * LDA; ++i)
    A[i] = (float)((i * 7 + 1) % 9 - 4);
  for (long k = 0; k < K; ++k)
    X[k] = (float)((k * 5 + 2) % 7 - 3);
  for (long j = 0; j < N; ++j)
    B[j] = (float)((j * 3) % 11 - 5);
  for (long i = 0; i < K * N; ++i)
    W[i] = (float)((i * 11 + 3) % 9 - 4);
  Memref1D x = {X, X, 0, {K}, {1}}, b = {B, B, 0, {N}, {1}}, y;
  Memref2D a = {A, A, 0, {N, K}, {LDA, 1}};
  Memref2D w = {W, W, 0, {K, N}, {N, 1}};
  _mlir_ciface_mv(&y, &a, &x, &b);
  if (check("mv", &y, N, mvRef))
    return 1;
  _mlir_ciface_vm(&y, &x, &w);
  if (check("vm", &y, N, vmRef))
    return 1;
  long rows[] = {1, 5, 37, MAX_ROWS};
  for (int r = 0; r < 4; ++r) {
    a.sizes[0] = rows[r];
    _mlir_ciface_mv_dyn(&y, &a, &x);
    if (check("mv_dyn", &y, rows[r], rowDot))
      return 1;
  }
  printf("PASS\n");
  return 0;
}

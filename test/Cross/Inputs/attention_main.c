/* Calls the module's C interfaces `attn_scores(Q, K) -> S` and
   `attn_v(P, V) -> O` (tensors bufferized at the function boundary:
   strided memrefs in, a fresh memref out): attention's scores Q * K^T
   (Q and K S x E, the scores S x S) and its probabilities times the
   values over a sequence of any length S, O = P * V with P S x S and V
   S x D: the scores' M and N and the second product's M and K are S,
   known only at the call. Run at S = 1, 5, 24 and 61; small integers make
   every sum exact, so both results are compared bit for bit with
   references computed here. Prints PASS or the first
   mismatch. */
#include <stdio.h>
#include "memref.h"

void _mlir_ciface_attn_scores(Memref2D *s, Memref2D *q, Memref2D *k);
void _mlir_ciface_attn_v(Memref2D *o, Memref2D *p, Memref2D *v);

#define D 21
#define E 16
#define MAX_S 61
static float P[MAX_S * MAX_S], V[MAX_S * D], Q[MAX_S * E], K[MAX_S * E];

/* 0 when `c` (rows x cols) is A * B, A rows x depth (row step lda), B's
   element (k, j) at b[k * bk + j * bj]; else 1 after a message. */
static int check(const char *name, long s, const Memref2D *c, long rows,
                 long cols, const float *a, long lda, const float *b,
                 long bk, long bj, long depth) {
  if (c->sizes[0] != rows || c->sizes[1] != cols) {
    printf("FAIL: %s gave %ldx%ld for S = %ld\n", name, c->sizes[0],
           c->sizes[1], s);
    return 1;
  }
  for (long i = 0; i < rows; ++i)
    for (long j = 0; j < cols; ++j) {
      double ref = 0;
      for (long k = 0; k < depth; ++k)
        ref += (double)a[i * lda + k] * b[k * bk + j * bj];
      float got = c->aligned[c->offset + i * c->strides[0] + j * c->strides[1]];
      if (got != (float)ref) {
        printf("FAIL: %s, S = %ld: (%ld,%ld) = %g, expected %g\n", name, s,
               i, j, got, ref);
        return 1;
      }
    }
  return 0;
}

int main(void) {
  const long lengths[] = {1, 5, 24, MAX_S};
  for (int t = 0; t < 4; ++t) {
    long s = lengths[t];
    for (long i = 0; i < s * s; ++i)
      P[i] = (float)((i * 7 + t) % 9 - 4);
    for (long i = 0; i < s * D; ++i)
      V[i] = (float)((i * 5 + 2 * t) % 9 - 4);
    for (long i = 0; i < s * E; ++i) {
      Q[i] = (float)((i * 3 + t) % 7 - 3);
      K[i] = (float)((i * 5 + 1) % 7 - 3);
    }
    Memref2D q = {Q, Q, 0, {s, E}, {E, 1}};
    Memref2D kk = {K, K, 0, {s, E}, {E, 1}};
    Memref2D scores;
    _mlir_ciface_attn_scores(&scores, &q, &kk);
    /* K^T's element (e, j) is K's (j, e). */
    if (check("attn_scores", s, &scores, s, s, Q, E, K, 1, E, E))
      return 1;
    Memref2D p = {P, P, 0, {s, s}, {s, 1}};
    Memref2D v = {V, V, 0, {s, D}, {D, 1}};
    Memref2D o;
    _mlir_ciface_attn_v(&o, &p, &v);
    if (check("attn_v", s, &o, s, D, P, s, V, D, 1, s))
      return 1;
  }
  printf("PASS S = 1, 5, 24, %d\n", MAX_S);
  return 0;
}

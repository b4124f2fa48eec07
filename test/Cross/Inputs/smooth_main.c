/* Calls the C interfaces of smooth-activations.mlir (tensors bufferized
   at the function boundary: memrefs in, a fresh memref out) on fixed
   inputs and prints each result's elements, one a line ("%.9g"), under a
   line naming the function and its shape. The same driver links the
   module compiled with and without the pass; compare_close.py compares
   the two outputs. X 13 x 70, the weights 37 x 70 (transposed: torch) or
   70 x 37, the bias 37 with a NaN in column 3; the convolution's input
   1x9x9x5 and filter 3x3x5x12 (HWCF), bias 12. */
#include <stdio.h>
#include "memref.h"

void _mlir_ciface_torch_linear_gelu(Memref2D *y, Memref2D *x, Memref2D *w,
                                    Memref1D *b);
void _mlir_ciface_jax_dense_gelu(Memref2D *y, Memref2D *x, Memref2D *w,
                                 Memref1D *b);
void _mlir_ciface_torch_silu(Memref2D *y, Memref2D *x, Memref2D *w,
                             Memref1D *b);
void _mlir_ciface_tosa_sigmoid(Memref2D *y, Memref2D *x, Memref2D *w);
void _mlir_ciface_conv_bias_silu(Memref4D *y, Memref4D *x, Memref4D *w,
                                 Memref1D *b);
void _mlir_ciface_conv_bias_hardswish(Memref4D *y, Memref4D *x, Memref4D *w,
                                      Memref1D *b);
void _mlir_ciface_classifier_head(Memref2D *y, Memref2D *x, Memref2D *w);
void _mlir_ciface_bert_pooler_tanh(Memref2D *y, Memref2D *x, Memref2D *w,
                                   Memref1D *b);
void _mlir_ciface_yolov4_conv_mish(Memref4D *y, Memref4D *x, Memref4D *w,
                                   Memref1D *b);
void _mlir_ciface_conv_bias_hardsigmoid(Memref4D *y, Memref4D *x,
                                        Memref4D *w, Memref1D *b);
void _mlir_ciface_jax_dense_hard_sigmoid(Memref2D *y, Memref2D *x,
                                         Memref2D *w, Memref1D *b);

enum { M = 13, K = 70, N = 37 };
static float X[M * K], W[N * K], Bias[N];
static float CX[9 * 9 * 5], CW[3 * 3 * 5 * 12], CBias[12];

/* ((i * step) mod 11 - 5) / scale: the products' sums between about -6
   and 6, where the activations curve. */
static void fill(float *v, long n, long step, float scale) {
  for (long i = 0; i < n; ++i)
    v[i] = (float)((i * step) % 11 - 5) / scale;
}

static void print2(const char *name, const Memref2D *y) {
  printf("%s %ldx%ld\n", name, y->sizes[0], y->sizes[1]);
  for (long i = 0; i < y->sizes[0]; ++i)
    for (long j = 0; j < y->sizes[1]; ++j)
      printf("%.9g\n", y->aligned[y->offset + i * y->strides[0] +
                                  j * y->strides[1]]);
}

static void print4(const char *name, const Memref4D *y) {
  printf("%s %ldx%ldx%ldx%ld\n", name, y->sizes[0], y->sizes[1],
         y->sizes[2], y->sizes[3]);
  for (long a = 0; a < y->sizes[0]; ++a)
    for (long b = 0; b < y->sizes[1]; ++b)
      for (long c = 0; c < y->sizes[2]; ++c)
        for (long d = 0; d < y->sizes[3]; ++d)
          printf("%.9g\n",
                 y->aligned[y->offset + a * y->strides[0] +
                            b * y->strides[1] + c * y->strides[2] +
                            d * y->strides[3]]);
}

int main(void) {
  fill(X, M * K, 7, 6.0f);
  fill(W, N * K, 3, 6.0f);
  fill(Bias, N, 5, 4.0f);
  volatile float zero = 0.0f;
  Bias[3] = zero / zero;
  fill(CX, 9 * 9 * 5, 7, 4.0f);
  fill(CW, 3 * 3 * 5 * 12, 3, 6.0f);
  fill(CBias, 12, 5, 4.0f);
  Memref2D x = {X, X, 0, {M, K}, {K, 1}};
  Memref2D wt = {W, W, 0, {N, K}, {K, 1}};
  Memref2D w = {W, W, 0, {K, N}, {N, 1}};
  Memref2D w1 = {W, W, 0, {K, 1}, {N, 1}};
  Memref1D b = {Bias, Bias, 0, {N}, {1}};
  Memref4D cx = {CX, CX, 0, {1, 9, 9, 5}, {405, 45, 5, 1}};
  Memref4D cw = {CW, CW, 0, {3, 3, 5, 12}, {180, 60, 12, 1}};
  Memref1D cb = {CBias, CBias, 0, {12}, {1}};
  Memref2D y;
  Memref4D y4;
  _mlir_ciface_torch_linear_gelu(&y, &x, &wt, &b);
  print2("torch_linear_gelu", &y);
  _mlir_ciface_jax_dense_gelu(&y, &x, &w, &b);
  print2("jax_dense_gelu", &y);
  _mlir_ciface_torch_silu(&y, &x, &w, &b);
  print2("torch_silu", &y);
  _mlir_ciface_tosa_sigmoid(&y, &x, &w);
  print2("tosa_sigmoid", &y);
  _mlir_ciface_conv_bias_silu(&y4, &cx, &cw, &cb);
  print4("conv_bias_silu", &y4);
  _mlir_ciface_conv_bias_hardswish(&y4, &cx, &cw, &cb);
  print4("conv_bias_hardswish", &y4);
  _mlir_ciface_classifier_head(&y, &x, &w1);
  print2("classifier_head", &y);
  _mlir_ciface_bert_pooler_tanh(&y, &x, &w, &b);
  print2("bert_pooler_tanh", &y);
  _mlir_ciface_yolov4_conv_mish(&y4, &cx, &cw, &cb);
  print4("yolov4_conv_mish", &y4);
  _mlir_ciface_conv_bias_hardsigmoid(&y4, &cx, &cw, &cb);
  print4("conv_bias_hardsigmoid", &y4);
  _mlir_ciface_jax_dense_hard_sigmoid(&y, &x, &w, &b);
  print2("jax_dense_hard_sigmoid", &y);
  return 0;
}

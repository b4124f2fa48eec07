/* Calls the module's C interfaces (tensors bufferized at the function
   boundary: dense memrefs in, fresh memrefs out):
     conv_fhwc(X 1x9x9x5, W 7x3x3x5, bias 7) -> Y 1x4x4x7: TOSA's form, X
       padded by 1 on each side, stride 2, dilation 2, the bias as the
       output's initial value;
     conv_nchw(X 2x3x8x8, W 8x3x3x3, bias 8) -> Y 2x8x8x8: torch's, X padded
       by 1 on each side, the bias as the output's initial value;
     conv_hwcf(X 2x8x8x3, W 3x3x3x6) -> Y 2x6x6x6: StableHLO's, a zero fill.
   Compares each with a reference computed here; small integers make every
   sum exact, so the comparison is bit for bit. Prints PASS, or the first
   mismatch of each function that has one.

   tensor.pad bufferizes to a copy into a strided view, which the stock
   lowering turns into a call to memrefCopy from MLIR's C runner utilities;
   a static cross link does not have that library, so the strided copy it
   performs is here. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "memref.h"

typedef struct {
  int64_t rank;
  void *descriptor; /* allocated, aligned, offset, sizes[rank], strides */
} UnrankedMemref;

void memrefCopy(int64_t elemSize, UnrankedMemref *src, UnrankedMemref *dst) {
  int64_t rank = src->rank;
  char *s = ((char **)src->descriptor)[1], *d = ((char **)dst->descriptor)[1];
  const int64_t *sd = (const int64_t *)((char **)src->descriptor + 2);
  const int64_t *dd = (const int64_t *)((char **)dst->descriptor + 2);
  int64_t index[8] = {0}, count = 1;
  for (int64_t r = 0; r < rank; ++r)
    count *= sd[1 + r];
  for (int64_t e = 0; e < count; ++e) {
    int64_t so = sd[0], doff = dd[0];
    for (int64_t r = 0; r < rank; ++r) {
      so += index[r] * sd[1 + rank + r];
      doff += index[r] * dd[1 + rank + r];
    }
    memcpy(d + doff * elemSize, s + so * elemSize, (size_t)elemSize);
    for (int64_t r = rank - 1; r >= 0 && ++index[r] == sd[1 + r]; --r)
      index[r] = 0;
  }
}

void _mlir_ciface_conv_fhwc(Memref4D *y, Memref4D *x, Memref4D *w,
                            Memref1D *b);
void _mlir_ciface_conv_nchw(Memref4D *y, Memref4D *x, Memref4D *w,
                            Memref1D *b);
void _mlir_ciface_conv_hwcf(Memref4D *y, Memref4D *x, Memref4D *w);

static float X1[9 * 9 * 5], W1[7 * 3 * 3 * 5], B1[7];
static float X3[2 * 3 * 8 * 8], W3[8 * 3 * 3 * 3], B3[8];
static float X2[2 * 8 * 8 * 3], W2[3 * 3 * 3 * 6];

static void fill(float *p, long n, long mul, long add) {
  for (long i = 0; i < n; ++i)
    p[i] = (float)((i * mul + add) % 9 - 4);
}

static float at(const Memref4D *m, long a, long b, long c, long d) {
  return m->aligned[m->offset + a * m->strides[0] + b * m->strides[1] +
                    c * m->strides[2] + d * m->strides[3]];
}

int main(void) {
  int failures = 0;
  fill(X1, 9 * 9 * 5, 7, 1);
  fill(W1, 7 * 3 * 3 * 5, 5, 2);
  fill(B1, 7, 3, 4);
  fill(X2, 2 * 8 * 8 * 3, 7, 3);
  fill(W2, 3 * 3 * 3 * 6, 5, 1);
  fill(X3, 2 * 3 * 8 * 8, 7, 2);
  fill(W3, 8 * 3 * 3 * 3, 5, 3);
  fill(B3, 8, 2, 1);
  Memref4D x1 = {X1, X1, 0, {1, 9, 9, 5}, {405, 45, 5, 1}};
  Memref4D w1 = {W1, W1, 0, {7, 3, 3, 5}, {45, 15, 5, 1}};
  Memref1D b1 = {B1, B1, 0, {7}, {1}};
  Memref4D x2 = {X2, X2, 0, {2, 8, 8, 3}, {192, 24, 3, 1}};
  Memref4D w2 = {W2, W2, 0, {3, 3, 3, 6}, {54, 18, 6, 1}};
  Memref4D x3 = {X3, X3, 0, {2, 3, 8, 8}, {192, 64, 8, 1}};
  Memref4D w3 = {W3, W3, 0, {8, 3, 3, 3}, {27, 9, 3, 1}};
  Memref1D b3 = {B3, B3, 0, {8}, {1}};
  Memref4D y1, y2, y3;
  _mlir_ciface_conv_fhwc(&y1, &x1, &w1, &b1);
  _mlir_ciface_conv_nchw(&y3, &x3, &w3, &b3);
  _mlir_ciface_conv_hwcf(&y2, &x2, &w2);
  for (long oy = 0; oy < 4; ++oy)
    for (long ox = 0; ox < 4; ++ox)
      for (long f = 0; f < 7; ++f) {
        double ref = B1[f];
        for (long i = 0; i < 3; ++i)
          for (long j = 0; j < 3; ++j)
            for (long c = 0; c < 5; ++c) {
              long y = oy * 2 + i * 2 - 1, x = ox * 2 + j * 2 - 1;
              if (y < 0 || y >= 9 || x < 0 || x >= 9)
                continue;
              ref += (double)X1[(y * 9 + x) * 5 + c] *
                     W1[((f * 3 + i) * 3 + j) * 5 + c];
            }
        float got = at(&y1, 0, oy, ox, f);
        if (got != (float)ref) {
          printf("FAIL: conv_fhwc Y(0,%ld,%ld,%ld) = %g, expected %g\n", oy,
                 ox, f, got, ref);
          ++failures;
          goto nchw;
        }
      }
nchw:
  for (long n = 0; n < 2; ++n)
    for (long f = 0; f < 8; ++f)
      for (long oy = 0; oy < 8; ++oy)
        for (long ox = 0; ox < 8; ++ox) {
          double ref = B3[f];
          for (long c = 0; c < 3; ++c)
            for (long i = 0; i < 3; ++i)
              for (long j = 0; j < 3; ++j) {
                long y = oy + i - 1, x = ox + j - 1;
                if (y < 0 || y >= 8 || x < 0 || x >= 8)
                  continue;
                ref += (double)X3[((n * 3 + c) * 8 + y) * 8 + x] *
                       W3[((f * 3 + c) * 3 + i) * 3 + j];
              }
          float got = at(&y3, n, f, oy, ox);
          if (got != (float)ref) {
            printf("FAIL: conv_nchw Y(%ld,%ld,%ld,%ld) = %g, expected %g\n",
                   n, f, oy, ox, got, ref);
            ++failures;
            goto hwcf;
          }
        }
hwcf:
  for (long n = 0; n < 2; ++n)
    for (long oy = 0; oy < 6; ++oy)
      for (long ox = 0; ox < 6; ++ox)
        for (long f = 0; f < 6; ++f) {
          double ref = 0;
          for (long i = 0; i < 3; ++i)
            for (long j = 0; j < 3; ++j)
              for (long c = 0; c < 3; ++c)
                ref += (double)X2[((n * 8 + oy + i) * 8 + ox + j) * 3 + c] *
                       W2[((i * 3 + j) * 3 + c) * 6 + f];
          float got = at(&y2, n, oy, ox, f);
          if (got != (float)ref) {
            printf("FAIL: conv_hwcf Y(%ld,%ld,%ld,%ld) = %g, expected %g\n",
                   n, oy, ox, f, got, ref);
            ++failures;
            goto done;
          }
        }
done:
  if (failures)
    return 1;
  printf("PASS conv_fhwc conv_nchw conv_hwcf\n");
  return 0;
}

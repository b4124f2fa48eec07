/* Calls a kernel that qimeng-tensorop wrote (its object file and header),
 * as a user's program would, on small-integer inputs, and compares C with
 * C0 + A * B computed here in double: every sum is exact, so the results
 * must match exactly. Build with -DKERNEL=<symbol> -DWS=<workspace bytes>
 * -DM= -DN= -DK=. */
#include <stdio.h>
#include <stdlib.h>

void KERNEL(const float *a, const float *b, float *c, void *workspace);

int main(void) {
  float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * K * N);
  float *c = malloc(sizeof(float) * M * N);
  double *ref = malloc(sizeof(double) * M * N);
  void *ws = aligned_alloc(64, (WS + 63) / 64 * 64);
  for (long i = 0; i < M * K; i++) a[i] = (float)((i * 7) % 9) - 4;
  for (long i = 0; i < K * N; i++) b[i] = (float)((i * 5) % 9) - 4;
  for (long i = 0; i < M * N; i++) c[i] = (float)((i * 3) % 5) - 2;
  for (long i = 0; i < M; i++)
    for (long j = 0; j < N; j++) {
      double s = c[i * N + j];
      for (long k = 0; k < K; k++) s += (double)a[i * K + k] * b[k * N + j];
      ref[i * N + j] = s;
    }
  KERNEL(a, b, c, ws);
  long bad = 0;
  for (long i = 0; i < M * N; i++) bad += c[i] != (float)ref[i];
  printf("mismatches = %ld\n", bad);
  return bad != 0;
}

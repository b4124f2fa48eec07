/* Runs the pass's NVIDIA output (Inputs/pass-e2e.mlir compiled to an
 * object) on the GPU: A, B and C in managed memory (device memory the host
 * can fill and read), small integers (exact in bf16, f16 and tf32, and so
 * are their sums), each C checked bit for bit against a reference computed
 * here, twice for the accumulating ones (C starts non-zero). Plain C and
 * the CUDA driver: nothing of QiMeng-TensorOp is linked.
 * Exit status 0 when every result matches. */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  void *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
} Memref2D;

void _mlir_ciface_gemm_bf16(Memref2D *, Memref2D *, Memref2D *);
void _mlir_ciface_linear_tf32(Memref2D *, Memref2D *, Memref2D *);
void _mlir_ciface_gemm_f16(Memref2D *, Memref2D *, Memref2D *);

static void check(CUresult r, const char *what) {
  if (r != CUDA_SUCCESS) {
    const char *text = NULL;
    cuGetErrorString(r, &text);
    fprintf(stderr, "%s: %s\n", what, text ? text : "?");
    exit(2);
  }
}

static Memref2D managed(int64_t rows, int64_t cols, int64_t bytes) {
  CUdeviceptr p;
  check(cuMemAllocManaged(&p, (size_t)(rows * cols * bytes),
                          CU_MEM_ATTACH_GLOBAL),
        "cuMemAllocManaged");
  Memref2D m = {(void *)p, (void *)p, 0, {rows, cols}, {cols, 1}};
  return m;
}

/* Small integers -3..3 in the element format: bf16 and f16 bits, or f32. */
static float smallInt(unsigned *seed) {
  *seed = *seed * 1103515245u + 12345u;
  return (float)((int)((*seed >> 16) % 7u) - 3);
}
static uint16_t toBf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)(u >> 16); /* exact for small integers */
}
static uint16_t toF16(float f) {
  if (f == 0.0f)
    return 0;
  uint32_t u;
  memcpy(&u, &f, 4);
  uint32_t sign = (u >> 16) & 0x8000u, exp = ((u >> 23) & 0xffu) - 127 + 15;
  return (uint16_t)(sign | (exp << 10) | ((u & 0x7fffffu) >> 13));
}

/* Fills A (m x k), B (k x n, or n x k when bt) with small integers in
 * `kind` (0 bf16, 1 f16, 2 f32) and C with small integers, calls `gemm`
 * `calls` times, and compares C with C0 + calls * A B (or A B^T). */
static int run(const char *name, void (*gemm)(Memref2D *, Memref2D *,
                                              Memref2D *),
               int kind, int64_t m, int64_t n, int64_t k, int bt, int calls,
               int overwrite) {
  const int64_t bytes = kind == 2 ? 4 : 2;
  Memref2D A = managed(m, k, bytes), B = bt ? managed(n, k, bytes)
                                            : managed(k, n, bytes);
  Memref2D C = managed(m, n, 4);
  float *a = malloc(sizeof(float) * m * k), *b = malloc(sizeof(float) * k * n);
  float *c0 = malloc(sizeof(float) * m * n);
  unsigned seed = 2026;
  for (int64_t i = 0; i < m * k; ++i)
    a[i] = smallInt(&seed);
  for (int64_t i = 0; i < k * n; ++i)
    b[i] = smallInt(&seed);
  for (int64_t i = 0; i < m * n; ++i)
    c0[i] = overwrite ? 0.0f : smallInt(&seed);
  for (int64_t i = 0; i < m * k; ++i)
    if (kind == 2)
      ((float *)A.aligned)[i] = a[i];
    else
      ((uint16_t *)A.aligned)[i] = kind == 0 ? toBf16(a[i]) : toF16(a[i]);
  for (int64_t i = 0; i < k * n; ++i)
    if (kind == 2)
      ((float *)B.aligned)[i] = b[i];
    else
      ((uint16_t *)B.aligned)[i] = kind == 0 ? toBf16(b[i]) : toF16(b[i]);
  memcpy(C.aligned, c0, sizeof(float) * m * n);
  for (int r = 0; r < calls; ++r)
    gemm(&A, &B, &C);
  int64_t wrong = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < k; ++p)
        sum += (double)a[i * k + p] * (bt ? b[j * k + p] : b[p * n + j]);
      const double want = c0[i * n + j] + (overwrite ? 1 : calls) * sum;
      const float got = ((float *)C.aligned)[i * n + j];
      if ((double)got != want && ++wrong <= 3)
        fprintf(stderr, "%s: C(%lld, %lld) = %g, expected %g\n", name,
                (long long)i, (long long)j, got, want);
    }
  printf("%s: %lld x %lld x %lld, %d call(s): %s (%lld of %lld wrong)\n",
         name, (long long)m, (long long)n, (long long)k, calls,
         wrong ? "WRONG" : "exact", (long long)wrong, (long long)(m * n));
  free(a), free(b), free(c0);
  cuMemFree((CUdeviceptr)A.aligned), cuMemFree((CUdeviceptr)B.aligned),
      cuMemFree((CUdeviceptr)C.aligned);
  return wrong != 0;
}

int main(void) {
  CUdevice device;
  CUcontext context;
  check(cuInit(0), "cuInit");
  check(cuDeviceGet(&device, 0), "cuDeviceGet");
  check(cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
  int failed = 0;
  failed |= run("gemm_bf16", _mlir_ciface_gemm_bf16, 0, 1000, 776, 336, 0, 2,
                0);
  failed |= run("linear_tf32", _mlir_ciface_linear_tf32, 2, 200, 136, 96, 1,
                1, 0);
  failed |= run("gemm_f16", _mlir_ciface_gemm_f16, 1, 130, 70, 333, 0, 2, 0);
  return failed;
}

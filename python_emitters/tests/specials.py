"""Special values through the kernels' epilogues: one C++ program checks
relu, its clamps, torch-mlir's clamp and leaky relu on NaNs of either sign
(quiet and signalling), infinities, zeros of either sign, denormals and
the largest finite values, against arith.maximumf's and minimumf's rules.
RvvReluTest runs it on RVV instruction sequences, and the x86, NEON and
SVE tests on whole GEMM kernels (KERNEL_WRAPPERS)."""

import json
import os
import tempfile

from qimeng_emitters.__main__ import run

from .support import header

# The epilogue's activations on the values that tell arith.maximumf from
# IEEE maximumNumber, each variant a function run(x, 16) that the program
# it is linked into defines (kAddsZero: whether it adds +0 first).
SPECIALS_MAIN = r"""
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

extern "C" void relu(float *x, long n);
extern "C" void relu6(float *x, long n);
extern "C" void hardtanh(float *x, long n);
extern "C" void floor_half(float *x, long n);
extern "C" void torch_clamp(float *x, long n);
extern "C" void leaky_half(float *x, long n);
extern "C" void leaky_six(float *x, long n);

static uint32_t bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
static float value(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

// arith.maximumf(x, floor), then arith.minimumf(., bound): a NaN stays a
// NaN, -0 becomes +0 against the floor 0 and stays -0 against -1.5; with
// nan_to_floor (torch-mlir's clamp) a NaN becomes the floor.
// Leaky relu (slope not 0): x > 0 ? x : slope * x, a NaN staying a NaN.
static bool expected(float x, float got, float floor, float bound,
                     bool nan_to_floor, float slope) {
  if (slope != 0.0f && !std::isnan(x))
    return bits(got) == bits(x > 0.0f ? x : slope * x);
  if (std::isnan(x) && nan_to_floor)
    return bits(got) == bits(floor);
  if (std::isnan(x))
    return std::isnan(got);
  float want = x > floor ? x : floor;
  if (want > bound)
    want = bound;
  return bits(got) == bits(want);
}

struct Variant {
  const char *name;
  void (*run)(float *, long);
  float floor, bound;
  bool nan_to_floor;
  float slope;
};

int main() {
  const uint32_t specials[16] = {
      0x7fc00000, 0xffc00000, 0x7f800001, 0xff812345, 0x7f800000,
      0xff800000, 0x80000000, 0x00000000, 0xbfc00000, 0x40200000,
      0x40e00000, 0x00000001, 0x80000001, 0x7f7fffff, 0xff7fffff,
      0x40c00000};
  const Variant variants[] = {
      {"relu", relu, 0.0f, INFINITY, false, 0.0f},
      {"relu6", relu6, 0.0f, 6.0f, false, 0.0f},
      {"hardtanh", hardtanh, -1.5f, 6.0f, false, 0.0f},
      {"floor_half", floor_half, 0.5f, INFINITY, false, 0.0f},
      {"torch_clamp", torch_clamp, -1.5f, 6.0f, true, 0.0f},
      {"leaky_half", leaky_half, 0.0f, INFINITY, false, 0.5f},
      {"leaky_six", leaky_six, 0.0f, INFINITY, false, 6.0f}};
  int failures = 0;
  for (const Variant &v : variants) {
    float x[16];
    for (int i = 0; i < 16; ++i)
      x[i] = value(specials[i]);
    v.run(x, 16);
    for (int i = 0; i < 16; ++i) {
      float in = value(specials[i]);
      // A GEMM kernel adds its product (+0 here) to C first: -0 is +0 by
      // then.
      if (kAddsZero)
        in += 0.0f;
      if (!expected(in, x[i], v.floor, v.bound, v.nan_to_floor, v.slope)) {
        std::printf("%s(%08x) = %08x\n", v.name, specials[i], bits(x[i]));
        ++failures;
      }
    }
  }
  std::printf("%d wrong\n", failures);
  return failures != 0;
}
"""


# The seven variants of SPECIALS_MAIN as GEMM kernels, C[1x16] = act(C +
# A * B) with K = 1 and A = B = 0 (so C = act(C + 0)), each kernel renamed
# k_<variant> and called on the sixteen values as C.
KERNEL_WRAPPERS = r"""
#include <cstdlib>
#include <cstring>
#define KERNEL(name)                                                         \
  extern "C" void k_##name(const float *, const float *, float *, void *);  \
  extern "C" void name(float *x, long n) {                                   \
    static float a[1] = {0.0f}, b[16] = {0.0f};                              \
    long *ws = static_cast<long *>(std::aligned_alloc(64, 1 << 20));            \
    std::memset(ws, 0, 1 << 20);                                                \
    ws[8] = 1;  /* lda, at byte 64 */                                        \
    ws[9] = 16; /* ldb */                                                    \
    ws[10] = 16; /* ldc */                                                   \
    k_##name(a, b, x, ws);                                                   \
    std::free(ws);                                                           \
    (void)n;                                                                 \
  }
KERNEL(relu)
KERNEL(relu6)
KERNEL(hardtanh)
KERNEL(floor_half)
KERNEL(torch_clamp)
KERNEL(leaky_half)
KERNEL(leaky_six)
"""

# The requests' epilogue fields for SPECIALS_MAIN's variants.
SPECIALS_EPILOGUES = {
    "relu": {"relu": True},
    "relu6": {"relu": True, "relu_max": 6.0},
    "hardtanh": {"relu": True, "relu_min": -1.5, "relu_max": 6.0},
    "floor_half": {"relu": True, "relu_min": 0.5},
    "torch_clamp": {"relu": True, "relu_min": -1.5, "relu_max": 6.0,
                    "relu_nan_to_floor": True},
    "leaky_half": {"leaky_relu": 0.5},
    "leaky_six": {"leaky_relu": 6.0},
}


def check_kernels(test, make, assemble, link, execute):
    """Emits SPECIALS_EPILOGUES' kernels with `make(**fields)` (C[1x16],
    K = 1, a 16-column block), renames each k_<variant>, assembles each
    with `assemble(text, obj)` (a CompletedProcess), links them with the
    program by `link(sources, exe)` and runs it with `execute(exe)` (a
    CompletedProcess): it must report 0 wrong."""
    with tempfile.TemporaryDirectory() as tmp:
        objs = []
        for name, fields in SPECIALS_EPILOGUES.items():
            text = run(json.dumps(make(m=1, n=16, k=1, mr=1, **fields)))
            obj = os.path.join(tmp, name + ".o")
            result = assemble(text.replace(header(text, "symbol"),
                                           "k_" + name), obj)
            test.assertEqual(result.returncode, 0, result.stderr)
            objs.append(obj)
        main = os.path.join(tmp, "main.cpp")
        with open(main, "w") as f:
            f.write("static constexpr bool kAddsZero = true;\n"
                    + SPECIALS_MAIN + KERNEL_WRAPPERS)
        exe = os.path.join(tmp, "specials")
        link([main, *objs], exe)
        out = execute(exe)
        test.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        test.assertIn("0 wrong", out.stdout)

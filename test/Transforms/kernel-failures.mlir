// A kernel that cannot be generated, or that fails validation, leaves the op
// unchanged with a remark; the compiler neither crashes nor emits it.
// RUN: %qimeng-opt %s -verify-diagnostics \
// RUN:   '--qimeng-tensorop=target=x86_64-unknown-linux-gnu:znver3:+avx,+avx2,+fma validate=false kernel-config=mr=8,nr=16' \
// RUN: | FileCheck %s --check-prefix=REGS
// RUN: %qimeng-opt %s -verify-diagnostics=only-expected \
// RUN:   '--qimeng-tensorop=validate=false emitter-dir=/nonexistent/qimeng' \
// RUN: | FileCheck %s --check-prefix=NOEMITTER
// RUN: %qimeng-opt %s -verify-diagnostics \
// RUN:   '--qimeng-tensorop=target=x86_64-unknown-linux-gnu:znver3:+avx,+avx2,+fma validate=false kernel-config=isa=avx512,mr=12,nr=32' \
// RUN: | FileCheck %s --check-prefix=REGS

// An 8x16 AVX2 block needs 19 vector registers, and an AVX2 target has no
// AVX-512: the emitter refuses both.
// REGS-LABEL: func.func @matmul(
// REGS:         linalg.matmul
// REGS-NOT:   llvm.func
// NOEMITTER-LABEL: func.func @matmul(
// NOEMITTER:         linalg.matmul
func.func @matmul(%a: memref<8x8xf32>, %b: memref<8x8xf32>, %c: memref<8x8xf32>) {
  // expected-remark-re @below {{not accelerated: kernel generation failed: emitter failed (exit 1): {{.*(a 8x16 register block needs 19 vector registers; avx2 has 16|No module named qimeng_emitters|isa avx512 needs avx512f which the target lacks)}}}}
  linalg.matmul ins(%a, %b : memref<8x8xf32>, memref<8x8xf32>)
                outs(%c : memref<8x8xf32>)
  return
}

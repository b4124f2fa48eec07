// REQUIRES: cross-aarch64, cross-riscv64
// Attention's two products over a sequence whose length is known only at
// run time, as torch-mlir emits them for a dynamic sequence dimension (a
// zero fill and the matmul): the scores Q * K^T (K's transpose through
// linalg.transpose folds into the kernel, which reads K as stored: "nt"),
// S x S, whose M and N are dynamic ("mrt_nrt": the kernel reads its
// columns from its header and runs the panel kinds of the call's edge;
// the fill folds into overwrite, "b0"), and the probabilities times the
// values, O = P * V with P S x S, whose M and K are dynamic ("mrt_krt":
// the kernel counts K's iterations and last steps at each call; these
// kernels store C at any K, 0 included, so the fill folds here too, "b0",
// and the pass's validation runs the kernel at K = 0 among its sizes). The
// pass takes these kernels for NEON
// (Neoverse-N1) and RVV at VLEN 256 (SpacemiT X60), after
// one-shot-bufferize's defaults (dynamic strides at the function
// boundary), guarded by the strides' run-time check (unit inner strides)
// with the stock matmul in the other branch; it validates each kernel
// under qemu at several sizes. Each module is lowered with the stock
// pipeline, compiled with llc for the target, linked statically with
// attention_main.c and run under qemu at S = 1, 5, 24 and 61 against its
// references.
//
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-n1:+neon" | FileCheck %s --check-prefixes=CHECK,NEON
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-n1:+neon" %dealloc \
// RUN:   | %mlir-opt %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1 -filetype=obj -o %t.neon.o
// RUN: %cross-cc-aarch64 %S/Inputs/attention_main.c %t.neon.o -o %t.neon.exe
// RUN: %qemu-aarch64 -cpu neoverse-n1 %t.neon.exe | FileCheck %s --check-prefix=EXEC
//
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" --qimeng-tensorop="target=riscv64-linux-gnu:spacemit-x60:+m,+a,+f,+d,+c,+v" | FileCheck %s --check-prefixes=CHECK,RVV
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" --qimeng-tensorop="target=riscv64-linux-gnu:spacemit-x60:+m,+a,+f,+d,+c,+v" %dealloc \
// RUN:   | %mlir-opt %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=riscv64-linux-gnu -mattr=+m,+a,+f,+d,+c,+v,+zvl256b -filetype=obj -o %t.rvv.o
// RUN: %cross-cc-riscv64 %S/Inputs/attention_main.c %t.rvv.o -o %t.rvv.exe
// RUN: %qemu-riscv64 -cpu rv64,v=true,vext_spec=v1.0,vlen=256,elen=64 %t.rvv.exe | FileCheck %s --check-prefix=EXEC
//
// The kernel path is what ran: the same module with a kernel that drops a
// k (validation off) gives a wrong O.
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" --qimeng-tensorop="target=riscv64-linux-gnu:spacemit-x60:+m,+a,+f,+d,+c,+v test-inject-fault=drop-k validate=false" %dealloc \
// RUN:   | %mlir-opt %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=riscv64-linux-gnu -mattr=+m,+a,+f,+d,+c,+v,+zvl256b -filetype=obj -o %t.rvv.broken.o
// RUN: %cross-cc-riscv64 %S/Inputs/attention_main.c %t.rvv.broken.o -o %t.rvv.broken.exe
// RUN: not %qemu-riscv64 -cpu rv64,v=true,vext_spec=v1.0,vlen=256,elen=64 %t.rvv.broken.exe | FileCheck %s --check-prefix=BROKEN
// BROKEN: FAIL

// CHECK-LABEL: func.func @attn_scores
// CHECK:       scf.if
// NEON:        llvm.call @qm_sgemm_{{[0-9]+}}x{{[0-9]+}}x16_nt_mrt_nrt_b0_ldrt_{{[0-9]+x[0-9]+}}_ku{{[48]}}_aarch64_neon
// RVV:         llvm.call @qm_sgemm_{{[0-9]+}}x{{[0-9]+}}x16_nt_mrt_nrt_b0_ldrt_{{[0-9]+x[0-9]+}}_m{{[0-9]}}_ku{{[0-9]}}_riscv64_rvv_vlen256
// CHECK:       } else {
// CHECK:         linalg.matmul
// CHECK-LABEL: func.func @attn_v
// CHECK:       scf.if
// CHECK-NOT:   linalg.fill
// NEON:        llvm.call @qm_sgemm_{{[0-9]+}}x21x{{[0-9]+}}_nn_mrt_krt_b0_ldrt_{{[0-9]+x[0-9]+}}_ku{{[48]}}_aarch64_neon
// RVV:         llvm.call @qm_sgemm_{{[0-9]+}}x21x{{[0-9]+}}_nn_mrt_krt_b0_ldrt_{{[0-9]+x[0-9]+}}_m{{[0-9]}}_ku{{[0-9]}}_riscv64_rvv_vlen256
// CHECK:       } else {
// CHECK:         linalg.matmul
// EXEC: PASS S = 1, 5, 24, 61
func.func @attn_scores(%q: tensor<?x16xf32>, %k: tensor<?x16xf32>) -> tensor<?x?xf32>
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %s = tensor.dim %q, %c0 : tensor<?x16xf32>
  %t = tensor.dim %k, %c0 : tensor<?x16xf32>
  %kt0 = tensor.empty(%t) : tensor<16x?xf32>
  %kt = linalg.transpose ins(%k : tensor<?x16xf32>) outs(%kt0 : tensor<16x?xf32>) permutation = [1, 0]
  %e = tensor.empty(%s, %t) : tensor<?x?xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %o = linalg.matmul ins(%q, %kt : tensor<?x16xf32>, tensor<16x?xf32>) outs(%f : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %o : tensor<?x?xf32>
}

func.func @attn_v(%p: tensor<?x?xf32>, %v: tensor<?x21xf32>) -> tensor<?x21xf32>
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %s = tensor.dim %p, %c0 : tensor<?x?xf32>
  %e = tensor.empty(%s) : tensor<?x21xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x21xf32>) -> tensor<?x21xf32>
  %o = linalg.matmul ins(%p, %v : tensor<?x?xf32>, tensor<?x21xf32>) outs(%f : tensor<?x21xf32>) -> tensor<?x21xf32>
  return %o : tensor<?x21xf32>
}

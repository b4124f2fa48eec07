// REQUIRES: cross-aarch64, cross-riscv64
// Matrix-vector products for NEON (Neoverse-N1), 256-bit SVE (Neoverse-V1)
// and RVV at VLEN 256 (SpacemiT X60): aten.mv with a bias and relu
// (linalg.matvec, then a generic adding a vector of C's shape and
// applying relu: the vector is the residual the kernel accumulates onto,
// on tensors as after bufferization, and relu its epilogue), jax's x @ W for one vector (linalg.vecmat, W as
// stored) and aten.mv over a run-time number of rows. Each product is the
// GEMM of one row (docs/FrontendIR.md): the vector is A, and where it is
// the op's second input the inputs swap roles, so that the matrix's rows
// are B^T's ("nt"; the run-time rows its run-time N, "nrt").
// NEON runs the pass on tensors before bufferization, SVE and RVV after
// one-shot-bufferize's defaults (dynamic strides at the function
// boundary). Each module is lowered with the stock pipeline, compiled with
// llc for the target, linked statically with matvec_main.c and run under
// qemu against its reference (bit for bit: small integers), the matrix's
// rows 72 floats apart in a wider buffer; a kernel broken on purpose
// (validation off) gives a wrong y.
//
// RUN: %qimeng-opt %s --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-n1:+neon" --one-shot-bufferize="bufferize-function-boundaries" | FileCheck %s --check-prefixes=CHECK,NEON
// RUN: %qimeng-opt %s --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-n1:+neon" --one-shot-bufferize="bufferize-function-boundaries" %dealloc \
// RUN:   | %mlir-opt %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1 -filetype=obj -o %t.neon.o
// RUN: %cross-cc-aarch64 %S/Inputs/matvec_main.c %t.neon.o -o %t.neon.exe
// RUN: %qemu-aarch64 -cpu neoverse-n1 %t.neon.exe | FileCheck %s --check-prefix=EXEC
//
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-v1:+neon,+sve" | FileCheck %s --check-prefixes=CHECK,SVE
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-v1:+neon,+sve" %dealloc \
// RUN:   | %mlir-opt %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=aarch64-linux-gnu -mcpu=neoverse-v1 -filetype=obj -o %t.sve.o
// RUN: %cross-cc-aarch64 %S/Inputs/matvec_main.c %t.sve.o -o %t.sve.exe
// RUN: %qemu-aarch64 -cpu max,sve256=on %t.sve.exe | FileCheck %s --check-prefix=EXEC
//
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" --qimeng-tensorop="target=riscv64-linux-gnu:spacemit-x60:+m,+a,+f,+d,+c,+v" | FileCheck %s --check-prefixes=CHECK,RVV
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" --qimeng-tensorop="target=riscv64-linux-gnu:spacemit-x60:+m,+a,+f,+d,+c,+v" %dealloc \
// RUN:   | %mlir-opt %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=riscv64-linux-gnu -mattr=+m,+a,+f,+d,+c,+v,+zvl256b -filetype=obj -o %t.rvv.o
// RUN: %cross-cc-riscv64 %S/Inputs/matvec_main.c %t.rvv.o -o %t.rvv.exe
// RUN: %qemu-riscv64 -cpu rv64,v=true,vext_spec=v1.0,vlen=256,elen=64 %t.rvv.exe | FileCheck %s --check-prefix=EXEC
//
// RUN: %qimeng-opt %s --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-n1:+neon test-inject-fault=drop-k validate=false" --one-shot-bufferize="bufferize-function-boundaries" %dealloc \
// RUN:   | %mlir-opt %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1 -filetype=obj -o %t.neon.broken.o
// RUN: %cross-cc-aarch64 %S/Inputs/matvec_main.c %t.neon.broken.o -o %t.neon.broken.exe
// RUN: not %qemu-aarch64 -cpu neoverse-n1 %t.neon.broken.exe | FileCheck %s --check-prefix=BROKEN
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" --qimeng-tensorop="target=riscv64-linux-gnu:spacemit-x60:+m,+a,+f,+d,+c,+v test-inject-fault=drop-k validate=false" %dealloc \
// RUN:   | %mlir-opt %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=riscv64-linux-gnu -mattr=+m,+a,+f,+d,+c,+v,+zvl256b -filetype=obj -o %t.rvv.broken.o
// RUN: %cross-cc-riscv64 %S/Inputs/matvec_main.c %t.rvv.broken.o -o %t.rvv.broken.exe
// RUN: not %qemu-riscv64 -cpu rv64,v=true,vext_spec=v1.0,vlen=256,elen=64 %t.rvv.broken.exe | FileCheck %s --check-prefix=BROKEN
// BROKEN: FAIL
// EXEC: PASS

#id1 = affine_map<(d0) -> (d0)>

// CHECK-LABEL: func.func @mv
// CHECK-NOT:   linalg.matvec
// NEON:        llvm.call @qm_sgemm_1x37x70_nt_relu_ldrt_{{.*}}_aarch64_neon
// SVE:         llvm.call @qm_sgemm_1x37x70_nt_relu_ldrt_{{.*}}_aarch64_sve_vl256
// RVV:         llvm.call @qm_sgemm_1x37x70_nt_relu_ldrt_{{.*}}_riscv64_rvv_vlen256
// CHECK:       } else {
// CHECK:         linalg.matvec
func.func @mv(%a: tensor<37x70xf32>, %x: tensor<70xf32>, %b: tensor<37xf32>) -> tensor<37xf32> attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<37xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<37xf32>) -> tensor<37xf32>
  %y = linalg.matvec ins(%a, %x : tensor<37x70xf32>, tensor<70xf32>) outs(%f : tensor<37xf32>) -> tensor<37xf32>
  %o = tensor.empty() : tensor<37xf32>
  %r = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%y, %b : tensor<37xf32>, tensor<37xf32>) outs(%o : tensor<37xf32>) {
  ^bb0(%v: f32, %bv: f32, %out: f32):
    %s = arith.addf %v, %bv : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<37xf32>
  return %r : tensor<37xf32>
}

// CHECK-LABEL: func.func @vm
// NEON:        llvm.call @qm_sgemm_1x37x70_nn_b0_ldrt_{{.*}}_aarch64_neon
// SVE:         llvm.call @qm_sgemm_1x37x70_nn_b0_ldrt_{{.*}}_aarch64_sve_vl256
// RVV:         llvm.call @qm_sgemm_1x37x70_nn_b0_ldrt_{{.*}}_riscv64_rvv_vlen256
func.func @vm(%x: tensor<70xf32>, %w: tensor<70x37xf32>) -> tensor<37xf32> attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<37xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<37xf32>) -> tensor<37xf32>
  %y = linalg.vecmat ins(%x, %w : tensor<70xf32>, tensor<70x37xf32>) outs(%f : tensor<37xf32>) -> tensor<37xf32>
  return %y : tensor<37xf32>
}

// CHECK-LABEL: func.func @mv_dyn
// NEON:        llvm.call @qm_sgemm_1x256x70_nt_nrt_b0_ldrt_{{.*}}_aarch64_neon
// SVE:         llvm.call @qm_sgemm_1x256x70_nt_nrt_b0_ldrt_{{.*}}_aarch64_sve_vl256
// RVV:         llvm.call @qm_sgemm_1x256x70_nt_nrt_b0_ldrt_{{.*}}_riscv64_rvv_vlen256
func.func @mv_dyn(%a: tensor<?x70xf32>, %x: tensor<70xf32>) -> tensor<?xf32> attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %rows = tensor.dim %a, %c0 : tensor<?x70xf32>
  %e = tensor.empty(%rows) : tensor<?xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %y = linalg.matvec ins(%a, %x : tensor<?x70xf32>, tensor<70xf32>) outs(%f : tensor<?xf32>) -> tensor<?xf32>
  return %y : tensor<?xf32>
}

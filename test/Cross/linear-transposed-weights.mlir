// REQUIRES: cross-aarch64, cross-riscv64
// torch's linear layer with relu on tensors (aten.linear: the weight through
// linalg.transpose, a zero fill, the matmul, a broadcast bias add and relu),
// for NEON (Neoverse-N1), 256-bit SVE (Neoverse-V1) and RVV at VLEN 256
// (SpacemiT X60). The transpose folds into the kernel, which reads the
// weight as stored (N x K: "nt") and packs each column panel of it into its
// workspace; the fill folds into overwrite ("b0"). NEON and 256-bit SVE
// run the pass on tensors before bufferization, where the bias add and
// relu fold into the kernels' epilogue ("bias_relu"; FMAX keeps a NaN as
// arith.maximumf does); scalable SVE and RVV after one-shot-bufferize's
// defaults (dynamic strides at the function boundary), where the fill and
// the generic share a tensor.empty and the bufferized generic rewrites the
// product's buffer in place, and fuse it too (RVV's relu keeps a NaN with
// integer steps beside vfmax, which alone would drop it).
// Each module is lowered with the stock pipeline, compiled with llc for
// the target, linked statically with linear_main.c and run under qemu
// against its reference: X 13 x 70 with a leading dimension of 72, W 37 x
// 70 with 73 (K not a multiple of the unroll, N leaving a one-column edge
// panel on NEON).
//
// RUN: %qimeng-opt %s --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-n1:+neon" --one-shot-bufferize="bufferize-function-boundaries" | FileCheck %s --check-prefixes=CHECK,NEON,FUSED
// RUN: %qimeng-opt %s --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-n1:+neon" --one-shot-bufferize="bufferize-function-boundaries" %dealloc \
// RUN:   | %mlir-opt %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1 -filetype=obj -o %t.neon.o
// RUN: %cross-cc-aarch64 -DM=13 -DN=37 -DK=70 -DLDX=72 -DLDW=73 %S/Inputs/linear_main.c %t.neon.o -o %t.neon.exe
// RUN: %qemu-aarch64 -cpu neoverse-n1 %t.neon.exe | FileCheck %s --check-prefix=EXEC
//
// RUN: %qimeng-opt %s --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-v1:+neon,+sve" --one-shot-bufferize="bufferize-function-boundaries" | FileCheck %s --check-prefixes=CHECK,SVE,FUSED
// RUN: %qimeng-opt %s --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-v1:+neon,+sve" --one-shot-bufferize="bufferize-function-boundaries" %dealloc \
// RUN:   | %mlir-opt %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=aarch64-linux-gnu -mcpu=neoverse-v1 -filetype=obj -o %t.sve.o
// RUN: %cross-cc-aarch64 -DM=13 -DN=37 -DK=70 -DLDX=72 -DLDW=73 %S/Inputs/linear_main.c %t.sve.o -o %t.sve.exe
// RUN: %qemu-aarch64 -cpu max,sve256=on %t.sve.exe | FileCheck %s --check-prefix=EXEC
//
// SVE for any vector length (vlen=scalable): one kernel, run at 128, 512
// and 2048 bits.
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" --qimeng-tensorop="target=aarch64-linux-gnu::+neon,+sve:vlen=scalable" | FileCheck %s --check-prefixes=CHECK,SCALABLE,FUSED
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" --qimeng-tensorop="target=aarch64-linux-gnu::+neon,+sve:vlen=scalable" %dealloc \
// RUN:   | %mlir-opt %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=aarch64-linux-gnu -mattr=+sve -filetype=obj -o %t.sva.o
// RUN: %cross-cc-aarch64 -DM=13 -DN=37 -DK=70 -DLDX=72 -DLDW=73 %S/Inputs/linear_main.c %t.sva.o -o %t.sva.exe
// RUN: %qemu-aarch64 -cpu max,sve128=on %t.sva.exe | FileCheck %s --check-prefix=EXEC
// RUN: %qemu-aarch64 -cpu max,sve512=on %t.sva.exe | FileCheck %s --check-prefix=EXEC
// RUN: %qemu-aarch64 -cpu max,sve2048=on %t.sva.exe | FileCheck %s --check-prefix=EXEC
//
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" --qimeng-tensorop="target=riscv64-linux-gnu:spacemit-x60:+m,+a,+f,+d,+c,+v" | FileCheck %s --check-prefixes=CHECK,RVV,FUSED
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" --qimeng-tensorop="target=riscv64-linux-gnu:spacemit-x60:+m,+a,+f,+d,+c,+v" %dealloc \
// RUN:   | %mlir-opt %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=riscv64-linux-gnu -mattr=+m,+a,+f,+d,+c,+v,+zvl256b -filetype=obj -o %t.rvv.o
// RUN: %cross-cc-riscv64 -DM=13 -DN=37 -DK=70 -DLDX=72 -DLDW=73 %S/Inputs/linear_main.c %t.rvv.o -o %t.rvv.exe
// RUN: %qemu-riscv64 -cpu rv64,v=true,vext_spec=v1.0,vlen=256,elen=64 %t.rvv.exe | FileCheck %s --check-prefix=EXEC
//
// The kernel path is what ran: each module with a deliberately broken
// kernel (validation off) gives a wrong Y.
// RUN: %qimeng-opt %s --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-n1:+neon test-inject-fault=drop-k validate=false" --one-shot-bufferize="bufferize-function-boundaries" %dealloc \
// RUN:   | %mlir-opt %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1 -filetype=obj -o %t.neon.broken.o
// RUN: %cross-cc-aarch64 -DM=13 -DN=37 -DK=70 -DLDX=72 -DLDW=73 %S/Inputs/linear_main.c %t.neon.broken.o -o %t.neon.broken.exe
// RUN: not %qemu-aarch64 -cpu neoverse-n1 %t.neon.broken.exe | FileCheck %s --check-prefix=BROKEN
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-v1:+neon,+sve test-inject-fault=drop-k validate=false" %dealloc \
// RUN:   | %mlir-opt %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=aarch64-linux-gnu -mcpu=neoverse-v1 -filetype=obj -o %t.sve.broken.o
// RUN: %cross-cc-aarch64 -DM=13 -DN=37 -DK=70 -DLDX=72 -DLDW=73 %S/Inputs/linear_main.c %t.sve.broken.o -o %t.sve.broken.exe
// RUN: not %qemu-aarch64 -cpu max,sve256=on %t.sve.broken.exe | FileCheck %s --check-prefix=BROKEN
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" --qimeng-tensorop="target=riscv64-linux-gnu:spacemit-x60:+m,+a,+f,+d,+c,+v test-inject-fault=drop-k validate=false" %dealloc \
// RUN:   | %mlir-opt %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=riscv64-linux-gnu -mattr=+m,+a,+f,+d,+c,+v,+zvl256b -filetype=obj -o %t.rvv.broken.o
// RUN: %cross-cc-riscv64 -DM=13 -DN=37 -DK=70 -DLDX=72 -DLDW=73 %S/Inputs/linear_main.c %t.rvv.broken.o -o %t.rvv.broken.exe
// RUN: not %qemu-riscv64 -cpu rv64,v=true,vext_spec=v1.0,vlen=256,elen=64 %t.rvv.broken.exe | FileCheck %s --check-prefix=BROKEN
// BROKEN: FAIL

// CHECK-LABEL: func.func @linear
// CHECK-NOT:   linalg.fill
// CHECK:       scf.if
// NEON:          llvm.call @qm_sgemm_13x37x70_nt_b0_bias_relu_ldrt_7x12_ku4_aarch64_neon
// SVE:           llvm.call @qm_sgemm_13x37x70_nt_b0_bias_relu_ldrt_{{[0-9]+x[0-9]+}}_ku{{[48]}}_aarch64_sve_vl256
// SCALABLE:      llvm.call @qm_sgemm_13x37x70_nt_b0_bias_relu_ldrt_7x3v_ku4_aarch64_sve_scalable
// RVV:           llvm.call @qm_sgemm_13x37x70_nt_b0_bias_relu_ldrt_{{[0-9]+x[0-9]+}}_m{{[0-9]}}_ku{{[0-9]}}_riscv64_rvv_vlen256
// CHECK:       } else {
// CHECK:         linalg.transpose
// CHECK:         linalg.matmul
// FUSED:         linalg.generic
// FUSED-NOT:   linalg.generic
// FUSED:       return
// The same layer over a dynamic number of rows (a batch of tokens): the
// run-time-M kernel ("mrt", rows from its header; validated by the pass at
// 1, M/3, M and 1.5M+1 rows of the representative M, 256), run at 1, 5, 13
// and 29 rows.
// CHECK-LABEL: func.func @linear_dyn
// CHECK-NOT:   linalg.fill
// NEON:          llvm.call @qm_sgemm_256x37x70_nt_mrt_b0_bias_relu_ldrt_7x12_ku4_aarch64_neon
// SVE:           llvm.call @qm_sgemm_256x37x70_nt_mrt_b0_bias_relu_ldrt_{{[0-9]+x[0-9]+}}_ku{{[48]}}_aarch64_sve_vl256
// SCALABLE:      llvm.call @qm_sgemm_256x37x70_nt_mrt_b0_bias_relu_ldrt_7x3v_ku4_aarch64_sve_scalable
// RVV:           llvm.call @qm_sgemm_256x37x70_nt_mrt_b0_bias_relu_ldrt_{{[0-9]+x[0-9]+}}_m{{[0-9]}}_ku{{[0-9]}}_riscv64_rvv_vlen256
// CHECK:       linalg.generic
// EXEC: PASS 13x37x70 and 1, 5, 13, 29 rows
func.func @linear(%x: tensor<13x70xf32>, %w: tensor<37x70xf32>, %bias: tensor<37xf32>) -> tensor<13x37xf32>
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %wt0 = tensor.empty() : tensor<70x37xf32>
  %wt = linalg.transpose ins(%w : tensor<37x70xf32>) outs(%wt0 : tensor<70x37xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<13x37xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<13x37xf32>) -> tensor<13x37xf32>
  %mm = linalg.matmul ins(%x, %wt : tensor<13x70xf32>, tensor<70x37xf32>) outs(%f : tensor<13x37xf32>) -> tensor<13x37xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bias : tensor<13x37xf32>, tensor<37xf32>) outs(%e : tensor<13x37xf32>) {
  ^bb0(%m: f32, %b: f32, %o: f32):
    %s = arith.addf %m, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<13x37xf32>
  return %y : tensor<13x37xf32>
}

func.func @linear_dyn(%x: tensor<?x70xf32>, %w: tensor<37x70xf32>, %bias: tensor<37xf32>) -> tensor<?x37xf32>
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x70xf32>
  %wt0 = tensor.empty() : tensor<70x37xf32>
  %wt = linalg.transpose ins(%w : tensor<37x70xf32>) outs(%wt0 : tensor<70x37xf32>) permutation = [1, 0]
  %e = tensor.empty(%m) : tensor<?x37xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x37xf32>) -> tensor<?x37xf32>
  %mm = linalg.matmul ins(%x, %wt : tensor<?x70xf32>, tensor<70x37xf32>) outs(%f : tensor<?x37xf32>) -> tensor<?x37xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bias : tensor<?x37xf32>, tensor<37xf32>) outs(%e : tensor<?x37xf32>) {
  ^bb0(%mv: f32, %b: f32, %o: f32):
    %s = arith.addf %mv, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x37xf32>
  return %y : tensor<?x37xf32>
}

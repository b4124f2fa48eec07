// REQUIRES: cross-riscv64
// A zero fill and a matmul into a fresh buffer, copied to the result (the
// bufferized form of torch's linear layer), on strided memrefs, for the
// SpacemiT K1's X60 core (RVV 1.0, VLEN 256 from the CPU's row): the fill
// folds into the RVV kernel's overwrite mode, which the pass validated
// under qemu at VLEN 256. (linalg.copy, not memref.copy: a copy into a
// strided layout lowers to a call into the runner utilities, which a static
// cross link does not have.) The stock lowering, llc for RISC-V, a
// static link and a run under qemu against gemm_main.c's reference.
// RUN: %qimeng-opt %s --qimeng-tensorop="target=riscv64-linux-gnu:spacemit-x60:+m,+a,+f,+d,+c,+v" | FileCheck %s
// RUN: %qimeng-opt %s --qimeng-tensorop="target=riscv64-linux-gnu:spacemit-x60:+m,+a,+f,+d,+c,+v" \
// RUN:   | %mlir-opt %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=riscv64-linux-gnu -mattr=+m,+a,+f,+d,+c,+v,+zvl256b -filetype=obj -o %t.o
// RUN: %cross-cc-riscv64 -DOVERWRITE -DM=50 -DN=70 -DK=33 -DLDA=35 -DLDB=71 -DLDC=75 %S/Inputs/gemm_main.c %t.o -o %t.exe
// RUN: %qemu-riscv64 -cpu rv64,v=true,vext_spec=v1.0,vlen=256,elen=64 %t.exe | FileCheck %s --check-prefix=EXEC
// The kernel path is what ran: the same module with a deliberately broken
// kernel (validation off) gives a wrong C.
// RUN: %qimeng-opt %s --qimeng-tensorop="target=riscv64-linux-gnu:spacemit-x60:+m,+a,+f,+d,+c,+v test-inject-fault=drop-k validate=false" \
// RUN:   | %mlir-opt %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=riscv64-linux-gnu -mattr=+m,+a,+f,+d,+c,+v,+zvl256b -filetype=obj -o %t.broken.o
// RUN: %cross-cc-riscv64 -DOVERWRITE -DM=50 -DN=70 -DK=33 -DLDA=35 -DLDB=71 -DLDC=75 %S/Inputs/gemm_main.c %t.broken.o -o %t.broken.exe
// RUN: not %qemu-riscv64 -cpu rv64,v=true,vext_spec=v1.0,vlen=256,elen=64 %t.broken.exe | FileCheck %s --check-prefix=BROKEN
// BROKEN: FAIL

// CHECK-LABEL: func.func @gemm
// CHECK-NOT: linalg.fill
// CHECK-NOT: linalg.matmul
// CHECK: llvm.call @qm_sgemm_50x70x33_nn_b0_ldrt_6x32_m4_ku8_riscv64_rvv_vlen256
// CHECK: llvm.inline_asm has_side_effects {{.*}}vfmacc.vf{{.*}}"={a0},={a1},={a2},={a3},0,1,2,3,{{.*}}~{s11},~{ft0}{{.*}}~{v31},~{vl},~{vtype},~{memory}"
// EXEC: PASS 50x70x33
func.func @gemm(%a: memref<50x33xf32, strided<[?, ?], offset: ?>>,
                %b: memref<33x70xf32, strided<[?, ?], offset: ?>>,
                %c: memref<50x70xf32, strided<[?, ?], offset: ?>>)
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() {alignment = 64 : i64} : memref<50x70xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<50x70xf32>)
  linalg.matmul ins(%a, %b : memref<50x33xf32, strided<[?, ?], offset: ?>>,
                             memref<33x70xf32, strided<[?, ?], offset: ?>>)
                outs(%t : memref<50x70xf32>)
  linalg.copy ins(%t : memref<50x70xf32>) outs(%c : memref<50x70xf32, strided<[?, ?], offset: ?>>)
  memref.dealloc %t : memref<50x70xf32>
  return
}

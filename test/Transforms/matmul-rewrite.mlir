// IR shape of the rewrite, on a pinned target (no host dependence, no
// validation run since the kernel may not run here).
// RUN: %qimeng-opt %s -split-input-file \
// RUN:   '--qimeng-tensorop=target=x86_64-unknown-linux-gnu:znver3:+avx,+avx2,+fma:l1d=32K,l2=512K,l3=32M,cores=8 threads=1 validate=false' \
// RUN: | FileCheck %s

// CHECK-LABEL: func.func @matmul_static(
// CHECK-SAME:    %[[A:.+]]: memref<64x32xf32>, %[[B:.+]]: memref<32x48xf32>, %[[C:.+]]: memref<64x48xf32>)
// CHECK-NOT:     linalg.matmul
// CHECK:         memref.extract_aligned_pointer_as_index %[[A]]
// CHECK:         memref.extract_aligned_pointer_as_index %[[B]]
// CHECK:         memref.extract_aligned_pointer_as_index %[[C]]
// The workspace is below the memref level: deallocation passes leave it be.
// CHECK-NOT:     memref.alloc
// CHECK:         %[[WS:.+]] = llvm.call @qm_workspace_acquire(%{{.+}}) : (i64) -> !llvm.ptr
// CHECK:         %[[PA:.+]] = llvm.inttoptr
// CHECK:         %[[PB:.+]] = llvm.inttoptr
// CHECK:         %[[PC:.+]] = llvm.inttoptr
// CHECK:         llvm.call @[[KERNEL:qm_sgemm_64x48x32_nn_lda32_ldb48_ldc48_4x24_ku4_kc32_mc64_nc48_pfa0_pfb0_nopackb_adirect_x86_64_avx2]](%[[PA]], %[[PB]], %[[PC]], %[[WS]])
// CHECK:         llvm.call @qm_workspace_release(%[[WS]])
// CHECK-NOT:     memref.dealloc
// CHECK:       llvm.func internal @[[KERNEL]](%{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr) attributes {no_inline}
// CHECK:         llvm.inline_asm has_side_effects asm_dialect = att
// CHECK-SAME:      vfmadd231ps %ymm12, %ymm15, %ymm0
// CHECK-SAME:      "={rdi},={rsi},={rdx},={rcx},0,1,2,3,~{rax},~{rbx}
// CHECK-SAME:      ~{ymm15},~{memory},~{dirflag},~{fpsr},~{flags}"
// CHECK-NOT:       zmm
// CHECK:         llvm.return
// The module's one workspace: claimed atomically, grown (the new one
// cached before the old is freed) when a call needs more, given back; a
// call that finds it claimed allocates its own.
// CHECK:       llvm.func internal @qm_workspace_acquire(%[[BYTES:.+]]: i64) -> !llvm.ptr
// CHECK:         llvm.atomicrmw xchg %{{.+}}, %{{.+}} acquire
// CHECK:         llvm.call @aligned_alloc(%{{.+}}, %[[BYTES]])
// CHECK:         llvm.icmp "uge"
// CHECK:         %[[OLD:.+]] = llvm.load {{.+}} atomic monotonic
// CHECK:         %[[NEW:.+]] = llvm.call @aligned_alloc(%{{.+}}, %[[BYTES]])
// CHECK:         llvm.store %[[NEW]], {{.+}} atomic monotonic
// CHECK:         llvm.call @free(%[[OLD]])
// CHECK:       llvm.func internal @qm_workspace_release(
// CHECK:         llvm.store {{.+}} atomic release
// CHECK:         llvm.call @free(
func.func @matmul_static(%a: memref<64x32xf32>, %b: memref<32x48xf32>, %c: memref<64x48xf32>) {
  linalg.matmul ins(%a, %b : memref<64x32xf32>, memref<32x48xf32>)
                outs(%c : memref<64x48xf32>)
  return
}

// -----

// Literal `$` of AT&T immediates is doubled for LLVM inline asm.
// CHECK-LABEL: llvm.func internal @qm_sgemm_8x8x8_
// CHECK:         movq $$8, %r9
func.func @matmul_immediates_escaped(%a: memref<8x8xf32>, %b: memref<8x8xf32>, %c: memref<8x8xf32>) {
  linalg.matmul ins(%a, %b : memref<8x8xf32>, memref<8x8xf32>)
                outs(%c : memref<8x8xf32>)
  return
}

// -----

// Two identical matmuls share one kernel function.
// CHECK-LABEL: func.func @matmul_twice(
// CHECK:         llvm.call @[[K:qm_sgemm_16x16x16_[a-z0-9_]+]](
// CHECK:         llvm.call @[[K]](
// CHECK:       llvm.func internal @[[K]](
// CHECK-NOT:   llvm.func internal @qm_sgemm_
func.func @matmul_twice(%a: memref<16x16xf32>, %b: memref<16x16xf32>, %c: memref<16x16xf32>, %d: memref<16x16xf32>) {
  linalg.matmul ins(%a, %b : memref<16x16xf32>, memref<16x16xf32>)
                outs(%c : memref<16x16xf32>)
  linalg.matmul ins(%a, %b : memref<16x16xf32>, memref<16x16xf32>)
                outs(%d : memref<16x16xf32>)
  return
}

// -----

// B transposed through indexing_maps: B is stored N x K, ldb = K.
// CHECK-LABEL: func.func @matmul_transpose_b(
// CHECK:         llvm.call @qm_sgemm_24x40x12_nt_lda12_ldb12_ldc40_
func.func @matmul_transpose_b(%a: memref<24x12xf32>, %b: memref<40x12xf32>, %c: memref<24x40xf32>) {
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                 affine_map<(d0, d1, d2) -> (d1, d2)>,
                                 affine_map<(d0, d1, d2) -> (d0, d1)>]
                ins(%a, %b : memref<24x12xf32>, memref<40x12xf32>)
                outs(%c : memref<24x40xf32>)
  return
}

// -----

// A transposed: A is stored K x M, lda = M.
// CHECK-LABEL: func.func @matmul_transpose_a(
// CHECK:         llvm.call @qm_sgemm_24x40x12_tn_lda24_ldb40_ldc40_
func.func @matmul_transpose_a(%a: memref<12x24xf32>, %b: memref<12x40xf32>, %c: memref<24x40xf32>) {
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>,
                                 affine_map<(d0, d1, d2) -> (d2, d1)>,
                                 affine_map<(d0, d1, d2) -> (d0, d1)>]
                ins(%a, %b : memref<12x24xf32>, memref<12x40xf32>)
                outs(%c : memref<24x40xf32>)
  return
}

// -----

// Strided subviews: leading dimensions come from the strides, the offset
// from the strided metadata at run time.
// CHECK-LABEL: func.func @matmul_subview(
// CHECK:         %{{.+}}, %[[OFF:.+]], %{{.+}}:2, %{{.+}}:2 = memref.extract_strided_metadata %{{.+}} : memref<10x20xf32, strided<[100, 1], offset: ?>>
// CHECK:         arith.muli %[[OFF]]
// CHECK:         llvm.call @qm_sgemm_10x30x20_nn_lda100_ldb64_ldc31_
func.func @matmul_subview(%big: memref<50x100xf32>, %b: memref<20x30xf32, strided<[64, 1]>>, %c: memref<10x30xf32, strided<[31, 1], offset: 5>>, %i: index) {
  %a = memref.subview %big[%i, 3] [10, 20] [1, 1] : memref<50x100xf32> to memref<10x20xf32, strided<[100, 1], offset: ?>>
  linalg.matmul ins(%a, %b : memref<10x20xf32, strided<[100, 1], offset: ?>>, memref<20x30xf32, strided<[64, 1]>>)
                outs(%c : memref<10x30xf32, strided<[31, 1], offset: 5>>)
  return
}

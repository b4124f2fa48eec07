// The NVIDIA target end to end (scripts/device-pass-prepare.sh compiles it
// with the pass for sm_90a and the stock lowering to an object;
// scripts/device-check.sh links it with pass-e2e-driver.c and the CUDA
// driver on a GPU machine and runs it): three contractions on device
// memory, each a launch of a kernel the module embeds.

// C += A B, bf16, edges in every dimension of the 128 x 128 tiles: wgmma
// with the copy engine's tensor maps.
func.func @gemm_bf16(%A: memref<1000x336xbf16>, %B: memref<336x776xbf16>,
                     %C: memref<1000x776xf32>) attributes {llvm.emit_c_interface} {
  linalg.matmul ins(%A, %B : memref<1000x336xbf16>, memref<336x776xbf16>)
                outs(%C : memref<1000x776xf32>)
  return
}

// C += A B^T (B N x K through indexing_maps, as a linear layer's weights),
// f32 multiplied in tf32 (tf32=true): wgmma reads B K-major.
func.func @linear_tf32(%A: memref<200x96xf32>, %W: memref<136x96xf32>,
                       %C: memref<200x136xf32>) attributes {llvm.emit_c_interface} {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                 affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
                ins(%A, %W : memref<200x96xf32>, memref<136x96xf32>)
                outs(%C : memref<200x136xf32>)
  return
}

// C += A B, f16, K off the 16-byte strides the copy engine needs: mma.sync
// with pointers.
func.func @gemm_f16(%A: memref<130x333xf16>, %B: memref<333x70xf16>,
                    %C: memref<130x70xf32>) attributes {llvm.emit_c_interface} {
  linalg.matmul ins(%A, %B : memref<130x333xf16>, memref<333x70xf16>)
                outs(%C : memref<130x70xf32>)
  return
}

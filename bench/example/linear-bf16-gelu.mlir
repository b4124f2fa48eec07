// The two linear layers of bench/example/linear-bf16.mlir with aten.gelu
// (exact: erf) between the bf16 GEMM's f32 sums and the truncf to bf16, as
// torch-mlir lowers a bf16 transformer MLP's activation: "up" is the GEMM
// 128x3072x768, "down" 128x768x3072 (gelu after both, so that each shape
// shows). `bench/epilogue.sh build 5 '' bench/example/linear-bf16-gelu.mlir`
// runs it with --qimeng-tensorop with and without fuse-epilogues (gelu
// computed on the kernel's f32 sums, then rounded once into its bf16
// output; or the kernel's f32 C, then the stock-lowered generic with
// math.erf through libm's erff) and compares the times it prints: seconds
// per call, best and mean of 25 after 3 warm-up calls, and a checksum (sum
// of |y|), which agree to about six digits (a few elements may round to
// the neighbouring bf16).

#id2 = affine_map<(d0, d1) -> (d0, d1)>

func.func @up(%x: tensor<128x768xbf16>, %w: tensor<3072x768xbf16>) -> tensor<128x3072xbf16> {
  %zero = arith.constant 0.0 : f32
  %wt0 = tensor.empty() : tensor<768x3072xbf16>
  %wt = linalg.transpose ins(%w : tensor<3072x768xbf16>) outs(%wt0 : tensor<768x3072xbf16>) permutation = [1, 0]
  %acc0 = tensor.empty() : tensor<128x3072xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<128x3072xf32>) -> tensor<128x3072xf32>
  %mm = linalg.matmul ins(%x, %wt : tensor<128x768xbf16>, tensor<768x3072xbf16>) outs(%acc : tensor<128x3072xf32>) -> tensor<128x3072xf32>
  %out0 = tensor.empty() : tensor<128x3072xbf16>
  %y = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<128x3072xf32>) outs(%out0 : tensor<128x3072xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %rsqrt2 = arith.constant 0.707106769 : f32
    %arg = arith.mulf %v, %rsqrt2 : f32
    %erf = math.erf %arg : f32
    %plus1 = arith.addf %one, %erf : f32
    %cdf = arith.mulf %half, %plus1 : f32
    %g = arith.mulf %v, %cdf : f32
    %t = arith.truncf %g : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<128x3072xbf16>
  return %y : tensor<128x3072xbf16>
}

func.func @down(%h: tensor<128x3072xbf16>, %w: tensor<768x3072xbf16>) -> tensor<128x768xbf16> {
  %zero = arith.constant 0.0 : f32
  %wt0 = tensor.empty() : tensor<3072x768xbf16>
  %wt = linalg.transpose ins(%w : tensor<768x3072xbf16>) outs(%wt0 : tensor<3072x768xbf16>) permutation = [1, 0]
  %acc0 = tensor.empty() : tensor<128x768xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<128x768xf32>) -> tensor<128x768xf32>
  %mm = linalg.matmul ins(%h, %wt : tensor<128x3072xbf16>, tensor<3072x768xbf16>) outs(%acc : tensor<128x768xf32>) -> tensor<128x768xf32>
  %out0 = tensor.empty() : tensor<128x768xbf16>
  %y = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<128x768xf32>) outs(%out0 : tensor<128x768xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %rsqrt2 = arith.constant 0.707106769 : f32
    %arg = arith.mulf %v, %rsqrt2 : f32
    %erf = math.erf %arg : f32
    %plus1 = arith.addf %one, %erf : f32
    %cdf = arith.mulf %half, %plus1 : f32
    %g = arith.mulf %v, %cdf : f32
    %t = arith.truncf %g : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<128x768xbf16>
  return %y : tensor<128x768xbf16>
}

// (i * x + j * y) mod 5 - 2 as bf16 (exact).
func.func private @pattern(%t: tensor<?x?xbf16>, %x: index, %y: index) -> tensor<?x?xbf16> {
  %r = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%t : tensor<?x?xbf16>) {
  ^bb0(%o: bf16):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ix = arith.muli %i, %x : index
    %jy = arith.muli %j, %y : index
    %s = arith.addi %ix, %jy : index
    %c5 = arith.constant 5 : index
    %m = arith.remui %s, %c5 : index
    %mi = arith.index_cast %m : index to i64
    %c2 = arith.constant 2 : i64
    %v = arith.subi %mi, %c2 : i64
    %f = arith.sitofp %v : i64 to bf16
    linalg.yield %f : bf16
  } -> tensor<?x?xbf16>
  return %r : tensor<?x?xbf16>
}

func.func private @rtclock() -> f64

// Sum of |y| in f64.
func.func @checksum(%y: tensor<?x?xbf16>) -> f64 {
  %zero = arith.constant 0.0 : f64
  %sum0 = tensor.empty() : tensor<f64>
  %sumi = linalg.fill ins(%zero : f64) outs(%sum0 : tensor<f64>) -> tensor<f64>
  %sum = linalg.generic {indexing_maps = [#id2, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<?x?xbf16>) outs(%sumi : tensor<f64>) {
  ^bb0(%v: bf16, %acc: f64):
    %a = math.absf %v : bf16
    %d = arith.extf %a : bf16 to f64
    %s = arith.addf %acc, %d : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  %total = tensor.extract %sum[] : tensor<f64>
  return %total : f64
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c25 = arith.constant 25 : index
  %c128 = arith.constant 128 : index
  %c768 = arith.constant 768 : index
  %c3072 = arith.constant 3072 : index
  %e0 = tensor.empty(%c128, %c768) : tensor<?x?xbf16>
  %x0 = call @pattern(%e0, %c1, %c2) : (tensor<?x?xbf16>, index, index) -> tensor<?x?xbf16>
  %x = tensor.cast %x0 : tensor<?x?xbf16> to tensor<128x768xbf16>
  %eh = tensor.empty(%c128, %c3072) : tensor<?x?xbf16>
  %h0 = call @pattern(%eh, %c2, %c1) : (tensor<?x?xbf16>, index, index) -> tensor<?x?xbf16>
  %h = tensor.cast %h0 : tensor<?x?xbf16> to tensor<128x3072xbf16>
  %e1 = tensor.empty(%c3072, %c768) : tensor<?x?xbf16>
  %w10 = call @pattern(%e1, %c2, %c3) : (tensor<?x?xbf16>, index, index) -> tensor<?x?xbf16>
  %w1 = tensor.cast %w10 : tensor<?x?xbf16> to tensor<3072x768xbf16>
  %e2 = tensor.empty(%c768, %c3072) : tensor<?x?xbf16>
  %w20 = call @pattern(%e2, %c3, %c1) : (tensor<?x?xbf16>, index, index) -> tensor<?x?xbf16>
  %w2 = tensor.cast %w20 : tensor<?x?xbf16> to tensor<768x3072xbf16>
  %inf = arith.constant 1.0e30 : f64
  %zt = arith.constant 0.0 : f64
  %n = arith.constant 25.0 : f64
  // up: three warm-up calls, 25 timed.
  scf.for %i = %c0 to %c3 step %c1 {
    %w = func.call @up(%x, %w1) : (tensor<128x768xbf16>, tensor<3072x768xbf16>) -> tensor<128x3072xbf16>
  }
  %ub, %ut = scf.for %i = %c0 to %c25 step %c1 iter_args(%b = %inf, %t = %zt) -> (f64, f64) {
    %t0 = func.call @rtclock() : () -> f64
    %out = func.call @up(%x, %w1) : (tensor<128x768xbf16>, tensor<3072x768xbf16>) -> tensor<128x3072xbf16>
    %t1 = func.call @rtclock() : () -> f64
    %dt = arith.subf %t1, %t0 : f64
    %nb = arith.minimumf %b, %dt : f64
    %nt = arith.addf %t, %dt : f64
    scf.yield %nb, %nt : f64, f64
  }
  %uy = call @up(%x, %w1) : (tensor<128x768xbf16>, tensor<3072x768xbf16>) -> tensor<128x3072xbf16>
  %uyd = tensor.cast %uy : tensor<128x3072xbf16> to tensor<?x?xbf16>
  %us = call @checksum(%uyd) : (tensor<?x?xbf16>) -> f64
  %um = arith.divf %ut, %n : f64
  // down: likewise.
  scf.for %i = %c0 to %c3 step %c1 {
    %w = func.call @down(%h, %w2) : (tensor<128x3072xbf16>, tensor<768x3072xbf16>) -> tensor<128x768xbf16>
  }
  %db, %dt_ = scf.for %i = %c0 to %c25 step %c1 iter_args(%b = %inf, %t = %zt) -> (f64, f64) {
    %t0 = func.call @rtclock() : () -> f64
    %out = func.call @down(%h, %w2) : (tensor<128x3072xbf16>, tensor<768x3072xbf16>) -> tensor<128x768xbf16>
    %t1 = func.call @rtclock() : () -> f64
    %dt = arith.subf %t1, %t0 : f64
    %nb = arith.minimumf %b, %dt : f64
    %nt = arith.addf %t, %dt : f64
    scf.yield %nb, %nt : f64, f64
  }
  %dy = call @down(%h, %w2) : (tensor<128x3072xbf16>, tensor<768x3072xbf16>) -> tensor<128x768xbf16>
  %dyd = tensor.cast %dy : tensor<128x768xbf16> to tensor<?x?xbf16>
  %ds = call @checksum(%dyd) : (tensor<?x?xbf16>) -> f64
  %dm = arith.divf %dt_, %n : f64
  vector.print str "up   128x768 -> 3072 (GEMM 128x3072x768, bf16) + gelu + truncf: best, mean seconds, checksum = "
  vector.print %ub : f64
  vector.print %um : f64
  vector.print %us : f64
  vector.print str "down 128x3072 -> 768 (GEMM 128x768x3072, bf16) + gelu + truncf: best, mean seconds, checksum = "
  vector.print %db : f64
  vector.print %dm : f64
  vector.print %ds : f64
  return
}

// The two linear layers of bench/example/linear-relu.mlir with mish
// instead of relu (YOLOv4's activation), on tensors as torch-mlir lowers
// aten.linear + aten.mish (softplus with beta 1 and threshold 20, tanh, the
// product with x): "up" is 128x768 -> 3072 (the GEMM 128x3072x768), "down"
// 128x3072 -> 768 (128x768x3072).
// `bench/epilogue.sh build 5 '' bench/example/linear-mish.mlir` runs it with
// --qimeng-tensorop with and without fuse-epilogues (the stock side's
// math.exp, math.log1p and math.tanh through libm) and compares the times
// it prints: seconds per call, best and mean of 25 after 3 warm-up calls,
// and a checksum, which agree to about six digits (the fused kernel
// computes mish to a few ulps, docs/KernelContract.md "Smooth
// activations").

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

func.func @up(%x: tensor<128x768xf32>, %w: tensor<3072x768xf32>, %b: tensor<3072xf32>) -> tensor<128x3072xf32> {
  %zero = arith.constant 0.0 : f32
  %wt0 = tensor.empty() : tensor<768x3072xf32>
  %wt = linalg.transpose ins(%w : tensor<3072x768xf32>) outs(%wt0 : tensor<768x3072xf32>) permutation = [1, 0]
  %acc0 = tensor.empty() : tensor<128x3072xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<128x3072xf32>) -> tensor<128x3072xf32>
  %mm = linalg.matmul ins(%x, %wt : tensor<128x768xf32>, tensor<768x3072xf32>) outs(%acc : tensor<128x3072xf32>) -> tensor<128x3072xf32>
  %out0 = tensor.empty() : tensor<128x3072xf32>
  %y = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<128x3072xf32>, tensor<3072xf32>) outs(%out0 : tensor<128x3072xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %threshold = arith.constant 20.0 : f32
    %s = arith.addf %v, %bias : f32
    %e = math.exp %s : f32
    %l = math.log1p %e : f32
    %gt = arith.cmpf ugt, %s, %threshold : f32
    %sp = arith.select %gt, %s, %l : f32
    %t = math.tanh %sp : f32
    %r = arith.mulf %s, %t : f32
    linalg.yield %r : f32
  } -> tensor<128x3072xf32>
  return %y : tensor<128x3072xf32>
}

func.func @down(%h: tensor<128x3072xf32>, %w: tensor<768x3072xf32>, %b: tensor<768xf32>) -> tensor<128x768xf32> {
  %zero = arith.constant 0.0 : f32
  %wt0 = tensor.empty() : tensor<3072x768xf32>
  %wt = linalg.transpose ins(%w : tensor<768x3072xf32>) outs(%wt0 : tensor<3072x768xf32>) permutation = [1, 0]
  %acc0 = tensor.empty() : tensor<128x768xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<128x768xf32>) -> tensor<128x768xf32>
  %mm = linalg.matmul ins(%h, %wt : tensor<128x3072xf32>, tensor<3072x768xf32>) outs(%acc : tensor<128x768xf32>) -> tensor<128x768xf32>
  %out0 = tensor.empty() : tensor<128x768xf32>
  %y = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<128x768xf32>, tensor<768xf32>) outs(%out0 : tensor<128x768xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %threshold = arith.constant 20.0 : f32
    %s = arith.addf %v, %bias : f32
    %e = math.exp %s : f32
    %l = math.log1p %e : f32
    %gt = arith.cmpf ugt, %s, %threshold : f32
    %sp = arith.select %gt, %s, %l : f32
    %t = math.tanh %sp : f32
    %r = arith.mulf %s, %t : f32
    linalg.yield %r : f32
  } -> tensor<128x768xf32>
  return %y : tensor<128x768xf32>
}

// (i * x + j * y) mod 5 - 2 as f32.
func.func private @pattern(%t: tensor<?x?xf32>, %x: index, %y: index) -> tensor<?x?xf32> {
  %r = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%t : tensor<?x?xf32>) {
  ^bb0(%o: f32):
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
    %f = arith.sitofp %v : i64 to f32
    linalg.yield %f : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

func.func private @rtclock() -> f64

// Sum of |y| in f64 (exact: small integers).
func.func @checksum(%y: tensor<?x?xf32>) -> f64 {
  %zero = arith.constant 0.0 : f64
  %sum0 = tensor.empty() : tensor<f64>
  %sumi = linalg.fill ins(%zero : f64) outs(%sum0 : tensor<f64>) -> tensor<f64>
  %sum = linalg.generic {indexing_maps = [#id2, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<?x?xf32>) outs(%sumi : tensor<f64>) {
  ^bb0(%v: f32, %acc: f64):
    %a = math.absf %v : f32
    %d = arith.extf %a : f32 to f64
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
  %e0 = tensor.empty(%c128, %c768) : tensor<?x?xf32>
  %x0 = call @pattern(%e0, %c1, %c2) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %x = tensor.cast %x0 : tensor<?x?xf32> to tensor<128x768xf32>
  %eh = tensor.empty(%c128, %c3072) : tensor<?x?xf32>
  %h0 = call @pattern(%eh, %c2, %c1) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %h = tensor.cast %h0 : tensor<?x?xf32> to tensor<128x3072xf32>
  %e1 = tensor.empty(%c3072, %c768) : tensor<?x?xf32>
  %w10 = call @pattern(%e1, %c2, %c3) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %w1 = tensor.cast %w10 : tensor<?x?xf32> to tensor<3072x768xf32>
  %e2 = tensor.empty(%c768, %c3072) : tensor<?x?xf32>
  %w20 = call @pattern(%e2, %c3, %c1) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %w2 = tensor.cast %w20 : tensor<?x?xf32> to tensor<768x3072xf32>
  %e3 = tensor.empty(%c1, %c3072) : tensor<?x?xf32>
  %b10 = call @pattern(%e3, %c1, %c1) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %b1s = tensor.cast %b10 : tensor<?x?xf32> to tensor<1x3072xf32>
  %b1 = tensor.collapse_shape %b1s [[0, 1]] : tensor<1x3072xf32> into tensor<3072xf32>
  %e4 = tensor.empty(%c1, %c768) : tensor<?x?xf32>
  %b20 = call @pattern(%e4, %c1, %c2) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %b2s = tensor.cast %b20 : tensor<?x?xf32> to tensor<1x768xf32>
  %b2 = tensor.collapse_shape %b2s [[0, 1]] : tensor<1x768xf32> into tensor<768xf32>
  %inf = arith.constant 1.0e30 : f64
  %zt = arith.constant 0.0 : f64
  %n = arith.constant 25.0 : f64
  // up: three warm-up calls, 25 timed.
  scf.for %i = %c0 to %c3 step %c1 {
    %w = func.call @up(%x, %w1, %b1) : (tensor<128x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>) -> tensor<128x3072xf32>
  }
  %ub, %ut = scf.for %i = %c0 to %c25 step %c1 iter_args(%b = %inf, %t = %zt) -> (f64, f64) {
    %t0 = func.call @rtclock() : () -> f64
    %out = func.call @up(%x, %w1, %b1) : (tensor<128x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>) -> tensor<128x3072xf32>
    %t1 = func.call @rtclock() : () -> f64
    %dt = arith.subf %t1, %t0 : f64
    %nb = arith.minimumf %b, %dt : f64
    %nt = arith.addf %t, %dt : f64
    scf.yield %nb, %nt : f64, f64
  }
  %uy = call @up(%x, %w1, %b1) : (tensor<128x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>) -> tensor<128x3072xf32>
  %uyd = tensor.cast %uy : tensor<128x3072xf32> to tensor<?x?xf32>
  %us = call @checksum(%uyd) : (tensor<?x?xf32>) -> f64
  %um = arith.divf %ut, %n : f64
  // down: likewise.
  scf.for %i = %c0 to %c3 step %c1 {
    %w = func.call @down(%h, %w2, %b2) : (tensor<128x3072xf32>, tensor<768x3072xf32>, tensor<768xf32>) -> tensor<128x768xf32>
  }
  %db, %dt_ = scf.for %i = %c0 to %c25 step %c1 iter_args(%b = %inf, %t = %zt) -> (f64, f64) {
    %t0 = func.call @rtclock() : () -> f64
    %out = func.call @down(%h, %w2, %b2) : (tensor<128x3072xf32>, tensor<768x3072xf32>, tensor<768xf32>) -> tensor<128x768xf32>
    %t1 = func.call @rtclock() : () -> f64
    %dt = arith.subf %t1, %t0 : f64
    %nb = arith.minimumf %b, %dt : f64
    %nt = arith.addf %t, %dt : f64
    scf.yield %nb, %nt : f64, f64
  }
  %dy = call @down(%h, %w2, %b2) : (tensor<128x3072xf32>, tensor<768x3072xf32>, tensor<768xf32>) -> tensor<128x768xf32>
  %dyd = tensor.cast %dy : tensor<128x768xf32> to tensor<?x?xf32>
  %ds = call @checksum(%dyd) : (tensor<?x?xf32>) -> f64
  %dm = arith.divf %dt_, %n : f64
  vector.print str "up   128x768 -> 3072 (GEMM 128x3072x768) + bias + mish: best, mean seconds, checksum = "
  vector.print %ub : f64
  vector.print %um : f64
  vector.print %us : f64
  vector.print str "down 128x3072 -> 768 (GEMM 128x768x3072) + bias + mish: best, mean seconds, checksum = "
  vector.print %db : f64
  vector.print %dm : f64
  vector.print %ds : f64
  return
}

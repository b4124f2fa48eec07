// A model-sized module as torch-mlir lowers it: a 2-layer MLP (batch 128,
// hidden 768 -> 3072 -> 768; aten.linear as a transposed weight, a
// zero-filled matmul, a broadcast bias and relu), on tensors. bench/mlp.sh
// bufferizes it, runs it with and without --qimeng-tensorop under
// mlir-runner-22 and prints the time of a forward pass (best and mean of
// five, after a warm-up) and a checksum of
// the output (equal in both: small-integer inputs make every sum exact).

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

func.func @linear(%x: tensor<128x768xf32>, %w: tensor<3072x768xf32>, %b: tensor<3072xf32>) -> tensor<128x3072xf32> {
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
    %s = arith.addf %v, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<128x3072xf32>
  return %y : tensor<128x3072xf32>
}

func.func @projection(%h: tensor<128x3072xf32>, %w: tensor<768x3072xf32>, %b: tensor<768xf32>) -> tensor<128x768xf32> {
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
    %s = arith.addf %v, %bias : f32
    linalg.yield %s : f32
  } -> tensor<128x768xf32>
  return %y : tensor<128x768xf32>
}

func.func @mlp(%x: tensor<128x768xf32>, %w1: tensor<3072x768xf32>, %b1: tensor<3072xf32>, %w2: tensor<768x3072xf32>, %b2: tensor<768xf32>) -> tensor<128x768xf32> {
  %h = call @linear(%x, %w1, %b1) : (tensor<128x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>) -> tensor<128x3072xf32>
  %y = call @projection(%h, %w2, %b2) : (tensor<128x3072xf32>, tensor<768x3072xf32>, tensor<768xf32>) -> tensor<128x768xf32>
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

func.func @main() {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c128 = arith.constant 128 : index
  %c768 = arith.constant 768 : index
  %c3072 = arith.constant 3072 : index
  %e0 = tensor.empty(%c128, %c768) : tensor<?x?xf32>
  %x0 = call @pattern(%e0, %c1, %c2) : (tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
  %x = tensor.cast %x0 : tensor<?x?xf32> to tensor<128x768xf32>
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
  // One warm-up forward pass, five timed ones (the best and the mean), and
  // one more whose output is checked.
  %warm = call @mlp(%x, %w1, %b1, %w2, %b2) : (tensor<128x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>, tensor<768x3072xf32>, tensor<768xf32>) -> tensor<128x768xf32>
  %c0 = arith.constant 0 : index
  %c5 = arith.constant 5 : index
  %inf = arith.constant 1.0e30 : f64
  %zt = arith.constant 0.0 : f64
  %best, %total_t = scf.for %i = %c0 to %c5 step %c1 iter_args(%b = %inf, %t = %zt) -> (f64, f64) {
    %t0 = func.call @rtclock() : () -> f64
    %out = func.call @mlp(%x, %w1, %b1, %w2, %b2) : (tensor<128x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>, tensor<768x3072xf32>, tensor<768xf32>) -> tensor<128x768xf32>
    %t1 = func.call @rtclock() : () -> f64
    %dt = arith.subf %t1, %t0 : f64
    %nb = arith.minimumf %b, %dt : f64
    %nt = arith.addf %t, %dt : f64
    scf.yield %nb, %nt : f64, f64
  }
  %y = call @mlp(%x, %w1, %b1, %w2, %b2) : (tensor<128x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>, tensor<768x3072xf32>, tensor<768xf32>) -> tensor<128x768xf32>
  %five = arith.constant 5.0 : f64
  %mean = arith.divf %total_t, %five : f64
  // Checksum: the sum of |y| (exact: integers far below 2^24 per element,
  // summed in f64).
  %zero = arith.constant 0.0 : f64
  %sum0 = tensor.empty() : tensor<f64>
  %sumi = linalg.fill ins(%zero : f64) outs(%sum0 : tensor<f64>) -> tensor<f64>
  %sum = linalg.generic {indexing_maps = [#id2, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<128x768xf32>) outs(%sumi : tensor<f64>) {
  ^bb0(%v: f32, %acc: f64):
    %a = math.absf %v : f32
    %d = arith.extf %a : f32 to f64
    %s = arith.addf %acc, %d : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  %total = tensor.extract %sum[] : tensor<f64>
  vector.print str "mlp 128x768 -> 3072 -> 768: seconds per forward pass, best of 5 = "
  vector.print %best : f64
  vector.print str "mlp 128x768 -> 3072 -> 768: seconds per forward pass, mean of 5 = "
  vector.print %mean : f64
  vector.print str "mlp 128x768 -> 3072 -> 768: checksum sum|y| = "
  vector.print %total : f64
  return
}

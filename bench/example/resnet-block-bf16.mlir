// A ResNet basic block as torch-mlir lowers it in bf16 (batch 1, 64
// channels at 56x56, NCHW): each 3x3 convolution pads its bf16 input
// (tensor.pad), accumulates into an f32 output initialised with its bias
// broadcast over the channels, and rounds back to bf16 (arith.truncf); relu
// after the first, the residual add and relu after the second, in bf16. On
// tensors. bench/resnet-block.sh bufferizes it, runs it with and without
// --qimeng-tensorop under mlir-runner-22 and prints the time of a forward
// pass (best and mean of five, after a warm-up) and a checksum of the
// output (equal in both: small-integer inputs keep every f32 sum exact, and
// the roundings to bf16 are the same ones).

#map4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
#chan = affine_map<(n, c, h, w) -> (c)>

func.func @conv_bias(%x: tensor<1x64x56x56xbf16>, %w: tensor<64x64x3x3xbf16>, %b: tensor<64xf32>) -> tensor<1x64x56x56xbf16> {
  %zb = arith.constant 0.0 : bf16
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zb : bf16
  } : tensor<1x64x56x56xbf16> to tensor<1x64x58x58xbf16>
  %e = tensor.empty() : tensor<1x64x56x56xf32>
  %init = linalg.generic {indexing_maps = [#chan, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%b : tensor<64xf32>) outs(%e : tensor<1x64x56x56xf32>) {
  ^bb0(%bv: f32, %o: f32):
    linalg.yield %bv : f32
  } -> tensor<1x64x56x56xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%padded, %w : tensor<1x64x58x58xbf16>, tensor<64x64x3x3xbf16>) outs(%init : tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
  %e2 = tensor.empty() : tensor<1x64x56x56xbf16>
  %r = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv : tensor<1x64x56x56xf32>) outs(%e2 : tensor<1x64x56x56xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<1x64x56x56xbf16>
  return %r : tensor<1x64x56x56xbf16>
}

func.func @block(%x: tensor<1x64x56x56xbf16>, %w1: tensor<64x64x3x3xbf16>, %b1: tensor<64xf32>, %w2: tensor<64x64x3x3xbf16>, %b2: tensor<64xf32>) -> tensor<1x64x56x56xbf16> {
  %zb = arith.constant 0.0 : bf16
  %y1 = call @conv_bias(%x, %w1, %b1) : (tensor<1x64x56x56xbf16>, tensor<64x64x3x3xbf16>, tensor<64xf32>) -> tensor<1x64x56x56xbf16>
  %e1 = tensor.empty() : tensor<1x64x56x56xbf16>
  %r1 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y1 : tensor<1x64x56x56xbf16>) outs(%e1 : tensor<1x64x56x56xbf16>) {
  ^bb0(%v: bf16, %o: bf16):
    %m = arith.maximumf %v, %zb : bf16
    linalg.yield %m : bf16
  } -> tensor<1x64x56x56xbf16>
  %y2 = call @conv_bias(%r1, %w2, %b2) : (tensor<1x64x56x56xbf16>, tensor<64x64x3x3xbf16>, tensor<64xf32>) -> tensor<1x64x56x56xbf16>
  %e2 = tensor.empty() : tensor<1x64x56x56xbf16>
  %out = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y2, %x : tensor<1x64x56x56xbf16>, tensor<1x64x56x56xbf16>) outs(%e2 : tensor<1x64x56x56xbf16>) {
  ^bb0(%v: bf16, %s: bf16, %o: bf16):
    %a = arith.addf %v, %s : bf16
    %m = arith.maximumf %a, %zb : bf16
    linalg.yield %m : bf16
  } -> tensor<1x64x56x56xbf16>
  return %out : tensor<1x64x56x56xbf16>
}

// ((a * x + b * y + c * 3 + d * 5) mod 5) - 2 at index (a, b, c, d), in bf16.
func.func private @pattern(%t: tensor<?x?x?x?xbf16>, %x: index, %y: index) -> tensor<?x?x?x?xbf16> {
  %r = linalg.generic {indexing_maps = [#map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%t : tensor<?x?x?x?xbf16>) {
  ^bb0(%o: bf16):
    %a = linalg.index 0 : index
    %b = linalg.index 1 : index
    %c = linalg.index 2 : index
    %d = linalg.index 3 : index
    %c3 = arith.constant 3 : index
    %c5 = arith.constant 5 : index
    %ax = arith.muli %a, %x : index
    %by = arith.muli %b, %y : index
    %c3x = arith.muli %c, %c3 : index
    %d5 = arith.muli %d, %c5 : index
    %s1 = arith.addi %ax, %by : index
    %s2 = arith.addi %s1, %c3x : index
    %s3 = arith.addi %s2, %d5 : index
    %m = arith.remui %s3, %c5 : index
    %mi = arith.index_cast %m : index to i64
    %two = arith.constant 2 : i64
    %v = arith.subi %mi, %two : i64
    %f = arith.sitofp %v : i64 to bf16
    linalg.yield %f : bf16
  } -> tensor<?x?x?x?xbf16>
  return %r : tensor<?x?x?x?xbf16>
}

func.func private @rtclock() -> f64

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c64 = arith.constant 64 : index
  %c56 = arith.constant 56 : index
  %ex = tensor.empty(%c1, %c64, %c56, %c56) : tensor<?x?x?x?xbf16>
  %x0 = call @pattern(%ex, %c1, %c2) : (tensor<?x?x?x?xbf16>, index, index) -> tensor<?x?x?x?xbf16>
  %x = tensor.cast %x0 : tensor<?x?x?x?xbf16> to tensor<1x64x56x56xbf16>
  %ew = tensor.empty(%c64, %c64, %c3, %c3) : tensor<?x?x?x?xbf16>
  %w10 = call @pattern(%ew, %c2, %c3) : (tensor<?x?x?x?xbf16>, index, index) -> tensor<?x?x?x?xbf16>
  %w1 = tensor.cast %w10 : tensor<?x?x?x?xbf16> to tensor<64x64x3x3xbf16>
  %w20 = call @pattern(%ew, %c3, %c1) : (tensor<?x?x?x?xbf16>, index, index) -> tensor<?x?x?x?xbf16>
  %w2 = tensor.cast %w20 : tensor<?x?x?x?xbf16> to tensor<64x64x3x3xbf16>
  %b1 = arith.constant dense<1.0> : tensor<64xf32>
  %b2 = arith.constant dense<-2.0> : tensor<64xf32>
  // One warm-up forward pass, five timed ones (the best and the mean), and
  // one more whose output is checked.
  %warm = call @block(%x, %w1, %b1, %w2, %b2) : (tensor<1x64x56x56xbf16>, tensor<64x64x3x3xbf16>, tensor<64xf32>, tensor<64x64x3x3xbf16>, tensor<64xf32>) -> tensor<1x64x56x56xbf16>
  %inf = arith.constant 1.0e30 : f64
  %zt = arith.constant 0.0 : f64
  %best, %total_t = scf.for %i = %c0 to %c5 step %c1 iter_args(%b = %inf, %t = %zt) -> (f64, f64) {
    %t0 = func.call @rtclock() : () -> f64
    %out = func.call @block(%x, %w1, %b1, %w2, %b2) : (tensor<1x64x56x56xbf16>, tensor<64x64x3x3xbf16>, tensor<64xf32>, tensor<64x64x3x3xbf16>, tensor<64xf32>) -> tensor<1x64x56x56xbf16>
    %t1 = func.call @rtclock() : () -> f64
    %dt = arith.subf %t1, %t0 : f64
    %nb = arith.minimumf %b, %dt : f64
    %nt = arith.addf %t, %dt : f64
    scf.yield %nb, %nt : f64, f64
  }
  %y = call @block(%x, %w1, %b1, %w2, %b2) : (tensor<1x64x56x56xbf16>, tensor<64x64x3x3xbf16>, tensor<64xf32>, tensor<64x64x3x3xbf16>, tensor<64xf32>) -> tensor<1x64x56x56xbf16>
  %five = arith.constant 5.0 : f64
  %mean = arith.divf %total_t, %five : f64
  // Checksum: the sum of |y| in f64 (exact: bf16 integers).
  %zero = arith.constant 0.0 : f64
  %sum0 = tensor.empty() : tensor<f64>
  %sumi = linalg.fill ins(%zero : f64) outs(%sum0 : tensor<f64>) -> tensor<f64>
  %sum = linalg.generic {indexing_maps = [#map4, affine_map<(n, c, h, w) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%y : tensor<1x64x56x56xbf16>) outs(%sumi : tensor<f64>) {
  ^bb0(%v: bf16, %acc: f64):
    %a = math.absf %v : bf16
    %d = arith.extf %a : bf16 to f64
    %s = arith.addf %acc, %d : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  %total = tensor.extract %sum[] : tensor<f64>
  vector.print str "resnet block 1x64x56x56 bf16 nchw: seconds per forward pass, best of 5 = "
  vector.print %best : f64
  vector.print str "resnet block 1x64x56x56 bf16 nchw: seconds per forward pass, mean of 5 = "
  vector.print %mean : f64
  vector.print str "resnet block 1x64x56x56 bf16 nchw: checksum sum|y| = "
  vector.print %total : f64
  return
}

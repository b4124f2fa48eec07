// Two 3x3 convolutions of a ResNet-50 in bf16, as torch-mlir lowers
// aten.convolution on bf16 tensors with a bias: tensor.pad of the bf16
// image, an f32 accumulator initialised with the bias broadcast along the
// channels, linalg.conv_2d_nchw_fchw on bf16 x bf16 -> f32, then
// arith.truncf back to bf16. "res2" is 64 -> 64 channels at 56x56, "res3"
// 128 -> 128 at 28x28. bench/epilogue.sh runs it with --qimeng-tensorop
// with and without fuse-epilogues (the truncf as the kernel's bf16 output,
// or the stock-lowered generic after the kernel) and compares the times it
// prints: seconds per call, best and mean of 25 after 3 warm-up calls, and
// a checksum (the same roundings either way: it must agree exactly).

#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
#chan = affine_map<(n, c, h, w) -> (c)>

func.func @res2(%x: tensor<1x64x56x56xbf16>, %w: tensor<64x64x3x3xbf16>, %b: tensor<64xf32>) -> tensor<1x64x56x56xbf16> {
  %zb = arith.constant 0.0 : bf16
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zb : bf16
  } : tensor<1x64x56x56xbf16> to tensor<1x64x58x58xbf16>
  %e = tensor.empty() : tensor<1x64x56x56xf32>
  %init = linalg.generic {indexing_maps = [#chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%b : tensor<64xf32>) outs(%e : tensor<1x64x56x56xf32>) {
  ^bb0(%bv: f32, %o: f32):
    linalg.yield %bv : f32
  } -> tensor<1x64x56x56xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%padded, %w : tensor<1x64x58x58xbf16>, tensor<64x64x3x3xbf16>) outs(%init : tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
  %e2 = tensor.empty() : tensor<1x64x56x56xbf16>
  %y = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv : tensor<1x64x56x56xf32>) outs(%e2 : tensor<1x64x56x56xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<1x64x56x56xbf16>
  return %y : tensor<1x64x56x56xbf16>
}

func.func @res3(%x: tensor<1x128x28x28xbf16>, %w: tensor<128x128x3x3xbf16>, %b: tensor<128xf32>) -> tensor<1x128x28x28xbf16> {
  %zb = arith.constant 0.0 : bf16
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zb : bf16
  } : tensor<1x128x28x28xbf16> to tensor<1x128x30x30xbf16>
  %e = tensor.empty() : tensor<1x128x28x28xf32>
  %init = linalg.generic {indexing_maps = [#chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%b : tensor<128xf32>) outs(%e : tensor<1x128x28x28xf32>) {
  ^bb0(%bv: f32, %o: f32):
    linalg.yield %bv : f32
  } -> tensor<1x128x28x28xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%padded, %w : tensor<1x128x30x30xbf16>, tensor<128x128x3x3xbf16>) outs(%init : tensor<1x128x28x28xf32>) -> tensor<1x128x28x28xf32>
  %e2 = tensor.empty() : tensor<1x128x28x28xbf16>
  %y = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv : tensor<1x128x28x28xf32>) outs(%e2 : tensor<1x128x28x28xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<1x128x28x28xbf16>
  return %y : tensor<1x128x28x28xbf16>
}

// (c * x + h * y + w) mod 5 - 2 at (n, c, h, w), as bf16 (exact).
func.func private @pattern(%t: tensor<?x?x?x?xbf16>, %x: index, %y: index) -> tensor<?x?x?x?xbf16> {
  %r = linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%t : tensor<?x?x?x?xbf16>) {
  ^bb0(%o: bf16):
    %c = linalg.index 1 : index
    %h = linalg.index 2 : index
    %w = linalg.index 3 : index
    %cx = arith.muli %c, %x : index
    %hy = arith.muli %h, %y : index
    %s0 = arith.addi %cx, %hy : index
    %s = arith.addi %s0, %w : index
    %c5 = arith.constant 5 : index
    %m = arith.remui %s, %c5 : index
    %mi = arith.index_cast %m : index to i64
    %c2 = arith.constant 2 : i64
    %v = arith.subi %mi, %c2 : i64
    %f = arith.sitofp %v : i64 to bf16
    linalg.yield %f : bf16
  } -> tensor<?x?x?x?xbf16>
  return %r : tensor<?x?x?x?xbf16>
}

// A bias of -2, -1, 0, 1 by channel (exact).
func.func private @bias(%t: tensor<?xf32>) -> tensor<?xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(c) -> (c)>], iterator_types = ["parallel"]} outs(%t : tensor<?xf32>) {
  ^bb0(%o: f32):
    %c = linalg.index 0 : index
    %c4 = arith.constant 4 : index
    %m = arith.remui %c, %c4 : index
    %mi = arith.index_cast %m : index to i64
    %c2 = arith.constant 2 : i64
    %v = arith.subi %mi, %c2 : i64
    %f = arith.sitofp %v : i64 to f32
    linalg.yield %f : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}

func.func private @rtclock() -> f64

// Sum of |y| in f64 (exact: the bf16 values are integers).
func.func @checksum(%y: tensor<?x?x?x?xbf16>) -> f64 {
  %zero = arith.constant 0.0 : f64
  %sum0 = tensor.empty() : tensor<f64>
  %sumi = linalg.fill ins(%zero : f64) outs(%sum0 : tensor<f64>) -> tensor<f64>
  %sum = linalg.generic {indexing_maps = [#id4, affine_map<(n, c, h, w) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%y : tensor<?x?x?x?xbf16>) outs(%sumi : tensor<f64>) {
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
  %c28 = arith.constant 28 : index
  %c56 = arith.constant 56 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %ex2 = tensor.empty(%c1, %c64, %c56, %c56) : tensor<?x?x?x?xbf16>
  %x20 = call @pattern(%ex2, %c1, %c2) : (tensor<?x?x?x?xbf16>, index, index) -> tensor<?x?x?x?xbf16>
  %x2 = tensor.cast %x20 : tensor<?x?x?x?xbf16> to tensor<1x64x56x56xbf16>
  %ew2 = tensor.empty(%c64, %c64, %c3, %c3) : tensor<?x?x?x?xbf16>
  %w20 = call @pattern(%ew2, %c3, %c1) : (tensor<?x?x?x?xbf16>, index, index) -> tensor<?x?x?x?xbf16>
  %w2 = tensor.cast %w20 : tensor<?x?x?x?xbf16> to tensor<64x64x3x3xbf16>
  %eb2 = tensor.empty(%c64) : tensor<?xf32>
  %b20 = call @bias(%eb2) : (tensor<?xf32>) -> tensor<?xf32>
  %b2 = tensor.cast %b20 : tensor<?xf32> to tensor<64xf32>
  %ex3 = tensor.empty(%c1, %c128, %c28, %c28) : tensor<?x?x?x?xbf16>
  %x30 = call @pattern(%ex3, %c2, %c1) : (tensor<?x?x?x?xbf16>, index, index) -> tensor<?x?x?x?xbf16>
  %x3 = tensor.cast %x30 : tensor<?x?x?x?xbf16> to tensor<1x128x28x28xbf16>
  %ew3 = tensor.empty(%c128, %c128, %c3, %c3) : tensor<?x?x?x?xbf16>
  %w30 = call @pattern(%ew3, %c1, %c3) : (tensor<?x?x?x?xbf16>, index, index) -> tensor<?x?x?x?xbf16>
  %w3 = tensor.cast %w30 : tensor<?x?x?x?xbf16> to tensor<128x128x3x3xbf16>
  %eb3 = tensor.empty(%c128) : tensor<?xf32>
  %b30 = call @bias(%eb3) : (tensor<?xf32>) -> tensor<?xf32>
  %b3 = tensor.cast %b30 : tensor<?xf32> to tensor<128xf32>
  %inf = arith.constant 1.0e30 : f64
  %zt = arith.constant 0.0 : f64
  %n = arith.constant 25.0 : f64
  // res2: three warm-up calls, 25 timed.
  scf.for %i = %c0 to %c3 step %c1 {
    %w = func.call @res2(%x2, %w2, %b2) : (tensor<1x64x56x56xbf16>, tensor<64x64x3x3xbf16>, tensor<64xf32>) -> tensor<1x64x56x56xbf16>
  }
  %rb2, %rt2 = scf.for %i = %c0 to %c25 step %c1 iter_args(%b = %inf, %t = %zt) -> (f64, f64) {
    %t0 = func.call @rtclock() : () -> f64
    %out = func.call @res2(%x2, %w2, %b2) : (tensor<1x64x56x56xbf16>, tensor<64x64x3x3xbf16>, tensor<64xf32>) -> tensor<1x64x56x56xbf16>
    %t1 = func.call @rtclock() : () -> f64
    %dt = arith.subf %t1, %t0 : f64
    %nb = arith.minimumf %b, %dt : f64
    %nt = arith.addf %t, %dt : f64
    scf.yield %nb, %nt : f64, f64
  }
  %y2 = call @res2(%x2, %w2, %b2) : (tensor<1x64x56x56xbf16>, tensor<64x64x3x3xbf16>, tensor<64xf32>) -> tensor<1x64x56x56xbf16>
  %y2d = tensor.cast %y2 : tensor<1x64x56x56xbf16> to tensor<?x?x?x?xbf16>
  %s2 = call @checksum(%y2d) : (tensor<?x?x?x?xbf16>) -> f64
  %m2 = arith.divf %rt2, %n : f64
  // res3: likewise.
  scf.for %i = %c0 to %c3 step %c1 {
    %w = func.call @res3(%x3, %w3, %b3) : (tensor<1x128x28x28xbf16>, tensor<128x128x3x3xbf16>, tensor<128xf32>) -> tensor<1x128x28x28xbf16>
  }
  %rb3, %rt3 = scf.for %i = %c0 to %c25 step %c1 iter_args(%b = %inf, %t = %zt) -> (f64, f64) {
    %t0 = func.call @rtclock() : () -> f64
    %out = func.call @res3(%x3, %w3, %b3) : (tensor<1x128x28x28xbf16>, tensor<128x128x3x3xbf16>, tensor<128xf32>) -> tensor<1x128x28x28xbf16>
    %t1 = func.call @rtclock() : () -> f64
    %dt = arith.subf %t1, %t0 : f64
    %nb = arith.minimumf %b, %dt : f64
    %nt = arith.addf %t, %dt : f64
    scf.yield %nb, %nt : f64, f64
  }
  %y3 = call @res3(%x3, %w3, %b3) : (tensor<1x128x28x28xbf16>, tensor<128x128x3x3xbf16>, tensor<128xf32>) -> tensor<1x128x28x28xbf16>
  %y3d = tensor.cast %y3 : tensor<1x128x28x28xbf16> to tensor<?x?x?x?xbf16>
  %s3 = call @checksum(%y3d) : (tensor<?x?x?x?xbf16>) -> f64
  %m3 = arith.divf %rt3, %n : f64
  vector.print str "res2 64x56x56 -> 64, 3x3 (bf16, bias, truncf): best, mean seconds, checksum = "
  vector.print %rb2 : f64
  vector.print %m2 : f64
  vector.print %s2 : f64
  vector.print str "res3 128x28x28 -> 128, 3x3 (bf16, bias, truncf): best, mean seconds, checksum = "
  vector.print %rb3 : f64
  vector.print %m3 : f64
  vector.print %s3 : f64
  return
}

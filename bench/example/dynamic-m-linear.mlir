// A linear layer on a dynamic number of rows (x: ? x 4096, w: 4096 x 4096,
// a zero-filled product), as a decoder's projection sees it: one token at
// a time, a few, a prompt. bench/dynamic-m.sh compiles it with
// --qimeng-tensorop with and without m-buckets and compares the times it
// prints: the best of 20 calls, in seconds, at 1, 4, 16 and 256 rows.
func.func @linear(%x: memref<?x4096xf32>, %w: memref<4096x4096xf32>, %y: memref<?x4096xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<?x4096xf32>)
  linalg.matmul ins(%x, %w : memref<?x4096xf32>, memref<4096x4096xf32>) outs(%y : memref<?x4096xf32>)
  return
}

func.func private @rtclock() -> f64
func.func private @printF64(f64)
func.func private @printNewline()

func.func @time(%m: index, %w: memref<4096x4096xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c20 = arith.constant 20 : index
  %one = arith.constant 1.0 : f32
  %x = memref.alloc(%m) : memref<?x4096xf32>
  %y = memref.alloc(%m) : memref<?x4096xf32>
  linalg.fill ins(%one : f32) outs(%x : memref<?x4096xf32>)
  call @linear(%x, %w, %y) : (memref<?x4096xf32>, memref<4096x4096xf32>, memref<?x4096xf32>) -> ()
  %big = arith.constant 1.0e9 : f64
  %best = scf.for %i = %c0 to %c20 step %c1 iter_args(%b = %big) -> f64 {
    %t0 = func.call @rtclock() : () -> f64
    func.call @linear(%x, %w, %y) : (memref<?x4096xf32>, memref<4096x4096xf32>, memref<?x4096xf32>) -> ()
    %t1 = func.call @rtclock() : () -> f64
    %d = arith.subf %t1, %t0 : f64
    %nb = arith.minimumf %b, %d : f64
    scf.yield %nb : f64
  }
  call @printF64(%best) : (f64) -> ()
  call @printNewline() : () -> ()
  return
}

func.func @main() {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c256 = arith.constant 256 : index
  %half = arith.constant 0.5 : f32
  %w = memref.alloc() : memref<4096x4096xf32>
  linalg.fill ins(%half : f32) outs(%w : memref<4096x4096xf32>)
  call @time(%c1, %w) : (index, memref<4096x4096xf32>) -> ()
  call @time(%c4, %w) : (index, memref<4096x4096xf32>) -> ()
  call @time(%c16, %w) : (index, memref<4096x4096xf32>) -> ()
  call @time(%c256, %w) : (index, memref<4096x4096xf32>) -> ()
  return
}

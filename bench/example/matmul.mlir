// The example of the README: a 512x512x512 f32 matmul (C += A * B), timed
// inside the module with rtclock and checked against scalar loops.
//
//   qimeng-opt matmul.mlir --qimeng-tensorop \
//     | mlir-opt-22 --convert-linalg-to-loops --expand-strided-metadata \
//         --lower-affine --convert-scf-to-cf --convert-to-llvm \
//         --reconcile-unrealized-casts \
//     | mlir-runner-22 -O3 -e main -entry-point-result=void \
//         --shared-libs=/usr/lib/llvm-22/lib/libmlir_c_runner_utils.so,/usr/lib/llvm-22/lib/libmlir_runner_utils.so,/usr/lib/llvm-22/lib/libomp.so

func.func @matmul(%a: memref<512x512xf32>, %b: memref<512x512xf32>, %c: memref<512x512xf32>) {
  linalg.matmul ins(%a, %b : memref<512x512xf32>, memref<512x512xf32>)
                outs(%c : memref<512x512xf32>)
  return
}

func.func private @fill(%m: memref<512x512xf32>, %x: index, %y: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c512 = arith.constant 512 : index
  %c9 = arith.constant 9 : index
  %c4 = arith.constant 4 : i64
  scf.for %i = %c0 to %c512 step %c1 {
    scf.for %j = %c0 to %c512 step %c1 {
      %ix = arith.muli %i, %x : index
      %jy = arith.muli %j, %y : index
      %s = arith.addi %ix, %jy : index
      %r = arith.remui %s, %c9 : index
      %ri = arith.index_cast %r : index to i64
      %v = arith.subi %ri, %c4 : i64
      %f = arith.sitofp %v : i64 to f32
      memref.store %f, %m[%i, %j] : memref<512x512xf32>
    }
  }
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c512 = arith.constant 512 : index
  %reps = arith.constant 20 : index
  %a = memref.alloc() {alignment = 64 : i64} : memref<512x512xf32>
  %b = memref.alloc() {alignment = 64 : i64} : memref<512x512xf32>
  %c = memref.alloc() {alignment = 64 : i64} : memref<512x512xf32>
  %ref = memref.alloc() {alignment = 64 : i64} : memref<512x512xf32>
  call @fill(%a, %c3, %c5) : (memref<512x512xf32>, index, index) -> ()
  call @fill(%b, %c7, %c2) : (memref<512x512xf32>, index, index) -> ()
  call @fill(%c, %c1, %c3) : (memref<512x512xf32>, index, index) -> ()
  // Reference with scalar loops: ref = C0 + A * B (exact on these integers).
  scf.for %i = %c0 to %c512 step %c1 {
    scf.for %j = %c0 to %c512 step %c1 {
      %c0v = memref.load %c[%i, %j] : memref<512x512xf32>
      %sum = scf.for %k = %c0 to %c512 step %c1 iter_args(%acc = %c0v) -> (f32) {
        %av = memref.load %a[%i, %k] : memref<512x512xf32>
        %bv = memref.load %b[%k, %j] : memref<512x512xf32>
        %p = arith.mulf %av, %bv : f32
        %s = arith.addf %acc, %p : f32
        scf.yield %s : f32
      }
      memref.store %sum, %ref[%i, %j] : memref<512x512xf32>
    }
  }
  call @matmul(%a, %b, %c) : (memref<512x512xf32>, memref<512x512xf32>, memref<512x512xf32>) -> ()
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %bad = scf.for %i = %c0 to %c512 step %c1 iter_args(%n0 = %zero) -> (i64) {
    %row = scf.for %j = %c0 to %c512 step %c1 iter_args(%n1 = %n0) -> (i64) {
      %got = memref.load %c[%i, %j] : memref<512x512xf32>
      %want = memref.load %ref[%i, %j] : memref<512x512xf32>
      %ne = arith.cmpf une, %got, %want : f32
      %inc = arith.select %ne, %one, %zero : i64
      %n2 = arith.addi %n1, %inc : i64
      scf.yield %n2 : i64
    }
    scf.yield %row : i64
  }
  // Timing: 20 calls after the checked one.
  %t0 = call @rtclock() : () -> f64
  scf.for %r = %c0 to %reps step %c1 {
    func.call @matmul(%a, %b, %c) : (memref<512x512xf32>, memref<512x512xf32>, memref<512x512xf32>) -> ()
  }
  %t1 = call @rtclock() : () -> f64
  %dt = arith.subf %t1, %t0 : f64
  %flop = arith.constant 5.36870912e9 : f64  // 20 * 2 * 512^3
  %rate = arith.divf %flop, %dt : f64
  %giga = arith.constant 1.0e9 : f64
  %gflops = arith.divf %rate, %giga : f64
  vector.print str "matmul 512x512x512 under mlir-runner: mismatches vs scalar loops = "
  vector.print %bad : i64
  vector.print str "matmul 512x512x512 under mlir-runner: GFLOPS = "
  vector.print %gflops : f64
  memref.dealloc %a : memref<512x512xf32>
  memref.dealloc %b : memref<512x512xf32>
  memref.dealloc %c : memref<512x512xf32>
  memref.dealloc %ref : memref<512x512xf32>
  return
}
func.func private @rtclock() -> f64

// A bad option is an error that names it; nothing is rewritten.
// RUN: not %qimeng-opt %s '--qimeng-tensorop=target=x86_64:znver3:avx2' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TARGET
// RUN: not %qimeng-opt %s '--qimeng-tensorop=target=:znver3' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=EMPTY
// RUN: not %qimeng-opt %s '--qimeng-tensorop=kernel-config=mr=6,foo=1' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CONFIG
// RUN: not %qimeng-opt %s '--qimeng-tensorop=kernel-config=mr=six' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NUMBER
// RUN: not %qimeng-opt %s '--qimeng-tensorop=test-inject-fault=explode' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FAULT
// RUN: not %qimeng-opt %s '--qimeng-tensorop=emit-timeout=0' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TIMEOUT
// RUN: not %qimeng-opt %s '--qimeng-tensorop=validate=maybe' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BOOL
// RUN: not %qimeng-opt %s '--qimeng-tensorop=m-buckets=1,0' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BUCKETS

// TARGET: error: qimeng-tensorop: invalid option target='x86_64:znver3:avx2': feature 'avx2' needs a + or - sign
// EMPTY: error: qimeng-tensorop: invalid option target=':znver3'
// CONFIG: error: qimeng-tensorop: invalid option kernel-config='mr=6,foo=1': unknown kernel config key 'foo'
// NUMBER: error: qimeng-tensorop: invalid option kernel-config='mr=six': kernel config 'mr' needs a non-negative integer, got 'six'
// FAULT: error: qimeng-tensorop: invalid option test-inject-fault='explode': expected drop-k, write-past-edge or drop-low
// TIMEOUT: error: qimeng-tensorop: invalid option emit-timeout=0: need at least 1 second
// BUCKETS: error: qimeng-tensorop: invalid option m-buckets='1,0': expected positive row counts separated by commas, or none
// BOOL: for the --validate option: 'maybe' is invalid value for boolean argument
func.func @matmul(%a: memref<8x8xf32>, %b: memref<8x8xf32>, %c: memref<8x8xf32>) {
  linalg.matmul ins(%a, %b : memref<8x8xf32>, memref<8x8xf32>)
                outs(%c : memref<8x8xf32>)
  return
}

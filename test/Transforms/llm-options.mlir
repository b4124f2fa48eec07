// The pass's LLM options: bad ones are errors naming them; an LLM that
// cannot be reached while tuning is a warning, and the op is still
// rewritten with the built-in policy's kernel.
// RUN: not %qimeng-opt %s '--qimeng-tensorop=llm-endpoint=ftp://x llm-model=m' 2>&1 | FileCheck %s --check-prefix=BAD-URL
// RUN: not %qimeng-opt %s '--qimeng-tensorop=llm-endpoint=http://127.0.0.1:9/v1' 2>&1 | FileCheck %s --check-prefix=NO-MODEL
// RUN: rm -rf %t && mkdir -p %t
// RUN: %if host-avx2 %{ %qimeng-opt %s '--qimeng-tensorop=tune-budget=2 threads=1 cache-dir=%t llm-endpoint=http://127.0.0.1:9/v1 llm-model=m llm-transcript=%t/llm.jsonl' -o %t/out.mlir 2> %t/err.txt %}
// RUN: %if host-avx2 %{ FileCheck %s --check-prefix=IR < %t/out.mlir %}
// RUN: %if host-avx2 %{ FileCheck %s --check-prefix=WARN < %t/err.txt %}
// RUN: %if host-avx2 %{ FileCheck %s --check-prefix=TRANSCRIPT < %t/llm.jsonl %}

// BAD-URL: qimeng-tensorop: invalid LLM options: LLM endpoint 'ftp://x' is not an http:// or https:// URL
// NO-MODEL: qimeng-tensorop: invalid LLM options: no LLM model name given

// IR-LABEL: func.func @matmul_tuned_offline(
// IR:         llvm.call @qm_sgemm_24x40x16_
// WARN: warning: LLM proposer round unusable for sgemm_m24_n40_k16{{.*}}gave up after 5 attempts{{.*}}the built-in priors went on alone
// TRANSCRIPT: "failure":"connect"

func.func @matmul_tuned_offline(%a: memref<24x16xf32>, %b: memref<16x40xf32>, %c: memref<24x40xf32>) {
  linalg.matmul ins(%a, %b : memref<24x16xf32>, memref<16x40xf32>)
                outs(%c : memref<24x40xf32>)
  return
}

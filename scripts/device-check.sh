#!/usr/bin/env bash
# The NVIDIA checks, on a machine with a GPU and the CUDA toolkit (no
# network, no LLVM needed): builds qimeng-cuda-runner with g++, writes the
# kernels with the emitters (python3) and runs each: compiled with NVRTC
# for this GPU, validated (small integers bit for bit, uniform inputs
# against an fp64 reference), timed against cuBLAS at the same precision,
# interleaved. Each case has a time limit: a kernel that hangs fails its
# case alone.
# Then, where build/device-pass/pass-e2e.o is (scripts/device-pass-prepare.sh
# makes it where LLVM is; the device tool carries build/device-pass), the
# pass's own output: linked with test/Cuda/Inputs/pass-e2e-driver.c and the
# driver, nothing of ours, and run on the GPU (sm_90a).
# Usage: scripts/device-check.sh [OUTDIR [CASES]]   (about 3 minutes on an
# H200); CASES, an extended regular expression, picks cases by name.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${1:-${OUT:-/tmp/qimeng-device-check}}"
PICK="${2:-.}"
CUDA="${CUDA_HOME:-/usr/local/cuda}"
mkdir -p "$OUT"

nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader \
  | tee "$OUT/gpu.txt" || { echo "no GPU here (nvidia-smi failed)"; exit 77; }
cap="$(head -1 "$OUT/gpu.txt" | awk -F', ' '{print $2}' | tr -d '.')"
case "$cap" in
  90) arch=sm_90a ;;
  100) arch=sm_100a ;;
  *) arch="sm_${cap}" ;;
esac
echo "CUDA: $("$CUDA/bin/nvcc" --version | tail -1)  arch: $arch"

runner="$OUT/qimeng-cuda-runner"
g++ -O2 -std=c++17 -DQIMENG_HAVE_CUBLAS=1 -I"$ROOT/include" -I"$CUDA/include" \
  "$ROOT/tools/qimeng-cuda-runner/qimeng-cuda-runner.cpp" \
  -L"$CUDA/lib64" -Wl,-rpath,"$CUDA/lib64" -lnvrtc -lcublas -ldl -lpthread \
  -o "$runner"

status=0
# name dtype m n k overwrite limit_s extra-request-fields: edges in every
# dimension for each engine first (wgmma: M, N and K off its tiles and its
# 64-deep K slabs), then the issue's shapes. The wgmma engine is only for sm_90a: on
# other GPUs those cases are left out.
while read -r name dtype m n k overwrite limit extra; do
  [ -z "$name" ] && continue
  echo "$name" | grep -qE "$PICK" || continue
  case "$extra" in *wgmma*) [ "$arch" = sm_90a ] || continue ;; esac
  printf '{"version": 1, "kind": "cuda_gemm", "arch": "%s", "dtype": "%s", "m": %s, "n": %s, "k": %s, "overwrite": %s%s}' \
    "$arch" "$dtype" "$m" "$n" "$k" "$overwrite" "$extra" \
    | PYTHONPATH="$ROOT/python_emitters" python3 -m qimeng_emitters \
    > "$OUT/$name.cu" || { echo "== $name: the emitter refused"; status=1; continue; }
  echo "== $name"
  rc=0
  timeout "$limit" "$runner" "$OUT/$name.cu" --runs 10 > "$OUT/$name.txt" 2>&1 \
    || rc=$?
  if [ "$rc" -ne 0 ]; then
    status=1
    echo "FAILED (exit $rc; 124: past the ${limit}s limit)" >> "$OUT/$name.txt"
  fi
  grep -v "^ptxas info    : \(0 bytes gmem\|Compile time\)" "$OUT/$name.txt"
done <<'CASES'
wgmma_bf16_edges bf16 1000 776 336 false 60 , "engine": "wgmma"
wgmma_bf16_small bf16 200 136 88 true 60 , "engine": "wgmma"
wgmma_f16_edges f16 1000 776 336 true 60 , "engine": "wgmma"
wgmma_bf16_edges_bn256 bf16 1000 776 336 false 60 , "engine": "wgmma", "block_n": 256
wgmma_bf16_edges_bm192 bf16 1000 776 336 false 60 , "engine": "wgmma", "block_m": 192, "block_n": 192
wgmma_bf16_edges_registers bf16 1000 776 336 false 60 , "engine": "wgmma", "epilogue": "registers"
wgmma_bf16_edges_persistent bf16 1000 776 336 false 60 , "engine": "wgmma", "persistent": true, "sms": 5
wgmma_f16_small_persistent f16 200 136 88 true 60 , "engine": "wgmma", "persistent": true, "sms": 1
wgmma_bf16_edges_persistent_bm192 bf16 1000 776 336 true 60 , "engine": "wgmma", "persistent": true, "sms": 3, "block_m": 192, "block_n": 192
wgmma_bf16_edges_bt bf16 1000 776 336 false 60 , "engine": "wgmma", "b_layout": "nk"
wgmma_bf16_edges_cluster bf16 1000 776 336 false 60 , "engine": "wgmma", "block_n": 256, "cluster": 2
wgmma_f16_small_cluster f16 200 136 88 true 60 , "engine": "wgmma", "cluster": 2
wgmma_bf16_edges_bt_cluster bf16 1000 776 336 true 60 , "engine": "wgmma", "b_layout": "nk", "cluster": 2
wgmma_tf32_edges_bt tf32 1000 776 336 false 60 , "engine": "wgmma", "b_layout": "nk"
wgmma_tf32_small_bt tf32 200 136 92 true 60 , "engine": "wgmma", "b_layout": "nk"
wgmma_tf32_edges_bt_registers tf32 1000 776 336 false 60 , "engine": "wgmma", "b_layout": "nk", "epilogue": "registers"
wgmma_tf32_edges_bt_bm192 tf32 1000 776 336 true 60 , "engine": "wgmma", "b_layout": "nk", "block_m": 192, "block_n": 192
wgmma_tf32_edges_bt_cluster tf32 1000 776 336 false 60 , "engine": "wgmma", "b_layout": "nk", "cluster": 2
mma_bf16_edges bf16 1000 770 333 false 60 , "engine": "mma"
mma_f16_small f16 200 136 88 true 60 , "engine": "mma"
mma_tf32_edges tf32 1000 770 333 false 60 , "engine": "mma"
mma_tf32_edges_bt tf32 1000 770 333 true 60 , "engine": "mma", "b_layout": "nk"
ffma_f32_edges f32 1000 770 333 true 60
ffma_f32_edges_bt f32 1000 770 333 false 60 , "b_layout": "nk"
wgmma_bf16_4096 bf16 4096 4096 4096 false 90 , "engine": "wgmma"
wgmma_bf16_4096_cluster bf16 4096 4096 4096 false 90 , "engine": "wgmma", "cluster": 2
wgmma_bf16_8192 bf16 8192 8192 8192 false 120 , "engine": "wgmma"
wgmma_bf16_8192_cluster bf16 8192 8192 8192 false 120 , "engine": "wgmma", "cluster": 2
wgmma_bf16_8192_b0 bf16 8192 8192 8192 true 120 , "engine": "wgmma"
wgmma_bf16_8192_b0_cluster bf16 8192 8192 8192 true 120 , "engine": "wgmma", "cluster": 2
wgmma_f16_8192 f16 8192 8192 8192 false 120 , "engine": "wgmma"
wgmma_f16_8192_cluster f16 8192 8192 8192 false 120 , "engine": "wgmma", "cluster": 2
wgmma_bf16_a100 bf16 16384 1024 8192 false 120 , "engine": "wgmma"
wgmma_bf16_a100_cluster bf16 16384 1024 8192 false 120 , "engine": "wgmma", "cluster": 2
wgmma_bf16_8192_registers bf16 8192 8192 8192 false 120 , "engine": "wgmma", "epilogue": "registers"
wgmma_bf16_4096_registers bf16 4096 4096 4096 false 90 , "engine": "wgmma", "epilogue": "registers"
wgmma_bf16_8192_persistent bf16 8192 8192 8192 false 120 , "engine": "wgmma", "persistent": true
wgmma_bf16_8192_g4 bf16 8192 8192 8192 false 120 , "engine": "wgmma", "raster_group": 4
wgmma_bf16_8192_g16 bf16 8192 8192 8192 false 120 , "engine": "wgmma", "raster_group": 16
wgmma_bf16_8192_bm192 bf16 8192 8192 8192 false 120 , "engine": "wgmma", "block_m": 192, "block_n": 192
wgmma_bf16_8192_bt bf16 8192 8192 8192 false 120 , "engine": "wgmma", "b_layout": "nk"
wgmma_bf16_8192_bt_cluster bf16 8192 8192 8192 false 120 , "engine": "wgmma", "b_layout": "nk", "cluster": 2
wgmma_tf32_8192_bt tf32 8192 8192 8192 false 120 , "engine": "wgmma", "b_layout": "nk"
wgmma_tf32_8192_bt_cluster tf32 8192 8192 8192 false 120 , "engine": "wgmma", "b_layout": "nk", "cluster": 2
wgmma_tf32_8192_bt_bm192 tf32 8192 8192 8192 false 120 , "engine": "wgmma", "b_layout": "nk", "block_m": 192, "block_n": 192
wgmma_tf32_4096_bt tf32 4096 4096 4096 false 90 , "engine": "wgmma", "b_layout": "nk"
mma_tf32_4096 tf32 4096 4096 4096 false 90 , "engine": "mma"
mma_bf16_4096 bf16 4096 4096 4096 false 90 , "engine": "mma"
ffma_f32_4096 f32 4096 4096 4096 false 90
CASES
e2e="$ROOT/build/device-pass/pass-e2e.o"
if ! echo pass_e2e | grep -qE "$PICK"; then
  :
elif [ ! -f "$e2e" ]; then
  echo "== pass_e2e: skipped (no $e2e: run scripts/device-pass-prepare.sh" \
    "where the LLVM build is, and carry build/device-pass)"
elif [ "$arch" != sm_90a ]; then
  echo "== pass_e2e: skipped (its kernels are for sm_90a; this GPU is $arch)"
else
  echo "== pass_e2e"
  libcuda="$(ldconfig -p | awk '/libcuda\.so\.1 /{print $NF; exit}')"
  [ -n "$libcuda" ] || libcuda="no-libcuda.so.1-in-ldconfig"
  rc=0
  { gcc -O2 -I"$CUDA/include" "$ROOT/test/Cuda/Inputs/pass-e2e-driver.c" \
      "$e2e" "$libcuda" -o "$OUT/pass-e2e" \
    && timeout 120 "$OUT/pass-e2e"; } > "$OUT/pass_e2e.txt" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ]; then
    status=1
    echo "FAILED (exit $rc)" >> "$OUT/pass_e2e.txt"
  fi
  cat "$OUT/pass_e2e.txt"
fi
echo "== summary"
grep -H -E "validated|TFLOP|ours / cuBLAS|FAILED|exact|WRONG" "$OUT"/*.txt || true
exit "$status"

#!/usr/bin/env bash
# The NVIDIA checks, on a machine with a GPU and the CUDA toolkit (no
# network, no LLVM needed): builds qimeng-cuda-runner with g++, writes the
# kernels with the emitters (python3) and runs each: compiled with NVRTC
# for this GPU, validated (small integers bit for bit, uniform inputs
# against an fp64 reference), timed against cuBLAS at the same precision.
# Usage: scripts/device-check.sh [OUTDIR]   (about 2 minutes on an H200)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${1:-${OUT:-/tmp/qimeng-device-check}}"
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
  -L"$CUDA/lib64" -Wl,-rpath,"$CUDA/lib64" -lnvrtc -lcublas -ldl -o "$runner"

status=0
# dtype m n k overwrite: edges everywhere, then the issue's shapes.
while read -r dtype m n k overwrite; do
  name="${dtype}_${m}x${n}x${k}"
  printf '{"version": 1, "kind": "cuda_gemm", "arch": "%s", "dtype": "%s", "m": %s, "n": %s, "k": %s, "overwrite": %s}' \
    "$arch" "$dtype" "$m" "$n" "$k" "$overwrite" \
    | PYTHONPATH="$ROOT/python_emitters" python3 -m qimeng_emitters > "$OUT/$name.cu"
  echo "== $name"
  if ! timeout 300 "$runner" "$OUT/$name.cu" --runs 10 2>&1 | tee "$OUT/$name.txt"; then
    status=1
  fi
done <<'CASES'
bf16 1000 770 333 false
bf16 200 136 88 true
f32 1000 770 333 true
f32 4096 4096 4096 false
bf16 4096 4096 4096 false
bf16 8192 8192 8192 false
bf16 16384 1024 8192 false
CASES
grep -h -E "^== |validated|TFLOP|cuBLAS:" "$OUT"/*.txt || true
exit "$status"

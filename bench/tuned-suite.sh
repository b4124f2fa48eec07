#!/usr/bin/env bash
# The tuned SGEMM suite of docs/Benchmarks.md (section 6): tunes every shape into
# a fresh tuning database with qimeng-tune (trial budget and a 60 s cap per
# shape), then benchmarks the tuned kernels against OpenBLAS, BLIS and
# libxsmm with qimeng-bench --tuned, at each thread count.
#
#   bench/tuned-suite.sh [BUILD_DIR] [OUT_DIR]
#
# Environment: QIMENG_SUITE_THREADS (default "1 2"), QIMENG_SUITE_BUDGET
# (trials per shape, default 60), QIMENG_SUITE_SECONDS (default 60),
# QIMENG_SUITE_SHAPES (default: the suite below).
# Writes OUT_DIR/tune-T.txt (qimeng-tune's summaries), OUT_DIR/bench-T.txt
# (the table) and OUT_DIR/bench-T.json (one JSON row per shape).
set -euo pipefail
build=${1:-build}
out=${2:-bench-results}
shapes=${QIMENG_SUITE_SHAPES:-64x64x64,128x128x128,256x256x256,512x512x512,1024x1024x1024,2048x2048x2048,1x4096x4096,16x4096x4096,128x768x768,128x3072x768,512x512x64,4096x64x4096}
budget=${QIMENG_SUITE_BUDGET:-60}
seconds=${QIMENG_SUITE_SECONDS:-60}
mkdir -p "$out"
cache=$(mktemp -d "${TMPDIR:-/tmp}/qimeng-suite-cache.XXXXXX")
trap 'rm -rf "$cache"' EXIT
for t in ${QIMENG_SUITE_THREADS:-1 2}; do
  "$build/bin/qimeng-tune" --shapes "$shapes" --threads "$t" \
    --budget "$budget" --seconds "$seconds" --cache-dir "$cache" --quiet \
    | tee "$out/tune-$t.txt"
  "$build/bin/qimeng-bench" --op sgemm --shapes "$shapes" --threads "$t" \
    --tuned --cache-dir "$cache" | tee "$out/bench-$t.txt"
  "$build/bin/qimeng-bench" --op sgemm --shapes "$shapes" --threads "$t" \
    --tuned --cache-dir "$cache" --json > "$out/bench-$t.json"
done

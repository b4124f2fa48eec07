#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine and builds QiMeng-TensorOp into build/.
# Idempotent: installs only what is missing, then (re)configures and builds.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

PACKAGES=(
  cmake ninja-build g++ python3
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  libomp-22-dev libopenblas-dev nlohmann-json3-dev libcurl4-openssl-dev libgtest-dev
  libblis-dev libxsmm-dev libdnnl-dev
  # Cross targets (AArch64, RISC-V): cross compilers for the cross runners
  # and the lit tests' static links, qemu-user to run them.
  qemu-user g++-aarch64-linux-gnu g++-riscv64-linux-gnu
  libc6-dev-arm64-cross libc6-dev-riscv64-cross
  # The remote-board evaluator runs the cross runner over ssh; its test
  # stands an sshd up on loopback.
  openssh-client openssh-server
  # OpenBLAS for arm64 through multiarch: the static model's side by side
  # reads its NEON kernels (disassembled), and the aarch64 cross runner
  # links its static library as a second opinion on the fp64 reference.
  libopenblas-pthread-dev:arm64
)

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "setup: adding the arm64 architecture (multiarch) for libopenblas-pthread-dev:arm64"
  $SUDO dpkg --add-architecture arm64
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# LLVM's OpenMP runtime for arm64, which a module of the pass's parallel
# form calls: Debian's libomp5 of the host's version, extracted into the
# build tree (installed, the arm64 package would replace the host's file
# at the same path). The lit tests link it into dynamic AArch64
# executables and run them under qemu with the multiarch arm64 glibc.
# Debian 12 has no riscv64 port, so RVV modules are compiled, not run.
OMP_ARM64="$ROOT/build/cross-libs/aarch64"
if [[ ! -e "$OMP_ARM64/libomp.so.5" ]]; then
  omp_package=$(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' 'libomp5-*' \
                  2>/dev/null | awk '$1 == "ii" && $2 ~ /^libomp5-[0-9]+$/ {print $2}' \
                  | sort -V | tail -1 || true)
  if [[ -n "$omp_package" ]]; then
    echo "setup: extracting $omp_package:arm64 into $OMP_ARM64"
    scratch=$(mktemp -d)
    if (cd "$scratch" && apt-get download -q "$omp_package:arm64" >/dev/null 2>&1); then
      dpkg-deb -x "$scratch"/*.deb "$scratch/root"
      mkdir -p "$OMP_ARM64"
      cp -L "$scratch"/root/usr/lib/llvm-*/lib/libomp.so.5 "$OMP_ARM64/"
    else
      echo "setup: could not download $omp_package:arm64; the AArch64 parallel module will not run under qemu"
    fi
    rm -rf "$scratch"
  fi
fi

cmake -G Ninja -S "$ROOT" -B "$ROOT/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "$ROOT/build"
echo "setup: built into $ROOT/build (tools in build/bin, plugin build/lib/QiMengTensorOp.so)"

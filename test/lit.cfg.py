# lit configuration for QiMeng-TensorOp: the pass (IR and remarks) and
# execution of its output under stock mlir-runner-22.
import os
import subprocess

import lit.formats
from lit.llvm import llvm_config

config.name = "QiMeng-TensorOp"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.qimeng_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Unit", "Inputs"]

llvm_config.with_system_environment(["HOME", "TMPDIR", "QIMENG_PYTHON"])
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
# Tests never read or write the user's tuning database.
config.environment["QIMENG_CACHE_DIR"] = os.path.join(
    config.test_exec_root, "qimeng-cache")
llvm_config.use_default_substitutions()

tools = config.llvm_tools_dir
plugin = os.path.join(config.qimeng_lib_dir, "QiMengTensorOp.so")
runner_libs = ",".join(
    os.path.join(config.llvm_lib_dir, lib)
    for lib in ("libmlir_c_runner_utils.so", "libmlir_runner_utils.so",
                "libomp.so"))

config.substitutions.append(
    ("%qimeng-opt", os.path.join(config.qimeng_tools_dir, "qimeng-opt")))
config.substitutions.append(
    ("%qimeng-hostinfo",
     os.path.join(config.qimeng_tools_dir, "qimeng-hostinfo")))
config.substitutions.append(("%plugin", plugin))
config.substitutions.append(("%mlir-opt", os.path.join(tools, "mlir-opt")))
config.substitutions.append(
    ("%mlir-runner", os.path.join(tools, "mlir-runner")))
config.substitutions.append(
    ("%mlir-translate", os.path.join(tools, "mlir-translate")))
config.substitutions.append(("%llc", os.path.join(tools, "llc")))
config.substitutions.append(("%llvm-nm", os.path.join(tools, "llvm-nm")))
# The same libraries as link arguments (an AOT executable of the lowered
# module: MLIR's runner utilities and OpenMP, nothing of ours).
config.substitutions.append(
    ("%runner-libs-link", runner_libs.replace(",", " ") + " "
     + os.path.join(config.llvm_lib_dir, "libmlir_float16_utils.so")))
config.substitutions.append(("%runner-libs", runner_libs))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%llvm-lib-dir", config.llvm_lib_dir))
config.substitutions.append(
    ("%qimeng-cache", os.path.join(config.qimeng_tools_dir, "qimeng-cache")))
config.substitutions.append(
    ("%qimeng-bench", os.path.join(config.qimeng_tools_dir, "qimeng-bench")))
config.substitutions.append(
    ("%qimeng-tune", os.path.join(config.qimeng_tools_dir, "qimeng-tune")))
config.substitutions.append(
    ("%qimeng-tensorop",
     os.path.join(config.qimeng_tools_dir, "qimeng-tensorop")))
# The stock lowering the pass's output must go through unchanged.
config.substitutions.append(
    ("%lower-to-llvm",
     "--convert-linalg-to-loops --expand-strided-metadata --lower-affine "
     "--convert-scf-to-cf --convert-to-llvm --reconcile-unrealized-casts"))

# What a frontend pipeline runs after bufferization: MLIR's standard
# deallocation, then the stock lowering (test/Frontend).
config.substitutions.append(
    ("%dealloc", "--buffer-deallocation-pipeline --convert-bufferization-to-memref"))
# printMemrefF32's output without the buffer's address, for diff.
config.substitutions.append(("%strip-address", "sed -e 's/base@ = 0x[0-9a-f]*//'"))

# Host features, from our own tool, gate execution tests.
hostinfo = os.path.join(config.qimeng_tools_dir, "qimeng-hostinfo")
for feature in ("avx2", "fma", "bmi2", "avx512f", "avx512bw", "avx512vl",
                "avx512bf16", "avx512vnni", "amx-bf16", "amx-int8"):
    try:
        rc = subprocess.run([hostinfo, "--has-feature=" + feature],
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL).returncode
    except OSError:
        rc = 1
    if rc == 0:
        config.available_features.add("host-" + feature)
if os.path.exists("/usr/bin/cc"):
    config.available_features.add("host-cc")
# CUDA kernels compile in process (the toolkit's NVRTC found at configure
# time); running them needs a GPU, which the tests never assume.
if config.qimeng_have_nvrtc.upper() in ("ON", "1", "TRUE", "YES"):
    config.available_features.add("nvrtc")

# Cross targets: the cross compiler links the pass's output statically and
# qemu-user runs it; the cross runner (built with the same compiler)
# validates the kernels. All three, or the tests report themselves
# unsupported (scripts/setup.sh installs them).
import shutil
for arch in ("aarch64", "riscv64"):
    cc = shutil.which(arch + "-linux-gnu-gcc")
    qemu = shutil.which("qemu-" + arch)
    runner = os.path.join(config.qimeng_tools_dir,
                          "qimeng-cross-runner-" + arch)
    if cc and qemu and os.access(runner, os.X_OK):
        config.available_features.add("cross-" + arch)
        config.substitutions.append(("%cross-cc-" + arch, cc + " -static"))
        config.substitutions.append(("%qemu-" + arch, qemu))

# LLVM's OpenMP runtime for arm64, extracted into the build tree by
# scripts/setup.sh: a module of the parallel form links it dynamically and
# runs under qemu with the multiarch arm64 glibc (libc6:arm64).
omp_arm64 = os.path.join(config.qimeng_tools_dir, os.pardir, "cross-libs",
                         "aarch64")
if ("cross-aarch64" in config.available_features
        and os.path.exists(os.path.join(omp_arm64, "libomp.so.5"))
        and os.path.exists("/lib/ld-linux-aarch64.so.1")):
    config.available_features.add("cross-aarch64-openmp")
    config.substitutions.append(
        ("%cross-cc-dynamic-aarch64", shutil.which("aarch64-linux-gnu-gcc")))
    config.substitutions.append(
        ("%openmp-aarch64", os.path.join(omp_arm64, "libomp.so.5")
         + " -Wl,-rpath," + omp_arm64))

# Debian's arm64 OpenBLAS through multiarch: the static model sets its NEON
# kernels beside ours (disassembled, never run).
if os.path.exists(
        "/usr/lib/aarch64-linux-gnu/openblas-pthread/libopenblas.so.0"):
    config.available_features.add("arm64-openblas")

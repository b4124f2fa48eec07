//===- Target.h - The hardware factors of a machine -------------*- C++ -*-===//
//
// The paper's hardware factors: registers, memory hierarchy, instructions
// (ISA features) and cores. Detected on the host, or parsed from a string so
// that tests pin the target and never depend on the machine they run on.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_KERNEL_TARGET_H
#define QIMENG_KERNEL_TARGET_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace qimeng {

/// Vector ISA a kernel is written for. The emitters implement these: the
/// x86 generator Avx2 and Avx512, the sketch-driven writers Neon and Sve
/// (AArch64; SVE built for one vector length) and Rvv (RISC-V vector 1.0,
/// built for one VLEN). Amx is AVX-512 with Intel's tile registers
/// (amx.py: bf16 and 8-bit GEMMs on TDPBF16PS, TDPBUSD and TDPBSSD).
enum class VectorIsa { None, Avx2, Avx512, Neon, Sve, Rvv, Amx };

/// True for the ISAs of the sketch-driven generator (python_emitters
/// sketch.py): kernels that take their leading dimensions at run time, one
/// thread, no transposed A yet.
bool isSketchIsa(VectorIsa isa);

/// Whether `isa`'s kernels apply the epilogue (bias, relu, relu's bound)
/// where they store C, so that the pass fuses consumers into them: every
/// vector ISA but AMX's tiles (whose kernels store C as it is).
bool isaAppliesEpilogues(VectorIsa isa);

/// Whether `isa`'s floating-point kernels apply a smooth activation
/// (sigmoid, silu, gelu_tanh, gelu_erf, hardswish, tanh, mish, softplus,
/// hardsigmoid: smooth.py's programs): AVX2 and AVX-512 (x86.py's
/// emit_smooth_activation in sgemm.py, conv2d.py through it, and dotgemm.py's
/// matrix-vector form, bf16, f16 and f32, and its bf16 and f16 blocked
/// kernels), NEON, SVE and RVV (the sketch writers' spellings, GEMM and
/// convolution).
bool isaAppliesSmoothActivations(VectorIsa isa);

/// Whether `isa`'s convolution kernels can read the input's strides from
/// their header at run time (ConvDesc::runtimeStrides): the x86 generator's
/// (conv2d.py); the sketch-driven ISAs take them as immediates.
bool isaReadsConvStridesAtRunTime(VectorIsa isa);

/// Whether `isa`'s f32 convolution kernels write an nhwc output whose
/// pixels lie more than F apart (ConvDesc::outputPixelStride): conv2d.py's
/// and the sketch-driven ISAs' (their C's rows a header leading dimension
/// apart); not AMX's tiles.
bool isaWritesStridedConvOutput(VectorIsa isa);

/// "avx2", "avx512", "neon", "sve", "rvv", "amx", "none".
llvm::StringRef isaName(VectorIsa isa);
/// Inverse of isaName; error for anything else.
llvm::Expected<VectorIsa> parseIsa(llvm::StringRef name);

struct CacheSizes {
  int64_t l1d = 32 * 1024;      ///< bytes, per core
  int64_t l2 = 1024 * 1024;     ///< bytes, per core
  int64_t l3 = 8 * 1024 * 1024; ///< bytes, shared
};

/// Parses a byte count with an optional K, M or G suffix (powers of 1024,
/// either case): "48K", "2048K", "260M", "4096". Zero is an error.
llvm::Expected<int64_t> parseByteSize(llvm::StringRef text);

/// Reads the cache sizes under a Linux sysfs cache directory such as
/// /sys/devices/system/cpu/cpu0/cache (index*/{level,type,size}): L1d is
/// level 1 Data, L2 level 2 Unified, L3 level 3 Unified. Sizes that are
/// missing or unreadable keep the value in `defaults`.
CacheSizes readCacheSizes(llvm::StringRef cacheDir, CacheSizes defaults = {});

struct Target {
  std::string triple; ///< e.g. "x86_64-unknown-linux-gnu"
  std::string cpu;    ///< LLVM CPU name, e.g. "znver3", "sapphirerapids"
  /// LLVM feature names without sign, enabled ones only, sorted: "avx2".
  std::vector<std::string> features;
  CacheSizes caches;
  int cores = 1;
  /// The vector length in bits a length-agnostic ISA's kernels are built
  /// for: RISC-V's VLEN with +v (a "vlen=N" key, a zvlNb feature or the
  /// CPU's row, spacemit-x60: 256) or SVE's with +sve (a "vlen=N" key or the
  /// CPU's row, a64fx: 512); else 128, the least either allows. 0 on other
  /// targets.
  int vlen = 0;
  /// SVE kernels for any vector length (a "vlen=scalable" key): the
  /// hardware's length is read at run time; `vlen` is then 128, the least,
  /// at which the emulator validates.
  bool scalableVectors = false;
  /// The host has AMX but Linux refused its tile data
  /// (arch_prctl(ARCH_REQ_XCOMP_PERM)): detectHost dropped the amx-*
  /// features.
  bool amxRefused = false;

  /// The host, from LLVM's host detection and Linux sysfs.
  static Target detectHost();

  /// Parses "TRIPLE[:CPU[:FEATURES]]" where FEATURES is a comma-separated
  /// LLVM feature list ("+avx2,+fma,-avx512f"); cache sizes and cores may
  /// follow as ":l1d=48K,l2=2M,l3=32M,cores=2" (and "vlen=256" for RVV or
  /// SVE, "vlen=scalable" for SVE kernels of any length).
  /// Errors say what is wrong.
  ///
  /// Features apply in order, so a later "-avx2" removes an earlier "+avx2".
  /// An empty CPU is "generic"; caches and cores not given keep the
  /// defaults of CacheSizes and 1 core. The triple's architecture must be
  /// one LLVM knows.
  static llvm::Expected<Target> parse(llvm::StringRef spec);

  bool hasFeature(llvm::StringRef name) const;
  bool isX86_64() const;
  /// Whether a register block that reads one of its B vectors from memory
  /// in each FMA (KStepOrder::BMem: AVX-512's 7 x 64, 28 accumulators)
  /// beats the 6 x 64 block of register operands on this CPU. Measured: on
  /// AMD Zen (5) the model's 7 x 64 convolutions; not on Intel's AVX-512
  /// cores (a Xeon with AMX, side by side on ResNet-50: 6 x 64 1.03-1.11x
  /// on five layers, 0.97-0.98x on res5; the f32 GEMM's 7 x 64 0.88-0.94x
  /// its 6 x 64). False for Intel's AVX-512 CPU names, true otherwise.
  bool fmaFromMemoryBlocksPay() const;
  /// Whether B's fused packing (BPacking::Fused) pays where K takes more
  /// than one kc block: every K loop iteration of its tiles then also
  /// prefetches a line of the next panel in place (KernelContract.md). On
  /// AMD Zen 1 that one instruction costs 2.2x (196x256x2304, and
  /// ResNet-50's res4 and res5 as convolutions: 16 GFLOPS against 37
  /// without it, or with B packed by its own pass; the same with the
  /// prefetch aimed at one fixed line; why is not known). False for
  /// znver1; true otherwise, where the fused packing measured ahead (Zen
  /// 5, Intel's AVX-512 cores).
  bool fusedPackingAcrossKBlocksPays() const;
  /// The triple's architecture name: "x86_64", "aarch64", "riscv64".
  std::string archName() const;
  /// True when the host can run this target's code natively: same
  /// architecture (the features are the emitter's and validator's
  /// business).
  bool sameArchAsHost() const;

  /// Machine state that inline asm changes beside the registers a kernel
  /// names, as LLVM clobber names: x86's "dirflag", "fpsr", "flags";
  /// AArch64's "nzcv"; none on RISC-V (vl and vtype are registers the
  /// kernel names).
  std::vector<std::string> inlineAsmStateClobbers() const;

  /// What the static performance model knows of a core: the llvm-mca
  /// scheduling model that stands for it (Cortex-A76 is modelled by
  /// Neoverse-N1's: LLVM's own A76 falls back to the A57 model, which halves
  /// its FMA rate) and its fp32 FMA peak in lanes a cycle (Neoverse-N1 and
  /// A76: two 128-bit FMA pipes, 8; SpacemiT X60: one LMUL-1 vfmacc a cycle
  /// at VLEN 256, 8).
  struct CoreModel {
    std::string mcaCpu;
    int fmaLanesPerCycle = 0;
    /// OpenBLAS's DYNAMIC_ARCH core for this CPU ("NEOVERSEN1"), whose
    /// sgemm kernel the model sets beside ours; empty: none.
    std::string openBlasCore;
  };
  /// The CPU's row; an error for a CPU without one.
  llvm::Expected<CoreModel> coreModel() const;

  /// The target string of a machine named in words ("spacemit k1",
  /// "cortex-a76", "neoverse n1", "k1"), or nullopt: the machines of the
  /// paper, with their caches and cores.
  static std::optional<std::string> specOfMachine(llvm::StringRef name);
  /// Every name specOfMachine knows, longest first.
  static std::vector<std::string> machineNames();
  /// One name a machine, for messages: "spacemit k1", "cortex-a76", ...
  static std::vector<std::string> machineTitles();

  /// How a kernel for this target runs on a host of another architecture:
  /// qemu-user and its -cpu model (the CPU, or its vector length).
  struct Emulation {
    std::string program;           ///< "qemu-aarch64"
    std::vector<std::string> args; ///< {"-cpu", "neoverse-n1"}
  };
  /// Error for an architecture we do not emulate.
  llvm::Expected<Emulation> emulation() const;

  /// Widest vector ISA our emitters support on this target: Avx512 on
  /// x86_64 with avx512f and fma, Avx2 on x86_64 with avx2 and fma, else
  /// None.
  VectorIsa bestIsa() const;
  /// Whether this x86-64 target may run AMX tiles for bf16 (amx-bf16) or
  /// 8-bit integers (amx-int8): the feature and amx-tile present.
  bool hasAmx(bool bf16) const;
  /// This target without its amx-* features.
  Target withoutAmx() const;
  /// Vector register width in bits and register count for an ISA (512 and
  /// 32, 256 and 16, 0 and 0 for None; Neon 128 and 32; Rvv 128, its
  /// least VLEN, and 32: a target's own is `vlen`).
  static int vectorBits(VectorIsa isa);
  static int vectorRegisters(VectorIsa isa);
  /// Rows of an A sliver the f32 microkernel reads in place when lda is a
  /// run-time value: x86 reaches them from three base registers, where B
  /// is packed ahead of the tiles (`bPackedAhead`: PACK B or prepacked, so
  /// no register holds B's row step) plus 0-12 lda through lda and 3 lda
  /// in registers, 17 rows, else three rows a base, 9 (sgemm.py,
  /// RUNTIME_A_BASES); 0 where A is not read in place.
  static int directRowsWithRuntimeLd(VectorIsa isa, bool bPackedAhead);
  /// The same for the bf16/int8 dot-product microkernels (dotgemm.py,
  /// RUNTIME_A_BASES): three base registers and lda, 3 lda in two more
  /// reach 17 rows on Avx512; 0 elsewhere.
  static int dotDirectRowsWithRuntimeLd(VectorIsa isa);

  /// The features as an LLVM -mattr string: "+avx,+avx2,+fma".
  std::string featureString() const;
  /// "TRIPLE:CPU:FEATURES:l1d=..,l2=..,l3=..,cores=N"; round-trips through
  /// parse().
  std::string str() const;
  /// One JSON object (qimeng-hostinfo --json), indented: triple, cpu,
  /// features (array), isa, vector_bits, vector_registers, caches {l1d, l2,
  /// l3} in bytes, cores.
  std::string toJson() const;
};

} // namespace qimeng

#endif // QIMENG_KERNEL_TARGET_H

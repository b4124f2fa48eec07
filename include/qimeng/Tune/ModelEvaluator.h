//===- ModelEvaluator.h - Tuning without the hardware -----------*- C++ -*-===//
//
// For a machine we do not have (the SpacemiT K1, a Cortex-A76), candidates
// are ranked by a static model instead of a stopwatch: the kernel's marked
// inner loop (a full register block's K loop, EmittedKernel::innerLoop) goes
// through llvm-mca with the core's scheduling model (Target::coreModel),
// which predicts its cycles an iteration; against the core's FMA peak that
// is the fraction of peak the microkernel reaches, and times the GEMM's
// flops (edge blocks counted as full) the predicted cycles of the kernel.
// Every figure is a model's and is labelled so: memory, the C updates and
// the edges' own code are outside it. Each candidate is validated under
// emulation before it is ranked.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_TUNE_MODELEVALUATOR_H
#define QIMENG_TUNE_MODELEVALUATOR_H

#include "qimeng/Emit/EmitterRunner.h"
#include "qimeng/Kernel/KernelConfig.h"
#include "qimeng/Kernel/KernelDesc.h"
#include "qimeng/Kernel/KernelProblem.h"
#include "qimeng/Kernel/Target.h"
#include "qimeng/Runtime/CrossValidation.h"
#include "llvm/Support/Error.h"
#include <functional>
#include <string>
#include <vector>

namespace qimeng {

struct ModelOptions {
  std::string llvmMca; ///< LLVM 22's llvm-mca (llvm-objdump beside it)
  /// The peer library for predictOpenBlasInnerLoop; empty: Debian's
  /// multiarch OpenBLAS of the target's architecture
  /// (/usr/lib/aarch64-linux-gnu/openblas-pthread/libopenblas.so.0).
  std::string openBlasLibrary;
  int iterations = 200;
  unsigned timeoutSeconds = 60;
  /// QIMENG_LLVM_MCA when set, else the configure-time one.
  static ModelOptions defaults();
};

/// What llvm-mca predicts for one kernel's inner loop.
struct InnerLoopPrediction {
  std::string mcaCpu;            ///< the scheduling model used
  double cyclesPerIteration = 0; ///< steady state, llvm-mca's total / runs
  double flopsPerIteration = 0;  ///< qm.inner_loop_flops
  double peakFlopsPerCycle = 0;  ///< 2 x the core's FMA lanes a cycle
  double fractionOfPeak() const {
    return cyclesPerIteration > 0 && peakFlopsPerCycle > 0
               ? flopsPerIteration / (cyclesPerIteration * peakFlopsPerCycle)
               : 0;
  }
};

/// Runs `kernel`'s inner loop through llvm-mca for `target`'s core.
llvm::Expected<InnerLoopPrediction>
predictInnerLoop(const EmittedKernel &kernel, const Target &target,
                 const ModelOptions &options = ModelOptions::defaults());

/// The same model on a peer's kernel: OpenBLAS's sgemm microkernel for the
/// target's core (Target::CoreModel::openBlasCore, from its DYNAMIC_ARCH
/// build), disassembled with llvm-objdump; its K loop is the innermost
/// backward branch over straight-line code with the most fmla
/// instructions, which goes through llvm-mca like ours.
struct PeerLoopPrediction {
  std::string library; ///< the shared library read
  std::string symbol;  ///< "sgemm_kernel_NEOVERSEN1"
  size_t instructions = 0;
  InnerLoopPrediction prediction;
};
/// An error when the target's CPU has no OpenBLAS core, the library is not
/// installed (scripts/setup.sh installs the arm64 one) or has no such loop.
llvm::Expected<PeerLoopPrediction> predictOpenBlasInnerLoop(
    const Target &target,
    const ModelOptions &options = ModelOptions::defaults());

/// One candidate of the model-driven search, validated and predicted.
struct ModelCandidate {
  GemmConfig config;
  EmittedKernel kernel;
  InnerLoopPrediction prediction;
  /// The GEMM's flops, its edge blocks counted as full, at the inner
  /// loop's predicted rate.
  double predictedCycles = 0;
  /// On a board (CrossValidationOptions::remoteHost with timedRuns): the
  /// median time of one call there; 0 under an emulator.
  double measuredNs = 0;
};

/// The register blocks the model ranks for `target`'s ISA (NEON: rows and
/// q registers that fit 32 registers, K unroll 4 or 8; SVE: rows and up to
/// three vectors of the target's length, likewise; RVV: LMUL, rows and
/// groups that fit, K unroll 4 or 8), each with all of `problem`'s K in one
/// block and B read in place; after it, for a GEMM whose static K is deeper
/// than a kc x nr panel of B that fills half of L1, the same block with K
/// in blocks of that kc and B's panels copied (BLIS's blocking). The model
/// predicts both alike (its inner loop is the same): a board's timings
/// tell them apart.
std::vector<GemmConfig> modelSearchSpace(const KernelProblem &problem,
                                         const Target &target);

/// The model's ranking: the candidates it predicted, fastest first, and
/// the best of them validated under emulation.
struct ModelRanking {
  std::vector<ModelCandidate> predicted;
  /// The first `validateBest` of `predicted` that passed validation, in
  /// rank order; candidates ranked above them failed it.
  std::vector<ModelCandidate> validated;
  /// Why each candidate above the validated ones failed.
  std::vector<std::string> failures;
};

/// Emits and predicts every candidate of modelSearchSpace for `problem` (a
/// GEMM, leading dimensions at run time, or a convolution, whose flops are
/// its GEMM view's), then validates them under emulation in rank order
/// until `validateBest` have passed: the model ranks, only validated code
/// is ever returned for use, and a large problem costs the emulator one
/// validation, not one per candidate. `progress` gets a line
/// a step.
llvm::Expected<ModelRanking>
rankByModel(const KernelProblem &problem, const Target &target,
            const EmitterOptions &emitter,
            const CrossValidationOptions &emulation,
            const ModelOptions &model = ModelOptions::defaults(),
            const std::function<void(const std::string &)> &progress = {},
            size_t validateBest = 1);

} // namespace qimeng

#endif // QIMENG_TUNE_MODELEVALUATOR_H

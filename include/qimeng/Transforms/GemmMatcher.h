//===- GemmMatcher.h - Contractions -> GemmDesc -----------------*- C++ -*-===//
//
// linalg.matmul, linalg.batch_matmul and contractions written as
// linalg.generic, recognised through the contraction interface: what the
// GEMM kernel computes for them, or why it cannot.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_TRANSFORMS_GEMMMATCHER_H
#define QIMENG_TRANSFORMS_GEMMMATCHER_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Support/LLVM.h"
#include "qimeng/Kernel/KernelDesc.h"
#include "qimeng/Transforms/StrideAssumptions.h"
#include <optional>
#include <string>

namespace qimeng {

/// The precision of a contraction or convolution whose inputs and output
/// (A, B and C, named `names` in the reason) have element types `types`:
/// f32 x f32 -> f32; bf16 x bf16 -> f32 with each product taken in f32
/// (linalg's named ops extend their bf16 inputs to the output type before
/// they multiply; a generic must do the same: a product rounded to bf16
/// first is another computation); or i8 x i8 -> i32 with each input
/// extended to i32 before the multiply, A by extsi (s8) or extui (u8), B
/// by extsi (VPDPBUSD takes unsigned A and signed B bytes). Failure with
/// the reason otherwise. `swapInputs`: A is the op's second input and B its
/// first (a matrix-vector product whose vector comes second).
mlir::FailureOr<GemmPrecision> operandPrecision(mlir::linalg::LinalgOp op,
                                                mlir::Type types[3],
                                                const char *names[3],
                                                std::string &reason,
                                                bool swapInputs = false);

/// A contraction as `batch` GEMMs: GEMM i reads A, B and C at their first
/// element plus i times their batch stride (0 for an operand the batch
/// dimension does not index: a 2-D operand broadcast over the batch).
struct MatchedContraction {
  GemmDesc gemm;
  /// The buffers the kernel reads and writes: A, B and C, where an input
  /// filled by a foldable linalg.transpose is replaced by its source.
  mlir::Value operands[3];
  /// Those transposes: the kernel reads their sources in transposed order,
  /// so the rewrite removes them (or keeps them for the original op only).
  llvm::SmallVector<mlir::Operation *> foldedTransposes;
  /// The op that initialises C for the contraction and that the kernel
  /// replaces (`gemm.overwrite`): a zero linalg.fill, or a broadcast of a
  /// bias along the rows (then `gemm.bias` and `bias`); null when none.
  mlir::Operation *cInit = nullptr;
  /// The number of GEMMs; ShapedType::kDynamic for the size of C's
  /// dimension `batchDimOfC` at run time.
  int64_t batch = 1;
  unsigned batchDimOfC = 0;
  int64_t batchStrides[3] = {0, 0, 0}; ///< elements: A, B, C
  /// Batch strides the types leave dynamic: the dimension of operands[i]
  /// whose stride the call reads at run time (then batchStrides[i] is
  /// ShapedType::kDynamic).
  std::optional<unsigned> batchStrideDimOf[3];
  /// Strides the descriptor assumed where the types leave them dynamic
  /// (unit strides; leading dimensions and batch strides are run-time
  /// values instead).
  llvm::SmallVector<StrideAssumption> assumed;
  /// Where the leading dimension of A, B and C lies: the dimension of
  /// `operands[i]` whose stride it is, or nullopt where the sizes decide it
  /// (a row or column of one element) and it is `gemm`'s constant. With
  /// `gemm.runtimeLd` the call passes these strides at run time.
  std::optional<unsigned> leadingDimOf[3];
  /// With `gemm.dynamicM`: the dimension of operands[2] (C) whose size is M
  /// at run time.
  unsigned mDimOfC = 0;
  /// With `gemm.dynamicN`: the dimension of operands[2] (C) whose size is N
  /// at run time.
  unsigned nDimOfC = 0;
  /// With `gemm.dynamicK`: the dimension of operands[0] (A) whose size is K
  /// at run time.
  unsigned kDimOfA = 0;
  /// A fused epilogue (gemm.bias, gemm.relu): the linalg.generics that
  /// applied it to the product (one, or a chain), the last one's output
  /// buffer now operands[2] (the product's own buffer is no longer
  /// written); empty when none.
  llvm::SmallVector<mlir::Operation *, 2> epilogueOps;
  /// The bias the epilogue adds (a 1-D memref of N: from a fused consumer
  /// or a bias-broadcast init), or null.
  mlir::Value bias;
  /// The residual the epilogue adds: the call copies it into operands[2]
  /// before the kernel, which then accumulates (not gemm.overwrite); or
  /// null.
  mlir::Value residual;
  /// The allocations of the epilogue generics' outputs that come after the
  /// contraction: the rewrite moves them before, where the kernel writes
  /// the last.
  llvm::SmallVector<mlir::Operation *, 2> opsToHoist;
  /// With `gemm.halfOutput`: the bf16 (f16) buffer the kernel writes the
  /// rounded result into (the fused arith.truncf's output, the last of
  /// `epilogueOps`;
  /// operands[2] stays the kernel's f32 scratch), of C's shape and dimensions:
  /// its row stride is ldd (along C's leadingDimOf[2]).
  mlir::Value halfOutput;
  /// In a batch: the 16-bit output's batch stride in elements, or the
  /// dimension (C's batchDimOfC) whose stride the call reads at run time.
  int64_t halfOutputBatchStride = 0;
  std::optional<unsigned> halfOutputBatchStrideDim;
};

/// How describeContraction treats what the types leave open.
struct ContractionMatchOptions {
  /// Rows a dynamic M is described with (GemmDesc::dynamicM).
  int64_t representativeM = 256;
  /// Columns a dynamic N is described with (GemmDesc::dynamicN).
  int64_t representativeN = 256;
  /// Depth a dynamic K is described with (GemmDesc::dynamicK).
  int64_t representativeK = 256;
  /// Fuse an elementwise consumer (bias per column, relu) into the kernel.
  bool fuseEpilogues = true;
  /// ...a smooth activation (sigmoid, silu, gelu, hardswish, tanh, mish,
  /// softplus, hardsigmoid) too, into a floating-point kernel (f32, bf16, f16)
  /// where the ISA's kernels compute one (isaAppliesSmoothActivations).
  bool smoothActivations = false;
  /// Take matrix-vector products (no M or no N among the op's loops, or a
  /// floating-point N of 1 with a static M) as the GEMM of one row, A the
  /// vector, operands[0] and [1] the op's inputs swapped where its vector
  /// comes second (linalg.matvec, a product of one column); otherwise a
  /// product without M or N is refused and one of N = 1 stays as it is.
  bool matrixVectorProducts = true;
  /// Describe every GEMM with its leading dimensions read at run time
  /// (GemmDesc::runtimeLd), static or not: the form the sketch-driven ISAs
  /// generate.
  bool runtimeLeadingDims = false;
};

/// Whether the pass considers `op` a contraction: it implements linalg's
/// contraction interface (a multiply-accumulate body and projected
/// permutation maps), which covers linalg.matmul, linalg.batch_matmul,
/// matvec-like ops and generic contractions.
bool isContraction(mlir::linalg::LinalgOp op);

/// Describes a contraction as batched GEMMs: one M, one N and one K
/// dimension, at most one batch dimension (in all three operands, or in A
/// and C with B broadcast, or in B and C with A broadcast), f32 operands on
/// buffers with static sizes, A and B with a unit stride along one of their
/// dimensions (which gives the transposes), C with a unit stride along N.
/// An input that a linalg.transpose fills is read from the transpose's
/// source instead when the transposed buffer is a fresh allocation that
/// only the transpose writes and only this op reads, and nothing between
/// the two may write the source (frontends transpose weights this way:
/// torch-mlir's aten.linear). A C that is a fresh allocation zero-filled
/// by a linalg.fill just for this op (no other user between the two) makes
/// the GEMM overwrite C instead, and the fill unnecessary. A leading
/// dimension the types leave dynamic makes the GEMM read its leading
/// dimensions at run time (GemmDesc::runtimeLd, the dense ones standing in
/// for them in the descriptor); other dynamic strides are assumed dense
/// (`assumed`). Otherwise fails with a reason ("dynamic size in dimension
/// M", "element type 'f16' of operand A is not supported; need f32", ...)
/// that has no "not accelerated:" prefix.
///
/// A dynamic M makes the GEMM read its rows at run time
/// (GemmDesc::dynamicM), described with `representativeM` rows; a dynamic
/// N its columns (GemmDesc::dynamicN, `representativeN`, with
/// run-time leading dimensions), a dynamic K its depth
/// (GemmDesc::dynamicK, `representativeK`; C's initialisation folds and a
/// consumer fuses for f32, GemmDesc::runtimeKStoresC, and stays otherwise);
/// a dynamic batch size and dynamic batch strides are read by the call at
/// run time.
///
/// With `fuseEpilogues`, a zero-filled product (batched or not) whose only
/// other reader is a linalg.generic applying `+ bias[j]` (a 1-D bias
/// broadcast along the rows), `+ residual[i][j]`, relu
/// (`arith.maximumf(x, 0.0)` or `cmpf ugt` + `select`, perhaps bounded by
/// `arith.minimumf`), or several of them, into a fresh buffer that
/// nothing else uses, is described as the GEMM with that epilogue writing
/// the generic's output (torch-mlir's aten.linear + relu, TOSA's bias add,
/// a residual connection).
mlir::FailureOr<MatchedContraction>
describeContraction(mlir::linalg::LinalgOp op, std::string &reason,
                    const ContractionMatchOptions &options = {});

} // namespace qimeng

#endif // QIMENG_TRANSFORMS_GEMMMATCHER_H

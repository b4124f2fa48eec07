//===- KernelDesc.h - What a kernel computes --------------------*- C++ -*-===//
//
// The contract between the pass and everything below it: a plain, hashable,
// printable description of one operation instance. No MLIR in here.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_KERNEL_KERNELDESC_H
#define QIMENG_KERNEL_KERNELDESC_H

#include "qimeng/Kernel/Activation.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <optional>
#include <string>

namespace qimeng {

/// Single-precision GEMM on row-major storage, with linalg.matmul semantics:
/// C[m][n] += sum_k A(m,k) * B(k,n); or, with `overwrite`, C[m][n] = sum_k
/// A(m,k) * B(k,n), C never read (a zero-filled C, the fill removed).
///
/// A(m,k) is A[m*lda + k], or A[k*lda + m] when transA (A stored K x M).
/// B(k,n) is B[k*ldb + n], or B[n*ldb + k] when transB (B stored N x K).
/// C(m,n) is C[m*ldc + n]. Leading dimensions are in elements.
///
/// With `runtimeLd` the leading dimensions are run-time values: the kernel
/// reads them from its workspace header at every call (WorkspaceHeader.h)
/// instead of holding them as immediates, so they are not part of the
/// kernel or of its key, and lda, ldb and ldc are those of one call (the
/// dense ones where the caller does not know better).
///
/// An epilogue applies to C where the kernel stores it for the last time
/// (a fused elementwise consumer, as oneDNN's post-ops): `bias` adds
/// bias[j] to column j, or bias[i] to row i (Rows: an NCHW convolution's
/// channels; the bias pointer travels in the workspace header),
/// then `activation` (relu and its clamp, Activation).
///
/// With `dynamicM` the number of rows is a run-time value too: the kernel
/// computes the rows [0, M) the caller writes into its header at each call,
/// and `m` is the representative M its blocking was chosen and tuned for.
/// `dynamicN` likewise for the columns [0, N) (with run-time leading
/// dimensions, since a dense C's ldc is N), and `dynamicK` for the depth K
/// (run-time leading dimensions too; K may be 0 at a call; only f32
/// kernels overwrite C or apply an epilogue with it: see
/// runtimeKStoresC).
enum class GemmBias { None, Columns, Rows };

/// Element types of a GEMM's operands: A and B as stored, C and the
/// accumulation.
enum class GemmPrecision {
  F32,  ///< f32 x f32 -> f32
  Bf16, ///< bf16 x bf16 -> f32: every product exact in f32, the sums in f32
        ///< (OpenBLAS's sbgemm, linalg.matmul on bf16 operands into f32)
  S8S8, ///< s8 x s8 -> s32, sums modulo 2^32 (arith.addi)
  U8S8, ///< u8 x s8 -> s32 (A zero-extended, B sign-extended)
  F16,  ///< f16 x f16 -> f32: every product exact in f32, the sums in f32
        ///< (on AMX each f16 is split exactly into two bf16 and the four
        ///< partial products summed: amx.py, TileType.split)
};

/// "f32", "bf16", "s8s8", "u8s8", "f16".
llvm::StringRef precisionName(GemmPrecision precision);
/// A convolution's name for these operand types, the prefix of
/// ConvDesc::str(): "sconv2d", "sbconv2d", "s8s8conv2d", "u8s8conv2d",
/// "shconv2d".
llvm::StringRef convOpName(GemmPrecision precision);
/// The GEMM's name for these operand types, the prefix of GemmDesc::str():
/// "sgemm", "sbgemm", "s8s8gemm", "u8s8gemm", "shgemm".
llvm::StringRef gemmOpName(GemmPrecision precision);
/// The precision `name` (precisionName's), or none.
std::optional<GemmPrecision> parsePrecision(llvm::StringRef name);
/// Whether A, B and C are integers (C s32).
inline bool isIntegerPrecision(GemmPrecision p) {
  return p == GemmPrecision::S8S8 || p == GemmPrecision::U8S8;
}
/// The request field of a 16-bit output (GemmDesc::halfOutput) in this
/// precision: "f16_output" for f16, else "bf16_output".
inline llvm::StringRef halfOutputField(GemmPrecision p) {
  return p == GemmPrecision::F16 ? "f16_output" : "bf16_output";
}
/// Whether A and B are 16-bit floats (bf16 or f16) and C f32.
inline bool isHalfPrecision(GemmPrecision p) {
  return p == GemmPrecision::Bf16 || p == GemmPrecision::F16;
}

struct GemmDesc {
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;
  bool transA = false;
  bool transB = false;
  bool overwrite = false;         ///< beta = 0: C is written, never read
  bool runtimeLd = false;         ///< leading dimensions read at run time
  bool dynamicM = false;          ///< M read at run time; `m` is representative
  bool dynamicN = false;          ///< N read at run time; `n` is representative
  bool dynamicK = false;          ///< K read at run time; `k` is representative
  GemmBias bias = GemmBias::None; ///< epilogue: + bias[j]
  Activation activation;          ///< epilogue: after the bias
  GemmPrecision precision = GemmPrecision::F32;
  /// bf16 or f16 operands only: the result also goes, rounded once to the
  /// operands' 16-bit type (to nearest even), into a second matrix D (ldd
  /// elements a row, its pointer and a run-time ldd in the workspace header,
  /// writeHalfOutput); C is then the kernel's scratch for the partial sums of
  /// all but the last kc block, its elements unspecified after the call. What
  /// an f32 accumulator followed by arith.truncf to bf16 (f16) becomes. An
  /// epilogue applies before the rounding. The request field is
  /// "bf16_output" or "f16_output" (halfOutputField).
  bool halfOutput = false;
  int64_t ldd = 0;
  /// B arrives packed by the caller, once, in the kernel's panel layout
  /// (PrepackedB.h: the kernel's qm.b_prepacked says it); the kernel runs
  /// no PACK B. For constant weights, as oneDNN reorders its weights once.
  /// f32, bf16 and 8-bit kernels (not f16: widened or split where it is
  /// packed); N and K static. ldb and transB describe B as the caller
  /// stores it before packing.
  bool bPrepacked = false;

  bool hasEpilogue() const {
    return bias != GemmBias::None || activation.any();
  }

  /// The problem a kernel that computes the product transposed (C^T =
  /// op(B)^T * op(A)^T, Product::Transposed) blocks: M and N, the operands
  /// (B's as A: transposed unless B is, and A's as B), their leading
  /// dimensions and transposes, the run-time sizes and the bias's axis
  /// swapped; C's ldc the same (the kernel stores its tiles transposed).
  GemmDesc transposedProduct() const;

  /// A descriptor with the tightest leading dimensions for its transposes.
  static GemmDesc packed(int64_t m, int64_t n, int64_t k, bool transA = false,
                         bool transB = false);

  /// Rows and columns of A and B as stored.
  int64_t aRows() const { return transA ? k : m; }
  int64_t aCols() const { return transA ? m : k; }
  int64_t bRows() const { return transB ? n : k; }
  int64_t bCols() const { return transB ? k : n; }

  /// Elements each operand spans in memory (last row is not padded).
  /// Elements A and B span as stored (none at a run-time K of 0).
  int64_t aSpan() const {
    return aRows() && aCols() ? (aRows() - 1) * lda + aCols() : 0;
  }
  int64_t bSpan() const {
    return bRows() && bCols() ? (bRows() - 1) * ldb + bCols() : 0;
  }
  int64_t cSpan() const { return (m - 1) * ldc + n; }
  /// 16-bit elements D spans (halfOutput).
  int64_t dSpan() const { return (m - 1) * ldd + n; }

  double flops() const { return 2.0 * m * n * k; }

  /// Bytes of one element of A and B as stored (C's are 4: f32 or s32).
  int64_t operandElementBytes() const {
    switch (precision) {
    case GemmPrecision::Bf16:
    case GemmPrecision::F16:
      return 2;
    case GemmPrecision::S8S8:
    case GemmPrecision::U8S8:
      return 1;
    case GemmPrecision::F32:
      break;
    }
    return 4;
  }

  /// k per 32-bit lane of the dot-product instructions that multiply these
  /// operands (2 bf16, 4 bytes; 1 for f32, and for f16, which the dot
  /// kernels widen to f32): a kc block holds whole groups.
  int64_t kGroup() const {
    return precision == GemmPrecision::F16 ? 1 : 4 / operandElementBytes();
  }

  /// Whether NR-wide slivers of B can be read where B lies (B in place, or
  /// packed by the tiles): B not transposed, N a multiple of nr, and not
  /// prepacked (then its slivers are the caller's panels).
  bool bSliversInPlace(int nr) const {
    return !transB && !dynamicN && !bPrepacked && n % nr == 0;
  }

  /// Whether a kernel can read B^T where it lies, a matrix-vector product
  /// per row of A (packb=0 on AVX-512: dotgemm.py's pack_b false, for f32
  /// and 8-bit too): B transposed, and what every form that reads B in
  /// place needs (dotKernelMayReadBInPlace); N may be a run-time value: the
  /// form reads its columns [n_begin, n_end) from the header, as a part's
  /// (aten.mv over a run-time number of rows).
  bool bTransposedRowsInPlace() const {
    return transB && dotKernelMayReadBInPlace();
  }

  /// Whether a bf16, f16 or 8-bit kernel can stream B's rows where they
  /// lie, passes of rows of A against blocks of columns (packb=0 for the
  /// dot-product kernels with B as stored: dotgemm.py's pack_b false, "B's
  /// rows"): B not transposed, N static, and what every form that reads B
  /// in place needs.
  bool bRowsStreamInPlace() const {
    return precision != GemmPrecision::F32 && !transB && !dynamicN &&
           dotKernelMayReadBInPlace();
  }

  /// What the dot kernels' forms that read B in place need whichever way
  /// B lies: A not transposed, no bias along the rows (one along the
  /// columns, relu and a 16-bit D are applied where C is stored), K
  /// static.
  bool dotKernelMayReadBInPlace() const {
    return !transA && bias != GemmBias::Rows && !dynamicK;
  }

  /// Whether this GEMM's run-time-K kernels store C at every K, 0
  /// included, so that they may overwrite C and apply an epilogue: the f32
  /// kernels (x86's kc loop runs one empty block at K = 0, the sketch's
  /// nest its K loop no times). The bf16, f16 and 8-bit dot and tile
  /// kernels skip K = 0 and accumulate: their callers keep C's
  /// initialisation.
  bool runtimeKStoresC() const { return precision == GemmPrecision::F32; }

  /// Whether the f32 microkernel can read A's slivers where A lies
  /// (alayout=direct): A not transposed. With a run-time lda the block's
  /// rows are reached from a few base registers: readsAInPlace
  /// (BlockingModel.h) bounds the block's rows too.
  bool aSliversInPlace() const {
    return !transA && precision == GemmPrecision::F32;
  }

  /// Checks sizes >= 1 and leading dimensions wide enough.
  llvm::Error verify() const;

  /// The same problem with every leading dimension `pad` elements wider
  /// than its operand's columns: what a run-time-ld kernel is validated on,
  /// so that one using the dense strides reads the wrong elements.
  GemmDesc withPaddedLeadingDims(int64_t pad = 5) const;

  /// Stable, readable key: "sgemm_m7_n5_k3_lda3_ldb5_ldc5_nn", with "_b0"
  /// appended for overwrite; "sgemm_m7_n5_k3_ldrt_nn" for run-time leading
  /// dimensions; "_mrt" after the transposes for a run-time M, "_nrt" for
  /// a run-time N, "_krt" for a run-time K; "_bias",
  /// then the activation's part (Activation::suffix) at the end for an
  /// epilogue; "sbgemm_..." for bf16 operands,
  /// "s8s8gemm_..." and "u8s8gemm_..." for 8-bit ones; "_obf16" after
  /// "_b0" for a bf16 output (and "_ldd<ldd>" after the other leading
  /// dimensions); "_bpre" after the run-time sizes for a prepacked B.
  std::string str() const;

  bool operator==(const GemmDesc &o) const {
    return m == o.m && n == o.n && k == o.k && lda == o.lda && ldb == o.ldb &&
           ldc == o.ldc && transA == o.transA && transB == o.transB &&
           overwrite == o.overwrite && runtimeLd == o.runtimeLd &&
           dynamicM == o.dynamicM && dynamicN == o.dynamicN &&
           dynamicK == o.dynamicK && bias == o.bias &&
           activation == o.activation && precision == o.precision &&
           halfOutput == o.halfOutput && ldd == o.ldd &&
           bPrepacked == o.bPrepacked;
  }
};

/// Memory layout of a 2-D convolution's input, filter and output, as the
/// linalg op names it.
enum class ConvLayout {
  NhwcHwcf, ///< linalg.conv_2d_nhwc_hwcf
  NhwcFhwc, ///< linalg.conv_2d_nhwc_fhwc
  NchwFchw, ///< linalg.conv_2d_nchw_fchw
};

/// "nhwc_hwcf", "nhwc_fhwc", "nchw_fchw".
llvm::StringRef convLayoutName(ConvLayout layout);

/// Single-precision 2-D convolution with linalg.conv_2d_*'s semantics
/// (accumulating, no padding: the input is the padded buffer):
///   nhwc_hwcf: O[n][oh][ow][f] += I[n][oh*sh + kh*dh][ow*sw + kw*dw][c]
///                                 * W[kh][kw][c][f]
///   nhwc_fhwc: the same with W[f][kh][kw][c]
///   nchw_fchw: O[n][f][oh][ow] += I[n][c][oh*sh + kh*dh][ow*sw + kw*dw]
///                                 * W[f][c][kh][kw]
/// The filter and output are dense. The input may be a strided view (a
/// subview of a padded buffer): `inputStrides` are its element strides of
/// (n, h, w) with unit c stride for the nhwc layouts, of (n, c, h) with
/// unit w stride for nchw_fchw. With `runtimeStrides` the kernel reads them
/// from its workspace header at each call (writeInputStrides), one kernel
/// for every view; `inputStrides` are then the call's (the dense ones when
/// it is described for tuning), and an nhwc input's w stride must be C.
///
/// `precision` gives the element types as for a GEMM (the input is A's,
/// the filter B's, the output C's): bf16 x bf16 -> f32, f16 x f16 -> f32
/// (its filter never prepacked) and the 8-bit forms -> s32, any C (nhwc: blocks
/// ending in a partial group of k, kcStep, where the run is not whole groups: 3
/// channels) and, for 8 bits, no bias or relu. In nchw_fchw the GEMM view's A
/// is the filter and its B the input: s8 inputs only (VPDPBUSD's unsigned
/// operand is A, an s8 A is packed plus 128).
struct ConvDesc {
  ConvLayout layout = ConvLayout::NhwcHwcf;
  int64_t n = 0, h = 0, w = 0, c = 0; ///< input batch, height, width, channels
  int64_t f = 0;                      ///< output channels (filters)
  int64_t kh = 0, kw = 0;             ///< filter height and width
  int64_t strideH = 1, strideW = 1;
  int64_t dilationH = 1, dilationW = 1;
  int64_t inputStrides[3] = {0, 0, 0};
  /// The input's strides at run time (the key says "_isrt", not them).
  bool runtimeStrides = false;
  /// nhwc, f32: elements from one output pixel to the next (the output's
  /// w stride; its h and n strides follow: OW and OH*OW pixels), above F
  /// where the output is a channel slice of a wider buffer (a concatenation
  /// written in place); 0 (or F) for the dense output. The GEMM view's C
  /// rows this far apart (its ldc; gemmView() keeps the dense F).
  int64_t outputPixelStride = 0;
  /// The output's initial value is not read (a zero fill), a bias per
  /// output channel is added and the activation applied where it is
  /// stored: the GEMM view's overwrite and epilogue (GemmDesc).
  bool overwrite = false;
  bool bias = false;
  Activation activation;
  GemmPrecision precision = GemmPrecision::F32;
  /// The filter (the GEMM view's B) arrives packed by the caller, once
  /// (GemmDesc::bPrepacked): constant weights. nhwc layouts; not f16.
  bool bPrepacked = false;
  /// bf16 and f16: the sums (after the bias and activation) rounded once to
  /// the operands' type into a dense 16-bit output of the output's shape,
  /// D (torch-mlir's truncf after a bf16 convolution), its pointer in the
  /// workspace header (writeHalfOutput); the f32 output is then the
  /// kernel's scratch (GemmDesc::halfOutput, of the GEMM view: nchw's D
  /// steps an image's OH*OW*F elements a GEMM, as its output does).
  bool halfOutput = false;

  /// A descriptor with a dense input.
  static ConvDesc dense(ConvLayout layout, int64_t n, int64_t h, int64_t w,
                        int64_t c, int64_t f, int64_t kh, int64_t kw,
                        int64_t strideH = 1, int64_t strideW = 1,
                        int64_t dilationH = 1, int64_t dilationW = 1);

  /// Output height and width.
  int64_t oh() const { return (h - dilationH * (kh - 1) - 1) / strideH + 1; }
  int64_t ow() const { return (w - dilationW * (kw - 1) - 1) / strideW + 1; }

  /// The dense input strides for this shape and layout.
  void denseInputStrides(int64_t out[3]) const;
  bool inputIsDense() const;
  bool isNhwc() const { return layout != ConvLayout::NchwFchw; }

  /// The run: how many consecutive k of the GEMM view lie in consecutive
  /// elements of the input (the innermost filter dimensions whose input
  /// step is the run so far): C for nhwc, KW*C when the width dilation is 1
  /// and pixels are C apart; KW (or more) for nchw. A step that depends on
  /// a run-time stride ends it. A panel of kc columns is one contiguous
  /// piece per pixel when kc divides the run.
  int64_t contiguousRun() const;
  /// What a bf16 or 8-bit convolution's kc is a multiple of: a group of k
  /// (GemmDesc::kGroup), or 1 where the run is not whole groups (3
  /// channels: every block then ends in a partial group, which the packs
  /// complete with zero; a divisor of the run divides K).
  /// nchw gathers B a k at a time: always a group.
  int64_t kcStep() const {
    const int64_t group = gemmView().kGroup();
    return !isNhwc() || contiguousRun() % group == 0 ? group : 1;
  }
  /// Whether a prepacked filter (whole groups of k per block) can serve
  /// this convolution's blocks: kcStep() is a whole group, and the filter
  /// is the GEMM view's B (nhwc).
  bool filterMayBePrepacked() const {
    return isNhwc() && kcStep() == gemmView().kGroup();
  }
  /// The largest divisor of contiguousRun() not above `limit` (at least 1):
  /// the longest panel within `limit` whose rows are each one piece.
  int64_t largestRunDivisorAtMost(int64_t limit) const;

  /// The GEMM the kernel computes (per image for nchw_fchw): nhwc layouts
  /// M = N*OH*OW, N = F, K = KH*KW*C (B transposed for nhwc_fhwc);
  /// nchw_fchw M = F, N = OH*OW, K = C*KH*KW; the channel bias along N
  /// (nhwc) or M (nchw). Blocking and tuning work on this view.
  GemmDesc gemmView() const;

  /// The same convolution on a view of a larger input: every stride the
  /// kernel reads at run time padded (what validation calls a run-time
  /// -strides kernel on besides the dense input).
  ConvDesc withPaddedInputStrides() const;

  /// Elements each operand spans from its base pointer (of the precision's
  /// types: GemmDesc::operandElementBytes for the input and filter).
  int64_t inputSpan() const;
  int64_t filterElements() const { return kh * kw * c * f; }
  int64_t outputElements() const { return n * oh() * ow() * f; }
  /// Whether the output is dense (outputPixelStride 0 or F).
  bool outputIsDense() const {
    return outputPixelStride == 0 || outputPixelStride == f;
  }
  /// Elements the output spans from its base pointer.
  int64_t outputSpan() const {
    return outputIsDense() ? outputElements()
                           : (n * oh() * ow() - 1) * outputPixelStride + f;
  }
  /// Offset of output element (n, oh, ow, f) of an nhwc output.
  int64_t nhwcOutputOffset(int64_t pixel, int64_t channel) const {
    return pixel * (outputIsDense() ? f : outputPixelStride) + channel;
  }

  double flops() const { return 2.0 * n * oh() * ow() * f * kh * kw * c; }

  /// Checks sizes >= 1, a filter that fits the input, input strides that
  /// do not overlap, with run-time strides an nhwc w stride of C, and what
  /// a bf16 or 8-bit precision needs (above).
  llvm::Error verify() const;

  /// Stable, readable key:
  /// "sconv2d_nhwc_hwcf_n1_h58_w58_c64_f64_k3x3_s1x1_d1x1_is215296x3712x64"
  /// ("_isrt" for run-time strides), with "_bpre", "_b0", "_obf16" or
  /// "_of16" (halfOutput), "_bias" and the activation's part
  /// (Activation::suffix) appended as set; "sbconv2d_..." for
  /// bf16 operands, "s8s8conv2d_..." and "u8s8conv2d_..." for 8-bit ones
  /// (convOpName).
  std::string str() const;

  bool operator==(const ConvDesc &o) const { return str() == o.str(); }
};

} // namespace qimeng

#endif // QIMENG_KERNEL_KERNELDESC_H

//===- GemmMatcher.cpp - Contractions -> GemmDesc -------------------------===//
//
// One reason per check, in the order a user would fix them.
//
//===----------------------------------------------------------------------===//
#include "qimeng/Transforms/GemmMatcher.h"
#include "BufferEffects.h"
#include "EpilogueMatcher.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"
#include <optional>
#include <tuple>

using namespace mlir;
using namespace qimeng;

bool qimeng::isContraction(linalg::LinalgOp op) {
  return linalg::isaContractionOpInterface(op);
}

namespace {
/// The stride of loop dimension `dim` in an operand with indexing map
/// `map` and element strides `strides`; nullopt when the map does not use
/// the dimension.
std::optional<int64_t> strideOfLoop(AffineMap map, ArrayRef<int64_t> strides,
                                    unsigned dim) {
  for (unsigned r = 0; r < map.getNumResults(); ++r)
    if (map.getDimPosition(r) == dim)
      return strides[r];
  return std::nullopt;
}

/// The position of loop dimension `dim` among `map`'s results.
unsigned resultPosition(AffineMap map, unsigned dim) {
  for (unsigned r = 0; r < map.getNumResults(); ++r)
    if (map.getDimPosition(r) == dim)
      return r;
  return map.getNumResults();
}

/// "operand C" and the like: the operands whose indexing maps use loop
/// `dim`, "no operand" where none does.
std::string loopOperands(ArrayRef<AffineMap> maps, unsigned dim,
                         const char *const names[3]) {
  std::string s;
  for (int i = 0; i < 3; ++i)
    if (maps[i].isFunctionOfDim(dim))
      s += (s.empty() ? "" : " and ") + std::string(names[i]);
  return s.empty() ? "no operand" : s;
}

/// How a 2-D operand with logical dimensions (row, col) lies, from their
/// sizes and element strides: as is when the column has the unit stride
/// (the leading dimension is the row stride), transposed when the row has
/// it (the leading dimension is the column stride). A size-1 dimension's
/// stride never moves an address: the leading dimension then is the least
/// that verifies. Nullopt when neither dimension has the unit stride.
std::optional<std::pair<bool, int64_t>>
orientation(int64_t rows, int64_t cols, int64_t rowStride, int64_t colStride) {
  if (colStride == 1 || cols == 1)
    return std::make_pair(false, rows == 1 ? cols : rowStride);
  if (rowStride == 1 || rows == 1)
    return std::make_pair(true, cols == 1 ? rows : colStride);
  return std::nullopt;
}

/// The linalg.transpose that fills `operand` when the contraction `use`
/// (writing `output`) may read its source instead: `operand` is a fresh
/// allocation whose only users are that transpose (writing all of it),
/// `use` and deallocations, the transpose comes first in the same block,
/// nothing in between may write the source, and the source cannot be
/// `output` (the copy kept the contraction's input apart from its output).
linalg::TransposeOp foldableTranspose(Value operand, Operation *use,
                                      Value output) {
  auto alloc = operand.getDefiningOp<memref::AllocOp>();
  if (!alloc)
    return {};
  linalg::TransposeOp transpose;
  for (Operation *user : alloc->getUsers()) {
    if (user == use || isa<memref::DeallocOp>(user))
      continue;
    auto t = dyn_cast<linalg::TransposeOp>(user);
    if (!t || transpose || t.getInit() != operand ||
        !t.hasPureBufferSemantics())
      return {};
    transpose = t;
  }
  if (!transpose || transpose->getBlock() != use->getBlock() ||
      !transpose->isBeforeInBlock(use))
    return {};
  Value source = transpose.getInput();
  if (mayAlias(source, output))
    return {};
  for (Operation *op = transpose->getNextNode(); op && op != use;
       op = op->getNextNode())
    if (isa<memref::DeallocOp>(op) && op->getOperand(0) == operand)
      return {};
  if (!noWritesBetween(transpose, use, source))
    return {};
  return transpose;
}

/// Fuses the elementwise consumer of the initialised product `out.operands
/// [2]` of `op` into `out` when it is one the kernel's epilogue computes
/// (describeContraction); leaves `out` as it was otherwise.
///
/// After a bf16 contraction (an f32 accumulator `out.operands[2]`) the
/// generic may end by rounding its result to bf16 into a bf16 buffer (as
/// torch-mlir writes a bf16 matmul, StableHLO a dot_general with an f32
/// preferred type and a convert; f16 likewise): with a `halfType` (the
/// operands' bf16 or f16), the kernel writes that
/// buffer, D, and C stays its scratch (GemmDesc::halfOutput). D's row stride
/// is ldd: an immediate where the kernel's leading dimensions are, read at
/// run time where they are (a run-time D row stride with immediates
/// elsewhere is left alone); its unit stride along N is assumed where the
/// type leaves it dynamic; in a batch, its batch stride is a constant or
/// read at run time. A residual is not taken with it.
///
/// An f32 product's last generic may write a slice of a wider buffer
/// instead (a concatenation written in place: torch.cat of linear layers
/// after --eliminate-empty-tensors): the kernel writes the slice, its rows
/// the slice's static row stride apart (ldc, an immediate or read at run
/// time as the GEMM's other leading dimensions are), its batch stride the
/// slice's.
void fuseEpilogue(linalg::LinalgOp op, MatchedContraction &out, Type halfType,
                  bool smoothAllowed) {
  std::optional<ElementwiseEpilogue> e = matchElementwiseEpilogue(
      op, out.operands[2], out.cInit, out.nDimOfC,
      /*biasAllowed=*/out.gemm.bias == GemmBias::None,
      /*goingAway=*/{}, halfType,
      /*sliceOutput=*/out.gemm.precision == GemmPrecision::F32,
      /*leakyAllowed=*/!isIntegerPrecision(out.gemm.precision),
      smoothAllowed && !isIntegerPrecision(out.gemm.precision));
  if (!e)
    return;
  GemmDesc &d = out.gemm;
  if (e->halfOutput) {
    if (e->residual)
      return;
    SmallVector<StrideAssumption> assumed;
    std::string why;
    auto strides = resolveStrides(e->output, "the 16-bit output", assumed, why,
                                  /*allowDynamicSizes=*/true);
    if (failed(strides) || ((*strides)[out.nDimOfC] != 1 && d.n != 1))
      return;
    const std::optional<unsigned> rows = out.leadingDimOf[2];
    auto isRowStride = [&](const StrideAssumption &a) {
      return rows && a.dim == *rows;
    };
    if (llvm::any_of(assumed, isRowStride)) {
      if (!d.runtimeLd)
        return;
      llvm::erase_if(assumed, isRowStride);
    }
    // A batch: each GEMM's D is its batch stride further on, read at run
    // time where the type leaves it dynamic.
    std::optional<unsigned> batchStrideDim;
    if (out.batch != 1) {
      auto isBatchStride = [&](const StrideAssumption &a) {
        return a.dim == out.batchDimOfC;
      };
      if (llvm::any_of(assumed, isBatchStride))
        batchStrideDim = out.batchDimOfC;
      llvm::erase_if(assumed, isBatchStride);
    }
    if (!llvm::all_of(assumed,
                      [](const StrideAssumption &a) { return a.checkable(); }))
      return;
    out.halfOutputBatchStrideDim = batchStrideDim;
    out.halfOutputBatchStride =
        out.batch == 1 || batchStrideDim ? 0 : (*strides)[out.batchDimOfC];
    d.halfOutput = true;
    d.ldd = d.runtimeLd || !rows ? d.n : (*strides)[*rows];
    out.halfOutput = e->output;
    llvm::append_range(out.assumed, assumed);
  } else {
    if (e->output.getType() != out.operands[2].getType()) {
      SmallVector<StrideAssumption> assumed;
      std::string why;
      auto strides = resolveStrides(e->output, "output", assumed, why);
      if (failed(strides) || !assumed.empty() ||
          ((*strides)[out.nDimOfC] != 1 && d.n != 1))
        return;
      if (const std::optional<unsigned> rows = out.leadingDimOf[2];
          rows && !d.runtimeLd)
        d.ldc = (*strides)[*rows];
      if (out.batch != 1) {
        out.batchStrides[2] = (*strides)[out.batchDimOfC];
        out.batchStrideDimOf[2].reset();
      }
    }
    out.operands[2] = e->output;
  }
  if (e->bias) {
    d.bias = GemmBias::Columns;
    out.bias = e->bias;
  }
  d.activation = e->activation;
  if (e->residual) {
    d.overwrite = false; // C starts as the residual
    out.residual = e->residual;
  }
  out.epilogueOps = e->ops;
  out.opsToHoist = e->opsToHoist;
  llvm::append_range(out.assumed, e->assumed);
}

} // namespace

FailureOr<GemmPrecision> qimeng::operandPrecision(linalg::LinalgOp op,
                                                  Type types[3],
                                                  const char *names[3],
                                                  std::string &reason,
                                                  bool swapInputs) {
  auto typeName = [](Type t) {
    std::string s;
    llvm::raw_string_ostream os(s);
    t.print(os);
    return s;
  };
  if (types[0].isF32() && types[1].isF32() && types[2].isF32())
    return GemmPrecision::F32;
  // bf16 or f16 inputs into f32: every product exact in f32, as the
  // kernels compute them.
  const bool bf16 = types[0].isBF16() && types[1].isBF16();
  const bool f16 = types[0].isF16() && types[1].isF16();
  if ((bf16 || f16) && types[2].isF32()) {
    for (Operation &inner : op.getBlock()->without_terminator())
      if (isa<arith::MulFOp>(inner) && !inner.getResult(0).getType().isF32()) {
        reason = "the products are rounded to " +
                 typeName(inner.getResult(0).getType()) +
                 " before the f32 sum (the kernel multiplies in f32: extend "
                 "the " +
                 typeName(types[0]) + " inputs before arith.mulf)";
        return failure();
      }
    return bf16 ? GemmPrecision::Bf16 : GemmPrecision::F16;
  }
  // 8-bit inputs into i32: each input extended to i32 before arith.muli,
  // A by extsi (s8) or extui (u8), B by extsi (VPDPBUSD takes unsigned A
  // bytes and signed B bytes).
  if (types[0].isInteger(8) && types[1].isInteger(8) &&
      types[2].isInteger(32)) {
    Block *body = op.getBlock();
    std::optional<bool> isSigned[2];
    for (int i = 0; i < 2; ++i) {
      const unsigned input = swapInputs ? 1 - i : i;
      for (Operation *user : body->getArgument(input).getUsers()) {
        if (isa<arith::ExtSIOp>(user))
          isSigned[i] = true;
        else if (isa<arith::ExtUIOp>(user))
          isSigned[i] = false;
      }
      if (!isSigned[i]) {
        reason = llvm::formatv("{0} is not extended to i32 before the "
                               "multiply (the kernel multiplies into i32)",
                               names[i])
                     .str();
        return failure();
      }
    }
    for (Operation &inner : body->without_terminator())
      if (isa<arith::MulIOp>(inner) &&
          !inner.getResult(0).getType().isInteger(32)) {
        reason = "the products are " + typeName(inner.getResult(0).getType()) +
                 ", not i32 (the kernel multiplies into i32)";
        return failure();
      }
    if (!*isSigned[1]) {
      reason = "operand B is unsigned (zero-extended): VPDPBUSD takes "
               "unsigned A and signed B bytes";
      return failure();
    }
    return *isSigned[0] ? GemmPrecision::S8S8 : GemmPrecision::U8S8;
  }
  reason.clear();
  for (int i = 0; i < 3 && reason.empty(); ++i)
    if (!types[i].isF32() &&
        !(i < 2 && (types[i].isBF16() || types[i].isF16())) &&
        !(i < 2 && types[i].isInteger(8)) &&
        !(i == 2 && types[i].isInteger(32)))
      reason = llvm::formatv("element type '{0}' of {1} is not supported; "
                             "need f32, bf16 or f16 inputs with an f32 "
                             "output, or i8 inputs with an i32 output",
                             typeName(types[i]), names[i])
                   .str();
  if (reason.empty())
    reason = llvm::formatv("element types {0} x {1} -> {2} are not supported; "
                           "need f32 x f32 -> f32, bf16 x bf16 -> f32, "
                           "f16 x f16 -> f32 or i8 x i8 -> i32",
                           typeName(types[0]), typeName(types[1]),
                           typeName(types[2]))
                 .str();
  return failure();
}

FailureOr<MatchedContraction>
qimeng::describeContraction(linalg::LinalgOp op, std::string &reason,
                            const ContractionMatchOptions &options) {
  const int64_t representativeM = options.representativeM;
  if (!op.hasPureBufferSemantics()) {
    reason = "tensor operands are not supported yet; bufferize first "
             "(--one-shot-bufferize)";
    return failure();
  }
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1) {
    reason = "not two inputs and one output";
    return failure();
  }
  Value operands[3] = {op.getDpsInputOperand(0)->get(),
                       op.getDpsInputOperand(1)->get(),
                       op.getDpsInitOperand(0)->get()};
  const char *names[3] = {"operand A", "operand B", "operand C"};
  Type elementTypes[3];
  for (int i = 0; i < 3; ++i) {
    auto type = dyn_cast<MemRefType>(operands[i].getType());
    if (!type) {
      reason = "operands are not ranked memrefs";
      return failure();
    }
    elementTypes[i] = type.getElementType();
  }

  // Dimensions from the indexing maps: transposes and broadcasts live in
  // them (linalg.matmul's and batch_matmul's `indexing_maps`, generics).
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  const bool permutations =
      succeeded(dims) && llvm::all_of(maps, [](AffineMap m) {
        return m.isProjectedPermutation();
      });
  // A dimension in A and C only is an M dimension to the interface; with
  // two of them, the outer one (in C) is a batch over which B is
  // broadcast. Likewise two N dimensions: A broadcast.
  SmallVector<unsigned> mDims, nDims, batchDims;
  if (permutations) {
    mDims.assign(dims->m.begin(), dims->m.end());
    nDims.assign(dims->n.begin(), dims->n.end());
    batchDims.assign(dims->batch.begin(), dims->batch.end());
  }
  auto splitOuter = [&](SmallVector<unsigned> &group) {
    if (group.size() != 2)
      return;
    unsigned p0 = resultPosition(maps[2], group[0]);
    unsigned p1 = resultPosition(maps[2], group[1]);
    unsigned outer = p0 < p1 ? group[0] : group[1];
    batchDims.push_back(outer);
    group.erase(llvm::find(group, outer));
  };
  if (batchDims.empty())
    splitOuter(mDims);
  if (batchDims.empty())
    splitOuter(nDims);
  // A matrix-vector product (linalg.vecmat and matvec, their batch forms,
  // a generic of that shape) is the GEMM of one row: the vector is A (1 x
  // K), the matrix B, C's one dimension N. Where the vector is the op's
  // second input (matvec: the matrix's rows are C's), the inputs swap
  // roles: y = M x is y^T = x^T M^T, M read as a transposed B.
  auto swapInputRoles = [&] {
    std::swap(operands[0], operands[1]);
    std::swap(names[0], names[1]);
    std::swap(elementTypes[0], elementTypes[1]);
    std::swap(maps[0], maps[1]);
    std::swap(mDims, nDims);
  };
  const bool swapInputs = mDims.size() == 1 && nDims.empty();
  if (swapInputs)
    swapInputRoles();
  FailureOr<GemmPrecision> precision =
      operandPrecision(op, elementTypes, names, reason, swapInputs);
  if (failed(precision))
    return failure();
  if (!permutations) {
    reason = "indexing maps are not projected permutations of the loops";
    return failure();
  }
  // Every loop must be one of those: a loop that only C indexes (the
  // products broadcast along it) or only one input (a sum of that input
  // alone) is no GEMM's.
  for (unsigned loop = 0; loop < op.getNumLoops(); ++loop)
    if (!llvm::is_contained(batchDims, loop) &&
        !llvm::is_contained(mDims, loop) && !llvm::is_contained(nDims, loop) &&
        !llvm::is_contained(dims->k, loop)) {
      reason = llvm::formatv("loop d{0} indexes {1} only: it is no batch, M, "
                             "N or K dimension of a GEMM",
                             loop, loopOperands(maps, loop, names))
                   .str();
      return failure();
    }
  if (mDims.size() > 1 || nDims.size() != 1 || dims->k.size() != 1 ||
      batchDims.size() > 1) {
    reason = llvm::formatv(
                 "{0} batch, {1} M, {2} N and {3} K dimensions; the kernel "
                 "takes at most one batch, exactly one K, and one M and one "
                 "N or one of them (a matrix-vector product): dot products "
                 "and multi-dimensional contractions are not supported",
                 batchDims.size(), mDims.size(), nDims.size(), dims->k.size())
                 .str();
    return failure();
  }
  if (mDims.empty() && !options.matrixVectorProducts) {
    reason = "matrix-vector products are not generated for this target yet";
    return failure();
  }
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  // The matrix-vector product's M: one row, a loop of its own that no
  // operand indexes (its strides move no address).
  const bool matrixVector = mDims.empty();
  if (matrixVector) {
    mDims.push_back(ranges.size());
    ranges.push_back(1);
  }
  // One column of C (a regression head's linear layer: N = 1) is the
  // matrix-vector product too, computed as its transpose, the GEMM of one
  // row: C^T = op(B)^T op(A)^T, the inputs swapping roles (A's rows become
  // the transposed B's, which the matrix-vector kernel reads in place). A
  // floating-point product only: an 8-bit one keeps its unsigned A where
  // VPDPBUSD takes it.
  const bool oneColumn = options.matrixVectorProducts && !swapInputs &&
                         !matrixVector && !isIntegerPrecision(*precision) &&
                         ranges[nDims[0]] == 1 && ranges[mDims[0]] != 1 &&
                         !ShapedType::isDynamic(ranges[mDims[0]]);
  if (oneColumn)
    swapInputRoles();
  unsigned m = mDims[0], n = nDims[0], k = dims->k[0];

  // A dynamic M is read at run time (a dynamic batch of a linear layer);
  // the descriptor stands in `representativeM` for it. A dynamic batch
  // size is the call's loop bound.
  const bool dynamicM = ShapedType::isDynamic(ranges[m]);
  const bool dynamicBatch =
      !batchDims.empty() && ShapedType::isDynamic(ranges[batchDims[0]]);
  if (dynamicM)
    ranges[m] = representativeM;
  // A dynamic N likewise, with run-time leading dimensions.
  const bool dynamicN = ShapedType::isDynamic(ranges[n]);
  if (dynamicN)
    ranges[n] = options.representativeN;
  // And a dynamic K (attention's probabilities times V over a dynamic
  // sequence): f32 kernels store C at any K and take C's initialisation
  // and a consumer; the low-precision ones accumulate into C, which keeps
  // its initialisation (GemmDesc::runtimeKStoresC).
  const bool dynamicK = ShapedType::isDynamic(ranges[k]);
  if (dynamicK)
    ranges[k] = options.representativeK;

  MatchedContraction out;
  for (int i = 0; i < 3; ++i)
    out.operands[i] = operands[i];
  // Inputs a foldable transpose fills: read its source, the operand's map
  // composed with the permutation (the transpose's result dimension j is
  // its source's dimension perm[j]).
  for (int i = 0; i < 2; ++i) {
    linalg::TransposeOp t = foldableTranspose(operands[i], op, operands[2]);
    if (!t)
      continue;
    ArrayRef<int64_t> perm = t.getPermutation();
    SmallVector<AffineExpr> results(perm.size());
    for (size_t j = 0; j < perm.size(); ++j)
      results[perm[j]] = maps[i].getResult(j);
    maps[i] = AffineMap::get(maps[i].getNumDims(), 0, results, op.getContext());
    out.operands[i] = t.getInput();
    out.foldedTransposes.push_back(t);
  }
  SmallVector<int64_t> strides[3];
  for (int i = 0; i < 3; ++i) {
    auto s = resolveStrides(out.operands[i], names[i], out.assumed, reason,
                            /*allowDynamicSizes=*/dynamicM || dynamicN ||
                                dynamicK || dynamicBatch);
    if (failed(s))
      return failure();
    strides[i] = std::move(*s);
  }
  GemmDesc &d = out.gemm;
  d.precision = *precision;
  d.m = ranges[m];
  d.n = ranges[n];
  d.k = ranges[k];
  if (d.m == 0 || d.n == 0 || d.k == 0) {
    reason = "empty contraction (a dimension is 0)";
    return failure();
  }
  auto stride = [&](int operand, unsigned dim) {
    return strideOfLoop(maps[operand], strides[operand], dim).value_or(0);
  };
  // A(m, k) and B(k, n): as stored or transposed, by their unit strides.
  auto dimName = [&](unsigned dim) {
    return dim == m ? "M" : dim == n ? "N" : "K";
  };
  auto orient = [&](int operand, unsigned row, unsigned col, bool &trans,
                    int64_t &ld) {
    int64_t rowStride = stride(operand, row), colStride = stride(operand, col);
    auto lies = orientation(ranges[row], ranges[col], rowStride, colStride);
    if (!lies) {
      reason = llvm::formatv("{0} has no unit stride along {1} or {2} "
                             "(strides {3} and {4})",
                             names[operand], dimName(row), dimName(col),
                             rowStride, colStride)
                   .str();
      return false;
    }
    std::tie(trans, ld) = *lies;
    return true;
  };
  if (!orient(0, m, k, d.transA, d.lda) || !orient(1, k, n, d.transB, d.ldb))
    return failure();
  int64_t cm = stride(2, m), cn = stride(2, n);
  if (cn != 1 && d.n != 1) {
    reason = llvm::formatv("operand C is not row-major in (M, N): stride {0} "
                           "along N",
                           cn)
                 .str();
    return failure();
  }
  d.ldc = d.m == 1 ? d.n : cm;
  // Where each leading dimension lies (orientation's rules), and whether
  // the types leave one of them dynamic: then the kernel reads all three
  // at run time and only the other strides stay assumptions.
  auto leadingDim = [&](int operand, unsigned dim) -> std::optional<unsigned> {
    if (ranges[dim] == 1)
      return std::nullopt;
    return resultPosition(maps[operand], dim);
  };
  out.leadingDimOf[0] = leadingDim(0, d.transA ? k : m);
  out.leadingDimOf[1] = leadingDim(1, d.transB ? n : k);
  out.leadingDimOf[2] = leadingDim(2, m);
  auto isLeadingDim = [&](const StrideAssumption &a) {
    for (int i = 0; i < 3; ++i)
      if (a.memref == out.operands[i] && out.leadingDimOf[i] == a.dim)
        return true;
    return false;
  };
  if (options.runtimeLeadingDims || dynamicN || dynamicK ||
      llvm::any_of(out.assumed, isLeadingDim)) {
    d.runtimeLd = true;
    llvm::erase_if(out.assumed, isLeadingDim);
    // The descriptor's leading dimensions stand for the run-time ones.
    GemmDesc dense = GemmDesc::packed(d.m, d.n, d.k, d.transA, d.transB);
    d.lda = dense.lda;
    d.ldb = dense.ldb;
    d.ldc = dense.ldc;
  }
  // Batch strides the types leave dynamic are read at run time too.
  std::optional<unsigned> batchPosition[3];
  if (!batchDims.empty())
    for (int i = 0; i < 3; ++i)
      if (unsigned r = resultPosition(maps[i], batchDims[0]);
          r < maps[i].getNumResults())
        batchPosition[i] = r;
  llvm::erase_if(out.assumed, [&](const StrideAssumption &a) {
    for (int i = 0; i < 3; ++i)
      if (a.memref == out.operands[i] && batchPosition[i] == a.dim) {
        out.batchStrideDimOf[i] = a.dim;
        return true;
      }
    return false;
  });
  for (const StrideAssumption &a : out.assumed)
    if (!a.checkable()) {
      int operand = a.memref == out.operands[0]   ? 0
                    : a.memref == out.operands[1] ? 1
                                                  : 2;
      reason = llvm::formatv("the stride of dimension {0} of {1} is dynamic "
                             "and its dense value depends on a dynamic size",
                             a.dim, names[operand])
                   .str();
      return failure();
    }
  d.dynamicM = dynamicM;
  d.dynamicN = dynamicN;
  d.dynamicK = dynamicK;
  out.mDimOfC = resultPosition(maps[2], m);
  out.nDimOfC = resultPosition(maps[2], n);
  out.kDimOfA = resultPosition(maps[0], k);
  if (!batchDims.empty()) {
    unsigned b = batchDims[0];
    out.batch = ranges[b];
    out.batchDimOfC = *batchPosition[2];
    for (int i = 0; i < 3; ++i)
      out.batchStrides[i] =
          out.batchStrideDimOf[i]
              ? ShapedType::kDynamic
              : strideOfLoop(maps[i], strides[i], b).value_or(int64_t(0));
  }
  // A zero fill of C (or a bias broadcast into it) becomes the kernel's
  // overwrite mode (and bias epilogue); then an elementwise consumer may
  // fuse too, on every GEMM of a batch alike (one bias, in the header of
  // every workspace slice).
  // A bias broadcast along the rows: bias[j] in column j, C's dimension N.
  // bf16 and f16 kernels take the same epilogues (bf16 also a rounding of
  // their f32 result to bf16); 8-bit ones none yet.
  const bool fuse = options.fuseEpilogues && !isIntegerPrecision(d.precision);
  OutputInit init =
      dynamicK && !d.runtimeKStoresC()
          ? OutputInit()
          : outputInitOf(out.operands[2], op,
                         fuse ? std::optional<unsigned>(out.nDimOfC)
                              : std::nullopt);
  if (init.op) {
    d.overwrite = true;
    out.cInit = init.op;
    if (init.bias) {
      d.bias = GemmBias::Columns;
      out.bias = init.bias;
      llvm::append_range(out.assumed, init.assumed);
    }
    if (fuse)
      fuseEpilogue(op, out,
                   isHalfPrecision(d.precision)
                       ? getElementTypeOrSelf(out.operands[0].getType())
                       : Type(),
                   options.smoothActivations);
  }
  if (auto err = d.verify()) {
    reason = llvm::toString(std::move(err));
    return failure();
  }
  return out;
}

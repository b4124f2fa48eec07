//===- TensorOpPass.cpp - --qimeng-tensorop
//--------------------------------===//
//
// Thin: describe the op (GemmMatcher, ConvMatcher), ask the libraries for
// a kernel (blocking model, emitter, isolated validation, tuning
// database), rewrite, remark.
//
//===----------------------------------------------------------------------===//
#include "ConstantWeights.h"
#include "CudaLaunch.h"
#include "KernelWorkspace.h"
#include "MemrefAddress.h"
#include "SmoothActivationMatcher.h"
#include "TensorPlacement.h"
#include "ZeroPoints.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/FunctionCallUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "qimeng/Emit/EmitterRunner.h"
#include "qimeng/Kernel/BlockingModel.h"
#include "qimeng/Kernel/Target.h"
#include "qimeng/Kernel/WorkspaceHeader.h"
#include "qimeng/LLM/LlmSession.h"
#include "qimeng/Runtime/CrossValidation.h"
#include "qimeng/Runtime/IsolatedValidation.h"
#include "qimeng/Transforms/ConvMatcher.h"
#include "qimeng/Transforms/GemmMatcher.h"
#include "qimeng/Transforms/Passes.h"
#include "qimeng/Transforms/StrideAssumptions.h"
#include "qimeng/Tune/Tuner.h"
#include "qimeng/Tune/TuningDatabase.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include <array>

namespace qimeng {
#define GEN_PASS_DEF_QIMENGTENSOROP
#include "qimeng/Transforms/Passes.h.inc"
} // namespace qimeng

using namespace mlir;
using namespace qimeng;

namespace {

/// The pass options, snapshotted into plain data and resolved.
struct ResolvedOptions {
  Target target;
  bool targetIsHost = true;
  std::string kernelConfig;
  bool validate = true;
  std::string fault; ///< test only
  std::string cacheDir;
  unsigned tuneBudget = 0;
  unsigned tuneSeconds = 0;
  unsigned threads = 0; ///< 0: all of the target's cores
  /// m-buckets: row counts with kernels of their own for a run-time M,
  /// ascending.
  SmallVector<int64_t> mBuckets;
  EmitterOptions emitter;
  IsolatedValidationOptions runner;
  ChatConfig llm;            ///< baseUrl empty: offline
  std::string llmTranscript; ///< empty: not recorded
};

/// A kernel ready to embed: the emitter's output, validated when asked.
struct ReadyKernel {
  EmittedKernel emitted;
  std::string body;
  /// Parts of C for a parallel kernel (one call each); empty: one call.
  std::vector<GemmRange> parts;
};

/// The inline-asm form of the body: `$` is the operand escape in LLVM's
/// inline asm, so literal ones (AT&T immediates) are doubled.
std::string escapeForInlineAsm(StringRef body) {
  std::string out;
  out.reserve(body.size() + body.size() / 8);
  for (char ch : body) {
    if (ch == '$')
      out += "$$";
    else
      out += ch;
  }
  return out;
}

/// Constraints: the four arguments arrive in the registers the kernel's
/// header names (qm.args, its calling convention's), tied to outputs since
/// the body overwrites them; everything else it clobbers (qm.clobbers),
/// memory, and the machine state the target's inline asm changes
/// (Target::inlineAsmStateClobbers: x86's flags, AArch64's nzcv).
std::string asmConstraints(const EmittedKernel &k, const Target &target) {
  std::string c;
  for (const std::string &reg : k.argRegisters)
    c += "={" + reg + "},";
  for (size_t i = 0; i < k.argRegisters.size(); ++i)
    c += std::to_string(i) + (i + 1 < k.argRegisters.size() ? "," : "");
  std::vector<std::string> clobbers = k.clobbers;
  clobbers.push_back("memory");
  for (const std::string &state : target.inlineAsmStateClobbers())
    clobbers.push_back(state);
  llvm::StringSet<> seen;
  for (const std::string &reg : clobbers) {
    if (llvm::is_contained(k.argRegisters, reg) || !seen.insert(reg).second)
      continue;
    c += ",~{" + reg + "}";
  }
  return c;
}

/// `llvm.func internal @qm_sgemm_...(ptr, ptr, ptr, ptr)` (or
/// @qm_sconv2d_...) whose body is the
/// kernel as one llvm.inline_asm; one per symbol in the module.
LLVM::LLVMFuncOp getOrCreateKernelFunc(ModuleOp module,
                                       const ReadyKernel &kernel,
                                       const Target &target) {
  if (auto existing =
          module.lookupSymbol<LLVM::LLVMFuncOp>(kernel.emitted.symbol))
    return existing;
  MLIRContext *ctx = module.getContext();
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module.getBody());
  Location loc = NameLoc::get(StringAttr::get(ctx, kernel.emitted.symbol));
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto fnType = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                            {ptr, ptr, ptr, ptr});
  auto fn = LLVM::LLVMFuncOp::create(b, loc, kernel.emitted.symbol, fnType,
                                     LLVM::Linkage::Internal);
  fn.setNoInline(true);
  Block *entry = fn.addEntryBlock(b);
  b.setInsertionPointToStart(entry);
  auto resultType = LLVM::LLVMStructType::getLiteral(ctx, {ptr, ptr, ptr, ptr});
  LLVM::InlineAsmOp::create(
      b, loc, resultType, entry->getArguments(),
      escapeForInlineAsm(kernel.body), asmConstraints(kernel.emitted, target),
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(ctx, LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
  LLVM::ReturnOp::create(b, loc, ValueRange());
  return fn;
}

/// An i64 constant.
Value i64Constant(OpBuilder &b, Location loc, int64_t v) {
  return LLVM::ConstantOp::create(b, loc, b.getI64Type(),
                                  b.getI64IntegerAttr(v));
}

/// The size of dimension `dim` of `memref` at run time, as an i64.
Value runtimeSize(OpBuilder &b, Location loc, Value memref, unsigned dim) {
  return arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                    memref::DimOp::create(b, loc, memref, dim));
}

/// The stride (elements) of dimension `dim` of `memref` at run time, as an
/// index.
Value runtimeStride(OpBuilder &b, Location loc, Value memref, unsigned dim) {
  return memref::ExtractStridedMetadataOp::create(b, loc, memref)
      .getStrides()[dim];
}

/// The batch stride of `memref` in bytes, as an index: the run-time stride
/// of its dimension `dim` when given, else `elements`.
Value batchStrideInBytes(OpBuilder &b, Location loc, Value memref,
                         std::optional<unsigned> dim, int64_t elements) {
  Value elementBytes =
      arith::ConstantIndexOp::create(b, loc, elementBytesOf(memref));
  Value stride = dim ? runtimeStride(b, loc, memref, *dim)
                     : Value(arith::ConstantIndexOp::create(b, loc, elements));
  return arith::MulIOp::create(b, loc, stride, elementBytes);
}

/// Stores `values` (8 bytes each, one after the other) at byte `offset`
/// of the header of each of the `slices` workspace slices at `ws`,
/// `sliceBytes` apart (WorkspaceHeader.h).
void storeInEverySlice(OpBuilder &b, Location loc, Value ws, int64_t slices,
                       int64_t sliceBytes, uint64_t offset, ValueRange values) {
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  for (int64_t s = 0; s < slices; ++s)
    for (auto [i, v] : llvm::enumerate(values)) {
      int64_t at = s * sliceBytes + int64_t(offset) + 8 * int64_t(i);
      Value address =
          LLVM::GEPOp::create(b, loc, ptr, b.getI8Type(), ws,
                              ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(at)});
      LLVM::StoreOp::create(b, loc, v, address);
    }
}

/// The arguments of one kernel call in a launcher's loop, built at the loop
/// body from the iteration's index and the launcher's entry block (whose
/// arguments are A, B, C and the workspace, then the launcher's i64
/// arguments).
using LauncherIteration =
    llvm::function_ref<SmallVector<Value, 4>(OpBuilder &, Value, Block *)>;

/// `llvm.func internal @<name>(A, B, C, workspace, i64 x extraArguments)`
/// at the end of `module`: an omp.parallel (of at most `threads` threads
/// when given) with a wsloop over [0, iterations), each iteration calling
/// `kernel` with the arguments `iteration` builds. Without `iterations`,
/// the count is the launcher's fifth argument (the first i64). LLVM dialect and
/// OpenMP only, so that memref passes between the pass and the lowering
/// (ownership-based deallocation, which would put its ownership constants into
/// the OpenMP loop wrapper) leave it alone.
LLVM::LLVMFuncOp
createLauncher(ModuleOp module, StringRef name, LLVM::LLVMFuncOp kernel,
               unsigned extraArguments, std::optional<int64_t> iterations,
               std::optional<int> threads, LauncherIteration iteration) {
  MLIRContext *ctx = module.getContext();
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module.getBody());
  Location loc = NameLoc::get(StringAttr::get(ctx, name));
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  SmallVector<Type> arguments(4, ptr);
  arguments.append(extraArguments, b.getI64Type());
  auto fnType =
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), arguments);
  auto launcher =
      LLVM::LLVMFuncOp::create(b, loc, name, fnType, LLVM::Linkage::Internal);
  Block *entry = launcher.addEntryBlock(b);
  b.setInsertionPointToStart(entry);
  omp::LoopNestOperands bounds;
  bounds.loopLowerBounds = {i64Constant(b, loc, 0)};
  bounds.loopUpperBounds = {iterations ? i64Constant(b, loc, *iterations)
                                       : entry->getArgument(4)};
  bounds.loopSteps = {i64Constant(b, loc, 1)};
  omp::ParallelOperands team;
  if (threads)
    team.numThreads = LLVM::ConstantOp::create(b, loc, b.getI32Type(),
                                               b.getI32IntegerAttr(*threads));
  auto parallel = omp::ParallelOp::create(b, loc, team);
  Block *parallelBody = b.createBlock(&parallel.getRegion());
  b.setInsertionPointToStart(parallelBody);
  auto wsloop = omp::WsloopOp::create(b, loc, omp::WsloopOperands());
  b.createBlock(&wsloop.getRegion());
  auto nest = omp::LoopNestOp::create(b, loc, bounds);
  Block *body = b.createBlock(&nest.getRegion(), {}, {b.getI64Type()}, {loc});
  LLVM::CallOp::create(b, loc, kernel,
                       iteration(b, body->getArgument(0), entry));
  omp::YieldOp::create(b, loc, ValueRange());
  b.setInsertionPointToEnd(parallelBody);
  omp::TerminatorOp::create(b, loc);
  b.setInsertionPointToEnd(entry);
  LLVM::ReturnOp::create(b, loc, ValueRange());
  return launcher;
}

/// `@<symbol>_parts<T>`: the parallel form's launcher (createLauncher),
/// one per kernel and part count, over the T parts; part i writes its
/// range (row m_begin, m_end, column n_begin, n_end: a constant table) at
/// kRangeOffset of its own workspace slice, `sliceBytes` apart, and calls
/// the kernel on it. For a run-time M (`runtimeRows`, `_cols`), only the
/// columns, and for a run-time N (`runtimeColumns`, `_rows`) only the
/// rows: the caller wrote the run-time ones into every slice.
LLVM::LLVMFuncOp getOrCreatePartsLauncher(ModuleOp module, LLVM::LLVMFuncOp fn,
                                          const ReadyKernel &kernel,
                                          int64_t sliceBytes, bool runtimeRows,
                                          bool runtimeColumns) {
  const std::vector<GemmRange> &parts = kernel.parts;
  std::string name = (kernel.emitted.symbol + "_parts" + Twine(parts.size()) +
                      (runtimeRows && runtimeColumns ? "_caller"
                       : runtimeRows                 ? "_cols"
                       : runtimeColumns              ? "_rows"
                                                     : ""))
                         .str();
  if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return existing;
  OpBuilder b(module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  auto i64 = b.getI64Type();
  SmallVector<int64_t> values;
  for (const GemmRange &p : parts)
    values.append({p.mBegin, p.mEnd, p.nBegin, p.nEnd});
  auto tableType = LLVM::LLVMArrayType::get(i64, values.size());
  auto init = DenseIntElementsAttr::get(
      RankedTensorType::get({static_cast<int64_t>(values.size())}, i64),
      ArrayRef<int64_t>(values));
  auto table =
      LLVM::GlobalOp::create(b, module.getLoc(), tableType, /*isConstant=*/true,
                             LLVM::Linkage::Internal, name + "_table", init);
  return createLauncher(
      module, name, fn, /*extraArguments=*/0, int64_t(parts.size()),
      std::nullopt, [&](OpBuilder &ob, Value part, Block *entry) {
        Location loc = entry->getParentOp()->getLoc();
        auto ptr = LLVM::LLVMPointerType::get(ob.getContext());
        Value tableAddress = LLVM::AddressOfOp::create(ob, loc, table);
        Value sliceOffset = LLVM::MulOp::create(
            ob, loc, part, i64Constant(ob, loc, sliceBytes));
        Value slice =
            LLVM::GEPOp::create(ob, loc, ptr, ob.getI8Type(),
                                entry->getArgument(3), ValueRange{sliceOffset});
        Value row = LLVM::MulOp::create(ob, loc, part, i64Constant(ob, loc, 4));
        for (int64_t j = runtimeRows ? 2 : 0; j < (runtimeColumns ? 2 : 4);
             ++j) {
          Value index =
              LLVM::AddOp::create(ob, loc, row, i64Constant(ob, loc, j));
          Value from = LLVM::GEPOp::create(ob, loc, ptr, i64, tableAddress,
                                           ValueRange{index});
          Value v = LLVM::LoadOp::create(ob, loc, i64, from);
          Value to =
              LLVM::GEPOp::create(ob, loc, ptr, i64, slice,
                                  ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(
                                      kRangeOffset / 8 + j)});
          LLVM::StoreOp::create(ob, loc, v, to);
        }
        return SmallVector<Value, 4>{entry->getArgument(0),
                                     entry->getArgument(1),
                                     entry->getArgument(2), slice};
      });
}

/// `@<symbol>_batch_t<T>(A, B, C, workspace, count, sa, sb, sc)`: a
/// single-part kernel's batch run concurrently (createLauncher, at most T
/// threads) over `count` GEMMs; GEMM i reads and writes its operands at
/// A, B and C plus i times their batch strides (bytes sa, sb, sc: run-time
/// values, so that dynamic batch sizes and strides need no second launcher)
/// and uses the workspace slice of the thread running it
/// (omp_get_thread_num, `sliceBytes` apart: the caller allocates T). With
/// `halfOutput` two more: D's address and batch stride in bytes; GEMM i's
/// D pointer goes into its slice's header first.
LLVM::LLVMFuncOp getOrCreateBatchLauncher(ModuleOp module, LLVM::LLVMFuncOp fn,
                                          const ReadyKernel &kernel,
                                          int threads, int64_t sliceBytes,
                                          bool halfOutput) {
  std::string name =
      llvm::formatv("{0}_batch_t{1}", kernel.emitted.symbol, threads).str();
  if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return existing;
  auto threadNum = module.lookupSymbol<LLVM::LLVMFuncOp>("omp_get_thread_num");
  if (!threadNum) {
    OpBuilder b(module.getContext());
    b.setInsertionPointToEnd(module.getBody());
    threadNum = LLVM::LLVMFuncOp::create(
        b, module.getLoc(), "omp_get_thread_num",
        LLVM::LLVMFunctionType::get(b.getI32Type(), {}));
  }
  return createLauncher(
      module, name, fn, /*extraArguments=*/halfOutput ? 6 : 4, std::nullopt,
      threads, [&](OpBuilder &ob, Value index, Block *entry) {
        Location loc = entry->getParentOp()->getLoc();
        auto ptr = LLVM::LLVMPointerType::get(ob.getContext());
        SmallVector<Value, 4> arguments;
        for (int i = 0; i < 3; ++i) {
          Value offset =
              LLVM::MulOp::create(ob, loc, index, entry->getArgument(5 + i));
          arguments.push_back(LLVM::GEPOp::create(ob, loc, ptr, ob.getI8Type(),
                                                  entry->getArgument(i),
                                                  ValueRange{offset}));
        }
        Value thread =
            LLVM::CallOp::create(ob, loc, threadNum, ValueRange()).getResult();
        Value thread64 = LLVM::SExtOp::create(ob, loc, ob.getI64Type(), thread);
        Value sliceOffset = LLVM::MulOp::create(
            ob, loc, thread64, i64Constant(ob, loc, sliceBytes));
        Value slice =
            LLVM::GEPOp::create(ob, loc, ptr, ob.getI8Type(),
                                entry->getArgument(3), ValueRange{sliceOffset});
        if (halfOutput) {
          Value out = LLVM::AddOp::create(
              ob, loc, entry->getArgument(8),
              LLVM::MulOp::create(ob, loc, index, entry->getArgument(9)));
          Value at = LLVM::GEPOp::create(
              ob, loc, ptr, ob.getI8Type(), slice,
              ArrayRef<LLVM::GEPArg>{int32_t(kHalfOutputOffset)});
          LLVM::StoreOp::create(
              ob, loc, LLVM::IntToPtrOp::create(ob, loc, ptr, out), at);
        }
        arguments.push_back(slice);
        return arguments;
      });
}

/// How an op's operands feed the kernel: `batch` calls, call i on the
/// operands' first elements plus i times their batch strides (elements:
/// A or input, B or filter, C or output).
struct KernelLaunch {
  Value operands[3]; ///< the buffers the kernel reads and writes
  /// The number of GEMMs, or ShapedType::kDynamic for the size of C's
  /// dimension `batchDimOfC` at run time.
  int64_t batch = 1;
  unsigned batchDimOfC = 0;
  /// Batch strides: constants, or where `batchStrideDimOf[i]` is set the
  /// run-time stride of that dimension of operands[i].
  int64_t batchStrides[3] = {0, 0, 0};
  std::optional<unsigned> batchStrideDimOf[3];
  /// Threads for the batch loop of a kernel too small to split: its GEMMs
  /// then run concurrently, one per thread at a time.
  int batchThreads = 1;
  /// Ops that only the original op needs (transposes the kernel reads
  /// through, the zero fill an overwriting kernel replaces): erased with
  /// it, or moved with it where it stays.
  SmallVector<Operation *> foldedOps;
  /// For a kernel that reads its leading dimensions at run time: the
  /// dimension of operands[leadingDimOperand[i]] whose stride is its i-th
  /// leading dimension, or nullopt for the constant in
  /// `leadingDimConstants`. (A convolution with run-time strides: the
  /// input's three outer strides, in the same header slots.)
  std::optional<unsigned> leadingDimOf[3];
  unsigned leadingDimOperand[3] = {0, 1, 2};
  int64_t leadingDimConstants[3] = {0, 0, 0};
  /// For a run-time M or N: the dimension of operands[2] (C) whose size it
  /// is; for a run-time K, the dimension of operands[0] (A).
  std::optional<unsigned> mDimOfC, nDimOfC, kDimOfA;
  /// A fused epilogue: the elementwise ops it replaces (after `op`: erased
  /// with it, cloned after it where the op stays), its bias (whose address
  /// goes into the header) and the allocations of their outputs, moved
  /// before the op when they came after.
  SmallVector<Operation *, 2> epilogueOps;
  Value bias;
  /// A residual the epilogue adds: copied into operands[2] before the
  /// kernel, which accumulates onto it.
  Value residual;
  SmallVector<Operation *, 2> opsToHoist;
  /// A bf16 or f16 output (GemmDesc::halfOutput): the buffer, whose pointer
  /// goes into the header, and with run-time leading dimensions its ldd, the
  /// stride of its dimension leadingDimOf[2] (as C's), or for a single row
  /// `n`; in a batch, its batch stride (a constant, or the run-time stride
  /// of its dimension `halfOutputBatchStrideDim`).
  Value halfOutput;
  int64_t halfOutputBatchStride = 0;
  std::optional<unsigned> halfOutputBatchStrideDim;
  /// Rows and columns of C where they are static (a run-time size's single
  /// call writes the other one too).
  int64_t m = 0, n = 0;
};

/// Writes the run-time part of a run-time-M or -N kernel's range (M, N:
/// the sizes of C along launch.mDimOfC, nDimOfC) into each of the `slices`
/// workspace slices: for a single call (no parts) rows [0, M) and columns
/// [0, N); for parts (the launcher writes the static side from its table)
/// the run-time side only.
void writeRuntimeRange(OpBuilder &b, Location loc, const KernelLaunch &launch,
                       Value ws, int64_t slices, int64_t sliceBytes,
                       bool singleCall) {
  auto size = [&](std::optional<unsigned> dim, int64_t constant) -> Value {
    return dim ? runtimeSize(b, loc, launch.operands[2], *dim)
               : i64Constant(b, loc, constant);
  };
  Value zero = i64Constant(b, loc, 0);
  Value rows[2] = {zero, size(launch.mDimOfC, launch.m)};
  Value columns[2] = {zero, size(launch.nDimOfC, launch.n)};
  if (singleCall || launch.mDimOfC)
    storeInEverySlice(b, loc, ws, slices, sliceBytes, kRangeOffset, rows);
  if (singleCall || launch.nDimOfC)
    storeInEverySlice(b, loc, ws, slices, sliceBytes, kRangeOffset + 16,
                      columns);
}

/// "m, n" and the like for the sizes a kernel reads at run time; "none".
std::string runtimeSizesText(bool m, bool n, bool k) {
  std::string s;
  for (auto [set, name] : {std::pair{m, "m"}, {n, "n"}, {k, "k"}})
    if (set)
      s += (s.empty() ? "" : ", ") + std::string(name);
  return s.empty() ? "none" : s;
}

/// Writes the leading dimensions of `launch`'s operands (their strides at
/// run time) where a run-time-ld kernel reads them (a convolution's input
/// strides where it reads those), in each of the `slices` workspace slices
/// `sliceBytes` apart.
void writeLeadingDims(OpBuilder &b, Location loc, const KernelLaunch &launch,
                      Value ws, int64_t slices, int64_t sliceBytes) {
  auto i64 = b.getI64Type();
  Value lds[3];
  for (int i = 0; i < 3; ++i) {
    if (!launch.leadingDimOf[i]) {
      lds[i] = i64Constant(b, loc, launch.leadingDimConstants[i]);
      continue;
    }
    lds[i] = arith::IndexCastOp::create(
        b, loc, i64,
        runtimeStride(b, loc, launch.operands[launch.leadingDimOperand[i]],
                      *launch.leadingDimOf[i]));
  }
  storeInEverySlice(b, loc, ws, slices, sliceBytes, kLeadingDimsOffset, lds);
}

/// Emits, at `b`, the kernel's calls on `op`'s operands: the workspace
/// (KernelWorkspace.h: the module's cached one, below the memref level, so
/// that ownership-based deallocation neither sees nor frees it), a loop over
/// the batch when there is one, and per GEMM one call of the kernel or, for
/// a parallel kernel, of its parts launcher.
void emitKernelCalls(OpBuilder &b, ModuleOp module, linalg::LinalgOp op,
                     LLVM::LLVMFuncOp fn, const ReadyKernel &kernel,
                     const KernelLaunch &launch) {
  Location loc = op.getLoc();
  auto i64 = b.getI64Type();
  // A fused residual is where the kernel's output starts (linalg.copy: the
  // stock pipeline lowers it to loops, with nothing of a runtime library).
  if (launch.residual)
    linalg::CopyOp::create(b, loc, launch.residual, launch.operands[2]);
  Value operands[3];
  for (int i = 0; i < 3; ++i)
    operands[i] = elementAddress(b, loc, launch.operands[i]);
  // The emitter's workspace sizes are multiples of 64 bytes.
  int64_t sliceBytes = static_cast<int64_t>(
      std::max<uint64_t>(kernel.emitted.workspaceBytes, 64));
  // The batch runs concurrently when its GEMMs are too small to split.
  const bool batched = launch.batch != 1;
  const int batchThreads =
      batched && kernel.parts.empty()
          ? static_cast<int>(
                ShapedType::isDynamic(launch.batch)
                    ? launch.batchThreads
                    : std::min<int64_t>(launch.batchThreads, launch.batch))
          : 1;
  int64_t slices =
      std::max<int64_t>({1, int64_t(kernel.parts.size()), batchThreads});
  Value size = LLVM::ConstantOp::create(
      b, loc, i64, b.getI64IntegerAttr(slices * sliceBytes));
  Value ws = acquireWorkspace(b, loc, module, size);
  if (kernel.emitted.runtimeLeadingDims || kernel.emitted.runtimeInputStrides)
    writeLeadingDims(b, loc, launch, ws, slices, sliceBytes);
  if (launch.mDimOfC || launch.nDimOfC)
    writeRuntimeRange(b, loc, launch, ws, slices, sliceBytes,
                      /*singleCall=*/kernel.parts.empty());
  if (launch.kDimOfA)
    storeInEverySlice(b, loc, ws, slices, sliceBytes, kRuntimeKOffset,
                      runtimeSize(b, loc, launch.operands[0], *launch.kDimOfA));
  if (launch.bias)
    storeInEverySlice(
        b, loc, ws, slices, sliceBytes, kBiasOffset,
        toPointer(b, loc, elementAddress(b, loc, launch.bias), Value()));
  // The 16-bit output: its pointer here, or in a batch per GEMM (below).
  Value outputAddress;
  if (launch.halfOutput) {
    outputAddress = elementAddress(b, loc, launch.halfOutput);
    if (!batched)
      storeInEverySlice(b, loc, ws, slices, sliceBytes, kHalfOutputOffset,
                        toPointer(b, loc, outputAddress, Value()));
    if (kernel.emitted.runtimeLeadingDims)
      storeInEverySlice(b, loc, ws, slices, sliceBytes, kHalfOutputLdOffset,
                        launch.leadingDimOf[2]
                            ? Value(arith::IndexCastOp::create(
                                  b, loc, i64,
                                  runtimeStride(b, loc, launch.halfOutput,
                                                *launch.leadingDimOf[2])))
                            : i64Constant(b, loc, launch.n));
  }
  // The batch's count and strides in bytes (index values), where it has
  // more than one GEMM.
  Value batchCount, batchStrideBytes[3], outputStrideBytes;
  if (batched) {
    batchCount =
        ShapedType::isDynamic(launch.batch)
            ? Value(memref::DimOp::create(b, loc, launch.operands[2],
                                          launch.batchDimOfC))
            : Value(arith::ConstantIndexOp::create(b, loc, launch.batch));
    for (int i = 0; i < 3; ++i)
      batchStrideBytes[i] = batchStrideInBytes(b, loc, launch.operands[i],
                                               launch.batchStrideDimOf[i],
                                               launch.batchStrides[i]);
    if (launch.halfOutput)
      outputStrideBytes = batchStrideInBytes(b, loc, launch.halfOutput,
                                             launch.halfOutputBatchStrideDim,
                                             launch.halfOutputBatchStride);
  }
  auto emitGemm = [&](OpBuilder &ob, Value batchIndex) {
    Value pointers[3];
    for (int i = 0; i < 3; ++i) {
      Value bytes;
      if (batchIndex)
        bytes = arith::MulIOp::create(ob, loc, batchIndex, batchStrideBytes[i]);
      pointers[i] = toPointer(ob, loc, operands[i], bytes);
    }
    if (batchIndex && launch.halfOutput)
      storeInEverySlice(ob, loc, ws, slices, sliceBytes, kHalfOutputOffset,
                        toPointer(ob, loc, outputAddress,
                                  arith::MulIOp::create(ob, loc, batchIndex,
                                                        outputStrideBytes)));
    LLVM::LLVMFuncOp callee =
        kernel.parts.empty()
            ? fn
            : getOrCreatePartsLauncher(module, fn, kernel, sliceBytes,
                                       /*runtimeRows=*/bool(launch.mDimOfC),
                                       /*runtimeColumns=*/
                                       bool(launch.nDimOfC));
    LLVM::CallOp::create(ob, loc, callee,
                         ValueRange{pointers[0], pointers[1], pointers[2], ws});
  };

  if (!batched) {
    emitGemm(b, Value());
  } else if (batchThreads > 1) {
    LLVM::LLVMFuncOp launcher =
        getOrCreateBatchLauncher(module, fn, kernel, batchThreads, sliceBytes,
                                 /*halfOutput=*/bool(launch.halfOutput));
    SmallVector<Value, 8> arguments;
    for (int i = 0; i < 3; ++i)
      arguments.push_back(toPointer(b, loc, operands[i], Value()));
    arguments.push_back(ws);
    SmallVector<Value, 6> counts = {batchCount, batchStrideBytes[0],
                                    batchStrideBytes[1], batchStrideBytes[2]};
    if (launch.halfOutput)
      counts.append({outputAddress, outputStrideBytes});
    for (Value v : counts)
      arguments.push_back(arith::IndexCastOp::create(b, loc, i64, v));
    LLVM::CallOp::create(b, loc, launcher, arguments);
  } else {
    Value lower = arith::ConstantIndexOp::create(b, loc, 0);
    Value step = arith::ConstantIndexOp::create(b, loc, 1);
    auto loop = scf::ForOp::create(b, loc, lower, batchCount, step);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    emitGemm(b, loop.getInductionVar());
  }
  releaseWorkspace(b, loc, module, ws);
}

/// Whether the B of `problem`, launched as `launch` for `target`, may come
/// packed at compile time (ConstantWeights.h): an x86 f32 kernel (sgemm,
/// sconv2d; not the AArch64 and RISC-V sketch's), a bf16 or 8-bit one (the
/// dot and AMX kernels; f16's is split or widened where it is packed),
/// static sizes (one kernel, one layout: no m-buckets), one B for every
/// GEMM of a batch, and not one row of bf16 A against B^T (the
/// matrix-vector form reads B^T once where it lies; f32's few-rows block
/// over a prepacked B beats it: 1.07x at 1x4096x4096, 1.57x at
/// 16x4096x4096 on Zen 5).
bool mayPrepackB(const KernelProblem &problem, const KernelLaunch &launch,
                 const Target &target) {
  const GemmDesc &g = problem.gemm();
  // (A convolution whose blocks end in a partial group of k, 3 channels,
  // has no prepacked filter.)
  if (problem.conv() && !problem.conv()->filterMayBePrepacked())
    return false;
  if (g.precision == GemmPrecision::F32 && isSketchIsa(target.bestIsa()))
    return false;
  return g.precision != GemmPrecision::F16 && !g.dynamicM && !g.dynamicN &&
         !g.dynamicK &&
         !(g.m == 1 && isHalfPrecision(g.precision) &&
           g.bTransposedRowsInPlace()) &&
         (launch.batch == 1 ||
          (launch.batchStrides[1] == 0 && !launch.batchStrideDimOf[1]));
}

/// A remark on the elementwise consumer of `output` (the kernel's output,
/// or its fused epilogue's) that applies a smooth activation the kernel
/// did not take, where the reason is the kernel's: an 8-bit product, or
/// a target whose kernels do not compute one. (Elsewhere the consumer's
/// own form kept it out, as for any other epilogue.)
void remarkUnfusedSmoothActivation(Operation *op, Value output,
                                   GemmPrecision precision,
                                   const Target &target) {
  const bool floating = !isIntegerPrecision(precision);
  if (floating && isaAppliesSmoothActivations(target.bestIsa()))
    return;
  for (Operation *user : output.getUsers()) {
    auto g = dyn_cast<linalg::GenericOp>(user);
    if (!g || g->getBlock() != op->getBlock() || !op->isBeforeInBlock(g) ||
        g.getNumResults() != 0 || g.getRegion().front().getNumArguments() == 0)
      continue;
    Operation *yield = g.getRegion().front().getTerminator();
    if (yield->getNumOperands() != 1)
      continue;
    llvm::SmallPtrSet<Operation *, 8> used;
    auto found = matchSmoothActivation(yield->getOperand(0), used);
    if (!found)
      continue;
    InFlightDiagnostic remark = g->emitRemark();
    remark << Activation::smoothName(found->first)
           << " not fused into the kernel of " << op->getName() << ": ";
    if (!floating)
      remark << "smooth activations fuse after floating-point products "
                "only, not "
             << precisionName(precision);
    else
      remark << isaName(target.bestIsa())
             << "'s kernels do not compute one (the AVX2, AVX-512, NEON, SVE "
                "and RVV kernels do)";
    return;
  }
}

/// A kernel for a run-time M of at most `rows` rows (m-buckets).
struct MBucketKernel {
  LLVM::LLVMFuncOp fn;
  const ReadyKernel *kernel = nullptr;
  int64_t rows = 0;
};

/// The kernel's calls, or with `buckets` (fewest rows first) a choice at
/// run time on M (C's size along launch.mDimOfC): the first bucket whose
/// rows are not below M, else the kernel.
void emitKernelCallsForM(OpBuilder &b, ModuleOp module, linalg::LinalgOp op,
                         LLVM::LLVMFuncOp fn, const ReadyKernel &kernel,
                         const KernelLaunch &launch,
                         ArrayRef<MBucketKernel> buckets) {
  if (buckets.empty()) {
    emitKernelCalls(b, module, op, fn, kernel, launch);
    return;
  }
  Location loc = op.getLoc();
  Value m = memref::DimOp::create(b, loc, launch.operands[2], *launch.mDimOfC);
  Value few = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ule, m,
      arith::ConstantIndexOp::create(b, loc, buckets.front().rows));
  auto ifOp = scf::IfOp::create(b, loc, few, /*withElseRegion=*/true);
  OpBuilder thenBuilder = ifOp.getThenBodyBuilder();
  emitKernelCalls(thenBuilder, module, op, buckets.front().fn,
                  *buckets.front().kernel, launch);
  OpBuilder elseBuilder = ifOp.getElseBodyBuilder();
  emitKernelCallsForM(elseBuilder, module, op, fn, kernel, launch,
                      buckets.drop_front());
}

/// Replaces `op` with its kernel's calls (and the buckets' for few rows).
/// Where the kernel was specialised for strides the types leave dynamic,
/// the calls run when the strides are those at run time and a clone of
/// `op` (after clones of the ops it needs that the kernel does not: folded
/// transposes and zero fills) runs otherwise.
void replaceWithKernelCall(ModuleOp module, linalg::LinalgOp op,
                           LLVM::LLVMFuncOp fn, const ReadyKernel &kernel,
                           const KernelLaunch &launch,
                           ArrayRef<StrideAssumption> assumed,
                           ArrayRef<MBucketKernel> buckets) {
  for (Operation *hoisted : launch.opsToHoist)
    hoisted->moveBefore(op);
  OpBuilder b(op);
  Location loc = op.getLoc();
  if (assumed.empty()) {
    emitKernelCallsForM(b, module, op, fn, kernel, launch, buckets);
  } else {
    Value holds = buildAssumptionCheck(b, loc, assumed);
    auto ifOp = scf::IfOp::create(b, loc, holds, /*withElseRegion=*/true);
    OpBuilder thenBuilder = ifOp.getThenBodyBuilder();
    emitKernelCallsForM(thenBuilder, module, op, fn, kernel, launch, buckets);
    OpBuilder elseBuilder = ifOp.getElseBodyBuilder();
    for (Operation *folded : launch.foldedOps)
      elseBuilder.clone(*folded);
    elseBuilder.clone(*op.getOperation());
    for (Operation *epilogue : launch.epilogueOps)
      elseBuilder.clone(*epilogue);
  }
  // The buffers only folded transposes, the op itself (its epilogue's
  // output written instead) or the fused chain's inner generics wrote
  // (their fresh allocations) are dead once those are gone: no
  // allocation, no deallocation.
  llvm::SetVector<Operation *> unwritten;
  if (!launch.epilogueOps.empty())
    if (auto alloc = op.getDpsInits()[0].getDefiningOp<memref::AllocOp>())
      unwritten.insert(alloc);
  for (Operation *folded : launch.foldedOps)
    if (auto t = dyn_cast<linalg::TransposeOp>(folded))
      if (auto alloc = t.getInit().getDefiningOp<memref::AllocOp>())
        unwritten.insert(alloc);
  for (size_t i = 0; i + 1 < launch.epilogueOps.size(); ++i)
    if (auto alloc = cast<linalg::GenericOp>(launch.epilogueOps[i])
                         .getDpsInits()[0]
                         .getDefiningOp<memref::AllocOp>())
      unwritten.insert(alloc);
  op->erase();
  for (Operation *folded : launch.foldedOps)
    folded->erase();
  for (Operation *epilogue : launch.epilogueOps)
    epilogue->erase();
  for (Operation *alloc : unwritten) {
    if (!llvm::all_of(alloc->getUsers(),
                      [](Operation *u) { return isa<memref::DeallocOp>(u); }))
      continue;
    for (Operation *dealloc : llvm::make_early_inc_range(alloc->getUsers()))
      dealloc->erase();
    alloc->erase();
  }
}

struct QiMengTensorOpPass
    : public qimeng::impl::QiMengTensorOpBase<QiMengTensorOpPass> {
  using QiMengTensorOpBase::QiMengTensorOpBase;

  std::optional<TuningDatabase> database;
  // Per run (shared, since passes are copied when cloned).
  std::shared_ptr<LlmSession> llm;

  /// The emitters' and the runner's options.
  LogicalResult resolveEmitterAndRunner(ModuleOp module,
                                        EmitterOptions &emitter,
                                        IsolatedValidationOptions &runnerOut) {
    emitter = EmitterOptions::defaults();
    if (!std::string(python).empty())
      emitter.python = python;
    if (!std::string(emitterDir).empty())
      emitter.packageDir = emitterDir;
    unsigned timeout = emitTimeout;
    if (timeout == 0) {
      mlir::emitError(module.getLoc())
          << "qimeng-tensorop: invalid option emit-timeout=0: "
             "need at least 1 second";
      return failure();
    }
    emitter.timeoutSeconds = timeout;
    runnerOut = IsolatedValidationOptions::defaults();
    if (!std::string(runner).empty())
      runnerOut.runnerPath = runner;
    runnerOut.timeoutSeconds = std::max(timeout, 120u);
    return success();
  }

  /// An NVIDIA target (target=nvptx64-nvidia-cuda:ARCH): the contractions
  /// become launches of embedded cubins (CudaLaunch.h). False for other
  /// targets; an error for a bad one.
  FailureOr<bool> rewriteForNvidiaTarget(ModuleOp module) {
    auto gpu = parseCudaTarget(target);
    if (!gpu) {
      mlir::emitError(module.getLoc())
          << "qimeng-tensorop: invalid option target='" << target
          << "': " << llvm::toString(gpu.takeError());
      return failure();
    }
    if (!*gpu) {
      if (tf32) {
        mlir::emitError(module.getLoc())
            << "qimeng-tensorop: invalid option tf32: it is for NVIDIA "
               "targets (target=nvptx64-nvidia-cuda:ARCH)";
        return failure();
      }
      return false;
    }
    CudaRewriteOptions o;
    o.gpu = **gpu;
    o.tf32 = tf32;
    o.validate = validate;
    IsolatedValidationOptions cpuRunner;
    if (failed(resolveEmitterAndRunner(module, o.emitter, cpuRunner)))
      return failure();
    // qimeng-cuda-runner sits beside qimeng-runner.
    o.cudaRunner = (llvm::sys::path::parent_path(cpuRunner.runnerPath) +
                    "/qimeng-cuda-runner")
                       .str();
    rewriteForCuda(module, o);
    return true;
  }

  /// Options -> plain data; a bad option is an error naming it.
  FailureOr<ResolvedOptions> resolveOptions(ModuleOp module) {
    ResolvedOptions o;
    std::string targetSpec = target;
    if (targetSpec.empty() || targetSpec == "host") {
      o.target = Target::detectHost();
    } else {
      auto parsed = Target::parse(targetSpec);
      if (!parsed) {
        mlir::emitError(module.getLoc())
            << "qimeng-tensorop: invalid option target='" << targetSpec
            << "': " << llvm::toString(parsed.takeError());
        return failure();
      }
      o.target = *parsed;
      o.targetIsHost = false;
    }
    if (!useAmx)
      o.target = o.target.withoutAmx();
    o.kernelConfig = kernelConfig;
    if (!o.kernelConfig.empty()) {
      auto parsed = GemmConfig::parse(o.kernelConfig, GemmConfig());
      if (!parsed) {
        mlir::emitError(module.getLoc())
            << "qimeng-tensorop: invalid option kernel-config='"
            << o.kernelConfig << "': " << llvm::toString(parsed.takeError());
        return failure();
      }
    }
    o.validate = validate;
    o.cacheDir = resolveCacheDir(cacheDir);
    o.tuneBudget = tuneBudget;
    o.tuneSeconds = tuneSeconds;
    o.threads = threads;
    // m-buckets: "none", or positive row counts separated by commas.
    StringRef buckets = StringRef(mBuckets).trim();
    if (buckets != "none" && !buckets.empty()) {
      SmallVector<StringRef> items;
      buckets.split(items, ',');
      for (StringRef item : items) {
        int64_t rows = 0;
        if (item.trim().getAsInteger(10, rows) || rows < 1) {
          mlir::emitError(module.getLoc())
              << "qimeng-tensorop: invalid option m-buckets='" << buckets
              << "': expected positive row counts separated by commas, or "
                 "none";
          return failure();
        }
        o.mBuckets.push_back(rows);
      }
      llvm::sort(o.mBuckets);
      o.mBuckets.erase(std::unique(o.mBuckets.begin(), o.mBuckets.end()),
                       o.mBuckets.end());
    }
    if (o.tuneBudget > 0 && !o.targetIsHost) {
      mlir::emitError(module.getLoc())
          << "qimeng-tensorop: invalid option tune-budget=" << o.tuneBudget
          << ": tuning measures on this machine, so it needs "
             "target=host";
      return failure();
    }
    o.fault = testInjectFault;
    if (!o.fault.empty() && o.fault != "drop-k" &&
        o.fault != "write-past-edge" && o.fault != "drop-low") {
      mlir::emitError(module.getLoc())
          << "qimeng-tensorop: invalid option "
             "test-inject-fault='"
          << o.fault << "': expected drop-k, write-past-edge or drop-low";
      return failure();
    }
    if (failed(resolveEmitterAndRunner(module, o.emitter, o.runner)))
      return failure();
    o.llm = ChatConfig::fromEnvironment();
    if (!std::string(llmEndpoint).empty())
      o.llm.baseUrl = llmEndpoint;
    if (!std::string(llmModel).empty())
      o.llm.model = llmModel;
    if (!std::string(llmApiKeyEnv).empty())
      o.llm.apiKeyEnv = llmApiKeyEnv;
    o.llmTranscript = llmTranscript;
    if (!o.llm.baseUrl.empty()) {
      if (auto err = o.llm.verify()) {
        mlir::emitError(module.getLoc())
            << "qimeng-tensorop: invalid LLM options: "
            << llvm::toString(std::move(err));
        return failure();
      }
    }
    return o;
  }

  /// Chooses, emits and validates the kernel for `problem`; the reason on
  /// failure has no "not accelerated:" prefix.
  FailureOr<ReadyKernel> prepareKernel(const KernelProblem &problem,
                                       const ResolvedOptions &o,
                                       std::string &reason) {
    // Blocking, threads and parts work on the GEMM (a convolution's view).
    const GemmDesc &desc = problem.gemm();
    // Threads: the option (0: all cores), at most one per part of C.
    int threads = o.threads == 0 ? o.target.cores : static_cast<int>(o.threads);
    auto config = chooseKernelConfig(problem, o.target, threads);
    if (!config) {
      reason = llvm::toString(config.takeError());
      return failure();
    }
    config->threads = threads;
    if (!o.kernelConfig.empty()) {
      auto pinned = GemmConfig::parse(o.kernelConfig, *config);
      if (!pinned) {
        reason = llvm::toString(pinned.takeError());
        return failure();
      }
      config = clampToProblem(*pinned, desc);
    }
    if (auto split = requiredSplit(problem, config->isa))
      config->split = *split;
    config->threads = partitionedThreads(desc, *config, config->threads);
    // The tuning database first: a hit is a kernel that was validated and
    // timed when it was stored. Pinned configs and injected faults bypass
    // it.
    bool useDatabase = o.kernelConfig.empty() && o.fault.empty();
    std::optional<TuningKey> key;
    if (useDatabase) {
      if (auto k = tuningKey(problem, o.target, o.emitter, config->threads))
        key = *k;
      else
        llvm::consumeError(k.takeError());
    }
    // A hit for another form of the same GEMM (TuningDatabase.md, the
    // key's `semantics`: overwrite for a folded fill, an epilogue, a 16-bit
    // output, B prepacked) lends its tuned blocking; this form's own kernel
    // is emitted from it and validated below.
    std::optional<TuningRecord> hit;
    std::optional<GemmConfig> modelsConfig; // set where the hit's replaces it
    if (key && database) {
      std::vector<std::string> warnings;
      hit = database->lookup(*key, warnings);
      for (const std::string &w : warnings)
        mlir::emitWarning(getOperation().getLoc()) << w;
      if (hit && !(hit->key.desc == desc)) {
        modelsConfig = *config;
        config = hit->config;
      } else if (hit) {
        auto kernel = parseEmitterOutput(hit->kernelText);
        if (kernel) {
          auto body = kernel->body();
          if (body)
            return ReadyKernel{std::move(*kernel), std::move(*body),
                               kernelParts(desc, hit->config)};
          llvm::consumeError(body.takeError());
        } else {
          mlir::emitWarning(getOperation().getLoc())
              << "tuning database: ignoring the entry for " << problem.str()
              << ": " << llvm::toString(kernel.takeError());
        }
        hit.reset(); // unusable: tuned again where tuning is on
      }
    }
    if (key && !hit && o.tuneBudget > 0) {
      TuneRequest request;
      request.problem = problem;
      request.target = o.target;
      request.base = *config;
      request.budget.trials = o.tuneBudget;
      request.budget.seconds = o.tuneSeconds;
      request.emitter = o.emitter;
      request.runner = o.runner;
      request.progress = [](const std::string &line) {
        llvm::errs() << "qimeng-tensorop: " << line << "\n";
      };
      request.llm = llm ? &llm->client() : nullptr;
      auto tuned = tuneKernel(request);
      if (tuned && llm)
        for (const ProposalRound &round : tuned->llmRounds)
          if (!round.error.empty())
            mlir::emitWarning(getOperation().getLoc())
                << "LLM proposer round unusable for " << problem.str() << ": "
                << round.error << "; the built-in priors went on alone";
      if (!tuned) {
        reason = llvm::toString(tuned.takeError());
        return failure();
      }
      if (database) {
        if (auto err = database->store(tuned->record))
          mlir::emitWarning(getOperation().getLoc())
              << "tuning database: cannot store " << problem.str() << ": "
              << llvm::toString(std::move(err));
      }
      auto body = tuned->kernel.body();
      if (!body) {
        reason = llvm::toString(body.takeError());
        return failure();
      }
      std::vector<GemmRange> parts = kernelParts(desc, tuned->record.config);
      return ReadyKernel{std::move(tuned->kernel), std::move(*body),
                         std::move(parts)};
    }

    // The emitter refuses an isa the target lacks; validation needs the
    // kernel to run here, or (another architecture) under its emulator.
    if (o.validate && !o.targetIsHost && o.target.sameArchAsHost()) {
      Target host = Target::detectHost();
      VectorIsa hostIsa = host.bestIsa();
      if (hostIsa == VectorIsa::None ||
          (config->isa == VectorIsa::Avx512 && hostIsa != VectorIsa::Avx512) ||
          (config->isa == VectorIsa::Amx &&
           !host.hasAmx(isHalfPrecision(desc.precision)))) {
        reason = "cannot validate an " + isaName(config->isa).str() +
                 " kernel on this host; pass validate=false to generate for "
                 "another machine";
        return failure();
      }
    }
    auto emitted = emitKernel(problem, *config, o.emitter, o.fault, &o.target);
    // A form the borrowed blocking does not fit (B prepacked against a
    // config that reads B in place): the model's config for this form.
    if (!emitted && modelsConfig) {
      llvm::consumeError(emitted.takeError());
      config = *modelsConfig;
      emitted = emitKernel(problem, *config, o.emitter, o.fault, &o.target);
    }
    if (!emitted) {
      reason =
          "kernel generation failed: " + llvm::toString(emitted.takeError());
      return failure();
    }
    auto body = emitted->body();
    if (!body) {
      reason = llvm::toString(body.takeError());
      return failure();
    }
    std::vector<GemmRange> parts = kernelParts(desc, *config);
    if (o.validate && !o.target.sameArchAsHost()) {
      auto run =
          problem.conv()
              ? validateConvCross(*problem.conv(), o.target, *emitted, parts)
              : validateGemmCross(desc, o.target, *emitted, parts);
      if (!run) {
        reason = "kernel validation could not run: " +
                 llvm::toString(run.takeError());
        return failure();
      }
      if (!run->report.passed) {
        reason = "generated kernel " + emitted->symbol +
                 " failed validation under emulation: " + run->report.failure;
        return failure();
      }
    } else if (o.validate) {
      auto report =
          validateIsolated(problem, o.target, *emitted, o.runner, parts);
      if (!report) {
        reason = "kernel validation could not run: " +
                 llvm::toString(report.takeError());
        return failure();
      }
      if (!report->passed) {
        reason = "generated kernel " + emitted->symbol +
                 " failed validation: " + report->failure;
        return failure();
      }
    }
    return ReadyKernel{std::move(*emitted), std::move(*body), std::move(parts)};
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<bool> nvidia = rewriteForNvidiaTarget(module);
    if (failed(nvidia))
      return signalPassFailure();
    if (*nvidia)
      return;
    FailureOr<ResolvedOptions> options = resolveOptions(module);
    if (failed(options))
      return signalPassFailure();

    ContractionMatchOptions matchOptions;
    matchOptions.representativeM = std::max(1u, unsigned(representativeM));
    matchOptions.representativeN = std::max(1u, unsigned(representativeN));
    matchOptions.representativeK = std::max(1u, unsigned(representativeK));
    matchOptions.fuseEpilogues = fuseEpilogues;
    // The sketch-driven ISAs take every leading dimension at run time;
    // consumers fuse where the ISA's kernels apply epilogues.
    if (isSketchIsa(options->target.bestIsa()))
      matchOptions.runtimeLeadingDims = true;
    if (!isaAppliesEpilogues(options->target.bestIsa()))
      matchOptions.fuseEpilogues = false;
    matchOptions.smoothActivations =
        isaAppliesSmoothActivations(options->target.bestIsa());

    // Quantized matmuls (zero points): the plain contraction, which the
    // matchers below take, and the zero points' sums (ZeroPoints.h).
    expandZeroPoints(module);

    // On tensors (before bufferization): a contraction or convolution
    // moves onto buffers at its place when the matchers take its memref
    // form (TensorPlacement.h), and is rewritten below like any other; one
    // they do not take stays, with their reason.
    SmallVector<linalg::LinalgOp> onTensors;
    module.walk([&](linalg::LinalgOp op) {
      if ((isContraction(op) || isConvolution(op)) &&
          op.hasPureTensorSemantics())
        onTensors.push_back(op);
    });
    for (linalg::LinalgOp op : onTensors) {
      std::string reason;
      linalg::LinalgOp placed = placeOnBuffers(
          op,
          [&](linalg::LinalgOp onBuffers) {
            SmallVector<StrideAssumption> assumed;
            return isConvolution(onBuffers)
                       ? succeeded(describeConv(onBuffers, assumed, reason))
                       : succeeded(describeContraction(onBuffers, reason,
                                                       matchOptions));
          },
          reason);
      if (!placed)
        op->emitRemark() << "not accelerated: " << reason;
    }

    // Contractions and convolutions on buffers, in program order.
    SmallVector<linalg::LinalgOp> ops;
    module.walk([&](linalg::LinalgOp op) {
      if ((isContraction(op) || isConvolution(op)) &&
          op.hasPureBufferSemantics())
        ops.push_back(op);
    });
    if (ops.empty())
      return;

    // The LLM proposer when configured: a transport failure at run time is
    // a warning per op, never an error.
    llm.reset(); // a session belongs to one run
    if (!options->llm.baseUrl.empty() && options->tuneBudget > 0) {
      if (auto opened = LlmSession::open(options->llm, options->llmTranscript))
        llm = std::move(*opened);
      else
        mlir::emitWarning(module.getLoc())
            << "LLM unavailable, tuning offline: "
            << llvm::toString(opened.takeError());
    }

    // An unusable database is a warning: the pass then works without one.
    if (auto db = TuningDatabase::open(options->cacheDir)) {
      database = std::move(*db);
    } else {
      database.reset();
      mlir::emitWarning(module.getLoc())
          << "tuning database unavailable: " << llvm::toString(db.takeError());
    }

    // One kernel per distinct descriptor, checked against the call it
    // serves; a failure is remembered too, with its reason.
    llvm::StringMap<FailureOr<ReadyKernel>> kernels;
    llvm::StringMap<std::string> failures;
    auto kernelFor =
        [&](const KernelProblem &problem) -> FailureOr<ReadyKernel> & {
      std::string key = problem.str();
      auto it = kernels.find(key);
      if (it != kernels.end())
        return it->second;
      std::string why;
      it =
          kernels.try_emplace(key, prepareKernel(problem, *options, why)).first;
      failures[key] = why;
      if (succeeded(it->second) &&
          it->second->emitted.argRegisters.size() != 4) {
        failures[key] = llvm::formatv(
            "kernel {0} names {1} argument registers (qm.args); the call "
            "passes four: A, B, C and the workspace",
            it->second->emitted.symbol,
            it->second->emitted.argRegisters.size());
        it->second = failure();
      }
      // What the kernel's header says it reads at run time against what
      // the call writes.
      auto sameForm = [&](StringRef what, StringRef header, bool kernelReads,
                          bool callWrites) {
        if (failed(it->second) || kernelReads == callWrites)
          return;
        auto form = [](bool atRunTime) {
          return atRunTime ? "at run time" : "as immediates";
        };
        failures[key] = llvm::formatv(
            "kernel {0} takes {1} {2} ({3}); the call needs them {4}",
            it->second->emitted.symbol, what, form(kernelReads), header,
            form(callWrites));
        it->second = failure();
      };
      if (succeeded(it->second))
        sameForm("its leading dimensions", "qm.leading_dims",
                 it->second->emitted.runtimeLeadingDims,
                 problem.gemm().runtimeLd);
      if (succeeded(it->second) && problem.conv())
        sameForm("the input's strides", "qm.input_strides",
                 it->second->emitted.runtimeInputStrides,
                 problem.conv()->runtimeStrides);
      if (succeeded(it->second) && !problem.conv()) {
        const EmittedKernel &k = it->second->emitted;
        const GemmDesc &g = problem.gemm();
        if (k.runtimeM != g.dynamicM || k.runtimeN != g.dynamicN ||
            k.runtimeK != g.dynamicK) {
          failures[key] = llvm::formatv(
              "kernel {0} reads {1} from its header (qm.runtime_sizes); the "
              "call writes {2}",
              k.symbol, runtimeSizesText(k.runtimeM, k.runtimeN, k.runtimeK),
              runtimeSizesText(g.dynamicM, g.dynamicN, g.dynamicK));
          it->second = failure();
        }
      }
      return it->second;
    };
    ConstantWeights constantWeights(module);
    for (linalg::LinalgOp op : ops) {
      std::string reason;
      std::optional<KernelProblem> problem;
      KernelLaunch launch;
      SmallVector<StrideAssumption> assumed;
      if (isConvolution(op)) {
        ConvInit init;
        int64_t imageCalls = 1;
        ConvMatchOptions convOptions;
        convOptions.foldBiasInit = matchOptions.fuseEpilogues;
        convOptions.smoothActivations = matchOptions.smoothActivations;
        convOptions.stridesAtRunTime =
            isaReadsConvStridesAtRunTime(options->target.bestIsa());
        convOptions.stridedOutput =
            isaWritesStridedConvOutput(options->target.bestIsa());
        if (FailureOr<ConvDesc> desc = describeConv(op, assumed, reason, &init,
                                                    convOptions, &imageCalls);
            succeeded(desc)) {
          problem = KernelProblem(*desc);
          // A dynamic batch (or images further apart than one image):
          // one call of the one-image kernel per image, the input and
          // output stepped by their batch strides (read at run time), the
          // filter the same for all.
          if (imageCalls != 1) {
            launch.batch = imageCalls;
            launch.batchDimOfC = 0;
            launch.batchStrideDimOf[0] = 0;
            launch.batchStrideDimOf[2] = 0;
            launch.batchThreads = options->threads == 0
                                      ? options->target.cores
                                      : static_cast<int>(options->threads);
            if (init.halfOutput)
              launch.halfOutputBatchStrideDim = 0;
          }
          // Run-time strides: the input's (n, h, w) or (n, c, h).
          if (desc->runtimeStrides)
            for (unsigned i = 0; i < 3; ++i) {
              launch.leadingDimOperand[i] = 0;
              launch.leadingDimOf[i] = i;
            }
          launch.operands[0] = op.getDpsInputOperand(0)->get();
          launch.operands[1] = op.getDpsInputOperand(1)->get();
          launch.operands[2] = op.getDpsInitOperand(0)->get();
          if (init.op)
            launch.foldedOps.push_back(init.op);
          launch.bias = init.bias;
          launch.residual = init.residual;
          if (init.output)
            launch.operands[2] = init.output;
          launch.halfOutput = init.halfOutput;
          launch.epilogueOps = init.epilogueOps;
          launch.opsToHoist = init.opsToHoist;
        }
      } else if (FailureOr<MatchedContraction> matched =
                     describeContraction(op, reason, matchOptions);
                 succeeded(matched)) {
        problem = KernelProblem(matched->gemm);
        llvm::copy(matched->operands, launch.operands);
        launch.batch = matched->batch;
        launch.batchDimOfC = matched->batchDimOfC;
        llvm::copy(matched->batchStrideDimOf, launch.batchStrideDimOf);
        launch.batchThreads = options->threads == 0
                                  ? options->target.cores
                                  : static_cast<int>(options->threads);
        llvm::copy(matched->batchStrides, launch.batchStrides);
        launch.foldedOps = matched->foldedTransposes;
        if (matched->cInit)
          launch.foldedOps.push_back(matched->cInit);
        llvm::copy(matched->leadingDimOf, launch.leadingDimOf);
        launch.epilogueOps = matched->epilogueOps;
        launch.bias = matched->bias;
        launch.residual = matched->residual;
        launch.opsToHoist = matched->opsToHoist;
        launch.halfOutput = matched->halfOutput;
        launch.halfOutputBatchStride = matched->halfOutputBatchStride;
        launch.halfOutputBatchStrideDim = matched->halfOutputBatchStrideDim;
        const GemmDesc &g = matched->gemm;
        if (g.dynamicM)
          launch.mDimOfC = matched->mDimOfC;
        if (g.dynamicN)
          launch.nDimOfC = matched->nDimOfC;
        if (g.dynamicK)
          launch.kDimOfA = matched->kDimOfA;
        launch.m = g.m;
        launch.n = g.n;
        launch.leadingDimConstants[0] = g.lda;
        launch.leadingDimConstants[1] = g.ldb;
        launch.leadingDimConstants[2] = g.ldc;
        assumed = std::move(matched->assumed);
      }
      if (!problem) {
        op->emitRemark() << "not accelerated: " << reason;
        continue;
      }
      // Constant weights: B packed at compile time into the kernel's
      // layout (a kernel that takes it prepacked, AMX's too), where one
      // kernel serves the op (no run-time sizes and m-buckets) and every
      // GEMM of a batch reads the same B.
      DenseElementsAttr constantB;
      if (packConstantWeights && mayPrepackB(*problem, launch, options->target))
        constantB = constantOperandValue(launch.operands[1]);
      if (constantB)
        problem = problem->withPrepackedB();
      FailureOr<ReadyKernel> &ready = kernelFor(*problem);
      if (failed(ready)) {
        op->emitRemark() << "not accelerated: " << failures[problem->str()];
        continue;
      }
      if (constantB) {
        if (!ready->emitted.prepackedB) {
          op->emitRemark() << "not accelerated: kernel "
                           << ready->emitted.symbol
                           << " does not say its B layout (qm.b_prepacked)";
          continue;
        }
        if (llvm::Error err =
                ready->emitted.prepackedB->check(problem->gemm())) {
          op->emitRemark() << "not accelerated: "
                           << llvm::toString(std::move(err));
          continue;
        }
        OpBuilder b(op);
        constantWeights.noteSource(launch.operands[1]);
        launch.operands[1] =
            constantWeights.packed(b, op.getLoc(), constantB, problem->gemm(),
                                   *ready->emitted.prepackedB);
        // The kernel reads no ldb: nothing of B's strides at run time (a
        // convolution's header slots hold the input's strides instead).
        if (launch.leadingDimOperand[1] == 1)
          launch.leadingDimOf[1].reset();
      }
      LLVM::LLVMFuncOp fn =
          getOrCreateKernelFunc(module, *ready, options->target);
      // A run-time M: kernels for few rows, chosen at run time.
      SmallVector<MBucketKernel> buckets;
      if (!problem->conv() && problem->gemm().dynamicM) {
        // The option's row counts, and (unless it says none) the model's
        // where the kernel's form changes (f16: B read in place up to 12;
        // bf16 without AMX-BF16: up to 32 against B^T, 16 against B).
        SmallVector<int64_t> bucketRows(options->mBuckets);
        if (!bucketRows.empty()) {
          llvm::append_range(bucketRows,
                             formRowBounds(problem->gemm(), options->target));
          llvm::sort(bucketRows);
          bucketRows.erase(std::unique(bucketRows.begin(), bucketRows.end()),
                           bucketRows.end());
        }
        for (int64_t rows : bucketRows) {
          if (rows >= problem->gemm().m)
            break;
          GemmDesc few = problem->gemm();
          few.m = rows;
          KernelProblem fewRows(few);
          FailureOr<ReadyKernel> &bucket = kernelFor(fewRows);
          if (succeeded(bucket))
            buckets.push_back(
                {getOrCreateKernelFunc(module, *bucket, options->target),
                 &*bucket, rows});
          else
            op->emitRemark()
                << "no kernel of its own for at most " << rows << " rows (the "
                << problem->gemm().m
                << "-row kernel runs them): " << failures[fewRows.str()];
        }
      }
      // The host has AMX, but Linux did not grant this process its tile
      // data (Target::detectHost): the dot instructions run instead.
      if (options->target.amxRefused &&
          problem->gemm().precision != GemmPrecision::F32)
        op->emitRemark() << "on AVX512-BF16/VNNI, not AMX: Linux refused the "
                            "tile data (arch_prctl ARCH_REQ_XCOMP_PERM)";
      if (fuseEpilogues)
        remarkUnfusedSmoothActivation(
            op, launch.halfOutput ? launch.halfOutput : launch.operands[2],
            problem->conv() ? problem->conv()->precision
                            : problem->gemm().precision,
            options->target);
      replaceWithKernelCall(module, op, fn, *ready, launch, assumed, buckets);
    }
    constantWeights.eraseUnused();
  }
};

} // namespace

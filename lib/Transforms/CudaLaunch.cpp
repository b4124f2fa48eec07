//===- CudaLaunch.cpp - Contractions -> NVIDIA kernels launched in place --===//
//
// The launchers are LLVM-dialect functions written out below as MLIR text
// and parsed into the module: the driver calls read as they would in C.
// The cubin and the kernel's name are constant globals.
//
//===----------------------------------------------------------------------===//
#include "CudaLaunch.h"
#include "BufferEffects.h"
#include "MemrefAddress.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/Parser/Parser.h"
#include "qimeng/Cuda/CudaKernel.h"
#include "qimeng/Transforms/ConvMatcher.h"
#include "qimeng/Transforms/GemmMatcher.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace qimeng;

namespace {

/// The driver API the launchers call, a failure check that names the call
/// and stops the program, the context (the thread's, or device 0's
/// primary one), and the copy engine's tensor maps; once per module.
constexpr const char *kDriverText = R"mlir(
module {
  llvm.func @cuInit(i32) -> i32
  llvm.func @cuDeviceGet(!llvm.ptr, i32) -> i32
  llvm.func @cuCtxGetCurrent(!llvm.ptr) -> i32
  llvm.func @cuDevicePrimaryCtxRetain(!llvm.ptr, i32) -> i32
  llvm.func @cuCtxSetCurrent(!llvm.ptr) -> i32
  llvm.func @cuModuleLoadData(!llvm.ptr, !llvm.ptr) -> i32
  llvm.func @cuModuleGetFunction(!llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
  llvm.func @cuFuncSetAttribute(!llvm.ptr, i32, i32) -> i32
  llvm.func @cuTensorMapEncodeTiled(!llvm.ptr, i32, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i32, i32, i32, i32) -> i32
  llvm.func @cuLaunchKernel(!llvm.ptr, i32, i32, i32, i32, i32, i32, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
  llvm.func @cuCtxSynchronize() -> i32
  llvm.func @printf(!llvm.ptr, ...) -> i32
  llvm.func @abort()

  llvm.mlir.global internal constant @qm_cuda_format("qimeng-tensorop: %s failed in a generated kernel's launcher (CUresult %d)\0A\00") {addr_space = 0 : i32}
  llvm.mlir.global internal constant @qm_cuda_cuInit("cuInit\00") {addr_space = 0 : i32}
  llvm.mlir.global internal constant @qm_cuda_cuCtxGetCurrent("cuCtxGetCurrent\00") {addr_space = 0 : i32}
  llvm.mlir.global internal constant @qm_cuda_cuDeviceGet("cuDeviceGet\00") {addr_space = 0 : i32}
  llvm.mlir.global internal constant @qm_cuda_cuDevicePrimaryCtxRetain("cuDevicePrimaryCtxRetain\00") {addr_space = 0 : i32}
  llvm.mlir.global internal constant @qm_cuda_cuCtxSetCurrent("cuCtxSetCurrent\00") {addr_space = 0 : i32}
  llvm.mlir.global internal constant @qm_cuda_cuModuleLoadData("cuModuleLoadData\00") {addr_space = 0 : i32}
  llvm.mlir.global internal constant @qm_cuda_cuModuleGetFunction("cuModuleGetFunction\00") {addr_space = 0 : i32}
  llvm.mlir.global internal constant @qm_cuda_cuFuncSetAttribute("cuFuncSetAttribute\00") {addr_space = 0 : i32}
  llvm.mlir.global internal constant @qm_cuda_cuTensorMapEncodeTiled("cuTensorMapEncodeTiled\00") {addr_space = 0 : i32}
  llvm.mlir.global internal constant @qm_cuda_cuLaunchKernel("cuLaunchKernel\00") {addr_space = 0 : i32}
  llvm.mlir.global internal constant @qm_cuda_cuCtxSynchronize("cuCtxSynchronize\00") {addr_space = 0 : i32}

  // Stops the program, naming the call, when a driver call failed.
  llvm.func internal @qm_cuda_check(%status: i32, %what: !llvm.ptr) {
    %zero = llvm.mlir.constant(0 : i32) : i32
    %failed = llvm.icmp "ne" %status, %zero : i32
    llvm.cond_br %failed, ^fail, ^ok
  ^fail:
    %format = llvm.mlir.addressof @qm_cuda_format : !llvm.ptr
    %0 = llvm.call @printf(%format, %what, %status) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, !llvm.ptr, i32) -> i32
    llvm.call @abort() : () -> ()
    llvm.unreachable
  ^ok:
    llvm.return
  }

  // The calling thread's context, or else device 0's primary context,
  // made current.
  llvm.func internal @qm_cuda_context() {
    %one = llvm.mlir.constant(1 : i64) : i64
    %zero = llvm.mlir.constant(0 : i32) : i32
    %null = llvm.mlir.zero : !llvm.ptr
    %s0 = llvm.call @cuInit(%zero) : (i32) -> i32
    %n0 = llvm.mlir.addressof @qm_cuda_cuInit : !llvm.ptr
    llvm.call @qm_cuda_check(%s0, %n0) : (i32, !llvm.ptr) -> ()
    %slot = llvm.alloca %one x !llvm.ptr : (i64) -> !llvm.ptr
    %s1 = llvm.call @cuCtxGetCurrent(%slot) : (!llvm.ptr) -> i32
    %n1 = llvm.mlir.addressof @qm_cuda_cuCtxGetCurrent : !llvm.ptr
    llvm.call @qm_cuda_check(%s1, %n1) : (i32, !llvm.ptr) -> ()
    %current = llvm.load %slot : !llvm.ptr -> !llvm.ptr
    %has = llvm.icmp "ne" %current, %null : !llvm.ptr
    llvm.cond_br %has, ^done, ^retain
  ^retain:
    %device = llvm.alloca %one x i32 : (i64) -> !llvm.ptr
    %s2 = llvm.call @cuDeviceGet(%device, %zero) : (!llvm.ptr, i32) -> i32
    %n2 = llvm.mlir.addressof @qm_cuda_cuDeviceGet : !llvm.ptr
    llvm.call @qm_cuda_check(%s2, %n2) : (i32, !llvm.ptr) -> ()
    %d = llvm.load %device : !llvm.ptr -> i32
    %s3 = llvm.call @cuDevicePrimaryCtxRetain(%slot, %d) : (!llvm.ptr, i32) -> i32
    %n3 = llvm.mlir.addressof @qm_cuda_cuDevicePrimaryCtxRetain : !llvm.ptr
    llvm.call @qm_cuda_check(%s3, %n3) : (i32, !llvm.ptr) -> ()
    %context = llvm.load %slot : !llvm.ptr -> !llvm.ptr
    %s4 = llvm.call @cuCtxSetCurrent(%context) : (!llvm.ptr) -> i32
    %n4 = llvm.mlir.addressof @qm_cuda_cuCtxSetCurrent : !llvm.ptr
    llvm.call @qm_cuda_check(%s4, %n4) : (i32, !llvm.ptr) -> ()
    llvm.br ^done
  ^done:
    llvm.return
  }

  // A row-major rows x cols matrix of `bytes`-byte elements at `base` as
  // the copy engine's 2-D tensor map (CUtensorMap, 128 bytes at `map`):
  // box box0 x box1 (innermost first), 128-byte swizzle, L2 promotion of
  // 256 bytes, no interleave, zeros outside the matrix.
  llvm.func internal @qm_cuda_tensor_map(%map: !llvm.ptr, %type: i32, %base: !llvm.ptr, %rows: i64, %cols: i64, %bytes: i64, %box0: i32, %box1: i32) {
    %one = llvm.mlir.constant(1 : i64) : i64
    %two = llvm.mlir.constant(2 : i64) : i64
    %unit = llvm.mlir.constant(1 : i32) : i32
    %rank = llvm.mlir.constant(2 : i32) : i32
    %none = llvm.mlir.constant(0 : i32) : i32
    %swizzle128 = llvm.mlir.constant(3 : i32) : i32
    %promote256 = llvm.mlir.constant(3 : i32) : i32
    %dims = llvm.alloca %two x i64 : (i64) -> !llvm.ptr
    llvm.store %cols, %dims : i64, !llvm.ptr
    %dims1 = llvm.getelementptr %dims[1] : (!llvm.ptr) -> !llvm.ptr, i64
    llvm.store %rows, %dims1 : i64, !llvm.ptr
    %strides = llvm.alloca %one x i64 : (i64) -> !llvm.ptr
    %rowBytes = llvm.mul %cols, %bytes : i64
    llvm.store %rowBytes, %strides : i64, !llvm.ptr
    %box = llvm.alloca %two x i32 : (i64) -> !llvm.ptr
    llvm.store %box0, %box : i32, !llvm.ptr
    %box1p = llvm.getelementptr %box[1] : (!llvm.ptr) -> !llvm.ptr, i32
    llvm.store %box1, %box1p : i32, !llvm.ptr
    %steps = llvm.alloca %two x i32 : (i64) -> !llvm.ptr
    llvm.store %unit, %steps : i32, !llvm.ptr
    %steps1 = llvm.getelementptr %steps[1] : (!llvm.ptr) -> !llvm.ptr, i32
    llvm.store %unit, %steps1 : i32, !llvm.ptr
    %s = llvm.call @cuTensorMapEncodeTiled(%map, %type, %rank, %base, %dims, %strides, %box, %steps, %none, %swizzle128, %promote256, %none) : (!llvm.ptr, i32, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i32, i32, i32, i32) -> i32
    %n = llvm.mlir.addressof @qm_cuda_cuTensorMapEncodeTiled : !llvm.ptr
    llvm.call @qm_cuda_check(%s, %n) : (i32, !llvm.ptr) -> ()
    llvm.return
  }
}
)mlir";

/// One kernel's loader (its CUfunction, loaded from the cubin once and
/// kept in a global) and launcher (A, B and C as pointers to their first
/// elements; $ARGUMENTS fills the three kernel parameters).
constexpr const char *kKernelText = R"mlir(
module {
  llvm.mlir.global internal @$SYM_function() {addr_space = 0 : i32} : !llvm.ptr {
    %0 = llvm.mlir.zero : !llvm.ptr
    llvm.return %0 : !llvm.ptr
  }

  llvm.func internal @$SYM_load() -> !llvm.ptr {
    %slot = llvm.mlir.addressof @$SYM_function : !llvm.ptr
    %cached = llvm.load %slot : !llvm.ptr -> !llvm.ptr
    %null = llvm.mlir.zero : !llvm.ptr
    %loaded = llvm.icmp "ne" %cached, %null : !llvm.ptr
    llvm.cond_br %loaded, ^done(%cached : !llvm.ptr), ^load
  ^load:
    llvm.call @qm_cuda_context() : () -> ()
    %one = llvm.mlir.constant(1 : i64) : i64
    %moduleSlot = llvm.alloca %one x !llvm.ptr : (i64) -> !llvm.ptr
    %image = llvm.mlir.addressof @$SYM_cubin : !llvm.ptr
    %s0 = llvm.call @cuModuleLoadData(%moduleSlot, %image) : (!llvm.ptr, !llvm.ptr) -> i32
    %n0 = llvm.mlir.addressof @qm_cuda_cuModuleLoadData : !llvm.ptr
    llvm.call @qm_cuda_check(%s0, %n0) : (i32, !llvm.ptr) -> ()
    %module = llvm.load %moduleSlot : !llvm.ptr -> !llvm.ptr
    %functionSlot = llvm.alloca %one x !llvm.ptr : (i64) -> !llvm.ptr
    %name = llvm.mlir.addressof @$SYM_name : !llvm.ptr
    %s1 = llvm.call @cuModuleGetFunction(%functionSlot, %module, %name) : (!llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
    %n1 = llvm.mlir.addressof @qm_cuda_cuModuleGetFunction : !llvm.ptr
    llvm.call @qm_cuda_check(%s1, %n1) : (i32, !llvm.ptr) -> ()
    %function = llvm.load %functionSlot : !llvm.ptr -> !llvm.ptr
    // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    %attribute = llvm.mlir.constant(8 : i32) : i32
    %bytes = llvm.mlir.constant($DYNAMIC_SHARED : i32) : i32
    %s2 = llvm.call @cuFuncSetAttribute(%function, %attribute, %bytes) : (!llvm.ptr, i32, i32) -> i32
    %n2 = llvm.mlir.addressof @qm_cuda_cuFuncSetAttribute : !llvm.ptr
    llvm.call @qm_cuda_check(%s2, %n2) : (i32, !llvm.ptr) -> ()
    llvm.store %function, %slot : !llvm.ptr, !llvm.ptr
    llvm.br ^done(%function : !llvm.ptr)
  ^done(%f: !llvm.ptr):
    llvm.return %f : !llvm.ptr
  }

  llvm.func internal @$SYM_launch(%a: !llvm.ptr, %b: !llvm.ptr, %c: !llvm.ptr) {
    %function = llvm.call @$SYM_load() : () -> !llvm.ptr
    %one = llvm.mlir.constant(1 : i64) : i64
    %three = llvm.mlir.constant(3 : i64) : i64
    %params = llvm.alloca %three x !llvm.ptr : (i64) -> !llvm.ptr
$ARGUMENTS
    %gx = llvm.mlir.constant($GX : i32) : i32
    %gy = llvm.mlir.constant($GY : i32) : i32
    %gz = llvm.mlir.constant($GZ : i32) : i32
    %bx = llvm.mlir.constant($BX : i32) : i32
    %by = llvm.mlir.constant($BY : i32) : i32
    %bz = llvm.mlir.constant($BZ : i32) : i32
    %shared = llvm.mlir.constant($DYNAMIC_SHARED : i32) : i32
    %null = llvm.mlir.zero : !llvm.ptr
    %s0 = llvm.call @cuLaunchKernel(%function, %gx, %gy, %gz, %bx, %by, %bz, %shared, %null, %params, %null) : (!llvm.ptr, i32, i32, i32, i32, i32, i32, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
    %n0 = llvm.mlir.addressof @qm_cuda_cuLaunchKernel : !llvm.ptr
    llvm.call @qm_cuda_check(%s0, %n0) : (i32, !llvm.ptr) -> ()
    %s1 = llvm.call @cuCtxSynchronize() : () -> i32
    %n1 = llvm.mlir.addressof @qm_cuda_cuCtxSynchronize : !llvm.ptr
    llvm.call @qm_cuda_check(%s1, %n1) : (i32, !llvm.ptr) -> ()
    llvm.return
  }
}
)mlir";

/// Kernel parameter `index` (0 A, 1 B, 2 C) from the launcher's argument
/// `value`: the pointer itself, or the copy engine's tensor map of the
/// rows x cols matrix there (`box` as the kernel's qm.args says:
/// "tma64x128"), in the launcher's MLIR text.
std::string parameterText(unsigned index, llvm::StringRef value,
                          llvm::StringRef box, int64_t rows, int64_t cols,
                          llvm::StringRef dtype) {
  const std::string slot = llvm::formatv("%param{0}", index);
  std::string text;
  llvm::raw_string_ostream os(text);
  if (box.empty()) {
    os << llvm::formatv("    %arg{0} = llvm.alloca %one x !llvm.ptr : (i64) "
                        "-> !llvm.ptr\n"
                        "    llvm.store {1}, %arg{0} : !llvm.ptr, !llvm.ptr\n",
                        index, value);
  } else {
    unsigned box0 = 0, box1 = 0;
    llvm::StringRef dims = box.drop_front(3); // "tma"
    auto [inner, outer] = dims.split('x');
    inner.getAsInteger(10, box0);
    outer.getAsInteger(10, box1);
    // CUtensorMapDataType: FLOAT16 6, FLOAT32 7, BFLOAT16 9.
    const int type = dtype == "bf16" ? 9 : dtype == "f16" ? 6 : 7;
    const int bytes = dtype == "bf16" || dtype == "f16" ? 2 : 4;
    os << llvm::formatv(
        "    %arg{0} = llvm.alloca %one x !llvm.array<16 x i64> "
        "{{alignment = 64 : i64} : (i64) -> !llvm.ptr\n"
        "    %type{0} = llvm.mlir.constant({1} : i32) : i32\n"
        "    %rows{0} = llvm.mlir.constant({2} : i64) : i64\n"
        "    %cols{0} = llvm.mlir.constant({3} : i64) : i64\n"
        "    %bytes{0} = llvm.mlir.constant({4} : i64) : i64\n"
        "    %boxInner{0} = llvm.mlir.constant({5} : i32) : i32\n"
        "    %boxOuter{0} = llvm.mlir.constant({6} : i32) : i32\n"
        "    llvm.call @qm_cuda_tensor_map(%arg{0}, %type{0}, {7}, %rows{0}, "
        "%cols{0}, %bytes{0}, %boxInner{0}, %boxOuter{0}) : (!llvm.ptr, i32, "
        "!llvm.ptr, i64, i64, i64, i32, i32) -> ()\n",
        index, type, rows, cols, bytes, box0, box1, value);
  }
  os << llvm::formatv("    {0} = llvm.getelementptr %params[{1}] : "
                      "(!llvm.ptr) -> !llvm.ptr, !llvm.ptr\n"
                      "    llvm.store %arg{1}, {0} : !llvm.ptr, !llvm.ptr\n",
                      slot, index);
  return text;
}

std::string replaceAll(std::string text, llvm::StringRef from,
                       llvm::StringRef to) {
  for (size_t at = text.find(from.str()); at != std::string::npos;
       at = text.find(from.str(), at + to.size()))
    text.replace(at, from.size(), to.str());
  return text;
}

/// Moves the top-level operations of the MLIR `text` to the end of
/// `module`.
LogicalResult appendParsed(ModuleOp module, llvm::StringRef text) {
  OwningOpRef<ModuleOp> parsed = parseSourceString<ModuleOp>(
      text, ParserConfig(module.getContext(),
                         /*verifyAfterParse=*/false));
  if (!parsed)
    return failure();
  module.getBody()->getOperations().splice(module.getBody()->end(),
                                           parsed->getBody()->getOperations());
  return success();
}

/// What the matched contraction asks of the GPU kernel, or why it cannot
/// have one.
struct GpuGemm {
  std::string dtype;
  int64_t m = 0, n = 0, k = 0;
  bool overwrite = false, bTransposed = false;
  std::string key() const {
    return llvm::formatv("{0}:{1}x{2}x{3}:{4}:{5}", dtype, m, n, k,
                         overwrite ? "b0" : "b1", bTransposed ? "nk" : "kn");
  }
};

/// The name of the host allocation an operand is a view of (memref.alloc,
/// memref.alloca, memref.get_global), or "": such memory is not the
/// device memory the kernel reads.
llvm::StringRef hostAllocation(Value operand) {
  Operation *def = underlyingBuffer(operand).getDefiningOp();
  if (def && isa<memref::AllocOp, memref::AllocaOp, memref::GetGlobalOp>(def))
    return def->getName().getStringRef();
  return "";
}

FailureOr<GpuGemm> gpuGemmOf(const MatchedContraction &match, bool tf32,
                             std::string &reason) {
  const GemmDesc &g = match.gemm;
  static const char *const names[3] = {"A", "B", "C"};
  for (int i = 0; i < 3; ++i)
    if (llvm::StringRef op = hostAllocation(match.operands[i]); !op.empty()) {
      reason = std::string("operand ") + names[i] + " is host memory (" +
               op.str() +
               "); the NVIDIA target's kernels read device memory: pass the "
               "buffer in from the caller";
      return failure();
    }
  if (match.batch != 1) {
    reason = "a batch of GEMMs is not generated for NVIDIA GPUs yet";
    return failure();
  }
  if (g.dynamicM || g.dynamicN || g.dynamicK) {
    reason = "NVIDIA kernels take static sizes; this contraction has a "
             "dynamic one";
    return failure();
  }
  if (g.transA) {
    reason = "a transposed A is not generated for NVIDIA GPUs yet (a "
             "transposed B is)";
    return failure();
  }
  if (!match.foldedTransposes.empty()) {
    reason = "an operand transposed by a linalg.transpose is not folded for "
             "NVIDIA GPUs yet (a B transposed through indexing_maps is "
             "taken)";
    return failure();
  }
  if (g.runtimeLd || !match.assumed.empty() || g.lda != g.k ||
      g.ldb != (g.transB ? g.k : g.n) || g.ldc != g.n) {
    reason = "NVIDIA kernels take dense row-major operands with static "
             "strides";
    return failure();
  }
  if (g.hasEpilogue() || g.halfOutput || match.residual) {
    reason = "epilogues are not fused for NVIDIA GPUs yet";
    return failure();
  }
  GpuGemm gemm;
  switch (g.precision) {
  case GemmPrecision::F32:
    gemm.dtype = tf32 ? "tf32" : "f32";
    break;
  case GemmPrecision::Bf16:
    gemm.dtype = "bf16";
    break;
  case GemmPrecision::F16:
    gemm.dtype = "f16";
    break;
  default:
    reason = "NVIDIA kernels take f32, bf16 or f16 inputs with f32 sums, "
             "not " +
             precisionName(g.precision).str();
    return failure();
  }
  gemm.m = g.m, gemm.n = g.n, gemm.k = g.k;
  gemm.overwrite = g.overwrite;
  gemm.bTransposed = g.transB;
  return gemm;
}

/// A kernel ready for the module: built, checked, maybe validated, and
/// its launcher in the module.
struct ReadyGpuKernel {
  LLVM::LLVMFuncOp launcher;
  std::string symbol, engine, summary;
};

FailureOr<ReadyGpuKernel> prepareGpuKernel(ModuleOp module, const GpuGemm &gemm,
                                           const CudaRewriteOptions &o,
                                           std::string &reason) {
  auto built = buildCudaGemm(o.gpu, gemm.dtype, gemm.m, gemm.n, gemm.k,
                             gemm.overwrite, gemm.bTransposed, o.emitter);
  if (!built) {
    reason = "kernel generation failed: " + llvm::toString(built.takeError());
    return failure();
  }
  const CudaKernelSource &k = built->source;
  const std::string &cubin = built->compiled.cubin;
  auto sm = cubinSmVersion(cubin);
  if (!sm) {
    reason = "NVRTC's output is not a cubin: " + llvm::toString(sm.takeError());
    return failure();
  }
  // qm.args: "A,B,C", or "A:tma64x128,B:tma64x64,C[:tma32x64]".
  llvm::SmallVector<llvm::StringRef, 3> args;
  llvm::StringRef(k.args).split(args, ',');
  if (args.size() != 3) {
    reason = "kernel " + k.symbol + " has qm.args '" + k.args +
             "'; the launcher passes A, B and C";
    return failure();
  }
  std::string validated = "not validated (validate=false)";
  if (o.validate) {
    auto run = runCudaKernelSource(o.cudaRunner, k, 5);
    if (!run) {
      reason = "generated kernel " + k.symbol + ": " +
               llvm::toString(run.takeError());
      return failure();
    }
    if (!run->ran) {
      reason = "cannot validate kernel " + k.symbol + " here (" + run->why +
               "); pass validate=false to generate for another machine";
      return failure();
    }
    validated = llvm::formatv("validated on the {0}: {1:F1} TFLOP/s, cuBLAS "
                              "{2:F1}",
                              run->device, run->oursTflops, run->cublasTflops);
  }

  // The cubin and the kernel's name as constant globals, then the loader
  // and launcher.
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Location loc = module.getLoc();
  Type i8 = b.getI8Type();
  LLVM::GlobalOp::create(b, loc, LLVM::LLVMArrayType::get(i8, cubin.size()),
                         /*isConstant=*/true, LLVM::Linkage::Internal,
                         k.symbol + "_cubin", b.getStringAttr(cubin),
                         /*alignment=*/8);
  const std::string name = k.symbol + std::string(1, '\0');
  LLVM::GlobalOp::create(b, loc, LLVM::LLVMArrayType::get(i8, name.size()),
                         /*isConstant=*/true, LLVM::Linkage::Internal,
                         k.symbol + "_name", b.getStringAttr(name));
  const int64_t rows[3] = {gemm.m, gemm.bTransposed ? gemm.n : gemm.k, gemm.m};
  const int64_t cols[3] = {gemm.k, gemm.bTransposed ? gemm.k : gemm.n, gemm.n};
  const char *values[3] = {"%a", "%b", "%c"};
  std::string arguments;
  for (unsigned i = 0; i < 3; ++i)
    arguments += parameterText(i, values[i], args[i].split(':').second, rows[i],
                               cols[i], i == 2 ? "f32" : gemm.dtype);
  std::string text = kKernelText;
  text = replaceAll(text, "$ARGUMENTS", arguments);
  text = replaceAll(text, "$SYM", k.symbol);
  text =
      replaceAll(text, "$DYNAMIC_SHARED", std::to_string(k.dynamicSharedBytes));
  const char *dims[6] = {"$GX", "$GY", "$GZ", "$BX", "$BY", "$BZ"};
  for (unsigned i = 0; i < 3; ++i) {
    text = replaceAll(text, dims[i], std::to_string(k.grid[i]));
    text = replaceAll(text, dims[3 + i], std::to_string(k.block[i]));
  }
  if (failed(appendParsed(module, text))) {
    reason = "internal error: the launcher of " + k.symbol + " did not parse";
    return failure();
  }
  ReadyGpuKernel ready;
  ready.launcher = module.lookupSymbol<LLVM::LLVMFuncOp>(k.symbol + "_launch");
  ready.symbol = k.symbol;
  ready.engine = k.engine;
  ready.summary =
      llvm::formatv("{0} ({1}, cubin for sm_{2}, {3} bytes; {4})", k.symbol,
                    k.engine, *sm, cubin.size(), validated);
  return ready;
}

} // namespace

llvm::Expected<std::optional<GpuMachine>>
qimeng::parseCudaTarget(llvm::StringRef target) {
  auto [triple, rest] = target.split(':');
  if (triple != kNvptxTriple)
    return std::nullopt;
  if (std::optional<GpuMachine> gpu = gpuMachineForArch(rest))
    return gpu;
  if (std::optional<GpuMachine> gpu = gpuMachineNamed(rest))
    return gpu;
  return llvm::createStringError(
      "unknown GPU '" + rest.str() + "' in target '" + target.str() +
      "': name an architecture (sm_90a, sm_80, sm_89) or a GPU (" +
      llvm::join(gpuMachineTitles(), ", ") + ")");
}

void qimeng::rewriteForCuda(ModuleOp module, const CudaRewriteOptions &o) {
  SmallVector<linalg::LinalgOp> ops;
  module.walk([&](linalg::LinalgOp op) {
    if (isContraction(op) || isConvolution(op))
      ops.push_back(op);
  });
  if (ops.empty())
    return;
  if (!nvrtcAvailable()) {
    for (linalg::LinalgOp op : ops)
      op->emitRemark() << "not accelerated: " << nvrtcUnavailableReason();
    return;
  }
  // The driver calls once per module; one kernel per distinct GEMM.
  bool haveDriver = static_cast<bool>(module.lookupSymbol("qm_cuda_check"));
  llvm::StringMap<FailureOr<ReadyGpuKernel>> kernels;
  llvm::StringMap<std::string> failures;
  ContractionMatchOptions matchOptions;
  matchOptions.fuseEpilogues = false;
  // Not validated on the GPU yet.
  matchOptions.matrixVectorProducts = false;
  for (linalg::LinalgOp op : ops) {
    std::string reason;
    if (isConvolution(op)) {
      op->emitRemark() << "not accelerated: convolutions are not generated "
                          "for NVIDIA GPUs yet";
      continue;
    }
    if (!op.hasPureBufferSemantics()) {
      op->emitRemark() << "not accelerated: for an NVIDIA target the pass "
                          "runs on buffers (after one-shot-bufferize)";
      continue;
    }
    FailureOr<MatchedContraction> match =
        describeContraction(op, reason, matchOptions);
    FailureOr<GpuGemm> gemm = failure();
    if (succeeded(match))
      gemm = gpuGemmOf(*match, o.tf32, reason);
    if (failed(gemm)) {
      op->emitRemark() << "not accelerated: " << reason;
      continue;
    }
    if (!haveDriver) {
      if (failed(appendParsed(module, kDriverText))) {
        op->emitError() << "internal error: the CUDA driver declarations "
                           "did not parse";
        return;
      }
      haveDriver = true;
    }
    auto it = kernels.find(gemm->key());
    if (it == kernels.end()) {
      std::string why;
      it =
          kernels
              .try_emplace(gemm->key(), prepareGpuKernel(module, *gemm, o, why))
              .first;
      failures[gemm->key()] = why;
    }
    if (failed(it->second)) {
      op->emitRemark() << "not accelerated: " << failures[gemm->key()];
      continue;
    }
    OpBuilder b(op);
    Location loc = op.getLoc();
    SmallVector<Value, 3> pointers;
    for (Value operand : match->operands)
      pointers.push_back(
          toPointer(b, loc, elementAddress(b, loc, operand), Value()));
    LLVM::CallOp::create(b, loc, it->second->launcher, pointers);
    op->emitRemark() << "accelerated on the " << o.gpu.title << ": "
                     << it->second->summary;
    op->erase();
    // A zero fill the kernel's C = A B makes unnecessary.
    if (gemm->overwrite && match->cInit)
      match->cInit->erase();
  }
}

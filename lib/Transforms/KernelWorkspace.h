//===- KernelWorkspace.h - Where a kernel call's workspace comes from -*- C++
//-*-===//
//
// Private to lib/Transforms: the calls that get a kernel call's workspace
// and give it back, in the LLVM dialect (below the memref level, so that
// ownership-based deallocation neither sees nor frees it). The module keeps
// one workspace for the kernels' calls: the first call claims it (an
// atomic flag), grows it when it needs more, and gives it back; a call
// that finds it claimed (another thread's call at the same time) allocates
// its own and frees it. A workspace the size of a large packed B panel
// (megabytes) allocated and freed at each call came from fresh pages each
// time: their faults made a 128x3072x768 bf16 GEMM under mlir-runner take
// twice the kernel's time (docs/FrontendIR.md).
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_LIB_TRANSFORMS_KERNELWORKSPACE_H
#define QIMENG_LIB_TRANSFORMS_KERNELWORKSPACE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace qimeng {

/// A 64-byte aligned workspace of at least `bytes` (an i64) for one kernel
/// call; give it back with releaseWorkspace.
mlir::Value acquireWorkspace(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::ModuleOp module, mlir::Value bytes);

/// Gives back `workspace` (from acquireWorkspace).
void releaseWorkspace(mlir::OpBuilder &b, mlir::Location loc,
                      mlir::ModuleOp module, mlir::Value workspace);

} // namespace qimeng

#endif // QIMENG_LIB_TRANSFORMS_KERNELWORKSPACE_H

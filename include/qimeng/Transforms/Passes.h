//===- Passes.h - QiMeng-TensorOp passes ------------------------*- C++ -*-===//
#ifndef QIMENG_TRANSFORMS_PASSES_H
#define QIMENG_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace qimeng {

#define GEN_PASS_DECL
#include "qimeng/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "qimeng/Transforms/Passes.h.inc"

} // namespace qimeng

#endif // QIMENG_TRANSFORMS_PASSES_H

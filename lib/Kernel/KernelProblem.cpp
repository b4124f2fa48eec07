//===- KernelProblem.cpp --------------------------------------------------===//
#include "qimeng/Kernel/KernelProblem.h"
#include "llvm/Support/FormatVariadic.h"

using namespace qimeng;

std::string KernelProblem::shape() const {
  if (conv_)
    return conv_->str();
  return llvm::formatv("{0}x{1}x{2}", gemm_.m, gemm_.n, gemm_.k).str();
}

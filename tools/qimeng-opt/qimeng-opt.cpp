//===- qimeng-opt.cpp - mlir-opt with --qimeng-tensorop built in ----------===//
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "qimeng/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  qimeng::registerQiMengPasses();
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "QiMeng-TensorOp optimizer driver\n", registry));
}

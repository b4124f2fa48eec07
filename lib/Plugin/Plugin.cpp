//===- Plugin.cpp - mlir-opt --load-pass-plugin entry point ---------------===//
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "qimeng/Transforms/Passes.h"
#include "llvm/Config/llvm-config.h"

extern "C" LLVM_ATTRIBUTE_WEAK ::mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "QiMengTensorOp", LLVM_VERSION_STRING,
          []() { qimeng::registerQiMengPasses(); }};
}

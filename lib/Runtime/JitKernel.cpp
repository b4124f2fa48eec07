//===- JitKernel.cpp - ORC loading of assembled kernels
//--------------------===//
#include "qimeng/Runtime/JitKernel.h"
#include "qimeng/Emit/Assembler.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Support/TargetSelect.h"
#include <mutex>

using namespace qimeng;

JitKernel::~JitKernel() = default;

llvm::Expected<std::unique_ptr<JitKernel>>
JitKernel::load(std::unique_ptr<llvm::MemoryBuffer> object,
                llvm::StringRef symbol) {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  auto jit = llvm::orc::LLJITBuilder().create();
  if (!jit)
    return jit.takeError();
  if (auto err = (*jit)->addObjectFile(std::move(object)))
    return std::move(err);
  auto address = (*jit)->lookup(symbol);
  if (!address)
    return llvm::createStringError(
        "kernel symbol '" + symbol.str() +
        "' not found in the object: " + llvm::toString(address.takeError()));
  std::unique_ptr<JitKernel> kernel(new JitKernel());
  kernel->jit_ = std::move(*jit);
  kernel->address_ = address->toPtr<void *>();
  return kernel;
}

llvm::Expected<LoadedKernel> qimeng::loadEmittedKernel(EmittedKernel emitted,
                                                       const Target &target) {
  auto object = assembleToObject(emitted.text, target, emitted.symbol + ".s");
  if (!object)
    return object.takeError();
  auto jit = JitKernel::load(std::move(*object), emitted.symbol);
  if (!jit)
    return jit.takeError();
  return LoadedKernel{std::move(emitted), std::move(*jit)};
}

llvm::Expected<LoadedKernel>
qimeng::buildGemmKernel(const GemmDesc &desc, const GemmConfig &config,
                        const Target &target, const EmitterOptions &options,
                        llvm::StringRef fault) {
  auto emitted = emitGemmKernel(desc, config, options, fault);
  if (!emitted)
    return emitted.takeError();
  return loadEmittedKernel(std::move(*emitted), target);
}

llvm::Expected<LoadedKernel>
qimeng::buildConvKernel(const ConvDesc &desc, const GemmConfig &config,
                        const Target &target, const EmitterOptions &options,
                        llvm::StringRef fault) {
  auto emitted = emitConvKernel(desc, config, options, fault);
  if (!emitted)
    return emitted.takeError();
  return loadEmittedKernel(std::move(*emitted), target);
}

//===- KernelConfig.cpp ---------------------------------------------------===//
#include "qimeng/Kernel/KernelConfig.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"

using namespace qimeng;

llvm::StringRef qimeng::orderName(KStepOrder order) {
  switch (order) {
  case KStepOrder::Broadcast:
    return "bcast";
  case KStepOrder::Pipelined:
    return "pipelined";
  case KStepOrder::Embedded:
    return "embedded";
  }
  return "bcast";
}

llvm::StringRef qimeng::loopOrderName(MacroLoopOrder order) {
  return order == MacroLoopOrder::IrJr ? "ir-jr" : "jr-ir";
}

llvm::StringRef qimeng::splitName(SplitAxis axis) {
  switch (axis) {
  case SplitAxis::Auto:
    return "auto";
  case SplitAxis::M:
    return "m";
  case SplitAxis::N:
    return "n";
  }
  return "auto";
}

std::string GemmConfig::str() const {
  return llvm::formatv("isa={0},mr={1},nr={2},ku={3},kc={4},mc={5},nc={6},"
                       "pfa={7},pfb={8},order={9},threads={10},packb={11},"
                       "loop={12},split={13}",
                       isaName(isa), mr, nr, kUnroll, kc, mc, nc, prefetchA,
                       prefetchB, orderName(order), threads, packB ? 1 : 0,
                       loopOrderName(loop), splitName(split))
      .str();
}

int GemmConfig::vectorRegistersNeeded(int lanes) const {
  int nv = lanes > 0 ? (nr + lanes - 1) / lanes : 0;
  int aRegisters = order == KStepOrder::Pipelined  ? 2
                   : order == KStepOrder::Embedded ? 0
                                                   : 1;
  return mr * nv + nv + aRegisters;
}

llvm::Expected<GemmConfig> GemmConfig::parse(llvm::StringRef spec,
                                             const GemmConfig &base) {
  GemmConfig config = base;
  llvm::SmallVector<llvm::StringRef> items;
  spec.split(items, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef item : items) {
    auto [key, value] = item.trim().split('=');
    key = key.trim();
    value = value.trim();
    if (value.empty())
      return llvm::createStringError(
          llvm::formatv("kernel config item '{0}' is not key=value", item)
              .str());
    if (key == "order") {
      if (value == "bcast")
        config.order = KStepOrder::Broadcast;
      else if (value == "pipelined")
        config.order = KStepOrder::Pipelined;
      else if (value == "embedded")
        config.order = KStepOrder::Embedded;
      else
        return llvm::createStringError(
            "unknown kernel config order '" + value.str() +
            "'; expected bcast, pipelined or embedded");
      continue;
    }
    if (key == "loop") {
      if (value == "jr-ir")
        config.loop = MacroLoopOrder::JrIr;
      else if (value == "ir-jr")
        config.loop = MacroLoopOrder::IrJr;
      else
        return llvm::createStringError("unknown kernel config loop '" +
                                       value.str() +
                                       "'; expected jr-ir or ir-jr");
      continue;
    }
    if (key == "split") {
      if (value == "auto")
        config.split = SplitAxis::Auto;
      else if (value == "m")
        config.split = SplitAxis::M;
      else if (value == "n")
        config.split = SplitAxis::N;
      else
        return llvm::createStringError("unknown kernel config split '" +
                                       value.str() +
                                       "'; expected auto, m or n");
      continue;
    }
    if (key == "isa") {
      auto isa = parseIsa(value);
      if (!isa)
        return isa.takeError();
      config.isa = *isa;
      continue;
    }
    int64_t number;
    if (value.getAsInteger(10, number) || number < 0)
      return llvm::createStringError(
          llvm::formatv("kernel config '{0}' needs a non-negative integer, "
                        "got '{1}'",
                        key, value)
              .str());
    if (key == "mr")
      config.mr = number;
    else if (key == "nr")
      config.nr = number;
    else if (key == "ku")
      config.kUnroll = number;
    else if (key == "kc")
      config.kc = number;
    else if (key == "mc")
      config.mc = number;
    else if (key == "nc")
      config.nc = number;
    else if (key == "pfa")
      config.prefetchA = number;
    else if (key == "pfb")
      config.prefetchB = number;
    else if (key == "packb") {
      if (number > 1)
        return llvm::createStringError("kernel config 'packb' must be 0 or 1");
      config.packB = number == 1;
    } else if (key == "threads") {
      if (number < 1)
        return llvm::createStringError("kernel config 'threads' must be >= 1");
      config.threads = number;
    } else
      return llvm::createStringError(
          llvm::formatv("unknown kernel config key '{0}'; expected isa, mr, "
                        "nr, ku, kc, mc, nc, pfa, pfb, order, threads, packb, "
                        "loop or split",
                        key)
              .str());
  }
  return config;
}

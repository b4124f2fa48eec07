//===- KernelConfig.cpp ---------------------------------------------------===//
#include "qimeng/Kernel/KernelConfig.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"
#include <algorithm>
#include <initializer_list>
#include <utility>

using namespace qimeng;

llvm::StringRef qimeng::orderName(KStepOrder order) {
  switch (order) {
  case KStepOrder::Broadcast:
    return "bcast";
  case KStepOrder::Pipelined:
    return "pipelined";
  case KStepOrder::Embedded:
    return "embedded";
  case KStepOrder::BMem:
    return "bmem";
  }
  return "bcast";
}

llvm::StringRef qimeng::loopOrderName(MacroLoopOrder order) {
  return order == MacroLoopOrder::IrJr ? "ir-jr" : "jr-ir";
}

llvm::StringRef qimeng::bPackingName(BPacking packing) {
  switch (packing) {
  case BPacking::InPlace:
    return "0";
  case BPacking::Panels:
    return "1";
  case BPacking::Fused:
    return "fused";
  }
  return "1";
}

llvm::StringRef qimeng::aLayoutName(ALayout layout) {
  switch (layout) {
  case ALayout::KMajor:
    return "kmajor";
  case ALayout::Rows:
    return "rows";
  case ALayout::Direct:
    return "direct";
  }
  return "kmajor";
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

llvm::StringRef qimeng::productName(Product product) {
  return product == Product::Transposed ? "transposed" : "direct";
}

std::string GemmConfig::str() const {
  // The sketch-driven ISAs block K (kc), copy B's panels (packb) or not,
  // and split C among threads; A is read in place: that and the block is
  // all there is to say.
  if (isSketchIsa(isa))
    return llvm::formatv("isa={0},mr={1},nr={2},ku={3},kc={4},packb={5},"
                         "threads={6},split={7}",
                         isaName(isa), mr, nr, kUnroll, kc, bPackingName(packB),
                         threads, splitName(split))
               .str() +
           (isa == VectorIsa::Rvv ? ",lmul=" + std::to_string(lmul) : "");
  return llvm::formatv("isa={0},mr={1},nr={2},ku={3},kc={4},mc={5},nc={6},"
                       "pfa={7},pfb={8},order={9},threads={10},packb={11},"
                       "loop={12},split={13},alayout={14}",
                       isaName(isa), mr, nr, kUnroll, kc, mc, nc, prefetchA,
                       prefetchB, orderName(order), threads,
                       bPackingName(packB), loopOrderName(loop),
                       splitName(split), aLayoutName(aLayout))
             .str() +
         (product == Product::Transposed
              ? ",product=" + productName(product).str()
              : "") +
         (sweepB ? ",sweepb=1" : "");
}

int GemmConfig::vectorRegistersNeeded(int lanes) const {
  int nv = lanes > 0 ? (nr + lanes - 1) / lanes : 0;
  // bmem leaves the last B vector in memory.
  int bRegisters = order == KStepOrder::BMem ? std::max(nv - 1, 0) : nv;
  int aRegisters = order == KStepOrder::Pipelined  ? 2
                   : order == KStepOrder::Embedded ? 0
                                                   : 1;
  return mr * nv + bRegisters + aRegisters;
}

/// Sets `out` to the value named `value` among `choices`; an error naming
/// the key and the choices otherwise ("unknown kernel config loop 'x';
/// expected jr-ir or ir-jr").
template <typename Enum>
static llvm::Error
parseChoice(llvm::StringRef key, llvm::StringRef value,
            std::initializer_list<std::pair<const char *, Enum>> choices,
            Enum &out) {
  std::string expected;
  size_t i = 0;
  for (const auto &[name, v] : choices) {
    if (value == name) {
      out = v;
      return llvm::Error::success();
    }
    expected += i == 0 ? "" : (i + 1 == choices.size() ? " or " : ", ");
    expected += name;
    ++i;
  }
  return llvm::createStringError(
      llvm::formatv("unknown kernel config {0} '{1}'; expected {2}", key, value,
                    expected)
          .str());
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
      if (auto err =
              parseChoice<KStepOrder>(key, value,
                                      {{"bcast", KStepOrder::Broadcast},
                                       {"pipelined", KStepOrder::Pipelined},
                                       {"embedded", KStepOrder::Embedded},
                                       {"bmem", KStepOrder::BMem}},
                                      config.order))
        return std::move(err);
      continue;
    }
    if (key == "loop") {
      if (auto err =
              parseChoice<MacroLoopOrder>(key, value,
                                          {{"jr-ir", MacroLoopOrder::JrIr},
                                           {"ir-jr", MacroLoopOrder::IrJr}},
                                          config.loop))
        return std::move(err);
      continue;
    }
    if (key == "alayout") {
      if (auto err = parseChoice<ALayout>(key, value,
                                          {{"kmajor", ALayout::KMajor},
                                           {"rows", ALayout::Rows},
                                           {"direct", ALayout::Direct}},
                                          config.aLayout))
        return std::move(err);
      continue;
    }
    if (key == "packb") {
      if (auto err = parseChoice<BPacking>(key, value,
                                           {{"0", BPacking::InPlace},
                                            {"1", BPacking::Panels},
                                            {"fused", BPacking::Fused}},
                                           config.packB))
        return std::move(err);
      continue;
    }
    if (key == "split") {
      if (auto err = parseChoice<SplitAxis>(key, value,
                                            {{"auto", SplitAxis::Auto},
                                             {"m", SplitAxis::M},
                                             {"n", SplitAxis::N}},
                                            config.split))
        return std::move(err);
      continue;
    }
    if (key == "product") {
      if (auto err = parseChoice<Product>(key, value,
                                          {{"direct", Product::Direct},
                                           {"transposed", Product::Transposed}},
                                          config.product))
        return std::move(err);
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
    else if (key == "lmul")
      config.lmul = number;
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
    else if (key == "sweepb") {
      if (number > 1)
        return llvm::createStringError("kernel config 'sweepb' is 0 or 1");
      config.sweepB = number == 1;
    } else if (key == "threads") {
      if (number < 1)
        return llvm::createStringError("kernel config 'threads' must be >= 1");
      config.threads = number;
    } else
      return llvm::createStringError(
          llvm::formatv("unknown kernel config key '{0}'; expected isa, mr, "
                        "nr, ku, kc, mc, nc, pfa, pfb, order, threads, packb, "
                        "loop, split, alayout, product or sweepb",
                        key)
              .str());
  }
  return config;
}

//===- PrepackedB.cpp - B packed once, in a kernel's panel layout ---------===//

#include "qimeng/Kernel/PrepackedB.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"
#include <cstring>

using namespace qimeng;

llvm::Expected<PrepackedB> PrepackedB::parse(llvm::StringRef header) {
  PrepackedB layout;
  int64_t plus128 = -1;
  llvm::SmallVector<llvm::StringRef, 4> fields;
  header.split(fields, ' ', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef field : fields) {
    auto [key, value] = field.split('=');
    int64_t *slot = key == "nr"              ? &layout.nr
                    : key == "k_groups"      ? &layout.kGroups
                    : key == "element_bytes" ? &layout.elementBytes
                    : key == "plus128"       ? &plus128
                                             : nullptr;
    if (!slot || value.getAsInteger(10, *slot))
      return llvm::createStringError("malformed qm.b_prepacked field '" +
                                     field.str() + "'");
  }
  if (layout.nr <= 0 || layout.kGroups <= 0 ||
      (layout.elementBytes != 1 && layout.elementBytes != 2 &&
       layout.elementBytes != 4) ||
      (plus128 != 0 && plus128 != 1) ||
      (plus128 == 1 && layout.elementBytes != 1))
    return llvm::createStringError(
        "malformed qm.b_prepacked '" + header.str() +
        "'; expected nr=<n> k_groups=<n> element_bytes=1|2|4 plus128=0|1 "
        "(1 for bytes only)");
  layout.plus128 = plus128 == 1;
  return layout;
}

llvm::Error PrepackedB::check(const GemmDesc &desc) const {
  const int64_t group = 4 / elementBytes;
  if (desc.operandElementBytes() != elementBytes ||
      (desc.k + group - 1) / group > kGroups)
    return llvm::createStringError(llvm::formatv(
        "a prepacked B of {0}-byte elements and {1} groups of {2} k does not "
        "hold {3}'s B (K = {4})",
        elementBytes, kGroups, group, desc.str(), desc.k));
  return llvm::Error::success();
}

void qimeng::packB(const PrepackedB &layout, const GemmDesc &desc,
                   const void *b, void *out) {
  const int64_t eb = layout.elementBytes, group = 4 / eb, nr = layout.nr;
  const auto *src = static_cast<const unsigned char *>(b);
  auto *dst = static_cast<unsigned char *>(out);
  std::memset(dst, 0, size_t(layout.bytes(desc.n)));
  for (int64_t s = 0; s * nr < desc.n; ++s)
    for (int64_t g = 0; g < layout.kGroups; ++g)
      for (int64_t j = 0; j < nr; ++j) {
        unsigned char *lane = dst + ((s * layout.kGroups + g) * nr + j) * 4;
        const int64_t col = s * nr + j;
        for (int64_t t = 0; t < group; ++t) {
          const int64_t k = g * group + t;
          if (k < desc.k && col < desc.n)
            std::memcpy(
                lane + t * eb,
                src + (desc.transB ? col * desc.ldb + k : k * desc.ldb + col) *
                          eb,
                size_t(eb));
        }
        if (layout.plus128)
          for (int64_t t = 0; t < 4; ++t)
            lane[t] ^= 0x80;
      }
}

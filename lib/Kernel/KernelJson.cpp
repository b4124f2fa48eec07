//===- KernelJson.cpp -----------------------------------------------------===//
#include "qimeng/Kernel/KernelJson.h"
#include "llvm/Support/FormatVariadic.h"

using namespace qimeng;
using json = nlohmann::json;

json qimeng::toJson(const GemmDesc &d) {
  return {{"m", d.m},
          {"n", d.n},
          {"k", d.k},
          {"lda", d.lda},
          {"ldb", d.ldb},
          {"ldc", d.ldc},
          {"trans_a", d.transA},
          {"trans_b", d.transB}};
}

llvm::Expected<GemmDesc> qimeng::gemmDescFromJson(const json &j,
                                                  llvm::StringRef what) {
  if (!j.is_object())
    return llvm::createStringError(what.str() + " is not a JSON object");
  GemmDesc d;
  for (auto [field, name] : {std::pair<int64_t *, const char *>{&d.m, "m"},
                             {&d.n, "n"},
                             {&d.k, "k"},
                             {&d.lda, "lda"},
                             {&d.ldb, "ldb"},
                             {&d.ldc, "ldc"}}) {
    auto it = j.find(name);
    if (it == j.end() || !it->is_number_integer())
      return llvm::createStringError(
          llvm::formatv("{0} field '{1}' must be an integer", what, name)
              .str());
    *field = it->get<int64_t>();
  }
  for (auto [field, name] :
       {std::pair<bool *, const char *>{&d.transA, "trans_a"},
        {&d.transB, "trans_b"}}) {
    auto it = j.find(name);
    if (it == j.end() || !it->is_boolean())
      return llvm::createStringError(
          llvm::formatv("{0} field '{1}' must be a boolean", what, name).str());
    *field = it->get<bool>();
  }
  return d;
}

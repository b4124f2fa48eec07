//===- KernelJson.cpp -----------------------------------------------------===//
#include "qimeng/Kernel/KernelJson.h"
#include "qimeng/Support/JsonFieldReader.h"

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
  JsonFieldReader fields(j, what.str());
  GemmDesc d;
  for (auto [field, name] : {std::pair<int64_t *, const char *>{&d.m, "m"},
                             {&d.n, "n"},
                             {&d.k, "k"},
                             {&d.lda, "lda"},
                             {&d.ldb, "ldb"},
                             {&d.ldc, "ldc"}})
    if (auto err = fields.integer64(name, *field))
      return std::move(err);
  if (auto err = fields.boolean("trans_a", d.transA))
    return std::move(err);
  if (auto err = fields.boolean("trans_b", d.transB))
    return std::move(err);
  return d;
}

//===- HardwareComprehension.cpp - Stage 1: the LLM reads the machine -----===//
#include "qimeng/LLM/HardwareComprehension.h"
#include "llvm/Support/FormatVariadic.h"
#include <nlohmann/json.hpp>

using namespace qimeng;
using json = nlohmann::json;

static const char *const kHints[] = {"tiling", "reordering", "vectorization",
                                     "layout", "pipelining"};

HardwareFactors qimeng::factorsOf(const Target &t) {
  HardwareFactors f;
  VectorIsa isa = t.bestIsa();
  f.vectorRegisters = Target::vectorRegisters(isa);
  f.vectorBits = Target::vectorBits(isa);
  f.l1d = t.caches.l1d;
  f.l2 = t.caches.l2;
  f.l3 = t.caches.l3;
  f.cores = t.cores;
  f.fma = t.hasFeature("fma");
  return f;
}

std::string qimeng::hardwarePrompt(const Target &target,
                                   llvm::StringRef manualExcerpt) {
  std::string p =
      "We generate GEMM and convolution kernels in assembly for one machine. "
      "Tie each of five optimization hints to its hardware factors:\n"
      "- tiling (the register block and cache blocks) <- registers, memory "
      "hierarchy\n"
      "- reordering (loop order, instruction order) <- load/compute/store "
      "instructions, memory hierarchy\n"
      "- vectorization <- registers, load/compute/store instructions\n"
      "- layout (packing) <- memory hierarchy\n"
      "- pipelining (prefetch, overlapping loads and FMAs) <- instructions, "
      "memory hierarchy, cores\n"
      "The machine as detected:\n" +
      target.toJson() + "\n";
  if (!manualExcerpt.empty())
    p += "An excerpt of its manual:\n" + manualExcerpt.str() + "\n";
  p += "Answer with JSON only: {\"registers\": {\"vector_registers\": N, "
       "\"vector_bits\": N}, \"memory\": {\"l1d_bytes\": N, \"l2_bytes\": N, "
       "\"l3_bytes\": N}, \"instructions\": {\"fma\": true}, \"cores\": N, "
       "\"hints\": {\"tiling\": \"...\", \"reordering\": \"...\", "
       "\"vectorization\": \"...\", \"layout\": \"...\", \"pipelining\": "
       "\"...\"}}\n";
  return p;
}

llvm::Expected<HardwareReport>
qimeng::mergeHardwareReply(llvm::StringRef reply, const Target &target) {
  size_t open = reply.find('{'), close = reply.rfind('}');
  json j =
      open == llvm::StringRef::npos || close == llvm::StringRef::npos ||
              close < open
          ? json()
          : json::parse(reply.slice(open, close + 1).str(), nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return llvm::createStringError("the hardware reply holds no JSON object");
  HardwareReport r;
  r.detected = factorsOf(target);
  r.merged = r.detected;
  // A number at j[group][name] (group empty: top level), compared with the
  // detected value: detection wins, a disagreement is reported.
  auto number = [&](const char *group, const char *name, const char *what,
                    auto &detected) -> llvm::Error {
    const json *at = &j;
    if (*group) {
      auto g = j.find(group);
      if (g == j.end())
        return llvm::Error::success();
      if (!g->is_object())
        return llvm::createStringError(
            llvm::formatv("hardware reply field '{0}' must be an object", group)
                .str());
      at = &*g;
    }
    auto v = at->find(name);
    if (v == at->end())
      return llvm::Error::success();
    if (!v->is_number_integer() || v->get<int64_t>() < 0)
      return llvm::createStringError(
          llvm::formatv("hardware reply field '{0}{1}{2}' must be a "
                        "non-negative integer",
                        group, *group ? "." : "", name)
              .str());
    int64_t said = v->get<int64_t>();
    if (said != int64_t(detected))
      r.conflicts.push_back(
          llvm::formatv("{0}: the LLM says {1}, detection {2}; kept the "
                        "detected value",
                        what, said, int64_t(detected))
              .str());
    return llvm::Error::success();
  };
  HardwareFactors &d = r.detected;
  if (auto err = number("registers", "vector_registers", "vector registers",
                        d.vectorRegisters))
    return std::move(err);
  if (auto err =
          number("registers", "vector_bits", "vector bits", d.vectorBits))
    return std::move(err);
  if (auto err = number("memory", "l1d_bytes", "l1d", d.l1d))
    return std::move(err);
  if (auto err = number("memory", "l2_bytes", "l2", d.l2))
    return std::move(err);
  if (auto err = number("memory", "l3_bytes", "l3", d.l3))
    return std::move(err);
  if (auto err = number("", "cores", "cores", d.cores))
    return std::move(err);
  if (auto ins = j.find("instructions"); ins != j.end()) {
    if (!ins->is_object())
      return llvm::createStringError(
          "hardware reply field 'instructions' must be an object");
    if (auto fma = ins->find("fma"); fma != ins->end()) {
      if (!fma->is_boolean())
        return llvm::createStringError(
            "hardware reply field 'instructions.fma' must be true or false");
      if (fma->get<bool>() != d.fma)
        r.conflicts.push_back(
            llvm::formatv("fma: the LLM says {0}, detection {1}; kept the "
                          "detected value",
                          fma->get<bool>(), d.fma)
                .str());
    }
  }
  if (auto hints = j.find("hints"); hints != j.end()) {
    if (!hints->is_object())
      return llvm::createStringError(
          "hardware reply field 'hints' must be an object");
    for (const char *h : kHints)
      if (auto v = hints->find(h); v != hints->end() && v->is_string())
        r.merged.hints[h] = v->get<std::string>();
  }
  return r;
}

llvm::Expected<HardwareReport>
qimeng::comprehendHardware(ChatClient &client, const Target &target,
                           llvm::StringRef manualExcerpt) {
  auto reply = client.complete(
      {{"system", "You are an expert in CPU microarchitecture."},
       {"user", hardwarePrompt(target, manualExcerpt)}});
  if (!reply)
    return reply.takeError();
  return mergeHardwareReply(*reply, target);
}

//===- HardwareComprehension.h - Stage 1: the LLM reads the machine -*- C++
//-*-//
//
// The paper's first stage. The prompt ties the five generic optimization
// hints (tiling, reordering, vectorization, layout, pipelining) to the four
// hardware factors (registers, memory hierarchy, load/compute/store
// instructions, cores) and carries the detected target and, optionally, an
// excerpt of a manual the user points to. The reply is a hardware-factor
// JSON, checked field by field; it is merged with detection: a detected
// fact wins over the LLM's, and every disagreement is reported.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_LLM_HARDWARECOMPREHENSION_H
#define QIMENG_LLM_HARDWARECOMPREHENSION_H

#include "qimeng/Kernel/Target.h"
#include "qimeng/LLM/ChatClient.h"
#include "llvm/Support/Error.h"
#include <map>
#include <string>
#include <vector>

namespace qimeng {

struct HardwareFactors {
  int vectorRegisters = 0;         ///< architectural vector registers
  int vectorBits = 0;              ///< bits per vector register
  int64_t l1d = 0, l2 = 0, l3 = 0; ///< bytes
  int cores = 0;
  bool fma = false;
  /// What the LLM makes of each hint for this machine (free text), keyed
  /// "tiling", "reordering", "vectorization", "layout", "pipelining".
  std::map<std::string, std::string> hints;
};

struct HardwareReport {
  HardwareFactors detected; ///< from the Target
  HardwareFactors merged;   ///< detected facts, hints from the LLM
  /// "l2: the LLM says 1048576, detection 2097152; kept the detected".
  std::vector<std::string> conflicts;
};

/// The factors a Target states.
HardwareFactors factorsOf(const Target &target);

/// The stage-1 prompt for `target`, with `manualExcerpt` when not empty.
std::string hardwarePrompt(const Target &target,
                           llvm::StringRef manualExcerpt = "");

/// Checks an LLM reply (a JSON object somewhere in the text, of the schema
/// the prompt gives) and merges it with `target`'s facts. An error for a
/// reply without the object or with a wrong-typed field.
llvm::Expected<HardwareReport> mergeHardwareReply(llvm::StringRef reply,
                                                  const Target &target);

/// Asks `client` and merges its reply.
llvm::Expected<HardwareReport>
comprehendHardware(ChatClient &client, const Target &target,
                   llvm::StringRef manualExcerpt = "");

} // namespace qimeng

#endif // QIMENG_LLM_HARDWARECOMPREHENSION_H

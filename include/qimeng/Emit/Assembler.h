//===- Assembler.h - Assemble kernel text with LLVM MC ----------*- C++ -*-===//
#ifndef QIMENG_EMIT_ASSEMBLER_H
#define QIMENG_EMIT_ASSEMBLER_H

#include "qimeng/Kernel/Target.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include <memory>

namespace qimeng {

/// Assembles AT&T assembly `text` for `target` (triple, cpu, features) in
/// process with LLVM MC into an in-memory ELF relocatable object. Errors
/// carry every diagnostic as "NAME:LINE:COL: error: message" with the
/// offending source line.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
assembleToObject(llvm::StringRef text, const Target &target,
                 llvm::StringRef bufferName = "kernel.s");

} // namespace qimeng

#endif // QIMENG_EMIT_ASSEMBLER_H

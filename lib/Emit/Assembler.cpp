//===- Assembler.cpp - LLVM MC in process
//----------------------------------===//
//
// The same pipeline llvm-mc runs for `-filetype=obj`, writing into memory.
//
//===----------------------------------------------------------------------===//
#include "qimeng/Emit/Assembler.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/MC/MCAsmBackend.h"
#include "llvm/MC/MCAsmInfo.h"
#include "llvm/MC/MCCodeEmitter.h"
#include "llvm/MC/MCContext.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCObjectFileInfo.h"
#include "llvm/MC/MCObjectWriter.h"
#include "llvm/MC/MCParser/MCAsmParser.h"
#include "llvm/MC/MCParser/MCTargetAsmParser.h"
#include "llvm/MC/MCRegisterInfo.h"
#include "llvm/MC/MCStreamer.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/MCTargetOptions.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Triple.h"
#include <mutex>

using namespace qimeng;

static void initializeTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmParsers();
  });
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
qimeng::assembleToObject(llvm::StringRef text, const Target &target,
                         llvm::StringRef bufferName) {
  initializeTargets();
  llvm::Triple triple(target.triple);
  std::string lookupError;
  const llvm::Target *t =
      llvm::TargetRegistry::lookupTarget(triple, lookupError);
  if (!t)
    return llvm::createStringError("no assembler for triple '" + target.triple +
                                   "': " + lookupError);

  llvm::MCTargetOptions options;
  std::unique_ptr<llvm::MCRegisterInfo> mri(t->createMCRegInfo(triple));
  std::unique_ptr<llvm::MCAsmInfo> mai(
      t->createMCAsmInfo(*mri, triple, options));
  std::unique_ptr<llvm::MCSubtargetInfo> sti(t->createMCSubtargetInfo(
      triple, target.cpu.empty() ? "generic" : target.cpu,
      target.featureString()));
  std::unique_ptr<llvm::MCInstrInfo> mcii(t->createMCInstrInfo());
  if (!mri || !mai || !sti || !mcii)
    return llvm::createStringError("cannot create the MC layer for '" +
                                   target.triple + "'");

  // Diagnostics go into a string, with line, column and source line.
  std::string diagnostics;
  llvm::raw_string_ostream diagStream(diagnostics);
  llvm::SourceMgr srcMgr;
  srcMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, bufferName), llvm::SMLoc());
  srcMgr.setDiagHandler(
      [](const llvm::SMDiagnostic &diag, void *context) {
        auto *os = static_cast<llvm::raw_string_ostream *>(context);
        diag.print(/*ProgName=*/nullptr, *os, /*ShowColors=*/false);
      },
      &diagStream);

  llvm::MCContext ctx(triple, mai.get(), mri.get(), sti.get(), &srcMgr,
                      &options);
  std::unique_ptr<llvm::MCObjectFileInfo> mofi(
      t->createMCObjectFileInfo(ctx, /*PIC=*/true));
  ctx.setObjectFileInfo(mofi.get());

  llvm::SmallString<0> objectBytes;
  auto objectStream = std::make_unique<llvm::raw_svector_ostream>(objectBytes);
  std::unique_ptr<llvm::MCCodeEmitter> codeEmitter(
      t->createMCCodeEmitter(*mcii, ctx));
  std::unique_ptr<llvm::MCAsmBackend> backend(
      t->createMCAsmBackend(*sti, *mri, options));
  if (!codeEmitter || !backend)
    return llvm::createStringError("cannot create an object writer for '" +
                                   target.triple + "'");
  auto writer = backend->createObjectWriter(*objectStream);
  std::unique_ptr<llvm::MCStreamer> streamer(t->createMCObjectStreamer(
      triple, ctx, std::move(backend), std::move(writer),
      std::move(codeEmitter), *sti));
  std::unique_ptr<llvm::MCAsmParser> parser(
      llvm::createMCAsmParser(srcMgr, ctx, *streamer, *mai));
  std::unique_ptr<llvm::MCTargetAsmParser> targetParser(
      t->createMCAsmParser(*sti, *parser, *mcii, options));
  if (!targetParser)
    return llvm::createStringError("no assembly parser for '" + target.triple +
                                   "'");
  parser->setTargetParser(*targetParser);
  // Run() finishes the streamer (writes the object) when parsing succeeds.
  bool failed = parser->Run(/*NoInitialTextSection=*/false);
  diagStream.flush();
  if (failed || ctx.hadError() ||
      llvm::StringRef(diagnostics).contains(": error:"))
    return llvm::createStringError(
        "assembly failed:\n" +
        (diagnostics.empty() ? std::string("unknown error") : diagnostics));
  // Copy out before the streamer goes: its teardown still touches the
  // stream it wrote to.
  auto object = llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(objectBytes.data(), objectBytes.size()),
      bufferName.str() + ".o");
  streamer.reset();
  return object;
}

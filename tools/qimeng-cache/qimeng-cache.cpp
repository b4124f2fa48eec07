//===- qimeng-cache.cpp - Inspect and maintain the tuning database --------===//
//
// Lists, shows, removes, exports and imports the tuned kernels that the pass
// and qimeng-tune keep on disk (docs/TuningDatabase.md).
//
//===----------------------------------------------------------------------===//
#include "qimeng/Tune/TuningDatabase.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

using namespace qimeng;
namespace cl = llvm::cl;

static cl::OptionCategory cacheCategory("qimeng-cache options");

static cl::opt<std::string>
    cacheDirOpt("cache-dir",
                cl::desc("Tuning database directory (default: "
                         "$QIMENG_CACHE_DIR, else "
                         "$XDG_CACHE_HOME/qimeng-tensorop, else "
                         "~/.cache/qimeng-tensorop)"),
                cl::value_desc("dir"), cl::init(""), cl::cat(cacheCategory));

static cl::opt<bool> jsonOpt("json", cl::desc("list: one JSON object per line"),
                             cl::init(false), cl::cat(cacheCategory));

static cl::list<std::string> commandArgs(cl::Positional,
                                         cl::desc("<command> [argument]"),
                                         cl::cat(cacheCategory));

static void printWarnings(const std::vector<std::string> &warnings) {
  for (const std::string &warning : warnings)
    llvm::errs() << "qimeng-cache: warning: " << warning << "\n";
}

/// "sgemm 512x512x512 nn", "sgemm bf16 512x512x512 nn" for other operand
/// types.
static std::string describeShape(const TuningKey &key) {
  return llvm::formatv("{0} {1}{2}x{3}x{4} {5}{6}", key.op,
                       key.dtype == "f32" ? "" : key.dtype + " ", key.desc.m,
                       key.desc.n, key.desc.k, key.desc.transA ? 't' : 'n',
                       key.desc.transB ? 't' : 'n')
      .str();
}

static void listEntries(const TuningDatabase &db) {
  std::vector<std::string> warnings;
  std::vector<TuningRecord> records = db.list(warnings);
  for (const TuningRecord &r : records) {
    std::string hash = r.key.hash();
    if (jsonOpt) {
      nlohmann::ordered_json line = nlohmann::ordered_json::parse(
          recordToJson(r), nullptr, /*allow_exceptions=*/false);
      if (line.is_discarded())
        continue;
      line["hash"] = hash;
      llvm::outs() << line.dump(
                          -1, ' ', false,
                          nlohmann::ordered_json::error_handler_t::replace)
                   << "\n";
      continue;
    }
    llvm::outs() << llvm::formatv(
        "{0}  {1,-22}  threads={2,-3} {3,7:F1} GFLOPS {4,5:F1}% of peak  {5}  "
        "{6}\n",
        llvm::StringRef(hash).take_front(12), describeShape(r.key),
        r.key.threads, r.medianGflops, 100.0 * r.fractionOfPeak, r.config.str(),
        r.timestamp);
  }
  printWarnings(warnings);
}

static void showEntry(const TuningDatabase &db, const std::string &hash,
                      const TuningRecord &r) {
  llvm::raw_ostream &os = llvm::outs();
  const GemmDesc &d = r.key.desc;
  os << "hash: " << hash << "\n";
  os << "file: " << db.entryPath(r.key) << "\n";
  os << "op: " << r.key.op << "\n";
  os << llvm::formatv("shape: {0}x{1}x{2} {3}{4} (lda={5} ldb={6} ldc={7})\n",
                      d.m, d.n, d.k, d.transA ? 't' : 'n', d.transB ? 't' : 'n',
                      d.lda, d.ldb, d.ldc);
  os << "dtype: " << r.key.dtype << "\n";
  os << "semantics: " << r.key.semantics << "\n";
  os << "triple: " << r.key.triple << "\n";
  os << "cpu: " << r.key.cpu << "\n";
  os << "features: " << r.key.features << "\n";
  os << "generator version: " << r.key.generatorVersion << "\n";
  os << "threads: " << r.key.threads << "\n";
  os << "config: " << r.config.str() << "\n";
  os << llvm::formatv("median: {0:F2} GFLOPS ({1:F1}% of peak {2:F2} GFLOPS), "
                      "spread {3:F1}%\n",
                      r.medianGflops, 100.0 * r.fractionOfPeak, r.peakGflops,
                      100.0 * r.spread);
  os << llvm::formatv("max relative error: {0:E2} ({1})\n", r.maxRelError,
                      r.validated ? "validated" : "not validated");
  os << "workspace: " << r.workspaceBytes << " bytes\n";
  os << "trials: " << r.trials << "\n";
  os << "source: " << r.source << "\n";
  os << "timestamp: " << r.timestamp << "\n";
  os << "symbol: " << r.symbol << "\n";
  os << "kernel sha256: " << r.kernelSha256 << "\n";
  os << "kernel text:\n" << r.kernelText;
  if (!r.kernelText.empty() && r.kernelText.back() != '\n')
    os << "\n";
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  llvm::ExitOnError exitOnErr("qimeng-cache: ");
  cl::HideUnrelatedOptions(cacheCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "inspect and maintain the QiMeng-TensorOp tuning database\n\n"
      "Commands:\n"
      "  list           one line per entry: hash, op and shape, threads,\n"
      "                 median GFLOPS and % of peak, config, timestamp\n"
      "                 (--json: one JSON object per line)\n"
      "  show HASH      the entry's key, config, numbers, symbol and kernel\n"
      "  remove HASH    delete the entry\n"
      "  export FILE    write every valid entry to FILE as one JSON document\n"
      "  import FILE    store every valid record of an exported FILE\n"
      "  path           print the database directory\n\n"
      "HASH is a prefix of at least 8 hex digits that names one entry.\n"
      "The database is --cache-dir when given, else $QIMENG_CACHE_DIR when\n"
      "set and non-empty, else $XDG_CACHE_HOME/qimeng-tensorop when set,\n"
      "else $HOME/.cache/qimeng-tensorop; entries live in its v1/\n"
      "subdirectory. Invalid entries are skipped with a warning.\n");

  if (commandArgs.empty())
    exitOnErr(llvm::createStringError(
        "no command given; expected list, show, remove, export, import or "
        "path (see --help)"));
  std::string command = commandArgs[0];
  std::vector<std::string> operands(commandArgs.begin() + 1, commandArgs.end());
  bool takesOperand = command == "show" || command == "remove" ||
                      command == "export" || command == "import";
  bool known = takesOperand || command == "list" || command == "path";
  if (!known)
    exitOnErr(llvm::createStringError(
        "unknown command '" + command +
        "'; expected list, show, remove, export, import or path"));
  if (takesOperand && operands.size() != 1)
    exitOnErr(llvm::createStringError(
        command + " needs exactly one " +
        (command == "show" || command == "remove" ? "hash prefix" : "file")));
  if (!takesOperand && !operands.empty())
    exitOnErr(llvm::createStringError(command + " takes no argument"));

  std::string dir = resolveCacheDir(cacheDirOpt);
  if (command == "path") {
    if (dir.empty())
      exitOnErr(llvm::createStringError(
          "no tuning database directory: set QIMENG_CACHE_DIR or HOME"));
    llvm::outs() << dir << "\n";
    return 0;
  }

  TuningDatabase db = exitOnErr(TuningDatabase::open(dir));
  if (command == "list") {
    listEntries(db);
    return 0;
  }
  if (command == "show") {
    std::string hash = exitOnErr(db.findHash(operands[0]));
    TuningRecord record = exitOnErr(db.readEntry(hash));
    showEntry(db, hash, record);
    return 0;
  }
  if (command == "remove") {
    std::string hash = exitOnErr(db.findHash(operands[0]));
    exitOnErr(db.remove(hash));
    llvm::outs() << "removed " << hash << "\n";
    return 0;
  }
  std::vector<std::string> warnings;
  if (command == "export") {
    llvm::Error err = db.exportTo(operands[0], warnings);
    printWarnings(warnings);
    exitOnErr(std::move(err));
    llvm::outs() << "exported " << dir << " to " << operands[0] << "\n";
    return 0;
  }
  auto imported = db.importFrom(operands[0], warnings);
  printWarnings(warnings);
  int count = exitOnErr(std::move(imported));
  llvm::outs() << "imported " << count << (count == 1 ? " entry" : " entries")
               << " from " << operands[0] << "\n";
  return 0;
}

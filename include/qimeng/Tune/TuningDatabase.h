//===- TuningDatabase.h - Tuned kernels on disk -----------------*- C++ -*-===//
//
// One JSON file per entry under <dir>/v1/, named by the hash of its key.
// Writes go to a temporary file in the same directory and are renamed into
// place, so readers see a whole old entry or a whole new one, and several
// processes can tune into one database at once. A file that is truncated,
// corrupted, of another format version, or whose key does not match is a
// warning and a miss, never a crash. docs/TuningDatabase.md.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_TUNE_TUNINGDATABASE_H
#define QIMENG_TUNE_TUNINGDATABASE_H

#include "qimeng/Kernel/KernelConfig.h"
#include "qimeng/Kernel/KernelDesc.h"
#include "qimeng/Kernel/KernelProblem.h"
#include "qimeng/Kernel/Target.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <optional>
#include <string>
#include <vector>

namespace qimeng {

/// Everything a tuned kernel depends on; changing any field misses.
struct TuningKey {
  std::string op = "sgemm"; ///< "sgemm" or "sconv2d"
  GemmDesc desc; ///< shape, leading dims, transposes (a conv's GEMM view)
  /// The convolution's layout, shape, strides, dilations and input strides
  /// (op "sconv2d").
  std::optional<ConvDesc> conv;
  std::string dtype = "f32"; ///< A's and B's: "f32" or "bf16" (precisionName)
  std::string semantics = "accumulate"; ///< C += A*B (linalg.matmul)
  std::string triple, cpu, features;    ///< target; features as "+a,+b"
  std::string generatorVersion;         ///< qimeng_emitters GENERATOR_VERSION
  int threads = 1;

  static TuningKey forGemm(const GemmDesc &desc, const Target &target,
                           llvm::StringRef generatorVersion, int threads);
  static TuningKey forProblem(const KernelProblem &problem,
                              const Target &target,
                              llvm::StringRef generatorVersion, int threads);

  /// Canonical one-line text of every field (what the hash covers).
  std::string canonical() const;
  /// Hex SHA-256 of canonical() (the entry's file name).
  std::string hash() const;
  bool operator==(const TuningKey &o) const {
    return canonical() == o.canonical();
  }
};

/// Format version of entry files and export documents this build reads and
/// writes (the "version" field; also the <dir>/v1 directory name).
constexpr int kTuningFormatVersion = 1;

struct TuningRecord {
  TuningKey key;
  GemmConfig config;
  std::string symbol;
  std::string kernelText;   ///< the emitter's complete output
  std::string kernelSha256; ///< hex SHA-256 of kernelText
  uint64_t workspaceBytes = 0;
  double medianGflops = 0;
  double spread = 0; ///< (max - min) / median of the timed runs
  double fractionOfPeak = 0;
  double peakGflops = 0;
  double maxRelError = 0; ///< from validation
  bool validated = false;
  int trials = 0;                 ///< candidates the tuner evaluated
  std::string source = "builtin"; ///< "builtin", "llm-assisted" or "llm"
  /// The emitter's source when an LLM wrote it (source "llm"); empty for
  /// our own emitters.
  std::string emitterSource;
  std::string timestamp; ///< UTC, ISO 8601
};

/// Where the database lives: the pass option when given, else
/// QIMENG_CACHE_DIR, else $XDG_CACHE_HOME/qimeng-tensorop, else
/// ~/.cache/qimeng-tensorop.
std::string resolveCacheDir(llvm::StringRef option);

/// Lower-case hex SHA-256 of `data` (64 digits).
std::string sha256Hex(llvm::StringRef data);

class TuningDatabase {
public:
  /// Opens (creating directories as needed) the database at `dir`.
  static llvm::Expected<TuningDatabase> open(llvm::StringRef dir);

  const std::string &directory() const { return dir_; }

  /// The file of the entry for `key`: <dir>/v1/<hash>.json.
  std::string entryPath(const TuningKey &key) const;

  /// Reads and checks the entry file named by a full 64-digit `hash`:
  /// readable, valid record, and its key hashes to the file name.
  llvm::Expected<TuningRecord> readEntry(llvm::StringRef hash) const;

  /// The full hash of the one entry file whose name starts with
  /// `hashPrefix` (at least 8 hex digits), valid or not. Error when none or
  /// several match.
  llvm::Expected<std::string> findHash(llvm::StringRef hashPrefix) const;

  /// The record for `key`, std::nullopt on a miss. An unreadable or invalid
  /// entry is a miss with a message appended to `warnings`.
  std::optional<TuningRecord> lookup(const TuningKey &key,
                                     std::vector<std::string> &warnings) const;

  /// Writes `record` atomically, replacing an entry with the same key.
  /// Fails, writing nothing, when a string is not UTF-8, a number is not
  /// finite, or kernelSha256 is given and does not match kernelText.
  llvm::Error store(const TuningRecord &record) const;

  /// Every valid entry; invalid ones become warnings.
  std::vector<TuningRecord> list(std::vector<std::string> &warnings) const;

  /// Removes the entry whose key hash starts with `hashPrefix` (at least 8
  /// hex digits, unambiguous). Error when none or several match.
  llvm::Error remove(llvm::StringRef hashPrefix) const;

  /// Where the LLM transcript that produced the entry for `key` is kept:
  /// <dir>/v1/<hash>.llm.jsonl (docs/LLM.md).
  std::string transcriptPath(const TuningKey &key) const;
  /// Writes `text` (JSON lines, the API key already stripped) there,
  /// atomically; remove() deletes it with the entry.
  llvm::Error storeTranscript(const TuningKey &key, llvm::StringRef text) const;

  /// Writes every valid entry to `path` as one JSON document.
  llvm::Error exportTo(llvm::StringRef path,
                       std::vector<std::string> &warnings) const;
  /// Stores every valid record of a document written by exportTo; returns
  /// how many were imported. Invalid records become warnings.
  llvm::Expected<int> importFrom(llvm::StringRef path,
                                 std::vector<std::string> &warnings) const;

private:
  explicit TuningDatabase(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

/// Record <-> JSON (format version 1), no-throw. recordToJson writes the
/// SHA-256 of kernelText when kernelSha256 is empty; recordFromJson checks
/// every field's type, the format and version, the config and the checksum.
std::string recordToJson(const TuningRecord &record);
llvm::Expected<TuningRecord> recordFromJson(llvm::StringRef text);

} // namespace qimeng

#endif // QIMENG_TUNE_TUNINGDATABASE_H

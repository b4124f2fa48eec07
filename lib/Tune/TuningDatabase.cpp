//===- TuningDatabase.cpp - Tuned kernels on disk -------------------------===//
//
// Entry files are written to a unique temporary file in the entry directory
// and renamed over the entry, so a reader opens either the complete old file
// or the complete new one. Nothing here throws: JSON is parsed with
// exceptions off and every field's type is checked before it is read.
//
//===----------------------------------------------------------------------===//
#include "qimeng/Tune/TuningDatabase.h"
#include "qimeng/Kernel/KernelJson.h"
#include "qimeng/Support/JsonFieldReader.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"
#include <climits>
#include <cmath>
#include <nlohmann/json.hpp>

using namespace qimeng;
using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;

static constexpr const char *kRecordFormat = "qimeng-tuning-record";
static constexpr const char *kExportFormat = "qimeng-tuning-export";
static constexpr size_t kHashDigits = 64;
static constexpr size_t kMinPrefixDigits = 8;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

std::string qimeng::sha256Hex(llvm::StringRef data) {
  return llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(data)),
                     /*LowerCase=*/true);
}

/// Quotes a string so that the canonical text is unambiguous: printable
/// ASCII other than '"' and '\' stays, every other byte is \xHH.
static std::string quote(llvm::StringRef text) {
  std::string result = "\"";
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      result += static_cast<char>(c);
      continue;
    }
    result += "\\x";
    result += llvm::hexdigit(c >> 4, /*LowerCase=*/true);
    result += llvm::hexdigit(c & 15, /*LowerCase=*/true);
  }
  result += '"';
  return result;
}

static bool isLowerHex(llvm::StringRef text) {
  return llvm::all_of(text, [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
}

/// The whole file, or an error saying why not. `missing` is set when the
/// file does not exist (a miss, not a problem).
static llvm::Expected<std::string> readFile(llvm::StringRef path,
                                            bool *missing = nullptr) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    if (missing)
      *missing = buffer.getError() == std::errc::no_such_file_or_directory;
    return llvm::createStringError(buffer.getError(),
                                   "cannot read " + path + ": " +
                                       buffer.getError().message());
  }
  return (*buffer)->getBuffer().str();
}

/// Writes `contents` to a unique temporary file next to `path`, closes it and
/// renames it over `path`. The temporary file is removed on any failure.
static llvm::Error writeAtomically(llvm::StringRef path,
                                   llvm::StringRef contents) {
  llvm::SmallString<256> tempPath;
  int fd = -1;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(path + "-%%%%%%%%.tmp", fd, tempPath))
    return llvm::createStringError(ec, "cannot create a temporary file for " +
                                           path + ": " + ec.message());
  std::error_code writeError;
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << contents;
    os.close();
    if (os.has_error()) {
      writeError = os.error();
      os.clear_error();
    }
  }
  if (writeError) {
    llvm::sys::fs::remove(tempPath);
    return llvm::createStringError(writeError, "cannot write " + tempPath +
                                                   ": " + writeError.message());
  }
  if (std::error_code ec = llvm::sys::fs::rename(tempPath, path)) {
    llvm::sys::fs::remove(tempPath);
    return llvm::createStringError(ec, "cannot rename " + tempPath + " to " +
                                           path + ": " + ec.message());
  }
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// TuningKey
//===----------------------------------------------------------------------===//

TuningKey TuningKey::forGemm(const GemmDesc &desc, const Target &target,
                             llvm::StringRef generatorVersion, int threads) {
  TuningKey key;
  key.desc = desc;
  key.dtype = precisionName(desc.precision).str();
  key.triple = target.triple;
  key.cpu = target.cpu;
  key.features = target.featureString();
  key.generatorVersion = generatorVersion.str();
  key.threads = threads;
  return key;
}

TuningKey TuningKey::forProblem(const KernelProblem &problem,
                                const Target &target,
                                llvm::StringRef generatorVersion, int threads) {
  TuningKey key = forGemm(problem.gemm(), target, generatorVersion, threads);
  key.op = problem.opName().str();
  if (const ConvDesc *conv = problem.conv())
    key.conv = *conv;
  return key;
}

std::string TuningKey::canonical() const {
  return llvm::formatv("op={0} dtype={1} semantics={2} m={3} n={4} k={5} "
                       "lda={6} ldb={7} ldc={8} trans_a={9} trans_b={10} "
                       "triple={11} cpu={12} features={13} "
                       "generator_version={14} threads={15}",
                       quote(op), quote(dtype), quote(semantics), desc.m,
                       desc.n, desc.k, desc.lda, desc.ldb, desc.ldc,
                       desc.transA ? 1 : 0, desc.transB ? 1 : 0, quote(triple),
                       quote(cpu), quote(features), quote(generatorVersion),
                       threads)
             .str() +
         (desc.runtimeLd ? " leading_dims=runtime" : "") +
         (desc.dynamicM ? " m=runtime" : "") +
         (desc.dynamicN ? " n=runtime" : "") +
         (desc.dynamicK ? " k=runtime" : "") +
         (conv ? " conv=" + quote(conv->str()) : std::string());
}

std::string TuningKey::hash() const { return sha256Hex(canonical()); }

//===----------------------------------------------------------------------===//
// Record <-> JSON
//===----------------------------------------------------------------------===//

/// Strings that are not UTF-8 would abort nlohmann's strict dump; store()
/// rejects them first, so the replacement only ever applies to callers of
/// recordToJson that did not check.
static std::string dumpJson(const ordered_json &value, int indent) {
  return value.dump(indent, ' ', /*ensure_ascii=*/false,
                    ordered_json::error_handler_t::replace);
}

static ordered_json recordToJsonValue(const TuningRecord &r) {
  ordered_json key = ordered_json::object();
  key["op"] = r.key.op;
  key["desc"] = ordered_json(toJson(r.key.desc));
  if (r.key.conv)
    key["conv"] = ordered_json(toJson(*r.key.conv));
  key["dtype"] = r.key.dtype;
  key["semantics"] = r.key.semantics;
  key["triple"] = r.key.triple;
  key["cpu"] = r.key.cpu;
  key["features"] = r.key.features;
  key["generator_version"] = r.key.generatorVersion;
  key["threads"] = r.key.threads;

  ordered_json j = ordered_json::object();
  j["format"] = kRecordFormat;
  j["version"] = kTuningFormatVersion;
  j["key"] = std::move(key);
  j["config"] = r.config.str();
  j["symbol"] = r.symbol;
  j["kernel_text"] = r.kernelText;
  j["kernel_sha256"] =
      r.kernelSha256.empty() ? sha256Hex(r.kernelText) : r.kernelSha256;
  j["workspace_bytes"] = r.workspaceBytes;
  j["median_gflops"] = r.medianGflops;
  j["spread"] = r.spread;
  j["fraction_of_peak"] = r.fractionOfPeak;
  j["peak_gflops"] = r.peakGflops;
  j["max_rel_error"] = r.maxRelError;
  j["validated"] = r.validated;
  j["trials"] = r.trials;
  j["source"] = r.source;
  if (!r.emitterSource.empty())
    j["emitter_source"] = r.emitterSource;
  j["timestamp"] = r.timestamp;
  return j;
}

std::string qimeng::recordToJson(const TuningRecord &record) {
  return dumpJson(recordToJsonValue(record), 2) + "\n";
}

static llvm::Expected<TuningRecord> recordFromJsonValue(const json &j) {
  if (!j.is_object())
    return llvm::createStringError("tuning record is not a JSON object");
  auto format = j.find("format");
  if (format == j.end() || !format->is_string() ||
      format->get<std::string>() != kRecordFormat)
    return llvm::createStringError(
        llvm::formatv("not a tuning record: field 'format' must be \"{0}\"",
                      kRecordFormat)
            .str());
  auto version = j.find("version");
  if (version == j.end() || !version->is_number_integer())
    return llvm::createStringError(
        "tuning record field 'version' must be an integer");
  if (version->get<int64_t>() != kTuningFormatVersion)
    return llvm::createStringError(
        llvm::formatv("tuning record version {0} is not supported (this "
                      "build reads {1})",
                      version->get<int64_t>(), kTuningFormatVersion)
            .str());

  TuningRecord r;
  auto keyIt = j.find("key");
  if (keyIt == j.end() || !keyIt->is_object())
    return llvm::createStringError(
        "tuning record field 'key' must be an object");
  JsonFieldReader key(*keyIt, "tuning record", "key.");
  if (llvm::Error err = key.string("op", r.key.op))
    return std::move(err);
  const json *desc = key.find("desc");
  if (!desc)
    return key.fail("desc", "an object");
  auto parsedDesc = gemmDescFromJson(*desc, "tuning record key.desc");
  if (!parsedDesc)
    return parsedDesc.takeError();
  r.key.desc = *parsedDesc;
  if (const json *conv = key.find("conv")) {
    auto parsedConv = convDescFromJson(*conv, "tuning record key.conv");
    if (!parsedConv)
      return parsedConv.takeError();
    r.key.conv = *parsedConv;
  }
  if ((r.key.op == "sconv2d") != r.key.conv.has_value())
    return llvm::createStringError("tuning record key: op '" + r.key.op +
                                   "' and the presence of key.conv disagree");
  if (llvm::Error err = key.string("dtype", r.key.dtype))
    return std::move(err);
  if (llvm::Error err = key.string("semantics", r.key.semantics))
    return std::move(err);
  if (llvm::Error err = key.string("triple", r.key.triple))
    return std::move(err);
  if (llvm::Error err = key.string("cpu", r.key.cpu))
    return std::move(err);
  if (llvm::Error err = key.string("features", r.key.features))
    return std::move(err);
  if (llvm::Error err = key.string("generator_version", r.key.generatorVersion))
    return std::move(err);
  if (llvm::Error err = key.integer("threads", r.key.threads))
    return std::move(err);

  JsonFieldReader top(j, "tuning record");
  std::string configText;
  if (llvm::Error err = top.string("config", configText))
    return std::move(err);
  auto config = GemmConfig::parse(configText, GemmConfig());
  if (!config)
    return llvm::createStringError("tuning record field 'config': " +
                                   llvm::toString(config.takeError()));
  r.config = *config;

  if (llvm::Error err = top.string("symbol", r.symbol))
    return std::move(err);
  if (llvm::Error err = top.string("kernel_text", r.kernelText))
    return std::move(err);
  if (llvm::Error err = top.string("kernel_sha256", r.kernelSha256))
    return std::move(err);
  if (llvm::Error err =
          top.unsignedInteger("workspace_bytes", r.workspaceBytes))
    return std::move(err);
  if (llvm::Error err = top.number("median_gflops", r.medianGflops))
    return std::move(err);
  if (llvm::Error err = top.number("spread", r.spread))
    return std::move(err);
  if (llvm::Error err = top.number("fraction_of_peak", r.fractionOfPeak))
    return std::move(err);
  if (llvm::Error err = top.number("peak_gflops", r.peakGflops))
    return std::move(err);
  if (llvm::Error err = top.number("max_rel_error", r.maxRelError))
    return std::move(err);
  if (llvm::Error err = top.boolean("validated", r.validated))
    return std::move(err);
  if (llvm::Error err = top.integer("trials", r.trials))
    return std::move(err);
  if (llvm::Error err = top.string("source", r.source))
    return std::move(err);
  if (top.find("emitter_source"))
    if (llvm::Error err = top.string("emitter_source", r.emitterSource))
      return std::move(err);
  if (llvm::Error err = top.string("timestamp", r.timestamp))
    return std::move(err);

  if (sha256Hex(r.kernelText) != r.kernelSha256)
    return llvm::createStringError("kernel text does not match its checksum");
  return r;
}

llvm::Expected<TuningRecord> qimeng::recordFromJson(llvm::StringRef text) {
  json j = json::parse(text.begin(), text.end(), nullptr,
                       /*allow_exceptions=*/false);
  if (j.is_discarded())
    return llvm::createStringError("tuning record is not valid JSON");
  return recordFromJsonValue(j);
}

/// What store() refuses to write because it would not read back.
static llvm::Error checkStorable(const TuningRecord &r) {
  for (auto [text, name] :
       {std::pair<const std::string *, const char *>{&r.key.op, "key.op"},
        {&r.key.dtype, "key.dtype"},
        {&r.key.semantics, "key.semantics"},
        {&r.key.triple, "key.triple"},
        {&r.key.cpu, "key.cpu"},
        {&r.key.features, "key.features"},
        {&r.key.generatorVersion, "key.generator_version"},
        {&r.symbol, "symbol"},
        {&r.kernelText, "kernel_text"},
        {&r.kernelSha256, "kernel_sha256"},
        {&r.source, "source"},
        {&r.emitterSource, "emitter_source"},
        {&r.timestamp, "timestamp"}}) {
    if (!llvm::json::isUTF8(*text))
      return llvm::createStringError(
          llvm::formatv("tuning record field '{0}' is not valid UTF-8", name)
              .str());
  }
  for (auto [value, name] :
       {std::pair<double, const char *>{r.medianGflops, "median_gflops"},
        {r.spread, "spread"},
        {r.fractionOfPeak, "fraction_of_peak"},
        {r.peakGflops, "peak_gflops"},
        {r.maxRelError, "max_rel_error"}}) {
    if (!std::isfinite(value))
      return llvm::createStringError(
          llvm::formatv("tuning record field '{0}' is not a finite number",
                        name)
              .str());
  }
  if (!r.kernelSha256.empty() && r.kernelSha256 != sha256Hex(r.kernelText))
    return llvm::createStringError("kernel text does not match its checksum");
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Cache directory
//===----------------------------------------------------------------------===//

std::string qimeng::resolveCacheDir(llvm::StringRef option) {
  if (!option.empty())
    return option.str();
  if (std::optional<std::string> dir =
          llvm::sys::Process::GetEnv("QIMENG_CACHE_DIR");
      dir && !dir->empty())
    return *dir;
  llvm::SmallString<256> path;
  if (std::optional<std::string> xdg =
          llvm::sys::Process::GetEnv("XDG_CACHE_HOME");
      xdg && !xdg->empty()) {
    path = *xdg;
    llvm::sys::path::append(path, "qimeng-tensorop");
    return std::string(path);
  }
  if (std::optional<std::string> home = llvm::sys::Process::GetEnv("HOME");
      home && !home->empty())
    path = *home;
  else if (!llvm::sys::path::home_directory(path))
    return "";
  llvm::sys::path::append(path, ".cache", "qimeng-tensorop");
  return std::string(path);
}

//===----------------------------------------------------------------------===//
// TuningDatabase
//===----------------------------------------------------------------------===//

/// <dir>/v1.
static std::string entryDirectory(llvm::StringRef dir) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, "v" + std::to_string(kTuningFormatVersion));
  return std::string(path);
}

static std::string entryPathForHash(llvm::StringRef dir, llvm::StringRef hash) {
  llvm::SmallString<256> path(entryDirectory(dir));
  llvm::sys::path::append(path, hash + ".json");
  return std::string(path);
}

static std::string ignoring(llvm::StringRef path, llvm::StringRef reason) {
  return ("tuning database: ignoring " + path + ": " + reason).str();
}

/// Names (without directory) of the entry files, sorted. Temporary files and
/// anything else that does not end in .json are skipped.
static std::vector<std::string>
entryFileNames(llvm::StringRef dir, std::vector<std::string> *warnings) {
  std::vector<std::string> names;
  std::string entries = entryDirectory(dir);
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(entries, ec), end; !ec && it != end;
       it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    if (name.ends_with(".json"))
      names.push_back(name.str());
  }
  if (ec && warnings)
    warnings->push_back("tuning database: cannot read " + entries + ": " +
                        ec.message());
  llvm::sort(names);
  return names;
}

llvm::Expected<TuningDatabase> TuningDatabase::open(llvm::StringRef dir) {
  if (dir.empty())
    return llvm::createStringError(
        "no tuning database directory: give one or set QIMENG_CACHE_DIR");
  std::string entries = entryDirectory(dir);
  if (std::error_code ec = llvm::sys::fs::create_directories(entries))
    return llvm::createStringError(ec,
                                   "cannot create tuning database directory " +
                                       entries + ": " + ec.message());
  if (!llvm::sys::fs::is_directory(entries))
    return llvm::createStringError("tuning database directory " + entries +
                                   " is not a directory");
  if (std::error_code ec =
          llvm::sys::fs::access(entries, llvm::sys::fs::AccessMode::Write))
    return llvm::createStringError(ec, "tuning database directory " + entries +
                                           " is not writable: " + ec.message());
  return TuningDatabase(dir.str());
}

/// <dir>/v1/<hash>.llm.jsonl beside <dir>/v1/<hash>.json.
static std::string transcriptPathFor(llvm::StringRef entry) {
  return (entry.drop_back(llvm::StringRef(".json").size()) + ".llm.jsonl")
      .str();
}

std::string TuningDatabase::entryPath(const TuningKey &key) const {
  return entryPathForHash(dir_, key.hash());
}

llvm::Expected<TuningRecord>
TuningDatabase::readEntry(llvm::StringRef hash) const {
  if (hash.size() != kHashDigits || !isLowerHex(hash))
    return llvm::createStringError("'" + hash +
                                   "' is not a 64-digit lower-case hex hash");
  std::string path = entryPathForHash(dir_, hash);
  auto text = readFile(path);
  if (!text)
    return text.takeError();
  auto record = recordFromJson(*text);
  if (!record)
    return llvm::createStringError(path + ": " +
                                   llvm::toString(record.takeError()));
  if (record->key.hash() != hash)
    return llvm::createStringError(
        path + ": the record's key does not match the file name");
  return record;
}

std::optional<TuningRecord>
TuningDatabase::lookup(const TuningKey &key,
                       std::vector<std::string> &warnings) const {
  std::string path = entryPath(key);
  bool missing = false;
  auto text = readFile(path, &missing);
  if (!text) {
    std::string reason = llvm::toString(text.takeError());
    if (!missing)
      warnings.push_back(ignoring(path, reason));
    return std::nullopt;
  }
  auto record = recordFromJson(*text);
  if (!record) {
    warnings.push_back(ignoring(path, llvm::toString(record.takeError())));
    return std::nullopt;
  }
  if (record->key.canonical() != key.canonical()) {
    warnings.push_back(
        ignoring(path, "the record's key does not match the requested key"));
    return std::nullopt;
  }
  return std::move(*record);
}

llvm::Error TuningDatabase::store(const TuningRecord &record) const {
  if (llvm::Error err = checkStorable(record))
    return err;
  return writeAtomically(entryPath(record.key), recordToJson(record));
}

std::vector<TuningRecord>
TuningDatabase::list(std::vector<std::string> &warnings) const {
  std::vector<TuningRecord> records;
  for (const std::string &name : entryFileNames(dir_, &warnings)) {
    llvm::StringRef hash = llvm::StringRef(name).drop_back(strlen(".json"));
    std::string path = entryPathForHash(dir_, hash);
    bool missing = false;
    auto text = readFile(path, &missing);
    if (!text) {
      // Removed since the directory was read: not a problem.
      std::string reason = llvm::toString(text.takeError());
      if (!missing)
        warnings.push_back(ignoring(path, reason));
      continue;
    }
    auto record = recordFromJson(*text);
    if (!record) {
      warnings.push_back(ignoring(path, llvm::toString(record.takeError())));
      continue;
    }
    if (record->key.hash() != hash) {
      warnings.push_back(
          ignoring(path, "the record's key does not match the file name"));
      continue;
    }
    records.push_back(std::move(*record));
  }
  return records;
}

llvm::Expected<std::string>
TuningDatabase::findHash(llvm::StringRef hashPrefix) const {
  std::string prefix = hashPrefix.lower();
  if (!isLowerHex(prefix))
    return llvm::createStringError("'" + hashPrefix +
                                   "' is not a hex hash prefix");
  if (prefix.size() < kMinPrefixDigits)
    return llvm::createStringError(
        llvm::formatv("'{0}' is too short: give at least {1} hex digits",
                      hashPrefix, kMinPrefixDigits)
            .str());
  std::vector<std::string> matches;
  for (const std::string &name : entryFileNames(dir_, nullptr))
    if (llvm::StringRef(name).starts_with(prefix))
      matches.push_back(name.substr(0, name.size() - strlen(".json")));
  if (matches.empty())
    return llvm::createStringError("no entry matches '" + hashPrefix + "'");
  if (matches.size() > 1)
    return llvm::createStringError(
        llvm::formatv("'{0}' matches {1} entries; give more digits", hashPrefix,
                      matches.size())
            .str());
  return matches.front();
}

llvm::Error TuningDatabase::remove(llvm::StringRef hashPrefix) const {
  auto hash = findHash(hashPrefix);
  if (!hash)
    return hash.takeError();
  std::string path = entryPathForHash(dir_, *hash);
  if (std::error_code ec = llvm::sys::fs::remove(path))
    return llvm::createStringError(ec, "cannot remove " + path + ": " +
                                           ec.message());
  // The entry's LLM transcript, if it has one, goes with it.
  llvm::sys::fs::remove(transcriptPathFor(path));
  return llvm::Error::success();
}

std::string TuningDatabase::transcriptPath(const TuningKey &key) const {
  return transcriptPathFor(entryPath(key));
}

llvm::Error TuningDatabase::storeTranscript(const TuningKey &key,
                                            llvm::StringRef text) const {
  return writeAtomically(transcriptPath(key), text);
}

llvm::Error TuningDatabase::exportTo(llvm::StringRef path,
                                     std::vector<std::string> &warnings) const {
  ordered_json records = ordered_json::array();
  for (const TuningRecord &record : list(warnings))
    records.push_back(recordToJsonValue(record));
  ordered_json document = ordered_json::object();
  document["format"] = kExportFormat;
  document["version"] = kTuningFormatVersion;
  document["records"] = std::move(records);
  return writeAtomically(path, dumpJson(document, 2) + "\n");
}

llvm::Expected<int>
TuningDatabase::importFrom(llvm::StringRef path,
                           std::vector<std::string> &warnings) const {
  auto text = readFile(path);
  if (!text)
    return text.takeError();
  json document = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded())
    return llvm::createStringError(path +
                                   " is not a tuning database export: not "
                                   "valid JSON");
  auto format = document.is_object() ? document.find("format") : document.end();
  if (!document.is_object() || format == document.end() ||
      !format->is_string() || format->get<std::string>() != kExportFormat)
    return llvm::createStringError(
        llvm::formatv("{0} is not a tuning database export: field 'format' "
                      "must be \"{1}\"",
                      path, kExportFormat)
            .str());
  auto version = document.find("version");
  if (version == document.end() || !version->is_number_integer())
    return llvm::createStringError(
        path + ": tuning export field 'version' must be an integer");
  if (version->get<int64_t>() != kTuningFormatVersion)
    return llvm::createStringError(
        llvm::formatv("{0}: tuning export version {1} is not supported (this "
                      "build reads {2})",
                      path, version->get<int64_t>(), kTuningFormatVersion)
            .str());
  auto records = document.find("records");
  if (records == document.end() || !records->is_array())
    return llvm::createStringError(
        path + ": tuning export field 'records' must be an array");

  int imported = 0;
  size_t index = 0;
  for (const json &element : *records) {
    ++index;
    auto record = recordFromJsonValue(element);
    if (!record) {
      warnings.push_back(llvm::formatv("tuning database: ignoring record {0} "
                                       "of {1}: {2}",
                                       index, path,
                                       llvm::toString(record.takeError()))
                             .str());
      continue;
    }
    if (llvm::Error err = store(*record))
      return std::move(err);
    ++imported;
  }
  return imported;
}

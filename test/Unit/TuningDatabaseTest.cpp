//===- TuningDatabaseTest.cpp - Tuned kernels on disk ---------------------===//
//
// Every test works in its own fresh temporary directory and removes it.
// Corrupt entries must be a miss and exactly one warning naming the file;
// concurrent writers (forked processes) must leave only complete entries.
//
//===----------------------------------------------------------------------===//
#include "qimeng/Tune/TuningDatabase.h"
#include "ErrorHelpers.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdlib>
#include <functional>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sys/wait.h>
#include <unistd.h>

using namespace qimeng;
using json = nlohmann::json;

namespace {

Target testTarget() {
  Target target;
  target.triple = "x86_64-unknown-linux-gnu";
  target.cpu = "znver3";
  target.features = {"fma", "avx2", "avx"};
  return target;
}

TuningKey testKey(int64_t m = 512) {
  return TuningKey::forGemm(GemmDesc::packed(m, 512, 256), testTarget(), "7",
                            /*threads=*/1);
}

TuningRecord testRecord(const TuningKey &key) {
  TuningRecord r;
  r.key = key;
  r.config.isa = VectorIsa::Avx2;
  r.config.mr = 4;
  r.config.nr = 24;
  r.config.kUnroll = 8;
  r.config.kc = 384;
  r.config.mc = 96;
  r.config.nc = 2016;
  r.config.prefetchA = 256;
  r.config.prefetchB = 512;
  r.symbol = "qm_sgemm_4x24_ku8_x86_64_avx2";
  r.kernelText = "\t.text\n\tvfmadd231ps %ymm0, %ymm1, %ymm2\n\tretq\n";
  r.kernelSha256 = sha256Hex(r.kernelText);
  r.workspaceBytes = 1234567;
  r.medianGflops = 101.25;
  r.spread = 1.0 / 3.0;
  r.fractionOfPeak = 0.6321;
  r.peakGflops = 160.1;
  r.maxRelError = 2.5e-7;
  r.validated = true;
  r.trials = 48;
  r.source = "mcts";
  r.timestamp = "2025-01-31T12:34:56Z";
  return r;
}

void expectSameRecord(const TuningRecord &a, const TuningRecord &b) {
  EXPECT_EQ(a.key.canonical(), b.key.canonical());
  EXPECT_EQ(a.key.op, b.key.op);
  EXPECT_EQ(a.key.desc, b.key.desc);
  EXPECT_EQ(a.key.dtype, b.key.dtype);
  EXPECT_EQ(a.key.semantics, b.key.semantics);
  EXPECT_EQ(a.key.triple, b.key.triple);
  EXPECT_EQ(a.key.cpu, b.key.cpu);
  EXPECT_EQ(a.key.features, b.key.features);
  EXPECT_EQ(a.key.generatorVersion, b.key.generatorVersion);
  EXPECT_EQ(a.key.threads, b.key.threads);
  EXPECT_EQ(a.config, b.config);
  EXPECT_EQ(a.symbol, b.symbol);
  EXPECT_EQ(a.kernelText, b.kernelText);
  EXPECT_EQ(a.kernelSha256, b.kernelSha256);
  EXPECT_EQ(a.workspaceBytes, b.workspaceBytes);
  EXPECT_EQ(a.medianGflops, b.medianGflops);
  EXPECT_EQ(a.spread, b.spread);
  EXPECT_EQ(a.fractionOfPeak, b.fractionOfPeak);
  EXPECT_EQ(a.peakGflops, b.peakGflops);
  EXPECT_EQ(a.maxRelError, b.maxRelError);
  EXPECT_EQ(a.validated, b.validated);
  EXPECT_EQ(a.trials, b.trials);
  EXPECT_EQ(a.source, b.source);
  EXPECT_EQ(a.emitterSource, b.emitterSource);
  EXPECT_EQ(a.timestamp, b.timestamp);
}

std::string readWholeFile(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return "";
  return (*buffer)->getBuffer().str();
}

bool writeWholeFile(llvm::StringRef path, llvm::StringRef contents) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return false;
  os << contents;
  os.close();
  bool ok = !os.has_error();
  os.clear_error();
  return ok;
}

/// Files in `dir` whose name ends with `suffix`.
std::vector<std::string> filesEndingWith(llvm::StringRef dir,
                                         llvm::StringRef suffix) {
  std::vector<std::string> names;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec))
    if (llvm::StringRef(it->path()).ends_with(suffix))
      names.push_back(llvm::sys::path::filename(it->path()).str());
  return names;
}

class TuningDatabaseTest : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> path;
    std::error_code ec =
        llvm::sys::fs::createUniqueDirectory("qimeng-tuningdb-test", path);
    ASSERT_FALSE(ec) << ec.message();
    root = std::string(path);
  }
  void TearDown() override {
    if (!root.empty())
      llvm::sys::fs::remove_directories(root);
  }

  /// A subdirectory of this test's temporary directory.
  std::string sub(llvm::StringRef name) const {
    llvm::SmallString<128> path(root);
    llvm::sys::path::append(path, name);
    return std::string(path);
  }

  std::string root;
};

//===----------------------------------------------------------------------===//
// Keys
//===----------------------------------------------------------------------===//

TEST_F(TuningDatabaseTest, ForGemmFillsTheTarget) {
  TuningKey key = testKey();
  EXPECT_EQ(key.op, "sgemm");
  EXPECT_EQ(key.dtype, "f32");
  EXPECT_EQ(key.semantics, "accumulate");
  EXPECT_EQ(key.triple, "x86_64-unknown-linux-gnu");
  EXPECT_EQ(key.cpu, "znver3");
  EXPECT_EQ(key.features, "+avx,+avx2,+fma");
  EXPECT_EQ(key.generatorVersion, "7");
  EXPECT_EQ(key.threads, 1);
  EXPECT_EQ(key.desc, GemmDesc::packed(512, 512, 256));
}

/// The same shape on bf16 operands is another key: dtype and the
/// descriptor say so, and the hashes differ.
TEST_F(TuningDatabaseTest, Bf16OperandsAreAnotherKey) {
  GemmDesc d = GemmDesc::packed(512, 512, 256);
  d.precision = GemmPrecision::Bf16;
  TuningKey bf16 = TuningKey::forGemm(d, testTarget(), "7", 1);
  EXPECT_EQ(bf16.dtype, "bf16");
  EXPECT_NE(bf16.hash(), TuningKey::forGemm(GemmDesc::packed(512, 512, 256),
                                            testTarget(), "7", 1)
                             .hash());
}

TEST_F(TuningDatabaseTest, CanonicalAndHashAreDeterministic) {
  TuningKey a = testKey(), b = testKey();
  EXPECT_EQ(a.canonical(), b.canonical());
  EXPECT_EQ(a.hash(), b.hash());
  EXPECT_EQ(a.hash(), sha256Hex(a.canonical()));
  EXPECT_EQ(a.hash().size(), 64u);
  EXPECT_EQ(a.hash().find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(a.canonical().find('\n'), std::string::npos);
  EXPECT_EQ(a.canonical(),
            "op=\"sgemm\" dtype=\"f32\" semantics=\"accumulate\" m=512 n=512 "
            "k=256 lda=256 ldb=512 ldc=512 trans_a=0 trans_b=0 "
            "triple=\"x86_64-unknown-linux-gnu\" cpu=\"znver3\" "
            "features=\"+avx,+avx2,+fma\" generator_version=\"7\" threads=1");
  // Known SHA-256 vector, so the hash is the standard one.
  EXPECT_EQ(sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // Quoting keeps field boundaries: moving text between fields changes it.
  TuningKey c = a, d = a;
  c.cpu = "x\" features=\"y";
  c.features = "";
  d.cpu = "x";
  d.features = "y";
  EXPECT_NE(c.canonical(), d.canonical());
}

//===----------------------------------------------------------------------===//
// Store and lookup
//===----------------------------------------------------------------------===//

TEST_F(TuningDatabaseTest, OpenCreatesTheVersionDirectory) {
  QM_ASSERT_EXPECTED(db, TuningDatabase::open(sub("db")));
  EXPECT_EQ(db.directory(), sub("db"));
  EXPECT_TRUE(llvm::sys::fs::is_directory(sub("db/v1")));
  EXPECT_EQ(db.entryPath(testKey()),
            sub("db/v1/" + testKey().hash() + ".json"));
}

TEST_F(TuningDatabaseTest, OpenFailsUnderARegularFile) {
  ASSERT_TRUE(writeWholeFile(sub("file"), "not a directory"));
  QM_ASSERT_FAILS_WITH(TuningDatabase::open(sub("file/db")).takeError(),
                       sub("file/db"));
  QM_ASSERT_FAILS_WITH(TuningDatabase::open("").takeError(),
                       "no tuning database directory");
}

TEST_F(TuningDatabaseTest, StoreThenLookupRoundTripsEveryField) {
  QM_ASSERT_EXPECTED(db, TuningDatabase::open(sub("db")));
  TuningRecord record = testRecord(testKey());
  QM_ASSERT_OK(db.store(record));
  std::vector<std::string> warnings;
  std::optional<TuningRecord> found = db.lookup(testKey(), warnings);
  ASSERT_TRUE(found.has_value());
  EXPECT_TRUE(warnings.empty());
  expectSameRecord(*found, record);
  // And through the JSON text alone.
  QM_ASSERT_EXPECTED(parsed, recordFromJson(recordToJson(record)));
  expectSameRecord(parsed, record);
  // An LLM-written emitter is kept with its kernel.
  record.source = "llm";
  record.emitterSource = "def emit(request):\n    return '...'\n";
  QM_ASSERT_OK(db.store(record));
  found = db.lookup(testKey(), warnings);
  ASSERT_TRUE(found.has_value());
  expectSameRecord(*found, record);
}

TEST_F(TuningDatabaseTest, EmptyChecksumIsFilledIn) {
  QM_ASSERT_EXPECTED(db, TuningDatabase::open(sub("db")));
  TuningRecord record = testRecord(testKey());
  record.kernelSha256.clear();
  QM_ASSERT_OK(db.store(record));
  std::vector<std::string> warnings;
  std::optional<TuningRecord> found = db.lookup(testKey(), warnings);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->kernelSha256, sha256Hex(record.kernelText));
}

TEST_F(TuningDatabaseTest, StoreRejectsWhatWouldNotReadBack) {
  QM_ASSERT_EXPECTED(db, TuningDatabase::open(sub("db")));
  TuningRecord bad = testRecord(testKey());
  bad.kernelSha256 = sha256Hex("something else");
  QM_ASSERT_FAILS_WITH(db.store(bad),
                       "kernel text does not match its checksum");
  bad = testRecord(testKey());
  bad.medianGflops = std::nan("");
  QM_ASSERT_FAILS_WITH(db.store(bad), "'median_gflops' is not a finite number");
  bad = testRecord(testKey());
  bad.kernelText = "\xff\xfe";
  bad.kernelSha256.clear();
  QM_ASSERT_FAILS_WITH(db.store(bad), "'kernel_text' is not valid UTF-8");
  EXPECT_TRUE(filesEndingWith(sub("db/v1"), "").empty());
}

TEST_F(TuningDatabaseTest, ChangingAnyKeyFieldMisses) {
  QM_ASSERT_EXPECTED(db, TuningDatabase::open(sub("db")));
  TuningKey base = testKey();
  QM_ASSERT_OK(db.store(testRecord(base)));
  std::vector<std::pair<const char *, std::function<void(TuningKey &)>>>
      changes = {
          {"m", [](TuningKey &k) { k.desc.m += 1; }},
          {"n", [](TuningKey &k) { k.desc.n += 1; }},
          {"k", [](TuningKey &k) { k.desc.k += 1; }},
          {"lda", [](TuningKey &k) { k.desc.lda += 1; }},
          {"ldb", [](TuningKey &k) { k.desc.ldb += 1; }},
          {"ldc", [](TuningKey &k) { k.desc.ldc += 1; }},
          {"transA", [](TuningKey &k) { k.desc.transA = true; }},
          {"transB", [](TuningKey &k) { k.desc.transB = true; }},
          {"triple", [](TuningKey &k) { k.triple = "x86_64-pc-linux-gnu"; }},
          {"cpu", [](TuningKey &k) { k.cpu = "znver4"; }},
          {"features", [](TuningKey &k) { k.features = "+avx,+avx2"; }},
          {"generatorVersion", [](TuningKey &k) { k.generatorVersion = "8"; }},
          {"threads", [](TuningKey &k) { k.threads = 2; }},
          {"op", [](TuningKey &k) { k.op = "dgemm"; }},
          {"dtype", [](TuningKey &k) { k.dtype = "f64"; }},
          {"semantics", [](TuningKey &k) { k.semantics = "overwrite"; }},
      };
  std::set<std::string> hashes = {base.hash()};
  for (auto &[name, change] : changes) {
    TuningKey key = base;
    change(key);
    EXPECT_NE(key.canonical(), base.canonical()) << name;
    hashes.insert(key.hash());
    std::vector<std::string> warnings;
    EXPECT_FALSE(db.lookup(key, warnings).has_value()) << name;
    EXPECT_TRUE(warnings.empty()) << name;
  }
  EXPECT_EQ(hashes.size(), changes.size() + 1);
  std::vector<std::string> warnings;
  EXPECT_TRUE(db.lookup(base, warnings).has_value());
}

TEST_F(TuningDatabaseTest, ConvolutionKeysHoldEveryConvAttribute) {
  QM_ASSERT_EXPECTED(db, TuningDatabase::open(sub("db")));
  Target target;
  target.triple = "x86_64-pc-linux-gnu";
  target.cpu = "znver3";
  ConvDesc conv =
      ConvDesc::dense(ConvLayout::NhwcHwcf, 1, 58, 58, 64, 64, 3, 3);
  TuningKey base = TuningKey::forProblem(conv, target, "1.1.0", 1);
  EXPECT_EQ(base.op, "sconv2d");
  EXPECT_EQ(base.desc, conv.gemmView());
  TuningRecord record = testRecord(base);
  QM_ASSERT_OK(db.store(record));
  std::vector<std::string> warnings;
  auto hit = db.lookup(base, warnings);
  ASSERT_TRUE(hit.has_value());
  ASSERT_TRUE(hit->key.conv.has_value());
  EXPECT_EQ(*hit->key.conv, conv);
  std::vector<std::pair<const char *, std::function<void(ConvDesc &)>>>
      changes = {
          {"layout", [](ConvDesc &c) { c.layout = ConvLayout::NchwFchw; }},
          {"n", [](ConvDesc &c) { c.n += 1; }},
          {"h", [](ConvDesc &c) { c.h += 1; }},
          {"w", [](ConvDesc &c) { c.w += 1; }},
          {"c", [](ConvDesc &c) { c.c += 1; }},
          {"f", [](ConvDesc &c) { c.f += 1; }},
          {"kh", [](ConvDesc &c) { c.kh += 1; }},
          {"kw", [](ConvDesc &c) { c.kw += 1; }},
          {"strideH", [](ConvDesc &c) { c.strideH += 1; }},
          {"strideW", [](ConvDesc &c) { c.strideW += 1; }},
          {"dilationH", [](ConvDesc &c) { c.dilationH += 1; }},
          {"dilationW", [](ConvDesc &c) { c.dilationW += 1; }},
          {"inputStrides", [](ConvDesc &c) { c.inputStrides[0] += 64; }},
          {"runtimeStrides", [](ConvDesc &c) { c.runtimeStrides = true; }},
      };
  std::set<std::string> hashes = {base.hash()};
  for (auto &[name, change] : changes) {
    ConvDesc other = conv;
    change(other);
    TuningKey key = base;
    key.conv = other;
    hashes.insert(key.hash());
    EXPECT_FALSE(db.lookup(key, warnings).has_value()) << name;
  }
  EXPECT_EQ(hashes.size(), changes.size() + 1);
  // The run-time-strides form is an entry of its own, read back as one.
  ConvDesc runtime = conv;
  runtime.runtimeStrides = true;
  TuningKey runtimeKey = TuningKey::forProblem(runtime, target, "1.1.0", 1);
  QM_ASSERT_OK(db.store(testRecord(runtimeKey)));
  auto runtimeHit = db.lookup(runtimeKey, warnings);
  ASSERT_TRUE(runtimeHit.has_value());
  ASSERT_TRUE(runtimeHit->key.conv.has_value());
  EXPECT_TRUE(runtimeHit->key.conv->runtimeStrides);
  EXPECT_TRUE(db.lookup(base, warnings).has_value());
  // A GEMM key with the conv's GEMM view is another entry.
  TuningKey gemm = base;
  gemm.op = "sgemm";
  gemm.conv.reset();
  EXPECT_NE(gemm.hash(), base.hash());
  EXPECT_FALSE(db.lookup(gemm, warnings).has_value());
  EXPECT_TRUE(warnings.empty());
}

TEST_F(TuningDatabaseTest, StoreReplacesTheEntry) {
  QM_ASSERT_EXPECTED(db, TuningDatabase::open(sub("db")));
  TuningRecord first = testRecord(testKey());
  QM_ASSERT_OK(db.store(first));
  TuningRecord second = first;
  second.medianGflops = 120.5;
  second.symbol = "qm_sgemm_6x16_ku4_x86_64_avx2";
  second.kernelText = "\tretq\n";
  second.kernelSha256 = sha256Hex(second.kernelText);
  QM_ASSERT_OK(db.store(second));
  std::vector<std::string> warnings;
  std::optional<TuningRecord> found = db.lookup(testKey(), warnings);
  ASSERT_TRUE(found.has_value());
  expectSameRecord(*found, second);
  EXPECT_EQ(db.list(warnings).size(), 1u);
  EXPECT_TRUE(warnings.empty());
  EXPECT_TRUE(filesEndingWith(sub("db/v1"), ".tmp").empty());
}

//===----------------------------------------------------------------------===//
// Corrupt entries: a miss and exactly one warning naming the file
//===----------------------------------------------------------------------===//

class CorruptEntryTest : public TuningDatabaseTest {
protected:
  /// Stores a valid entry, lets `corrupt` rewrite its file, then checks that
  /// lookup misses with one warning naming the file and containing `reason`.
  void
  expectIgnored(const std::function<std::string(const std::string &)> &corrupt,
                llvm::StringRef reason) {
    QM_ASSERT_EXPECTED(db, TuningDatabase::open(sub("db")));
    TuningKey key = testKey();
    QM_ASSERT_OK(db.store(testRecord(key)));
    std::string path = db.entryPath(key);
    ASSERT_TRUE(writeWholeFile(path, corrupt(readWholeFile(path))));

    std::vector<std::string> warnings;
    EXPECT_FALSE(db.lookup(key, warnings).has_value());
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("tuning database: ignoring " + path + ": "),
              std::string::npos)
        << warnings[0];
    EXPECT_NE(warnings[0].find(reason), std::string::npos) << warnings[0];

    warnings.clear();
    EXPECT_TRUE(db.list(warnings).empty());
    EXPECT_EQ(warnings.size(), 1u);
  }
};

TEST_F(CorruptEntryTest, TruncatedFile) {
  expectIgnored(
      [](const std::string &text) { return text.substr(0, text.size() / 2); },
      "not valid JSON");
}

TEST_F(CorruptEntryTest, GarbageBytes) {
  expectIgnored(
      [](const std::string &) {
        static const char bytes[] = "\x00\xff\xfe{\"format\":\x01\x02 garbage";
        return std::string(bytes, sizeof(bytes) - 1);
      },
      "not valid JSON");
}

TEST_F(CorruptEntryTest, EmptyFile) {
  expectIgnored([](const std::string &) { return std::string(); },
                "not valid JSON");
}

TEST_F(CorruptEntryTest, OtherFormatVersion) {
  expectIgnored(
      [](const std::string &text) {
        json j = json::parse(text, nullptr, false);
        j["version"] = 2;
        return j.dump(2);
      },
      "tuning record version 2 is not supported (this build reads 1)");
}

TEST_F(CorruptEntryTest, ChecksumMismatch) {
  expectIgnored(
      [](const std::string &text) {
        json j = json::parse(text, nullptr, false);
        j["kernel_text"] = "\tud2\n";
        return j.dump(2);
      },
      "kernel text does not match its checksum");
}

TEST_F(CorruptEntryTest, WrongFieldType) {
  expectIgnored(
      [](const std::string &text) {
        json j = json::parse(text, nullptr, false);
        j["median_gflops"] = "fast";
        return j.dump(2);
      },
      "field 'median_gflops' must be a number");
}

TEST_F(CorruptEntryTest, KeyMismatch) {
  // A valid record of another key copied to this key's file name.
  expectIgnored(
      [](const std::string &) { return recordToJson(testRecord(testKey(64))); },
      "key does not match");
}

TEST(TuningRecordJsonTest, ErrorsNameTheField) {
  json good = json::parse(recordToJson(testRecord(testKey())), nullptr, false);
  ASSERT_FALSE(good.is_discarded());
  EXPECT_EQ(good["format"], "qimeng-tuning-record");
  EXPECT_EQ(good["version"], 1);
  for (const char *field :
       {"config", "symbol", "kernel_text", "kernel_sha256", "workspace_bytes",
        "median_gflops", "spread", "fraction_of_peak", "peak_gflops",
        "max_rel_error", "validated", "trials", "source", "timestamp"}) {
    json j = good;
    j[field] = json::array();
    QM_ASSERT_FAILS_WITH(recordFromJson(j.dump()).takeError(),
                         "'" + std::string(field) + "'");
    j.erase(field);
    QM_ASSERT_FAILS_WITH(recordFromJson(j.dump()).takeError(),
                         "'" + std::string(field) + "'");
  }
  for (const char *field : {"op", "dtype", "semantics", "triple", "cpu",
                            "features", "generator_version", "threads"}) {
    json j = good;
    j["key"][field] = json::object();
    QM_ASSERT_FAILS_WITH(recordFromJson(j.dump()).takeError(),
                         "'key." + std::string(field) + "'");
  }
  json j = good;
  j["key"]["desc"]["lda"] = "wide";
  QM_ASSERT_FAILS_WITH(recordFromJson(j.dump()).takeError(), "'lda'");
  j = good;
  j["config"] = "mr=six";
  QM_ASSERT_FAILS_WITH(recordFromJson(j.dump()).takeError(),
                       "tuning record field 'config'");
  j = good;
  j["workspace_bytes"] = -1;
  QM_ASSERT_FAILS_WITH(recordFromJson(j.dump()).takeError(),
                       "'workspace_bytes' must be a non-negative integer");
  j = good;
  j["format"] = "something-else";
  QM_ASSERT_FAILS_WITH(recordFromJson(j.dump()).takeError(),
                       "not a tuning record");
  j = good;
  j["version"] = 0;
  QM_ASSERT_FAILS_WITH(recordFromJson(j.dump()).takeError(),
                       "tuning record version 0 is not supported (this build "
                       "reads 1)");
  QM_ASSERT_FAILS_WITH(recordFromJson("[1, 2]").takeError(),
                       "not a JSON object");
}

//===----------------------------------------------------------------------===//
// List, remove, export, import
//===----------------------------------------------------------------------===//

TEST_F(TuningDatabaseTest, ListIsSortedAndIgnoresTemporaryFiles) {
  QM_ASSERT_EXPECTED(db, TuningDatabase::open(sub("db")));
  for (int64_t m : {16, 32, 48})
    QM_ASSERT_OK(db.store(testRecord(testKey(m))));
  std::string hash = testKey(16).hash();
  // A writer that died between create and rename leaves one of these.
  ASSERT_TRUE(
      writeWholeFile(sub("db/v1/" + hash + "-abcd1234.tmp"), "{\"half\": "));
  ASSERT_TRUE(writeWholeFile(sub("db/v1/README"), "not an entry"));
  std::vector<std::string> warnings;
  std::vector<TuningRecord> records = db.list(warnings);
  EXPECT_TRUE(warnings.empty());
  ASSERT_EQ(records.size(), 3u);
  EXPECT_LT(records[0].key.hash(), records[1].key.hash());
  EXPECT_LT(records[1].key.hash(), records[2].key.hash());
}

TEST_F(TuningDatabaseTest, RemoveByPrefix) {
  QM_ASSERT_EXPECTED(db, TuningDatabase::open(sub("db")));
  TuningKey keep = testKey(16), drop = testKey(32);
  QM_ASSERT_OK(db.store(testRecord(keep)));
  QM_ASSERT_OK(db.store(testRecord(drop)));

  QM_ASSERT_FAILS_WITH(db.remove(drop.hash().substr(0, 7)),
                       "give at least 8 hex digits");
  QM_ASSERT_FAILS_WITH(db.remove("xyz12345"), "not a hex hash prefix");
  // A prefix neither entry has.
  std::string absent = "00000000";
  while (llvm::StringRef(keep.hash()).starts_with(absent) ||
         llvm::StringRef(drop.hash()).starts_with(absent))
    absent[0]++;
  QM_ASSERT_FAILS_WITH(db.remove(absent), "no entry matches '" + absent + "'");

  QM_ASSERT_EXPECTED(found, db.findHash(drop.hash().substr(0, 8)));
  EXPECT_EQ(found, drop.hash());
  QM_ASSERT_OK(db.remove(llvm::StringRef(drop.hash()).upper().substr(0, 10)));
  std::vector<std::string> warnings;
  EXPECT_FALSE(db.lookup(drop, warnings).has_value());
  EXPECT_TRUE(db.lookup(keep, warnings).has_value());
  EXPECT_TRUE(warnings.empty());
  QM_ASSERT_FAILS_WITH(db.remove(drop.hash()), "no entry matches");
}

TEST_F(TuningDatabaseTest, RemoveCanDeleteACorruptEntry) {
  QM_ASSERT_EXPECTED(db, TuningDatabase::open(sub("db")));
  TuningKey key = testKey();
  ASSERT_TRUE(writeWholeFile(db.entryPath(key), "garbage"));
  QM_ASSERT_FAILS_WITH(db.readEntry(key.hash()).takeError(), "not valid JSON");
  QM_ASSERT_OK(db.remove(key.hash().substr(0, 8)));
  EXPECT_FALSE(llvm::sys::fs::exists(db.entryPath(key)));
}

TEST_F(TuningDatabaseTest, ExportThenImportGivesTheSameRecords) {
  QM_ASSERT_EXPECTED(from, TuningDatabase::open(sub("from")));
  for (int64_t m : {16, 32, 48, 64})
    QM_ASSERT_OK(from.store(testRecord(testKey(m))));
  // An invalid entry is left out of the export with a warning.
  ASSERT_TRUE(writeWholeFile(from.entryPath(testKey(80)), "{"));
  std::vector<std::string> warnings;
  QM_ASSERT_OK(from.exportTo(sub("export.json"), warnings));
  EXPECT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(filesEndingWith(root, ".tmp").empty());

  json document =
      json::parse(readWholeFile(sub("export.json")), nullptr, false);
  ASSERT_TRUE(document.is_object());
  EXPECT_EQ(document["format"], "qimeng-tuning-export");
  EXPECT_EQ(document["version"], 1);
  ASSERT_TRUE(document["records"].is_array());
  EXPECT_EQ(document["records"].size(), 4u);

  QM_ASSERT_EXPECTED(to, TuningDatabase::open(sub("to")));
  warnings.clear();
  QM_ASSERT_EXPECTED(count, to.importFrom(sub("export.json"), warnings));
  EXPECT_EQ(count, 4);
  EXPECT_TRUE(warnings.empty());
  std::vector<TuningRecord> original = from.list(warnings);
  warnings.clear();
  std::vector<TuningRecord> imported = to.list(warnings);
  EXPECT_TRUE(warnings.empty());
  ASSERT_EQ(imported.size(), original.size());
  for (size_t i = 0; i < imported.size(); ++i)
    expectSameRecord(imported[i], original[i]);
}

TEST_F(TuningDatabaseTest, ImportSkipsInvalidRecordsWithAWarning) {
  json good = json::parse(recordToJson(testRecord(testKey())), nullptr, false);
  json bad = good;
  bad["kernel_text"] = "tampered";
  json document = {{"format", "qimeng-tuning-export"},
                   {"version", 1},
                   {"records", {bad, good, 42}}};
  ASSERT_TRUE(writeWholeFile(sub("export.json"), document.dump()));
  QM_ASSERT_EXPECTED(db, TuningDatabase::open(sub("db")));
  std::vector<std::string> warnings;
  QM_ASSERT_EXPECTED(count, db.importFrom(sub("export.json"), warnings));
  EXPECT_EQ(count, 1);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("record 1 of " + sub("export.json")),
            std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[0].find("checksum"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[1].find("record 3"), std::string::npos) << warnings[1];
}

TEST_F(TuningDatabaseTest, ImportOfANonExportFileIsAnError) {
  QM_ASSERT_EXPECTED(db, TuningDatabase::open(sub("db")));
  QM_ASSERT_OK(db.store(testRecord(testKey())));
  std::vector<std::string> warnings;
  // An entry file is a record, not an export document.
  QM_ASSERT_FAILS_WITH(
      db.importFrom(db.entryPath(testKey()), warnings).takeError(),
      "is not a tuning database export");
  ASSERT_TRUE(writeWholeFile(sub("garbage.json"), "\x01\x02 not json"));
  QM_ASSERT_FAILS_WITH(db.importFrom(sub("garbage.json"), warnings).takeError(),
                       "is not a tuning database export");
  ASSERT_TRUE(writeWholeFile(
      sub("v2.json"),
      R"({"format": "qimeng-tuning-export", "version": 2, "records": []})"));
  QM_ASSERT_FAILS_WITH(db.importFrom(sub("v2.json"), warnings).takeError(),
                       "tuning export version 2 is not supported");
  QM_ASSERT_FAILS_WITH(db.importFrom(sub("missing.json"), warnings).takeError(),
                       sub("missing.json"));
  EXPECT_TRUE(warnings.empty());
}

//===----------------------------------------------------------------------===//
// Cache directory
//===----------------------------------------------------------------------===//

/// Saves an environment variable and restores it on destruction.
class SavedEnv {
public:
  explicit SavedEnv(const char *name) : name(name) {
    if (const char *value = std::getenv(name))
      saved = value;
  }
  ~SavedEnv() {
    if (saved)
      setenv(name, saved->c_str(), 1);
    else
      unsetenv(name);
  }

private:
  const char *name;
  std::optional<std::string> saved;
};

TEST(ResolveCacheDirTest, Precedence) {
  SavedEnv savedCache("QIMENG_CACHE_DIR"), savedXdg("XDG_CACHE_HOME"),
      savedHome("HOME");
  setenv("QIMENG_CACHE_DIR", "/env/qimeng", 1);
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(resolveCacheDir("/option/dir"), "/option/dir");
  EXPECT_EQ(resolveCacheDir(""), "/env/qimeng");

  setenv("QIMENG_CACHE_DIR", "", 1); // set but empty: ignored
  EXPECT_EQ(resolveCacheDir(""), "/xdg/qimeng-tensorop");
  unsetenv("QIMENG_CACHE_DIR");
  EXPECT_EQ(resolveCacheDir(""), "/xdg/qimeng-tensorop");

  unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(resolveCacheDir(""), "/home/someone/.cache/qimeng-tensorop");
  EXPECT_EQ(resolveCacheDir("rel/dir"), "rel/dir");
}

//===----------------------------------------------------------------------===//
// Concurrent writers
//===----------------------------------------------------------------------===//

constexpr int kWriters = 4;
constexpr int kRecordsPerWriter = 50;
constexpr int kSharedKeys = 25; // records 0..24 of every writer collide

TuningKey concurrentKey(int writer, int index) {
  int64_t m = index < kSharedKeys ? 8 + index : 1000 + writer * 100 + index;
  return testKey(m);
}

/// Large enough (about 32 KiB) that a torn write would be visible.
TuningRecord concurrentRecord(int writer, int index) {
  TuningRecord r = testRecord(concurrentKey(writer, index));
  r.symbol = llvm::formatv("writer{0}_{1}", writer, index).str();
  std::string line =
      llvm::formatv("\t# writer {0} record {1}\n\tvaddps %ymm0, %ymm1, %ymm2\n",
                    writer, index)
          .str();
  r.kernelText.clear();
  while (r.kernelText.size() < 32 * 1024)
    r.kernelText += line;
  r.kernelSha256 = sha256Hex(r.kernelText);
  r.medianGflops = writer * 1000 + index;
  return r;
}

/// A record found for (writer, index)'s key must come from some writer that
/// stored that key, and match what that writer wrote.
bool plausible(const TuningRecord &r, int index) {
  for (int writer = 0; writer < kWriters; ++writer) {
    if (r.symbol != llvm::formatv("writer{0}_{1}", writer, index).str())
      continue;
    TuningRecord expected = concurrentRecord(writer, index);
    return r.kernelText == expected.kernelText &&
           r.key.canonical() == expected.key.canonical() &&
           r.medianGflops == expected.medianGflops;
  }
  return false;
}

/// Looks up every key once; false on a warning or an implausible record.
bool lookupAll(const TuningDatabase &db) {
  for (int writer = 0; writer < kWriters; ++writer) {
    for (int index = 0; index < kRecordsPerWriter; ++index) {
      if (index < kSharedKeys && writer > 0)
        continue;
      std::vector<std::string> warnings;
      std::optional<TuningRecord> r =
          db.lookup(concurrentKey(writer, index), warnings);
      if (!warnings.empty() || (r && !plausible(*r, index)))
        return false;
    }
  }
  return true;
}

/// Runs in a forked child: stores its records, looking up as it goes.
/// Never returns into GoogleTest.
[[noreturn]] void runWriter(const std::string &dir, int writer) {
  auto db = TuningDatabase::open(dir);
  if (!db) {
    llvm::consumeError(db.takeError());
    _exit(10);
  }
  for (int index = 0; index < kRecordsPerWriter; ++index) {
    if (llvm::Error err = db->store(concurrentRecord(writer, index))) {
      llvm::consumeError(std::move(err));
      _exit(11);
    }
    std::vector<std::string> warnings;
    std::optional<TuningRecord> r =
        db->lookup(concurrentKey(writer, index), warnings);
    if (!warnings.empty())
      _exit(12);
    if (!r || !plausible(*r, index))
      _exit(13);
    if (index % 10 == 0 && !lookupAll(*db))
      _exit(14);
  }
  _exit(0);
}

TEST_F(TuningDatabaseTest, ConcurrentWritersLeaveOnlyCompleteEntries) {
  std::string dir = sub("db");
  QM_ASSERT_EXPECTED(db, TuningDatabase::open(dir));

  std::vector<pid_t> children;
  for (int writer = 0; writer < kWriters; ++writer) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0) << "fork failed";
    if (pid == 0)
      runWriter(dir, writer);
    children.push_back(pid);
  }

  // Read while they write: every lookup is a clean miss or a whole record.
  int parentRounds = 0;
  bool parentOk = true;
  std::vector<int> statuses(children.size(), -1);
  for (size_t running = children.size(); running > 0;) {
    parentOk = lookupAll(db) && parentOk;
    ++parentRounds;
    for (size_t i = 0; i < children.size(); ++i) {
      if (statuses[i] != -1)
        continue;
      int status = 0;
      pid_t done = waitpid(children[i], &status, WNOHANG);
      if (done == 0)
        continue;
      statuses[i] = done == children[i] ? status : 255 << 8;
      --running;
    }
  }
  // Exit codes of runWriter: 10 open, 11 store, 12 warning, 13 own record
  // missing or wrong, 14 another lookup saw a warning or a wrong record.
  for (size_t i = 0; i < children.size(); ++i) {
    EXPECT_TRUE(WIFEXITED(statuses[i])) << "writer " << i << " was killed";
    if (WIFEXITED(statuses[i])) {
      EXPECT_EQ(WEXITSTATUS(statuses[i]), 0) << "writer " << i;
    }
  }
  EXPECT_TRUE(parentOk);
  EXPECT_GT(parentRounds, 0);

  // Every entry file parses, every key hits, nothing is left behind.
  std::string entries = sub("db/v1");
  EXPECT_TRUE(filesEndingWith(entries, ".tmp").empty());
  std::vector<std::string> files = filesEndingWith(entries, ".json");
  EXPECT_EQ(files.size(),
            static_cast<size_t>(kSharedKeys +
                                kWriters * (kRecordsPerWriter - kSharedKeys)));
  for (const std::string &name : files) {
    auto record = recordFromJson(readWholeFile(entries + "/" + name));
    EXPECT_TRUE(static_cast<bool>(record)) << name;
    if (!record)
      llvm::consumeError(record.takeError());
  }
  for (int writer = 0; writer < kWriters; ++writer) {
    for (int index = 0; index < kRecordsPerWriter; ++index) {
      std::vector<std::string> warnings;
      std::optional<TuningRecord> r =
          db.lookup(concurrentKey(writer, index), warnings);
      ASSERT_TRUE(r.has_value()) << writer << " " << index;
      EXPECT_TRUE(warnings.empty());
      EXPECT_TRUE(plausible(*r, index)) << r->symbol;
      if (index >= kSharedKeys) {
        EXPECT_EQ(r->symbol,
                  llvm::formatv("writer{0}_{1}", writer, index).str());
      }
    }
  }
  std::vector<std::string> warnings;
  EXPECT_EQ(db.list(warnings).size(), files.size());
  EXPECT_TRUE(warnings.empty());
}

} // namespace

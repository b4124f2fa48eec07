//===- EmitterRunnerTest.cpp - The emitter protocol from C++ --------------===//
//
// Runs the real Python emitters (EmitterOptions::defaults()) and checks the
// protocol's errors and the header and body of what comes back.
//
//===----------------------------------------------------------------------===//
#include "qimeng/Emit/EmitterRunner.h"
#include "ErrorHelpers.h"
#include "qimeng/Kernel/KernelConfig.h"
#include "qimeng/Kernel/KernelDesc.h"
#include "qimeng/Kernel/KernelJson.h"
#include "llvm/ADT/StringRef.h"
#include <algorithm>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace qimeng;

namespace {

GemmConfig avx2Config() {
  GemmConfig c;
  c.isa = VectorIsa::Avx2;
  c.mr = 6;
  c.nr = 16;
  c.kUnroll = 4;
  c.kc = 16;
  c.mc = 12;
  c.nc = 32;
  return c;
}

GemmConfig avx512Config() {
  GemmConfig c;
  c.isa = VectorIsa::Avx512;
  c.mr = 12;
  c.nr = 32;
  c.kUnroll = 4;
  c.kc = 16;
  c.mc = 24;
  c.nc = 64;
  return c;
}

/// A valid request as a JSON object, to be edited into an invalid one.
nlohmann::json validRequest() {
  nlohmann::json r = nlohmann::json::parse(
      gemmRequestJson(GemmDesc::packed(7, 5, 3), avx2Config()), nullptr,
      /*allow_exceptions=*/false);
  EXPECT_FALSE(r.is_discarded());
  return r;
}

std::string failureOf(const nlohmann::json &request) {
  auto result = runEmitter(request.dump(), EmitterOptions::defaults());
  if (result) {
    ADD_FAILURE() << "emitter accepted " << request.dump();
    return "";
  }
  return llvm::toString(result.takeError());
}

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

TEST(EmitterRunnerTest, DefaultsNameAPythonAndAPackage) {
  EmitterOptions o = EmitterOptions::defaults();
  EXPECT_FALSE(o.python.empty());
  EXPECT_FALSE(o.packageDir.empty());
  EXPECT_GT(o.timeoutSeconds, 0u);
  EXPECT_GT(o.outputCap, 0u);
}

TEST(EmitterRunnerTest, RequestJsonCarriesTheFields) {
  GemmDesc d = GemmDesc::packed(7, 5, 3, true, false);
  d.ldc = 9;
  nlohmann::json r = nlohmann::json::parse(
      gemmRequestJson(d, avx2Config(), "drop-k"), nullptr, false);
  ASSERT_FALSE(r.is_discarded());
  EXPECT_EQ(r["version"], 1);
  EXPECT_EQ(r["kind"], "sgemm");
  EXPECT_EQ(r["isa"], "avx2");
  EXPECT_EQ(r["m"], 7);
  EXPECT_EQ(r["n"], 5);
  EXPECT_EQ(r["k"], 3);
  EXPECT_EQ(r["lda"], 7);
  EXPECT_EQ(r["ldb"], 5);
  EXPECT_EQ(r["ldc"], 9);
  EXPECT_EQ(r["trans_a"], true);
  EXPECT_EQ(r["trans_b"], false);
  EXPECT_EQ(r["mr"], 6);
  EXPECT_EQ(r["nr"], 16);
  EXPECT_EQ(r["k_unroll"], 4);
  EXPECT_EQ(r["kc"], 16);
  EXPECT_EQ(r["mc"], 12);
  EXPECT_EQ(r["nc"], 32);
  EXPECT_EQ(r["prefetch_a"], 0);
  EXPECT_EQ(r["prefetch_b"], 0);
  EXPECT_EQ(r["fault"], "drop-k");
  // No fault field for a real kernel.
  nlohmann::json real =
      nlohmann::json::parse(gemmRequestJson(d, avx2Config()), nullptr, false);
  ASSERT_FALSE(real.is_discarded());
  EXPECT_FALSE(real.contains("fault"));
}

/// A sketch-driven ISA's K blocks and copied B reach its emitter where they
/// change the kernel: kc below a static K, pack_b for B as stored; a run-time
/// K runs whole and in place, a transposed B is packed anyway. The emitter
/// then names both in the symbol.
TEST(EmitterRunnerTest, SketchRequestsCarryKBlocksAndACopiedB) {
  GemmDesc d = GemmDesc::packed(19, 23, 40);
  d.runtimeLd = true;
  GemmConfig c;
  c.isa = VectorIsa::Neon;
  c.mr = 7;
  c.nr = 12;
  c.kc = 16;
  c.packB = BPacking::Panels;
  auto fields = [&](const GemmDesc &desc, const GemmConfig &config) {
    return nlohmann::json::parse(gemmRequestJson(desc, config), nullptr, false);
  };
  nlohmann::json r = fields(d, c);
  EXPECT_EQ(r["kc"], 16);
  EXPECT_EQ(r["pack_b"], true);
  QM_ASSERT_EXPECTED(kernel, runEmitter(r.dump(), EmitterOptions::defaults()));
  EXPECT_NE(kernel.symbol.find("_ku4_kc16_pb_aarch64_neon"), std::string::npos)
      << kernel.symbol;
  GemmConfig whole = c;
  whole.kc = 40;
  whole.packB = BPacking::InPlace;
  r = fields(d, whole);
  EXPECT_FALSE(r.contains("kc"));
  EXPECT_FALSE(r.contains("pack_b"));
  GemmDesc transposed = d;
  transposed.transB = true;
  transposed.ldb = 40;
  r = fields(transposed, c);
  EXPECT_EQ(r["kc"], 16);
  EXPECT_FALSE(r.contains("pack_b"));
  GemmDesc runtimeK = d;
  runtimeK.dynamicK = true;
  r = fields(runtimeK, c);
  EXPECT_FALSE(r.contains("kc"));
  EXPECT_FALSE(r.contains("pack_b"));
}

/// A bf16 output reaches the emitter as `bf16_output` with its `ldd` (none
/// in the runtime form, which reads it from the header), and the
/// descriptor survives its JSON (what the runner is sent) with both.
TEST(EmitterRunnerTest, Bf16OutputFieldsTravel) {
  GemmDesc d = GemmDesc::packed(7, 5, 3);
  d.precision = GemmPrecision::Bf16;
  d.overwrite = true;
  d.halfOutput = true;
  d.ldd = 11;
  nlohmann::json r =
      nlohmann::json::parse(gemmRequestJson(d, avx2Config()), nullptr, false);
  ASSERT_FALSE(r.is_discarded());
  EXPECT_EQ(r["kind"], "sbgemm");
  EXPECT_EQ(r["bf16_output"], true);
  EXPECT_EQ(r["ldd"], 11);
  auto back = gemmDescFromJson(toJson(d), "test");
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(*back, d);
  EXPECT_NE(d.str().find("_ldd11_nn_b0_obf16"), std::string::npos) << d.str();
  d.runtimeLd = true;
  r = nlohmann::json::parse(gemmRequestJson(d, avx2Config()), nullptr, false);
  EXPECT_EQ(r["bf16_output"], true);
  EXPECT_FALSE(r.contains("ldd"));
  EXPECT_FALSE(r.contains("ldc"));
  // Only bf16 operands take one.
  d.precision = GemmPrecision::F32;
  llvm::Error err = d.verify();
  EXPECT_TRUE(bool(err));
  llvm::consumeError(std::move(err));
}

/// A smooth activation travels by name, to the emitter and through the
/// descriptor's JSON; an unknown name is refused.
TEST(EmitterRunnerTest, SmoothActivationTravels) {
  GemmDesc d = GemmDesc::packed(7, 5, 3);
  d.activation.smooth = Activation::Smooth::Silu;
  nlohmann::json r =
      nlohmann::json::parse(gemmRequestJson(d, avx2Config()), nullptr, false);
  ASSERT_FALSE(r.is_discarded());
  EXPECT_EQ(r["activation"], "silu");
  auto back = gemmDescFromJson(toJson(d), "test");
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(*back, d);
  nlohmann::json wrong = toJson(d);
  wrong["activation"] = "swish";
  auto refused = gemmDescFromJson(wrong, "test");
  ASSERT_FALSE(bool(refused));
  EXPECT_NE(llvm::toString(refused.takeError())
                .find("sigmoid, silu, gelu_tanh or gelu_erf"),
            std::string::npos);
}

TEST(EmitterRunnerTest, DotConvolutionFieldsTravel) {
  // A bf16 convolution is an sbconv2d request with a boolean bias; an 8-bit
  // one an iconv2d with its input's signedness; the type travels through
  // the JSON the runner and the tuning database read.
  ConvDesc d = ConvDesc::dense(ConvLayout::NhwcHwcf, 1, 9, 9, 8, 16, 3, 3);
  d.precision = GemmPrecision::Bf16;
  d.bias = true;
  nlohmann::json r =
      nlohmann::json::parse(convRequestJson(d, avx2Config()), nullptr, false);
  ASSERT_FALSE(r.is_discarded());
  EXPECT_EQ(r["kind"], "sbconv2d");
  EXPECT_EQ(r["bias"], true);
  EXPECT_FALSE(r.contains("dtype"));
  auto back = convDescFromJson(toJson(d), "test");
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->precision, GemmPrecision::Bf16);
  EXPECT_EQ(*back, d);
  d.precision = GemmPrecision::U8S8;
  d.bias = false;
  r = nlohmann::json::parse(convRequestJson(d, avx2Config()), nullptr, false);
  EXPECT_EQ(r["kind"], "iconv2d");
  EXPECT_EQ(r["a_type"], "u8");
  EXPECT_EQ(d.str().rfind("u8s8conv2d_nhwc_hwcf_", 0), 0u) << d.str();
}

TEST(EmitterRunnerTest, ChannelSliceOutputTravels) {
  // An nhwc output whose pixels lie 24 elements apart: the request says so,
  // the key names it, the JSON brings it back; a dense one says nothing.
  ConvDesc d = ConvDesc::dense(ConvLayout::NhwcHwcf, 1, 9, 9, 8, 16, 3, 3);
  nlohmann::json dense =
      nlohmann::json::parse(convRequestJson(d, avx2Config()), nullptr, false);
  EXPECT_FALSE(dense.contains("output_pixel_stride"));
  d.outputPixelStride = 24;
  nlohmann::json r =
      nlohmann::json::parse(convRequestJson(d, avx2Config()), nullptr, false);
  EXPECT_EQ(r["output_pixel_stride"], 24);
  EXPECT_NE(d.str().find("_d1x1_is"), std::string::npos);
  EXPECT_NE(d.str().find("_ldo24"), std::string::npos) << d.str();
  auto back = convDescFromJson(toJson(d), "test");
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->outputPixelStride, 24);
  EXPECT_EQ(*back, d);
  QM_ASSERT_EXPECTED(
      kernel, emitConvKernel(d, avx2Config(), EmitterOptions::defaults()));
  EXPECT_NE(kernel.symbol.find("_d1x1_ldo24_"), std::string::npos)
      << kernel.symbol;
}

//===----------------------------------------------------------------------===//
// Protocol errors
//===----------------------------------------------------------------------===//

TEST(EmitterRunnerTest, NotJson) {
  QM_ASSERT_FAILS_WITH(
      runEmitter("{this is not json", EmitterOptions::defaults()).takeError(),
      "not valid JSON");
}

TEST(EmitterRunnerTest, NotAnObject) {
  QM_ASSERT_FAILS_WITH(
      runEmitter("[1, 2, 3]", EmitterOptions::defaults()).takeError(),
      "request must be a JSON object");
}

TEST(EmitterRunnerTest, FailureReportsExitStatus) {
  QM_ASSERT_FAILS_WITH(
      runEmitter("nope", EmitterOptions::defaults()).takeError(),
      "emitter failed (exit 1): request is not valid JSON");
}

TEST(EmitterRunnerTest, WrongVersion) {
  nlohmann::json r = validRequest();
  r["version"] = 2;
  std::string msg = failureOf(r);
  EXPECT_NE(msg.find("unsupported request version 2"), std::string::npos)
      << msg;
  r.erase("version");
  msg = failureOf(r);
  EXPECT_NE(msg.find("unsupported request version"), std::string::npos) << msg;
}

TEST(EmitterRunnerTest, UnknownKind) {
  nlohmann::json r = validRequest();
  r["kind"] = "dgemm";
  std::string msg = failureOf(r);
  EXPECT_NE(msg.find("unknown kernel kind 'dgemm'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("sgemm"), std::string::npos) << msg;
}

TEST(EmitterRunnerTest, UnknownIsa) {
  nlohmann::json r = validRequest();
  r["isa"] = "sse2";
  std::string msg = failureOf(r);
  EXPECT_NE(msg.find("unknown isa 'sse2'"), std::string::npos) << msg;
}

TEST(EmitterRunnerTest, NrNotAMultipleOfLanes) {
  nlohmann::json r = validRequest();
  r["nr"] = 12;
  std::string msg = failureOf(r);
  EXPECT_NE(msg.find("nr = 12 must be a multiple of 8"), std::string::npos)
      << msg;
  nlohmann::json z = nlohmann::json::parse(
      gemmRequestJson(GemmDesc::packed(7, 5, 3), avx512Config()), nullptr,
      false);
  z["nr"] = 24;
  msg = failureOf(z);
  EXPECT_NE(msg.find("nr = 24 must be a multiple of 16"), std::string::npos)
      << msg;
}

TEST(EmitterRunnerTest, RegisterBlockDoesNotFit) {
  nlohmann::json r = validRequest();
  r["mr"] = 8;
  r["mc"] = 16;
  std::string msg = failureOf(r);
  // 8 x 2 accumulators + 2 B vectors + 1 broadcast = 19 > 16.
  EXPECT_NE(msg.find("needs 19 vector registers"), std::string::npos) << msg;
  EXPECT_NE(msg.find("vector registers"), std::string::npos) << msg;
}

TEST(EmitterRunnerTest, UnknownField) {
  nlohmann::json r = validRequest();
  r["bogus"] = 1;
  std::string msg = failureOf(r);
  EXPECT_NE(msg.find("unknown field(s): bogus"), std::string::npos) << msg;
}

TEST(EmitterRunnerTest, BadFieldValues) {
  nlohmann::json r = validRequest();
  r["k_unroll"] = 3;
  std::string msg = failureOf(r);
  EXPECT_NE(msg.find("k_unroll must be 1, 2, 4, 8 or 16"), std::string::npos)
      << msg;
  r = validRequest();
  r["mc"] = 10;
  msg = failureOf(r);
  EXPECT_NE(msg.find("mc = 10 must be a multiple of mr = 6"), std::string::npos)
      << msg;
  r = validRequest();
  r["m"] = "seven";
  msg = failureOf(r);
  EXPECT_NE(msg.find("field 'm' must be an integer"), std::string::npos) << msg;
  r = validRequest();
  r["fault"] = "explode";
  msg = failureOf(r);
  EXPECT_NE(msg.find("unknown fault 'explode'"), std::string::npos) << msg;
}

TEST(EmitterRunnerTest, InvalidDescriptorNeverReachesTheEmitter) {
  GemmDesc d = GemmDesc::packed(7, 5, 3);
  d.ldc = 4;
  QM_ASSERT_FAILS_WITH(
      emitGemmKernel(d, avx2Config(), EmitterOptions::defaults()).takeError(),
      "ldc 4 is smaller than the 5 columns of C");
}

TEST(EmitterRunnerTest, PythonThatCannotStart) {
  EmitterOptions o = EmitterOptions::defaults();
  o.python = "/nonexistent/python3";
  std::string msg = ::qimeng::testing::takeMessage(
      emitGemmKernel(GemmDesc::packed(7, 5, 3), avx2Config(), o).takeError());
  ASSERT_FALSE(msg.empty());
  EXPECT_NE(msg.find("cannot run the emitter"), std::string::npos) << msg;
  EXPECT_NE(msg.find("/nonexistent/python3"), std::string::npos) << msg;
}

TEST(EmitterRunnerTest, WrongPackageDir) {
  EmitterOptions o = EmitterOptions::defaults();
  o.packageDir = "/nonexistent/emitters";
  std::string msg = ::qimeng::testing::takeMessage(
      emitGemmKernel(GemmDesc::packed(7, 5, 3), avx2Config(), o).takeError());
  ASSERT_FALSE(msg.empty());
  EXPECT_NE(msg.find("emitter failed"), std::string::npos) << msg;
  // Python's own words: "No module named qimeng_emitters".
  EXPECT_NE(msg.find("qimeng_emitters"), std::string::npos) << msg;
}

//===----------------------------------------------------------------------===//
// Success
//===----------------------------------------------------------------------===//

TEST(EmitterRunnerTest, Avx2Kernel) {
  QM_ASSERT_EXPECTED(k, emitGemmKernel(GemmDesc::packed(7, 5, 3), avx2Config(),
                                       EmitterOptions::defaults()));
  llvm::StringRef symbol(k.symbol);
  EXPECT_TRUE(symbol.starts_with("qm_sgemm_")) << k.symbol;
  EXPECT_TRUE(symbol.ends_with("_x86_64_avx2")) << k.symbol;
  EXPECT_TRUE(symbol.contains("7x5x3_nn")) << k.symbol;
  EXPECT_TRUE(symbol.contains("_6x16_ku4_")) << k.symbol;
  EXPECT_GT(k.workspaceBytes, 0u);
  EXPECT_EQ(k.workspaceBytes % 64, 0u);
  EXPECT_FALSE(k.generatorVersion.empty());
  EXPECT_EQ(k.features, (std::vector<std::string>{"avx", "avx2", "fma"}));
  EXPECT_EQ(k.argRegisters,
            (std::vector<std::string>{"rdi", "rsi", "rdx", "rcx"}));
  ASSERT_FALSE(k.clobbers.empty());
  EXPECT_NE(std::find(k.clobbers.begin(), k.clobbers.end(), "rbx"),
            k.clobbers.end());
  EXPECT_NE(std::find(k.clobbers.begin(), k.clobbers.end(), "ymm15"),
            k.clobbers.end());

  // The symbol is defined in the text.
  EXPECT_NE(k.text.find("\n" + k.symbol + ":\n"), std::string::npos);

  QM_ASSERT_EXPECTED(body, k.body());
  EXPECT_FALSE(body.empty());
  EXPECT_NE(k.text.find(body), std::string::npos);
  EXPECT_NE(body.find("vfmadd231ps"), std::string::npos);
  EXPECT_EQ(body.find("qm.body"), std::string::npos);
  EXPECT_EQ(body.find(k.symbol), std::string::npos);

  // The assembler is no ISA gate: AVX2 output must not mention zmm at all.
  EXPECT_EQ(k.text.find("zmm"), std::string::npos);
}

TEST(EmitterRunnerTest, RuntimeLeadingDimsKernel) {
  // The request leaves lda, ldb and ldc out; the header announces the form.
  GemmDesc d = GemmDesc::packed(7, 5, 3);
  EXPECT_NE(gemmRequestJson(d, avx2Config()).find("\"lda\""),
            std::string::npos);
  d.runtimeLd = true;
  std::string request = gemmRequestJson(d, avx2Config());
  EXPECT_EQ(request.find("\"lda\""), std::string::npos) << request;
  EXPECT_NE(request.find("\"runtime_ld\":true"), std::string::npos) << request;
  QM_ASSERT_EXPECTED(
      k, emitGemmKernel(d, avx2Config(), EmitterOptions::defaults()));
  EXPECT_TRUE(k.runtimeLeadingDims);
  EXPECT_TRUE(llvm::StringRef(k.symbol).contains("7x5x3_nn_ldrt_")) << k.symbol;
  QM_ASSERT_EXPECTED(fixed,
                     emitGemmKernel(GemmDesc::packed(7, 5, 3), avx2Config(),
                                    EmitterOptions::defaults()));
  EXPECT_FALSE(fixed.runtimeLeadingDims);
  QM_ASSERT_FAILS_WITH(parseEmitterOutput("# qm.symbol: f\n"
                                          "# qm.workspace_bytes: 128\n"
                                          "# qm.leading_dims: sometimes\n"
                                          "# qm.body.begin\n"
                                          "# qm.body.end\n")
                           .takeError(),
                       "malformed qm.leading_dims 'sometimes'");
}

TEST(EmitterRunnerTest, Avx512Kernel) {
  QM_ASSERT_EXPECTED(k,
                     emitGemmKernel(GemmDesc::packed(13, 33, 5), avx512Config(),
                                    EmitterOptions::defaults()));
  llvm::StringRef symbol(k.symbol);
  EXPECT_TRUE(symbol.starts_with("qm_sgemm_")) << k.symbol;
  EXPECT_TRUE(symbol.ends_with("_x86_64_avx512")) << k.symbol;
  EXPECT_GT(k.workspaceBytes, 0u);
  QM_ASSERT_EXPECTED(body, k.body());
  EXPECT_NE(k.text.find(body), std::string::npos);
  EXPECT_NE(body.find("vfmadd231ps"), std::string::npos);
  EXPECT_NE(body.find("%zmm"), std::string::npos);
  EXPECT_EQ(k.features, (std::vector<std::string>{"avx512f", "fma"}));
}

TEST(EmitterRunnerTest, SymbolNamesEveryParameter) {
  GemmDesc d = GemmDesc::packed(9, 10, 11, true, true);
  d.lda = 12;
  d.ldb = 13;
  d.ldc = 14;
  GemmConfig c = avx2Config();
  c.prefetchA = 256;
  c.prefetchB = 512;
  QM_ASSERT_EXPECTED(k, emitGemmKernel(d, c, EmitterOptions::defaults()));
  EXPECT_EQ(k.symbol, "qm_sgemm_9x10x11_tt_lda12_ldb13_ldc14_6x16_ku4_kc11_"
                      "mc12_nc16_pfa256_pfb512_x86_64_avx2");
  QM_ASSERT_EXPECTED(faulty, emitGemmKernel(d, c, EmitterOptions::defaults(),
                                            "write-past-edge"));
  EXPECT_NE(faulty.symbol, k.symbol);
  EXPECT_TRUE(llvm::StringRef(faulty.symbol).contains("_fault_write_past_edge"))
      << faulty.symbol;
}

TEST(EmitterRunnerTest, SameRequestSameText) {
  GemmDesc d = GemmDesc::packed(7, 17, 5);
  QM_ASSERT_EXPECTED(
      a, emitGemmKernel(d, avx2Config(), EmitterOptions::defaults()));
  QM_ASSERT_EXPECTED(
      b, emitGemmKernel(d, avx2Config(), EmitterOptions::defaults()));
  EXPECT_EQ(a.text, b.text);
}

//===----------------------------------------------------------------------===//
// parseEmitterOutput
//===----------------------------------------------------------------------===//

TEST(EmitterRunnerTest, ParseWithoutHeaderFails) {
  QM_ASSERT_FAILS_WITH(parseEmitterOutput("\t.text\nf:\n\tretq\n").takeError(),
                       "lacks its header");
  QM_ASSERT_FAILS_WITH(parseEmitterOutput("").takeError(), "lacks its header");
}

TEST(EmitterRunnerTest, ParseWithoutBodyMarkersFails) {
  QM_ASSERT_FAILS_WITH(parseEmitterOutput("# qm.symbol: f\n"
                                          "# qm.workspace_bytes: 64\n"
                                          "f:\n\tretq\n")
                           .takeError(),
                       "body markers");
}

TEST(EmitterRunnerTest, ParseMalformedWorkspace) {
  QM_ASSERT_FAILS_WITH(parseEmitterOutput("# qm.symbol: f\n"
                                          "# qm.workspace_bytes: lots\n"
                                          "# qm.body.begin\n"
                                          "# qm.body.end\n")
                           .takeError(),
                       "malformed workspace size 'lots'");
}

TEST(EmitterRunnerTest, ParseMinimalOutput) {
  QM_ASSERT_EXPECTED(k, parseEmitterOutput("# qm.symbol: f\n"
                                           "# qm.workspace_bytes: 128\n"
                                           "# qm.args: x0, x1,x2,x3\n"
                                           "# qm.clobbers: rax, ymm0\n"
                                           "# qm.features: avx2,fma\n"
                                           "# qm.generator: 9.9\n"
                                           "f:\n"
                                           "# qm.body.begin\n"
                                           "\tnop\n"
                                           "\tnop\n"
                                           "# qm.body.end\n"
                                           "\tretq\n"));
  EXPECT_EQ(k.symbol, "f");
  EXPECT_EQ(k.workspaceBytes, 128u);
  EXPECT_EQ(k.generatorVersion, "9.9");
  EXPECT_EQ(k.argRegisters, (std::vector<std::string>{"x0", "x1", "x2", "x3"}));
  EXPECT_EQ(k.clobbers, (std::vector<std::string>{"rax", "ymm0"}));
  EXPECT_EQ(k.features, (std::vector<std::string>{"avx2", "fma"}));
  QM_ASSERT_EXPECTED(body, k.body());
  EXPECT_EQ(body, "\tnop\n\tnop\n");
}

} // namespace

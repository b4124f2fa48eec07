//===- KernelJson.cpp -----------------------------------------------------===//
#include "qimeng/Kernel/KernelJson.h"
#include "qimeng/Support/JsonFieldReader.h"

using namespace qimeng;
using json = nlohmann::json;

namespace {

/// The activation as request fields, when set: `relu` (a flag),
/// `relu_min` and `relu_max` (numbers), `relu_nan_to_floor` (a flag),
/// `leaky_relu` (the slope), `activation` (a smooth one's name).
void writeActivation(json &j, const Activation &a) {
  if (a.smooth != Activation::Smooth::None)
    j["activation"] = Activation::smoothName(a.smooth);
  if (a.relu)
    j["relu"] = true;
  if (a.floor)
    j["relu_min"] = static_cast<double>(*a.floor);
  if (a.bound)
    j["relu_max"] = static_cast<double>(*a.bound);
  if (a.nanToFloor)
    j["relu_nan_to_floor"] = true;
  if (a.leakySlope)
    j["leaky_relu"] = static_cast<double>(*a.leakySlope);
}

/// Reads `name` (relu_min, relu_max or leaky_relu) when present: a number
/// that binary32 holds exactly.
llvm::Error readActivationNumber(const JsonFieldReader &fields,
                                 const char *name, std::optional<float> &out) {
  const json *v = fields.find(name);
  if (!v)
    return llvm::Error::success();
  if (!v->is_number())
    return fields.fail(name, "a number");
  double value = v->get<double>();
  if (static_cast<double>(static_cast<float>(value)) != value)
    return fields.fail(name, "a binary32 value");
  out = static_cast<float>(value);
  return llvm::Error::success();
}

/// The activation's fields (writeActivation), those present.
llvm::Error readActivation(const JsonFieldReader &fields, Activation &a) {
  for (auto [flag, name] : {std::pair<bool *, const char *>{&a.relu, "relu"},
                            {&a.nanToFloor, "relu_nan_to_floor"}})
    if (fields.find(name))
      if (auto err = fields.boolean(name, *flag))
        return err;
  if (auto err = readActivationNumber(fields, "relu_min", a.floor))
    return err;
  if (auto err = readActivationNumber(fields, "leaky_relu", a.leakySlope))
    return err;
  if (const json *v = fields.find("activation")) {
    std::optional<Activation::Smooth> smooth;
    if (v->is_string())
      smooth = Activation::smoothNamed(v->get<std::string>());
    if (!smooth)
      return fields.fail("activation", "sigmoid, silu, gelu_tanh or gelu_erf");
    a.smooth = *smooth;
  }
  return readActivationNumber(fields, "relu_max", a.bound);
}

/// Reads `dtype` when present (f32 otherwise): a precisionName.
llvm::Error readPrecision(const JsonFieldReader &fields, const json &j,
                          llvm::StringRef what, GemmPrecision &out) {
  if (!j.contains("dtype"))
    return llvm::Error::success();
  std::string dtype;
  if (auto err = fields.string("dtype", dtype))
    return err;
  std::optional<GemmPrecision> p = parsePrecision(dtype);
  if (!p)
    return llvm::createStringError(what.str() +
                                   " field 'dtype' must be f32, bf16, s8s8 "
                                   "or u8s8, got " +
                                   dtype);
  out = *p;
  return llvm::Error::success();
}

} // namespace

json qimeng::toJson(const GemmDesc &d) {
  json j = {{"m", d.m},
            {"n", d.n},
            {"k", d.k},
            {"lda", d.lda},
            {"ldb", d.ldb},
            {"ldc", d.ldc},
            {"trans_a", d.transA},
            {"trans_b", d.transB}};
  // Only when set, so that accumulating requests read as before.
  for (auto [flag, name] :
       {std::pair<bool, const char *>{d.overwrite, "overwrite"},
        {d.runtimeLd, "runtime_ld"},
        {d.dynamicM, "dynamic_m"},
        {d.dynamicN, "dynamic_n"},
        {d.dynamicK, "dynamic_k"},
        {d.bPrepacked, "b_prepacked"}})
    if (flag)
      j[name] = true;
  if (d.bias != GemmBias::None)
    j["bias"] = d.bias == GemmBias::Columns ? "columns" : "rows";
  writeActivation(j, d.activation);
  if (d.precision != GemmPrecision::F32)
    j["dtype"] = precisionName(d.precision).str();
  if (d.halfOutput) {
    j[halfOutputField(d.precision).str()] = true;
    j["ldd"] = d.ldd;
  }
  return j;
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
  for (auto [flag, name] :
       {std::pair<bool *, const char *>{&d.overwrite, "overwrite"},
        {&d.runtimeLd, "runtime_ld"},
        {&d.dynamicM, "dynamic_m"},
        {&d.dynamicN, "dynamic_n"},
        {&d.dynamicK, "dynamic_k"},
        {&d.bPrepacked, "b_prepacked"}})
    if (j.contains(name))
      if (auto err = fields.boolean(name, *flag))
        return std::move(err);
  if (j.contains("bias")) {
    std::string bias;
    if (auto err = fields.string("bias", bias))
      return std::move(err);
    if (bias == "columns")
      d.bias = GemmBias::Columns;
    else if (bias == "rows")
      d.bias = GemmBias::Rows;
    else if (bias != "none")
      return llvm::createStringError(
          what.str() + " field 'bias' must be none, columns or rows");
  }
  if (auto err = readActivation(fields, d.activation))
    return std::move(err);
  if (auto err = readPrecision(fields, j, what, d.precision))
    return std::move(err);
  const std::string outputField = halfOutputField(d.precision).str();
  if (j.contains(outputField))
    if (auto err = fields.boolean(outputField.c_str(), d.halfOutput))
      return std::move(err);
  if (d.halfOutput)
    if (auto err = fields.integer64("ldd", d.ldd))
      return std::move(err);
  return d;
}

json qimeng::toJson(const ConvDesc &d) {
  json j = {{"layout", convLayoutName(d.layout).str()},
            {"n", d.n},
            {"h", d.h},
            {"w", d.w},
            {"c", d.c},
            {"f", d.f},
            {"kh", d.kh},
            {"kw", d.kw},
            {"stride_h", d.strideH},
            {"stride_w", d.strideW},
            {"dilation_h", d.dilationH},
            {"dilation_w", d.dilationW},
            {"input_strides",
             {d.inputStrides[0], d.inputStrides[1], d.inputStrides[2]}}};
  // Only when set, as for GEMMs.
  for (auto [flag, name] :
       {std::pair<bool, const char *>{d.runtimeStrides, "runtime_strides"},
        {d.overwrite, "overwrite"},
        {d.bias, "bias"},
        {d.bPrepacked, "b_prepacked"}})
    if (flag)
      j[name] = true;
  writeActivation(j, d.activation);
  if (d.precision != GemmPrecision::F32)
    j["dtype"] = precisionName(d.precision).str();
  if (!d.outputIsDense())
    j["output_pixel_stride"] = d.outputPixelStride;
  if (d.halfOutput)
    j[halfOutputField(d.precision).str()] = true;
  return j;
}

llvm::Expected<ConvDesc> qimeng::convDescFromJson(const json &j,
                                                  llvm::StringRef what) {
  if (!j.is_object())
    return llvm::createStringError(what.str() + " is not a JSON object");
  JsonFieldReader fields(j, what.str());
  ConvDesc d;
  std::string layout;
  if (auto err = fields.string("layout", layout))
    return std::move(err);
  if (layout == "nhwc_hwcf")
    d.layout = ConvLayout::NhwcHwcf;
  else if (layout == "nhwc_fhwc")
    d.layout = ConvLayout::NhwcFhwc;
  else if (layout == "nchw_fchw")
    d.layout = ConvLayout::NchwFchw;
  else
    return llvm::createStringError(what.str() + " field 'layout' must be "
                                                "nhwc_hwcf, nhwc_fhwc or "
                                                "nchw_fchw");
  for (auto [field, name] : {std::pair<int64_t *, const char *>{&d.n, "n"},
                             {&d.h, "h"},
                             {&d.w, "w"},
                             {&d.c, "c"},
                             {&d.f, "f"},
                             {&d.kh, "kh"},
                             {&d.kw, "kw"},
                             {&d.strideH, "stride_h"},
                             {&d.strideW, "stride_w"},
                             {&d.dilationH, "dilation_h"},
                             {&d.dilationW, "dilation_w"}})
    if (auto err = fields.integer64(name, *field))
      return std::move(err);
  auto strides = j.find("input_strides");
  if (strides == j.end() || !strides->is_array() || strides->size() != 3 ||
      !(*strides)[0].is_number_integer() ||
      !(*strides)[1].is_number_integer() || !(*strides)[2].is_number_integer())
    return llvm::createStringError(what.str() +
                                   " field 'input_strides' must be three "
                                   "integers");
  for (int i = 0; i < 3; ++i)
    d.inputStrides[i] = (*strides)[i].get<int64_t>();
  for (auto [flag, name] :
       {std::pair<bool *, const char *>{&d.runtimeStrides, "runtime_strides"},
        {&d.overwrite, "overwrite"},
        {&d.bias, "bias"},
        {&d.bPrepacked, "b_prepacked"}})
    if (j.contains(name))
      if (auto err = fields.boolean(name, *flag))
        return std::move(err);
  if (auto err = readActivation(fields, d.activation))
    return std::move(err);
  if (auto err = readPrecision(fields, j, what, d.precision))
    return std::move(err);
  if (j.contains("output_pixel_stride"))
    if (auto err = fields.integer64("output_pixel_stride", d.outputPixelStride))
      return std::move(err);
  const std::string outputField = halfOutputField(d.precision).str();
  if (j.contains(outputField))
    if (auto err = fields.boolean(outputField.c_str(), d.halfOutput))
      return std::move(err);
  return d;
}

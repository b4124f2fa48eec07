//===- ConvMatcher.cpp - linalg.conv_2d_* -> ConvDesc ---------------------===//
//
// One reason per check, in the order a user would fix them, as in
// GemmMatcher.cpp.
//
//===----------------------------------------------------------------------===//
#include "qimeng/Transforms/ConvMatcher.h"
#include "EpilogueMatcher.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"
#include "qimeng/Transforms/GemmMatcher.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace qimeng;

bool qimeng::isConvolution(linalg::LinalgOp op) {
  return isa<linalg::ConvolutionOpInterface>(op.getOperation());
}

namespace {

/// The op's layout, or failure for convolutions we do not take.
FailureOr<ConvLayout> layoutOf(linalg::LinalgOp op) {
  if (isa<linalg::Conv2DNhwcHwcfOp>(op))
    return ConvLayout::NhwcHwcf;
  if (isa<linalg::Conv2DNhwcFhwcOp>(op))
    return ConvLayout::NhwcFhwc;
  if (isa<linalg::Conv2DNchwFchwOp>(op))
    return ConvLayout::NchwFchw;
  return failure();
}

/// The two values of a strides or dilations attribute.
FailureOr<std::pair<int64_t, int64_t>> pairOf(DenseIntElementsAttr attr) {
  if (!attr || attr.getNumElements() != 2)
    return failure();
  auto values = attr.getValues<int64_t>();
  return std::make_pair(values[0], values[1]);
}

/// Whether `strides` are the dense row-major strides of `shape`.
bool isDense(ArrayRef<int64_t> shape, ArrayRef<int64_t> strides) {
  int64_t expected = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && strides[i] != expected)
      return false;
    expected *= shape[i];
  }
  return true;
}

/// The pixel stride of an nhwc output of `f` channels whose strides are
/// the dense ones of its shape but for the pixels' (more than f: a channel
/// slice of a wider buffer), or nullopt (0 where it is dense).
std::optional<int64_t> nhwcPixelStride(ArrayRef<int64_t> shape,
                                       ArrayRef<int64_t> strides, int64_t f) {
  if (isDense(shape, strides))
    return 0;
  if (strides.size() < 2 || strides.back() != 1 ||
      strides[strides.size() - 2] <= f)
    return std::nullopt;
  SmallVector<int64_t> pixels(shape.drop_back());
  pixels.push_back(strides[strides.size() - 2]);
  if (!isDense(pixels, strides))
    return std::nullopt;
  return strides[strides.size() - 2];
}

} // namespace

FailureOr<ConvDesc>
qimeng::describeConv(linalg::LinalgOp op,
                     SmallVectorImpl<StrideAssumption> &assumed,
                     std::string &reason, ConvInit *init,
                     const ConvMatchOptions &options, int64_t *imageCalls) {
  bool foldBiasInit = options.foldBiasInit;
  FailureOr<ConvLayout> layout = layoutOf(op);
  if (failed(layout)) {
    reason = (op->getName().getStringRef() +
              " is not supported; supported convolutions are "
              "linalg.conv_2d_nhwc_hwcf, linalg.conv_2d_nhwc_fhwc and "
              "linalg.conv_2d_nchw_fchw, and their _q forms with zero "
              "points (grouped, depthwise, 1-D and 3-D convolutions are "
              "not)")
                 .str();
    return failure();
  }
  if (!op.hasPureBufferSemantics()) {
    reason = "tensor operands are not supported yet; bufferize first "
             "(--one-shot-bufferize)";
    return failure();
  }
  Value input = op.getDpsInputOperand(0)->get();
  Value filter = op.getDpsInputOperand(1)->get();
  Value output = op.getDpsInitOperand(0)->get();
  auto inType = dyn_cast<MemRefType>(input.getType());
  auto fltType = dyn_cast<MemRefType>(filter.getType());
  auto outType = dyn_cast<MemRefType>(output.getType());
  if (!inType || !fltType || !outType) {
    reason = "operands are not ranked memrefs";
    return failure();
  }
  // f32, or bf16 and 8-bit inputs as for a contraction (the input is A,
  // the filter B).
  Type elementTypes[3] = {inType.getElementType(), fltType.getElementType(),
                          outType.getElementType()};
  const char *names[3] = {"the input", "the filter", "the output"};
  FailureOr<GemmPrecision> precision =
      operandPrecision(op, elementTypes, names, reason);
  if (failed(precision))
    return failure();
  for (auto [type, name] : {std::pair<MemRefType, StringRef>{inType, "input"},
                            {fltType, "filter"},
                            {outType, "output"}}) {
    // Only the batch may be dynamic (dimension 0 of the input and output):
    // the call then runs the one-image kernel once per image.
    for (int64_t i = 0; i < type.getRank(); ++i)
      if (type.isDynamicDim(i) && (i != 0 || name == "filter")) {
        reason = ("dynamic size in the " + name +
                  (name == "filter" ? "" : " other than the batch"))
                     .str();
        return failure();
      }
  }
  const bool batchIsDynamic = inType.isDynamicDim(0) || outType.isDynamicDim(0);
  // The calls of the one-image kernel the caller makes (1: one call for
  // every image).
  int64_t calls = batchIsDynamic ? ShapedType::kDynamic : 1;
  DenseIntElementsAttr stridesAttr, dilationsAttr;
  if (auto c = dyn_cast<linalg::Conv2DNhwcHwcfOp>(op.getOperation())) {
    stridesAttr = c.getStrides();
    dilationsAttr = c.getDilations();
  } else if (auto c = dyn_cast<linalg::Conv2DNhwcFhwcOp>(op.getOperation())) {
    stridesAttr = c.getStrides();
    dilationsAttr = c.getDilations();
  } else if (auto c = dyn_cast<linalg::Conv2DNchwFchwOp>(op.getOperation())) {
    stridesAttr = c.getStrides();
    dilationsAttr = c.getDilations();
  }
  auto strides = pairOf(stridesAttr);
  auto dilations = pairOf(dilationsAttr);
  if (failed(strides) || failed(dilations)) {
    reason = "strides and dilations must have two values each";
    return failure();
  }

  ArrayRef<int64_t> in = inType.getShape(), flt = fltType.getShape(),
                    out = outType.getShape();
  ConvDesc d;
  d.layout = *layout;
  d.precision = *precision;
  d.n = batchIsDynamic ? 1 : in[0];
  if (d.isNhwc()) {
    d.h = in[1];
    d.w = in[2];
    d.c = in[3];
  } else {
    d.c = in[1];
    d.h = in[2];
    d.w = in[3];
  }
  switch (d.layout) {
  case ConvLayout::NhwcHwcf:
    d.kh = flt[0];
    d.kw = flt[1];
    d.f = flt[3];
    break;
  case ConvLayout::NhwcFhwc:
    d.f = flt[0];
    d.kh = flt[1];
    d.kw = flt[2];
    break;
  case ConvLayout::NchwFchw:
    d.f = flt[0];
    d.kh = flt[2];
    d.kw = flt[3];
    break;
  }
  d.strideH = strides->first;
  d.strideW = strides->second;
  d.dilationH = dilations->first;
  d.dilationW = dilations->second;
  for (int64_t v : {d.n, d.h, d.w, d.c, d.f, d.kh, d.kw})
    if (v == 0) {
      reason = "empty convolution (a dimension is 0)";
      return failure();
    }
  if (d.strideH < 1 || d.strideW < 1 || d.dilationH < 1 || d.dilationW < 1) {
    reason = "strides and dilations must be >= 1";
    return failure();
  }
  int64_t expectedOut[4];
  if (d.isNhwc()) {
    int64_t e[4] = {d.n, d.oh(), d.ow(), d.f};
    std::copy(e, e + 4, expectedOut);
  } else {
    int64_t e[4] = {d.n, d.f, d.oh(), d.ow()};
    std::copy(e, e + 4, expectedOut);
  }
  if (batchIsDynamic)
    expectedOut[0] = out[0]; // the images are the call's loop
  if (!llvm::equal(out, ArrayRef<int64_t>(expectedOut))) {
    reason = "the output shape does not match the input, filter, strides and "
             "dilations (the kernel computes every output element)";
    return failure();
  }

  // The input may be a strided view with a unit innermost stride; the
  // filter and output must be dense.
  SmallVector<StrideAssumption> inputAssumed;
  auto inStrides = resolveStrides(input, "input", inputAssumed, reason,
                                  /*allowDynamicSizes=*/batchIsDynamic);
  if (failed(inStrides))
    return failure();
  // A dynamic batch: the call's loop steps the input and output by their
  // batch strides at run time; the kernel sees one image.
  auto notBatch = [&](SmallVectorImpl<StrideAssumption> &a) {
    if (batchIsDynamic)
      llvm::erase_if(a, [](const StrideAssumption &s) { return s.dim == 0; });
  };
  notBatch(inputAssumed);
  // Outer strides the type leaves dynamic: read at run time where the
  // kernels can (all three, the (n, h) of nhwc with its w stride C, or the
  // (n, c, h) of nchw), the dense ones their representative.
  const unsigned runtimeDims = d.isNhwc() ? 2 : 3;
  if (options.stridesAtRunTime &&
      llvm::any_of(
          inputAssumed,
          [&](const StrideAssumption &a) { return a.dim < runtimeDims; }) &&
      (runtimeDims == 3 || (*inStrides)[2] == d.c)) {
    d.runtimeStrides = true;
    llvm::erase_if(inputAssumed, [&](const StrideAssumption &a) {
      return a.dim < runtimeDims;
    });
    int64_t dense[3];
    d.denseInputStrides(dense);
    for (unsigned i = 0; i < runtimeDims; ++i)
      (*inStrides)[i] = dense[i];
  }
  assumed.append(inputAssumed.begin(), inputAssumed.end());
  if ((*inStrides)[3] != 1) {
    reason = llvm::formatv("non-unit innermost stride {0} in the input",
                           (*inStrides)[3])
                 .str();
    return failure();
  }
  d.inputStrides[0] = (*inStrides)[0];
  d.inputStrides[1] = (*inStrides)[1];
  d.inputStrides[2] = (*inStrides)[2];
  // A size-1 dimension's stride never moves an address and may be
  // anything; give it the least stride that does not overlap.
  int64_t extents[4] = {d.n, d.isNhwc() ? d.h : d.c, d.isNhwc() ? d.w : d.h,
                        d.isNhwc() ? d.c : d.w};
  for (int i = 2; i >= 0; --i) {
    int64_t inner =
        i == 2 ? extents[3] : extents[i + 1] * d.inputStrides[i + 1];
    if (extents[i] == 1)
      d.inputStrides[i] = std::max(d.inputStrides[i], inner);
  }
  for (auto [value, type, name] :
       {std::tuple<Value, MemRefType, StringRef>{filter, fltType, "filter"},
        {output, outType, "output"}}) {
    SmallVector<StrideAssumption> operandAssumed;
    auto s = resolveStrides(value, name, operandAssumed, reason,
                            /*allowDynamicSizes=*/batchIsDynamic);
    if (failed(s))
      return failure();
    // Each image dense; with a dynamic batch the images may lie anywhere.
    const bool perImage = batchIsDynamic && name == "output";
    if (perImage)
      notBatch(operandAssumed);
    assumed.append(operandAssumed.begin(), operandAssumed.end());
    ArrayRef<int64_t> shape = type.getShape().drop_front(perImage ? 1 : 0);
    ArrayRef<int64_t> strides =
        ArrayRef<int64_t>(*s).drop_front(perImage ? 1 : 0);
    // The output as the kernel writes it: dense, or a channel slice of a
    // wider nhwc output (dense but for the pixels' stride, the
    // concatenation's channels: the kernel's ldc).
    auto kernelWrites = [&](ArrayRef<int64_t> shape,
                            ArrayRef<int64_t> strides) {
      if (isDense(shape, strides))
        return true;
      if (name != "output" || !options.stridedOutput || !d.isNhwc() ||
          d.precision != GemmPrecision::F32)
        return false;
      std::optional<int64_t> pixel = nhwcPixelStride(shape, strides, d.f);
      if (pixel)
        d.outputPixelStride = *pixel;
      return pixel.has_value();
    };
    if (kernelWrites(shape, strides))
      continue;
    // Images further apart than one image (an nchw channel slice of a
    // wider buffer: torch.cat along the channels, written in place): one
    // call of the one-image kernel per image, as for a dynamic batch.
    if (name == "output" && !perImage && d.n > 1 &&
        kernelWrites(shape.drop_front(), strides.drop_front())) {
      calls = d.n;
      d.n = 1;
      // The input's batch stride is the calls' step.
      llvm::erase_if(assumed, [&](const StrideAssumption &a) {
        return a.memref == input && a.dim == 0;
      });
      continue;
    }
    if (!isDense(shape, strides)) {
      reason = ("the " + name + " is not dense (only the input may be a " +
                "strided view)")
                   .str();
      return failure();
    }
  }
  if (auto err = d.verify()) {
    reason = llvm::toString(std::move(err));
    return failure();
  }
  if (imageCalls)
    *imageCalls = calls;
  if (init) {
    const unsigned channel = d.isNhwc() ? 3 : 1;
    // 8-bit kernels take a zero fill, not a bias or relu.
    if (isIntegerPrecision(d.precision))
      foldBiasInit = false;
    OutputInit found = outputInitOf(
        output, op,
        foldBiasInit ? std::optional<unsigned>(channel) : std::nullopt);
    *init = ConvInit{found.op, found.bias};
    assumed.append(found.assumed.begin(), found.assumed.end());
    d.overwrite = init->op != nullptr;
    d.bias = bool(init->bias);
    // With the output initialised here, its elementwise consumer may fuse,
    // and write a channel slice of a concatenation (an nhwc f32 kernel's
    // output pixel stride, the slice's static one).
    const bool slices = options.stridedOutput && d.isNhwc() &&
                        d.precision == GemmPrecision::F32 && calls == 1 &&
                        d.outputIsDense();
    // bf16 and f16: the consumer may round into the operands' type
    // (torch-mlir's truncf), which the kernel writes as D.
    const Type halfType =
        isHalfPrecision(d.precision) ? inType.getElementType() : Type();
    std::optional<ElementwiseEpilogue> e;
    if (init->op && foldBiasInit)
      e = matchElementwiseEpilogue(
          op, output, init->op, channel,
          /*biasAllowed=*/!d.bias, /*goingAway=*/{}, halfType,
          /*sliceOutput=*/slices,
          /*leakyAllowed=*/!isIntegerPrecision(d.precision),
          /*smoothAllowed=*/options.smoothActivations &&
              !isIntegerPrecision(d.precision));
    if (e && e->halfOutput) {
      // D dense, as the kernel writes it (each image, with one call an
      // image: the caller steps D by its batch stride, read at run time);
      // no residual with it.
      const bool perImage = calls != 1;
      SmallVector<StrideAssumption> dAssumed;
      std::string why;
      auto s = resolveStrides(e->output, "the 16-bit output", dAssumed, why,
                              /*allowDynamicSizes=*/batchIsDynamic);
      if (perImage)
        llvm::erase_if(dAssumed,
                       [](const StrideAssumption &a) { return a.dim == 0; });
      const unsigned from = perImage ? 1 : 0;
      if (e->residual || failed(s) ||
          !isDense(
              cast<MemRefType>(e->output.getType()).getShape().drop_front(from),
              ArrayRef<int64_t>(*s).drop_front(from)) ||
          !llvm::all_of(dAssumed, [](const StrideAssumption &a) {
            return a.checkable();
          })) {
        e.reset();
      } else {
        d.halfOutput = true;
        init->halfOutput = e->output;
        assumed.append(dAssumed.begin(), dAssumed.end());
      }
    } else if (e && e->output.getType() != output.getType()) {
      SmallVector<StrideAssumption> sliceAssumed;
      std::string why;
      auto s = resolveStrides(e->output, "output", sliceAssumed, why);
      std::optional<int64_t> pixel;
      if (succeeded(s) && sliceAssumed.empty())
        pixel = nhwcPixelStride(outType.getShape(), *s, d.f);
      if (pixel)
        d.outputPixelStride = *pixel;
      else
        e.reset();
    }
    if (e) {
      d.activation = e->activation;
      if (e->bias) {
        d.bias = true;
        init->bias = e->bias;
      }
      if (e->residual) {
        d.overwrite = false; // the output starts as the residual
        init->residual = e->residual;
      }
      init->epilogueOps = e->ops;
      if (!e->halfOutput)
        init->output = e->output;
      init->opsToHoist = e->opsToHoist;
      assumed.append(e->assumed.begin(), e->assumed.end());
    }
  }
  return d;
}

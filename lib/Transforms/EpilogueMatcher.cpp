//===- EpilogueMatcher.cpp ------------------------------------------------===//
#include "EpilogueMatcher.h"
#include "BufferEffects.h"
#include "ConstantForms.h"
#include "SmoothActivationMatcher.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include <cmath>
#include <functional>

using namespace mlir;
using namespace qimeng;

namespace {

/// What an elementwise generic's body computes from its block arguments.
struct BodyEpilogue {
  /// The activation's parts it computes (a bound may come alone, after an
  /// earlier generic's relu).
  Activation activation;
  bool halfOutput = false;
};

/// `m` as x * s or s * x with s a finite constant: (s, the mulf).
std::optional<std::pair<float, arith::MulFOp>> scaledBy(Value m, Value x) {
  auto mul = m.getDefiningOp<arith::MulFOp>();
  if (!mul)
    return std::nullopt;
  std::optional<float> s;
  if (mul.getLhs() == x)
    s = finiteConstant(mul.getRhs());
  else if (mul.getRhs() == x)
    s = finiteConstant(mul.getLhs());
  if (!s)
    return std::nullopt;
  return std::pair(*s, mul);
}

/// `v` as leaky relu of some x, with its slope s above 0 and not 1: (s,
/// x), its ops added to `used`. The forms frontends write, each x > 0 ? x
/// : s * x with NaN staying NaN:
///  - torch-mlir's aten.leaky_relu: addf(select(p, x, 0), mulf(select(p,
///    0, x), s)), p = cmpf ugt(x, 0) (or ogt);
///  - jax.nn.leaky_relu, StableHLO's select: select(cmpf ogt, oge, ugt or
///    uge(x, 0), x, mulf(x, s)), or olt, ole, ult or ule with the branches
///    the other way round;
///  - TOSA's maximum(x, mul(x, s)) (TFLite's leaky relu): arith.maximumf
///    or maxnumf(x, mulf(x, s)) for s below 1, minimumf or minnumf for s
///    above (where the other would be another function).
std::optional<std::pair<float, Value>>
matchLeakyRelu(Value v, SmallPtrSetImpl<Operation *> &used) {
  auto isZero = [](Value x) { return matchPattern(x, m_PosZeroFloat()); };
  auto comparedToZero = [&](Value cond) -> arith::CmpFOp {
    auto cmp = cond.getDefiningOp<arith::CmpFOp>();
    return cmp && isZero(cmp.getRhs()) ? cmp : arith::CmpFOp();
  };
  using P = arith::CmpFPredicate;
  SmallVector<Operation *, 5> ops;
  std::optional<float> slope;
  Value x;
  Operation *root = v.getDefiningOp();
  if (auto add = dyn_cast_or_null<arith::AddFOp>(root)) {
    for (auto [pos, neg] : {std::pair(add.getLhs(), add.getRhs()),
                            std::pair(add.getRhs(), add.getLhs())}) {
      auto positive = pos.getDefiningOp<arith::SelectOp>();
      auto mul = neg.getDefiningOp<arith::MulFOp>();
      if (!positive || !mul)
        continue;
      auto negative = mul.getLhs().getDefiningOp<arith::SelectOp>();
      std::optional<float> s = finiteConstant(mul.getRhs());
      if (!negative) {
        negative = mul.getRhs().getDefiningOp<arith::SelectOp>();
        s = finiteConstant(mul.getLhs());
      }
      arith::CmpFOp cmp = comparedToZero(positive.getCondition());
      if (!negative || !s || !cmp ||
          negative.getCondition() != positive.getCondition() ||
          (cmp.getPredicate() != P::UGT && cmp.getPredicate() != P::OGT))
        continue;
      x = cmp.getLhs();
      if (positive.getTrueValue() != x || !isZero(positive.getFalseValue()) ||
          !isZero(negative.getTrueValue()) || negative.getFalseValue() != x)
        continue;
      slope = s;
      ops = {add, positive, negative, mul, cmp};
      break;
    }
  } else if (auto select = dyn_cast_or_null<arith::SelectOp>(root)) {
    if (arith::CmpFOp cmp = comparedToZero(select.getCondition())) {
      const P p = cmp.getPredicate();
      const bool above =
          p == P::OGT || p == P::OGE || p == P::UGT || p == P::UGE;
      const bool below =
          p == P::OLT || p == P::OLE || p == P::ULT || p == P::ULE;
      x = cmp.getLhs();
      Value same = above ? select.getTrueValue() : select.getFalseValue();
      Value other = above ? select.getFalseValue() : select.getTrueValue();
      if ((above || below) && same == x)
        if (auto product = scaledBy(other, x)) {
          slope = product->first;
          ops = {select, cmp, product->second};
        }
    }
  } else if (root && isa<arith::MaximumFOp, arith::MaxNumFOp, arith::MinimumFOp,
                         arith::MinNumFOp>(root)) {
    const bool max = isa<arith::MaximumFOp, arith::MaxNumFOp>(root);
    for (auto [a, b] : {std::pair(root->getOperand(0), root->getOperand(1)),
                        std::pair(root->getOperand(1), root->getOperand(0))})
      if (auto product = scaledBy(b, a);
          product && (max ? product->first < 1.0f : product->first > 1.0f)) {
        x = a;
        slope = product->first;
        ops = {root, product->second};
        break;
      }
  }
  if (!slope || !(*slope > 0.0f) || *slope == 1.0f)
    return std::nullopt;
  used.insert(ops.begin(), ops.end());
  return std::pair(*slope, x);
}

/// What an elementwise generic applies to its input `c` (block argument
/// `cArg`), with `biasArg` and `residualArg` the bias's and the residual's
/// block arguments if it has them: the sum of c and each of them, added in
/// any order (arith.addf; the kernel adds the residual first and the bias
/// last: a reassociation, as its K sums are), then optionally relu as
/// arith.maximumf(x, +0.0) or select(cmpf ugt(x, +0.0), x, +0.0) (both
/// keep NaN and give +0 for -0), or the same with another finite f32
/// constant than +-0 (relu's floor: hardtanh's -1), or a floor that
/// takes a NaN, select(cmpf ult(x, f), f, x) (torch-mlir's clamp) or
/// arith.maxnumf(x, f); and after relu (or before it, as
/// arith.minimumf) optionally arith.minimumf with a finite constant above
/// the floor, relu's bound (relu6, hardtanh's 1), or after a floor that
/// takes NaN select(cmpf ugt(x, b), b, x) or arith.minnumf(x, b) (the same
/// on numbers); or, with `leakyAllowed` and instead of relu, leaky relu
/// (matchLeakyRelu); or, with `smoothAllowed` and instead of those, a
/// smooth activation (matchSmoothActivation: sigmoid, silu, gelu, tanh,
/// hardswish, mish, softplus, hardsigmoid);
/// with a `halfType`, perhaps all that rounded by arith.truncf to it
/// last (to nearest even: truncf without a rounding mode). With
/// `afterRelu` (c is already relu's result: a chain's second generic)
/// the bound may come alone. Nullopt for any other body, and for c alone
/// unless it is rounded.
std::optional<BodyEpilogue> epilogueOfBody(linalg::GenericOp g, unsigned cArg,
                                           std::optional<unsigned> biasArg,
                                           std::optional<unsigned> residualArg,
                                           Type halfType, bool afterRelu,
                                           bool leakyAllowed,
                                           bool smoothAllowed) {
  Block &body = g.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (yield->getNumOperands() != 1)
    return std::nullopt;
  SmallPtrSet<Operation *, 4> used;
  Value v = yield->getOperand(0);
  bool truncated = false;
  if (auto trunc = v.getDefiningOp<arith::TruncFOp>();
      trunc && halfType && trunc.getType() == halfType &&
      trunc.getIn().getType().isF32() && !trunc.getRoundingmodeAttr()) {
    truncated = true;
    v = trunc.getIn();
    used.insert(trunc);
  }
  // relu's floor and bound: finite f32 constants (finiteConstant). -0 is
  // neither (maximumf with it keeps -0, which relu's +0 floor does not).
  bool relu = false, nanToFloor = false;
  float floor = 0.0f;
  std::optional<float> reluMax;
  // The bound: arith.minimumf(x, b) with a finite f32 constant. With the
  // bound above the floor (checked below), min(max(x, f), b) and
  // max(min(x, b), f) agree everywhere (NaN too). After a floor that takes
  // a NaN (`numbersOnly`: checked below) also select(cmpf ugt(x, b), b,
  // x) and arith.minnumf(x, b), which agree with it on numbers.
  bool boundOnNumbersOnly = false;
  auto peelBound = [&](bool numbersOnly) {
    if (reluMax)
      return;
    std::optional<std::pair<float, Value>> found;
    Operation *op = v.getDefiningOp();
    if (auto min = dyn_cast_or_null<arith::MinimumFOp>(op)) {
      found = withConstant(min.getLhs(), min.getRhs());
    } else if (!numbersOnly) {
      return;
    } else if (auto min = dyn_cast_or_null<arith::MinNumFOp>(op)) {
      found = withConstant(min.getLhs(), min.getRhs());
      boundOnNumbersOnly = found.has_value();
    } else if ((found = selectForm(v, arith::CmpFPredicate::UGT,
                                   /*constantIfTrue=*/true, used))) {
      boundOnNumbersOnly = true;
      op = nullptr; // the select and the compare are in `used`
    }
    if (!found)
      return;
    reluMax = found->first;
    v = found->second;
    if (op)
      used.insert(op);
  };
  // A smooth activation, or leaky relu instead of relu: x > 0 ? x : s * x.
  std::optional<float> leaky;
  Activation::Smooth smooth = Activation::Smooth::None;
  if (auto found =
          smoothAllowed ? matchSmoothActivation(v, used) : std::nullopt) {
    smooth = found->first;
    v = found->second;
  } else if (auto found = matchLeakyRelu(v, used)) {
    if (!leakyAllowed)
      return std::nullopt;
    leaky = found->first;
    v = found->second;
  } else {
    peelBound(/*numbersOnly=*/true);
  }
  // The floor: maximumf (NaN kept) or maxnumf (NaN becomes the floor), or
  // their select forms, select(x ugt f, x, f) and select(x ult f, f, x).
  std::optional<std::pair<float, Value>> found;
  if (leaky || smooth != Activation::Smooth::None) {
    // Leaky relu or a smooth one is the activation: no floor, no bound.
  } else if (auto max = v.getDefiningOp<arith::MaximumFOp>()) {
    if ((found = withConstant(max.getLhs(), max.getRhs())))
      used.insert(max);
  } else if (auto max = v.getDefiningOp<arith::MaxNumFOp>()) {
    if ((found = withConstant(max.getLhs(), max.getRhs()))) {
      used.insert(max);
      nanToFloor = true;
    }
  } else if ((found = selectForm(v, arith::CmpFPredicate::UGT,
                                 /*constantIfTrue=*/false, used))) {
  } else if ((found = selectForm(v, arith::CmpFPredicate::ULT,
                                 /*constantIfTrue=*/true, used))) {
    nanToFloor = true;
  }
  if (found) {
    relu = true;
    floor = found->first;
    v = found->second;
    peelBound(/*numbersOnly=*/false);
  }
  if (reluMax && !relu && !afterRelu)
    return std::nullopt; // a clamp from above alone is not an epilogue yet
  if (boundOnNumbersOnly && !nanToFloor)
    return std::nullopt; // it would differ from minimumf on a NaN
  if (reluMax && relu && !(*reluMax > floor))
    return std::nullopt; // a constant but for NaN
  // The sum below relu: a tree of arith.addf whose leaves are the block
  // arguments of c, the bias and the residual, each exactly once.
  SmallVector<unsigned, 3> leaves;
  std::function<bool(Value)> collect = [&](Value x) {
    if (auto arg = dyn_cast<BlockArgument>(x)) {
      if (arg.getOwner() != &body)
        return false;
      leaves.push_back(arg.getArgNumber());
      return true;
    }
    auto add = x.getDefiningOp<arith::AddFOp>();
    if (!add || used.contains(add))
      return false;
    // The sum's one use: the next add, or (the whole sum) relu's ops,
    // which a select form reads twice (the compare and the select).
    const bool whole = x == v;
    if (!(add->hasOneUse() ||
          (whole && llvm::all_of(add->getUsers(), [&](Operation *user) {
             return used.contains(user);
           }))))
      return false;
    used.insert(add);
    return collect(add.getLhs()) && collect(add.getRhs());
  };
  if (!collect(v))
    return std::nullopt;
  SmallVector<unsigned, 3> expected{cArg};
  if (biasArg)
    expected.push_back(*biasArg);
  if (residualArg)
    expected.push_back(*residualArg);
  llvm::sort(leaves);
  llvm::sort(expected);
  if (leaves != expected ||
      (expected.size() == 1 && !relu && !reluMax && !leaky && !truncated &&
       smooth == Activation::Smooth::None))
    return std::nullopt;
  for (Operation &o : body.without_terminator())
    if (!used.contains(&o) && !isa<arith::ConstantOp>(o))
      return std::nullopt;
  BodyEpilogue e;
  e.activation.relu = relu;
  if (floor != 0.0f)
    e.activation.floor = floor;
  e.activation.bound = reluMax;
  e.activation.nanToFloor = nanToFloor;
  e.activation.leakySlope = leaky;
  e.activation.smooth = smooth;
  e.halfOutput = truncated;
  return e;
}

/// Where a bias operand read through `map` holds its one vector along loop
/// `biasDim` (of `size` elements in C): the position of its one dimension
/// that `map` indexes by that loop, every other dimension of size 1 (read
/// at 0, or by a loop whose range is 1: TOSA's broadcast of a 1x1xN bias
/// over a batch of 1). Nullopt for any other operand.
std::optional<unsigned> biasVectorPosition(AffineMap map, MemRefType type,
                                           unsigned biasDim, int64_t size) {
  if (!type || !type.getElementType().isF32() ||
      map.getNumResults() != type.getRank())
    return std::nullopt;
  std::optional<unsigned> position;
  for (unsigned i = 0; i < map.getNumResults(); ++i) {
    AffineExpr e = map.getResult(i);
    auto dim = dyn_cast<AffineDimExpr>(e);
    if (dim && dim.getPosition() == biasDim && !position &&
        (type.isDynamicDim(i) || ShapedType::isDynamic(size) ||
         type.getDimSize(i) == size)) {
      position = i;
      continue;
    }
    auto constant = dyn_cast<AffineConstantExpr>(e);
    if (type.getDimSize(i) != 1 || !(dim || (constant && !constant.getValue())))
      return std::nullopt;
  }
  return position;
}

/// The elements a subview takes of its source: [begin, end) per dimension.
using Box = SmallVector<std::pair<int64_t, int64_t>>;

/// The box of a subview of static offsets and sizes and unit strides.
std::optional<Box> staticBox(memref::SubViewOp view) {
  Box box;
  for (auto [offset, size, stride] :
       llvm::zip(view.getStaticOffsets(), view.getStaticSizes(),
                 view.getStaticStrides())) {
    if (ShapedType::isDynamic(offset) || ShapedType::isDynamic(size) ||
        stride != 1)
      return std::nullopt;
    box.push_back({offset, offset + size});
  }
  return box;
}

/// Whether `view`, a subview of the same source as `box`'s, takes other
/// elements than it (static, disjoint along some dimension).
bool takesOtherElements(const std::optional<Box> &box, memref::SubViewOp view) {
  auto other = staticBox(view);
  return box && other && llvm::any_of(llvm::zip(*box, *other), [](auto pair) {
           auto [a, b] = pair;
           return a.second <= b.first || b.second <= a.first;
         });
}

/// Whether no op that `inRange` selects touches the elements of `slice`, a
/// view of the fresh allocation `root` whose box in it is `box` where it
/// has one: every op that uses `root` or a view of it counts (views
/// included), except `slice`'s own subview op and direct users (the
/// caller's to judge) and the subviews of `root` that take other elements
/// than `box` (with their views and users: a concatenation's other
/// slices).
bool othersLeaveSlice(Value root, Value slice, const std::optional<Box> &box,
                      llvm::function_ref<bool(Operation *)> inRange) {
  SmallVector<Value> views{root};
  for (size_t i = 0; i < views.size(); ++i)
    for (Operation *user : views[i].getUsers()) {
      auto subview = dyn_cast<memref::SubViewOp>(user);
      if (i == 0 && subview && takesOtherElements(box, subview))
        continue;
      auto view = dyn_cast<ViewLikeOpInterface>(user);
      if (view && view.getViewSource() == views[i]) {
        views.push_back(user->getResult(0));
        if (user->getResult(0) == slice)
          continue;
      } else if (views[i] == slice) {
        continue;
      }
      if (inRange(user))
        return false;
    }
  return true;
}

} // namespace

OutputInit qimeng::outputInitOf(Value c, Operation *use,
                                std::optional<unsigned> biasDim) {
  // c, or a subview of it (a slice of a fresh buffer: a concatenation
  // written in place), is a fresh allocation.
  Value root = c;
  while (auto view = root.getDefiningOp<memref::SubViewOp>())
    root = view.getSource();
  if (!root.getDefiningOp<memref::AllocOp>())
    return {};
  Operation *last = nullptr;
  for (Operation *user : c.getUsers()) {
    if (user == use)
      continue;
    // A user nested in an op of the use's block (a consumer in an scf.if
    // after the contraction) counts as that op.
    user = use->getBlock()->findAncestorOpInBlock(*user);
    if (!user)
      return {};
    if (use->isBeforeInBlock(user))
      continue;
    if (!last || last->isBeforeInBlock(user))
      last = user;
  }
  // Through any other view of the allocation, nothing may touch c's
  // elements between the initialiser and `use`, and `use` may read none of
  // them: the initialiser is the kernel's, and its region is c's alone.
  // A subview of other elements (static and disjoint from c's, a
  // concatenation's other slices) may be used anywhere.
  // (c's own users are `last` and `use`, or outside them.)
  if (root != c && last) {
    auto cView = c.getDefiningOp<memref::SubViewOp>();
    std::optional<Box> cBox;
    if (cView && cView.getSource() == root)
      cBox = staticBox(cView);
    auto afterLastUpToUse = [&](Operation *user) {
      Operation *inBlock = use->getBlock()->findAncestorOpInBlock(*user);
      return !inBlock ||
             (last->isBeforeInBlock(inBlock) && !use->isBeforeInBlock(inBlock));
    };
    if (!othersLeaveSlice(root, c, cBox, afterLastUpToUse))
      return {};
  }
  if (auto fill = dyn_cast_or_null<linalg::FillOp>(last)) {
    OutputInit init;
    if (fill.hasPureBufferSemantics() && fill.getOutputs()[0] == c &&
        (matchPattern(fill.getInputs()[0], m_PosZeroFloat()) ||
         matchPattern(fill.getInputs()[0], m_Zero())))
      init.op = fill; // +0.0, or integer 0 for an s32 C
    return init;
  }
  if (!biasDim || !last)
    return {};
  const int64_t rank = cast<MemRefType>(c.getType()).getRank();
  Value bias;
  if (auto broadcast = dyn_cast<linalg::BroadcastOp>(last)) {
    SmallVector<int64_t> others;
    for (int64_t d = 0; d < rank; ++d)
      if (d != *biasDim)
        others.push_back(d);
    if (!broadcast.hasPureBufferSemantics() || broadcast.getInit() != c ||
        broadcast.getDimensions() != ArrayRef<int64_t>(others))
      return {};
    bias = broadcast.getInput();
  } else if (auto generic = dyn_cast<linalg::GenericOp>(last)) {
    if (!generic.hasPureBufferSemantics() || generic.getNumDpsInputs() != 1 ||
        generic.getNumDpsInits() != 1 ||
        generic.getDpsInitOperand(0)->get() != c ||
        generic.getNumLoops() != rank || generic.getNumReductionLoops() != 0)
      return {};
    OpOperand *in = generic.getDpsInputOperand(0);
    AffineMap inMap = generic.getMatchingIndexingMap(in);
    Block &body = generic.getRegion().front();
    auto yield = cast<linalg::YieldOp>(body.getTerminator());
    if (inMap.getNumResults() != 1 || !inMap.isProjectedPermutation() ||
        inMap.getDimPosition(0) != *biasDim ||
        !generic.getMatchingIndexingMap(generic.getDpsInitOperand(0))
             .isIdentity() ||
        body.getOperations().size() != 1 || yield->getNumOperands() != 1 ||
        yield->getOperand(0) != body.getArgument(0))
      return {};
    bias = in->get();
  } else {
    return {};
  }
  auto type = dyn_cast<MemRefType>(bias.getType());
  if (!type || type.getRank() != 1 || !type.getElementType().isF32())
    return {};
  OutputInit init;
  std::string why;
  auto strides = resolveStrides(bias, "bias", init.assumed, why,
                                /*allowDynamicSizes=*/true);
  if (failed(strides) || (*strides)[0] != 1 ||
      !noWritesBetween(last, use, bias))
    return {};
  init.op = last;
  init.bias = bias;
  return init;
}

namespace {

/// One generic of an epilogue: the consumer of `c` that adds to it and/or
/// applies relu, its bound or the rounding, and the buffer it writes.
struct EpilogueStep {
  linalg::GenericOp op;
  Value output;
  Value bias, residual;
  BodyEpilogue body;
  /// The output's allocation (or a slice's allocation and subview), where
  /// they come after the producer.
  SmallVector<Operation *, 2> opsToHoist;
  /// The output is a slice of a fresh buffer (with `sliceOutput`).
  bool slice = false;
  SmallVector<StrideAssumption> assumed;
};

/// Whether `output`, a subview of a fresh allocation, can be written by
/// `producer`'s kernel in `g`'s stead: from `producer` to `g` nothing
/// touches the allocation but through subviews that take other elements
/// (a concatenation's other slices, or bufferization's copies of them),
/// and `producer` reads none of it. The allocation and the subview op
/// dominate `producer` or go before it (appended to `hoist`, in order).
bool sliceIsWritable(Operation *producer, linalg::GenericOp g,
                     memref::SubViewOp slice, DominanceInfo &dominance,
                     SmallVectorImpl<Operation *> &hoist) {
  Value root = slice.getSource();
  auto alloc = root.getDefiningOp<memref::AllocOp>();
  auto box = staticBox(slice);
  if (!alloc || !box)
    return false;
  // From `producer` to the generic, both included (the generic touches the
  // buffer through the slice alone).
  auto fromProducerToG = [&](Operation *user) {
    Operation *inBlock = producer->getBlock()->findAncestorOpInBlock(*user);
    return !inBlock || (!inBlock->isBeforeInBlock(producer) &&
                        !g->isBeforeInBlock(inBlock));
  };
  if (!othersLeaveSlice(root, slice.getResult(), box, fromProducerToG))
    return false;
  for (Operation *op : {alloc.getOperation(), slice.getOperation()}) {
    if (dominance.properlyDominates(op, producer))
      continue;
    if (op->getBlock() != producer->getBlock() ||
        !llvm::all_of(op->getOperands(), [&](Value v) {
          return v == root || dominance.properlyDominates(v, producer);
        }))
      return false;
    hoist.push_back(op);
  }
  return true;
}

/// Whether `v` can be read where `producer` is: it dominates `producer`, or
/// it is a view (a subview, cast or reshape) or a constant made in
/// `producer`'s block after it from values that can (the slice of a bias
/// the consumer takes, made just before it); such ops are appended to
/// `hoist`, operands first, to move before `producer`.
bool availableAt(Value v, Operation *producer, DominanceInfo &dominance,
                 SmallVectorImpl<Operation *> &hoist) {
  if (dominance.properlyDominates(v, producer))
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != producer->getBlock() ||
      !(isa<ViewLikeOpInterface>(def) ||
        def->hasTrait<OpTrait::ConstantLike>()) ||
      !isMemoryEffectFree(def))
    return false;
  for (Value operand : def->getOperands())
    if (!availableAt(operand, producer, dominance, hoist))
      return false;
  if (!llvm::is_contained(hoist, def))
    hoist.push_back(def);
  return true;
}

std::optional<EpilogueStep>
matchEpilogueStep(Operation *producer, Value c, ArrayRef<Operation *> disregard,
                  unsigned biasDim, bool biasAllowed, Type halfType,
                  bool afterRelu, bool sliceOutput, bool leakyAllowed,
                  bool smoothAllowed) {
  auto cType = dyn_cast<MemRefType>(c.getType());
  if (!cType)
    return std::nullopt;
  const unsigned rank = cType.getRank();
  // The consumer: c's first generic user after `producer` that is not
  // disregarded. Every other user of c must be disregarded, a
  // deallocation, or (in place: c the generic's input and its output)
  // after the generic, c's users after it being the output's.
  linalg::GenericOp g;
  for (Operation *user : c.getUsers()) {
    auto generic = dyn_cast<linalg::GenericOp>(user);
    if (generic && !llvm::is_contained(disregard, user) &&
        generic->getBlock() == producer->getBlock() &&
        producer->isBeforeInBlock(generic) &&
        (!g || generic->isBeforeInBlock(g)))
      g = generic;
  }
  if (!g)
    return std::nullopt;
  const bool inPlace =
      g.getNumDpsInits() == 1 && g.getDpsInitOperand(0)->get() == c;
  for (Operation *user : c.getUsers()) {
    if (llvm::is_contained(disregard, user) || user == g.getOperation() ||
        isa<memref::DeallocOp>(user))
      continue;
    Operation *inBlock = g->getBlock()->findAncestorOpInBlock(*user);
    if (!inPlace || !inBlock || !g->isBeforeInBlock(inBlock))
      return std::nullopt;
  }
  if (!g.hasPureBufferSemantics() || g.getNumDpsInits() != 1 ||
      g.getNumLoops() != rank || g.getNumReductionLoops() != 0 ||
      g.getNumDpsInputs() < 1 || g.getNumDpsInputs() > 3)
    return std::nullopt;
  // C read whole and in place, the output written whole and in place.
  std::optional<unsigned> cArg, biasArg, residualArg, biasPosition;
  Value bias, residual;
  AffineMap identity =
      AffineMap::getMultiDimIdentityMap(rank, producer->getContext());
  for (OpOperand *input : g.getDpsInputOperands()) {
    AffineMap map = g.getMatchingIndexingMap(input);
    if (input->get() == c && map == identity && !cArg) {
      cArg = input->getOperandNumber();
      continue;
    }
    auto type = dyn_cast<MemRefType>(input->get().getType());
    // A residual: another f32 buffer of C's shape, read in place.
    if (map == identity && type && input->get() != c && !residualArg &&
        type.getShape() == cType.getShape() &&
        type.getElementType() == cType.getElementType() &&
        type.getElementType().isF32()) {
      residualArg = input->getOperandNumber();
      residual = input->get();
      continue;
    }
    // A bias along loop `biasDim`.
    if (!biasAllowed || biasArg)
      return std::nullopt;
    biasPosition =
        biasVectorPosition(map, type, biasDim, cType.getDimSize(biasDim));
    if (!biasPosition)
      return std::nullopt;
    biasArg = input->getOperandNumber();
    bias = input->get();
  }
  OpOperand *init = g.getDpsInitOperand(0);
  Value output = init->get();
  // A 16-bit output has c's shape, in its own layout.
  auto outputType = dyn_cast<MemRefType>(output.getType());
  const bool narrows = halfType && outputType && !inPlace &&
                       outputType.getElementType() == halfType &&
                       outputType.getShape() == cType.getShape();
  // A slice of a fresh buffer of c's shape and type in another layout (a
  // concatenation written in place), where the caller's kernel can write
  // one.
  memref::SubViewOp slice;
  if (sliceOutput && !inPlace && !narrows && outputType &&
      output.getType() != c.getType() &&
      outputType.getShape() == cType.getShape() &&
      outputType.getElementType() == cType.getElementType())
    slice = output.getDefiningOp<memref::SubViewOp>();
  if (!cArg || g.getMatchingIndexingMap(init) != identity ||
      (output.getType() != c.getType() && !narrows && !slice))
    return std::nullopt;
  auto body = epilogueOfBody(g, *cArg, biasArg, residualArg,
                             narrows ? halfType : Type(), afterRelu,
                             leakyAllowed, smoothAllowed);
  if (!body || body->halfOutput != narrows)
    return std::nullopt;
  DominanceInfo dominance(producer->getParentOp());
  EpilogueStep step;
  // The output: c itself (the generic rewrites the product in place, as
  // one-shot-bufferize makes of a tensor.empty the fill and the consumer
  // share), or a fresh buffer that only the generic uses up to the
  // generic (returns and deallocations come after), which the kernel now
  // writes where `producer` was; or a slice of a fresh buffer that nothing
  // else touches from `producer` to the generic.
  auto alloc = output.getDefiningOp<memref::AllocOp>();
  if (slice) {
    if (!sliceIsWritable(producer, g, slice, dominance, step.opsToHoist))
      return std::nullopt;
    step.slice = true;
  } else if (!alloc && !inPlace) {
    return std::nullopt;
  }
  for (Operation *user : output.getUsers()) {
    if (inPlace)
      break; // c's users were checked above
    if (user == g.getOperation())
      continue;
    Operation *inBlock = g->getBlock()->findAncestorOpInBlock(*user);
    if (!inBlock || !g->isBeforeInBlock(inBlock))
      return std::nullopt;
  }
  if (!inPlace && !slice &&
      !dominance.properlyDominates(alloc.getOperation(), producer)) {
    if (alloc->getBlock() != producer->getBlock() ||
        !llvm::all_of(alloc->getOperands(), [&](Value v) {
          return dominance.properlyDominates(v, producer);
        }))
      return std::nullopt;
    step.opsToHoist.push_back(alloc);
  }
  // The bias, read where `producer` was instead of where the generic was.
  if (bias) {
    std::string why;
    auto strides = resolveStrides(bias, "bias", step.assumed, why,
                                  /*allowDynamicSizes=*/true);
    if (failed(strides) || (*strides)[*biasPosition] != 1 ||
        !availableAt(bias, producer, dominance, step.opsToHoist) ||
        !noWritesBetween(producer, g, bias))
      return std::nullopt;
    step.bias = bias;
  }
  // The residual, copied into the output where `producer` was.
  if (residual) {
    if (residual == output ||
        !availableAt(residual, producer, dominance, step.opsToHoist) ||
        !noWritesBetween(producer, g, residual))
      return std::nullopt;
    step.residual = residual;
  }
  step.op = g;
  step.output = output;
  step.body = *body;
  return step;
}

} // namespace

std::optional<ElementwiseEpilogue> qimeng::matchElementwiseEpilogue(
    Operation *producer, Value c, Operation *cInit, unsigned biasDim,
    bool biasAllowed, ArrayRef<Operation *> goingAway, Type halfType,
    bool sliceOutput, bool leakyAllowed, bool smoothAllowed) {
  ElementwiseEpilogue e;
  SmallVector<Operation *> disregard{producer};
  if (cInit)
    disregard.push_back(cInit);
  llvm::append_range(disregard, goingAway);
  // The chain: each generic reads the previous one's output. The kernel
  // computes min(relu(c + residual + bias), bound) and then rounds: a
  // generic that adds must come before relu, its bound and the rounding;
  // each part comes once; the rounding ends the chain.
  while (!e.halfOutput) {
    Activation &act = e.activation;
    const bool afterRelu = act.relu && !act.bound;
    std::optional<EpilogueStep> step =
        matchEpilogueStep(producer, e.ops.empty() ? c : e.output, disregard,
                          biasDim, biasAllowed && !e.bias, halfType, afterRelu,
                          sliceOutput, leakyAllowed, smoothAllowed);
    if (!step)
      break;
    const BodyEpilogue &b = step->body;
    const bool adds = step->bias || step->residual;
    const Activation &next = b.activation;
    if ((adds && act.any()) || (step->residual && e.residual) ||
        (next.any() && act.any()) || (next.bound && act.bound))
      break;
    // A bound alone after relu: above relu's floor.
    if (next.bound && !next.relu && !(*next.bound > act.floor.value_or(0.0f)))
      break;
    // A 16-bit output takes no residual (GemmMatcher.cpp): a chain with
    // one stops before its rounding, leaving the f32 part fused.
    if (b.halfOutput && !e.ops.empty() && (e.residual || step->residual))
      break;
    e.ops.push_back(step->op);
    e.output = step->output;
    if (step->bias)
      e.bias = step->bias;
    if (step->residual)
      e.residual = step->residual;
    act.relu = act.relu || next.relu;
    if (next.relu) {
      act.floor = next.floor;
      act.nanToFloor = next.nanToFloor;
    }
    if (next.bound)
      act.bound = next.bound;
    if (next.leakySlope)
      act.leakySlope = next.leakySlope;
    if (next.smooth != Activation::Smooth::None)
      act.smooth = next.smooth;
    e.halfOutput = b.halfOutput;
    llvm::append_range(e.opsToHoist, step->opsToHoist);
    llvm::append_range(e.assumed, step->assumed);
    disregard.push_back(step->op);
    // A slice is the chain's last output (its buffer is read later).
    if (step->slice)
      break;
  }
  if (e.ops.empty())
    return std::nullopt;
  return e;
}

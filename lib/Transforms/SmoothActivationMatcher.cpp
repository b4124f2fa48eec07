//===- SmoothActivationMatcher.cpp ----------------------------------------===//
#include "SmoothActivationMatcher.h"
#include "ConstantForms.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include <cmath>
#include <map>

using namespace mlir;
using namespace qimeng;

namespace {

/// A polynomial in x and one term t, its coefficients by (power of x,
/// power of t); x up to its cube, t up to its first power.
using Poly = std::map<std::pair<int, int>, double>;
constexpr int kMaxXPower = 3;
constexpr int kMaxTermPower = 1;

Poly constantPoly(double c) { return Poly{{{0, 0}, c}}; }

Poly scaled(const Poly &a, double s) {
  Poly r;
  for (auto [monomial, c] : a)
    r[monomial] = c * s;
  return r;
}

Poly sum(const Poly &a, const Poly &b, double bSign) {
  Poly r = a;
  for (auto [monomial, c] : b)
    r[monomial] += bSign * c;
  return r;
}

std::optional<Poly> product(const Poly &a, const Poly &b) {
  Poly r;
  for (auto [ma, ca] : a)
    for (auto [mb, cb] : b) {
      if (ca == 0.0 || cb == 0.0)
        continue;
      std::pair<int, int> m{ma.first + mb.first, ma.second + mb.second};
      if (m.first > kMaxXPower || m.second > kMaxTermPower)
        return std::nullopt;
      r[m] += ca * cb;
    }
  return r;
}

/// Whether `p` is `want` up to a relative 1e-6 in each coefficient (f32
/// roundings of the constants), zero coefficients aside.
bool near(const Poly &p, const Poly &want) {
  Poly nonzero;
  for (auto [m, c] : p)
    if (c != 0.0)
      nonzero[m] = c;
  if (nonzero.size() != want.size())
    return false;
  for (auto [m, c] : want) {
    auto it = nonzero.find(m);
    if (it == nonzero.end() ||
        !(std::fabs(it->second - c) <= 1e-6 * std::fabs(c)))
      return false;
  }
  return true;
}

/// Reads a value of the body as a Poly in `x` and `term` (a value, or
/// with `logistic` the term 1 / (1 + term) that a division by 1 + term
/// makes), recording the ops it reads through.
class PolyReader {
public:
  PolyReader(Value x, Value term, bool logistic)
      : x(x), term(term), logistic(logistic) {}

  std::optional<Poly> read(Value v) {
    if (v == x)
      return Poly{{{1, 0}, 1.0}};
    if (term && !logistic && v == term)
      return Poly{{{0, 1}, 1.0}};
    auto found = memo.find(v);
    if (found != memo.end())
      return found->second;
    std::optional<Poly> p = readOp(v);
    memo[v] = p;
    if (p && v.getDefiningOp() && !matchPattern(v, m_Constant()))
      ops.insert(v.getDefiningOp());
    return p;
  }

  llvm::SmallPtrSet<Operation *, 16> ops;

private:
  std::optional<Poly> readOp(Value v) {
    Operation *op = v.getDefiningOp();
    if (!op || !v.getType().isF32())
      return std::nullopt;
    FloatAttr attr;
    if (matchPattern(v, m_Constant(&attr))) {
      if (!attr.getValue().isFinite())
        return std::nullopt;
      return constantPoly(attr.getValue().convertToDouble());
    }
    auto binary = [&](Operation *o) -> std::optional<std::pair<Poly, Poly>> {
      std::optional<Poly> a = read(o->getOperand(0));
      std::optional<Poly> b = a ? read(o->getOperand(1)) : std::nullopt;
      if (!b)
        return std::nullopt;
      return std::pair(*a, *b);
    };
    if (isa<arith::AddFOp, arith::SubFOp>(op)) {
      auto ab = binary(op);
      if (!ab)
        return std::nullopt;
      return sum(ab->first, ab->second, isa<arith::SubFOp>(op) ? -1.0 : 1.0);
    }
    if (isa<arith::MulFOp>(op)) {
      auto ab = binary(op);
      return ab ? product(ab->first, ab->second) : std::nullopt;
    }
    if (auto neg = dyn_cast<arith::NegFOp>(op)) {
      std::optional<Poly> a = read(neg.getOperand());
      return a ? std::optional<Poly>(scaled(*a, -1.0)) : std::nullopt;
    }
    if (auto sqrt = dyn_cast<math::SqrtOp>(op)) {
      // Of a constant (torch-mlir's math.sqrt(2.0)).
      std::optional<Poly> a = read(sqrt.getOperand());
      if (!a || a->size() != 1 || !a->count({0, 0}) || !(a->at({0, 0}) > 0.0))
        return std::nullopt;
      return constantPoly(std::sqrt(a->at({0, 0})));
    }
    if (auto div = dyn_cast<arith::DivFOp>(op)) {
      std::optional<Poly> a = read(div.getLhs());
      if (!a)
        return std::nullopt;
      // By a constant.
      std::optional<Poly> b = read(div.getRhs());
      if (b && b->size() == 1 && b->count({0, 0}) && b->at({0, 0}) != 0.0)
        return scaled(*a, 1.0 / b->at({0, 0}));
      // By 1 + term: times the logistic term.
      if (!logistic)
        return std::nullopt;
      PolyReader denominator(x, term, /*logistic=*/false);
      std::optional<Poly> d = denominator.read(div.getRhs());
      if (!d || !near(*d, Poly{{{0, 0}, 1.0}, {{0, 1}, 1.0}}))
        return std::nullopt;
      ops.insert(denominator.ops.begin(), denominator.ops.end());
      return product(*a, Poly{{{0, 1}, 1.0}});
    }
    // x^2 or x^3 as math.powf or math.fpowi with a constant exponent.
    std::optional<int> exponent;
    Value base;
    if (auto pow = dyn_cast<math::PowFOp>(op)) {
      FloatAttr e;
      if (matchPattern(pow.getRhs(), m_Constant(&e)) &&
          (e.getValue().convertToDouble() == 2.0 ||
           e.getValue().convertToDouble() == 3.0))
        exponent = int(e.getValue().convertToDouble());
      base = pow.getLhs();
    } else if (auto pow = dyn_cast<math::FPowIOp>(op)) {
      IntegerAttr e;
      if (matchPattern(pow.getRhs(), m_Constant(&e)) &&
          (e.getInt() == 2 || e.getInt() == 3))
        exponent = int(e.getInt());
      base = pow.getLhs();
    }
    if (!exponent)
      return std::nullopt;
    std::optional<Poly> a = read(base);
    std::optional<Poly> r = a;
    for (int i = 1; r && i < *exponent; ++i)
      r = product(*r, *a);
    return r;
  }

  Value x, term;
  bool logistic;
  llvm::DenseMap<Value, std::optional<Poly>> memo;
};

/// The ops of `root`'s expression in its block (through every op with
/// results, up to 64), and the values it reads, the root's side first.
void expressionOf(Value root, llvm::SetVector<Operation *> &ops,
                  llvm::SetVector<Value> &values) {
  llvm::SmallVector<Value> work{root};
  Block *block = root.getParentBlock();
  while (!work.empty() && ops.size() < 64) {
    Value v = work.front();
    work.erase(work.begin());
    if (!values.insert(v))
      continue;
    Operation *op = v.getDefiningOp();
    if (!op || op->getBlock() != block || matchPattern(v, m_Constant()))
      continue;
    ops.insert(op);
    llvm::append_range(work, op->getOperands());
  }
}

/// `v` as clamp(s, lo, hi) with finite f32 constants lo < hi, the ops
/// (besides the constants) added to `ops`: min(max(s, lo), hi) or
/// max(min(s, hi), lo) with arith's maximumf, maxnumf, minimumf and
/// minnumf (constants on either side), or torch-mlir's aten.clamp:
/// select(cmpf ugt|ogt(m, hi), hi, m) of m = select(cmpf ult|olt(s, lo),
/// lo, s). Each form's NaN rule differs; the caller's activation keeps a
/// NaN whatever the clamp made of it.
struct Clamp {
  Value s;
  double lo, hi;
};

/// One side of a clamp: (the constant, the other operand) of a max
/// (`upper` false) or min (`upper` true) against a finite constant
/// (ConstantForms.h), or of the select form that picks the constant when
/// the operand is past it (ult or olt below, ugt or ogt above), its ops
/// added to `ops`.
std::optional<std::pair<float, Value>>
boundOf(Value v, bool upper, llvm::SmallPtrSetImpl<Operation *> &ops) {
  Operation *op = v.getDefiningOp();
  if (!op)
    return std::nullopt;
  if (upper ? isa<arith::MinimumFOp, arith::MinNumFOp>(op)
            : isa<arith::MaximumFOp, arith::MaxNumFOp>(op)) {
    auto found = withConstant(op->getOperand(0), op->getOperand(1));
    if (found)
      ops.insert(op);
    return found;
  }
  using P = arith::CmpFPredicate;
  const P below[] = {P::ULT, P::OLT}, above[] = {P::UGT, P::OGT};
  for (P pred : upper ? above : below)
    if (auto found = selectForm(v, pred, /*constantIfTrue=*/true, ops))
      return found;
  return std::nullopt;
}

std::optional<Clamp> clampOf(Value v, llvm::SmallPtrSetImpl<Operation *> &ops) {
  for (bool upperOutside : {true, false}) {
    llvm::SmallPtrSet<Operation *, 4> mine;
    auto outer = boundOf(v, upperOutside, mine);
    if (!outer)
      continue;
    auto inner = boundOf(outer->second, !upperOutside, mine);
    if (!inner)
      continue;
    const double lo = upperOutside ? inner->first : outer->first;
    const double hi = upperOutside ? outer->first : inner->first;
    if (!(lo < hi))
      continue;
    ops.insert(mine.begin(), mine.end());
    return Clamp{inner->second, lo, hi};
  }
  return std::nullopt;
}

constexpr double kInvSqrt2 = 0.70710678118654752;
constexpr double kSqrt2OverPi = 0.79788456080286536;
constexpr double kGeluCubic = 0.044715;

} // namespace

/// hardswish: x * T / hi of the clamp T = clamp(a(x), 0, hi) with a(x) /
/// hi = x / 6 + 1/2 (torch's x * relu6(x + 3) / 6, hardsigmoid's clamp
/// of x / 6 + 1/2 to [0, 1] times x), any association; hardsigmoid: T / hi
/// alone (torch's relu6(x + 3) / 6, the clamp of x / 6 + 1/2 to [0, 1]).
static std::optional<std::pair<Activation::Smooth, Value>>
matchHardSwishOrSigmoid(Value v, const llvm::SetVector<Operation *> &ops,
                        const llvm::SetVector<Value> &values,
                        llvm::SmallPtrSetImpl<Operation *> &used) {
  for (Operation *op : ops) {
    if (op->getNumResults() != 1)
      continue;
    llvm::SmallPtrSet<Operation *, 8> clampOps;
    std::optional<Clamp> clamp = clampOf(op->getResult(0), clampOps);
    if (!clamp || clamp->lo != 0.0)
      continue;
    Value term = op->getResult(0);
    for (Value x : values) {
      if (x == term || matchPattern(x, m_Constant()) || !x.getType().isF32())
        continue;
      PolyReader inner(x, Value(), /*logistic=*/false);
      std::optional<Poly> a = inner.read(clamp->s);
      if (!a || !near(scaled(*a, 1.0 / clamp->hi),
                      Poly{{{1, 0}, 1.0 / 6.0}, {{0, 0}, 0.5}}))
        continue;
      PolyReader outer(x, term, /*logistic=*/false);
      std::optional<Poly> o = outer.read(v);
      std::optional<Activation::Smooth> found;
      if (o && near(*o, Poly{{{1, 1}, 1.0 / clamp->hi}}))
        found = Activation::Smooth::HardSwish;
      else if (o && near(*o, Poly{{{0, 1}, 1.0 / clamp->hi}}))
        found = Activation::Smooth::HardSigmoid;
      if (!found)
        continue;
      used.insert(inner.ops.begin(), inner.ops.end());
      used.insert(outer.ops.begin(), outer.ops.end());
      used.insert(clampOps.begin(), clampOps.end());
      return std::pair(*found, x);
    }
  }
  return std::nullopt;
}

/// Whether `v` reads as x alone (perhaps times 1: torch's beta; x - 0),
/// its ops added to `ops`.
static bool readsAsX(Value v, Value x,
                     llvm::SmallPtrSetImpl<Operation *> &ops) {
  PolyReader reader(x, Value(), /*logistic=*/false);
  std::optional<Poly> p = reader.read(v);
  if (!p || !near(*p, Poly{{{1, 0}, 1.0}}))
    return false;
  ops.insert(reader.ops.begin(), reader.ops.end());
  return true;
}

/// Whether `c` is the f32 constant 1 (ConstantForms.h).
static bool isOne(Value c) { return finiteConstant(c) == 1.0f; }

/// The select(cmpf P(a, b), t, f) that `op` is, P one of `predicates`
/// (a frontend's guard around a formula: torch's softplus threshold,
/// JAX's NaN test), both added to `ops`; or nulls.
static std::pair<arith::SelectOp, arith::CmpFOp>
guardOf(Operation *op, std::initializer_list<arith::CmpFPredicate> predicates,
        llvm::SmallPtrSetImpl<Operation *> &ops) {
  auto select = dyn_cast_or_null<arith::SelectOp>(op);
  auto cmp = select ? select.getCondition().getDefiningOp<arith::CmpFOp>()
                    : arith::CmpFOp();
  if (!cmp || !llvm::is_contained(predicates, cmp.getPredicate()))
    return {};
  ops.insert(select);
  ops.insert(cmp);
  return {select, cmp};
}

/// Whether `v` is softplus(x) as frontends write it, its ops added to
/// `ops`: log1p(exp(x)) (torch-mlir's) or log(1 + exp(x)) (ONNX's), either
/// perhaps divided or multiplied by 1 (torch's beta), perhaps behind
/// torch's threshold select(cmpf ogt|ugt(x, t), x, that) with a t of at
/// least `minThreshold` (one past which the result is the same in f32).
static bool isSoftplusOf(Value v, Value x, double minThreshold,
                         llvm::SmallPtrSetImpl<Operation *> &ops) {
  llvm::SmallPtrSet<Operation *, 8> mine;
  Operation *op = v.getDefiningOp();
  if (isa_and_nonnull<arith::SelectOp>(op)) {
    auto [select, cmp] = guardOf(
        op, {arith::CmpFPredicate::OGT, arith::CmpFPredicate::UGT}, mine);
    std::optional<float> threshold =
        cmp ? finiteConstant(cmp.getRhs()) : std::nullopt;
    if (!threshold || !(*threshold >= minThreshold) ||
        !readsAsX(cmp.getLhs(), x, mine) ||
        !readsAsX(select.getTrueValue(), x, mine))
      return false;
    op = select.getFalseValue().getDefiningOp();
  }
  if (isa_and_nonnull<arith::DivFOp, arith::MulFOp>(op)) {
    if (!isOne(op->getOperand(1)))
      return false;
    mine.insert(op);
    op = op->getOperand(0).getDefiningOp();
  }
  Value e;
  if (auto log1p = dyn_cast_or_null<math::Log1pOp>(op)) {
    e = log1p.getOperand();
  } else if (auto log = dyn_cast_or_null<math::LogOp>(op)) {
    auto add = log.getOperand().getDefiningOp<arith::AddFOp>();
    if (!add)
      return false;
    e = isOne(add.getLhs())   ? add.getRhs()
        : isOne(add.getRhs()) ? add.getLhs()
                              : Value();
    mine.insert(add);
  }
  auto exp = e ? e.getDefiningOp<math::ExpOp>() : math::ExpOp();
  if (!exp || !readsAsX(exp.getOperand(), x, mine))
    return false;
  mine.insert(op);
  mine.insert(exp);
  ops.insert(mine.begin(), mine.end());
  return true;
}

/// Whether `v` is -|d| (math.absf's negf, its product with -1, or 0 minus
/// it) of a d that reads as x, its ops added to `ops`.
static bool isMinusAbsOf(Value v, Value x,
                         llvm::SmallPtrSetImpl<Operation *> &ops) {
  Operation *op = v.getDefiningOp();
  Value abs;
  if (auto neg = dyn_cast_or_null<arith::NegFOp>(op)) {
    abs = neg.getOperand();
  } else if (auto mul = dyn_cast_or_null<arith::MulFOp>(op)) {
    auto found = withConstant(mul.getLhs(), mul.getRhs());
    if (found && found->first == -1.0f)
      abs = found->second;
  } else if (auto sub = dyn_cast_or_null<arith::SubFOp>(op)) {
    if (matchPattern(sub.getLhs(), m_AnyZeroFloat()))
      abs = sub.getRhs();
  }
  auto absf = abs ? abs.getDefiningOp<math::AbsFOp>() : math::AbsFOp();
  if (!absf || !readsAsX(absf.getOperand(), x, ops))
    return false;
  ops.insert(op);
  ops.insert(absf);
  return true;
}

/// Whether `v` is JAX's softplus, jnp.logaddexp(x, 0): max(x, 0) +
/// log1p(exp(-|x - 0|)) (arith.maximumf or maxnumf, the sum either way
/// round), perhaps behind its NaN select(cmpf une|uno(d, d), x + 0, that)
/// (the sum is NaN for a NaN x either way), its ops added to `ops`.
static bool isLogAddExpOf(Value v, Value x,
                          llvm::SmallPtrSetImpl<Operation *> &ops) {
  llvm::SmallPtrSet<Operation *, 8> mine;
  Operation *op = v.getDefiningOp();
  if (isa_and_nonnull<arith::SelectOp>(op)) {
    auto [select, cmp] = guardOf(
        op, {arith::CmpFPredicate::UNE, arith::CmpFPredicate::UNO}, mine);
    if (!cmp || !readsAsX(cmp.getLhs(), x, mine) ||
        !readsAsX(cmp.getRhs(), x, mine) ||
        !readsAsX(select.getTrueValue(), x, mine))
      return false;
    op = select.getFalseValue().getDefiningOp();
  }
  auto add = dyn_cast_or_null<arith::AddFOp>(op);
  if (!add)
    return false;
  for (auto [m, l] : {std::pair(add.getLhs(), add.getRhs()),
                      std::pair(add.getRhs(), add.getLhs())}) {
    Operation *max = m.getDefiningOp();
    auto log1p = l.getDefiningOp<math::Log1pOp>();
    if (!isa_and_nonnull<arith::MaximumFOp, arith::MaxNumFOp>(max) || !log1p)
      continue;
    auto exp = log1p.getOperand().getDefiningOp<math::ExpOp>();
    llvm::SmallPtrSet<Operation *, 8> side = mine;
    Value other = matchPattern(max->getOperand(1), m_PosZeroFloat())
                      ? max->getOperand(0)
                  : matchPattern(max->getOperand(0), m_PosZeroFloat())
                      ? max->getOperand(1)
                      : Value();
    if (!other || !exp || !readsAsX(other, x, side) ||
        !isMinusAbsOf(exp.getOperand(), x, side))
      continue;
    side.insert(max);
    side.insert(log1p);
    side.insert(exp);
    side.insert(add);
    ops.insert(side.begin(), side.end());
    return true;
  }
  return false;
}

/// softplus alone (isSoftplusOf, a threshold from 15 up: past 15,
/// log1p(e^-x) is below half an ulp of x; or isLogAddExpOf: Mamba's dt
/// projection in torch or JAX). Or mish: x *
/// tanh(softplus(x)), any association of the product, a threshold from 10
/// up: past 9.1 tanh of either rounds to 1 in f32, mish(x) = x either way.
static std::optional<std::pair<Activation::Smooth, Value>>
matchSoftplusOrMish(Value v, const llvm::SetVector<Operation *> &ops,
                    const llvm::SetVector<Value> &values,
                    llvm::SmallPtrSetImpl<Operation *> &used) {
  for (Value x : values) {
    if (x == v || matchPattern(x, m_Constant()) || !x.getType().isF32())
      continue;
    llvm::SmallPtrSet<Operation *, 16> softplus;
    if (isSoftplusOf(v, x, /*minThreshold=*/15.0, softplus) ||
        isLogAddExpOf(v, x, softplus)) {
      used.insert(softplus.begin(), softplus.end());
      return std::pair(Activation::Smooth::Softplus, x);
    }
  }
  for (Operation *op : ops) {
    auto tanh = dyn_cast<math::TanhOp>(op);
    if (!tanh)
      continue;
    Value term = tanh.getResult();
    for (Value x : values) {
      if (x == term || matchPattern(x, m_Constant()) || !x.getType().isF32())
        continue;
      llvm::SmallPtrSet<Operation *, 16> softplus;
      if (!isSoftplusOf(tanh.getOperand(), x, /*minThreshold=*/10.0, softplus))
        continue;
      PolyReader outer(x, term, /*logistic=*/false);
      std::optional<Poly> o = outer.read(v);
      if (!o || !near(*o, Poly{{{1, 1}, 1.0}}))
        continue;
      used.insert(softplus.begin(), softplus.end());
      used.insert(outer.ops.begin(), outer.ops.end());
      used.insert(tanh);
      return std::pair(Activation::Smooth::Mish, x);
    }
  }
  return std::nullopt;
}

std::optional<std::pair<Activation::Smooth, Value>>
qimeng::matchSmoothActivation(Value v,
                              llvm::SmallPtrSetImpl<Operation *> &used) {
  using Smooth = Activation::Smooth;
  if (!v.getType().isF32())
    return std::nullopt;
  llvm::SetVector<Operation *> ops;
  llvm::SetVector<Value> values;
  expressionOf(v, ops, values);
  if (auto found = matchSoftplusOrMish(v, ops, values, used))
    return found;
  Operation *special = nullptr;
  for (Operation *op : ops)
    if (isa<math::ErfOp, math::TanhOp, math::ExpOp>(op)) {
      if (special)
        return std::nullopt; // one transcendental term
      special = op;
    }
  if (!special)
    return matchHardSwishOrSigmoid(v, ops, values, used);
  Value argument = special->getOperand(0), term = special->getResult(0);
  const bool exp = isa<math::ExpOp>(special);
  const Poly gelu{{{1, 0}, 0.5}, {{1, 1}, 0.5}};
  // The argument of tanh in gelu_tanh, and of exp in its logistic form.
  const Poly tanhArgument{{{1, 0}, kSqrt2OverPi},
                          {{3, 0}, kSqrt2OverPi * kGeluCubic}};
  const Poly expArgument = scaled(tanhArgument, -2.0);
  for (Value x : values) {
    if (x == term || matchPattern(x, m_Constant()) || !x.getType().isF32())
      continue;
    PolyReader inner(x, Value(), /*logistic=*/false);
    std::optional<Poly> a = inner.read(argument);
    if (!a)
      continue;
    PolyReader outer(x, term, /*logistic=*/exp);
    std::optional<Poly> o = outer.read(v);
    if (!o)
      continue;
    std::optional<Smooth> found;
    if (isa<math::ErfOp>(special) && near(*a, Poly{{{1, 0}, kInvSqrt2}}) &&
        near(*o, gelu))
      found = Smooth::GeluErf;
    else if (isa<math::TanhOp>(special) && near(*a, tanhArgument) &&
             near(*o, gelu))
      found = Smooth::GeluTanh;
    else if (isa<math::TanhOp>(special) && near(*a, Poly{{{1, 0}, 1.0}}) &&
             near(*o, Poly{{{0, 1}, 1.0}}))
      found = Smooth::Tanh;
    else if (exp && near(*a, Poly{{{1, 0}, -1.0}}) &&
             near(*o, Poly{{{0, 1}, 1.0}}))
      found = Smooth::Sigmoid;
    else if (exp && near(*a, Poly{{{1, 0}, -1.0}}) &&
             near(*o, Poly{{{1, 1}, 1.0}}))
      found = Smooth::Silu;
    else if (exp && near(*a, expArgument) && near(*o, Poly{{{1, 1}, 1.0}}))
      found = Smooth::GeluTanh;
    if (!found)
      continue;
    used.insert(inner.ops.begin(), inner.ops.end());
    used.insert(outer.ops.begin(), outer.ops.end());
    used.insert(special);
    return std::pair(*found, x);
  }
  return std::nullopt;
}

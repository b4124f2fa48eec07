"""The smooth activations' numerics (fields.SMOOTH_ACTIVATIONS), shared by
the ISA writers: their constants, and each activation as a short program
of vector operations that each writer spells in its instructions
(x86.py's AVX2 and AVX-512, its constants memory operands; aarch64.py's
NEON and SVE; riscv.py's RVV).

The formulas:
 - e^z, as Cephes' expf: z clamped to [-87.34, 88] (2^n stays a normal
   number), n = round(z log2(e)), r = z - n ln(2) in two parts (Cody and
   Waite), e^r by its degree-7 polynomial, 2^n added to the exponent
   field;
 - sigmoid 1 / (1 + e^-x), silu x / (1 + e^-x);
 - gelu_tanh: 0.5 x (1 + tanh(u)) = x / (1 + e^-2u), -2u = x (-k1 - k3
   x^2) with k1 = 2 sqrt(2/pi), k3 = 0.044715 k1;
 - gelu_erf: erfc(y) = t (a1 + a2 t + .. + a5 t^4) e^-y^2, t = 1 / (1 + p
   y), y = |x| / sqrt(2) (Abramowitz and Stegun 7.1.26: erf to 1.5e-7
   absolute, as oneDNN's gelu_erf), and gelu = max(x, 0) - |x| erfc(y) / 2
   with |x| at most 10 in the second term (past it the term is below
   1e-22, and the bound keeps an infinite x from making it inf * 0);
 - tanh: -expm1(-2x) / (2 + expm1(-2x)), which has no cancellation
   anywhere (tanh(x) ~ x near 0 to a few ulps, +-1 far out): expm1(z) =
   2^n p(r) + (2^n - 1) from e^z's own reduction, p(r) = e^r - 1 = r T(r)
   its polynomial without the constant term, 2^n - 1 exact;
 - hardswish (MobileNetV3's): x min(max(x + 3, 0), 6) / 6, torch's own
   association (x times the clamp, then divided by 6), NaN kept by the
   product with x and -inf giving NaN (-inf * 0) as there;
 - mish (YOLOv4's): x tanh(softplus(x)) = x n / (n + 2), n = u (u + 2), u
   = e^min(x, 20): tanh(log(1 + u)) = ((1 + u)^2 - 1) / ((1 + u)^2 + 1)
   without a logarithm; past 20 the ratio rounds to 1 (torch's softplus
   threshold), and the bound keeps an infinite x from making it inf / inf;
   NaN kept by the product with x;
 - hardsigmoid (MobileNetV3's gates): min(max(x + 3, 0), 6) / 6, torch's
   relu6(x + 3) / 6, NaN put back after the clamp (RVV's min and max drop
   it);
 - softplus (Mamba's dt projection): log(1 + e^x) = max(x, 0) + log1p(e),
   e = e^-|x| in (0, 1], log1p(e) = 2 atanh(s) = 2 s (1 + s^2 / 3 + s^4 /
   5 + .. + s^14 / 15), s = e / (2 + e) at most 1/3 (the series' next term
   1e-9 of the sum): no logarithm, no cancellation, no overflow; NaN kept
   by relu's max.

A program (`program(name)`) is a list of operations, each a tuple (op,
destination, operands...) on the roles "x" (the value, replaced by its
activation), "a", "b" and "t" (scratch vectors) and constants
(`Const(name)`). The ops:

    neg d s; abs d s; round d s (to nearest, even on ties, as a float)
    add d s1 s2; sub d s1 s2; mul d s1 s2; div d s1 s2 (either may be
        a constant, not both)
    fma d s1 s2: d += s1 * s2, fused (registers)
    min d s c; max d s c: with a constant; a NaN s may give the constant
        or NaN (RVV's vfmin and vfmax drop a NaN; where it matters, the
        program keeps it by the other ops)
    fms d s c: d -= s * c, fused
    exp2_bits d s: d = (s as an integer) << 23 (s integral)
    iadd d s1 s2: integer add (s2 may be a constant: its bits)
    horner d v c0 c1 ..: d = ((c0 v + c1) v + ..), fused steps (d is not
        v)
    relu d s: max(s, 0) keeping a NaN (d is not s)
    nan_mask d s, or_mask d m: on ISAs whose min and max drop a NaN, m =
        all ones where s is NaN, then d |= m (sigmoid's and tanh's NaN,
        which their clamped exponentials would lose); nothing elsewhere

Writers that need a fourth scratch vector (a Horner step into another
register, a constant loaded into one) keep it to themselves; x86's loads
a constant into a role the program no longer needs instead.
"""

from collections import namedtuple

Const = namedtuple("Const", "name")

_K1 = 2.0 * (2.0 / 3.141592653589793) ** 0.5
CONSTANTS = (
    ("one", 1.0), ("minus_one", -1.0), ("half", 0.5), ("minus_half", -0.5),
    ("exp_hi", 88.0), ("exp_lo", -87.33654), ("log2e", 1.44269504088896341),
    ("ln2_hi", 0.693359375), ("ln2_lo", -2.12194440e-4),
    ("exp_p0", 1.9875691500e-4), ("exp_p1", 1.3981999507e-3),
    ("exp_p2", 8.3334519073e-3), ("exp_p3", 4.1665795894e-2),
    ("exp_p4", 1.6666665459e-1), ("exp_p5", 5.0000001201e-1),
    ("minus_k1", -_K1), ("minus_k3", -0.044715 * _K1),
    ("erf_p", 0.3275911 / 2.0 ** 0.5), ("erf_a1", 0.254829592),
    ("erf_a2", -0.284496736), ("erf_a3", 1.421413741),
    ("erf_a4", -1.453152027), ("erf_a5", 1.061405429), ("erf_x_max", 10.0),
    ("zero", 0.0), ("three", 3.0), ("six", 6.0), ("minus_two", -2.0),
    ("two", 2.0), ("mish_x_max", 20.0),
    ("atanh_2_15", 2.0 / 15.0), ("atanh_2_13", 2.0 / 13.0),
    ("atanh_2_11", 2.0 / 11.0), ("atanh_2_9", 2.0 / 9.0),
    ("atanh_2_7", 2.0 / 7.0), ("atanh_2_5", 2.0 / 5.0),
    ("atanh_2_3", 2.0 / 3.0))
VALUES = dict(CONSTANTS)
#: |x| by a mask of the sign (x86's vandps; the others have an abs).
ABS_MASK = 0x7fffffff


def _exp_reduction():
    """a = r and b = n << 23 of e^a = 2^n e^r (a clamped first)."""
    return [("min", "a", "a", Const("exp_hi")),
            ("max", "a", "a", Const("exp_lo")),
            ("mul", "b", "a", Const("log2e")),
            ("round", "b", "b"),
            ("fms", "a", "b", Const("ln2_hi")),
            ("fms", "a", "b", Const("ln2_lo")),
            ("exp2_bits", "b", "b")]


#: e^r's polynomial's coefficients, highest first, without its constant
#: term (e^r - 1 = r T(r), T's coefficients; e^r = r T(r) + 1).
_EXP_POLY = ("exp_p0", "exp_p1", "exp_p2", "exp_p3", "exp_p4", "exp_p5",
             "one")


def _exp_a():
    """a = e^a; b and t clobbered."""
    return _exp_reduction() + [
        ("horner", "t", "a") + tuple(Const(c) for c in _EXP_POLY + ("one",)),
        ("iadd", "a", "t", "b")]


def _expm1_a():
    """a = e^a - 1 (no cancellation: 2^n (e^r - 1) + (2^n - 1)); b = 2^n
    and t clobbered."""
    return _exp_reduction() + [
        ("iadd", "b", "b", Const("one")),
        ("horner", "t", "a") + tuple(Const(c) for c in _EXP_POLY),
        ("mul", "t", "t", "a"),
        ("sub", "a", "b", Const("one")),
        ("fma", "a", "b", "t")]


def program(name):
    """The activation `name` (fields.SMOOTH_ACTIVATIONS) of "x", into "x"
    (module docstring)."""
    one, two = Const("one"), Const("two")
    if name == "tanh":
        # -m / (2 + m), m = expm1(-2x): as m / (-2 - m). The clamp may
        # drop a NaN (RVV): put back.
        return ([("mul", "a", "x", Const("minus_two"))] + _expm1_a()
                + [("sub", "b", Const("minus_two"), "a"),
                   ("nan_mask", "t", "x"), ("div", "x", "a", "b"),
                   ("or_mask", "x", "t")])
    if name == "mish":
        # x n / (n + 2), n = u (u + 2), u = e^min(x, 20).
        return ([("min", "a", "x", Const("mish_x_max"))] + _exp_a()
                + [("add", "b", "a", two), ("mul", "a", "a", "b"),
                   ("add", "b", "a", two), ("div", "a", "a", "b"),
                   ("mul", "x", "x", "a")])
    if name == "softplus":
        # relu(x) + 2 s P(s^2), s = e / (2 + e), e = e^-|x|.
        series = ("atanh_2_15", "atanh_2_13", "atanh_2_11", "atanh_2_9",
                  "atanh_2_7", "atanh_2_5", "atanh_2_3", "two")
        return ([("abs", "a", "x"), ("neg", "a", "a")] + _exp_a()
                + [("add", "b", "a", two), ("div", "a", "a", "b"),
                   ("mul", "b", "a", "a"),
                   ("horner", "t", "b") + tuple(Const(c) for c in series),
                   ("mul", "t", "t", "a"), ("relu", "b", "x"),
                   ("add", "x", "b", "t")])
    if name == "hardswish":
        return [("add", "a", "x", Const("three")),
                ("max", "a", "a", Const("zero")),
                ("min", "a", "a", Const("six")),
                ("mul", "x", "x", "a"),
                ("div", "x", "x", Const("six"))]
    if name == "hardsigmoid":
        return [("add", "a", "x", Const("three")),
                ("max", "a", "a", Const("zero")),
                ("min", "a", "a", Const("six")),
                ("nan_mask", "t", "x"),
                ("div", "x", "a", Const("six")),
                ("or_mask", "x", "t")]
    if name in ("sigmoid", "silu", "gelu_tanh"):
        # 1 / (1 + e^-z): z = x, or gelu_tanh's 2u.
        if name == "gelu_tanh":
            ops = [("mul", "a", "x", "x"),
                   ("horner", "t", "a", Const("minus_k3"),
                    Const("minus_k1")),
                   ("mul", "a", "t", "x")]
        else:
            ops = [("neg", "a", "x")]
        ops += _exp_a() + [("add", "a", "a", one)]
        if name == "sigmoid":
            return ops + [("nan_mask", "t", "x"), ("div", "x", one, "a"),
                          ("or_mask", "x", "t")]
        return ops + [("div", "x", "x", "a")]
    if name != "gelu_erf":
        raise ValueError(f"no smooth activation {name!r}")
    return ([("mul", "a", "x", "x"), ("mul", "a", "a", Const("minus_half"))]
            + _exp_a()
            + [("abs", "b", "x"), ("min", "b", "b", Const("erf_x_max")),
               ("mul", "a", "a", "b"), ("mul", "a", "a", Const("half")),
               ("mul", "b", "b", Const("erf_p")), ("add", "b", "b", one),
               ("div", "b", one, "b"),
               ("horner", "t", "b") + tuple(
                   Const(c) for c in ("erf_a5", "erf_a4", "erf_a3",
                                      "erf_a2", "erf_a1")),
               ("mul", "t", "t", "b"), ("mul", "t", "t", "a"),
               ("relu", "b", "x"), ("sub", "x", "b", "t")])


def constants_used(ops, implicit=None):
    """The names of the constants `ops` read, in order of first use; with
    `implicit` (op -> constant name) also those a writer's spelling of an
    op reads beyond its operands, before them (x86's neg multiplies by -1,
    its abs masks the sign)."""
    seen = []
    for op in ops:
        names = [implicit[op[0]]] if implicit and op[0] in implicit else []
        names += [s.name for s in op[1:] if isinstance(s, Const)]
        for name in names:
            if name not in seen:
                seen.append(name)
    return seen

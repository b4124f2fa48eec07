"""Typed access to request fields; every failure is a RequestError."""

import math
import struct

from .errors import RequestError


def check_known(request, known):
    """Rejects fields the kernel kind does not define."""
    unknown = sorted(set(request) - set(known) - {"version", "kind"})
    if unknown:
        raise RequestError("unknown field(s): " + ", ".join(unknown))


def int_field(request, name, minimum=1, default=None, maximum=(1 << 31) - 1):
    """An integer field (booleans are not integers here)."""
    value = request.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise RequestError(f"field '{name}' must be an integer, got {value!r}")
    if value < minimum:
        raise RequestError(f"field '{name}' must be >= {minimum}, got {value}")
    if value > maximum:
        raise RequestError(f"field '{name}' = {value} is too large")
    return value


def bool_field(request, name):
    value = request.get(name, False)
    if not isinstance(value, bool):
        raise RequestError(f"field '{name}' must be true or false")
    return value


def check_target_features(request, isa):
    """With 'target_features' (LLVM names of the target's enabled features),
    refuses an isa whose instructions the target lacks: the assembler is not
    an ISA gate."""
    features = request.get("target_features")
    if features is None:
        return
    if not isinstance(features, list) or not all(
            isinstance(f, str) for f in features):
        raise RequestError("field 'target_features' must be a list of strings")
    missing = [f for f in isa.features if f not in features]
    if missing:
        raise RequestError(
            f"isa {isa.name} needs " + ", ".join(missing)
            + " which the target lacks")


def leading_dims(request, m, n, k, trans_a, trans_b, dynamic_m=False,
                 dynamic_n=False, dynamic_k=False):
    """(lda, ldb, ldc) in elements: the request's, at least the stored
    operands' columns (A is K x M when trans_a, B is N x K when trans_b),
    the dense ones by default; (None, None, None) with runtime_ld, whose
    kernels read them from the workspace and whose requests must not fix
    them. A run-time size that a leading dimension follows needs
    runtime_ld: M with A transposed, N (C's ldc), K (A's lda, or B's)."""
    runtime_ld = bool_field(request, "runtime_ld")
    if dynamic_m and trans_a and not runtime_ld:
        raise RequestError(
            "dynamic_m with trans_a needs runtime_ld: A is stored K x M, "
            "its leading dimension is the run-time M")
    if dynamic_n and not runtime_ld:
        raise RequestError(
            "dynamic_n needs runtime_ld (a dense C's ldc is n)")
    if dynamic_k and not runtime_ld:
        raise RequestError(
            "dynamic_k needs runtime_ld (a dense A's lda is k)")
    if runtime_ld:
        given = [f for f in ("lda", "ldb", "ldc") if f in request]
        if given:
            raise RequestError(
                "runtime_ld kernels read lda, ldb and ldc from the "
                "workspace at run time; the request must not fix them "
                "(got " + ", ".join(given) + ")")
        return None, None, None
    a_cols = m if trans_a else k
    b_cols = k if trans_b else n
    return (int_field(request, "lda", minimum=a_cols, default=a_cols),
            int_field(request, "ldb", minimum=b_cols, default=b_cols),
            int_field(request, "ldc", minimum=n, default=n))


def round_up(value, multiple):
    return (value + multiple - 1) // multiple * multiple


def cache_blocks(request, m, n, k, mr, nr, k_group=1):
    """(kc, mc, nc) of the request clamped to the problem: mc a multiple of
    mr, nc of nr, kc of `k_group` (the k a dot-product lane takes), each at
    most the problem's size rounded up to its multiple."""
    kc = int_field(request, "kc")
    mc = int_field(request, "mc")
    nc = int_field(request, "nc")
    if kc % k_group:
        raise RequestError(
            f"kc = {kc} must be a multiple of {k_group}: a block holds whole "
            f"groups of {k_group} k")
    if mc % mr:
        raise RequestError(f"mc = {mc} must be a multiple of mr = {mr}")
    if nc % nr:
        raise RequestError(f"nc = {nc} must be a multiple of nr = {nr}")
    return (min(kc, round_up(k, k_group)), min(mc, round_up(m, mr)),
            min(nc, round_up(n, nr)))



def float_bits(value):
    """The IEEE binary32 bits of `value` as an int."""
    return struct.unpack("<I", struct.pack("<f", value))[0]


def _relu_number(request, name, relu):
    """Field `name` of relu's clamp: None, or a finite number that
    binary32 holds exactly, given with 'relu'."""
    value = _binary32_field(request, name)
    if value is not None and not relu:
        raise RequestError(f"field '{name}' needs 'relu'")
    return value


def _binary32_field(request, name):
    """Field `name`: None, or a finite number that binary32 holds
    exactly."""
    value = request.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RequestError(f"field '{name}' must be a number")
    value = float(value)
    if not math.isfinite(value):
        raise RequestError(f"field '{name}' must be finite")
    if struct.unpack("<f", struct.pack("<f", value))[0] != value:
        raise RequestError(f"field '{name}' {value!r} is not a binary32 "
                           "value")
    return value


def relu_bounds(request, relu):
    """relu's clamp, (relu_min, relu_max): relu is arith.maximumf(x,
    relu_min), then arith.minimumf(x, relu_max) where that is set (relu6:
    relu_max 6.0; hardtanh: relu_min -1.0, relu_max 1.0). relu_min is None
    for the floor 0 (a floor of 0 or -0 is not given: the kernels' relu
    turns -0 into +0, as maximumf(x, +0) does); relu_max above the floor.
    Both need 'relu'."""
    floor = _relu_number(request, "relu_min", relu)
    if floor == 0.0:
        raise RequestError("field 'relu_min' 0 is relu's own floor: leave "
                           "it out")
    bound = _relu_number(request, "relu_max", relu)
    if bound is not None and not bound > (floor or 0.0):
        raise RequestError(
            f"field 'relu_max' must be above relu's floor "
            f"({floor or 0.0!r}), got {bound!r}")
    return floor, bound


def relu_nan_to_floor_field(request, relu):
    """'relu_nan_to_floor': relu makes a NaN its floor (select(cmpf ult(x,
    floor), floor, x): torch-mlir's clamp; arith.maxnumf) instead of
    keeping it (arith.maximumf); needs 'relu'."""
    value = bool_field(request, "relu_nan_to_floor")
    if value and not relu:
        raise RequestError("field 'relu_nan_to_floor' needs 'relu'")
    return value


def leaky_relu_field(request, relu):
    """'leaky_relu': the slope s of leaky relu, x > 0 ? x : s * x (NaN
    stays NaN), applied where relu would be (after the adds), or None. A
    finite binary32 number above 0 and not 1: below 1 it is max(x, s * x),
    above 1 min(x, s * x), which every ISA's max or min computes, NaN
    included (s * x is NaN only where x is). Not with 'relu'."""
    slope = _binary32_field(request, "leaky_relu")
    if slope is None:
        return None
    if relu:
        raise RequestError("fields 'leaky_relu' and 'relu' exclude each "
                           "other: one activation")
    if not slope > 0.0 or slope == 1.0:
        raise RequestError(
            f"field 'leaky_relu' must be above 0 and not 1 (max(x, s*x) or "
            f"min(x, s*x)), got {slope!r}")
    return slope


#: The activation's request fields: relu and its clamp, or leaky relu.
ACTIVATION_FIELDS = ("relu", "relu_min", "relu_max", "relu_nan_to_floor",
                     "leaky_relu")

#: The smooth activations (request field 'activation'), as torch and
#: oneDNN name them: sigmoid 1 / (1 + e^-x); silu (swish) x * sigmoid(x);
#: gelu_tanh 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))); gelu_erf
#: 0.5 x (1 + erf(x / sqrt(2))); hardswish x min(max(x + 3, 0), 6) / 6;
#: tanh; mish x tanh(log(1 + e^x)); softplus log(1 + e^x); hardsigmoid
#: min(max(x + 3, 0), 6) / 6.
#: Computed in f32 to a few ulps (smooth.py's programs), not exactly: only
#: the kernels whose request fields list SMOOTH_FIELD take one.
SMOOTH_ACTIVATIONS = ("sigmoid", "silu", "gelu_tanh", "gelu_erf",
                      "hardswish", "tanh", "mish", "softplus", "hardsigmoid")
SMOOTH_FIELD = "activation"


def smooth_activation_field(request, relu, leaky_slope):
    """'activation': one of SMOOTH_ACTIVATIONS, applied after the adds
    where relu would be, or None. Not with relu or leaky relu."""
    name = request.get(SMOOTH_FIELD)
    if name is None:
        return None
    if name not in SMOOTH_ACTIVATIONS:
        raise RequestError(
            f"unknown activation {name!r}; expected one of "
            + ", ".join(SMOOTH_ACTIVATIONS))
    if relu or leaky_slope is not None:
        raise RequestError(
            f"field 'activation' ({name}) and "
            + ("'relu'" if relu else "'leaky_relu'")
            + " exclude each other: one activation")
    return name


def read_activation(request, params):
    """The activation's fields onto a kernel's `params`: relu, relu_min and
    relu_max (relu_bounds), relu_nan_to_floor, and leaky_slope (leaky
    relu's slope, or None). Absent fields: no activation."""
    params.relu = bool_field(request, "relu")
    params.relu_min, params.relu_max = relu_bounds(request, params.relu)
    params.relu_nan_to_floor = relu_nan_to_floor_field(request, params.relu)
    params.leaky_slope = leaky_relu_field(request, params.relu)
    params.smooth = smooth_activation_field(request, params.relu,
                                            params.leaky_slope)


def has_activation(params):
    """Whether read_activation set an activation on `params`: relu (with
    its clamp), leaky relu or a smooth one."""
    return (params.relu or params.leaky_slope is not None
            or params.smooth is not None)


def activation_suffix(params):
    """relu_suffix of the activation read_activation set on `params`, or
    "_" and the smooth activation's name."""
    if params.smooth is not None:
        return "_" + params.smooth
    return relu_suffix(params.relu, params.relu_max, params.relu_min,
                       params.relu_nan_to_floor, params.leaky_slope)


def relu_suffix(relu, relu_max, relu_min=None, nan_to_floor=False,
                leaky_slope=None):
    """The symbol's part for the activation: "_relu", then "_nf" where
    a NaN becomes the floor, "_min<binary32 bits in hex>" for a floor other
    than 0 and "_max<bits>" for a bound (exact, and a valid symbol); or
    "_leaky<bits>" for leaky relu's slope."""
    if leaky_slope is not None:
        return f"_leaky{float_bits(leaky_slope):08x}"
    if not relu:
        return ""
    return ("_relu" + ("_nf" if nan_to_floor else "")
            + (f"_min{float_bits(relu_min):08x}" if relu_min is not None
               else "")
            + (f"_max{float_bits(relu_max):08x}" if relu_max is not None
               else ""))

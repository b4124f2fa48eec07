"""Typed access to request fields; every failure is a RequestError."""

import math
import struct

from .errors import RequestError
from .x86 import lookup_isa


def check_known(request, known):
    """Rejects fields the kernel kind does not define."""
    unknown = sorted(set(request) - set(known) - {"version", "kind"})
    if unknown:
        raise RequestError("unknown field(s): " + ", ".join(unknown))


def isa_field(request):
    """The VectorIsa row named by the 'isa' field."""
    name = request.get("isa")
    if not isinstance(name, str):
        raise RequestError("field 'isa' must be a string such as \"avx2\"")
    return lookup_isa(name)


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


def relu_max_field(request, relu):
    """The optional bound on relu, 'relu_max' (relu6: 6.0): a positive
    finite number that binary32 holds exactly; it needs 'relu'."""
    value = request.get("relu_max")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RequestError("field 'relu_max' must be a number")
    value = float(value)
    if not relu:
        raise RequestError("field 'relu_max' needs 'relu'")
    if not (0.0 < value < math.inf):
        raise RequestError("field 'relu_max' must be positive and finite")
    if struct.unpack("<f", struct.pack("<f", value))[0] != value:
        raise RequestError(f"field 'relu_max' {value!r} is not a binary32 "
                           "value")
    return value


def relu_suffix(relu, relu_max):
    """The symbol's part for relu and its bound: "_relu", then
    "_max<binary32 bits in hex>" (exact, and a valid symbol)."""
    if not relu:
        return ""
    if relu_max is None:
        return "_relu"
    return f"_relu_max{float_bits(relu_max):08x}"

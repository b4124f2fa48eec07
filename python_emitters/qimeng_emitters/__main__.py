"""Entry point: JSON request on stdin, kernel text on stdout.

On failure: one ``error: ...`` line on stderr and exit status 1 (bad request)
or 2 (internal error).
"""

import json
import sys

from . import GENERATOR_VERSION, PROTOCOL_VERSION
from .errors import RequestError
from . import (aarch64, amx, conv2d, cuda_gemm, dotconv, dotgemm, peak,
               riscv, sgemm)

#: sgemm and sconv2d emitters by the request's isa: the x86 generators
#: for avx2 and avx512, the sketch-driven writers (GEMMs and nhwc
#: convolutions alike) for the others.
SKETCH_BY_ISA = {"neon": aarch64.emit, "sve": aarch64.emit_sve,
                 "rvv": riscv.emit}


def _sgemm(request):
    """f32 GEMMs: the sketch-driven writers by isa; on AVX-512 with B^T
    read in place (pack_b false, trans_b), the matrix-vector form the dot
    kernels share (dotgemm.py); sgemm.py otherwise."""
    if (request.get("isa") == "avx512" and request.get("pack_b") is False
            and request.get("trans_b") is True):
        return dotgemm.emit(request)
    return SKETCH_BY_ISA.get(request.get("isa"), sgemm.emit)(request)


def _sconv2d(request):
    return SKETCH_BY_ISA.get(request.get("isa"), conv2d.emit)(request)


def _dot_gemm(request):
    """bf16, f16 and 8-bit GEMMs: on AMX tiles (isa amx) or on AVX-512's
    dot instructions (dotgemm.py; not f16)."""
    return (amx.emit if request.get("isa") == "amx" else
            dotgemm.emit)(request)


def _dot_conv(request):
    """bf16, f16 and 8-bit convolutions: nhwc ones on AMX tiles (isa amx),
    or on AVX-512's dot instructions (dotconv.py; not f16)."""
    return (amx.emit_conv if request.get("isa") == "amx" else
            dotconv.emit)(request)


def _version(request):
    """The generator version alone: a tuning-database key needs it."""
    if set(request) - {"version", "kind"}:
        raise RequestError("kind 'version' takes no fields")
    return GENERATOR_VERSION + "\n"


KINDS = {
    "version": _version,
    "sgemm": _sgemm,
    "sbgemm": _dot_gemm,
    "shgemm": _dot_gemm,
    "igemm": _dot_gemm,
    "sconv2d": _sconv2d,
    "sbconv2d": _dot_conv,
    "shconv2d": _dot_conv,
    "iconv2d": _dot_conv,
    "cuda_gemm": cuda_gemm.emit,
    "fma_peak": peak.emit,
}


def _reject_duplicates(pairs):
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise RequestError(f"field '{key}' is given twice")
        seen[key] = value
    return seen


def run(text):
    """Returns the kernel text for a request given as a JSON string."""
    try:
        request = json.loads(text, object_pairs_hook=_reject_duplicates)
    except json.JSONDecodeError as exc:
        raise RequestError(f"request is not valid JSON: {exc}") from None
    except RecursionError:
        raise RequestError("request is nested too deeply") from None
    if not isinstance(request, dict):
        raise RequestError("request must be a JSON object")
    version = request.get("version")
    if type(version) is not int or version != PROTOCOL_VERSION:
        raise RequestError(
            f"unsupported request version {version!r}; "
            f"this emitter speaks version {PROTOCOL_VERSION}")
    kind = request.get("kind")
    if kind not in KINDS:
        raise RequestError(
            f"unknown kernel kind {kind!r}; expected one of "
            + ", ".join(sorted(KINDS)))
    return KINDS[kind](request)


def main():
    try:
        sys.stdout.write(run(sys.stdin.read()))
    except RequestError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 1
    except Exception as exc:  # an emitter bug: still one line, distinct code
        sys.stderr.write(f"error: internal emitter error: "
                         f"{type(exc).__name__}: {exc}\n")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

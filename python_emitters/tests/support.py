"""Shared helpers for the emitter tests: requests, parsing, tools."""

import copy
import json
import os
import re
import shutil
import subprocess
import sys
import unittest

from qimeng_emitters import GENERATOR_VERSION, PROTOCOL_VERSION
from qimeng_emitters.__main__ import run
from qimeng_emitters.errors import RequestError

#: The python_emitters directory (holds the qimeng_emitters package).
EMITTER_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LANES = {"avx2": 8, "avx512": 16}
REGISTERS = {"avx2": 16, "avx512": 32}

BASE = {
    "version": PROTOCOL_VERSION, "kind": "sgemm", "isa": "avx2",
    "m": 64, "n": 64, "k": 64, "mr": 6, "nr": 16, "k_unroll": 4,
    "kc": 256, "mc": 72, "nc": 512,
}


def changed(base, **changes):
    """A copy of `base` with fields changed; a value of None removes the
    field."""
    req = copy.deepcopy(base)
    for key, value in changes.items():
        if value is None:
            req.pop(key, None)
        else:
            req[key] = value
    return req


def request(**changes):
    """BASE with fields changed; a value of None removes the field."""
    return changed(BASE, **changes)


def emit(req):
    """Kernel text for a request dict, via the in-process entry point."""
    return run(json.dumps(req))


def run_emitter(stdin_text, timeout=30):
    """Runs ``python -m qimeng_emitters`` on stdin_text; CompletedProcess."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [EMITTER_ROOT] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                          if p])
    return subprocess.run(
        [sys.executable, "-m", "qimeng_emitters"], input=stdin_text,
        capture_output=True, text=True, cwd=EMITTER_ROOT, env=env,
        timeout=timeout)


def header(text, key):
    """Value of the ``# qm.KEY: value`` line, or None."""
    prefix = f"# qm.{key}: "
    for line in text.splitlines():
        if line.startswith(prefix):
            return line[len(prefix):]
    return None


def body(text):
    """The lines between ``# qm.body.begin`` and ``# qm.body.end``."""
    lines = text.splitlines()
    begin = lines.index("# qm.body.begin")
    end = lines.index("# qm.body.end")
    return lines[begin + 1:end]


def code(line):
    """A line with its ``#`` comment removed and whitespace stripped."""
    return line.split("#", 1)[0].strip()


VECTOR_REG = re.compile(r"%([xyz])mm(\d+)\b")


def vector_registers(text):
    """Set of (kind, index) for every vector register the code names."""
    regs = set()
    for line in text.splitlines():
        for kind, index in VECTOR_REG.findall(code(line)):
            regs.add((kind, int(index)))
    return regs


def clamped(req):
    """(kc, mc, nc) after clamping to the problem, computed independently."""
    m, n, k = req["m"], req["n"], req["k"]
    mr, nr = req["mr"], req["nr"]
    mc = min(req["mc"], -(-m // mr) * mr)
    nc = min(req["nc"], -(-n // nr) * nr)
    return min(req["kc"], k), mc, nc


def find_llvm_mc():
    """Path of llvm-mc: $QIMENG_LLVM_MC, else llvm-mc-22 on PATH, else None."""
    path = os.environ.get("QIMENG_LLVM_MC")
    if path:
        return path
    return shutil.which("llvm-mc-22")


LLVM_MC = find_llvm_mc()

requires_llvm_mc = unittest.skipUnless(
    LLVM_MC, "llvm-mc not found: set QIMENG_LLVM_MC or put llvm-mc-22 on PATH")


def assemble(source, obj_path):
    """Assembles AT&T text with llvm-mc; CompletedProcess."""
    return subprocess.run(
        [LLVM_MC, "-triple=x86_64-unknown-linux-gnu",
         "-mattr=+avx2,+fma,+avx512f", "-filetype=obj", "-o", obj_path],
        input=source, capture_output=True, text=True, timeout=60)


def cpu_has(flag):
    """True when /proc/cpuinfo lists the CPU flag."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return flag in line.split(":", 1)[1].split()
    except OSError:
        pass
    return False


#: The C compiler that builds the kernels' test harnesses.
GCC = shutil.which("gcc") or shutil.which("cc")


def runs_kernels(*flags, lacks=None):
    """Class decorator for tests that assemble kernels and run them on this
    CPU: skipped, with the reason, without llvm-mc, without a C compiler,
    or where /proc/cpuinfo lacks one of `flags` (`lacks` names them in the
    reason)."""
    def decorate(cls):
        cls = unittest.skipUnless(
            all(cpu_has(flag) for flag in flags),
            f"host CPU lacks {lacks or ' and '.join(flags)}")(cls)
        cls = unittest.skipUnless(GCC, "no C compiler on PATH")(cls)
        return requires_llvm_mc(cls)
    return decorate


class RefusalTestCase(unittest.TestCase):
    """A test of an emitter's refusals: `emit_under_test` (a staticmethod)
    must raise a RequestError whose message contains `words`."""

    emit_under_test = None

    def refuses(self, req, words):
        with self.assertRaises(RequestError) as ctx:
            type(self).emit_under_test(req)
        self.assertIn(words, str(ctx.exception))

"""The sketch-driven emitters for AArch64 NEON and RISC-V RVV: requests,
headers, assembly for their triples, and execution under qemu-user.

Execution uses the project's cross runner (tools/qimeng-cross-runner), built
here with the target's cross g++ and run under qemu with the CPU model and
vector length the kernel was built for. Each kernel runs on three input
distributions (small integers bit for bit, random floats within a K-scaled
bound), with sentinel guards around C and in its leading-dimension gaps,
and A and B checked unchanged.
"""

import os
import random
import shutil
import subprocess
import tempfile
import unittest

from qimeng_emitters.errors import RequestError
from qimeng_emitters.__main__ import run
from . import specials
from .support import EMITTER_ROOT, LLVM_MC, emit, header

import json

PROJECT_ROOT = os.path.dirname(EMITTER_ROOT)
RUNNER_SOURCE = os.path.join(PROJECT_ROOT, "tools", "qimeng-cross-runner",
                             "qimeng-cross-runner.cpp")
OBJCOPY = shutil.which("llvm-objcopy-22")

TARGETS = {
    "aarch64": {
        "triple": "aarch64-linux-gnu", "mattr": "+neon,+sve",
        "cxx": shutil.which("aarch64-linux-gnu-g++"),
        "qemu": shutil.which("qemu-aarch64"),
    },
    "riscv64": {
        "triple": "riscv64-linux-gnu", "mattr": "+m,+a,+f,+d,+c,+v",
        "cxx": shutil.which("riscv64-linux-gnu-g++"),
        "qemu": shutil.which("qemu-riscv64"),
    },
}


def neon(**fields):
    req = {"version": 1, "kind": "sgemm", "isa": "neon", "m": 19, "n": 23,
           "k": 13, "mr": 8, "nr": 8, "k_unroll": 4, "runtime_ld": True}
    req.update(fields)
    return req


def sve(**fields):
    req = {"version": 1, "kind": "sgemm", "isa": "sve", "vlen": 256,
           "m": 19, "n": 45, "k": 13, "mr": 7, "nr": 24, "k_unroll": 4,
           "runtime_ld": True}
    req.update(fields)
    return req


def rvv(**fields):
    req = {"version": 1, "kind": "sgemm", "isa": "rvv", "vlen": 256,
           "lmul": 4, "m": 19, "n": 45, "k": 13, "mr": 7, "nr": 32,
           "k_unroll": 2, "runtime_ld": True}
    req.update(fields)
    return req


def assemble_for(arch, text, obj_path):
    t = TARGETS[arch]
    return subprocess.run(
        [LLVM_MC, f"-triple={t['triple']}", f"-mattr={t['mattr']}",
         "-filetype=obj", "-o", obj_path],
        input=text, capture_output=True, text=True, timeout=60)


def missing_tools(arch):
    t = TARGETS[arch]
    missing = [name for name, path in (
        ("llvm-mc-22", LLVM_MC), ("llvm-objcopy-22", OBJCOPY),
        (f"{arch}-linux-gnu-g++", t["cxx"]),
        (f"qemu-{arch}", t["qemu"])) if not path]
    return missing


class RequestTest(unittest.TestCase):
    def test_symbols_name_every_parameter_isa_last(self):
        self.assertEqual(
            header(emit(neon()), "symbol"),
            "qm_sgemm_19x23x13_nn_ldrt_8x8_ku4_aarch64_neon")
        self.assertEqual(
            header(emit(sve(vlen=512, nr=32, mr=6)), "symbol"),
            "qm_sgemm_19x45x13_nn_ldrt_6x32_ku4_aarch64_sve_vl512")
        self.assertEqual(
            header(emit(rvv(overwrite=True)), "symbol"),
            "qm_sgemm_19x45x13_nn_b0_ldrt_7x32_m4_ku2_riscv64_rvv_vlen256")
        self.assertEqual(
            header(emit(neon(trans_b=True)), "symbol"),
            "qm_sgemm_19x23x13_nt_ldrt_8x8_ku4_aarch64_neon")
        text = emit(sve(vlen="scalable", nr=12))
        self.assertEqual(
            header(text, "symbol"),
            "qm_sgemm_19x45x13_nn_ldrt_7x3v_ku4_aarch64_sve_scalable")
        self.assertIsNone(header(text, "vector_bits"))
        text = emit(rvv(dynamic_m=True, overwrite=True))
        self.assertEqual(
            header(text, "symbol"),
            "qm_sgemm_19x45x13_nn_mrt_b0_ldrt_7x32_m4_ku2_riscv64_rvv_vlen256")
        self.assertEqual(header(text, "runtime_sizes"), "m")
        # K in blocks of kc; a kc of K or more is one block, unnamed.
        self.assertEqual(
            header(emit(neon(k=40, kc=16)), "symbol"),
            "qm_sgemm_19x23x40_nn_ldrt_8x8_ku4_kc16_aarch64_neon")
        self.assertEqual(header(emit(neon(kc=13)), "symbol"),
                         header(emit(neon()), "symbol"))
        self.assertEqual(
            header(emit(rvv(k=40, kc=16, pack_b=True)), "symbol"),
            "qm_sgemm_19x45x40_nn_ldrt_7x32_m4_ku2_kc16_pb_riscv64_rvv_vlen256")

    def test_k_blocks_write_the_nest_at_most_three_times(self):
        """The first K block (overwrite), a loop over the middle ones, the
        last (the epilogue): a blocked kernel stores C three times over;
        two blocks need no loop."""
        def stores(text):
            body = text.split("qm.body.begin")[1]
            return sum(1 for l in body.splitlines()
                       if l.split()[:1] == ["str"] and "q" in l.split()[1])
        one = stores(emit(neon(n=8, m=8, overwrite=True)))
        self.assertEqual(stores(emit(neon(n=8, m=8, k=40, kc=12,
                                          overwrite=True))), 3 * one)
        text = emit(neon(n=8, m=8, k=40, kc=20, overwrite=True))
        self.assertEqual(stores(text), 2 * one)
        self.assertNotIn("a K block", text)

    def test_a_transposed_b_is_packed_into_the_workspace(self):
        # The widest panel (NR columns) K rows deep after the header.
        self.assertEqual(header(emit(neon()), "workspace_bytes"), "128")
        self.assertEqual(header(emit(neon(trans_b=True)), "workspace_bytes"),
                         str(128 + (13 * 8 * 4 + 63) // 64 * 64))
        # N below NR: the panel is N wide.
        self.assertEqual(
            header(emit(rvv(n=5, trans_b=True)), "workspace_bytes"),
            str(128 + (13 * 5 * 4 + 63) // 64 * 64))
        body = emit(rvv(trans_b=True)).split("# qm.body.begin")[1]
        self.assertIn("vsse32.v", body)
        # Blocked along K: a K block's rows; B as stored, copied, likewise.
        for fields in ({"trans_b": True}, {"pack_b": True}):
            self.assertEqual(
                header(emit(neon(k=40, kc=16, **fields)), "workspace_bytes"),
                str(128 + 16 * 8 * 4))

    def test_headers_carry_the_calling_convention(self):
        text = emit(neon())
        self.assertEqual(header(text, "args"), "x0,x1,x2,x3")
        clobbers = header(text, "clobbers").split(",")
        self.assertIn("nzcv", clobbers)
        self.assertIn("v31", clobbers)
        self.assertNotIn("x18", clobbers)  # the platform register
        self.assertEqual(header(text, "leading_dims"), "runtime")
        self.assertIsNone(header(text, "vector_bits"))
        text = emit(rvv())
        self.assertEqual(header(text, "args"), "a0,a1,a2,a3")
        clobbers = header(text, "clobbers").split(",")
        for reg in ("vl", "vtype", "v0", "ft0", "s11"):
            self.assertIn(reg, clobbers)
        self.assertNotIn("s0", clobbers)  # the frame pointer
        self.assertEqual(header(text, "vector_bits"), "256")

    def test_bad_requests_are_refused_with_the_reason(self):
        cases = [
            (neon(runtime_ld=None), "needs runtime_ld true"),
            (neon(trans_a=True, dynamic_m=True), "trans_a needs a static m"),
            (rvv(trans_b=True, dynamic_k=True),
             "dynamic_k needs A and B as stored"),
            (neon(nr=6), "multiple of 4"),
            (neon(k_unroll=2), "k_unroll must be 4 or 8"),
            (neon(mr=8, nr=16), "needs 44 vector registers"),
            (neon(mr=9), "more rows than the 8 A row pointers"),
            (neon(target_features=["fp-armv8"]), "neon needs neon"),
            (sve(nr=20), "multiple of 8"),
            (sve(nr=32, mr=4), "at most 3 vectors"),
            (sve(vlen=1024), "vlen must be 128, 256, 512 or \"scalable\""),
            (sve(vlen="scalable", nr=6), "multiple of 4"),
            (sve(target_features=["neon"]), "sve needs sve"),
            (rvv(nr=16), "multiple of 32"),
            (rvv(lmul=8, mr=4, nr=64), "needs 5 register groups"),
            (rvv(vlen=96), "vlen must be one of"),
            (rvv(target_features=["m", "v"]), "needs zvl256b"),
            (rvv(fault="drop-k", k=1), "needs k >= 2"),
            (neon(kc=4, dynamic_k=True), "a run-time K (dynamic_k) runs in "
             "one block"),
            (neon(kc=-1), "field 'kc' must be >= 0"),
            (rvv(pack_b=True, trans_b=True), "pack_b needs trans_b and "
             "dynamic_k false"),
            (dict(conv_req(neon()), kind="sconv2d", layout="nhwc_hwcf", n=1,
                  h=8, w=8, c=4, f=8, kh=3, kw=3, kc=8),
             "kc is for a GEMM"),
            (neon(bias="diagonal"), "field 'bias' must be"),
            (neon(relu_max=6.0), "'relu_max' needs 'relu'"),
            (dict(conv_req(neon()), kind="sconv2d", layout="ncdhw", n=1,
                  h=8, w=8, c=4, f=8, kh=3, kw=3),
             "unknown layout 'ncdhw'"),
            (dict(conv_req(neon()), kind="sconv2d", layout="nhwc_hwcf", n=1,
                  h=8, w=8, c=1, f=8, kh=3, kw=3, fault="drop-k"),
             "c >= 2 for a convolution"),
            # A channel slice's pixels lie at least F apart; an nchw
            # output is dense.
            (dict(conv_req(rvv()), kind="sconv2d", layout="nhwc_hwcf", n=1,
                  h=8, w=8, c=4, f=8, kh=3, kw=3, output_pixel_stride=6),
             "overlaps the output's 8 channels"),
            (dict(conv_req(neon()), kind="sconv2d", layout="nchw_fchw", n=1,
                  h=8, w=8, c=4, f=8, kh=3, kw=3, output_pixel_stride=12),
             "the field is for nhwc outputs"),
        ]
        for req, message in cases:
            req = {k: v for k, v in req.items() if v is not None}
            with self.subTest(req=req):
                with self.assertRaises(RequestError) as ctx:
                    run(json.dumps(req))
                self.assertIn(message, str(ctx.exception))

    def test_the_inner_loop_is_marked_for_the_model(self):
        for req, prefix, fmas in (
                (neon(m=64, n=64, k=64, mr=7, nr=12, k_unroll=4), "//",
                 "fmla"),
                (rvv(m=64, n=64, k=64, mr=6, nr=32, lmul=4, k_unroll=8), "#",
                 "vfmacc.vf")):
            with self.subTest(isa=req["isa"]):
                text = emit(req)
                lines = text.splitlines()
                self.assertEqual(lines.count(f"{prefix} qm.inner_loop.begin"),
                                 1)
                begin = lines.index(f"{prefix} qm.inner_loop.begin")
                end = lines.index(f"{prefix} qm.inner_loop.end")
                loop = lines[begin + 1:end]
                count = sum(1 for l in loop if l.split()[:1] == [fmas])
                nv = req["nr"] // (4 if req["isa"] == "neon" else 32)
                self.assertEqual(count, req["mr"] * nv * req["k_unroll"])
                self.assertEqual(int(header(text, "inner_loop_flops")),
                                 2 * req["mr"] * req["nr"] * req["k_unroll"])
                # The back branch stays outside; no label inside.
                self.assertFalse(any(l.split(":")[0].isdigit() for l in loop))
        # K below the unroll: no K loop, no mark.
        self.assertIsNone(header(emit(neon(k=3)), "inner_loop_flops"))

    def test_defaults_fit_the_register_files(self):
        # 8 rows x 2 vectors of 4: 16 accumulators, 8 A and 2 B registers.
        emit(neon(mr=8, nr=8))
        # LMUL 4 at VLEN 256: 7 accumulator groups and one for B.
        emit(rvv(mr=7, nr=32, lmul=4))

    def test_every_block_of_the_models_space_takes_an_epilogue(self):
        """NEON's blocks that fit 32 registers (the model's search space)
        generate with the fullest epilogue too: it takes only the
        registers it uses (4 x 20 leaves 7: five column biases, zero and
        relu's bound; with gelu_erf's four scratch vectors, B's five serve
        too)."""
        for nv in range(1, 7):
            for mr in range(2, 9):
                if mr * nv + mr + nv > 32:
                    continue
                for epilogue in ({}, {"bias": "columns", "relu": True,
                                      "relu_max": 6.0},
                                 {"bias": "rows", "relu": True},
                                 {"bias": "rows", "leaky_relu": 0.125},
                                 {"bias": "columns",
                                  "activation": "gelu_erf"}):
                    with self.subTest(mr=mr, nv=nv, epilogue=epilogue):
                        emit(neon(mr=mr, nr=4 * nv, **epilogue))


@unittest.skipUnless(LLVM_MC, "llvm-mc-22 not found")
class AssemblyTest(unittest.TestCase):
    REQUESTS = [
        ("aarch64", neon()),
        ("aarch64", neon(m=1, n=1, k=1, mr=1, nr=4)),
        ("aarch64", neon(m=64, n=64, k=64, mr=7, nr=12, k_unroll=8)),
        ("aarch64", neon(m=9, n=7, k=5, overwrite=True)),
        ("aarch64", sve()),
        ("aarch64", neon(trans_b=True, k=70)),
        ("aarch64", sve(trans_b=True)),
        ("aarch64", sve(vlen="scalable", nr=12, trans_b=True,
                        dynamic_m=True)),
        ("riscv64", rvv(trans_b=True, n=300)),
        ("aarch64", sve(vlen=128, m=5, n=3, k=2, mr=4, nr=12)),
        ("riscv64", rvv()),
        ("riscv64", rvv(vlen=128, lmul=1, mr=6, nr=16, k_unroll=8)),
        ("riscv64", rvv(vlen=512, lmul=2, mr=5, nr=64, m=200, n=300,
                        k=100)),
    ]

    def test_output_assembles_for_its_triple(self):
        with tempfile.TemporaryDirectory() as tmp:
            for arch, req in self.REQUESTS:
                with self.subTest(arch=arch, req=req):
                    obj = os.path.join(tmp, "k.o")
                    result = assemble_for(arch, emit(req), obj)
                    self.assertEqual(result.returncode, 0, result.stderr)

    def test_neon_uses_no_sve_registers(self):
        text = emit(neon(m=64, n=67, k=9))
        body = text.split("# qm.body.begin")[1].split("# qm.body.end")[0]
        for line in body.splitlines():
            code = line.split("//")[0]
            self.assertNotRegex(code, r"\bz\d+\.|\bp\d+\b", line)


class CrossRunner:
    """The cross runner built for `arch`, and a way to run a kernel in it
    under qemu."""

    def __init__(self, arch, tmp):
        self.arch = arch
        self.tmp = tmp
        self.exe = os.path.join(tmp, f"runner-{arch}")
        t = TARGETS[arch]
        subprocess.run(
            [t["cxx"], "-std=c++17", "-O2", "-static",
             "-I" + os.path.join(PROJECT_ROOT, "include"), RUNNER_SOURCE,
             "-o", self.exe], check=True, capture_output=True, timeout=300)

    def code_file(self, text):
        """The kernel's .text bytes in a file, assembled for the target."""
        obj = os.path.join(self.tmp, "k.o")
        code = os.path.join(self.tmp, "k.bin")
        result = assemble_for(self.arch, text, obj)
        if result.returncode:
            raise AssertionError(result.stderr)
        subprocess.run([OBJCOPY, "-O", "binary", "--only-section=.text", obj,
                        code], check=True, timeout=60)
        return code

    @staticmethod
    def verdict(args, timeout):
        """The runner's JSON verdict, or a failure for a timeout or an exit
        status other than 0."""
        try:
            out = subprocess.run(args, capture_output=True, text=True,
                                 timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"passed": False, "failure": "timed out"}
        if out.returncode != 0:
            return {"passed": False,
                    "failure": f"exit {out.returncode}: {out.stderr.strip()}"}
        return json.loads(out.stdout)

    def run(self, req, cpu, lda, ldb, ldc, m=None, k=None, n=None,
            parts=()):
        """Runs a GEMM kernel on M = `m` rows, N = `n` columns and K = `k`
        (a run-time size's call; default: the request's), as `parts`
        ((m_begin, m_end, n_begin, n_end) each, one call a part) where
        given."""
        text = emit(req)
        code = self.code_file(text)
        transposes = ("t" if req.get("trans_a") else "n") + (
            "t" if req.get("trans_b") else "n")
        epilogue = [f"bias={req['bias']}"] if req.get("bias", "none") != \
            "none" else []
        args = [TARGETS[self.arch]["qemu"], "-cpu", cpu, self.exe, code,
                "0", str(m or req["m"]), str(n or req["n"]),
                str(req["k"] if k is None else k),
                transposes,
                str(lda), str(ldb), str(ldc), header(text, "workspace_bytes"),
                "1" if req.get("overwrite") else "0", "7", "1", "all",
                epilogue_arg(req, epilogue)]
        if parts:
            args.append(",".join(":".join(map(str, p)) for p in parts))
        return self.verdict(args, timeout=60)

    def run_conv(self, req, cpu, parts=(), pixel=None):
        """Runs a convolution kernel (kind sconv2d) in the runner's conv
        mode on its request's geometry, as `parts` of its GEMM view where
        given (`pixel`: the output's pixel stride the runner checks, if not
        the request's)."""
        text = emit(req)
        code = self.code_file(text)
        g = {"stride_h": 1, "stride_w": 1, "dilation_h": 1, "dilation_w": 1}
        g.update(req)
        nhwc = g["layout"].startswith("nhwc")
        dense = ([g["h"] * g["w"] * g["c"], g["w"] * g["c"], g["c"]] if nhwc
                 else [g["c"] * g["h"] * g["w"], g["h"] * g["w"], g["w"]])
        strides = g.get("input_strides", dense)
        args = [TARGETS[self.arch]["qemu"], "-cpu", cpu, self.exe, code,
                "0", "conv", g["layout"]] + [str(g[f]) for f in (
                    "n", "h", "w", "c", "f", "kh", "kw", "stride_h",
                    "stride_w", "dilation_h", "dilation_w")] + [
                str(s) for s in strides] + [
                str(pixel or g.get("output_pixel_stride", g["f"])),
                header(text, "workspace_bytes"),
                "1" if req.get("overwrite") else "0", "7", "1", "all",
                epilogue_arg(req, ["bias"] if req.get("bias") else [])]
        if parts:
            args.append(",".join(":".join(map(str, p)) for p in parts))
        return self.verdict(args, timeout=120)


def epilogue_arg(req, bias):
    """The runner's EPILOGUE for a request: its bias items, relu,
    relu_min and relu_max, or none."""
    items = list(bias)
    if req.get("relu"):
        items.append("relu")
    if req.get("relu_min") is not None:
        items.append(f"relu_min={req['relu_min']!r}")
    if req.get("relu_max") is not None:
        items.append(f"relu_max={req['relu_max']!r}")
    if req.get("leaky_relu") is not None:
        items.append(f"leaky_relu={req['leaky_relu']!r}")
    if req.get("activation") is not None:
        items.append(f"activation={req['activation']}")
    return ",".join(items) or "none"


def padded(c, h, w):
    """nhwc input strides with gaps after each pixel, row and image."""
    s2 = c + 2
    s1 = w * s2 + 3
    return [h * s1 + 5, s1, s2]


def padded_nchw(c, h, w):
    """nchw input strides with gaps after each row, channel and image (a
    view of a padded buffer)."""
    s2 = w + 2
    s1 = h * s2 + 3
    return [c * s1 + 5, s1, s2]


#: Convolution layers for every target (n, h, w, c, f, kh, kw and the
#: rest): 3x3, 1x1, 5x5 and 7x7 filters, strides, dilations, C not a
#: multiple of four, batches, padded inputs, both nhwc filter layouts.
CONV_LAYERS = [
    dict(layout="nhwc_hwcf", n=1, h=8, w=8, c=4, f=8, kh=3, kw=3),
    dict(layout="nhwc_fhwc", n=2, h=9, w=7, c=5, f=13, kh=3, kw=3,
         stride_h=2, stride_w=2),
    dict(layout="nhwc_hwcf", n=1, h=10, w=10, c=3, f=16, kh=1, kw=1,
         overwrite=True),
    dict(layout="nhwc_hwcf", n=1, h=12, w=11, c=6, f=7, kh=3, kw=3,
         dilation_h=2, dilation_w=2),
    dict(layout="nhwc_fhwc", n=1, h=9, w=9, c=8, f=24, kh=5, kw=5),
    dict(layout="nhwc_hwcf", n=1, h=7, w=7, c=16, f=9, kh=1, kw=1,
         stride_h=2, stride_w=2, input_strides=padded(16, 7, 7)),
    dict(layout="nhwc_hwcf", n=3, h=6, w=6, c=2, f=5, kh=2, kw=3,
         stride_w=2),
    dict(layout="nhwc_fhwc", n=1, h=15, w=15, c=3, f=12, kh=7, kw=7,
         stride_h=2, stride_w=2, overwrite=True),
    dict(layout="nhwc_hwcf", n=1, h=8, w=8, c=33, f=3, kh=3, kw=3),
    dict(layout="nhwc_hwcf", n=1, h=5, w=6, c=1, f=1, kh=1, kw=1),
    dict(layout="nhwc_fhwc", n=1, h=14, w=14, c=12, f=20, kh=3, kw=3,
         overwrite=True, input_strides=padded(12, 14, 14)),
    dict(layout="nhwc_hwcf", n=2, h=8, w=8, c=7, f=17, kh=3, kw=1,
         input_strides=padded(7, 8, 8)),
    # torch's layout: B's columns are the pixels, gathered panel by panel.
    dict(layout="nchw_fchw", n=2, h=9, w=8, c=5, f=13, kh=3, kw=3),
    dict(layout="nchw_fchw", n=1, h=10, w=10, c=8, f=16, kh=3, kw=3,
         overwrite=True, input_strides=padded_nchw(8, 10, 10)),
    dict(layout="nchw_fchw", n=1, h=15, w=15, c=3, f=9, kh=7, kw=7,
         stride_h=2, stride_w=2),
    dict(layout="nchw_fchw", n=3, h=7, w=7, c=12, f=7, kh=1, kw=1,
         stride_h=2, stride_w=2),
    dict(layout="nchw_fchw", n=1, h=12, w=11, c=6, f=20, kh=3, kw=3,
         dilation_h=2, dilation_w=2),
    # Channel slices of wider outputs (a concatenation written in place):
    # the pixels 13 and 10 elements apart, the other channels kept.
    dict(layout="nhwc_hwcf", n=2, h=8, w=8, c=4, f=8, kh=3, kw=3,
         output_pixel_stride=13),
    dict(layout="nhwc_fhwc", n=1, h=9, w=9, c=5, f=6, kh=3, kw=3,
         overwrite=True, output_pixel_stride=10),
]


def conv_req(gemm_req):
    """A GEMM request's ISA and blocking fields, for a convolution."""
    return {k: v for k, v in gemm_req.items()
            if k not in ("m", "n", "k", "runtime_ld")}


def random_shapes(seed, count):
    rng = random.Random(seed)
    for _ in range(count):
        m, n, k = (rng.randint(1, 70) for _ in range(3))
        yield m, n, k, k + rng.choice((0, 0, 3)), n + rng.choice((0, 5)), \
            n + rng.choice((0, 0, 2))


class QemuExecutionTest(unittest.TestCase):
    """>= 50 random shapes per target configuration, exact under qemu."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def runner(self, arch):
        missing = missing_tools(arch)
        if missing:
            self.skipTest("needs " + ", ".join(missing)
                          + " (scripts/setup.sh installs them)")
        return CrossRunner(arch, self.tmp.name)

    def check_shapes(self, runner, make, cpu, seed):
        """50 random shapes; every third kernel reads B transposed (N x K,
        packed panel by panel), its ldb then as long as K plus the pad;
        every fourth takes M at run time (built for 24 rows, run on the
        shape's), and of the others every sixth reads A transposed (K x M,
        copied once); every eighth of those with A and B as stored takes K
        at run time (built for 24), every fourth from the fourth N (built
        for 24, run at the shape's); every fifth adds a bias per column and
        relu, every seventh a bias per row, relu and relu6's bound, every
        seventh from the second hardtanh's clamp [-1.5, 2], every ninth
        from the third without relu leaky relu (1/8 or 2.5), every
        eleventh from the eleventh without either a smooth activation
        (sigmoid, silu, gelu_tanh, gelu_erf, hardswish, tanh, mish in
        turn);
        every
        fifth from the second of those with a static K runs K in blocks
        (three or more, or two), and every sixth with B as stored and a
        static K copies B's panels."""
        for index, (m, n, k, lda, ldb, ldc) in enumerate(
                random_shapes(seed, 50)):
            req = make(m, n, k)
            if index % 3 == 2:
                req["trans_b"] = True
                ldb += k - n
            if index % 4 == 1:
                req.update(dynamic_m=True, m=24)
            elif index % 6 == 5:
                # A stored K x M, copied once: lda as long as M plus the pad.
                req["trans_a"] = True
                lda += m - k
            if index % 8 == 6 and not req.get("trans_a") \
                    and not req.get("trans_b"):
                req.update(dynamic_k=True, k=24)
            if index % 4 == 3:
                req.update(dynamic_n=True, n=24)
            if index % 5 == 3:
                req.update(bias="columns", relu=True)
            if index % 7 == 4:
                req.update(bias="rows", relu=True, relu_max=6.0)
            if index % 7 == 1:
                # hardtanh's clamp, the floor below 0.
                req.update(relu=True, relu_min=-1.5, relu_max=2.0)
            elif index % 9 == 2 and not req.get("relu"):
                # leaky relu, a slope below 1 and above.
                req.update(leaky_relu=0.125 if index % 2 else 2.5)
            elif index % 11 == 10 and not req.get("relu"):
                req["activation"] = ("sigmoid", "silu", "gelu_tanh",
                                     "gelu_erf", "hardswish", "tanh",
                                     "mish")[index // 11 % 7]
            if index % 5 == 1 and not req.get("dynamic_k") and k > 1:
                req["kc"] = (k + 1) // 2 if index % 10 == 1 else \
                    max(1, k // 3)
            if index % 6 == 0 and not req.get("dynamic_k"):
                req["pack_b"] = True
            with self.subTest(cpu=cpu, req=req, m=m, k=k,
                              lds=(lda, ldb, ldc)):
                result = runner.run(req, cpu, lda, ldb, ldc, m=m, k=k, n=n)
                self.assertTrue(result["passed"], result["failure"])

    def test_neon_on_cortex_a76_and_neoverse_n1(self):
        runner = self.runner("aarch64")
        blocks = [(7, 12, 4), (8, 8, 4), (5, 16, 8), (6, 8, 8), (4, 20, 4)]
        for cpu, seed in (("cortex-a76", 1), ("neoverse-n1", 2)):
            def make(m, n, k, i=[0]):
                mr, nr, ku = blocks[i[0] % len(blocks)]
                i[0] += 1
                return neon(m=m, n=n, k=k, mr=mr, nr=nr, k_unroll=ku,
                            overwrite=i[0] % 5 == 0)
            self.check_shapes(runner, make, cpu, seed)

    def test_sve_at_128_256_512_bits(self):
        runner = self.runner("aarch64")
        for vl, seed in ((128, 6), (256, 7), (512, 8)):
            cpu = f"max,sve{vl}=on"
            lanes = vl // 32
            blocks = [(7, 3, 4), (8, 2, 8), (4, 1, 4), (6, 3, 8)]

            def make(m, n, k, i=[0]):
                mr, nv, ku = blocks[i[0] % len(blocks)]
                i[0] += 1
                return sve(vlen=vl, m=m, n=n, k=k, mr=mr, nr=nv * lanes,
                           k_unroll=ku, overwrite=i[0] % 5 == 0)
            self.check_shapes(runner, make, cpu, seed)

    def test_sve_scalable_kernels_run_at_every_length(self):
        """One vector-length-agnostic kernel per shape, run at 128, 256,
        512 and 2048 bits: 20 random shapes (every third with B
        transposed, every fourth with M at run time) and nhwc and nchw
        convolution layers."""
        runner = self.runner("aarch64")
        blocks = [(7, 12, 4), (8, 8, 8), (4, 4, 4), (6, 12, 8)]
        for index, (m, n, k, lda, ldb, ldc) in enumerate(
                random_shapes(9, 20)):
            mr, nr, ku = blocks[index % len(blocks)]
            req = sve(vlen="scalable", m=m, n=n, k=k, mr=mr, nr=nr,
                      k_unroll=ku, overwrite=index % 5 == 0)
            if index % 3 == 2:
                req["trans_b"] = True
                ldb += k - n
            if index % 4 == 1:
                req.update(dynamic_m=True, m=24)
            if index % 5 == 3:
                req.update(bias="columns", relu=True, relu_max=6.0)
            if index % 5 == 4:
                req.update(relu=True, relu_min=0.5)
            if index % 7 == 6 and not req.get("relu"):
                req.update(bias="columns", leaky_relu=0.0625)
            for vl in (128, 256, 512, 2048):
                with self.subTest(vl=vl, req=req, m=m, lds=(lda, ldb, ldc)):
                    result = runner.run(req, f"max,sve{vl}=on", lda, ldb,
                                        ldc, m=m)
                    self.assertTrue(result["passed"], result["failure"])
        for layer in (CONV_LAYERS[1], CONV_LAYERS[5], CONV_LAYERS[12],
                      CONV_LAYERS[14]):
            req = conv_req(sve(vlen="scalable", mr=7, nr=12))
            req.update(layer, kind="sconv2d")
            for vl in (128, 512):
                with self.subTest(vl=vl, req=req):
                    result = runner.run_conv(req, f"max,sve{vl}=on")
                    self.assertTrue(result["passed"], result["failure"])

    def test_sve_kernels_need_their_vector_length_and_sve(self):
        runner = self.runner("aarch64")
        req = sve(vlen=256, m=9, n=40, k=5)
        self.assertTrue(runner.run(req, "max,sve256=on", 5, 40, 40)["passed"])
        # ptrue vl8: a longer vector runs it too, a shorter one cannot.
        self.assertTrue(runner.run(req, "max,sve512=on", 5, 40, 40)["passed"])
        self.assertFalse(runner.run(req, "max,sve128=on", 5, 40, 40)["passed"])
        # Neoverse-N1 has no SVE: the kernel dies on its first instruction.
        result = runner.run(req, "neoverse-n1", 5, 40, 40)
        self.assertFalse(result["passed"])

    def test_rvv_at_vlen_128_256_512(self):
        runner = self.runner("riscv64")
        for vlen, seed in ((128, 3), (256, 4), (512, 5)):
            cpu = f"rv64,v=true,vext_spec=v1.0,vlen={vlen},elen=64"
            blocks = [(6, 4, 8), (7, 4, 1), (6, 2, 2), (3, 1, 8)]

            def make(m, n, k, i=[0]):
                mr, lmul, ku = blocks[i[0] % len(blocks)]
                i[0] += 1
                lanes = vlen * lmul // 32
                return rvv(vlen=vlen, lmul=lmul, m=m, n=n, k=k, mr=mr,
                           nr=lanes, k_unroll=ku, overwrite=i[0] % 5 == 0)
            self.check_shapes(runner, make, cpu, seed)

    def test_only_a_run_time_k_kernel_runs_at_another_k(self):
        """At 0 too: the nest still stores C, so an overwriting kernel
        writes its epilogue of zeros and an accumulating one leaves C."""
        runner = self.runner("riscv64")
        cpu = "rv64,v=true,vext_spec=v1.0,vlen=256,elen=64"
        for k in (0, 1, 5, 24, 41):
            self.assertTrue(runner.run(rvv(k=24, dynamic_k=True), cpu, 41,
                                       45, 45, k=k)["passed"], k)
        for req in (rvv(k=24, dynamic_k=True, overwrite=True,
                        bias="columns", relu=True),
                    neon(k=24, dynamic_k=True, overwrite=True, bias="rows",
                         relu=True, relu_max=6.0)):
            arch = "riscv64" if req["isa"] == "rvv" else "aarch64"
            target = self.runner(arch)
            for k in (0, 3, 41):
                result = target.run(req, cpu if arch == "riscv64"
                                    else "neoverse-n1", 41, 45, 45, k=k)
                self.assertTrue(result["passed"], (req["isa"], k, result))
        self.assertFalse(runner.run(rvv(k=24), cpu, 41, 45, 45,
                                    k=5)["passed"])

    def test_only_a_run_time_n_kernel_runs_at_another_n(self):
        """Every edge a call may have: whole vectors and lanes of NEON's
        panels (one panel kind each), SVE's predicate at 256 bits, the
        vector-length-agnostic kernel's column count at 512, RVV's vl."""
        def scalable(**fields):
            return sve(vlen="scalable", **fields)
        for arch, make, cpu, nr in (
                ("aarch64", neon, "neoverse-n1", 12),
                ("aarch64", sve, "max,sve256=on", 16),
                ("aarch64", scalable, "max,sve512=on", 8),
                ("riscv64", rvv, "rv64,v=true,vext_spec=v1.0,vlen=256,"
                                 "elen=64", 32)):
            runner = self.runner(arch)
            for n in (1, 3, 6, 13, 24, 45):
                for trans_b in (False, True):
                    req = make(n=24, dynamic_n=True, trans_b=trans_b,
                               mr=6, nr=nr)
                    ldb = 13 if trans_b else 45
                    self.assertTrue(runner.run(req, cpu, 13, ldb, 45,
                                               n=n)["passed"], (arch, n))
            self.assertFalse(runner.run(make(n=24, mr=6, nr=nr), cpu, 13,
                                        45, 45, n=45)["passed"])

    def test_parallel_kernels_compute_their_part_of_c(self):
        """The parallel form, run as four parts (M split at a multiple of
        MR, N at a multiple of NR, each a call with a workspace of its
        own), gives C; a kernel without it computes all of C at each call,
        which adds A*B four times. A transposed A: each part copies its
        own rows of it (a run-time count: 14, 5)."""
        parts = [(0, 14, 0, 24), (14, 19, 0, 24), (0, 14, 24, 45),
                 (14, 19, 24, 45)]
        rv = "rv64,v=true,vext_spec=v1.0,vlen=256,elen=64"
        for arch, cpu, req in (
                ("aarch64", "neoverse-n1",
                 neon(n=45, mr=7, nr=12, bias="columns", relu=True)),
                ("aarch64", "max,sve256=on", sve(trans_a=True)),
                ("aarch64", "neoverse-n1", neon(n=45, mr=7, nr=12,
                                                trans_a=True)),
                ("riscv64", rv, rvv(mr=7, trans_a=True, trans_b=True)),
                ("aarch64", "max,sve512=on",
                 sve(vlen="scalable", nr=12, kc=5, pack_b=True)),
                ("riscv64", rv, rvv(mr=7, trans_b=True, bias="rows"))):
            runner = self.runner(arch)
            lda = req["m"] if req.get("trans_a") else req["k"]
            ldb = req["k"] if req.get("trans_b") else req["n"]
            with self.subTest(req=req):
                result = runner.run(dict(req, parallel=True), cpu, lda, ldb,
                                    req["n"], parts=parts)
                self.assertTrue(result["passed"], result["failure"])
                whole = runner.run(req, cpu, lda, ldb, req["n"],
                                   parts=parts)
                self.assertFalse(whole["passed"])

    def test_parallel_convolutions_compute_their_part(self):
        """A convolution's parallel form as parts of its GEMM view: nhwc
        (output pixels split at a multiple of MR, filters at one of NR),
        HWCF and FHWC (whose filter is packed a panel at a time), and nchw
        (filters split at a multiple of MR, every image's pixels in each
        part), with a bias; the kernel without the form, run so, adds each
        part's sum to all of the output."""
        geometry = {"kind": "sconv2d", "n": 2, "h": 9, "w": 8, "c": 5,
                    "f": 40, "kh": 3, "kw": 3, "bias": True}
        pixels = 2 * 7 * 6
        rv = "rv64,v=true,vext_spec=v1.0,vlen=256,elen=64"
        for arch, cpu, req, mr, nr in (
                ("aarch64", "neoverse-n1", neon(mr=7, nr=12), 7, 12),
                ("aarch64", "max,sve256=on", sve(mr=7, nr=16), 7, 16),
                ("riscv64", rv, rvv(mr=6, nr=32, lmul=4), 6, 32)):
            runner = self.runner(arch)
            rows, cols = 4 * mr, 2 * nr if arch == "aarch64" else nr
            parts = [(0, rows, 0, cols), (rows, pixels, 0, cols),
                     (0, rows, cols, 40), (rows, pixels, cols, 40)]
            for layout in ("nhwc_hwcf", "nhwc_fhwc", "nchw_fchw"):
                conv = dict(conv_req(req), layout=layout, **geometry)
                if layout == "nchw_fchw":
                    parts = [(0, 2 * mr, 0, 42), (2 * mr, 40, 0, 42)]
                with self.subTest(isa=req["isa"], layout=layout):
                    result = runner.run_conv(dict(conv, parallel=True), cpu,
                                             parts)
                    self.assertTrue(result["passed"], result["failure"])
                    self.assertFalse(
                        runner.run_conv(conv, cpu, parts)["passed"])

    def test_a_kernel_runs_only_at_its_vector_length(self):
        runner = self.runner("riscv64")
        req = rvv(vlen=256, m=9, n=40, k=5)
        cpu = "rv64,v=true,vext_spec=v1.0,vlen={},elen=64"
        self.assertTrue(runner.run(req, cpu.format(256), 5, 40, 40)["passed"])
        self.assertFalse(runner.run(req, cpu.format(128), 5, 40, 40)["passed"])

    def check_conv_layers(self, runner, make, cpu):
        """Every layer; every third adds a bias per output
        channel and relu (a bias column in nhwc, row in nchw), every third
        from the second a bias and leaky relu (1/8), every third from the
        third a bias and a smooth activation (silu, gelu_erf, sigmoid,
        gelu_tanh, hardswish, tanh, mish in turn: YOLO's conv blocks, SiLU
        or mish; MobileNetV3's, hardswish)."""
        for index, layer in enumerate(CONV_LAYERS):
            req = make(index)
            req.update(layer, kind="sconv2d")
            if index % 3 == 0:
                req.update(bias=True, relu=True)
            elif index % 3 == 1:
                req.update(bias=True, leaky_relu=0.125)
            else:
                req.update(bias=True, activation=(
                    "silu", "gelu_erf", "sigmoid", "gelu_tanh",
                    "hardswish", "tanh", "mish")[index // 3 % 7])
            with self.subTest(cpu=cpu, req=req):
                result = runner.run_conv(req, cpu)
                self.assertTrue(result["passed"], result["failure"])

    def test_conv_layers_on_every_target(self):
        """The 19 layers of CONV_LAYERS on NEON (Cortex-A76, Neoverse-N1),
        SVE at 128/256/512 bits and RVV at VLEN 128/256/512."""
        runner = self.runner("aarch64")
        for cpu in ("cortex-a76", "neoverse-n1"):
            blocks = [(7, 12, 4), (8, 8, 4), (5, 16, 8)]
            self.check_conv_layers(runner, lambda i: conv_req(neon(
                mr=blocks[i % 3][0], nr=blocks[i % 3][1],
                k_unroll=blocks[i % 3][2])), cpu)
        for vl in (128, 256, 512):
            lanes = vl // 32
            self.check_conv_layers(runner, lambda i: conv_req(sve(
                vlen=vl, mr=(7, 6)[i % 2], nr=(3, 2)[i % 2] * lanes)),
                f"max,sve{vl}=on")
        runner = self.runner("riscv64")
        for vlen in (128, 256, 512):
            self.check_conv_layers(runner, lambda i: conv_req(rvv(
                vlen=vlen, lmul=(4, 1)[i % 2], mr=6,
                nr=vlen * (4, 1)[i % 2] // 32, k_unroll=(8, 2)[i % 2])),
                f"rv64,v=true,vext_spec=v1.0,vlen={vlen},elen=64")

    def test_conv_channel_slice_keeps_the_other_channels(self):
        """A kernel for the dense output, run on a channel slice of a wider
        one, writes the other channels: the runner catches it."""
        runner = self.runner("aarch64")
        req = conv_req(neon())
        req.update(CONV_LAYERS[17], kind="sconv2d")
        self.assertTrue(runner.run_conv(req, "neoverse-n1")["passed"])
        dense = {k: v for k, v in req.items() if k != "output_pixel_stride"}
        result = runner.run_conv(dense, "neoverse-n1", pixel=13)
        self.assertFalse(result["passed"])
        self.assertIn("between pixels", result["failure"])

    def test_conv_faults_are_caught(self):
        for arch, make, cpu, layer in (
                ("aarch64", neon, "neoverse-n1", CONV_LAYERS[1]),
                ("aarch64", neon, "neoverse-n1", CONV_LAYERS[12]),
                ("riscv64", rvv, "rv64,v=true,vext_spec=v1.0,vlen=256,"
                                 "elen=64", CONV_LAYERS[1]),
                ("riscv64", rvv, "rv64,v=true,vext_spec=v1.0,vlen=256,"
                                 "elen=64", CONV_LAYERS[12])):
            runner = self.runner(arch)
            layer = dict(layer, kind="sconv2d")
            for fault, expect in (("drop-k", "exact, bit for bit"),
                                  ("write-past-edge", "guard overwritten")):
                with self.subTest(arch=arch, layout=layer["layout"],
                                  fault=fault):
                    req = conv_req(make(fault=fault))
                    req.update(layer)
                    result = runner.run_conv(req, cpu)
                    self.assertFalse(result["passed"])
                    self.assertIn(expect, result["failure"])

    def test_faults_are_caught_under_emulation(self):
        for arch, make, cpu in (
                ("aarch64", neon, "neoverse-n1"),
                ("aarch64", sve, "max,sve256=on"),
                ("riscv64", rvv, "rv64,v=true,vext_spec=v1.0,vlen=256,"
                                 "elen=64")):
            runner = self.runner(arch)
            for fault, expect in (("drop-k", "exact, bit for bit"),
                                  ("write-past-edge", "gap overwritten"),
                                  ("segfault", "exit"),
                                  ("hang", "timed out")):
                if fault == "hang":
                    continue  # a 60 s timeout; test_protocol covers hangs
                with self.subTest(arch=arch, fault=fault):
                    req = make(fault=fault)
                    result = runner.run(req, cpu, req["k"], req["n"],
                                        req["n"] + 1)
                    self.assertFalse(result["passed"])
                    self.assertIn(expect, result["failure"])






class RvvReluTest(unittest.TestCase):
    """relu_lines, clamp_lines, nan_to_floor_lines and leaky_relu_lines,
    the RVV epilogue's relu, its floor other than 0, its bound, torch-mlir's
    clamp (a NaN becomes the floor) and leaky relu, on the values that
    tell arith.maximumf from IEEE maximumNumber: NaNs of either sign
    (quiet and signalling), infinities, zeros of either sign, denormals,
    the largest finite values, run under qemu at VLEN 128 (16 lanes, LMUL
    4)."""

    def test_nans_zeros_and_infinities_follow_arith_maximumf(self):
        from qimeng_emitters.fields import float_bits
        from qimeng_emitters.riscv import (clamp_lines, leaky_relu_lines,
                                           nan_to_floor_lines, relu_lines)
        missing = missing_tools("riscv64")
        if missing:
            self.skipTest("needs " + ", ".join(missing)
                          + " (scripts/setup.sh installs them)")
        with tempfile.TemporaryDirectory() as tmp:
            lines = [".text"]
            variants = (
                ("relu", relu_lines("v8", "v12", None, "t3")),
                ("relu6", relu_lines("v8", "v12", "ft0", "t3")),
                ("hardtanh", clamp_lines("v8", "v12", "t3", "ft2", "ft0")),
                ("floor_half", clamp_lines("v8", "v12", "t3", "ft3")),
                ("torch_clamp", nan_to_floor_lines("v8", "ft2", "ft0")),
                ("leaky_half", leaky_relu_lines("v8", "v12", "ft3", 0.5)),
                ("leaky_six", leaky_relu_lines("v8", "v12", "ft0", 6.0)))
            for name, body in variants:
                lines += [f".globl {name}", f"{name}:",
                          "vsetvli t0, a1, e32, m4, ta, ma",
                          "vle32.v v8, (a0)",
                          "li t3, 0x7f800000",
                          f"li t1, {float_bits(6.0)}",
                          "fmv.w.x ft0, t1",
                          f"li t1, {float_bits(-1.5)}",
                          "fmv.w.x ft2, t1",
                          f"li t1, {float_bits(0.5)}",
                          "fmv.w.x ft3, t1"]
                lines += body
                lines += ["vse32.v v8, (a0)", "ret"]
            obj = os.path.join(tmp, "relu.o")
            result = assemble_for("riscv64", "\n".join(lines) + "\n", obj)
            self.assertEqual(result.returncode, 0, result.stderr)
            main = os.path.join(tmp, "main.cpp")
            with open(main, "w") as f:
                f.write("static constexpr bool kAddsZero = false;\n"
                        + specials.SPECIALS_MAIN)
            exe = os.path.join(tmp, "relu")
            subprocess.run([TARGETS["riscv64"]["cxx"], "-O1", "-static", main,
                            obj, "-o", exe], check=True, timeout=300)
            out = subprocess.run(
                [TARGETS["riscv64"]["qemu"], "-cpu",
                 "rv64,v=true,vext_spec=v1.0,vlen=128,elen=64", exe],
                capture_output=True, text=True, timeout=60)
            self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
            self.assertIn("0 wrong", out.stdout)


class AArch64EpilogueSpecialsTest(unittest.TestCase):
    """NEON's and SVE's epilogues, in whole kernels, on the same special
    values as RvvReluTest: relu and its clamps keep a NaN (FMAX, FMIN),
    torch-mlir's clamp makes it the floor (FMAXNM), leaky relu keeps it;
    -0, infinities, denormals and the largest finite values as
    arith.maximumf and minimumf have them. Run under qemu-aarch64 on a
    Cortex-A76 (NEON) and at 256-bit SVE."""

    def test_special_values_through_each_epilogue(self):
        missing = missing_tools("aarch64")
        if missing:
            self.skipTest("needs " + ", ".join(missing)
                          + " (scripts/setup.sh installs them)")
        for isa, make, cpu in (
                ("neon", lambda **f: neon(nr=16, **f), "cortex-a76"),
                ("sve", lambda **f: sve(vlen=256, nr=16, **f),
                 "max,sve256=on")):
            with self.subTest(isa=isa):
                specials.check_kernels(
                    self, make,
                    lambda text, obj: assemble_for("aarch64", text, obj),
                    lambda sources, exe: subprocess.run(
                        [TARGETS["aarch64"]["cxx"], "-O1", "-static",
                         *sources, "-o", exe], check=True, timeout=300),
                    lambda exe, cpu=cpu: subprocess.run(
                        [TARGETS["aarch64"]["qemu"], "-cpu", cpu, exe],
                        capture_output=True, text=True, timeout=60))


if __name__ == "__main__":
    unittest.main()

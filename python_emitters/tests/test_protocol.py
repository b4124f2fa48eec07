"""The stdin/stdout/stderr/exit-status protocol, through a real subprocess."""

import json
import os
import re
import unittest

from qimeng_emitters import header

from .support import BASE, request, run_emitter


class ProtocolGoodRequestTest(unittest.TestCase):

    def test_good_request_succeeds(self):
        proc = run_emitter(json.dumps(BASE))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stderr, "")
        self.assertTrue(proc.stdout.strip())
        self.assertIn("# qm.symbol: qm_sgemm_", proc.stdout)
        self.assertTrue(proc.stdout.endswith("\n"))

    def test_runtime_sizes_are_announced(self):
        proc = run_emitter(json.dumps(request(
            runtime_ld=True, lda=None, ldb=None, ldc=None, dynamic_m=True,
            dynamic_n=True, dynamic_k=True)))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("# qm.runtime_sizes: m,n,k\n", proc.stdout)
        self.assertIn("_mrt_nrt_krt_ldrt_", proc.stdout)
        plain = run_emitter(json.dumps(BASE))
        self.assertNotIn("qm.runtime_sizes", plain.stdout)

    def test_avx512_request_succeeds(self):
        proc = run_emitter(json.dumps(request(isa="avx512", nr=32)))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stderr, "")
        self.assertIn("_x86_64_avx512", proc.stdout)


def _bad(**changes):
    return json.dumps(request(**changes))


# (name, stdin text, words the one error line must contain, case-insensitive)
BAD_REQUESTS = [
    ("invalid_json", '{"version": 1, "kind": ', ["json"]),
    ("empty_input", "", ["json"]),
    ("json_array", json.dumps([BASE]), ["object"]),
    ("json_number", "1", ["object"]),
    ("missing_version", _bad(version=None), ["version"]),
    ("wrong_version", _bad(version=2), ["version", "2"]),
    ("string_version", _bad(version="1"), ["version"]),
    ("missing_kind", _bad(kind=None), ["kind"]),
    ("unknown_kind", _bad(kind="dgemm"), ["kind", "dgemm"]),
    ("unknown_field", _bad(colour="blue"), ["unknown field", "colour"]),
    ("missing_isa", _bad(isa=None), ["isa"]),
    ("unknown_isa", _bad(isa="sse2"), ["isa", "sse2"]),
    ("isa_not_string", _bad(isa=2), ["isa"]),
    ("m_zero", _bad(m=0), ["'m'", ">= 1"]),
    ("m_string", _bad(m="7"), ["'m'", "integer"]),
    ("m_float", _bad(m=7.0), ["'m'", "integer"]),
    ("m_bool", _bad(m=True), ["'m'", "integer"]),
    ("m_missing", _bad(m=None), ["'m'"]),
    ("k_negative", _bad(k=-4), ["'k'"]),
    ("n_too_large", _bad(n=1 << 31), ["'n'", "too large"]),
    ("trans_a_string", _bad(trans_a="yes"), ["trans_a"]),
    ("trans_b_int", _bad(trans_b=1), ["trans_b"]),
    ("lda_below_k", _bad(lda=63), ["'lda'", "64"]),
    ("lda_below_m_transposed", _bad(trans_a=True, m=40, lda=39),
     ["'lda'", "40"]),
    ("ldb_below_n", _bad(ldb=10), ["'ldb'"]),
    ("ldc_below_n", _bad(ldc=63), ["'ldc'"]),
    ("runtime_ld_with_lda", _bad(runtime_ld=True, lda=64),
     ["runtime_ld", "lda"]),
    ("dynamic_n_without_runtime_ld", _bad(dynamic_n=True),
     ["dynamic_n", "runtime_ld"]),
    ("dynamic_k_without_runtime_ld", _bad(dynamic_k=True),
     ["dynamic_k", "runtime_ld"]),
    ("dynamic_k_fused_b_packing", _bad(dynamic_k=True, fuse_pack_b=True,
                                       runtime_ld=True, lda=None, ldb=None,
                                       ldc=None),
     ["dynamic_k", "fuse_pack_b"]),
    # B in place short of columns: AVX2 has no lane masks for its loads.
    ("b_in_place_column_edge_on_avx2", _bad(n=60, pack_b=False),
     ["pack_b = false", "multiple of nr", "avx512"]),
    ("column_edge_past_seven_mask_registers",
     _bad(isa="avx512", n=200, mr=1, nr=128, mc=1, nc=256),
     ["nr 128", "mask register", "seven"]),
    ("relu_max_without_relu", _bad(relu_max=6.0), ["relu_max", "needs"]),
    ("relu_max_negative", _bad(relu=True, relu_max=-1.0),
     ["relu_max", "above relu's floor"]),
    ("relu_max_below_floor", _bad(relu=True, relu_min=2.0, relu_max=1.0),
     ["relu_max", "above relu's floor", "2.0"]),
    ("relu_min_without_relu", _bad(relu_min=-1.0), ["relu_min", "needs"]),
    ("relu_min_zero", _bad(relu=True, relu_min=-0.0),
     ["relu_min", "leave it out"]),
    ("relu_min_infinite", _bad(relu=True, relu_min=float("-inf")),
     ["relu_min", "finite"]),
    ("relu_nan_to_floor_without_relu", _bad(relu_nan_to_floor=True),
     ["relu_nan_to_floor", "needs"]),
    ("relu_max_not_binary32", _bad(relu=True, relu_max=0.1),
     ["relu_max", "binary32"]),
    ("relu_max_string", _bad(relu=True, relu_max="6"),
     ["relu_max", "number"]),
    ("leaky_relu_with_relu", _bad(relu=True, leaky_relu=0.25),
     ["leaky_relu", "relu", "exclude"]),
    ("leaky_relu_zero", _bad(leaky_relu=0.0), ["leaky_relu", "above 0"]),
    ("activation_unknown", _bad(activation="swish"),
     ["activation", "swish", "gelu_erf"]),
    ("activation_with_relu", _bad(relu=True, activation="silu"),
     ["activation", "silu", "'relu'", "exclude"]),
    ("activation_with_leaky_relu", _bad(leaky_relu=0.25, activation="gelu_tanh"),
     ["activation", "'leaky_relu'", "exclude"]),
    # Three temporaries and the masked updates' register beside 30
    # accumulators do not fit 32.
    ("activation_registers", _bad(isa="avx512", mr=30, nr=16, mc=30,
                                  activation="sigmoid"),
     ["sigmoid", "four vector registers", "30 accumulators"]),
    # The floating-point kernels compute one (f32; bf16 and f16 on the
    # dot-product instructions): not the 8-bit ones, nor AMX's tiles.
    ("activation_on_int8", _bad(kind="igemm", isa="avx512", nr=32,
                                activation="gelu_erf"),
     ["activation"]),
    ("activation_on_amx", _bad(kind="sbgemm", isa="amx", mr=32, nr=32,
                               activation="silu"),
     ["activation"]),
    ("leaky_relu_negative", _bad(leaky_relu=-0.5), ["leaky_relu", "above 0"]),
    ("leaky_relu_one", _bad(leaky_relu=1.0), ["leaky_relu", "not 1"]),
    ("leaky_relu_not_binary32", _bad(leaky_relu=0.01),
     ["leaky_relu", "binary32"]),
    ("leaky_relu_infinite", _bad(leaky_relu=float("inf")),
     ["leaky_relu", "finite"]),
    ("runtime_ld_not_bool", _bad(runtime_ld=1), ["runtime_ld"]),
    ("dynamic_m_trans_a_immediate_lda", _bad(dynamic_m=True, trans_a=True),
     ["dynamic_m", "runtime_ld"]),
    ("nr_not_lanes_avx2", _bad(nr=12), ["nr", "8"]),
    ("nr_not_lanes_avx512", _bad(isa="avx512", nr=24), ["nr", "16"]),
    ("block_too_many_registers_avx2", _bad(mr=8, nr=16, mc=64),
     ["8x16", "19", "16"]),
    ("block_too_many_registers_avx512", _bad(isa="avx512", mr=16, nr=32,
                                             mc=64), ["16x32", "35", "32"]),
    ("k_unroll_3", _bad(k_unroll=3), ["k_unroll", "3"]),
    ("k_unroll_0", _bad(k_unroll=0), ["k_unroll"]),
    ("mr_missing", _bad(mr=None), ["'mr'"]),
    ("kc_missing", _bad(kc=None), ["'kc'"]),
    ("mc_not_multiple_of_mr", _bad(mc=64), ["mc", "mr"]),
    ("nc_not_multiple_of_nr", _bad(nc=100), ["nc", "nr"]),
    ("prefetch_too_far", _bad(prefetch_a=8193), ["prefetch_a"]),
    ("prefetch_negative", _bad(prefetch_b=-64), ["prefetch_b"]),
    ("unknown_fault", _bad(fault="bit-flip"), ["fault", "bit-flip"]),
    ("unknown_loop_order", _bad(loop_order="ji"), ["loop_order", "ji"]),
    ("unknown_a_layout", _bad(a_layout="cols"), ["a_layout", "cols"]),
    ("a_rows_transposed", _bad(a_layout="rows", trans_a=True),
     ["a_layout", "trans_a"]),
    ("a_direct_transposed", _bad(a_layout="direct", trans_a=True),
     ["a_layout", "trans_a"]),
    # (Three rows a base where B's rows are a run-time step: B in place.)
    ("a_direct_runtime_ld_ten_rows_b_in_place",
     _bad(isa="avx512", a_layout="direct", runtime_ld=True, mr=10, nr=32,
          mc=20, nc=64, pack_b=False),
     ["a_layout 'direct'", "runtime_ld", "mr <= 9"]),
    ("a_direct_runtime_ld_eighteen_rows",
     _bad(isa="avx512", a_layout="direct", runtime_ld=True, mr=18, nr=16,
          mc=36, nc=64),
     ["a_layout 'direct'", "runtime_ld", "mr <= 17"]),
]


class ProtocolBadRequestTest(unittest.TestCase):
    """Each bad request: exit 1, empty stdout, one ``error: `` line."""

    def check_error(self, text, words):
        proc = run_emitter(text)
        self.assertEqual(proc.returncode, 1,
                         f"stdout={proc.stdout[:200]!r} stderr={proc.stderr!r}")
        self.assertEqual(proc.stdout, "")
        lines = proc.stderr.splitlines()
        self.assertEqual(len(lines), 1, proc.stderr)
        self.assertTrue(proc.stderr.endswith("\n"), proc.stderr)
        self.assertTrue(lines[0].startswith("error: "), lines[0])
        self.assertNotIn("internal", lines[0])
        for word in words:
            self.assertIn(word.lower(), lines[0].lower())


def _make_test(text, words):
    def test(self):
        self.check_error(text, words)
    return test


for _name, _text, _words in BAD_REQUESTS:
    setattr(ProtocolBadRequestTest, f"test_{_name}", _make_test(_text, _words))
del _name, _text, _words


if __name__ == "__main__":
    unittest.main()


class WorkspaceHeaderTest(unittest.TestCase):
    """header.py's slots are the C++ side's (WorkspaceHeader.h): the
    caller writes where the kernels read."""

    HEADER_H = os.path.join(os.path.dirname(__file__), "..", "..", "include",
                            "qimeng", "Kernel", "WorkspaceHeader.h")

    def test_slots_match_the_cpp_header(self):
        if not os.path.exists(self.HEADER_H):
            self.skipTest("WorkspaceHeader.h is not beside this package")
        with open(self.HEADER_H) as f:
            cpp = dict(re.findall(
                r"constexpr uint64_t (k\w+) = (\w+);", f.read()))
        # Aliases (kInputStridesOffset = kLeadingDimsOffset) resolved.
        cpp = {k: int(cpp.get(v, v)) for k, v in cpp.items()}
        pairs = {"kRangeOffset": header.RANGE_OFFSET,
                 "kRuntimeKOffset": header.K_SLOT,
                 "kHalfOutputLdOffset": header.OUTPUT_LD_OFFSET,
                 "kLeadingDimsOffset": header.LD_OFFSET,
                 "kInputStridesOffset": header.LD_OFFSET,
                 "kBiasOffset": header.BIAS_OFFSET,
                 "kHalfOutputOffset": header.OUTPUT_OFFSET,
                 "kWorkspaceHeaderBytes": header.HEADER_BYTES}
        self.assertEqual(set(cpp), set(pairs))
        for name, value in pairs.items():
            self.assertEqual(cpp[name], value, name)

"""The output contract: headers, symbol, body rules, blocking, workspace."""

import json
import re
import unittest

from qimeng_emitters import GENERATOR_VERSION
from qimeng_emitters.__main__ import run
from qimeng_emitters.errors import RequestError

from .support import BASE, body, clamped, code, emit, header, request

VARIANTS = [
    request(),
    request(m=13, n=33, k=8),
    request(m=1, n=1, k=1, k_unroll=1),
    request(trans_a=True, trans_b=True, lda=80, ldb=96, ldc=70),
    request(trans_a=True, m=37, n=29, k=50, kc=16, mc=12, nc=16,
            prefetch_a=256, prefetch_b=512),
    request(isa="avx512", nr=32, mr=14, mc=70, k_unroll=8),
    request(isa="avx512", nr=16, mr=8, mc=64, m=100, n=70, k=33,
            trans_b=True, fault="drop-k"),
    request(m=20, n=20, k=20, fault="write-past-edge"),
]

JUMP = re.compile(r"^j[a-z]+\s+(\S+)$")
LABEL_DEF = re.compile(r"^([^\s#:]+):")


class HeaderTest(unittest.TestCase):

    def test_required_headers(self):
        for req in VARIANTS:
            with self.subTest(req=req):
                text = emit(req)
                for key in ("symbol", "workspace_bytes", "generator",
                            "args", "clobbers"):
                    self.assertIsNotNone(header(text, key), key)
                self.assertEqual(header(text, "generator"), GENERATOR_VERSION)
                self.assertRegex(header(text, "workspace_bytes"), r"^\d+$")

    def test_header_precedes_code(self):
        lines = emit(BASE).splitlines()
        first_code = next(i for i, line in enumerate(lines)
                          if line.strip() and not line.startswith("#"))
        for key in ("symbol", "workspace_bytes", "generator", "clobbers"):
            index = next(i for i, line in enumerate(lines)
                         if line.startswith(f"# qm.{key}: "))
            self.assertLess(index, first_code, key)

    def test_clobbers_name_vector_registers_of_the_isa(self):
        avx2 = header(emit(BASE), "clobbers").split(",")
        self.assertIn("ymm15", avx2)
        self.assertNotIn("ymm16", avx2)
        self.assertIn("rbx", avx2)
        avx512 = header(emit(request(isa="avx512", nr=32)), "clobbers")
        self.assertIn("zmm31", avx512.split(","))

    def test_args_are_the_calling_conventions(self):
        # A, B, C and the workspace in System V's first four integer
        # argument registers; the prologue saves its callee-saved ones.
        text = emit(BASE)
        self.assertEqual(header(text, "args"), "rdi,rsi,rdx,rcx")
        for reg in ("rbx", "r12", "r13", "r14", "r15"):
            self.assertIn(f"\tpushq\t%{reg}", text)

    def test_request_echo_round_trips(self):
        req = request(trans_b=True, prefetch_b=128)
        echo = header(emit(req), "request")
        self.assertIsNotNone(echo)
        self.assertEqual(json.loads(echo), req)

    def test_body_markers_once_and_in_order(self):
        for req in VARIANTS:
            with self.subTest(req=req):
                lines = emit(req).splitlines()
                self.assertEqual(lines.count("# qm.body.begin"), 1)
                self.assertEqual(lines.count("# qm.body.end"), 1)
                self.assertLess(lines.index("# qm.body.begin"),
                                lines.index("# qm.body.end"))
                self.assertTrue(body("\n".join(lines)))


class SymbolTest(unittest.TestCase):

    def test_symbol_is_defined_and_global(self):
        for req in VARIANTS:
            with self.subTest(req=req):
                text = emit(req)
                symbol = header(text, "symbol")
                self.assertRegex(symbol, r"^[A-Za-z_][A-Za-z0-9_]*$")
                lines = [line.strip() for line in text.splitlines()]
                self.assertIn(f"{symbol}:", lines)
                self.assertTrue(any(re.fullmatch(
                    rf"\.globl\s+{re.escape(symbol)}", line)
                    for line in lines))
                self.assertTrue(symbol.endswith("_x86_64_" + req["isa"]))

    def test_symbol_names_every_parameter(self):
        req = request(m=37, n=29, k=50, trans_a=True, lda=41, ldb=31, ldc=33,
                      mr=4, nr=24, k_unroll=2, kc=16, mc=12, nc=24,
                      prefetch_a=256, prefetch_b=512)
        symbol = header(emit(req), "symbol")
        for part in ("37x29x50", "_tn_", "lda41", "ldb31", "ldc33", "4x24",
                     "ku2", "kc16", "mc12", "nc24", "pfa256", "pfb512"):
            self.assertIn(part, symbol)
        self.assertTrue(symbol.endswith("_x86_64_avx2"), symbol)

    def test_every_parameter_changes_the_symbol(self):
        base = request(m=40, n=40, k=40, kc=32, mc=36, nc=32)
        changes = [dict(m=41), dict(n=41), dict(k=41), dict(trans_a=True),
                   dict(trans_b=True), dict(lda=48), dict(ldb=48),
                   dict(ldc=48), dict(mr=4, mc=36), dict(nr=8, nc=32),
                   dict(k_unroll=2), dict(kc=16), dict(mc=18), dict(nc=16),
                   dict(prefetch_a=64), dict(prefetch_b=64),
                   dict(fault="drop-k"), dict(isa="avx512", nr=16, nc=32)]
        reference = header(emit(base), "symbol")
        seen = {reference}
        for change in changes:
            with self.subTest(change=change):
                req = dict(base, **change)
                symbol = header(emit(req), "symbol")
                self.assertNotEqual(symbol, reference)
                self.assertNotIn(symbol, seen)
                seen.add(symbol)

    def test_default_leading_dimensions_are_spelled_out(self):
        self.assertIn("_nn_lda64_ldb64_ldc64_", header(emit(BASE), "symbol"))
        t = request(m=10, n=20, k=30, trans_a=True, trans_b=True)
        # A is k x m when transposed (lda >= m), B is n x k (ldb >= k).
        self.assertIn("_tt_lda10_ldb30_ldc20_", header(emit(t), "symbol"))

    def test_runtime_ld_symbol_and_code(self):
        """A runtime_ld kernel is named for it and reads its leading
        dimensions from the workspace header (64, 72, 80), which the
        emitter grows to 128 bytes: the edge tile starts there."""
        text = emit(request(runtime_ld=True))
        symbol = header(text, "symbol")
        self.assertIn("_nn_ldrt_", symbol)
        self.assertNotIn("lda", symbol)
        code = body(text)
        for offset in (64, 72, 80):
            self.assertIn(f"\tmovq {offset}(%rbx), %rax", code)
        self.assertNotEqual(header(emit(request()), "symbol"), symbol)

    def test_fault_is_in_the_symbol(self):
        symbol = header(emit(request(fault="write-past-edge")), "symbol")
        self.assertIn("fault_write_past_edge", symbol)
        self.assertTrue(symbol.endswith("_x86_64_avx2"))

    def test_blocking_is_clamped(self):
        symbol = header(emit(request(k=3)), "symbol")
        self.assertIn("_kc3_", symbol)
        symbol = header(emit(request(m=13, n=33)), "symbol")
        self.assertIn("_mc18_", symbol)    # round_up(13, 6)
        self.assertIn("_nc48_", symbol)    # round_up(33, 16)
        symbol = header(emit(request(m=500, n=600, k=700)), "symbol")
        self.assertIn("_kc256_mc72_nc512_", symbol)


class BodyTest(unittest.TestCase):
    """The body is inline asm: no stack, numeric local labels only."""

    FORBIDDEN = re.compile(r"^(push|pop|call|ret|leave|enter|syscall)\w*\b")

    def test_body_does_not_touch_the_stack(self):
        for req in VARIANTS:
            with self.subTest(req=req):
                for line in body(emit(req)):
                    text = code(line)
                    self.assertNotRegex(text, self.FORBIDDEN)
                    self.assertNotIn("%rsp", text)
                    self.assertNotIn("%esp", text)
                    self.assertNotIn("%rbp", text)
                    self.assertNotIn("%ebp", text)

    def test_labels_are_numeric_and_resolve(self):
        for req in VARIANTS:
            with self.subTest(req=req):
                lines = [code(line) for line in body(emit(req))]
                defined = {}
                for index, text in enumerate(lines):
                    match = LABEL_DEF.match(text)
                    if match:
                        self.assertRegex(match.group(1), r"^\d+$", text)
                        defined.setdefault(match.group(1), []).append(index)
                for index, text in enumerate(lines):
                    match = JUMP.match(text)
                    if not match:
                        continue
                    target = match.group(1)
                    self.assertRegex(target, r"^\d+[fb]$", text)
                    places = defined.get(target[:-1], [])
                    if target.endswith("f"):
                        self.assertTrue(any(p > index for p in places), text)
                    else:
                        self.assertTrue(any(p < index for p in places), text)

    def test_no_symbolic_references_in_body(self):
        text = "\n".join(code(line) for line in body(emit(BASE)))
        symbol = header(emit(BASE), "symbol")
        self.assertNotIn(symbol, text)
        self.assertNotIn("%rip", text)
        self.assertNotRegex(text, r"(?m)^\s*\.(globl|type|size|section)")


class DeterminismAndWorkspaceTest(unittest.TestCase):

    def test_same_request_same_text(self):
        for req in VARIANTS:
            with self.subTest(req=req):
                self.assertEqual(emit(req), emit(req))

    def test_key_order_does_not_matter(self):
        text = json.dumps(BASE)
        reordered = json.dumps(dict(reversed(list(BASE.items()))))
        self.assertEqual(run(text), run(reordered))

    def test_workspace_covers_packed_panels(self):
        for req in VARIANTS + [request(m=500, n=600, k=700),
                               request(k=3), request(m=13, n=33)]:
            with self.subTest(req=req):
                ws = int(header(emit(req), "workspace_bytes"))
                kc, mc, nc = clamped(req)
                self.assertEqual(ws % 64, 0, ws)
                self.assertGreaterEqual(ws, 4 * (mc * kc + kc * nc))

    def test_workspace_grows_with_blocking(self):
        small = int(header(emit(request(kc=16)), "workspace_bytes"))
        large = int(header(emit(request(kc=64)), "workspace_bytes"))
        self.assertGreater(large, small)


class EdgeCodeTest(unittest.TestCase):
    """Edge code is emitted only when the shape (or a fault) needs it."""

    def edge_comments(self, req):
        text = emit(req)
        return ("tile short of" in text, "edge sliver" in text)

    def test_exact_multiples_have_no_edge_code(self):
        req = request(m=12, n=32, k=8, mr=6, nr=16)
        self.assertEqual(self.edge_comments(req), (False, False))

    def test_ragged_shape_has_edge_code(self):
        req = request(m=13, n=33, k=8, mr=6, nr=16)
        self.assertEqual(self.edge_comments(req), (True, True))

    def test_edge_in_one_dimension_only(self):
        tile, sliver = self.edge_comments(request(m=13, n=32, k=8))
        self.assertTrue(tile)
        self.assertIn("pack A: edge sliver", emit(request(m=13, n=32, k=8)))
        self.assertNotIn("pack B: edge sliver", emit(request(m=13, n=32, k=8)))
        self.assertIn("pack B: edge sliver", emit(request(m=12, n=33, k=8)))
        self.assertNotIn("pack A: edge sliver", emit(request(m=12, n=33, k=8)))

    def test_k_remainder_does_not_need_edge_code(self):
        self.assertEqual(self.edge_comments(request(m=12, n=32, k=7)),
                         (False, False))


class InProcessErrorTest(unittest.TestCase):
    """run() raises RequestError (not some other exception) for bad input."""

    def test_request_errors(self):
        for text in ("nope", "[]", json.dumps(request(version=3)),
                     json.dumps(request(mr=0)), json.dumps(request(nr=None)),
                     json.dumps(request(fault=7))):
            with self.subTest(text=text):
                with self.assertRaises(RequestError):
                    run(text)



class TransposedPanelSweepTest(unittest.TestCase):
    """B^T packed with all of M in one row block: the K loops prefetch the
    next panel's rows of B^T, kc floats a row (sgemm.py,
    sweep_next_transposed_panel); nowhere else."""

    SWEPT = dict(BASE, isa="avx512", m=20, n=130, k=70, mr=6, nr=32, mc=24,
                 nc=64, kc=32, trans_b=True)

    def test_sweeps_the_next_panel_a_row_an_iteration(self):
        text = emit(self.SWEPT)
        self.assertIn("next B^T panel", text)
        # One row of B^T, kc = 32 floats (two lines), then ldb on.
        self.assertRegex(text, r"prefetcht1 0\(%rdx\)\n\tprefetcht1 "
                               r"64\(%rdx\)\n\taddq \$280, %rdx")

    def test_only_b_transposed_packed_for_one_row_block_on_avx512(self):
        for changes in (dict(m=30), dict(trans_b=False), dict(isa="avx2",
                                                              nr=16),
                        dict(b_prepacked=True), dict(dynamic_m=True,
                                                     runtime_ld=True)):
            with self.subTest(changes=changes):
                req = dict(self.SWEPT, **changes)
                self.assertNotIn("next B^T panel", emit(req))


class InPlaceBKLoopsTest(unittest.TestCase):
    """B read in place on AVX-512: only the short last sliver loads B
    through its lane masks (masked loads that miss the caches stream at a
    third of the rate on Zen 5), and every path out of the K loops joins
    the C update past the K loops' own ends, so that the swept panel's
    walk is stored once, by the path that walked it."""

    MASKED = dict(BASE, isa="avx512", m=8, n=40, k=64, mr=8, nr=32, kc=16,
                  mc=8, nc=64, pack_b=False, a_layout="direct",
                  sweep_b=True)
    FUSED = dict(BASE, isa="avx512", m=12, n=128, k=256, mr=6, nr=64,
                 kc=64, mc=12, nc=128, fuse_pack_b=True, sweep_b=True)

    def test_only_the_last_sliver_masks_b(self):
        for changes in ({}, dict(dynamic_n=True, dynamic_k=True,
                                 runtime_ld=True)):
            with self.subTest(changes=changes):
                text = emit(dict(self.MASKED, **changes))
                whole, last = text.split("K loops with B's loads masked")
                last = last.split("k done: update C")[0]
                self.assertIn("kortestw %k2, %k2", whole)
                self.assertRegex(whole, r"vmovups 0\(%rsi\), %zmm16\n")
                self.assertNotIn("(%rsi), %zmm16 {%k1}{z}", whole)
                self.assertIn("vmovups 0(%rsi), %zmm16 {%k1}{z}", last)
                self.assertIn("vmovups 64(%rsi), %zmm17 {%k2}{z}", last)

    def test_the_paths_join_past_the_walks_store(self):
        for req in (self.FUSED, self.MASKED):
            with self.subTest(fused="fuse_pack_b" in req):
                text = emit(req)
                walk_stores = re.findall(r"movq %rdx, 56\(%rbx\)", text)
                # The fused tile's loops and the others' (two paths each
                # for the masked kernel): each stores its walk once.
                self.assertEqual(len(walk_stores), 2)
                after = text.split("# k done: update C\n")[1]
                self.assertNotIn("56(%rbx)", after.split("C +=")[0])


class TransposedProductTest(unittest.TestCase):
    """product "transposed" (C^T = B^T * A^T): the header and the symbol
    are the caller's (C's problem, its run-time sizes), the blocking the
    kernel's; the caller's A goes to the kernel's B slot; what it cannot
    do is refused."""

    REQ = dict(BASE, isa="avx512", m=20, n=100, k=40, lda=41, ldb=43,
               ldc=101, trans_b=True, mr=12, nr=32, mc=24, nc=32, kc=16,
               a_layout="direct", product="transposed")

    def test_symbol_and_header_are_the_callers(self):
        text = emit(self.REQ)
        self.assertEqual(
            header(text, "symbol"),
            "qm_sgemm_20x100x40_nt_lda41_ldb43_ldc101_12x32_ku4_kc16_mc24"
            "_nc32_pfa0_pfb0_adirect_ct_x86_64_avx512")
        self.assertIn("C[20x100] += A * B^T, K = 40, computed as C^T = B^T "
                      "* A^T", text)
        self.assertIn("movq %rdi, 8(%rcx)", text)
        self.assertIn("movq %rsi, 0(%rcx)", text)
        dynamic = emit(dict(self.REQ, dynamic_m=True))
        self.assertEqual(header(dynamic, "runtime_sizes"), "m")
        self.assertIn("_nt_mrt_", header(dynamic, "symbol"))

    def test_refusals(self):
        for changes, why in ((dict(isa="avx2", nr=16, mr=6), "avx2"),
                             (dict(b_prepacked=True), "b_prepacked"),
                             (dict(mr=17, nr=16), "mr <= 16"),
                             (dict(product="sideways"), "unknown product")):
            with self.subTest(changes=changes):
                with self.assertRaisesRegex(RequestError, why):
                    emit(dict(self.REQ, **changes))


if __name__ == "__main__":
    unittest.main()

"""The AMX GEMMs (amx.py): sbgemm (bf16 x bf16 -> f32, TDPBF16PS) and
igemm (u8 or s8 x s8 -> s32, TDPBUSD/TDPBSSD) with isa amx. Requests, and
kernels run on this CPU by the dot GEMMs' harnesses (test_dotgemm.py:
exact small-integer operands against a reference, NaN-poisoned or
sentinel C, guards after C, A and B unchanged); broken variants caught."""

import subprocess
import unittest

from qimeng_emitters.amx import emit as emit_amx
from qimeng_emitters.errors import RequestError

from .support import (LLVM_MC, RefusalTestCase, emit, header,
                      requires_llvm_mc, runs_kernels)
from .test_dotconv import HARNESS as CONV_HARNESS
from .test_dotconv import DotConvExecutionTest
from .test_dotgemm import (F16_HARNESS, INT8_HARNESS, HarnessTest,
                           KernelHarness, f16_harness)

BASE = {"version": 1, "kind": "sbgemm", "isa": "amx", "m": 37, "n": 45,
        "k": 29, "mr": 32, "nr": 32, "kc": 64, "mc": 64, "nc": 64,
        "runtime_ld": True}


def request(**changes):
    return {k: v for k, v in dict(BASE, **changes).items() if v is not None}


# The product transposed: C^T = B^T * A^T (pack_b false).
TRANSPOSED = {"trans_b": True, "pack_b": False}


def int8_request(**changes):
    return request(**dict(dict(kind="igemm", a_type="s8", kc=128), **changes))


class RequestTest(RefusalTestCase):
    emit_under_test = staticmethod(emit_amx)

    def test_refusals(self):
        self.refuses(request(isa="avx512"), "isa amx")
        self.refuses(request(mr=24, mc=48), "only with a_layout direct")
        for mr in (7, 25, 34):
            self.refuses(request(mr=mr, k=64, a_layout="direct"),
                         f"mr = {mr}: an AMX block")
        self.refuses(request(mr=28, mc=56, k=64, **TRANSPOSED), "by 16 or 32")
        self.refuses(request(nr=48), "nr = 48")
        self.refuses(request(k=200, kc=48), "multiple of 32")
        self.refuses(int8_request(k=300, kc=96), "multiple of 64")
        self.refuses(request(trans_a=True), "trans_a")
        self.refuses(request(trans_b=True, fault="swap-pairs"),
                     "no pairs to swap")
        self.refuses(request(fault="nope"), "unknown fault")
        self.refuses(int8_request(a_type="s16"), "a_type")
        self.refuses(int8_request(bf16_output=True), "bf16_output")
        self.refuses(request(ldd=64), "needs bf16_output")
        self.refuses(request(bias="rows"), "along the columns")
        self.refuses(int8_request(relu=True), "relu")
        self.refuses(request(a_layout="direct"), "whole tile steps")
        self.refuses(request(a_layout="rows"), "k-major")
        self.refuses(request(b_prepacked=True, fault="swap-pairs"),
                     "no PACK B")
        self.refuses(request(pack_b=False), "needs trans_b")
        self.refuses(request(pack_b=False, trans_b=True, k=64,
                             a_layout="k-major"), "a_layout k-major")
        self.refuses(request(pack_b=False, trans_b=True), "whole tile steps")
        # f16 is split where it is packed.
        self.refuses(f16_request(k=64, kc=64, a_layout="direct"),
                     "not with a_layout direct")
        self.refuses(f16_request(k=64, kc=64, trans_b=True, pack_b=False),
                     "not with a_layout direct")
        self.refuses(f16_request(b_prepacked=True), "not with b_prepacked")
        self.refuses(f16_request(bf16_output=True), "unknown field")
        self.refuses(request(f16_output=True), "unknown field")
        self.refuses(f16_request(fault="swap-pairs"), "no pairs to swap")
        self.refuses(f16_request(dynamic_m=True, runtime_ld=None),
                     "with runtime_ld")
        self.refuses(request(trans_a=True), "not trans_a")
        self.refuses(request(dynamic_n=True, runtime_ld=None),
                     "needs runtime_ld")
        self.refuses(request(dynamic_n=True, b_prepacked=True),
                     "dynamic_n: columns from the header")
        self.refuses(request(dynamic_k=True, runtime_ld=None),
                     "needs runtime_ld")
        for field, why in (("overwrite", "overwrite or an epilogue"),
                           ("relu", "overwrite or an epilogue"),
                           ("bf16_output", "a 16-bit D"),
                           ("b_prepacked", "a prepacked B")):
            self.refuses(request(dynamic_k=True, **{field: True}), why)
        self.refuses(request(dynamic_k=True, k=64, a_layout="direct"),
                     "dynamic_k: not with A in place")
        self.refuses(request(fault="drop-low"), "only f16")

    def test_f16_dispatch(self):
        """The protocol's dispatch sends an avx512 shgemm to dotgemm.py
        (f16 widened to f32), an amx one here."""
        self.assertTrue(header(emit(f16_request(isa="avx512", mr=8, nr=32)),
                               "symbol").endswith("_x86_64_avx512"))
        self.assertTrue(header(emit(f16_request()),
                               "symbol").endswith("_x86_64_amxbf16"))

    @requires_llvm_mc
    def test_leaky_relu_assembles(self):
        """Leaky relu on every path that stores through the epilogue (the
        row stores, the transposed product's, f16's, a convolution's):
        the slope's symbol part, the product and the choice (max below a
        slope of 1, min above), assembled (they run on AMX hosts only:
        the execution tests)."""
        for req, choose in (
                (request(bias="columns", leaky_relu=0.25), "vmaxps"),
                (request(leaky_relu=4.0, k=64, kc=64, **TRANSPOSED),
                 "vminps"),
                (f16_request(leaky_relu=0.25, f16_output=True), "vmaxps"),
                (conv_request(bias=True, leaky_relu=4.0), "vminps")):
            with self.subTest(req=req):
                text = emit(req)
                slope = req["leaky_relu"]
                self.assertIn("_leaky3e800000" if slope == 0.25
                              else "_leaky40800000", header(text, "symbol"))
                self.assertRegex(text, r"vmulps %zmm\d+, %zmm\d+, %zmm\d+")
                self.assertIn(choose, text)
                proc = subprocess.run(
                    [LLVM_MC, "-triple=x86_64-unknown-linux-gnu",
                     "-mattr=" + AmxHarness.MATTR, "-filetype=null"],
                    input=text, capture_output=True, text=True, timeout=60)
                self.assertEqual((proc.returncode, proc.stderr), (0, ""))

    def test_header_and_dispatch(self):
        """The protocol's entry point sends isa amx to amx.py: the tile
        instructions, the permission request, the configuration and the
        tile registers among the clobbers."""
        text = emit(request())
        self.assertEqual(header(text, "symbol"),
                         "qm_sbgemm_37x45x29_nn_ldrt_32x32_kc32_mc64_nc64"
                         "_x86_64_amxbf16")
        for needle in ("tdpbf16ps %tmm6, %tmm4, %tmm0", "ldtilecfg",
                       "tilerelease", "syscall", "tileloadd"):
            self.assertIn(needle, text)
        self.assertIn("tmm7", header(text, "clobbers"))
        self.assertIn("amx-bf16", header(text, "features"))
        self.assertIn("tdpbssd", emit(int8_request()))
        self.assertIn("tdpbusd", emit(int8_request(a_type="u8")))
        # Two tiles a block of 32 x 32, four C tiles: 4 x 16 x 16 x 32 x 2.
        self.assertEqual(header(text, "inner_loop_flops"), "65536")


class AmxHarness(HarnessTest):
    EMIT = staticmethod(emit)
    MATTR = HarnessTest.MATTR + ",+amx-tile,+amx-bf16,+amx-int8"


@runs_kernels("amx_bf16", "avx512bw", lacks="amx_bf16 (AMX)")
class Bf16ExecutionTest(AmxHarness):

    def test_kernels_match_reference(self):
        cases = {
            "edges_odd_k": request(),
            "one_element": request(m=1, n=1, k=1),
            "whole_tiles": request(m=64, n=64, k=64, overwrite=True),
            # Every block whole tile steps: PACK A unrolled, unmasked.
            "whole_steps_blocks": request(m=70, n=90, k=256, kc=64,
                                          mc=64, nc=64),
            "several_blocks": request(m=100, n=150, k=301, kc=128, mc=64,
                                      nc=96),
            "one_tile_blocks": request(m=40, n=50, k=70, mr=16, nr=16,
                                       kc=32, mc=32, nc=32),
            "tall_narrow": request(m=70, n=20, k=40, mr=32, nr=16, mc=64,
                                   nc=32),
            "overwrite_blocks": request(m=70, n=70, k=200, kc=64,
                                        overwrite=True),
            "immediate_lds": request(runtime_ld=None, lda=32, ldb=50,
                                     ldc=52),
            # Panels of 256 columns and more: counts past BZHI's 8-bit
            # index.
            "wide_panels": request(m=9, n=600, k=20, nc=576),
            # B transposed (torch's linear weights), read a column at a
            # time: edges, several blocks, one tile wide, immediate lds.
            "trans_b": request(trans_b=True),
            "trans_b_blocks": request(trans_b=True, m=100, n=150, k=301,
                                      kc=128, mc=64, nc=96, overwrite=True),
            "trans_b_one_tile": request(trans_b=True, m=40, n=50, k=70,
                                        mr=16, nr=16, kc=32, mc=32, nc=32),
            "trans_b_immediate": request(trans_b=True, runtime_ld=None,
                                         lda=32, ldb=34, ldc=52),
            # D = bf16(C + A * B) from the only kc block and from the last
            # of several (the earlier ones sum into C), overwriting or
            # accumulating, B as stored or transposed, immediate ldd.
            "bf16_output": request(bf16_output=True, overwrite=True),
            "bf16_output_blocks": request(bf16_output=True, overwrite=True,
                                          m=100, n=150, k=301, kc=64,
                                          mc=64, nc=96),
            "bf16_output_accumulates": request(bf16_output=True,
                                               trans_b=True, m=70, k=200,
                                               kc=64),
            # The epilogue where the last kc block stores: into C or D,
            # from the only block and the last of several, one tile wide.
            "bias_relu": request(bias="columns", relu=True, overwrite=True),
            "bias_relu_blocks": request(bias="columns", relu=True, m=100,
                                        n=150, k=301, kc=64, mc=64, nc=96),
            "clamp_blocks": request(bias="columns", relu=True,
                                    relu_min=-2.5, relu_max=6.0, m=100,
                                    n=150, k=301, kc=64, mc=64, nc=96),
            "relu6_bf16_output": request(relu=True, relu_max=6.0,
                                         bf16_output=True, overwrite=True,
                                         trans_b=True),
            "bias_leaky_blocks": request(bias="columns", leaky_relu=0.25,
                                         m=100, n=150, k=301, kc=64, mc=64,
                                         nc=96),
            "bias_one_tile": request(bias="columns", mr=16, nr=16, kc=32,
                                     mc=32, nc=32, overwrite=True),
            "bf16_output_immediate": request(bf16_output=True,
                                             overwrite=True,
                                             runtime_ld=None, lda=32,
                                             ldb=50, ldc=52, ldd=54),
            # A in place: the tiles read from A at lda, the last block's
            # sliver past mb copied (zero rows past it); one-tile blocks;
            # B^T; the epilogue into D with immediate leading dimensions;
            # kc not dividing K.
            "a_direct": request(m=70, k=128, kc=64, a_layout="direct"),
            "a_direct_one_tile": request(m=40, n=50, k=96, mr=16, nr=16,
                                         kc=32, mc=32, nc=32,
                                         a_layout="direct"),
            "a_direct_trans_b": request(trans_b=True, m=100, n=150, k=320,
                                        kc=128, mc=64, nc=96,
                                        overwrite=True, a_layout="direct"),
            # Tiles of fewer than 16 rows: two of 12 (the last block's
            # second past mb, copied), one of 14; the epilogue, D.
            "a_direct_tiles_of_12": request(m=70, k=128, kc=64, mr=24,
                                            mc=48, a_layout="direct"),
            "a_direct_one_tile_of_14": request(
                m=40, n=50, k=96, mr=14, nr=16, kc=32, mc=28, nc=32,
                a_layout="direct", bias="columns", relu=True,
                bf16_output=True, overwrite=True),
            # B prepacked by the caller (qm.b_prepacked: the harness packs
            # it): tiles of 16 and 32 columns, several kc blocks, B^T, A
            # in place too, K not whole tile steps (zero groups past it).
            "b_prepacked": request(b_prepacked=True),
            "b_prepacked_blocks": request(b_prepacked=True, m=100, n=150,
                                          k=301, kc=128, mc=64, nc=96),
            "b_prepacked_one_tile": request(b_prepacked=True, mr=16, nr=16,
                                            m=40, n=50, k=70, kc=32,
                                            mc=32, nc=32),
            "b_prepacked_trans_b_direct": request(
                b_prepacked=True, trans_b=True, a_layout="direct", m=70,
                k=128, kc=64, bias="columns", relu=True, overwrite=True),
            # The product transposed (pack_b false: B^T's rows in place as
            # the tiles' A, A packed as their B, C through 16 x 16
            # transposes): edges of both, several kc blocks accumulating
            # into C, one-tile blocks, the epilogue along C's rows, a bf16
            # D, immediate leading dimensions.
            "transposed": request(m=37, n=45, k=64, kc=64, **TRANSPOSED),
            "transposed_blocks": request(m=50, n=100, k=320, kc=128, mc=64,
                                         nc=64, **TRANSPOSED),
            "transposed_one_tile": request(m=20, n=40, k=96, mr=16, nr=16,
                                           kc=32, mc=32, nc=32,
                                           overwrite=True, **TRANSPOSED),
            "transposed_epilogue": request(m=37, n=45, k=64, kc=64,
                                           bias="columns", relu=True,
                                           relu_max=6.0, overwrite=True,
                                           **TRANSPOSED),
            "transposed_steep_leaky": request(m=37, n=45, k=64, kc=64,
                                              bias="columns",
                                              leaky_relu=4.0, **TRANSPOSED),
            "transposed_bf16_output": request(m=16, n=70, k=128, kc=64,
                                              mr=16, bf16_output=True,
                                              **TRANSPOSED),
            "transposed_immediate": request(m=37, k=64, runtime_ld=None,
                                            lda=67, ldb=69, ldc=52, ldd=54,
                                            bf16_output=True, overwrite=True,
                                            **TRANSPOSED),
            "a_direct_epilogue_immediate": request(
                m=37, k=64, a_layout="direct", runtime_ld=None, lda=67,
                ldb=50, ldc=52, ldd=54, bf16_output=True, overwrite=True,
                bias="columns", relu=True),
        }
        for name, req in cases.items():
            with self.subTest(name=name):
                status, output = self.run_kernel(name, req)
                self.assertEqual(status, 0, output)
                self.assertEqual(output.strip(), "ok")

    def test_runtime_k(self):
        """dynamic_k: K from the header, B as stored or transposed."""
        self.check_runtime_k(request(m=40, k=70), layouts=("nn", "nt"))

    def test_runtime_rows_columns_and_parts(self):
        """dynamic_m and dynamic_n: A packed and in place, B as stored and
        transposed, the epilogue into a bf16 D; the parallel form; all
        three sizes at run time."""
        for name, req in (
                ("packed", request(m=40, k=70)),
                ("trans_b", request(m=40, k=70, trans_b=True)),
                ("direct", request(m=40, k=64, a_layout="direct")),
                ("epilogue", request(m=40, k=70, overwrite=True,
                                     bias="columns", relu=True,
                                     bf16_output=True))):
            with self.subTest(name=name):
                self.check_runtime_parts(req)
        self.check_all_sizes_at_run_time(request(m=40, k=70))

    def test_parts(self):
        """The parallel form: two calls on two parts of the rows."""
        for name, req in (("par", request(m=70, parallel=True)),
                          ("par_direct", request(m=70, k=64, parallel=True,
                                                 a_layout="direct")),
                          ("par_transposed", request(m=70, k=64,
                                                     parallel=True,
                                                     **TRANSPOSED))):
            with self.subTest(name=name):
                status, output = self.run_kernel(name, req, split=32)
                self.assertEqual(status, 0, output)
                self.assertEqual(output.strip(), "ok")

    def test_faults_are_caught(self):
        for fault, trans_b, k in (
                ("drop-k", False, 29), ("swap-pairs", False, 29),
                ("write-past-edge", False, 29), ("drop-k", True, 29),
                ("write-past-edge", True, 29), ("drop-k", False, 64),
                ("drop-k", False, "direct"), ("drop-k", True, "transposed"),
                ("write-past-edge", True, "transposed")):
            with self.subTest(fault=fault, trans_b=trans_b, k=k):
                direct = k in ("direct", "transposed")
                status, output = self.run_kernel(
                    f"{fault}{trans_b}{k}",
                    request(fault=fault, mr=16, nr=16, mc=32, nc=32,
                            trans_b=trans_b, k=64 if direct else k, kc=32,
                            a_layout="direct" if direct else None,
                            pack_b=False if k == "transposed" else None))
                self.assertEqual(status, 1, output)
                self.assertIn("bad elements", output)


@runs_kernels("amx_int8", "avx512bw", lacks="amx_int8 (AMX)")
class Int8ExecutionTest(AmxHarness):
    HARNESS = INT8_HARNESS

    def test_kernels_match_reference(self):
        for a_type in ("s8", "u8"):
            for name, req in {
                "edges": int8_request(),
                "k_rem_3": int8_request(k=7),
                "one_element": int8_request(m=1, n=1, k=1),
                "several_blocks": int8_request(m=100, n=150, k=301, kc=128,
                                               mc=64, nc=96),
                "overwrite": int8_request(m=70, n=40, k=130, kc=64,
                                          overwrite=True),
                "immediate_lds": int8_request(runtime_ld=None, lda=32,
                                              ldb=50, ldc=52),
                "trans_b": int8_request(trans_b=True, m=70, n=40, k=200,
                                        kc=128, overwrite=True),
                # 64 columns a PACK B step: panels past BZHI's 8-bit count,
                # one-tile blocks (each sliver its own block).
                "wide_panels": int8_request(m=9, n=600, k=70, nc=576),
                "one_tile_blocks": int8_request(m=40, n=150, k=130, mr=16,
                                                nr=16, kc=64, mc=32, nc=96),
                # A in place, kc not dividing K, the edge sliver copied.
                "a_direct": int8_request(m=70, k=192, kc=128,
                                         a_layout="direct"),
                "a_direct_trans_b": int8_request(trans_b=True, m=40, n=40,
                                                 k=128, kc=64, mr=16,
                                                 a_layout="direct"),
                "b_prepacked": int8_request(b_prepacked=True, m=100, n=150,
                                            k=301, kc=128, mc=64, nc=96),
                "transposed": int8_request(m=30, n=70, k=128, kc=64,
                                           **TRANSPOSED),
                "b_prepacked_nr16_direct": int8_request(
                    b_prepacked=True, nr=16, k=192, kc=128,
                    a_layout="direct"),
            }.items():
                with self.subTest(name=name, a_type=a_type):
                    status, output = self.run_kernel(
                        f"{name}_{a_type}", dict(req, a_type=a_type))
                    self.assertEqual(status, 0, output)
                    self.assertEqual(output.strip(), "ok")

    def test_runtime_rows_columns_and_parts(self):
        """dynamic_m, dynamic_n and all three sizes at run time."""
        for a_type in ("s8", "u8"):
            with self.subTest(a_type=a_type):
                req = int8_request(m=40, k=70, a_type=a_type)
                self.check_runtime_parts(req)
                self.check_all_sizes_at_run_time(req)

    def test_runtime_k(self):
        """dynamic_k: K from the header, B as stored or transposed."""
        for a_type in ("s8", "u8"):
            with self.subTest(a_type=a_type):
                self.check_runtime_k(int8_request(m=40, k=70, a_type=a_type),
                                     layouts=("nn", "nt"))

    def test_faults_are_caught(self):
        for fault in ("drop-k", "swap-pairs", "write-past-edge"):
            with self.subTest(fault=fault):
                status, output = self.run_kernel(
                    fault, int8_request(fault=fault, mr=16, nr=16, mc=32,
                                        nc=32))
                self.assertEqual(status, 1, output)
                self.assertIn("bad elements", output)


def f16_request(**changes):
    return request(**dict(dict(kind="shgemm", k=29, kc=16), **changes))




@runs_kernels("amx_bf16", "avx512bw", "avx512dq", "f16c",
              lacks="amx_bf16 (AMX)")
class F16ExecutionTest(AmxHarness):
    """shgemm: f16 split into bf16 parts on the bf16 tiles, exact."""
    HARNESS = F16_HARNESS

    def test_harness_is_f16(self):
        self.assertIn("_cvtss_sh", self.HARNESS)
        self.assertIn("_cvtsh_ss", self.HARNESS)
        self.assertNotIn("0x7fff +", self.HARNESS)     # bf16's rounding
        self.assertIn("rand() % 521", self.HARNESS)

    def test_kernels_match_reference(self):
        self.check_cases({
            "edges_odd_k": f16_request(),
            "one_element": f16_request(m=1, n=1, k=1),
            "whole_tiles": f16_request(m=64, n=64, k=64, overwrite=True),
            "several_blocks": f16_request(m=100, n=150, k=197, kc=64,
                                          mc=64, nc=96),
            "one_tile_blocks": f16_request(m=40, n=50, k=70, mr=16, nr=16,
                                           kc=32, mc=32, nc=32),
            "tall_narrow": f16_request(m=70, n=20, k=40, mr=32, nr=16,
                                       mc=64, nc=32),
            "immediate_lds": f16_request(runtime_ld=None, lda=32, ldb=50,
                                         ldc=52),
            "wide_panels": f16_request(m=9, n=600, k=20, nc=576),
            "bias_relu": f16_request(bias="columns", relu=True,
                                     overwrite=True, m=70, k=100, kc=48),
            "bias_leaky": f16_request(bias="columns", leaky_relu=0.25,
                                      m=70, k=100, kc=48),
            # B stored N x K (torch's linear weights): each column's k
            # split as they lie, 16 columns transposed into a tile.
            "trans_b": f16_request(trans_b=True),
            "trans_b_blocks": f16_request(trans_b=True, m=100, n=150, k=197,
                                          kc=64, mc=64, nc=96,
                                          overwrite=True),
            "trans_b_one_tile": f16_request(trans_b=True, m=40, n=50, k=70,
                                            mr=16, nr=16, kc=32, mc=32,
                                            nc=32),
            "trans_b_immediate": f16_request(trans_b=True, runtime_ld=None,
                                             lda=32, ldb=34, ldc=52),
            # Two steps a pass: kb ending with a whole first step (40 =
            # 2 x 16 + 8) and inside the second (kc 48, 29 = 16 + 13).
            "trans_b_whole_first_step": f16_request(trans_b=True, k=40,
                                                    kc=48),
            "trans_b_blocks_of_three_steps": f16_request(
                trans_b=True, m=20, n=40, k=77, kc=24),
            # D = f16(C + A * B) (VCVTPS2PH), from the only kc block and the
            # last of several, with the epilogue, B^T, immediate ldd.
            "f16_output": f16_request(f16_output=True, overwrite=True),
            "f16_output_blocks": f16_request(
                f16_output=True, m=100, n=150, k=197, kc=64, mc=64, nc=96),
            "f16_output_bias_relu_trans_b": f16_request(
                f16_output=True, bias="columns", relu=True, trans_b=True,
                overwrite=True, k=70),
            "f16_output_immediate": f16_request(
                f16_output=True, overwrite=True, runtime_ld=None, lda=32,
                ldb=50, ldc=52, ldd=54),
        })

    def test_runtime_n_and_k(self):
        """dynamic_n and dynamic_k (each f16 split where it is packed, kb
        and nb at run time), and all three sizes at run time."""
        self.check_runtime_parts(f16_request(m=40, k=70, trans_b=True))
        self.check_runtime_k(f16_request(m=40, k=70), layouts=("nn", "nt"))
        self.check_all_sizes_at_run_time(f16_request(m=40, k=70))

    def test_runtime_m(self):
        """dynamic_m: the rows from the header (fewer, as many and more
        than the M blocked for), B as stored or transposed; the parallel
        form on two parts of the rows."""
        for trans_b in (False, True):
            req = f16_request(m=40, n=45, k=70, kc=32, mc=32,
                              trans_b=trans_b, dynamic_m=True)
            self.assertIn("_mrt", header(emit(req), "symbol"))
            for rows in (1, 13, 40, 85):
                with self.subTest(trans_b=trans_b, rows=rows):
                    status, output = self.run_kernel(
                        f"mrt{rows}_{trans_b}", req, split=0, m=rows)
                    self.assertEqual(status, 0, output)
                    self.assertEqual(output.strip(), "ok")
        with self.subTest(parallel=True):
            status, output = self.run_kernel(
                "mrt_par", f16_request(m=40, dynamic_m=True, parallel=True),
                split=16, m=70)
            self.assertEqual(status, 0, output)
            self.assertEqual(output.strip(), "ok")

    def test_faults_are_caught(self):
        """drop-low leaves f16's low parts out: bf16's precision, which
        these operands exceed."""
        for fault, trans_b in (("drop-k", False), ("drop-low", False),
                               ("drop-low", True),
                               ("write-past-edge", False)):
            with self.subTest(fault=fault, trans_b=trans_b):
                status, output = self.run_kernel(
                    fault, f16_request(fault=fault, mr=16, nr=16, mc=32,
                                       nc=32, trans_b=trans_b))
                self.assertEqual(status, 1, output)
                self.assertIn("bad elements", output)


CONV_BASE = {"version": 1, "kind": "sbconv2d", "isa": "amx",
             "layout": "nhwc_hwcf", "n": 2, "h": 7, "w": 9, "c": 32,
             "f": 37, "kh": 3, "kw": 2, "mr": 32, "nr": 32, "kc": 64,
             "mc": 64, "nc": 64}


def conv_request(**changes):
    return {k: v for k, v in dict(CONV_BASE, **changes).items()
            if v is not None}


class ConvRequestTest(RefusalTestCase):
    emit_under_test = staticmethod(emit)

    def test_refusals(self):
        self.refuses(conv_request(layout="nchw_fchw"), "layout")
        self.refuses(conv_request(kind="iconv2d", bias=True), "bias")
        self.refuses(conv_request(kc=96), "must divide 64")
        self.refuses(conv_request(a_layout="rows"), "k-major")


def packed_conv_cases():
    """The convolutions every AMX type runs with A packed: kc one tap's
    channels (32) or two taps' (64 of KW*C), hwcf and fhwc, a stride and
    dilation, one-tile blocks overwriting, run-time strides, the
    epilogue."""
    return {
        "hwcf": conv_request(),
        "one_tap_blocks": conv_request(kc=32),
        "fhwc": conv_request(layout="nhwc_fhwc"),
        "stride_dilation": conv_request(stride_h=2, stride_w=2,
                                        dilation_h=2, h=11, w=12),
        "overwrite_one_tile": conv_request(overwrite=True, mr=16, nr=16,
                                           mc=32, nc=32),
        "runtime_strides": conv_request(runtime_strides=True),
        "bias_relu": conv_request(bias=True, relu=True, overwrite=True),
        "bias_leaky": conv_request(bias=True, leaky_relu=0.25),
    }


# dotconv's harness on f16 operands (K = 192 at most: every sum exact).
F16_CONV_HARNESS = f16_harness(CONV_HARNESS)


@runs_kernels("amx_bf16", "avx512bw", "avx512dq", "f16c",
              lacks="amx_bf16 (AMX)")
class F16ConvExecutionTest(KernelHarness):
    """shconv2d: nhwc convolutions with f16 split on the bf16 tiles, run
    by dotconv's harness on f16 values (its type 0, the 16-bit float one:
    the requests say sbconv2d there and are emitted as shconv2d)."""
    HARNESS = F16_CONV_HARNESS
    EMIT = staticmethod(lambda req: emit(dict(req, kind="shconv2d")))
    MATTR = AmxHarness.MATTR
    run_kernel = DotConvExecutionTest.run_kernel
    check = DotConvExecutionTest.check

    def test_harness_is_f16(self):
        self.assertEqual(self.HARNESS.count("rand() % 521 - 260"), 2)
        self.assertIn("_cvtss_sh", self.HARNESS)

    def test_convolutions(self):
        for name, req in dict(
                packed_conv_cases(),
                three_step_blocks=conv_request(c=24, kc=24)).items():
            with self.subTest(name=name):
                self.check(name, req)
        with self.subTest(fault="drop-low"):
            status, output = self.run_kernel(
                "drop_low", conv_request(fault="drop-low"))
            self.assertNotEqual(status, 0, output)

    def test_refusals(self):
        """No padded runs (8 k a tile step must divide the run), no A in
        place. (isa avx512 is dotconv.py's: f16 widened where it is
        packed, test_dotconv.py.)"""
        for req, words in (
                (conv_request(c=3, kh=3, kw=3, kc=9), "not with kc whole"),
                (conv_request(a_layout="direct"), "a_layout direct")):
            with self.subTest(words=words):
                with self.assertRaises(RequestError) as ctx:
                    self.EMIT(req)
                self.assertIn(words, str(ctx.exception))


@runs_kernels("amx_bf16", "amx_int8", lacks="amx_bf16 and amx_int8 (AMX)")
class ConvExecutionTest(KernelHarness):
    """nhwc convolutions on AMX tiles (amx.AmxConv), run by dotconv's
    harness: its input with stride gaps, its exact reference."""
    HARNESS = CONV_HARNESS
    EMIT = staticmethod(emit)
    MATTR = AmxHarness.MATTR
    run_kernel = DotConvExecutionTest.run_kernel
    check = DotConvExecutionTest.check

    def test_convolutions(self):
        cases = dict(packed_conv_cases(), **{
            "s8": conv_request(kind="iconv2d", a_type="s8", c=64, kc=128),
            "u8_fhwc": conv_request(kind="iconv2d", a_type="u8", c=64,
                                    kc=64, layout="nhwc_fhwc"),
            # A in place: output rows of 8 pixels (every tile crosses rows:
            # copied), of 16 (in place but the edge), a 1x1 (all pixels
            # the pixel step apart, across rows too), stride 2 and a
            # dilation, 8-bit, run-time strides, one-tile blocks.
            "a_direct_rows_of_8": conv_request(a_layout="direct"),
            "a_direct_rows_of_16": conv_request(a_layout="direct", w=17,
                                                overwrite=True),
            # Tiles of one output row of 14 pixels (mr 28, 14 a tile),
            # of half of one of 28 (mr 14, the edge block's second tile
            # past mb), 8-bit: all in place.
            "a_direct_tiles_of_14": conv_request(a_layout="direct", w=15,
                                                 mr=28, mc=56),
            "a_direct_tiles_of_14_half_rows": conv_request(
                a_layout="direct", w=29, h=4, mr=14, mc=28, bias=True,
                relu=True, overwrite=True),
            "a_direct_tiles_of_14_s8": conv_request(
                a_layout="direct", kind="iconv2d", a_type="s8", c=64,
                kc=128, w=15, mr=28, mc=28),
            "a_direct_1x1": conv_request(a_layout="direct", kh=1, kw=1,
                                         kc=32, h=5, w=13),
            "a_direct_stride_dilation": conv_request(
                a_layout="direct", stride_h=2, stride_w=2, dilation_h=2,
                h=11, w=36, kc=32),
            "a_direct_s8": conv_request(a_layout="direct", kind="iconv2d",
                                        a_type="s8", c=64, kc=128, w=18),
            "b_prepacked": conv_request(b_prepacked=True),
            "b_prepacked_direct_fhwc_s8": conv_request(
                b_prepacked=True, a_layout="direct", layout="nhwc_fhwc",
                kind="iconv2d", a_type="s8", c=64, kc=128, w=18),
            # kc whole runs, each padded to whole tile steps (no tile step
            # divides the run): a 3-channel stem (runs of KW*C = 9, one
            # step each; all of K a block, and a run a block), stride 2,
            # fhwc, 8-bit, the epilogue, run-time strides, a run of 80
            # (two full steps and 16 k), one-tile blocks.
            "runs_stem": conv_request(c=3, kh=3, kw=3, kc=27, stride_h=2,
                                      stride_w=2, h=13, w=15),
            "runs_one_a_block": conv_request(c=3, kh=3, kw=3, kc=9,
                                             overwrite=True),
            "runs_fhwc_bias_relu": conv_request(
                c=3, kh=3, kw=3, kc=18, layout="nhwc_fhwc", bias=True,
                relu=True, overwrite=True),
            "runs_s8": conv_request(kind="iconv2d", a_type="s8", c=3, kh=3,
                                    kw=3, kc=27, stride_h=2, stride_w=2,
                                    h=13, w=15),
            "runs_u8_fhwc": conv_request(kind="iconv2d", a_type="u8", c=3,
                                         kh=3, kw=3, kc=27,
                                         layout="nhwc_fhwc"),
            "runs_runtime_strides_one_tile": conv_request(
                c=3, kh=3, kw=3, kc=9, runtime_strides=True, mr=16, nr=16,
                mc=32, nc=32),
            "runs_of_80": conv_request(c=40, kh=2, kw=2, kc=160),
            "a_direct_runtime_strides_one_tile": conv_request(
                a_layout="direct", runtime_strides=True, mr=16, nr=16,
                mc=32, nc=32, w=17, bias=True, relu=True),
        })
        for name, req in cases.items():
            with self.subTest(name=name):
                self.check(name, req)
        with self.subTest(name="strided input"):
            # Gaps between pixels: the run is one tap's C = 32 channels.
            self.check("gaps", conv_request(
                kc=32, input_strides=[9 * 40 * 7, 9 * 40, 40]))
            self.check("gaps_direct", conv_request(
                kc=32, w=17, a_layout="direct",
                input_strides=[17 * 40 * 7, 17 * 40, 40]))
        with self.subTest(name="parts"):
            self.check("parts", conv_request(parallel=True), split=40)
            self.check("parts_direct", conv_request(
                parallel=True, a_layout="direct", w=17), split=40)
            self.check("parts_tiles_of_14", conv_request(
                parallel=True, a_layout="direct", w=15, mr=28, mc=28),
                split=56)
        with self.subTest(name="gaps, runs"):
            # Gaps between pixels: the run is C = 3, each its own step.
            self.check("gaps_runs", conv_request(
                c=3, kh=3, kw=3, kc=27, w=9,
                input_strides=[9 * 5 * 7, 9 * 5, 5]))
        for fault, layout, c in (
                ("drop-k", None, 32), ("swap-pairs", None, 32),
                ("drop-k", "direct", 32), ("drop-k", None, 3),
                ("swap-pairs", None, 3)):
            with self.subTest(fault=fault, a_layout=layout, c=c):
                status, output = self.run_kernel(
                    f"{fault}_{layout}_{c}",
                    conv_request(fault=fault, a_layout=layout, w=17, c=c,
                                 kc=64 if c == 32 else 18, kh=3, kw=2 if
                                 c == 32 else 3))
                self.assertEqual(status, 1, output)
        with self.subTest(fault="drop-k", tiles_of=14):
            # Tiles of one output row of 14 pixels, all in place.
            status, output = self.run_kernel(
                "drop-k_tiles_of_14", conv_request(
                    fault="drop-k", a_layout="direct", w=15, mr=28, mc=28))
            self.assertEqual(status, 1, output)


if __name__ == "__main__":
    unittest.main()

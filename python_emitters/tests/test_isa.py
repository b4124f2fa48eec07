"""ISA discipline: the assembler does not gate features, so the tests do."""

import unittest

from .support import REGISTERS, emit, header, request, vector_registers

AVX2_REQUESTS = [
    request(),
    request(mr=6, nr=16, mc=72, m=13, n=33, k=8),
    request(mr=4, nr=24, mc=72, nc=48, m=50, n=70, k=9, k_unroll=8),
    request(mr=14, nr=8, mc=70, nc=64, k_unroll=2),
    request(mr=1, nr=8, mc=8, nc=64, m=3, n=5, k=2, k_unroll=1),
    request(trans_a=True, trans_b=True, m=30, n=40, k=17),
    request(trans_a=True, mr=8, nr=8, mc=64, nc=64, prefetch_a=128,
            prefetch_b=256),
    request(m=21, n=21, k=21, fault="write-past-edge"),
    request(m=21, n=21, k=21, fault="drop-k"),
]

AVX512_REQUESTS = [
    request(isa="avx512", nr=32),
    request(isa="avx512", mr=14, nr=32, mc=70, nc=64, k_unroll=8),
    request(isa="avx512", mr=28, nr=16, mc=56, nc=64, m=57, n=33, k=5),
    request(isa="avx512", mr=6, nr=48, mc=72, nc=96, trans_a=True),
    request(isa="avx512", mr=8, nr=16, mc=64, nc=64, trans_b=True,
            m=17, n=17, k=17, prefetch_b=64),
    request(isa="avx512", mr=6, nr=64, mc=72, nc=64, trans_a=True,
            trans_b=True, k_unroll=1),
]


class Avx2IsaTest(unittest.TestCase):

    def test_no_avx512_registers(self):
        for req in AVX2_REQUESTS:
            with self.subTest(req=req):
                text = emit(req)
                self.assertNotIn("zmm", text)
                regs = vector_registers(text)
                self.assertTrue(any(kind == "y" for kind, _ in regs))
                for kind, index in regs:
                    self.assertLess(index, REGISTERS["avx2"], (kind, index))

    def test_no_avx512_only_instructions(self):
        for req in AVX2_REQUESTS:
            with self.subTest(req=req):
                text = emit(req)
                for word in ("vpxord", "vpxorq", "%k0", "%k1", "{1to",
                             "vmovdqu32", "vmovups %zmm"):
                    self.assertNotIn(word, text)

    def test_features_header(self):
        features = header(emit(AVX2_REQUESTS[0]), "features").split(",")
        self.assertIn("avx2", features)
        self.assertIn("fma", features)
        self.assertNotIn("avx512f", features)


class Avx512IsaTest(unittest.TestCase):

    def test_uses_zmm_and_no_ymm(self):
        for req in AVX512_REQUESTS:
            with self.subTest(req=req):
                text = emit(req)
                regs = vector_registers(text)
                self.assertTrue(any(kind == "z" for kind, _ in regs))
                self.assertNotIn("ymm", text)
                for kind, index in regs:
                    self.assertLess(index, REGISTERS["avx512"], (kind, index))

    def test_accumulators_are_zmm(self):
        req = AVX512_REQUESTS[1]        # 14x32: 28 accumulators
        text = emit(req)
        fmas = [line for line in text.splitlines() if "vfmadd" in line]
        self.assertTrue(fmas)
        for line in fmas:
            self.assertEqual(line.count("%zmm"), 3, line)
        accumulators = {line.split(",")[-1].strip() for line in fmas}
        self.assertEqual(len(accumulators), 28)

    def test_large_block_uses_high_registers(self):
        regs = vector_registers(emit(AVX512_REQUESTS[1]))
        self.assertIn(("z", 30), regs)      # 28 acc + 2 B + 1 A = zmm0..30

    def test_features_header(self):
        features = header(emit(AVX512_REQUESTS[0]), "features").split(",")
        self.assertIn("avx512f", features)


class RegisterBudgetTest(unittest.TestCase):

    def test_largest_legal_blocks_fit(self):
        # needed = mr*nv + nv + 1 must be <= the register count.
        for isa, mr, nr in (("avx2", 14, 8), ("avx2", 6, 16), ("avx2", 4, 24),
                            ("avx512", 30, 16), ("avx512", 14, 32),
                            ("avx512", 9, 48), ("avx512", 6, 64)):
            with self.subTest(isa=isa, mr=mr, nr=nr):
                text = emit(request(isa=isa, mr=mr, nr=nr, mc=mr * 4,
                                    nc=nr * 2))
                for _, index in vector_registers(text):
                    self.assertLess(index, REGISTERS[isa])


if __name__ == "__main__":
    unittest.main()

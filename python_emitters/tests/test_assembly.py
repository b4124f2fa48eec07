"""Every emitted kernel, and its body alone, assembles cleanly with llvm-mc."""

import os
import tempfile
import unittest

from .support import assemble, body, emit, header, request, requires_llvm_mc

ASSEMBLY_REQUESTS = [
    # avx2: transposes, edges, unrolls, prefetch, small and large shapes.
    request(),
    request(m=1, n=1, k=1, k_unroll=1),
    request(m=13, n=33, k=8, k_unroll=1),
    request(m=12, n=32, k=8, k_unroll=2),
    request(m=37, n=29, k=50, trans_a=True, kc=16, mc=12, nc=16, k_unroll=8),
    request(m=37, n=29, k=50, trans_b=True, lda=64, ldb=60, ldc=40),
    request(m=30, n=40, k=17, trans_a=True, trans_b=True, k_unroll=4,
            prefetch_a=256, prefetch_b=512),
    request(m=500, n=600, k=700, prefetch_a=512, prefetch_b=1024),
    request(mr=14, nr=8, mc=70, nc=64, m=71, n=9, k=3, k_unroll=8),
    request(mr=8, nr=8, mc=64, nc=64, trans_a=True, m=64, n=64, k=64),
    request(mr=4, nr=24, mc=72, nc=48, m=50, n=70, k=9, k_unroll=16),
    request(m=21, n=21, k=21, fault="drop-k"),
    request(m=21, n=21, k=21, fault="write-past-edge", k_unroll=1),
    # avx512.
    request(isa="avx512", nr=32),
    request(isa="avx512", nr=16, mr=30, mc=60, nc=64, m=61, n=17, k=9,
            k_unroll=1),
    request(isa="avx512", nr=32, mr=14, mc=70, nc=64, k_unroll=8,
            trans_a=True, trans_b=True),
    request(isa="avx512", nr=48, mr=6, mc=72, nc=96, m=100, n=100, k=100,
            trans_b=True, prefetch_b=256),
    request(isa="avx512", nr=64, mr=6, mc=72, nc=128, m=7, n=65, k=2,
            k_unroll=2, prefetch_a=64),
    request(isa="avx512", nr=16, mr=8, mc=64, nc=64, m=33, n=33, k=33,
            fault="write-past-edge"),
    request(isa="avx512", nr=16, mr=8, mc=64, nc=64, m=33, n=33, k=33,
            fault="drop-k", k_unroll=4),
    # Leaky relu on masked columns and row edges (this host may not run
    # AVX-512: its execution tests then skip).
    request(isa="avx512", nr=64, mr=6, mc=12, nc=128, m=50, n=70, k=37,
            kc=16, bias="rows", leaky_relu=3.0),
]


@requires_llvm_mc
class AssemblyTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="qm_asm_")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def check_assembles(self, source, name):
        obj = os.path.join(self.tmp.name, name + ".o")
        proc = assemble(source, obj)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stderr, "")
        self.assertGreater(os.path.getsize(obj), 0)

    def test_kernels_assemble(self):
        for index, req in enumerate(ASSEMBLY_REQUESTS):
            with self.subTest(index=index, req=req):
                text = emit(req)
                self.check_assembles(text, f"kernel{index}")

    def test_body_alone_assembles(self):
        for index, req in enumerate(ASSEMBLY_REQUESTS):
            with self.subTest(index=index, req=req):
                lines = body(emit(req))
                source = "\t.text\nf:\n" + "\n".join(lines) + "\n\tretq\n"
                self.check_assembles(source, f"body{index}")

    def test_body_twice_in_one_function_assembles(self):
        # Numeric local labels keep a duplicated inline-asm body valid.
        lines = "\n".join(body(emit(request(m=13, n=33, k=8)))) + "\n"
        self.check_assembles("\t.text\nf:\n" + lines + lines + "\tretq\n",
                             "twice")

    def test_two_kernels_in_one_file_assemble(self):
        a = emit(request())
        b = emit(request(m=13, n=33, k=8))
        self.assertNotEqual(header(a, "symbol"), header(b, "symbol"))
        self.check_assembles(a + b, "two")


if __name__ == "__main__":
    unittest.main()

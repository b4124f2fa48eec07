"""The FMA peak probe and the test-only crash/hang faults."""

import json
import os
import tempfile
import unittest

from qimeng_emitters import PROTOCOL_VERSION
from qimeng_emitters.errors import RequestError

from tests.support import (assemble, body, code, emit, header, request,
                           requires_llvm_mc, run_emitter, vector_registers)


def peak_request(**changes):
    req = {"version": PROTOCOL_VERSION, "kind": "fma_peak", "isa": "avx2"}
    req.update(changes)
    return req


class FmaPeakTest(unittest.TestCase):
    def test_defaults_fill_the_register_file(self):
        for isa, acc, lanes in (("avx2", 12, 8), ("avx512", 28, 16)):
            text = emit(peak_request(isa=isa))
            self.assertEqual(header(text, "symbol"),
                             f"qm_fma_peak_{acc}acc_x86_64_{isa}")
            self.assertEqual(int(header(text, "flops_per_iteration")),
                             acc * lanes * 2)
            fmas = [l for l in body(text) if code(l).startswith("vfmadd231ps")]
            self.assertEqual(len(fmas), acc)

    def test_avx2_probe_has_no_zmm(self):
        kinds = {kind for kind, _ in vector_registers(emit(peak_request()))}
        self.assertNotIn("z", kinds)

    def test_bad_accumulators(self):
        for bad in (0, 15, "4", True):
            with self.assertRaises(RequestError):
                emit(peak_request(accumulators=bad))

    def test_unknown_field_fails_over_the_protocol(self):
        proc = run_emitter(json.dumps(peak_request(mr=6)))
        self.assertEqual(proc.returncode, 1)
        self.assertTrue(proc.stderr.startswith("error: unknown field(s): mr"))

    @requires_llvm_mc
    def test_assembles(self):
        with tempfile.TemporaryDirectory() as tmp:
            for isa in ("avx2", "avx512"):
                obj = os.path.join(tmp, isa + ".o")
                proc = assemble(emit(peak_request(isa=isa)), obj)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                self.assertEqual(proc.stderr, "")


class CrashAndHangFaultTest(unittest.TestCase):
    def test_segfault_stores_through_null_first(self):
        lines = [code(l) for l in body(emit(request(fault="segfault")))]
        lines = [l for l in lines if l]
        self.assertEqual(lines[:2], ["xorl %eax, %eax", "movl %eax, (%rax)"])

    def test_hang_spins_before_any_work(self):
        lines = [code(l) for l in body(emit(request(fault="hang")))]
        lines = [l for l in lines if l]
        self.assertRegex(lines[0], r"^\d+:$")
        self.assertEqual(lines[1], f"jmp {lines[0][:-1]}b")

    def test_faults_are_in_the_symbol(self):
        for fault in ("segfault", "hang"):
            self.assertIn(f"_fault_{fault}_",
                          header(emit(request(fault=fault)), "symbol"))


class TargetFeaturesTest(unittest.TestCase):
    """The assembler is not an ISA gate, so the emitter is."""

    def test_avx512_refused_on_an_avx2_target(self):
        req = request(isa="avx512", mr=12, nr=32,
                      target_features=["avx", "avx2", "fma"])
        with self.assertRaisesRegex(RequestError,
                                    "isa avx512 needs avx512f which the "
                                    "target lacks"):
            emit(req)

    def test_accepted_when_present(self):
        emit(request(target_features=["avx", "avx2", "fma", "sse"]))
        emit(peak_request(isa="avx512", target_features=["avx512f", "fma"]))

    def test_malformed_list(self):
        with self.assertRaises(RequestError):
            emit(request(target_features="avx2"))


class OrderTest(unittest.TestCase):
    """The K step's instruction orders."""

    def fma_lines(self, req):
        return [code(l) for l in body(emit(req))
                if code(l).startswith("vfmadd231ps")]

    def test_embedded_uses_memory_broadcasts(self):
        req = request(isa="avx512", mr=12, nr=32, order="embedded")
        fmas = self.fma_lines(req)
        self.assertTrue(fmas)
        self.assertTrue(all("{1to16}" in l for l in fmas))
        self.assertFalse(any(code(l).startswith("vbroadcastss")
                             for l in body(emit(req))))
        self.assertTrue(header(emit(req), "symbol").endswith(
            "_embedded_x86_64_avx512"))

    def test_embedded_needs_avx512(self):
        with self.assertRaisesRegex(RequestError, "needs avx512"):
            emit(request(order="embedded"))

    def test_bmem_reads_the_last_b_vector_from_memory(self):
        # 7x64: 28 accumulators, B vectors 0-2 in zmm28-30, A in zmm31.
        req = request(isa="avx512", mr=7, nr=64, m=14, n=64, mc=14, nc=64,
                      k_unroll=1, order="bmem")
        fmas = self.fma_lines(req)
        in_memory = [l for l in fmas if l.split()[1].endswith("(%rsi),")]
        self.assertEqual(len(in_memory) * 4, len(fmas))
        self.assertTrue(all(l.split()[1] == "192(%rsi)," for l in in_memory))
        self.assertEqual({l.split(",")[1].strip() for l in fmas}, {"%zmm31"})
        self.assertEqual({l.split()[1].rstrip(",") for l in fmas} - {
            "192(%rsi)"}, {"%zmm28", "%zmm29", "%zmm30"})
        self.assertTrue(header(emit(req), "symbol").endswith(
            "_bmem_x86_64_avx512"))

    def test_bmem_frees_one_register(self):
        # 7x64 in bcast: 28 + 4 + 1 = 33 > 32 registers.
        with self.assertRaisesRegex(RequestError, "needs 33 vector registers"):
            emit(request(isa="avx512", mr=7, nr=64, order="bcast"))
        emit(request(isa="avx512", mr=7, nr=64, mc=14, nc=64, order="bmem"))
        # AVX2 too: 7x16 is 14 + 1 + 1.
        emit(request(mr=7, nr=16, mc=14, nc=32, order="bmem"))

    def test_pipelined_alternates_two_a_registers(self):
        fmas = self.fma_lines(request(order="pipelined"))
        a_regs = {l.split(",")[1].strip() for l in fmas}
        self.assertEqual(a_regs, {"%ymm14", "%ymm15"})

    def test_pipelined_needs_one_more_register(self):
        # 4x24: 12 + 3 + 2 = 17 > 16 registers.
        with self.assertRaisesRegex(RequestError, "needs 17 vector registers"):
            emit(request(mr=4, nr=24, order="pipelined"))

    def test_unknown_order(self):
        with self.assertRaisesRegex(RequestError, "unknown order"):
            emit(request(order="backwards"))

    @requires_llvm_mc
    def test_orders_assemble(self):
        with tempfile.TemporaryDirectory() as tmp:
            for isa, mr, nr, order in (("avx2", 6, 16, "pipelined"),
                                       ("avx512", 12, 32, "pipelined"),
                                       ("avx512", 14, 32, "embedded"),
                                       ("avx512", 7, 64, "bmem")):
                proc = assemble(emit(request(isa=isa, mr=mr, nr=nr, m=29,
                                             n=40, mc=mr * 4, nc=nr * 4,
                                             order=order)),
                                os.path.join(tmp, order + ".o"))
                self.assertEqual(proc.returncode, 0, proc.stderr)


class InPlaceBTest(unittest.TestCase):
    """pack_b = false: B read in place with its own row stride."""

    def test_no_b_packing_and_named(self):
        text = emit(request(m=4, n=128, k=20, mr=6, nr=16, pack_b=False,
                            ldb=140))
        self.assertTrue(header(text, "symbol").endswith(
            "_nopackb_x86_64_avx2"))
        self.assertNotIn("PACK B", text)
        lines = [code(l) for l in body(text)]
        # B loads step by ldb floats: 140 * 4 bytes.
        self.assertTrue(any(l.startswith("vmovups 560(%rsi)") for l in lines))

    def test_refused_when_it_would_read_past_b(self):
        for changes in ({"trans_b": True}, {"n": 100}):
            with self.assertRaisesRegex(RequestError, "reads B in place"):
                emit(request(m=4, k=20, pack_b=False, **changes))

    def test_workspace_has_no_b_panel(self):
        packed = int(header(emit(request(m=4, n=128, k=20)),
                            "workspace_bytes"))
        in_place = int(header(emit(request(m=4, n=128, k=20, pack_b=False)),
                              "workspace_bytes"))
        self.assertLess(in_place, packed)


class FusedPackBTest(unittest.TestCase):
    """fuse_pack_b: a B sliver's first tile reads it in place and stores it
    packed in its K loop; there is no PACK B pass."""

    def test_first_tile_packs_and_named(self):
        text = emit(request(m=40, n=64, k=20, ldb=70, fuse_pack_b=True))
        self.assertTrue(header(text, "symbol").endswith(
            "_fusedb_x86_64_avx2"))
        self.assertNotIn("PACK B", text)
        lines = [code(l) for l in body(text)]
        # In place, B steps by ldb floats (280 bytes); packed, by NR (64).
        self.assertIn("vmovups 280(%rsi), %ymm12", lines)
        self.assertIn("vmovaps %ymm12, 64(%rdi)", lines)
        self.assertIn("vmovaps 64(%rsi), %ymm12", lines)
        # Prefetch B in place FUSED_B_PREFETCH_ROWS rows ahead.
        self.assertIn(f"prefetcht0 {8 * 280}(%rsi)", lines)

    def test_tiles_prefetch_the_next_panel(self):
        # K = 70 in kc = 32 blocks: the K loops walk the next panel in place.
        lines = [code(l) for l in body(emit(request(
            m=40, n=64, k=70, kc=32, fuse_pack_b=True)))]
        self.assertIn("prefetcht1 (%rdx)", lines)
        self.assertIn("movq %rdx, 56(%rbx)", lines)
        # The next panel starts at row pc + kc; a row is 64 floats.
        self.assertIn("imulq $256, %rdx, %rdx", lines)
        # One pc block: there is no next panel.
        one = [code(l) for l in body(emit(request(
            m=40, n=64, k=20, fuse_pack_b=True)))]
        self.assertNotIn("prefetcht1 (%rdx)", one)

    def test_b_in_place_swept(self):
        # B read in place, one row sliver of 32 columns, 4 k a K loop
        # iteration: eight lines of the next panel an iteration (512 bytes
        # of a row), a row's columns at a time.
        swept = dict(isa="avx512", m=8, n=512, k=100, mr=8, nr=32, mc=8,
                     nc=512, kc=16, pack_b=False, loop_order="ir-jr",
                     sweep_b=True)
        text = emit(request(**swept))
        self.assertTrue(header(text, "symbol").endswith(
            "_sweepb_x86_64_avx512"))
        lines = [code(l) for l in body(text)]
        self.assertIn("prefetcht1 (%rdx)", lines)
        self.assertIn("prefetcht1 448(%rdx)", lines)
        self.assertIn("addq $512, %rdx", lines)
        self.assertIn("movq %rdx, 56(%rbx)", lines)
        # The panel is one run of memory (all of N, ldb = N): walked in
        # address order.
        self.assertNotIn("cmpq 64(%rbx), %rdx", lines)
        # Rows longer than N, two column blocks or the parallel form's part
        # of the columns: the walk keeps to the block's columns, then the
        # next row's (ldb on).
        for changes, row in (({"ldb": 600}, 2400), ({"nc": 256}, 2048),
                             ({"parallel": True}, 2048)):
            with self.subTest(changes=changes):
                other = [code(l) for l in body(emit(request(
                    **dict(swept, **changes))))]
                self.assertIn("cmpq 64(%rbx), %rdx", other)
                self.assertIn(f"addq ${row}, 64(%rbx)", other)
                self.assertIn("leaq (,%r9,4), %rax", other)
        # Not requested, B packed, more than SWEEP_LINES lines an
        # iteration (one 64-wide sliver), M in two row blocks, one K block
        # (no next panel) or AVX2: the request changes nothing.
        for changes in ({"sweep_b": False}, {"pack_b": True},
                        {"m": 6, "mr": 6, "nr": 64, "mc": 6},
                        {"m": 16, "mc": 8}, {"k": 16},
                        {"isa": "avx2", "mr": 4, "nr": 16}):
            with self.subTest(changes=changes):
                other = emit(request(**dict(swept, **changes)))
                self.assertNotIn("_sweepb", header(other, "symbol"))
                self.assertNotIn("prefetcht1 (%rdx)",
                                 [code(l) for l in body(other)])

    def test_workspace_keeps_the_b_panel(self):
        panels = int(header(emit(request(m=40, n=64, k=20)),
                            "workspace_bytes"))
        fused = int(header(emit(request(m=40, n=64, k=20, fuse_pack_b=True)),
                           "workspace_bytes"))
        self.assertEqual(fused, panels)

    def test_refused_where_b_cannot_be_read_in_place(self):
        for changes in ({"trans_b": True}, {"n": 100}, {"pack_b": False}):
            with self.subTest(changes=changes):
                with self.assertRaisesRegex(RequestError, "fuse_pack_b"):
                    emit(request(m=4, k=20, fuse_pack_b=True, **changes))

    def test_same_code_without_it(self):
        self.assertEqual(
            body(emit(request(m=40, n=64, k=20))),
            body(emit(request(m=40, n=64, k=20, fuse_pack_b=False))))


class ParallelFormTest(unittest.TestCase):
    """The parallel form reads its part of C from the workspace."""

    def test_reads_its_range_and_is_named(self):
        text = emit(request(parallel=True))
        self.assertIn("_par_x86_64_avx2", header(text, "symbol"))
        lines = [code(l) for l in body(text)]
        for operand in ("24(%rbx)", "32(%rbx)", "40(%rbx)", "48(%rbx)"):
            self.assertTrue(any(operand in l for l in lines), operand)

    def test_single_core_form_has_no_range(self):
        lines = [code(l) for l in body(emit(request()))]
        self.assertFalse(any("40(%rbx)" in l for l in lines))

    @requires_llvm_mc
    def test_parallel_form_assembles(self):
        with tempfile.TemporaryDirectory() as tmp:
            for isa, mr, nr in (("avx2", 6, 16), ("avx512", 12, 32)):
                proc = assemble(emit(request(isa=isa, mr=mr, nr=nr, m=37,
                                             n=45, parallel=True)),
                                os.path.join(tmp, isa + ".o"))
                self.assertEqual(proc.returncode, 0, proc.stderr)


if __name__ == "__main__":
    unittest.main()

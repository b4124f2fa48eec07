"""cuda_gemm: the CUDA C++ kernels' requests, headers and structure. (NVRTC
compiles them in test/Unit/CudaKernelTest.cpp; running them needs a GPU.)"""

import json
import unittest

from qimeng_emitters.cuda_gemm import emit
from qimeng_emitters.errors import RequestError

from .support import changed

BASE = {"version": 1, "kind": "cuda_gemm", "arch": "sm_80", "dtype": "bf16",
        "m": 1000, "n": 770, "k": 333}


def request(**changes):
    return changed(BASE, **changes)


def header(text, key):
    for line in text.splitlines():
        if line.startswith(f"// qm.{key}: "):
            return line.split(": ", 1)[1]
    raise AssertionError(f"no qm.{key} line")


class CudaGemmTest(unittest.TestCase):

    def test_tensor_core_kernel(self):
        text = emit(request())
        self.assertEqual(header(text, "symbol"),
                         "qm_cuda_bf16gemm_1000x770x333_bm128_bn128_bk32_"
                         "64x32_sm_80")
        # ceil(770 / 128) x ceil(1000 / 128) blocks of (128/64)*(128/32)
        # warps.
        self.assertEqual(header(text, "grid"), "7,8,1")
        self.assertEqual(header(text, "block"), "256,1,1")
        self.assertEqual(header(text, "problem"),
                         "m=1000 n=770 k=333 dtype=bf16 overwrite=0 b=kn")
        # Two padded bf16 tiles: 128 x 40 and 32 x 136 elements.
        self.assertEqual(header(text, "shared_bytes"),
                         str(2 * (128 * 40 + 32 * 136)))
        self.assertIn("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
                      text)
        self.assertIn('extern "C" __global__ void __launch_bounds__(256)',
                      text)
        self.assertEqual(json.loads(header(text, "request")), BASE)

    def test_ffma_kernel(self):
        text = emit(request(dtype="f32", block_m=64, block_n=128,
                            thread_m=8, thread_n=8))
        self.assertIn("_f32gemm_", header(text, "symbol"))
        self.assertEqual(header(text, "block"), "128,1,1")
        self.assertNotIn("mma", text)
        self.assertIn("fmaf(a[i], b[j], acc[i][j])", text)

    def test_overwrite_never_reads_c(self):
        accumulate = emit(request())
        overwrite = emit(request(overwrite=True))
        self.assertIn("C[row * N + col] + acc", accumulate)
        self.assertNotIn("C[row * N + col] + acc", overwrite)
        self.assertIn("_b0_", header(overwrite, "symbol"))

    def test_bad_requests(self):
        for changes, words in (
                ({"arch": "sm_75"}, ["arch", "sm_75"]),
                ({"dtype": "f64"}, ["dtype"]),
                ({"engine": "ffma"}, ["ffma", "bf16"]),
                ({"engine": "tcgen05"}, ["engine"]),
                ({"warp_m": 24}, ["warp_m", "16"]),
                ({"block_k": 24}, ["block_k", "16"]),
                ({"block_m": 96}, ["multiples"]),
                ({"block_m": 256, "block_n": 256, "warp_m": 16,
                  "warp_n": 8}, ["threads"]),
                ({"block_k": 256}, ["shared memory"]),
                ({"m": 0}, ["'m'"]),
                ({"colour": 1}, ["colour"])):
            with self.subTest(changes=changes):
                with self.assertRaises(RequestError) as caught:
                    emit(request(**changes))
                for word in words:
                    self.assertIn(word, str(caught.exception))


HOPPER = {"version": 1, "kind": "cuda_gemm", "arch": "sm_90a",
          "dtype": "bf16", "m": 1000, "n": 776, "k": 336, "block_n": 256}


def hopper(**changes):
    return changed(HOPPER, **changes)


class WgmmaTest(unittest.TestCase):
    """The sm_90a engine: wgmma fed by the copy engine (cuda_wgmma.py)."""

    def test_default_on_hopper_where_the_copy_engine_reaches(self):
        self.assertEqual(header(emit(hopper()), "engine"), "wgmma")
        # K = 333 rows are not 16-byte strides: mma.sync instead.
        self.assertEqual(header(emit(hopper(k=333)), "engine"), "mma")
        self.assertEqual(header(emit(hopper(n=770)), "engine"), "mma")
        self.assertEqual(header(emit(hopper(arch="sm_80")), "engine"),
                         "mma")
        self.assertEqual(header(emit(hopper(dtype="f32")), "engine"),
                         "ffma")

    def test_tiles_fill_the_multiprocessors(self):
        def tiles(**changes):
            request = hopper(**changes)
            del request["block_n"]
            text = emit(request)
            return header(text, "symbol").split("_")[5], header(text, "grid")
        # 64 x 32 tiles of 128 x 256 fill 132 multiprocessors; 8 x 4 do
        # not, and 128 x 128 tiles make 8 x 7 blocks.
        self.assertEqual(tiles(m=8192, n=8192, k=8192), ("bn256", "2048,1,1"))
        self.assertEqual(tiles(), ("bn128", "56,1,1"))
        self.assertEqual(tiles(sms=30), ("bn256", "32,1,1"))

    def test_header_says_how_to_launch(self):
        text = emit(hopper())
        self.assertEqual(header(text, "symbol"),
                         "qm_cuda_bf16gemm_1000x776x336_bm128_bn256_bk64_"
                         "s4g8_ctma_sm_90a")
        # ceil(1000 / 128) x ceil(776 / 256) tiles in one dimension (the
        # kernel orders them itself); a producer and two consumer
        # warpgroups.
        self.assertEqual(header(text, "grid"), "32,1,1")
        self.assertEqual(header(text, "block"), "384,1,1")
        # Four stages of 128 x 64 and 64 x 256 bf16, and 1024 bytes to
        # align them.
        self.assertEqual(header(text, "dynamic_shared_bytes"),
                         str(4 * (128 + 256) * 64 * 2 + 1024))
        self.assertEqual(header(text, "args"),
                         "A:tma64x128,B:tma64x64,C:tma32x64")
        self.assertIn("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16",
                      text)
        self.assertIn("cp.async.bulk.tensor.2d", text)
        self.assertIn("__launch_bounds__(384, 1)", text)
        self.assertIn("const __grid_constant__ QmTensorMap tmA", text)
        self.assertIn("const __grid_constant__ QmTensorMap tmC", text)

    def test_registers_move_from_producer_to_consumers(self):
        two = emit(hopper())
        self.assertIn("setmaxnreg.dec.sync.aligned.u32 40;", two)
        # (65536 - 128 * 40) / 256 = 236, down to a multiple of 8.
        self.assertIn("setmaxnreg.inc.sync.aligned.u32 232;", two)
        three = emit(hopper(block_m=192, block_n=192))
        self.assertIn("setmaxnreg.inc.sync.aligned.u32 152;", three)
        one = emit(hopper(block_m=64))
        self.assertIn("setmaxnreg.inc.sync.aligned.u32 240;", one)

    def test_persistent_grid(self):
        text = emit(hopper(persistent=True, sms=5))
        # 32 tiles on 5 blocks, each taking tiles blockIdx.x, + 5, ...
        self.assertEqual(header(text, "grid"), "5,1,1")
        self.assertTrue(header(text, "symbol").endswith(
            "_s4g8p4_persistent5_sm_90a"))
        self.assertIn("tile += gridDim.x", text)
        # Fewer tiles than multiprocessors: a block each.
        self.assertEqual(header(emit(hopper(m=64, n=256, persistent=True)),
                                "grid"), "1,1,1")
        self.assertEqual(header(emit(hopper(n=256, persistent=True)),
                                "grid"), "8,1,1")
        # Every stage is released, the tile's last slab too, so that the
        # ring runs on into the next tile.
        self.assertEqual(text.count("barrier_arrive(shared_address("
                                    "&empty[(it - 1) % STAGES]));"), 2)

    def test_f16_and_tiles(self):
        text = emit(hopper(dtype="f16", block_n=128, overwrite=True))
        self.assertIn("m64n128k16.f32.f16.f16", text)
        # 128-column tiles leave room for six stages.
        self.assertEqual(header(text, "dynamic_shared_bytes"),
                         str(6 * (128 + 128) * 64 * 2 + 1024))
        self.assertIn("_f16gemm_1000x776x336_b0_", header(text, "symbol"))

    def test_epilogue_by_the_copy_engine(self):
        # C += A B adds the staged tile to C in the L2; C = A B stores it;
        # neither reads C into the SM.
        accumulate = emit(hopper())
        overwrite = emit(hopper(overwrite=True))
        self.assertIn("cp.reduce.async.bulk.tensor.2d.global.shared::cta"
                      ".add.tile.bulk_group", accumulate)
        self.assertNotIn("cp.reduce", overwrite)
        self.assertIn("cp.async.bulk.tensor.2d.global.shared::cta"
                      ".bulk_group", overwrite)
        for text in (accumulate, overwrite):
            self.assertNotIn("old[", text)
            self.assertNotIn("prefetch.L2", text)
            self.assertIn("fence.proxy.async.shared::cta", text)
        # Too few stages to stage C, or a persistent grid that needs them
        # for the next tile: the registers write C.
        self.assertEqual(header(emit(hopper(stages=2)), "args"),
                         "A:tma64x128,B:tma64x64,C")
        self.assertEqual(header(emit(hopper(persistent=True)), "args"),
                         "A:tma64x128,B:tma64x64,C")

    def test_epilogue_from_registers_reads_c_only_to_add(self):
        accumulate = emit(hopper(epilogue="registers"))
        overwrite = emit(hopper(epilogue="registers", overwrite=True))
        self.assertIn("cp.async.bulk.prefetch.L2.global", accumulate)
        self.assertIn("old[j - j0][h].x + d[", accumulate)
        self.assertNotIn("prefetch.L2", overwrite)
        self.assertNotIn("old[", overwrite)
        self.assertIn("SLABS > 9 ? SLABS - 9",
                      emit(hopper(epilogue="registers", prefetch_c=9)))

    def test_b_given_n_by_k(self):
        # B N x K (C = A B^T) is K-major like A: one box of block_n rows a
        # slab, read without wgmma's transpose.
        text = emit(hopper(b_layout="nk"))
        self.assertEqual(header(text, "args"),
                         "A:tma64x128,B:tma64x256,C:tma32x64")
        self.assertIn("p, 1, 1, 0, 0;", text)
        self.assertIn("descriptor(b + kk * 32, 16, 1024)", text)
        self.assertEqual(text.count("copy_box(b_stages"), 1)
        self.assertIn("_bt_", header(text, "symbol"))
        self.assertTrue(header(text, "problem").endswith(" b=nk"))
        # K x N: N-major, transposed by wgmma, 64-column boxes.
        self.assertIn("p, 1, 1, 0, 1;", emit(hopper()))
        # The other engines read B where it lies.
        for text in (emit(request(b_layout="nk")),
                     emit(request(dtype="f32", b_layout="nk"))):
            self.assertIn("B[(col0 + c) * K + k0 + r]", text)
            self.assertNotIn("B[(k0 + r) * N", text)

    def test_tf32(self):
        # wgmma reads tf32 K-major only: with B N x K the Hopper engine,
        # k8 steps of 32-element (128-byte) slabs, no transposes.
        text = emit(hopper(dtype="tf32", b_layout="nk"))
        self.assertEqual(header(text, "engine"), "wgmma")
        self.assertIn("m64n256k8.f32.tf32.tf32 ", text)
        self.assertIn("p, 1, 1;", text)
        self.assertEqual(header(text, "args"),
                         "A:tma32x128,B:tma32x256,C:tma32x64")
        self.assertIn("_bk32_", header(text, "symbol"))
        # With B K x N, mma.sync's m16n8k8, each input rounded to tf32.
        text = emit(hopper(dtype="tf32", block_n=128))
        self.assertEqual(header(text, "engine"), "mma")
        self.assertIn("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
                      text)
        self.assertIn("cvt.rna.tf32.f32", text)
        self.assertIn("__shared__ float As[BM][BK + 4];", text)
        with self.assertRaises(RequestError) as caught:
            emit(hopper(dtype="tf32", engine="wgmma"))
        self.assertIn("K-major", str(caught.exception))

    def test_cluster_pairs_share_b(self):
        # Two blocks, tiles one above the other, each loading half of B's
        # panel and multicasting it to both; a stage is free when both
        # blocks' consumers released it.
        text = emit(hopper(cluster=2))
        self.assertIn("__cluster_dims__(2, 1, 1)", text)
        self.assertIn(".multicast::cluster", text)
        self.assertIn("barrier_init(shared_address(&empty[s]), CONSUMERS * 2)",
                      text)
        self.assertEqual(text.count("barrier_arrive_peer(shared_address("
                                    "&empty[(it - 1) % STAGES]),"), 2)
        # Barriers ready before either block copies; neither exits first.
        self.assertEqual(text.count("  cluster_sync();"), 2)
        self.assertIn("_cluster2_", header(text, "symbol"))
        # B N x K: each block one box of half the panel's rows.
        self.assertEqual(header(emit(hopper(cluster=2, b_layout="nk")),
                                "args"),
                         "A:tma64x128,B:tma64x128,C:tma32x64")
        # Without a cluster none of it.
        single = emit(hopper())
        for word in ("__cluster_dims__", "multicast", "cluster_sync",
                     "barrier_arrive_peer"):
            self.assertNotIn(word, single)

    def test_mma_takes_f16(self):
        text = emit(hopper(dtype="f16", engine="mma"))
        self.assertIn("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
                      text)

    def test_bad_requests(self):
        for changes, words in (
                ({"arch": "sm_80", "engine": "wgmma"}, ["sm_90a"]),
                ({"k": 333, "engine": "wgmma"}, ["multiples of 8"]),
                ({"block_m": 96}, ["block_m", "64"]),
                ({"block_n": 320}, ["block_n", "256"]),
                ({"block_k": 32}, ["block_k", "64"]),
                ({"stages": 5}, ["stages", "2 to 4"]),
                ({"stages": 1}, ["stages"]),
                ({"block_m": 192}, ["registers"]),
                ({"raster_group": 0}, ["raster_group"]),
                ({"prefetch_c": 0}, ["prefetch_c"]),
                ({"persistent": 1}, ["persistent"]),
                ({"sms": 0}, ["sms"]),
                ({"epilogue": "smem"}, ["epilogue"]),
                ({"epilogue": "tma", "persistent": True}, ["persistent"]),
                ({"epilogue": "tma", "stages": 2}, ["131072 bytes"]),
                ({"b_layout": "kt"}, ["b_layout", "'nk'"]),
                ({"cluster": 4}, ["cluster must be 1 or 2"]),
                ({"cluster": 2, "m": 300}, ["even number of M tiles"]),
                ({"cluster": 2, "raster_group": 3}, ["even raster_group"]),
                ({"cluster": 2, "persistent": True}, ["no persistent"]),
                ({"dtype": "tf32", "b_layout": "nk", "block_k": 64},
                 ["block_k must be 32"])):
            with self.subTest(changes=changes):
                with self.assertRaises(RequestError) as caught:
                    emit(hopper(**changes))
                for word in words:
                    self.assertIn(word, str(caught.exception))


if __name__ == "__main__":
    unittest.main()

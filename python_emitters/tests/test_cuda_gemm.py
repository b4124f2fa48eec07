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
                         "m=1000 n=770 k=333 dtype=bf16 overwrite=0")
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
                ({"dtype": "f16"}, ["dtype"]),
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


if __name__ == "__main__":
    unittest.main()

"""CUDA C++ GEMM kernels for NVIDIA GPUs (kind "cuda_gemm"): C (+)= A * B.

A is M x K, B is K x N and C is M x N, all row-major and dense; sizes are
immediates. Each thread block computes a block_m x block_n tile of C, K in
steps of block_k through shared memory (zero-padded at the edges, so the
inner loops have no edge code).

- dtype "f32": FFMA on CUDA cores; each thread a thread_m x thread_n
  register tile.
- dtype "bf16": tensor cores through inline PTX `mma.sync.aligned.m16n8k16`
  (bf16 x bf16 products, f32 sums, sm_80 and later); each warp a
  warp_m x warp_n tile of m16n8 fragments, filled from shared memory by
  the fragment layout of the PTX ISA.

The text is compiled in process with NVRTC for `arch` (docs/Cuda.md); its
`// qm.` header lines say how to launch it.
"""

import json

from . import GENERATOR_VERSION, PROTOCOL_VERSION
from .errors import RequestError
from .fields import bool_field, check_known, int_field

#: Architectures NVRTC (CUDA 13) compiles for that the kernels support:
#: mma.sync m16n8k16 with bf16 needs sm_80 or later.
ARCHS = ("sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100a", "sm_120")

DTYPES = ("f32", "bf16")

WARP = 32
SHARED_LIMIT = 48 * 1024  # static shared memory per block


class Request:
    """A validated cuda_gemm request."""

    def __init__(self, request):
        check_known(request, (
            "arch", "dtype", "m", "n", "k", "overwrite", "block_m",
            "block_n", "block_k", "warp_m", "warp_n", "thread_m",
            "thread_n"))
        self.arch = request.get("arch")
        if self.arch not in ARCHS:
            raise RequestError(f"unknown arch {self.arch!r}; expected one of "
                               + ", ".join(ARCHS))
        self.dtype = request.get("dtype", "f32")
        if self.dtype not in DTYPES:
            raise RequestError(f"unknown dtype {self.dtype!r}; expected one "
                               "of " + ", ".join(DTYPES))
        self.m = int_field(request, "m")
        self.n = int_field(request, "n")
        self.k = int_field(request, "k")
        self.overwrite = bool_field(request, "overwrite")
        tensor = self.dtype == "bf16"
        self.bm = int_field(request, "block_m", default=128 if tensor else 64)
        self.bn = int_field(request, "block_n", default=128 if tensor else 64)
        self.bk = int_field(request, "block_k", default=32 if tensor else 16)
        if tensor:
            self.wm = int_field(request, "warp_m", default=64)
            self.wn = int_field(request, "warp_n", default=32)
            for name, tile, step in (("warp_m", self.wm, 16),
                                     ("warp_n", self.wn, 8)):
                if tile % step:
                    raise RequestError(f"{name} must be a multiple of {step} "
                                       "(the m16n8 fragment)")
            if self.bm % self.wm or self.bn % self.wn:
                raise RequestError("block_m and block_n must be multiples of "
                                   "warp_m and warp_n")
            if self.bk % 16:
                raise RequestError("block_k must be a multiple of 16 (the "
                                   "k16 of the fragment)")
            self.threads = (self.bm // self.wm) * (self.bn // self.wn) * WARP
            # bf16 tiles, each row padded by 8 elements against bank
            # conflicts.
            self.shared = 2 * (self.bm * (self.bk + 8)
                               + self.bk * (self.bn + 8))
        else:
            self.tm = int_field(request, "thread_m", default=4)
            self.tn = int_field(request, "thread_n", default=4)
            if self.bm % self.tm or self.bn % self.tn:
                raise RequestError("block_m and block_n must be multiples of "
                                   "thread_m and thread_n")
            self.threads = (self.bm // self.tm) * (self.bn // self.tn)
            self.shared = 4 * self.bk * (self.bm + self.bn)
        if not 32 <= self.threads <= 1024 or self.threads % WARP:
            raise RequestError(
                f"the tiles make {self.threads} threads a block; need a "
                "multiple of 32 from 32 to 1024")
        if self.shared > SHARED_LIMIT:
            raise RequestError(
                f"the tiles need {self.shared} bytes of shared memory; "
                f"static shared memory is at most {SHARED_LIMIT}")
        self.request = request

    @property
    def grid(self):
        return (-(-self.n // self.bn), -(-self.m // self.bm), 1)

    def symbol(self):
        tile = (f"{self.wm}x{self.wn}" if self.dtype == "bf16"
                else f"t{self.tm}x{self.tn}")
        return (f"qm_cuda_{self.dtype}gemm_{self.m}x{self.n}x{self.k}"
                + ("_b0" if self.overwrite else "")
                + f"_bm{self.bm}_bn{self.bn}_bk{self.bk}_{tile}_{self.arch}")


def _ffma_body(r):
    """The FFMA kernel's body: A and B tiles through shared memory (A
    transposed there, so that a thread's thread_m values are adjacent), a
    thread_m x thread_n tile of C in registers."""
    return f"""\
  constexpr int M = {r.m}, N = {r.n}, K = {r.k};
  constexpr int BM = {r.bm}, BN = {r.bn}, BK = {r.bk};
  constexpr int TM = {r.tm}, TN = {r.tn};
  constexpr int THREADS = {r.threads};
  __shared__ float As[BK][BM];
  __shared__ float Bs[BK][BN];
  const int tid = threadIdx.x;
  const int tx = tid % (BN / TN), ty = tid / (BN / TN);
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  float acc[TM][TN] = {{}};
  for (int k0 = 0; k0 < K; k0 += BK) {{
    for (int i = tid; i < BM * BK; i += THREADS) {{
      const int r = i / BK, c = i % BK;
      As[c][r] = row0 + r < M && k0 + c < K ? A[(row0 + r) * K + k0 + c]
                                            : 0.0f;
    }}
    for (int i = tid; i < BK * BN; i += THREADS) {{
      const int r = i / BN, c = i % BN;
      Bs[r][c] = k0 + r < K && col0 + c < N ? B[(k0 + r) * N + col0 + c]
                                            : 0.0f;
    }}
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {{
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i)
        a[i] = As[kk][ty * TM + i];
#pragma unroll
      for (int j = 0; j < TN; ++j)
        b[j] = Bs[kk][tx * TN + j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
          acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }}
    __syncthreads();
  }}
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) {{
      const int row = row0 + ty * TM + i, col = col0 + tx * TN + j;
      if (row < M && col < N)
        C[row * N + col] = {"" if r.overwrite else "C[row * N + col] + "}acc[i][j];
    }}
"""


def _mma_body(r):
    """The tensor-core kernel's body: bf16 A and B tiles through shared
    memory, each warp's m16n8k16 fragments gathered from them by the PTX
    ISA's layout (A: rows g and g + 8, columns 2t, 2t + 1 and 8 more; B:
    rows 2t, 2t + 1 and 8 more, column g; C: rows g and g + 8, columns 2t
    and 2t + 1; g = lane / 4, t = lane % 4), f32 accumulators."""
    mt, nt = r.wm // 16, r.wn // 8
    return f"""\
  constexpr int M = {r.m}, N = {r.n}, K = {r.k};
  constexpr int BM = {r.bm}, BN = {r.bn}, BK = {r.bk};
  constexpr int WM = {r.wm}, WN = {r.wn}, MT = {mt}, NT = {nt};
  constexpr int THREADS = {r.threads};
  __shared__ unsigned short As[BM][BK + 8];
  __shared__ unsigned short Bs[BK][BN + 8];
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int g = lane / 4, t = lane % 4;
  const int wrow = (warp / (BN / WN)) * WM, wcol = (warp % (BN / WN)) * WN;
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  float acc[MT][NT][4] = {{}};
  for (int k0 = 0; k0 < K; k0 += BK) {{
    for (int i = tid; i < BM * BK; i += THREADS) {{
      const int r = i / BK, c = i % BK;
      As[r][c] = row0 + r < M && k0 + c < K ? A[(row0 + r) * K + k0 + c]
                                            : (unsigned short)0;
    }}
    for (int i = tid; i < BK * BN; i += THREADS) {{
      const int r = i / BN, c = i % BN;
      Bs[r][c] = k0 + r < K && col0 + c < N ? B[(k0 + r) * N + col0 + c]
                                            : (unsigned short)0;
    }}
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {{
      unsigned a[MT][4], b[NT][2];
#pragma unroll
      for (int mi = 0; mi < MT; ++mi) {{
        const int r = wrow + mi * 16 + g, c = kk + 2 * t;
        a[mi][0] = pack(As[r][c], As[r][c + 1]);
        a[mi][1] = pack(As[r + 8][c], As[r + 8][c + 1]);
        a[mi][2] = pack(As[r][c + 8], As[r][c + 9]);
        a[mi][3] = pack(As[r + 8][c + 8], As[r + 8][c + 9]);
      }}
#pragma unroll
      for (int ni = 0; ni < NT; ++ni) {{
        const int r = kk + 2 * t, c = wcol + ni * 8 + g;
        b[ni][0] = pack(Bs[r][c], Bs[r + 1][c]);
        b[ni][1] = pack(Bs[r + 8][c], Bs[r + 9][c]);
      }}
#pragma unroll
      for (int mi = 0; mi < MT; ++mi)
#pragma unroll
        for (int ni = 0; ni < NT; ++ni) {{
          float *d = acc[mi][ni];
          asm volatile(
              "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
              "{{%0, %1, %2, %3}}, {{%4, %5, %6, %7}}, {{%8, %9}}, "
              "{{%0, %1, %2, %3}};\\n"
              : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
              : "r"(a[mi][0]), "r"(a[mi][1]), "r"(a[mi][2]), "r"(a[mi][3]),
                "r"(b[ni][0]), "r"(b[ni][1]));
        }}
    }}
    __syncthreads();
  }}
#pragma unroll
  for (int mi = 0; mi < MT; ++mi)
#pragma unroll
    for (int ni = 0; ni < NT; ++ni)
#pragma unroll
      for (int e = 0; e < 4; ++e) {{
        const int row = row0 + wrow + mi * 16 + g + (e / 2) * 8;
        const int col = col0 + wcol + ni * 8 + 2 * t + e % 2;
        if (row < M && col < N)
          C[row * N + col] = {"" if r.overwrite else "C[row * N + col] + "}acc[mi][ni][e];
      }}
"""


PACK = """\
// Two bf16 (raw bits) in one 32-bit register, the first in the low half:
// the element with the lower index, as mma's fragments hold them.
__device__ __forceinline__ unsigned pack(unsigned short lo, unsigned short hi) {
  return (unsigned)lo | ((unsigned)hi << 16);
}

"""


def emit(request):
    r = Request(request)
    element = "unsigned short" if r.dtype == "bf16" else "float"
    grid = ",".join(str(v) for v in r.grid)
    meta = {k: request[k] for k in sorted(request)}
    summary = (f"C[{r.m}x{r.n}] {'=' if r.overwrite else '+='} A * B, "
               f"K = {r.k}, " + ("bf16 inputs (raw bits), f32 sums on tensor "
                                 "cores (mma.sync m16n8k16)"
                                 if r.dtype == "bf16" else "f32 FFMA"))
    lines = [
        f"// QiMeng-TensorOp cuda_gemm kernel, qimeng_emitters "
        f"{GENERATOR_VERSION}, protocol {PROTOCOL_VERSION}",
        f"// {summary}",
        f"// qm.symbol: {r.symbol()}",
        f"// qm.arch: {r.arch}",
        f"// qm.grid: {grid}",
        f"// qm.block: {r.threads},1,1",
        f"// qm.shared_bytes: {r.shared}",
        f"// qm.problem: m={r.m} n={r.n} k={r.k} dtype={r.dtype} "
        f"overwrite={int(r.overwrite)}",
        "// qm.args: A,B,C",
        f"// qm.generator: {GENERATOR_VERSION}",
        "// qm.request: " + json.dumps(meta, sort_keys=True,
                                       separators=(",", ":")),
        "",
    ]
    body = _mma_body(r) if r.dtype == "bf16" else _ffma_body(r)
    return ("\n".join(lines) + (PACK if r.dtype == "bf16" else "")
            + f'extern "C" __global__ void __launch_bounds__({r.threads})\n'
            f"{r.symbol()}(const {element} *__restrict__ A,\n"
            f"    const {element} *__restrict__ B, float *__restrict__ C) {{\n"
            + body + "}\n")

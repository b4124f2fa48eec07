"""CUDA C++ GEMM kernels for NVIDIA GPUs (kind "cuda_gemm"): C (+)= A * B.

A is M x K and C is M x N, row-major and dense; B is K x N row-major
(b_layout "kn", the default) or N x K row-major (b_layout "nk": C = A B^T,
a linear layer's weights); sizes are immediates; C is f32. The inputs are
f32, bf16 or f16, or f32 multiplied on tensor cores in tf32 (dtype "tf32":
10 bits of mantissa, f32 sums). Each thread block computes a
block_m x block_n tile of C, K in steps of block_k through shared memory.
Three engines:

- "ffma" (dtype "f32"): FFMA on CUDA cores; each thread a
  thread_m x thread_n register tile; tiles zero-padded at the edges.
- "mma" (bf16, f16 or tf32, sm_80 and later): tensor cores through inline
  PTX `mma.sync.aligned.m16n8k16` (16-bit inputs) or `m16n8k8` (tf32,
  each input rounded with cvt.rna.tf32.f32); f32 sums; each warp a
  warp_m x warp_n tile of m16n8 fragments, filled from shared memory by
  the fragment layout of the PTX ISA.
- "wgmma" (bf16, f16 or tf32, sm_90a): Hopper's warpgroup MMA fed by the
  tensor memory accelerator through an mbarrier pipeline, a producer
  warpgroup and block_m / 64 consumer warpgroups (cuda_wgmma.py). wgmma
  reads tf32 only K-major, so tf32 takes it with b_layout "nk". The
  default on sm_90a where it applies and the copy engine can address the
  operands (16-byte row strides), "mma" elsewhere.

The text is compiled in process with NVRTC for `arch` (docs/Cuda.md); its
`// qm.` header lines say how to launch it.
"""

import json

from . import GENERATOR_VERSION, PROTOCOL_VERSION, cuda_wgmma
from .errors import RequestError
from .fields import bool_field, check_known, int_field

#: Architectures NVRTC (CUDA 13) compiles for that the kernels support:
#: mma.sync m16n8k16 with bf16 needs sm_80 or later.
ARCHS = ("sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100a", "sm_120")

DTYPES = ("f32", "bf16", "f16", "tf32")
ENGINES = ("ffma", "mma", "wgmma")
B_LAYOUTS = ("kn", "nk")

WARP = 32
SHARED_LIMIT = 48 * 1024  # static shared memory per block


class Request:
    """A validated cuda_gemm request."""

    def __init__(self, request):
        check_known(request, (
            "arch", "dtype", "m", "n", "k", "overwrite", "engine",
            "block_m", "block_n", "block_k", "warp_m", "warp_n",
            "thread_m", "thread_n", "stages", "raster_group",
            "prefetch_c", "persistent", "sms", "epilogue", "b_layout",
            "cluster"))
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
        self.b_layout = request.get("b_layout", "kn")
        if self.b_layout not in B_LAYOUTS:
            raise RequestError(f"unknown b_layout {self.b_layout!r}; expected "
                               "'kn' (B is K x N) or 'nk' (B is N x K)")
        tensor = self.dtype != "f32"
        # Bytes of an input element (tf32 is read as f32).
        self.element_bytes = 2 if self.dtype in ("bf16", "f16") else 4
        # The copy engine's 16-byte row strides: A's and B's rows, and C's
        # (f32) for the epilogue.
        b_row = self.n if self.b_layout == "kn" else self.k
        tma = (self.k * self.element_bytes % 16 == 0
               and b_row * self.element_bytes % 16 == 0 and self.n % 4 == 0)
        # wgmma transposes 16-bit operands only: tf32's B must be K-major.
        wgmma_reads = self.dtype != "tf32" or self.b_layout == "nk"
        self.engine = request.get(
            "engine", "ffma" if not tensor else
            "wgmma" if self.arch == "sm_90a" and tma and wgmma_reads
            else "mma")
        if self.engine not in ENGINES:
            raise RequestError(f"unknown engine {self.engine!r}; expected "
                               "one of " + ", ".join(ENGINES))
        if (self.engine == "ffma") != (not tensor):
            raise RequestError(f"engine {self.engine!r} does not take dtype "
                               f"{self.dtype!r} (ffma: f32; mma, wgmma: "
                               "bf16, f16, tf32)")
        if self.engine == "wgmma" and not wgmma_reads:
            raise RequestError(
                "wgmma reads tf32 operands only K-major: give B as N x K "
                "(b_layout 'nk') or take engine 'mma'")
        if self.engine == "wgmma":
            self._wgmma(request, tma)
            self.request = request
            return
        self.bm = int_field(request, "block_m", default=128 if tensor else 64)
        self.bn = int_field(request, "block_n", default=128 if tensor else 64)
        self.bk = int_field(request, "block_k", default=32 if tensor else 16)
        # A's row padding in shared memory (rows 4 banks apart: the eight
        # rows g of a gather hit distinct banks).
        self.a_pad = 8 if self.element_bytes == 2 else 4
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
            if self.bk % self.k_step:
                raise RequestError(
                    f"block_k must be a multiple of {self.k_step} (the "
                    f"k{self.k_step} of the {self.dtype} fragment)")
            self.threads = (self.bm // self.wm) * (self.bn // self.wn) * WARP
            # A's rows padded by a_pad elements, B's by 8, against bank
            # conflicts in the fragments' gathers (B is K x N in shared
            # memory for either b_layout).
            self.shared = self.element_bytes * (
                self.bm * (self.bk + self.a_pad) + self.bk * (self.bn + 8))
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

    def _wgmma(self, request, tma):
        if self.arch != "sm_90a":
            raise RequestError("engine 'wgmma' needs arch sm_90a (wgmma "
                               "exists on no other target)")
        if not tma:
            raise RequestError(
                "engine 'wgmma' needs 16-byte row strides for the copy "
                f"engine (A's, B's and C's rows: K and N multiples of "
                f"{16 // self.element_bytes}, N of 4); engine 'mma' takes "
                "any")
        self.bm = int_field(request, "block_m", default=128)
        # 128 x 256 tiles where they fill every multiprocessor at least
        # once; 128 x 128 below that (twice the blocks: 0.97x cuBLAS
        # against 0.72x at 1000x776x336 on an H200).
        self.sms = int_field(request, "sms", default=132)
        if self.sms < 1:
            raise RequestError("sms must be at least 1")
        wide = -(-self.m // self.bm) * -(-self.n // 256) >= self.sms
        self.bn = int_field(request, "block_n", default=256 if wide else 128)
        slab = cuda_wgmma.ROW_BYTES // self.element_bytes
        self.bk = int_field(request, "block_k", default=slab)
        if self.bm not in (64, 128, 192):
            raise RequestError("block_m must be 64, 128 or 192 (one "
                               "consumer warpgroup per 64 rows)")
        if self.bn % 64 or not 64 <= self.bn <= 256:
            raise RequestError("block_n must be 64, 128, 192 or 256 (64-"
                               "column boxes; wgmma's n is at most 256)")
        if self.bk != slab:
            raise RequestError(f"block_k must be {slab} for {self.dtype} (a "
                               "128-byte swizzled row)")
        per_stage = cuda_wgmma.stage_bytes(self.bm, self.bn)
        most = (cuda_wgmma.SHARED_LIMIT - 1024) // per_stage
        self.stages = int_field(request, "stages", default=min(most, 6))
        if not 2 <= self.stages <= most:
            raise RequestError(
                f"stages must be 2 to {most} for {self.bm} x {self.bn} "
                f"tiles ({per_stage} bytes a stage, "
                f"{cuda_wgmma.SHARED_LIMIT} of shared memory)")
        self.raster_group = int_field(request, "raster_group", default=8)
        if self.raster_group < 1:
            raise RequestError("raster_group must be at least 1")
        # Thread-block clusters of two tiles one above the other that
        # share B's panel, multicast (cuda_wgmma.py): consecutive blocks
        # must be such pairs.
        self.cluster = int_field(request, "cluster", default=1)
        if self.cluster not in (1, 2):
            raise RequestError("cluster must be 1 or 2")
        if self.cluster == 2 and (-(-self.m // self.bm) % 2
                                  or self.raster_group % 2):
            raise RequestError(
                "cluster 2 pairs M tiles one above the other: it needs an "
                "even number of M tiles and an even raster_group")
        if self.cluster == 2 and request.get("persistent"):
            raise RequestError("cluster 2 takes no persistent grid")
        # How many K slabs before the end the producer asks for C's tile
        # in the L2 (accumulating kernels).
        self.prefetch_c = int_field(request, "prefetch_c",
                                    default=self.stages)
        if self.prefetch_c < 1:
            raise RequestError("prefetch_c must be at least 1")
        # A persistent grid: one block a multiprocessor (`sms` of them, an
        # H100's or H200's 132 by default), each taking tiles in turn, so
        # that the producer loads the next tile while the consumers write
        # C.
        self.persistent = bool_field(request, "persistent")
        # How C is written: "tma", the accumulators staged in the idle
        # stages and stored (or added, for C +=) by the copy engine, where
        # they fit and no next tile needs the stages; else "registers".
        fits = self.bm * self.bn * 4 <= self.stages * per_stage
        self.epilogue = request.get(
            "epilogue",
            "tma" if fits and not self.persistent else "registers")
        if self.epilogue not in ("tma", "registers"):
            raise RequestError(f"unknown epilogue {self.epilogue!r}; "
                               "expected 'tma' or 'registers'")
        if self.epilogue == "tma" and (self.persistent or not fits):
            raise RequestError(
                "epilogue 'tma' stages C in the idle stages: it needs "
                f"{self.bm * self.bn * 4} bytes of them (there are "
                f"{self.stages * per_stage}) and no persistent grid")
        self.threads = 128 * (1 + self.bm // 64)
        self.shared = cuda_wgmma.shared_bytes(self.bm, self.bn, self.stages)
        # ptxas allocates the whole kernel within the registers a thread
        # has at launch: the accumulators and about 32 more must fit.
        cap = min(255, 65536 // self.threads // 8 * 8)
        if self.bn // 2 + 32 > cap:
            raise RequestError(
                f"{self.bm} x {self.bn} tiles need {self.bn // 2} "
                f"accumulators a thread and more, but {self.threads} "
                f"threads a block have {cap} registers each; make block_m "
                "or block_n smaller")

    @property
    def k_step(self):
        """K of one tensor-core instruction, 32 bytes of it on either
        engine: k16 for 16-bit types, k8 for tf32."""
        return cuda_wgmma.K_STEP_BYTES // self.element_bytes

    @property
    def grid(self):
        if self.engine == "wgmma":
            tiles = -(-self.n // self.bn) * -(-self.m // self.bm)
            return (min(tiles, self.sms) if self.persistent else tiles, 1, 1)
        return (-(-self.n // self.bn), -(-self.m // self.bm), 1)

    def symbol(self):
        tile = (f"s{self.stages}g{self.raster_group}"
                + (f"p{self.prefetch_c}" if self.epilogue == "registers"
                   else "_ctma")
                + (f"_persistent{self.sms}" if self.persistent else "")
                + (f"_cluster{self.cluster}" if self.cluster > 1 else "")
                if self.engine == "wgmma" else
                f"{self.wm}x{self.wn}" if self.engine == "mma"
                else f"t{self.tm}x{self.tn}")
        return (f"qm_cuda_{self.dtype}gemm_{self.m}x{self.n}x{self.k}"
                + ("_bt" if self.b_layout == "nk" else "")
                + ("_b0" if self.overwrite else "")
                + f"_bm{self.bm}_bn{self.bn}_bk{self.bk}_{tile}_{self.arch}")


def _load_b_tile(r, zero):
    """The loop that copies B's block_k x block_n tile (rows k0.., columns
    col0..) into Bs[BK][BN], zeros outside B; the threads walk B's rows as
    they lie in memory, K x N or N x K."""
    if r.b_layout == "kn":
        index = "const int r = i / BN, c = i % BN;"
        element = "B[(k0 + r) * N + col0 + c]"
    else:
        index = "const int r = i % BK, c = i / BK;"
        element = "B[(col0 + c) * K + k0 + r]"
    return f"""\
    for (int i = tid; i < BK * BN; i += THREADS) {{
      {index}
      Bs[r][c] = k0 + r < K && col0 + c < N ? {element}
                                            : {zero};
    }}
"""


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
{_load_b_tile(r, "0.0f")}    __syncthreads();
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


def _fragments(r):
    """Gathers of one k step's A and B fragments from shared memory, by the
    PTX ISA's layouts (g = lane / 4, t = lane % 4). m16n8k16, 16-bit: A
    rows g and g + 8, columns 2t, 2t + 1 and 8 more, two to a register; B
    rows 2t, 2t + 1 and 8 more, column g. m16n8k8, tf32: A rows g and
    g + 8, columns t and t + 4; B rows t and t + 4, column g, one to a
    register, rounded to tf32."""
    if r.dtype == "tf32":
        return """\
#pragma unroll
      for (int mi = 0; mi < MT; ++mi) {
        const int r = wrow + mi * 16 + g, c = kk + t;
        a[mi][0] = tf32(As[r][c]);
        a[mi][1] = tf32(As[r + 8][c]);
        a[mi][2] = tf32(As[r][c + 4]);
        a[mi][3] = tf32(As[r + 8][c + 4]);
      }
#pragma unroll
      for (int ni = 0; ni < NT; ++ni) {
        const int r = kk + t, c = wcol + ni * 8 + g;
        b[ni][0] = tf32(Bs[r][c]);
        b[ni][1] = tf32(Bs[r + 4][c]);
      }
"""
    return """\
#pragma unroll
      for (int mi = 0; mi < MT; ++mi) {
        const int r = wrow + mi * 16 + g, c = kk + 2 * t;
        a[mi][0] = pack(As[r][c], As[r][c + 1]);
        a[mi][1] = pack(As[r + 8][c], As[r + 8][c + 1]);
        a[mi][2] = pack(As[r][c + 8], As[r][c + 9]);
        a[mi][3] = pack(As[r + 8][c + 8], As[r + 8][c + 9]);
      }
#pragma unroll
      for (int ni = 0; ni < NT; ++ni) {
        const int r = kk + 2 * t, c = wcol + ni * 8 + g;
        b[ni][0] = pack(Bs[r][c], Bs[r + 1][c]);
        b[ni][1] = pack(Bs[r + 8][c], Bs[r + 9][c]);
      }
"""


def _mma_body(r):
    """The tensor-core kernel's body: A and B tiles through shared memory,
    each warp's m16n8 fragments gathered from them (_fragments); C's
    fragment rows g and g + 8, columns 2t and 2t + 1; f32 accumulators."""
    mt, nt = r.wm // 16, r.wn // 8
    element = "float" if r.dtype == "tf32" else "unsigned short"
    return f"""\
  constexpr int M = {r.m}, N = {r.n}, K = {r.k};
  constexpr int BM = {r.bm}, BN = {r.bn}, BK = {r.bk};
  constexpr int WM = {r.wm}, WN = {r.wn}, MT = {mt}, NT = {nt};
  constexpr int THREADS = {r.threads};
  __shared__ {element} As[BM][BK + {r.a_pad}];
  __shared__ {element} Bs[BK][BN + 8];
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int g = lane / 4, t = lane % 4;
  const int wrow = (warp / (BN / WN)) * WM, wcol = (warp % (BN / WN)) * WN;
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  float acc[MT][NT][4] = {{}};
  for (int k0 = 0; k0 < K; k0 += BK) {{
    for (int i = tid; i < BM * BK; i += THREADS) {{
      const int r = i / BK, c = i % BK;
      As[r][c] = row0 + r < M && k0 + c < K ? A[(row0 + r) * K + k0 + c]
                                            : ({element})0;
    }}
{_load_b_tile(r, "(" + element + ")0")}    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; kk += {r.k_step}) {{
      unsigned a[MT][4], b[NT][2];
{_fragments(r)}#pragma unroll
      for (int mi = 0; mi < MT; ++mi)
#pragma unroll
        for (int ni = 0; ni < NT; ++ni) {{
          float *d = acc[mi][ni];
          asm volatile(
              "mma.sync.aligned.m16n8k{r.k_step}.row.col.f32.{r.dtype}.{r.dtype}.f32 "
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


TF32 = """\
// An f32 rounded to tf32 (to nearest, ties away), as mma's .tf32
// operands must be.
__device__ __forceinline__ unsigned tf32(float f) {
  unsigned u;
  asm("cvt.rna.tf32.f32 %0, %1;\\n" : "=r"(u) : "f"(f));
  return u;
}

"""

PACK = """\
// Two 16-bit values (raw bits) in one 32-bit register, the first in the
// low half:
// the element with the lower index, as mma's fragments hold them.
__device__ __forceinline__ unsigned pack(unsigned short lo, unsigned short hi) {
  return (unsigned)lo | ((unsigned)hi << 16);
}

"""


def emit(request):
    r = Request(request)
    element = "unsigned short" if r.element_bytes == 2 else "float"
    grid = ",".join(str(v) for v in r.grid)
    meta = {k: request[k] for k in sorted(request)}
    engine = ("f32 FFMA" if r.engine == "ffma" else
              f"{r.dtype} inputs, f32 sums on tensor cores "
              + (f"(mma.sync m16n8k{r.k_step})" if r.engine == "mma" else
                 f"(wgmma m64n{r.bn}k{r.k_step}, TMA loads, {r.stages} "
                 "stages)"))
    product = "A * B" if r.b_layout == "kn" else "A * B^T (B is N x K)"
    summary = (f"C[{r.m}x{r.n}] {'=' if r.overwrite else '+='} {product}, "
               f"K = {r.k}, {engine}")
    wgmma = r.engine == "wgmma"
    # wgmma kernels take the copy engine's tensor maps and dynamic shared
    # memory.
    args = cuda_wgmma.args(r) if wgmma else "A,B,C"
    shared = (f"// qm.dynamic_shared_bytes: {r.shared}" if wgmma
              else f"// qm.shared_bytes: {r.shared}")
    lines = [
        f"// QiMeng-TensorOp cuda_gemm kernel, qimeng_emitters "
        f"{GENERATOR_VERSION}, protocol {PROTOCOL_VERSION}",
        f"// {summary}",
        f"// qm.symbol: {r.symbol()}",
        f"// qm.arch: {r.arch}",
        f"// qm.grid: {grid}",
        f"// qm.block: {r.threads},1,1",
        shared,
        f"// qm.problem: m={r.m} n={r.n} k={r.k} dtype={r.dtype} "
        f"overwrite={int(r.overwrite)} b={r.b_layout}",
        f"// qm.engine: {r.engine}",
        f"// qm.args: {args}",
        f"// qm.generator: {GENERATOR_VERSION}",
        "// qm.request: " + json.dumps(meta, sort_keys=True,
                                       separators=(",", ":")),
        "",
    ]
    head = "\n".join(lines)
    if wgmma:
        return (head + cuda_wgmma.helpers(r)
                + 'extern "C" __global__ void '
                f"{cuda_wgmma.attributes(r)}\n"
                f"{r.symbol()}({cuda_wgmma.parameters(r)}) {{\n"
                + cuda_wgmma.body(r) + "}\n")
    body = _mma_body(r) if r.engine == "mma" else _ffma_body(r)
    helpers = ("" if r.engine == "ffma" else
               TF32 if r.dtype == "tf32" else PACK)
    return (head + helpers
            + f'extern "C" __global__ void __launch_bounds__({r.threads})\n'
            f"{r.symbol()}(const {element} *__restrict__ A,\n"
            f"    const {element} *__restrict__ B, float *__restrict__ C) {{\n"
            + body + "}\n")

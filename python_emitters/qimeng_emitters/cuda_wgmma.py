"""The Hopper (sm_90a) body of cuda_gemm: wgmma fed by TMA.

C (+)= A * B with A M x K and B K x N (or C (+)= A * B^T with B N x K:
b_layout "nk"), bf16, f16 or tf32 (f32 in memory), row-major; C M x N in
f32. One thread block per block_m x block_n tile of C, in warpgroups of
128 threads:

- warpgroup 0, the producer: one thread issues the tensor-memory
  accelerator's copies (cp.async.bulk.tensor) of each K slab (block_k =
  128 bytes of K: 64 16-bit elements or 32 tf32) of A (one box, block_m
  rows x block_k) and of B (block_n / 64 boxes of block_k x 64 for K x N;
  one box of block_n x block_k for N x K) into a ring of `stages`
  shared-memory stages, each completing on its
  "full" mbarrier with the bytes it expects; it waits on the stage's
  "empty" mbarrier before refilling it. It gives its registers up
  (setmaxnreg.dec) to
- warpgroups 1 .. block_m / 64, the consumers: each owns 64 rows of the
  tile and issues wgmma.mma_async.m64n<block_n>k16 (k8 for tf32) from
  shared memory, four per slab, keeping one slab's group in flight (wait_group 1) and
  releasing the stage before it; f32 accumulators in registers
  (block_n / 2 a thread). At the end of the tile (epilogue "tma") they
  are staged in the idle stages and the copy engine stores them to C, or
  adds them to C in the L2 for C +=; with epilogue "registers" the
  threads write C themselves, guarded at the edges.

Shared-memory layouts are the copy engine's 128-byte swizzle, which is
what wgmma's descriptors read: A K-major (a block_k row of K is 128
bytes; 8 rows make the 1024-byte swizzle atom, so the stride between
8-row groups, SBO, is 1024); B N x K K-major as A, or B K x N N-major
(imm-trans-b = 1, 16-bit types only: 64 N columns a 128-byte row, one row
per k; SBO = 1024 between groups of 8 k rows, LBO = block_k * 128 between
the 64-column boxes). One k step (32 bytes of K) advances a K-major
descriptor by 32 bytes inside the atom, an N-major one by 16 rows (2048
bytes). The edges need no code: the copy engine fills what lies outside A
and B with zeros. The copy engine needs 16-byte row strides.

Blocks are ordered in groups of `raster_group` M tiles (consecutive blocks
walk down the group's M tiles, then to the next N tile), so that the
blocks resident at once share panels of A and B in the L2. With
`cluster` 2, block pairs (2i, 2i + 1) form a thread-block cluster: the
two tiles one above the other share their panel of B, and each block's
producer loads half of it and multicasts it to both blocks' stages
(`.multicast::cluster`), which halves what the pair reads of B from the
L2. A stage is then written by both producers, so it is free when the
consumers of both blocks have released it: each consumer arrives on its
own block's "empty" barrier and on the other's (mapa). The
blocks meet at a cluster barrier after initialising their barriers and
again before they exit, so that no multicast or remote arrival finds its
peer gone. A persistent
grid has one block a multiprocessor taking tiles in turn, the ring's
stages and phases running on from tile to tile.
"""

import textwrap

#: Bytes of one row of a K slab in shared memory (64 16-bit elements, 32
#: tf32): the swizzle width. A k step of wgmma reads 32 bytes of it.
ROW_BYTES = 128
K_STEP_BYTES = 32
#: Registers a producer thread keeps after setmaxnreg; the consumers take
#: the rest of the multiprocessor's 65536 (consumer_registers).
PRODUCER_REGISTERS = 40
REGISTER_FILE = 65536
#: Dynamic shared memory a block may have on sm_90 (227 KiB).
SHARED_LIMIT = 227 * 1024


def stage_bytes(bm, bn):
    return (bm + bn) * ROW_BYTES


def consumer_registers(consumers):
    """What setmaxnreg.inc gives each consumer thread: the register file
    less the producer's, shared out, a multiple of 8, at most 240 (asking
    for more than there is would wait for ever)."""
    share = (REGISTER_FILE - 128 * PRODUCER_REGISTERS) // (128 * consumers)
    return min(240, share // 8 * 8)


def shared_bytes(bm, bn, stages):
    """Dynamic shared memory: the stages, 1024-byte aligned (the swizzle
    atom), and the slack to align the base."""
    return stages * stage_bytes(bm, bn) + 1024


def _wgmma(r):
    """The inline-PTX wgmma of one k step (k16, or k8 for tf32): block_n / 2
    accumulators; scale-d, A and B unscaled, and for 16-bit types the
    transposes (A K-major; B N-major for b_layout "kn")."""
    n = r.bn // 2
    outs = ", ".join(f"%{i}" for i in range(n))
    ptx_type = r.dtype
    transposes = ("" if r.dtype == "tf32" else
                  f", 0, {1 if r.b_layout == 'kn' else 0}")
    constraints = ", ".join(f'"+f"(d[{i}])' for i in range(n))
    return f"""\
__device__ __forceinline__ void wgmma_step(float (&d)[{n}],
                                           unsigned long long a,
                                           unsigned long long b) {{
  asm volatile(
      "{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{n + 2}, 0;\\n"
      "wgmma.mma_async.sync.aligned.m64n{r.bn}k{r.k_step}.f32.{ptx_type}.{ptx_type} "
      "{{{outs}}}, %{n}, %{n + 1}, p, 1, 1{transposes};\\n}}\\n"
      : {constraints}
      : "l"(a), "l"(b), "r"(1));
}}

"""


HELPERS = """\
// The copy engine's descriptor of a 2-D tensor (CUtensorMap), passed by
// value as a __grid_constant__ parameter; made by the host with
// cuTensorMapEncodeTiled.
struct __align__(64) QmTensorMap {
  unsigned long long opaque[16];
};

__device__ __forceinline__ unsigned shared_address(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void barrier_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\\n"
               :: "r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void barrier_expect(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\\n"
               :: "r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ void barrier_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\\n"
               :: "r"(bar) : "memory");
}

__device__ __forceinline__ void barrier_wait(unsigned bar, unsigned phase) {
  unsigned done = 0;
  do {
    asm volatile(
        "{\\n.reg .pred p;\\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\\n"
        "selp.u32 %0, 1, 0, p;\\n}\\n"
        : "=r"(done) : "r"(bar), "r"(phase) : "memory");
  } while (!done);
}

// One box of a 2-D tensor into shared memory, completing on `bar`;
// coordinates innermost first, elements outside the tensor read as zero.
__device__ __forceinline__ void copy_box(unsigned dst, const QmTensorMap &map,
                                         unsigned bar, int inner,
                                         int outer) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile"
      ".mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\\n"
      :: "r"(dst), "l"((unsigned long long)&map), "r"(inner), "r"(outer),
         "r"(bar)
      : "memory");
}

// wgmma's shared-memory matrix descriptor, 128-byte swizzle.
__device__ __forceinline__ unsigned long long
descriptor(unsigned address, unsigned leading, unsigned stride) {
  return (unsigned long long)((address & 0x3FFFF) >> 4) |
         ((unsigned long long)(leading >> 4) << 16) |
         ((unsigned long long)(stride >> 4) << 32) | (1ull << 62);
}

"""


CLUSTER_HELPERS = """\
// Cluster pairs: an arrival on the other block's barrier at the same
// offset (what it releases are wgmma's reads, complete by then:
// wgmma.wait_group, so no cluster-scope fence, which would stall the
// warpgroup), the cluster barrier, and a copy that lands in both blocks'
// shared memory at `dst`, completing on each block's `bar`.
__device__ __forceinline__ void barrier_arrive_peer(unsigned bar,
                                                    unsigned peer) {
  asm volatile(
      "{\\n.reg .b32 remote;\\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\\n}\\n"
      :: "r"(bar), "r"(peer) : "memory");
}

__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\\n"
               "barrier.cluster.wait.acquire;\\n" ::: "memory");
}

__device__ __forceinline__ void copy_box_both(unsigned dst,
                                              const QmTensorMap &map,
                                              unsigned bar, int inner,
                                              int outer) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile"
      ".mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;\\n"
      :: "r"(dst), "l"((unsigned long long)&map), "r"(inner), "r"(outer),
         "r"(bar), "h"((unsigned short)3)
      : "memory");
}

"""


def helpers(r):
    return HELPERS + (CLUSTER_HELPERS if r.cluster > 1 else "") + _wgmma(r)


def attributes(r):
    """The kernel's launch attributes: one block a multiprocessor (the
    register cap at entry is what setmaxnreg redistributes), and the
    cluster's shape."""
    cluster = (f" __cluster_dims__({r.cluster}, 1, 1)" if r.cluster > 1
               else "")
    return f"__launch_bounds__({r.threads}, 1){cluster}"


#: The copy engine's boxes, innermost dimension first: A's is block_m rows
#: of one K slab; B's, K x N, 64 16-bit columns (a 128-byte row) of one
#: slab, or, N x K, block_n rows of one slab; C's 32 f32 columns (a
#: 128-byte row) of one consumer's 64 rows.
B_BOX_COLUMNS = ROW_BYTES // 2
C_BOX = (ROW_BYTES // 4, 64)


def args(r):
    """The header's qm.args: A and B as tensor maps with their boxes, C as
    one too for the copy engine's epilogue, else a pointer."""
    c = f"C:tma{C_BOX[0]}x{C_BOX[1]}" if r.epilogue == "tma" else "C"
    b = (f"{B_BOX_COLUMNS}x{r.bk}" if r.b_layout == "kn"
         else f"{r.bk}x{r.bn // r.cluster}")
    return f"A:tma{r.bk}x{r.bm},B:tma{b},{c}"


def _b_descriptor(r):
    """wgmma's descriptor of B's k step kk in stage address b."""
    if r.b_layout == "nk":
        return f"descriptor(b + kk * {K_STEP_BYTES}, 16, 1024)"
    return (f"descriptor(b + kk * {r.k_step} * {ROW_BYTES}, BK * {ROW_BYTES}, "
            "1024)")


def _copy_b(r):
    """The producer's copies of B's slab into stage s: all of it, or in a
    cluster pair this block's half (`rank`), multicast to both blocks."""
    if r.cluster == 1:
        if r.b_layout == "nk":
            return ("          copy_box(b_stages + s * B_BYTES, tmB, bar, "
                    "slab * BK, n0);\n")
        return f"""\
#pragma unroll
          for (int j = 0; j < BN / {B_BOX_COLUMNS}; ++j)
            copy_box(b_stages + s * B_BYTES + j * (BK * {ROW_BYTES}), tmB,
                     bar, n0 + {B_BOX_COLUMNS} * j, slab * BK);
"""
    if r.b_layout == "nk":
        return f"""\
          copy_box_both(b_stages + s * B_BYTES + rank * (BN / 2) * {ROW_BYTES},
                        tmB, bar, slab * BK, n0 + rank * (BN / 2));
"""
    return f"""\
#pragma unroll
          for (int j = rank * BN / {2 * B_BOX_COLUMNS};
               j < (rank + 1) * BN / {2 * B_BOX_COLUMNS}; ++j)
            copy_box_both(b_stages + s * B_BYTES + j * (BK * {ROW_BYTES}),
                          tmB, bar, n0 + {B_BOX_COLUMNS} * j, slab * BK);
"""


def _release(r, condition, stage, indent):
    """A consumer's release of `stage` when `condition` holds: on its
    block's barrier, and in a cluster pair on the other block's too."""
    local = f"barrier_arrive(shared_address(&empty[{stage}]));"
    if r.cluster == 1:
        return f"{indent}if ({condition})\n{indent}  {local}\n"
    return (f"{indent}if ({condition}) {{\n{indent}  {local}\n"
            f"{indent}  barrier_arrive_peer(shared_address(&empty[{stage}]),\n"
            f"{indent}                      rank ^ 1);\n{indent}}}\n")


def parameters(r):
    """The kernel's parameter list, as args(r) says."""
    c = ("const __grid_constant__ QmTensorMap tmC" if r.epilogue == "tma"
         else "float *__restrict__ C")
    return ("const __grid_constant__ QmTensorMap tmA,\n"
            "    const __grid_constant__ QmTensorMap tmB,\n"
            f"    {c}")


def _code_line(line):
    """Lines to indent: not blank ones, nor preprocessor lines."""
    return line.strip() and not line.startswith("#")


def body(r):
    """The kernel's body (the parameters are tmA, tmB, and C or, with the
    copy engine's epilogue, tmC)."""
    consumers = r.bm // 64
    registers = consumer_registers(consumers)
    n_acc = r.bn // 2
    # One tile: the K loop into the accumulators, then the epilogue.
    tile = f"""\
    int m0, n0;
    origin(tile, m0, n0);
    float d[{n_acc}];
#pragma unroll
    for (int i = 0; i < {n_acc}; ++i)
      d[i] = 0.0f;
    for (int slab = 0; slab < SLABS; ++slab, ++it) {{
      const int s = it % STAGES;
      barrier_wait(shared_address(&full[s]), (it / STAGES) & 1);
      const unsigned a = a_stages + s * A_BYTES + consumer * 64 * {ROW_BYTES};
      const unsigned b = b_stages + s * B_BYTES;
      asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory");
#pragma unroll
      for (int kk = 0; kk < {ROW_BYTES // K_STEP_BYTES}; ++kk)
        wgmma_step(d, descriptor(a + kk * {K_STEP_BYTES}, 16, 1024),
                   {_b_descriptor(r)});
      asm volatile("wgmma.commit_group.sync.aligned;\\n" ::: "memory");
      // The slab before this one is read: its stage may be refilled.
      asm volatile("wgmma.wait_group.sync.aligned 1;\\n" ::: "memory");
{_release(r, "slab > 0 && t == 0", "(it - 1) % STAGES", "      ")}    }}
    asm volatile("wgmma.wait_group.sync.aligned 0;\\n" ::: "memory");
    // The tile's last slab is read too: the producer, already on the next
    // tile, may refill its stage while this tile's C is written.
{_release(r, "t == 0", "(it - 1) % STAGES", "    ")}
    // The accumulators' layout: thread t of the warpgroup holds, for each
    // 8 columns j, rows 16 (t / 32) + (t % 32) / 4 (+ 8) and columns
    // 8 j + 2 (t % 4) (+ 1).
{_store_c_by_copy_engine(r) if r.epilogue == "tma" else _store_c(r)}"""
    return f"""\
  constexpr int M = {r.m}, N = {r.n}, K = {r.k};
  constexpr int BM = {r.bm}, BN = {r.bn}, BK = {r.bk};
  constexpr int STAGES = {r.stages}, CONSUMERS = {consumers};
  constexpr int GROUP = {r.raster_group};
  constexpr int TILES_M = (M + BM - 1) / BM, TILES_N = (N + BN - 1) / BN;
  constexpr int SLABS = (K + BK - 1) / BK;
  constexpr unsigned A_BYTES = BM * {ROW_BYTES}, B_BYTES = BN * {ROW_BYTES};
  constexpr unsigned STAGE_BYTES = A_BYTES + B_BYTES;
  extern __shared__ unsigned char shared_raw[];
  __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];
  // The stages start on a 1024-byte boundary (the swizzle atom).
  const unsigned base = (shared_address(shared_raw) + 1023u) & ~1023u;
  const unsigned a_stages = base, b_stages = base + STAGES * A_BYTES;

  // Grouped order: GROUP M tiles a column of N tiles.
  auto origin = [](int id, int &m0, int &n0) {{
    const int group_first = (id / (GROUP * TILES_N)) * GROUP;
    const int group_size = min(TILES_M - group_first, GROUP);
    const int in_group = id % (GROUP * TILES_N);
    m0 = (group_first + in_group % group_size) * BM;
    n0 = (in_group / group_size) * BN;
  }};

  const int warpgroup = threadIdx.x / 128;
  if (threadIdx.x == 0) {{
    for (int s = 0; s < STAGES; ++s) {{
      barrier_init(shared_address(&full[s]), 1);
      barrier_init(shared_address(&empty[s]), CONSUMERS * {r.cluster});
    }}
    asm volatile("fence.mbarrier_init.release.cluster;\\n" ::: "memory");
  }}
  __syncthreads();
{_cluster_start(r)}
  // Each block takes tiles blockIdx.x, + gridDim.x, ... (one tile unless
  // the grid is persistent); `it` counts K slabs over all of them, so
  // the ring's stages and phases run on from tile to tile.
  if (warpgroup == 0) {{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 {PRODUCER_REGISTERS};\\n");
    if (threadIdx.x == 0) {{
      int it = 0;
      for (int tile = blockIdx.x; tile < TILES_M * TILES_N;
           tile += gridDim.x) {{
        int m0, n0;
        origin(tile, m0, n0);
        for (int slab = 0; slab < SLABS; ++slab, ++it) {{
          const int s = it % STAGES;
          if (it >= STAGES)
            barrier_wait(shared_address(&empty[s]), ((it / STAGES) + 1) & 1);
{_prefetch_c(r)}          const unsigned bar = shared_address(&full[s]);
          barrier_expect(bar, STAGE_BYTES);
          copy_box(a_stages + s * A_BYTES, tmA, bar, slab * BK, m0);
{_copy_b(r)}        }}
      }}
    }}
  }} else {{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 {registers};\\n");
    const int consumer = warpgroup - 1;
    const int t = threadIdx.x % 128;
    int it = 0;
    for (int tile = blockIdx.x; tile < TILES_M * TILES_N;
         tile += gridDim.x) {{
{textwrap.indent(tile, "  ", _code_line)}    }}
  }}
{_cluster_end(r)}"""


def _cluster_start(r):
    """In a cluster pair: the block's rank, and both blocks' barriers
    initialised before either copies or arrives into the other."""
    if r.cluster == 1:
        return ""
    return """\
  unsigned rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\\n" : "=r"(rank));
  cluster_sync();
"""


def _cluster_end(r):
    """In a cluster pair: neither block exits while the other may still
    multicast into it or arrive on its barriers."""
    return "  cluster_sync();\n" if r.cluster > 1 else ""


#: Columns of 8 whose C values an accumulating epilogue loads together
#: before it adds and stores them: loads in flight, not one at a time.
EPILOGUE_CHUNK = 8


def _prefetch_c(r):
    """An accumulating kernel whose epilogue reads C into registers: its
    producer asks for the tile of C in the L2 (cp.async.bulk.prefetch, a
    row at a time) when it issues the last ring of loads, so that the
    epilogue's reads of C do not wait on memory."""
    if r.overwrite or r.epilogue == "tma":
        return ""
    ahead = r.prefetch_c
    return f"""\
        if (slab == (SLABS > {ahead} ? SLABS - {ahead} : 0)) {{
          const unsigned row_bytes = 4u * (unsigned)min(BN, N - n0);
          for (int row = m0; row < min(M, m0 + BM); ++row)
            asm volatile(
                "cp.async.bulk.prefetch.L2.global [%0], %1;\\n"
                :: "l"(C + (size_t)row * N + n0), "r"(row_bytes)
                : "memory");
        }}
"""


def _store_c_by_copy_engine(r):
    """The epilogue through the copy engine: each consumer writes its
    64 x block_n accumulators into the (now idle) stages as 64 x 32 f32
    boxes in the 128-byte swizzle (rows 128 bytes apart, 16-byte chunk c
    of row r at c ^ (r % 8): a warp's float2 stores meet no bank twice),
    then one thread stores the boxes to C (cp.async.bulk.tensor) or, for
    C +=, adds them to C where C lies, in the L2
    (cp.reduce.async.bulk.tensor .add): C is never read into the SM. The
    copy engine leaves out what lies past M and N."""
    op = ("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group"
          if r.overwrite else
          "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile"
          ".bulk_group")
    return f"""\
    // Both consumers are done with the stages before either writes there.
    asm volatile("bar.sync 1, {128 * (r.bm // 64)};\\n" ::: "memory");
    const unsigned c_tile = base + consumer * (64 * BN * 4);
    unsigned char *c_stage = shared_raw + (c_tile - shared_address(shared_raw));
    const int row = 16 * (t / 32) + (t % 32) / 4;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {{
        const int r8 = row + 8 * h, col = 8 * j + 2 * (t % 4);
        const int chunk = (col % {C_BOX[0]}) / 4;
        *reinterpret_cast<float2 *>(
            c_stage + (col / {C_BOX[0]}) * ({C_BOX[1]} * {ROW_BYTES}) + r8 * {ROW_BYTES} +
            ((chunk ^ (r8 % 8)) * 16) + (col % 4) * 4) =
            make_float2(d[4 * j + 2 * h], d[4 * j + 2 * h + 1]);
      }}
    // The copy engine reads what these threads wrote.
    asm volatile("fence.proxy.async.shared::cta;\\n" ::: "memory");
    asm volatile("bar.sync %0, 128;\\n" :: "r"(2 + consumer) : "memory");
    if (t == 0) {{
#pragma unroll
      for (int j = 0; j < BN / {C_BOX[0]}; ++j)
        asm volatile(
            "{op} [%0, {{%1, %2}}], [%3];\\n"
            :: "l"((unsigned long long)&tmC), "r"(n0 + {C_BOX[0]} * j),
               "r"(m0 + {C_BOX[1]} * consumer),
               "r"(c_tile + j * ({C_BOX[1]} * {ROW_BYTES}))
            : "memory");
      asm volatile("cp.async.bulk.commit_group;\\n" ::: "memory");
      asm volatile("cp.async.bulk.wait_group 0;\\n" ::: "memory");
    }}
"""


def _store_c(r):
    """The epilogue from registers: C = acc, or C += acc with a chunk of
    C's values loaded before any is stored."""
    head = """\
    const int row0 = m0 + consumer * 64 + 16 * (t / 32) + (t % 32) / 4;
    const int col0 = n0 + 2 * (t % 4);
"""
    if r.overwrite:
        return head + """\
#pragma unroll
    for (int j = 0; j < BN / 8; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = row0 + 8 * h, col = col0 + 8 * j;
        if (row < M && col < N)
          *reinterpret_cast<float2 *>(C + (size_t)row * N + col) =
              make_float2(d[4 * j + 2 * h], d[4 * j + 2 * h + 1]);
      }
"""
    chunk = min(EPILOGUE_CHUNK, r.bn // 8)
    return head + f"""\
#pragma unroll
    for (int j0 = 0; j0 < BN / 8; j0 += {chunk}) {{
      float2 old[{chunk}][2];
#pragma unroll
      for (int j = j0; j < j0 + {chunk}; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {{
          const int row = row0 + 8 * h, col = col0 + 8 * j;
          old[j - j0][h] =
              row < M && col < N
                  ? *reinterpret_cast<const float2 *>(C + (size_t)row * N + col)
                  : make_float2(0.0f, 0.0f);
        }}
#pragma unroll
      for (int j = j0; j < j0 + {chunk}; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {{
          const int row = row0 + 8 * h, col = col0 + 8 * j;
          if (row < M && col < N)
            *reinterpret_cast<float2 *>(C + (size_t)row * N + col) =
                make_float2(old[j - j0][h].x + d[4 * j + 2 * h],
                            old[j - j0][h].y + d[4 * j + 2 * h + 1]);
        }}
    }}
"""

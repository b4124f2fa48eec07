"""GEMMs on the dot-product instructions of x86-64 AVX-512: bf16 with f32
accumulation (VDPBF16PS, kind "sbgemm") and 8-bit integers with int32
accumulation (VPDPBUSD, kind "igemm"); and f16 with f32 accumulation
(kind "shgemm"), each f16 widened to f32 where it is packed or, in the
matrix-vector form below, loaded (VCVTPH2PS), then multiplied and added in
f32 (VFMADD231PS): a "group" of one k, the packed dword its f32. (For AVX-512
hosts without AMX-BF16, whose tiles take f16 split, amx.py.)

C += A * B, row-major: sbgemm has bf16 A and B and an f32 C (each product
exact in f32, each pair of products summed into an f32 accumulator; what
OpenBLAS calls sbgemm); igemm has u8 or s8 A, s8 B and an s32 C (sums
modulo 2^32, as arith.addi). One request = one kernel for one shape, in the
function and body forms of docs/KernelContract.md (A, B, C and the
workspace in %rdi, %rsi, %rdx, %rcx).

Both instructions multiply a register of 16 groups of k by another and add
each group's products to one 32-bit lane: their operands must hold the k of
a group side by side (the "VNNI" layout), 2 bf16 or 4 bytes a dword. The
loop nest is blis.py's, as the f32 kernels' (sgemm.py), with groups of k
where they have k:

    for jc in 0..N step nc:              nb = min(nc, N - jc)
      for pc in 0..K step kc:            kb = min(kc, K - pc), kc whole groups
        PACK B[pc:pc+kb, jc:jc+nb] -> Bp   NR-wide slivers; per k group NR
                                           dwords (B(k,j), B(k+1,j), ..)
        for ic in 0..M step mc:          mb = min(mc, M - ic)
          PACK A[ic:ic+mb, pc:pc+kb] -> Ap MR-tall slivers; per k group MR
                                           dwords (A(i,k), A(i,k+1), ..)
          for jr in 0..nb step NR:
            for ir in 0..mb step MR:
              COMPUTE MR x NR += Ap sliver * Bp sliver over the groups

Both packs pad with zeros: the last group of a K that is not whole groups,
the groups up to a multiple of the K unroll, rows past mb and columns past
nb. So the K loop has no edge code, zero times zero adds nothing, and the C
update masks the columns past N (AVX-512 mask registers) and stops at the
last row.

VPDPBUSD multiplies unsigned bytes of one source by signed bytes of the
other. An s8 A is packed plus 128 (its sign bit flipped), which makes it
u8, and each kc block's sum_k 128 B(k,j), taken from the packed B with the
same instruction, is subtracted from the tile before it meets C.

Leading dimensions are in elements of each operand, immediates or
(runtime_ld) read from the workspace header at every call; the kernel keeps
them in bytes in the header either way.

An sbgemm with `bf16_output` also writes D = bf16(C + A * B), rounded once
(VCVTNEPS2BF16: to nearest even), into a bf16 matrix D whose pointer the
caller writes into the header at 120 (and its leading dimension, in bf16
elements, at 56 in the runtime_ld form; `ldd`, default n, otherwise): the
last kc block adds C to its tile and stores the rounding into D instead of
the sum into C, so C holds only the partial sums of the earlier blocks
(nothing at all when K fits one block) and is scratch to the caller. What
torch-mlir's bf16 matmul (an f32 accumulator, then arith.truncf) becomes
in one kernel.

An sbgemm or shgemm with `pack_b: false` (B transposed, A not) is a
matrix-vector product per row of A instead: no packs, B^T read where it
lies. So is an sgemm (f32) with `pack_b: false` and `trans_b` on isa
avx512, which the protocol's entry sends here (sgemm.py writes every other
f32 GEMM). For each group of GEMV_ROWS rows of B^T (columns of C) and each
row of A (two or three rows a pass sharing each chunk of B^T's rows as
loaded: gemv_a_rows), one zmm accumulator per row of B^T takes VDPBF16PS of 32 bf16 of
A against 32 of that row (f16: 16 of each widened, then VFMADD231PS; f32:
16 of each, VFMADD231PS), k along the rows; a K that is not whole chunks
ends in masked loads of both; then a reduction tree sums the
accumulators' lanes into GEMV_ROWS results, stored (added to C) under a
mask past N. Rows of B^T past N are the last row again
(read, never stored), so nothing past B is read. The rows of A meet each
group of B^T's rows while it is in the caches, so B^T streams from memory
once whatever M. For few rows of A (tokens through a linear layer), where
packing B would read and write all of it for one or a few uses; for f16,
its operands are read as stored, 2 bytes an element, where f32 weights
would be 4. (AVX512-FP16's own arithmetic rounds every sum to f16: not the
f32 accumulation the op asks for.)

An shgemm, sbgemm or igemm with `pack_b: false` and B as stored (A not
transposed) streams B's rows in place instead (symbol `_brows64x<R>`, and
`_kc<kc>` where K is in more than one block): per group of up to 8 passes
of R rows of the part (at most 6, the group's rows shared out evenly; past
its end the last row again, computed and not stored), those rows of A
copied into the workspace (f16 widened; K padded, zero past K; s8 with
each row's -128 sum_k A(i, k)); then K in blocks of kc (each over every
block of columns before the next, so that the pages of B's rows a block
reads, one a row where a row is a page or more, stay in the TLB; the first
block starts C's sums or overwrites, the last applies the epilogue and the
16-bit D, C holding the partial sums before it); per block of 64 columns
and per pass of the group, over the K block's k, B's row k of the block
widened (VCVTPH2PS, masked at N's edge), each row's A(i, k) broadcast, 4
FMAs a row into 4 R accumulators; bf16 over pairs of k, rows k and k + 1
interleaved by VPERMT2W into pairs (B(k, j), B(k + 1, j)), each row's pair
of A the broadcast memory operand of 4 VDPBF16PS; 8-bit over quads of k,
rows k to k + 3 interleaved by byte and word unpacks into quads within
each 128-bit lane (the sums' columns permuted, put back in order by
VSHUFI32X4 where they are stored), each row's quad of A broadcast, 4
VPDPBUSD (u8 A the unsigned operand; s8 A the signed one against B's bytes
plus 128). The group's first pass builds each K step's vectors from B's
rows and leaves them in a buffer in the workspace (a K block's: 256 bytes
a step); its later passes read them back, so B is read from memory once a
group and unpacked once, and the later passes' loads do not meet in the
few cache sets of rows a page apart. B's row 16 k ahead is
prefetched (each row lies on another page, past the hardware's
prefetchers): a JAX dense layer (activations times a K x N kernel) on few
rows.

Both forms take the blocked kernels' 16-bit D (`bf16_output`,
`f16_output`: D = half(C + A * B), rounded once where the sums are
stored, C read unless overwrite and never written) and their epilogue.
"""

from dataclasses import dataclass

# The body's register map and loop nest are blis.py's
# (docs/KernelContract.md).
from .blis import (IC, IR, JC, JR, KB, LD_BYTES_OFFSET, MB, NB, PC,
                   RUNTIME_A_REACH, WS, emit_c_tile_pointer, emit_nest,
                   emit_prepacked_panel, emit_runtime_a_bases,
                   emit_sliver_ends, emit_sliver_heads, runtime_a_row)
from .conv2d import PIECE_BYTES, PIECES_STEP, emit_piece_table
from .errors import RequestError
from .fields import (ACTIVATION_FIELDS, SMOOTH_FIELD, activation_suffix,
                     bool_field, cache_blocks, check_known,
                     check_target_features, has_activation, int_field,
                     leading_dims, read_activation, round_up)
from .header import (BIAS_OFFSET, HEADER_BYTES, K_SLOT, LD_OFFSET,
                     OUTPUT_LD_OFFSET, OUTPUT_OFFSET, RANGE_OFFSET)
from .x86 import (Asm, Stride, back, check_disp, emit_fault_entry,
                  emit_leaky_relu, emit_relu, emit_relu_constants,
                  emit_relu_floor, emit_smooth_activation,
                  emit_smooth_constants, emit_transpose_8x8,
                  emit_transpose_16x16, function_text, fwd,
                  leaky_slope_address, relu_max_address)

# Workspace (bytes from its pointer): the header (header.py: the caller's
# RANGE_OFFSET, K_SLOT, OUTPUT_LD_OFFSET, LD_OFFSET, BIAS_OFFSET,
# OUTPUT_OFFSET; blis.py's LD_BYTES_OFFSET), then the VPERMT2W index that
# interleaves two rows of B, per-block counts, and the packed blocks.
C_ROW_BYTES = Stride(slot=LD_BYTES_OFFSET + 16)  # ldc in bytes, as a Stride
INDEX_OFFSET = 128          # bf16: 32 words, B(k, j) to word 2j, B(k+1, j) to 2j+1
COUNTS_OFFSET = 192         # per kc block: see _COUNT_SLOTS
AP_OFFSET = 256

# Per-kc-block counts the packs and the K loop read (int64 slots): whole k
# groups, the k of a last partial group, the zero groups that pad to the K
# unroll, the K loop's iterations; and the groups of the current sliver
# that a lane-major pack's transposes copied.
GROUPS, REM, PAD_GROUPS, ITERATIONS, VECTOR_GROUPS = (
    COUNTS_OFFSET + 8 * i for i in range(5))
# A in place: the mask of a block's partial group of k (_emit_k_loop), and
# the most runs of consecutive k a convolution's kc block holds (k_runs;
# BlockingModel.h's kMaxRunsABlock).
A_TAIL_MASK = "%k7"
MAX_RUNS_A_BLOCK = 8
# bf16_output: D's leading dimension in bytes, written by the kernel.
LDD_BYTES = COUNTS_OFFSET + 8 * 5
# b_prepacked: the address of this kc block's panel in the caller's B.
B_PANEL = COUNTS_OFFSET + 8 * 6
# The product transposed: the tile's columns before the edge (C's rows).
TILE_COLUMNS = COUNTS_OFFSET + 8 * 7
assert TILE_COLUMNS + 8 <= AP_OFFSET



@dataclass(frozen=True)
class DotType:
    """One row per element-type combination: data, not code."""
    name: str           # "bf16", "u8s8", "s8s8"
    kind: str           # the request's kind
    element_bytes: int  # of A and B
    group: int          # k per 32-bit lane of the instruction
    dot: str            # the instruction: acc += dot(A group, B group)
    add: str            # C + tile
    shift_a: bool       # s8 A packed plus 128, corrected by 128 sum_k B
    ops_per_lane: int   # multiplies and adds per 32-bit lane
    suffix: str         # the symbol's ISA part
    #: Features the code needs beyond the dot instruction's: byte and word
    #: masked loads (VMOVDQU8/16, AVX512BW and VL) and BZHI for the masks.
    features: tuple

    @property
    def types(self):
        return ELEMENT_TYPES[self.name]


_COMMON = ("avx512f", "avx512bw", "avx512vl", "bmi2")
DOT_TYPES = {
    "bf16": DotType("bf16", "sbgemm", 2, 2, "vdpbf16ps", "vaddps", False, 4,
                    "avx512bf16", _COMMON + ("avx512bf16",)),
    "u8s8": DotType("u8s8", "igemm", 1, 4, "vpdpbusd", "vpaddd", False, 8,
                    "avx512vnni", _COMMON + ("avx512vnni",)),
    "s8s8": DotType("s8s8", "igemm", 1, 4, "vpdpbusd", "vpaddd", True, 8,
                    "avx512vnni", _COMMON + ("avx512vnni",)),
    # One f16 a lane, widened to f32 (VCVTPH2PS) where it is packed or
    # loaded: the packed "groups" are f32, the dot an FMA.
    "f16": DotType("f16", "shgemm", 2, 1, "vfmadd231ps", "vaddps", False, 2,
                   "avx512", _COMMON + ("f16c",)),
    # f32 (kind "sgemm"): the matrix-vector form only (sgemm.py writes
    # every other f32 GEMM), f16's without the widening.
    "f32": DotType("f32", "sgemm", 4, 1, "vfmadd231ps", "vaddps", False, 2,
                   "avx512", _COMMON),
}

# Test-only deliberately broken kernels the validator must catch:
# drop-k zeroes the first group of every packed A row, swap-pairs
# interleaves B's first two rows of a group the wrong way round (A(i,k)
# meets B(k+1,j)), write-past-edge stores whole vectors past N and rows
# past M; drop-low (f16) keeps only the upper 8 significant bits of each
# widened element of B^T (bf16's precision: amx.py's fault of that name).
FAULTS = (None, "drop-k", "swap-pairs", "write-past-edge", "drop-low",
          "segfault", "hang")

LANES = 16          # 32-bit lanes of a zmm register: one per k group
REGISTERS = 32
GEMV_ROWS = 8       # rows of B^T (columns of C) a GEMV pass takes at once
# The GEMV's own slots after the header: the row of A, the column, C's
# row, and the part's first row and ends.
GEMV_ROW, GEMV_COL, GEMV_C_ROW, GEMV_M_BEGIN, GEMV_M_END, GEMV_N_END = (
    HEADER_BYTES + 8 * i for i in range(6))
GEMV_WORKSPACE = HEADER_BYTES + 64
# With a 16-bit D: up to its ldd in bytes (LDD_BYTES).
GEMV_HALF_WORKSPACE = round_up(LDD_BYTES + 8, 64)
# f16, bf16 and 8-bit with B as stored, pack_b false: per group of up to
# STREAM_GROUP_PASSES passes of up to STREAM_ROWS rows of A (copied into the
# workspace, f16 widened), B's rows streamed in place STREAM_COLUMNS columns
# at a time, each pass of the group over the same block (bf16: two rows
# interleaved into pairs of k by VPERMT2W as they are loaded; bytes: four
# into quads by unpacks).
STREAM_ROWS = 6
STREAM_GROUP_PASSES = 8
STREAM_VECTORS = 4
STREAM_COLUMNS = STREAM_VECTORS * LANES
(STREAM_ROW, STREAM_COL, STREAM_M_END, STREAM_N_BEGIN, STREAM_N_END,
 STREAM_GROUP, STREAM_GROUP_END, STREAM_K0) = (
    HEADER_BYTES + 8 * i for i in range(8))
STREAM_A_OFFSET = 256       # the group's rows of A (f16 widened), K padded
STREAM_PREFETCH_ROWS = 16
# 8-bit: the registers past the accumulators, k to k + 3's rows loaded and
# interleaved into quads (STREAM_QUADS: the quads of columns 16L + 4m + d,
# lane 4L + d of quad register m; the last two rows' registers reused as
# the unpacks free them); A's broadcast quad; s8: 128 in each byte.
STREAM_I8_ROWS = tuple(range(24, 28))
STREAM_QUADS = (26, 27, 28, 29)
STREAM_I8_A_REG = 30
STREAM_I8_128_REG = 31
# Registers: the accumulators, B's row, A's broadcast, then drop-low's mask.
STREAM_DROP_LOW_REG = STREAM_ROWS * STREAM_VECTORS + STREAM_VECTORS + 1


#: A's, B's and C's element types by element_types' name.
ELEMENT_TYPES = {"bf16": ("bf16", "bf16", "f32"), "u8s8": ("u8", "s8", "s32"),
                 "s8s8": ("s8", "s8", "s32"), "f16": ("f16", "f16", "f32"),
                 "f32": ("f32", "f32", "f32")}


def half_output_field(kind):
    """The request field that asks for a bf16 or f16 D."""
    return "f16_output" if kind == "shgemm" else "bf16_output"


def element_types(request, kind):
    """The request's element types: "bf16" (sbgemm), "f16" (shgemm), "f32"
    (sgemm: the matrix-vector form), or for an igemm "u8s8" or "s8s8" by
    its `a_type` (default u8; B is s8)."""
    if kind in ("shgemm", "sgemm"):
        return "f16" if kind == "shgemm" else "f32"
    if kind != "igemm":
        return "bf16"
    a_type = request.get("a_type", "u8")
    if a_type not in ("u8", "s8"):
        raise RequestError(f"field 'a_type' must be \"u8\" or \"s8\" (B is "
                           f"s8), got {a_type!r}")
    return a_type + "s8"


class Params:
    """A validated request with the blocking clamped to the problem."""

    #: The convolution whose A this GEMM gathers (dotconv.DotConv), or None.
    conv = None

    def __init__(self, request):
        kind = request.get("kind", "sbgemm")
        check_known(request, (
            "isa", "m", "n", "k", "lda", "ldb", "ldc", "trans_a", "trans_b",
            "mr", "nr",
            "k_unroll", "kc", "mc", "nc", "overwrite", "runtime_ld",
            "fault", "target_features", "parallel", "dynamic_m", "dynamic_n",
            "dynamic_k", "pack_b", "a_layout", "b_prepacked", "k_runs",
            "product")
            + (("a_type",) if kind == "igemm" else
               ("bias",) + ACTIVATION_FIELDS + (SMOOTH_FIELD,)
               if kind == "sgemm" else
               (half_output_field(kind), "ldd", "bias") + ACTIVATION_FIELDS
               + (SMOOTH_FIELD,)))
        self.dt = DOT_TYPES[element_types(request, kind)]
        if request.get("isa") != "avx512":
            raise RequestError(
                f"{kind} kernels are written for isa avx512 (with "
                f"{self.dt.dot.upper()}), got " + repr(request.get("isa")))
        self.features = self.dt.features
        check_target_features(request, _FeatureRow(self.dt))
        self.m = int_field(request, "m")
        self.n = int_field(request, "n")
        self.k = int_field(request, "k")
        # A stored K x M, B stored N x K: the packs swap roles (a
        # transposed operand is packed as the other one as stored).
        self.trans_a = bool_field(request, "trans_a")
        self.trans_b = bool_field(request, "trans_b")
        self.overwrite = bool_field(request, "overwrite")
        self.runtime_ld = bool_field(request, "runtime_ld")
        # The part of C from the header, as sgemm.py's: rows [m_begin,
        # m_end) and columns [n_begin, n_end) for one part of a parallel
        # call, or for a run-time M (`m` is then the representative M the
        # blocking was clamped for).
        self.parallel = bool_field(request, "parallel")
        self.dynamic_m = bool_field(request, "dynamic_m")
        # N likewise (the columns are masked at run time in any case).
        self.dynamic_n = bool_field(request, "dynamic_n")
        self.reads_range = self.parallel or self.dynamic_m or self.dynamic_n
        # K from the header (K_SLOT) at each call, `k` the representative
        # the kc blocking was clamped for: the kc loop's bound and its last
        # block's partial group are then run-time values (the packed form
        # only; C accumulates, as sgemm.py's run-time K does).
        self.dynamic_k = bool_field(request, "dynamic_k")
        self.lda, self.ldb, self.ldc = leading_dims(
            request, self.m, self.n, self.k, self.trans_a, self.trans_b,
            self.dynamic_m, self.dynamic_n, self.dynamic_k)
        # The epilogue (sbgemm, shgemm): + bias[j] (its pointer in the
        # header), then relu and its bound or leaky relu, as sgemm's, where
        # the last kc block stores C (or D).
        # (Along the rows: an nchw convolution's channels, dotconv.py.)
        self.bias = request.get("bias", "none")
        if self.bias not in ("none", "columns", "rows"):
            raise RequestError(
                f"bias {self.bias!r}: an sbgemm adds a bias along the "
                "columns (\"columns\"), the rows (\"rows\") or none")
        read_activation(request, self)
        # product "transposed" (rows of A against a wider B^T: a torch
        # linear layer's weights passed as an argument): the kernel
        # computes C^T = B^T A^T, B^T's rows its A (read where they lie)
        # and A's rows its B (packed; plus 128 for s8), and stores its tiles
        # transposed into C (_emit_tile_store_transposed), so that B^T is
        # never packed. From here on m, n, lda, ldb, the transposes and the
        # bias are that product's (its rows are C's columns); c_problem
        # keeps C's for the symbol and the summary; the caller's ABI is C's.
        self.product = request.get("product", "direct")
        if self.product not in ("direct", "transposed"):
            raise RequestError(f"unknown product {self.product!r}; expected "
                               "direct or transposed")
        self.c_transposed = self.product == "transposed"
        self.c_problem = (self.m, self.n, self.lda, self.ldb)
        if self.c_transposed:
            why = ("B not transposed or A transposed (B^T's rows are the "
                   "product's A, A's rows its B)"
                   if not self.trans_b or self.trans_a else
                   "f16 (widened where it is packed)"
                   if self.dt.name == "f16" else
                   "a u8 A (VPDPBUSD's unsigned operand would be B^T's "
                   "signed bytes)" if self.dt.name == "u8s8" else
                   "run-time sizes"
                   if self.dynamic_m or self.dynamic_n or self.dynamic_k else
                   "b_prepacked or pack_b (B^T is read in place)"
                   if "b_prepacked" in request or "pack_b" in request else
                   "a bias along the rows" if self.bias == "rows" else
                   "fault swap-pairs (no pairs are interleaved: B^T's rows "
                   "read or packed as they lie, A's rows likewise)"
                   if request.get("fault") == "swap-pairs" else None)
            if why:
                raise RequestError(f"product 'transposed': not with {why}")
            self.m, self.n = self.n, self.m
            self.lda, self.ldb = self.ldb, self.lda
            self.trans_a, self.trans_b = False, True
            self.bias = "rows" if self.bias == "columns" else self.bias
        self.relu_min_label = self.relu_max_label = None
        # D = bf16(C + A * B) (shgemm: f16(...)) from the last kc block.
        output = half_output_field(kind)
        self.half_output = bool_field(request, output)
        self.ldd = None
        if "ldd" in request and not self.half_output:
            raise RequestError("field 'ldd' is D's leading dimension: it "
                               f"needs {output}")
        if self.half_output and self.runtime_ld:
            if "ldd" in request:
                raise RequestError(
                    "runtime_ld kernels read ldd from the workspace at run "
                    "time; the request must not fix it")
        elif self.half_output:
            # (D is C's shape: its columns are the caller's N.)
            self.ldd = int_field(request, "ldd", minimum=self.c_problem[1],
                                 default=self.c_problem[1])
        self.mr = int_field(request, "mr")
        if self.c_transposed and self.mr > LANES:
            raise RequestError(
                f"product 'transposed' stores a row of C's tile, mr = "
                f"{self.mr} of its columns, as one vector: mr <= {LANES}")
        self.nr = int_field(request, "nr")
        if self.nr % LANES:
            raise RequestError(
                f"nr = {self.nr} must be a multiple of {LANES} (f32 lanes "
                "of a zmm register)")
        self.nv = self.nr // LANES
        # relu's bound (leaky relu's product; a smooth activation's second
        # scratch vector) waits in the second B register, or the one past
        # A for a single B vector.
        if (self.nv == 1 and self.mr + 2 >= REGISTERS
                and (self.relu_max is not None
                     or self.leaky_slope is not None
                     or self.smooth is not None)):
            raise RequestError(
                f"a {self.mr}x{self.nr} block leaves no register for "
                + ("relu's bound" if self.relu_max is not None
                   else "leaky relu's product" if self.smooth is None
                   else f"{self.smooth}'s scratch"))
        if self.nv > 7:
            raise RequestError(
                f"nr = {self.nr}: at most 7 vectors (one mask register "
                "each, k1-k7)")
        needed = self.mr * self.nv + self.nv + 1
        if needed > REGISTERS:
            raise RequestError(
                f"a {self.mr}x{self.nr} register block needs {needed} vector "
                f"registers (accumulators, B vectors, an A broadcast); "
                f"avx512 has {REGISTERS}")
        self.k_unroll = int_field(request, "k_unroll", default=1)
        if self.k_unroll not in (1, 2, 4, 8):
            raise RequestError(
                f"k_unroll (k groups per K iteration) must be 1, 2, 4 or 8, "
                f"got {self.k_unroll}")
        # kc is whole groups of k, or else every kc block ends in a partial
        # group as K's last block may (the packs zero the rest of it): a
        # convolution of 3 channels, whose rows lie in runs of an odd number
        # of k (dotconv.py). For bf16 any kc (the partial pair is always one
        # k); for bytes a kc that divides K, so that every block ends in
        # the same partial quad.
        partial_kc = request.get("kc", 0) % self.dt.group != 0
        self.kc, self.mc, self.nc = cache_blocks(
            request, self.m, self.n, self.k, self.mr, self.nr,
            1 if partial_kc else self.dt.group)
        # A convolution's kc block may hold k_runs runs of consecutive k of
        # its input (dotconv.py; A in place only), run_k k each.
        self.k_runs = int_field(request, "k_runs", default=1)
        if not 1 <= self.k_runs <= MAX_RUNS_A_BLOCK or self.kc % self.k_runs:
            raise RequestError(
                f"k_runs = {self.k_runs} must divide kc = {self.kc}, at most "
                f"{MAX_RUNS_A_BLOCK} (each run's K loop is written out)")
        self.run_k = self.kc // self.k_runs
        if partial_kc and self.dt.group == 4 and self.k % self.kc:
            raise RequestError(
                f"kc = {self.kc} must be a multiple of 4, or divide K = "
                f"{self.k}: every block then ends in the same partial quad")
        self.fault = request.get("fault")
        if self.fault not in FAULTS:
            raise RequestError(
                f"unknown fault {self.fault!r}; expected one of "
                + ", ".join(f for f in FAULTS if f) + " (test-only)")
        # Packed slivers: kc_groups groups each, a whole number of K
        # iterations; A slivers MR dwords per group, B slivers NR.
        # B^T read in place, one matrix-vector product per row of A.
        b_in_place = ("pack_b" in request
                      and not bool_field(request, "pack_b"))
        if "pack_b" in request and not b_in_place:
            raise RequestError("field 'pack_b' may only be false (B^T read "
                               "in place)")
        # B read in place: B as stored streams its rows (f16, bf16 and
        # the 8-bit types), B^T's rows are read by the matrix-vector form
        # (f16, bf16, f32).
        self.b_stream = (b_in_place and self.dt.name != "f32"
                         and not self.trans_b)
        self.gemv = b_in_place and not self.b_stream
        if self.dt.name == "f32" and not (self.gemv and self.trans_b):
            raise RequestError(
                "an sgemm on the dot kernels is the matrix-vector form only "
                "(pack_b false, B transposed); sgemm.py writes the others")
        if b_in_place:
            why = ("B transposed" if self.gemv and not self.trans_b else
                   "A not transposed" if self.trans_a else
                   "no bias along the rows" if self.bias == "rows" else
                   # (The matrix-vector form reads its columns from the
                   # header anyway: a run-time N too.)
                   "a static N" if self.dynamic_n and not self.gemv else
                   "no swap-pairs fault (it has no pairs to swap)"
                   if self.gemv and self.fault == "swap-pairs" else None)
            if why:
                form = ("B's rows streamed in place" if self.b_stream else
                        "B^T read in place")
                raise RequestError(f"pack_b false ({form}) needs {why}")
        if self.b_stream:
            # K in blocks of kc (stream_k_blocks): whole groups of k, so
            # that only the last block has a partial group.
            if self.kc < self.k and self.kc % self.dt.group:
                raise RequestError(
                    f"pack_b false (B's rows streamed in place): kc = "
                    f"{self.kc} must be whole groups of {self.dt.group} k, "
                    "or K one block")
            # Up to one group of passes, the rows shared out evenly (8 rows:
            # two passes of 4, not 6 and 2 computed as 6).
            passes = -(-self.m // STREAM_ROWS)
            self.stream_rows = (-(-self.m // passes)
                                if passes <= STREAM_GROUP_PASSES
                                else STREAM_ROWS)
            self.stream_group_rows = self.stream_rows * min(
                STREAM_GROUP_PASSES, -(-self.m // self.stream_rows))
            # f16: A widened to f32, K padded to a vector; bf16 and bytes:
            # A as it is, K padded to a vector of pairs or quads (zero past
            # K).
            self.stream_a_stride = (round_up(self.k, LANES) * 4
                                    if self.dt.name == "f16" else
                                    round_up(self.k, 2 * LANES) * 2
                                    if self.dt.name == "bf16" else
                                    round_up(self.k, 4 * LANES))
            # s8 A: B's bytes plus 128 (unsigned), so each row's
            # -128 sum_k A(i, k), an s32 per row of the group after its
            # rows, starts the row's sums.
            self.stream_corr_offset = (STREAM_A_OFFSET + self.stream_group_rows
                                       * self.stream_a_stride)
            # More than one pass a group: the first leaves each K step's
            # vectors of B, as the instruction takes them, in a buffer
            # (a K block's, 4 vectors a step) that the others read.
            self.stream_buffer = self.stream_group_rows > self.stream_rows
            self.stream_buffer_offset = round_up(
                self.stream_corr_offset
                + (self.stream_group_rows * 4 if self.dt.shift_a else 0), 64)
            self.stream_buffer_bytes = (
                stream_block_steps(self, min(self.kc, self.k))
                * STREAM_VECTORS * 64 if self.stream_buffer else 0)
        if self.fault == "drop-low" and self.dt.name != "f16":
            raise RequestError("fault drop-low: only f16 has low parts to "
                               "drop")
        if self.dt.name == "f16" and self.fault == "swap-pairs":
            raise RequestError("fault swap-pairs: f16 has no pairs of k "
                               "to swap (one k a lane)")
        # Packed slivers hold each run of a kc block in whole groups (the
        # last of each run padded with zero where the run is not whole
        # groups), then zero groups to a whole number of K iterations.
        self.kc_groups = round_up(
            self.k_runs * -(-self.run_k // self.dt.group), self.k_unroll)
        # The k of a block's last, partial group: every block's (every
        # run's) when kc (the run) is not whole groups (kc divides K for
        # bytes; for bf16 both are 1), else K's last block's (K % group);
        # with a run-time K any count below the group, the packs choosing
        # at run time.
        self.partial_group_k = self.run_k % self.dt.group or \
            self.k % self.dt.group
        self.partial_group_ks = (
            tuple(range(1, self.dt.group)) if self.dynamic_k else
            (self.partial_group_k,) if self.partial_group_k else ())
        # B packed by the caller, once (constant weights), in the panel
        # layout of docs/KernelContract.md ("B prepacked"): per NR-wide
        # sliver of all N, all of K's groups (k_groups, padded with zero
        # groups to the K unroll), NR dwords a group. A kc block's panel is
        # then the slivers' groups from pc on: kc must be whole K steps
        # (or K one block) so that no block pads in the middle.
        self.b_prepacked = bool_field(request, "b_prepacked")
        self.k_groups = round_up(-(-self.k // self.dt.group), self.k_unroll)
        if self.b_prepacked:
            step = self.dt.group * self.k_unroll
            why = ("f16 (widened where it is packed)" if self.dt.name == "f16"
                   else "the matrix-vector form (B^T read in place)"
                   if self.gemv
                   else "the swap-pairs fault (no PACK B to fault)"
                   if self.fault == "swap-pairs"
                   else f"kc = {self.kc} not whole K steps of {step}"
                   if self.k > self.kc and self.kc % step else None)
            if why:
                raise RequestError(f"b_prepacked: not with {why}")
        self.a_sliver = self.mr * self.kc_groups * 4
        self.b_sliver = self.nr * self.kc_groups * 4
        self.ap_bytes = round_up((self.mc // self.mr) * self.a_sliver, 64)
        self.bp_offset = AP_OFFSET + self.ap_bytes
        self.bp_bytes = 0 if self.b_prepacked else round_up(
            (self.nc // self.nr) * self.b_sliver, 64)
        # s8 A: per column of the B panel, this block's 128 sum_k B(k, j).
        self.corr_offset = self.bp_offset + self.bp_bytes
        self.corr_bytes = self.nc * 4 if self.dt.shift_a else 0
        # A read in place that is s8 cannot be shifted: B is packed plus
        # 128 instead (B unsigned, A signed: VPDPBUSD's operands swapped),
        # and each row's 128 sum_k A(i, k) over the block, from the rows as
        # they lie, is subtracted from the tile (`shift_b`).
        self.shift_b = False
        # A in place ("direct"): each sliver read where it lies, rows
        # a_row_stride bytes apart (lda, or a convolution's pixel step), its
        # pointer in a table (one int64 per row of the block, a sliver uses
        # its first row's); a sliver that cannot be (short of rows, or
        # across a convolution's output rows) is copied into its packed
        # place, rows kc_groups dwords apart, and points there, bit 63 set.
        self.a_layout = request.get("a_layout", "k-major")
        if self.a_layout not in ("k-major", "direct"):
            raise RequestError(
                f"a_layout {self.a_layout!r}: the dot kernels pack A "
                "(\"k-major\") or read it in place (\"direct\")")
        self.a_direct = self.a_layout == "direct"
        self.a_row_stride = None
        self.a_pointer_table = self.corr_offset + self.corr_bytes
        # A in place whose kc blocks each end in the same partial group
        # (a 3-channel stem: runs of 21 k), or (a convolution's) hold
        # k_runs runs of consecutive k, each whole K steps and perhaps the
        # same partial group: the K loop runs a run's whole groups, loads
        # its last a_tail k under a mask (no k past the run is read, so
        # none of the next run's), then moves on to the next run.
        self.a_tail = 0
        if self.a_direct:
            unit = self.dt.group * self.k_unroll
            tail = self.run_k % self.dt.group
            tail_fits = ((tail or self.k_runs > 1) and self.k % self.kc == 0
                         and self.run_k >= unit
                         and (self.run_k // self.dt.group)
                         % self.k_unroll == 0)
            why = ("f16 (widened where it is packed)"
                   if self.dt.name == "f16" else
                   "A transposed (its rows are k)" if self.trans_a else
                   f"run-time leading dimensions and mr = {self.mr} (the "
                   f"K loop reaches {RUNTIME_A_REACH} rows from its bases)"
                   if self.runtime_ld and self.mr > RUNTIME_A_REACH else
                   "run-time leading dimensions and runs of k"
                   if self.runtime_ld and self.k_runs > 1 else
                   "the matrix-vector form" if self.gemv else
                   f"K and kc in whole K steps of {unit} (k_unroll "
                   f"{self.k_unroll} groups of {self.dt.group}), or kc "
                   f"dividing K and each of its {self.k_runs} run(s) whole "
                   f"K steps and the same partial group"
                   if not tail_fits and (self.k_runs > 1 or self.k % unit
                                         or self.kc % unit) else
                   "runs of a kc block padded to whole groups and B^T "
                   "(its pack takes a block's k in one run)"
                   if tail and self.k_runs > 1 and self.trans_b else
                   "runs of a kc block padded to whole groups and a "
                   "prepacked B (its panels hold K's groups in one run)"
                   if tail and self.k_runs > 1 and self.b_prepacked
                   else None)
            if tail_fits:
                self.a_tail = tail
            if why:
                raise RequestError(f"a_layout direct reads A in place: not "
                                   f"with {why}")
            if not self.runtime_ld:
                self.a_row_stride = self.lda * self.dt.element_bytes
                check_disp(self.a_row_stride * self.mr, "A row")
            self.shift_b = self.dt.shift_a
        elif self.k_runs > 1:
            raise RequestError("k_runs: a kc block of several runs is read "
                               "in place only (a_layout direct)")
        # A kc block's runs each padded to whole groups (B packed run by
        # run).
        self.runs_padded = self.k_runs > 1 and self.a_tail > 0
        if self.dynamic_k:
            why = ("a 16-bit D" if self.half_output else
                   "overwrite or an epilogue (with K = 0 no kc block runs "
                   "to store C)" if self.overwrite or _has_epilogue(self)
                   else "kc not whole groups" if partial_kc else
                   "B read in place" if b_in_place else
                   "a prepacked B (its layout spans K)" if self.b_prepacked
                   else "A in place" if self.a_direct else None)
            if why:
                raise RequestError(f"dynamic_k: not with {why}")
        # shift_b: per row of the block, 128 sum_k A(i, k) over the kc
        # block (s32), after the pointer table.
        self.row_corr_offset = self.a_pointer_table + (
            round_up(self.mc * 8, 64) if self.a_direct else 0)
        if self.shift_b:
            self.corr_bytes = 0  # no column sums: A is not shifted
            self.a_pointer_table = self.corr_offset
            self.row_corr_offset = self.a_pointer_table + round_up(
                self.mc * 8, 64)
        # (A tile past the block's last row reads its rows' entries too.)
        self.workspace_bytes = (
            (GEMV_HALF_WORKSPACE if self.half_output else GEMV_WORKSPACE)
            if self.gemv else
            self.stream_buffer_offset + self.stream_buffer_bytes
            if self.b_stream else self.row_corr_offset
            + (round_up((self.mc + self.mr) * 4, 64) if self.shift_b else 0))
        # A in place with a run-time lda: the block's rows and columns while
        # the K loop borrows their registers (sgemm.py's RUNTIME_A_BASES).
        self.runtime_a_rows = self.a_direct and self.runtime_ld
        if self.runtime_a_rows:
            self.borrowed_offset = round_up(self.workspace_bytes, 64)
            self.workspace_bytes = self.borrowed_offset + 16
        # The product transposed: the tile's accumulators spilled, MR rows
        # of NR dwords, to come back a vector of each row at a time.
        self.spill_offset = round_up(self.workspace_bytes, 64)
        if self.c_transposed:
            self.workspace_bytes = self.spill_offset + self.mr * self.nr * 4
        check_disp(self.workspace_bytes, "workspace")
        if not self.runtime_ld:
            eb = self.dt.element_bytes
            for ld, size in ((self.lda, eb), (self.ldb, eb), (self.ldc, 4),
                             (self.ldd or 0, 2)):
                check_disp(ld * size * max(self.m, self.k), "row")

    def symbol(self):
        # (C's problem, whichever product computes it.)
        m, n, lda, ldb = self.c_problem
        lds = "_ldrt" if self.runtime_ld else (
            f"_lda{lda}_ldb{ldb}_ldc{self.ldc}"
            + (f"_ldd{self.ldd}" if self.half_output else ""))
        fault = "" if self.fault is None else "_fault_" + self.fault.replace(
            "-", "_")
        trans = "nt" if self.c_transposed else (
            ("t" if self.trans_a else "n") + ("t" if self.trans_b else "n"))
        kind = self.dt.kind if self.dt.kind != "igemm" else \
            f"{self.dt.name}gemm"
        # The store: overwrite, the epilogue, a 16-bit D, the leading
        # dimensions.
        bias = ({"rows": "columns"}.get(self.bias, self.bias)
                if self.c_transposed else self.bias)
        store = (f"{'_b0' if self.overwrite else ''}"
                 f"{'_bias' if bias == 'columns' else ''}"
                 f"{'_biasrows' if bias == 'rows' else ''}"
                 f"{activation_suffix(self)}"
                 f"{'_o' + self.dt.name if self.half_output else ''}{lds}")
        head = (f"qm_{kind}_{m}x{n}x{self.k}_{trans}"
                f"{'_mrt' if self.dynamic_m else ''}"
                f"{'_nrt' if self.dynamic_n else ''}")
        tail = (f"{'_par' if self.parallel else ''}{fault}"
                f"_x86_64_{self.dt.suffix}")
        if self.b_stream:
            return (f"{head}{store}_brows{STREAM_COLUMNS}x"
                    f"{self.stream_rows}"
                    f"{f'_kc{self.kc}' if self.kc < self.k else ''}{tail}")
        if self.gemv:
            rows = gemv_a_rows(self)
            return (f"{head}{store}_gemv{GEMV_ROWS}"
                    f"{'x3' if rows == 3 else ''}{tail}")
        return (f"{head}{'_krt' if self.dynamic_k else ''}"
                f"{'_adirect' if self.a_direct else ''}"
                f"{'_bpre' if self.b_prepacked else ''}{store}"
                f"{'_ct' if self.c_transposed else ''}"
                f"_{self.mr}x{self.nr}_ku{self.k_unroll}"
                f"_kc{self.kc}_mc{self.mc}_nc{self.nc}{tail}")


class _FeatureRow:
    """What check_target_features needs of an ISA row."""

    def __init__(self, dt):
        self.name = f"avx512 ({dt.dot.upper()})"
        self.features = dt.features


def _lane_masks(asm, p, lanes_left, vectors, width):
    """k1..k<vectors>: the lanes of each 16-lane vector of a sliver `width`
    lanes wide that lie before the edge, from `lanes_left` (a 32-bit
    register, >= 1): min(lanes_left, width) - 16 v, clamped to [0, 16]
    (BZHI reads only its index's low byte). Clobbers %eax, %edx."""
    for v in range(vectors):
        asm.ins(f"movl {lanes_left}, %eax")
        asm.ins(f"movl ${width}, %edx")
        asm.ins("cmpl %edx, %eax")
        asm.ins("cmovgl %edx, %eax")
        if v:
            asm.ins(f"subl ${LANES * v}, %eax")
        asm.ins("xorl %edx, %edx")
        asm.ins("testl %eax, %eax")
        asm.ins("cmovsl %edx, %eax")
        asm.ins(f"movl ${LANES}, %edx")
        asm.ins("cmpl %edx, %eax")
        asm.ins("cmovgl %edx, %eax")
        asm.ins("movl $-1, %edx")
        asm.ins("bzhil %eax, %edx, %edx")
        asm.ins(f"kmovw %edx, %k{v + 1}")


class Operand:
    """One operand's packing: its slivers are `lanes` wide (MR rows of A,
    NR columns of B), each group of k holding `lanes` dwords. `k_major`:
    the operand as stored has k along its rows (B, or A transposed), so
    a group of rows interleaves into a group of k per lane; otherwise each
    lane is a row of it with k along the row (A, or B transposed), its
    groups consecutive dwords. `shifted`: an s8 A, packed plus 128."""

    def __init__(self, name, lanes, base_slot, ld_slot, dst_offset,
                 sliver_bytes, block, count, k_major, shifted):
        self.name, self.lanes = name, lanes
        self.base_slot, self.ld_slot = base_slot, ld_slot
        self.dst_offset, self.sliver_bytes = dst_offset, sliver_bytes
        self.block, self.count, self.k_major = block, count, k_major
        self.shifted = shifted

    @property
    def step(self):
        """Bytes of one group of k in a packed sliver."""
        return self.lanes * 4

    @property
    def vectors(self):
        return -(-self.lanes // LANES)

    @property
    def partial_lanes(self):
        """Lanes of the last vector when it is not whole, else 0."""
        return self.lanes % LANES


def _operands(p):
    a = Operand("A", p.mr, 0, LD_BYTES_OFFSET, AP_OFFSET, p.a_sliver, IC,
                MB, p.trans_a, p.dt.shift_a and not p.shift_b)
    b = Operand("B", p.nr, 8, LD_BYTES_OFFSET + 8, p.bp_offset, p.b_sliver,
                JC, NB, not p.trans_b, p.shift_b)
    return a, b


def _emit_sign_bias(asm, reg=29):
    """zmm`reg` (zmm29 unless given) = 0x80 in every byte: what flips an s8
    operand's sign bits (plus 128), and the u8 128 that row and column sums
    multiply by."""
    asm.ins("movl $0x80808080, %eax")
    asm.ins(f"vpbroadcastd %eax, %zmm{reg}")


def emit_sum_s32_lanes(asm, s, t):
    """The 16 s32 lanes of zmm`s` summed into every lane of xmm`s` (`t` a
    free register): the halves added down to 128 bits, then two VPSHUFD
    rounds. (VEXTRACTI128 has no EVEX form: VEXTRACTI32X4 for zmm16-31.)"""
    asm.ins(f"vextracti64x4 $1, %zmm{s}, %ymm{t}")
    asm.ins(f"vpaddd %ymm{t}, %ymm{s}, %ymm{s}")
    extract = "vextracti128" if max(s, t) < 16 else "vextracti32x4"
    asm.ins(f"{extract} $1, %ymm{s}, %xmm{t}")
    asm.ins(f"vpaddd %xmm{t}, %xmm{s}, %xmm{s}")
    for imm in ("0x4e", "0xb1"):
        asm.ins(f"vpshufd ${imm}, %xmm{s}, %xmm{t}")
        asm.ins(f"vpaddd %xmm{t}, %xmm{s}, %xmm{s}")


def _emit_block_counts(asm, p):
    """The counts of this kc block (kb in %r11) into the header slots:
    whole groups, the k of a partial last group (only the last block's,
    K % group, is ever non-zero: kc is whole groups), the zero groups that
    pad to a multiple of the K unroll, and the K loop's iterations."""
    g = p.dt.group
    if p.runs_padded:
        # Every block alike (kc divides K): a run's whole groups and the k
        # of its partial one; the zero groups after the block's runs.
        run_groups = p.run_k // g + 1
        asm.comment(f"counts of a kc block of {p.k_runs} runs of {p.run_k} "
                    "k (per run: whole groups, the partial group's k)")
        for slot, value in ((GROUPS, p.run_k // g), (REM, p.run_k % g),
                            (PAD_GROUPS,
                             p.kc_groups - p.k_runs * run_groups),
                            (ITERATIONS, p.kc_groups // p.k_unroll)):
            asm.ins(f"movq ${value}, {slot}({WS})")
        return
    shift = g.bit_length() - 1
    asm.comment("counts of this kc block")
    asm.ins(f"movq {KB}, %rax")
    asm.ins(f"shrq ${shift}, %rax")
    asm.ins(f"movq %rax, {GROUPS}({WS})")
    asm.ins(f"movq {KB}, %rdx")
    asm.ins(f"andq ${g - 1}, %rdx")
    asm.ins(f"movq %rdx, {REM}({WS})")
    asm.ins(f"leaq {g - 1}({KB}), %rdx")
    asm.ins(f"shrq ${shift}, %rdx")                  # ceil(kb / group)
    ku = p.k_unroll
    asm.ins(f"leaq {ku - 1}(%rdx), %rax")
    asm.ins(f"shrq ${ku.bit_length() - 1}, %rax")    # iterations
    asm.ins(f"movq %rax, {ITERATIONS}({WS})")
    asm.ins(f"shlq ${ku.bit_length() - 1}, %rax")    # padded pairs
    asm.ins("subq %rdx, %rax")
    asm.ins(f"movq %rax, {PAD_GROUPS}({WS})")


def _emit_pack_k_major(asm, p, op):
    """Each sliver of an operand stored with k along its rows, per group of
    k `lanes` dwords (X(k, l), X(k+1, l), ..): bf16, two rows of 16 lanes
    interleaved by VPERMT2W; bytes, four rows of 16 lanes by byte then
    word unpacks. Lanes past the block's edge are zero (masked loads), a
    sliver narrower than a vector is stored under a mask (k7); an s8 A is
    stored plus 128 (its real bytes' sign bits flipped)."""
    name = op.name
    sliver = asm.label(f"PACK {name}: next sliver")
    pairs = asm.label(f"PACK {name}: next pair of rows")
    odd = asm.label(f"PACK {name}: the last half pair")
    pad = asm.label(f"PACK {name}: zero pairs")
    pad_loop = asm.label(f"PACK {name}: next zero pair")
    done = asm.label(f"PACK {name}: sliver done")
    step, shifted = op.step, op.shifted
    g, eb = p.dt.group, p.dt.element_bytes
    asm.comment(f"PACK {name} (k along its rows)")
    if _drops_low(p, op):
        _emit_drop_low_mask(asm, PACK_DROP_LOW_REG)
    if g == 2:
        asm.ins(f"vmovdqu64 {INDEX_OFFSET}({WS}), %zmm31")
    asm.ins("vpxord %zmm30, %zmm30, %zmm30")
    if shifted:
        _emit_sign_bias(asm)
    if op.partial_lanes:
        asm.ins(f"movl ${(1 << op.partial_lanes) - 1}, %eax")
        asm.ins("kmovw %eax, %k7")

    def store(src, v, where):
        last = op.partial_lanes and v == op.vectors - 1
        mask = "{%k7}" if last else ""
        asm.ins(f"vmovdqu32 {src}, {64 * v}({where}){mask}")

    asm.ins(f"leaq {op.dst_offset}({WS}), %rdi")
    asm.ins(f"xorl {JR}d, {JR}d")
    asm.place(sliver)
    asm.ins(f"movl {op.count}d, %ecx")
    asm.ins(f"subl {JR}d, %ecx")
    _lane_masks(asm, p, "%ecx", op.vectors, op.lanes)
    asm.comment(f"source: {name} + pc * ld + (block + lane) * {eb}")
    asm.ins(f"movq {PC}, %rsi")
    asm.ins(f"imulq {op.ld_slot}({WS}), %rsi")
    asm.ins(f"leaq ({op.block}, {JR}), %rax")
    asm.ins(f"leaq (%rsi, %rax, {eb}), %rsi")
    asm.ins(f"addq {op.base_slot}({WS}), %rsi")
    asm.ins(f"movq {op.ld_slot}({WS}), %rcx")
    if g == 4:
        asm.ins(f"leaq (%rcx, %rcx, 2), {IR}")      # three rows
    asm.ins("movq %rdi, %rdx")

    def partial(rem):
        asm.comment(f"the last {rem} k of K, the rest of the group zero")
        for v in range(op.vectors):
            _emit_k_major_group(asm, p, v, g, rem, shifted)
            store("%zmm0", v, "%rdx")
        asm.ins(f"addq ${step}, %rdx")

    # A block of runs each padded to whole groups (runs_padded): each
    # run's whole groups, its partial group, then the source on past the
    # run's last rows to the next run's first.
    for run in range(p.k_runs if p.runs_padded else 1):
        if run:
            pairs = asm.label(f"PACK {name}: next pair of rows, run {run}")
            odd = asm.label(f"PACK {name}: the last half pair, run {run}")
        asm.ins(f"movq {GROUPS}({WS}), %rax")
        asm.ins("testq %rax, %rax")
        asm.ins(f"jz {fwd(odd)}")
        asm.place(pairs)
        for v in range(op.vectors):
            _emit_k_major_group(asm, p, v, g, g, shifted, _drops_low(p, op))
            store("%zmm0", v, "%rdx")
        asm.ins(f"leaq (%rsi, %rcx, {g}), %rsi")
        asm.ins(f"addq ${step}, %rdx")
        asm.ins("decq %rax")
        asm.ins(f"jnz {back(pairs)}")
        asm.place(odd)
        if not p.runs_padded:
            _emit_partial_group(asm, p, pad, partial)
            break
        partial(p.a_tail)
        asm.ins(f"addq {IR}, %rsi" if p.a_tail == 3 else
                f"leaq (%rsi, %rcx, {p.a_tail}), %rsi")
    asm.place(pad)
    asm.ins(f"movq {PAD_GROUPS}({WS}), %rax")
    asm.ins("testq %rax, %rax")
    asm.ins(f"jz {fwd(done)}")
    asm.place(pad_loop)
    for v in range(op.vectors):
        store("%zmm30", v, "%rdx")
    asm.ins(f"addq ${step}, %rdx")
    asm.ins("decq %rax")
    asm.ins(f"jnz {back(pad_loop)}")
    asm.place(done)
    if p.fault == "drop-k" and name == "A":
        asm.comment("fault drop-k: the sliver's first pair zeroed")
        for v in range(op.vectors):
            store("%zmm30", v, "%rdi")
    asm.ins(f"addq ${op.sliver_bytes}, %rdi")
    asm.ins(f"addq ${op.lanes}, {JR}")
    asm.ins(f"cmpq {op.count}, {JR}")
    asm.ins(f"jb {back(sliver)}")


def _emit_partial_group(asm, p, after, body):
    """A block's last, partial group (REM k of it, the rest zero), then
    `after`: body(r) packs it for r k. With one count possible (a static
    K, or bf16's one k of a pair) the group is packed when REM is not
    zero; with a run-time K, bytes' group for the count REM holds."""
    counts = p.partial_group_ks
    if len(counts) == 1:
        asm.ins(f"cmpq $0, {REM}({WS})")
        asm.ins(f"je {fwd(after)}")
        body(counts[0])
        return
    for rem in counts:
        other = asm.label(f"the last group has not {rem} k")
        asm.ins(f"cmpq ${rem}, {REM}({WS})")
        asm.ins(f"jne {fwd(other)}")
        body(rem)
        asm.ins(f"jmp {fwd(after)}")
        asm.place(other)


def _emit_k_major_group(asm, p, v, g, rows, shifted, drop_low=False):
    """zmm0 = vector v's 16 lanes of one group of k from `rows` rows at
    %rsi, %rsi + %rcx, .. (three rows at %rsi + IR); rows past `rows` are
    zero; f16's one k widened to f32 (cut to bf16's bits with
    `drop_low`). Lanes masked by k<v+1>."""
    mask = f"{{%k{v + 1}}}"
    if g <= 2:
        asm.ins(f"vmovdqu16 {32 * v}(%rsi), %ymm0{mask}{{z}}")
        if rows > 1:
            asm.ins(f"vmovdqu16 {32 * v}(%rsi, %rcx), %ymm1{mask}{{z}}")
        _emit_group_interleave(asm, p, g, rows, drop_low)
        return
    srcs = ["(%rsi)", "(%rsi, %rcx)", "(%rsi, %rcx, 2)", f"(%rsi, {IR})"]
    for r in range(4):
        if r < rows:
            asm.ins(f"vmovdqu8 {16 * v}{srcs[r]}, %xmm{r}{mask}{{z}}")
            if shifted:
                asm.ins(f"vpxord %xmm29, %xmm{r}, %xmm{r}{mask}")
        else:
            asm.ins(f"vpxord %xmm{r}, %xmm{r}, %xmm{r}")
    _emit_group_interleave(asm, p, g, rows)


def _drops_low(p, op):
    """Whether fault drop-low cuts this pack's elements: f16's PACK B."""
    return p.fault == "drop-low" and op.name == "B"


# Fault drop-low's mask register in the packs (the in-place forms have
# their own: GemvRegisters.drop_low, STREAM_DROP_LOW_REG).
PACK_DROP_LOW_REG = 28


def _emit_drop_low_mask(asm, mask_reg, what="B's widened f16"):
    """Fault drop-low: 0xffff0000 in every lane of zmm<mask_reg>."""
    asm.comment(f"fault drop-low: {what} cut to bf16's 8 bits")
    asm.ins("movl $0xffff0000, %eax")
    asm.ins(f"vpbroadcastd %eax, %zmm{mask_reg}")


def _emit_drop_low(asm, reg, active, mask_reg=PACK_DROP_LOW_REG):
    """With `active` (fault drop-low), reg's f32 lanes cut to their upper
    16 bits by the mask in (x|y|z)mm<mask_reg>, as wide as reg."""
    if active:
        asm.ins(f"vpandd {reg[:4]}{mask_reg}, {reg}, {reg}")


def _emit_group_interleave(asm, p, g, rows, drop_low=False):
    """zmm0 = the 16 dwords of one group of k from its rows' 16 lanes: f16,
    row 0's words in ymm0 widened to f32 (cut to bf16's bits with
    `drop_low`); bf16 rows 0 and 1 in ymm0 and ymm1 (one row: zmm30's
    zeros for the second), by VPERMT2W with the index in zmm31; bytes,
    rows 0-3 in xmm0-3 (zero past `rows`), by byte then word unpacks."""
    if g == 1:
        asm.ins("vcvtph2ps %ymm0, %zmm0")
        _emit_drop_low(asm, "%zmm0", drop_low)
        return
    if g == 2:
        second = "%zmm1" if rows > 1 else "%zmm30"
        asm.ins(f"vpermt2w {second}, %zmm31, %zmm0")
        return
    first, second = ("%xmm1", "%xmm0") if p.fault == "swap-pairs" else \
        ("%xmm0", "%xmm1")
    asm.ins(f"vpunpcklbw {second}, {first}, %xmm4")   # rows 0, 1: lanes 0-7
    asm.ins(f"vpunpckhbw {second}, {first}, %xmm5")   # lanes 8-15
    asm.ins("vpunpcklbw %xmm3, %xmm2, %xmm6")          # rows 2, 3
    asm.ins("vpunpckhbw %xmm3, %xmm2, %xmm7")
    asm.ins("vpunpcklwd %xmm6, %xmm4, %xmm0")          # lanes 0-3
    asm.ins("vpunpckhwd %xmm6, %xmm4, %xmm1")          # lanes 4-7
    asm.ins("vpunpcklwd %xmm7, %xmm5, %xmm2")          # lanes 8-11
    asm.ins("vpunpckhwd %xmm7, %xmm5, %xmm3")          # lanes 12-15
    for q in range(1, 4):
        asm.ins(f"vinserti32x4 ${q}, %xmm{q}, %zmm0, %zmm0")


def _emit_pack_lane_major(asm, p, op):
    """Each sliver of an operand stored with its lanes as rows (A, or B
    transposed), per group of k `lanes` dwords (X(l,k), X(l,k+1), ..);
    lanes past the block's edge zero. With `lanes` a multiple of 8, a
    sliver of whole rows first has its groups copied 8 at a time by 8 x 8
    dword transposes (a group is a dword: rows of 8 groups in, 8 groups of
    8 rows out); then one row at a time, from the first group not copied:
    its groups are consecutive dwords, `lanes` dwords apart in the
    sliver."""
    name = op.name
    row = asm.label(f"PACK {name}: next row")
    pairs = asm.label(f"PACK {name}: next pair")
    odd = asm.label(f"PACK {name}: the last half pair")
    pad = asm.label(f"PACK {name}: zero pairs")
    pad_loop = asm.label(f"PACK {name}: next zero pair")
    zero_rows = asm.label(f"PACK {name}: rows past the edge")
    zero_loop = asm.label(f"PACK {name}: next zero dword")
    pad_done = asm.label(f"PACK {name}: row copied")
    next_row = asm.label(f"PACK {name}: row done")
    done = asm.label(f"PACK {name}: done")
    step, shifted = op.step, op.shifted
    g, eb = p.dt.group, p.dt.element_bytes
    asm.comment(f"PACK {name} (lanes along its rows)")
    if _drops_low(p, op):
        _emit_drop_low_mask(asm, PACK_DROP_LOW_REG)
    if shifted:
        _emit_sign_bias(asm)
    if g == 4 and len(p.partial_group_ks) == 1:
        rem, = p.partial_group_ks
        asm.ins(f"movl ${(1 << rem) - 1}, %eax")
        asm.ins("kmovw %eax, %k6")
    gather = _gather(p, op)
    if gather:
        asm.comment(f"source rows: input + column[pc] + row[block + row] "
                    "(the offset tables)")
        emit_block_input_base(asm, gather, op.base_slot)
    else:
        asm.comment(f"source row: {name} + block * ld + pc * {eb}")
        asm.ins(f"movq {op.block}, %rsi")
        asm.ins(f"imulq {op.ld_slot}({WS}), %rsi")
        asm.ins(f"leaq (%rsi, {PC}, {eb}), %rsi")
        asm.ins(f"addq {op.base_slot}({WS}), %rsi")
    asm.ins(f"leaq {op.dst_offset}({WS}), %rdx")  # this row's first dword
    asm.ins(f"xorl {IR}d, {IR}d")                   # row
    asm.ins(f"xorl {JR}d, {JR}d")                   # row within the sliver
    asm.ins(f"movq $0, {VECTOR_GROUPS}({WS})")
    asm.ins("vpxord %xmm0, %xmm0, %xmm0")
    asm.place(row)
    asm.ins(f"cmpq {op.count}, {IR}")
    asm.ins(f"jae {fwd(zero_rows)}")
    if gather:
        _emit_gathered_row(asm, op, gather)
    row_copy = asm.label(f"PACK {name}: this row's remaining groups")
    if op.lanes % 8 == 0:
        _emit_pack_transposed(asm, p, op, row_copy)
    asm.place(row_copy)
    group_bytes = g * eb
    asm.ins(f"movq {VECTOR_GROUPS}({WS}), %rax")
    asm.ins(f"leaq (%rsi, %rax, {group_bytes}), %rcx")
    asm.ins(f"imulq ${step}, %rax, %rdi")
    asm.ins("addq %rdx, %rdi")
    asm.ins(f"subq {GROUPS}({WS}), %rax")
    asm.ins("negq %rax")
    asm.ins(f"jz {fwd(odd)}")
    asm.place(pairs)
    if g == 1:
        asm.ins("vpinsrw $0, (%rcx), %xmm0, %xmm1")
        asm.ins("vcvtph2ps %xmm1, %xmm1")
        _emit_drop_low(asm, "%xmm1", _drops_low(p, op))
    else:
        asm.ins("vmovd (%rcx), %xmm1")
    if shifted:
        asm.ins("vpxord %xmm29, %xmm1, %xmm1")
    asm.ins("vmovd %xmm1, (%rdi)")
    asm.ins(f"addq ${group_bytes}, %rcx")
    asm.ins(f"addq ${step}, %rdi")
    asm.ins("decq %rax")
    asm.ins(f"jnz {back(pairs)}")
    asm.place(odd)

    def partial(rem):
        asm.comment(f"the last {rem} k of K, the rest of the group zero")
        if g == 4 and len(p.partial_group_ks) > 1:
            asm.ins(f"movl ${(1 << rem) - 1}, %eax")
            asm.ins("kmovw %eax, %k6")
        if g == 2:
            asm.ins("vpinsrw $0, (%rcx), %xmm0, %xmm1")
        else:
            asm.ins("vmovdqu8 (%rcx), %xmm1{%k6}{z}")
            if shifted:
                asm.ins("vpxord %xmm29, %xmm1, %xmm1{%k6}")
        asm.ins("vmovd %xmm1, (%rdi)")
        asm.ins(f"addq ${step}, %rdi")

    _emit_partial_group(asm, p, pad, partial)
    asm.place(pad)
    asm.ins(f"movq {PAD_GROUPS}({WS}), %rax")
    asm.ins("testq %rax, %rax")
    asm.ins(f"jz {fwd(pad_done)}")
    asm.place(pad_loop)
    asm.ins("movl $0, (%rdi)")
    asm.ins(f"addq ${step}, %rdi")
    asm.ins("decq %rax")
    asm.ins(f"jnz {back(pad_loop)}")
    asm.place(pad_done)
    if p.fault == "drop-k" and name == "A":
        asm.comment("fault drop-k: the first pair of the row zeroed")
        asm.ins("movl $0, (%rdx)")
    asm.ins(f"jmp {fwd(next_row)}")
    asm.place(zero_rows)
    asm.ins("movq %rdx, %rdi")
    asm.ins(f"movq {ITERATIONS}({WS}), %rax")
    asm.ins(f"imulq ${p.k_unroll}, %rax")
    asm.place(zero_loop)
    asm.ins("movl $0, (%rdi)")
    asm.ins(f"addq ${step}, %rdi")
    asm.ins("decq %rax")
    asm.ins(f"jnz {back(zero_loop)}")
    asm.place(next_row)
    if not gather:
        asm.ins(f"addq {op.ld_slot}({WS}), %rsi")
    asm.ins("addq $4, %rdx")
    asm.ins(f"incq {JR}")
    asm.ins(f"cmpq ${op.lanes}, {JR}")
    asm.ins(f"jb {fwd(done)}")
    asm.comment("the sliver is full: the next one")
    asm.ins(f"xorl {JR}d, {JR}d")
    asm.ins(f"addq ${op.sliver_bytes - op.lanes * 4}, %rdx")
    asm.place(done)
    asm.comment("rows up to the edge, then zero rows while the last sliver "
                "is not full")
    asm.ins(f"incq {IR}")
    asm.ins(f"cmpq {op.count}, {IR}")
    asm.ins(f"jb {back(row)}")
    asm.ins(f"testq {JR}, {JR}")
    asm.ins(f"jnz {back(row)}")


def _emit_pack_transposed(asm, p, op, row_copy):
    """At the first row of a sliver (JR = 0) whose rows all lie before the
    edge: its first groups / 8 * 8 groups, 8 at a time, by transposes
    (ymm0-15, and xmm0 zeroed again after); their count into VECTOR_GROUPS,
    0 for any other sliver. %rsi is the sliver's first row, %rdx its packed
    base; JR serves as the source pointer and is 0 again after."""
    chunk = asm.label(f"PACK {op.name}: next 8 pairs of the sliver, "
                      "transposed")
    none = asm.label(f"PACK {op.name}: no transposed pairs in this sliver")
    asm.ins(f"testq {JR}, {JR}")
    asm.ins(f"jnz {fwd(row_copy)}")
    asm.ins(f"movq $0, {VECTOR_GROUPS}({WS})")
    asm.ins(f"leaq {op.lanes}({IR}), %rax")
    asm.ins(f"cmpq {op.count}, %rax")
    asm.ins(f"ja {fwd(row_copy)}")
    asm.ins(f"movq {GROUPS}({WS}), %rax")
    asm.ins("shrq $3, %rax")
    asm.ins(f"jz {fwd(none)}")
    gather = _gather(p, op)
    if gather:
        asm.comment("JR: input + column[pc] + 32 per chunk; %rsi: the "
                    "sliver's first row's index into the row table")
        asm.ins(f"movq {gather.base_slot}({WS}), {JR}")
        asm.ins(f"leaq ({op.block}, {IR}), %rsi")
    else:
        asm.ins(f"movq %rsi, {JR}")
    asm.ins("movq %rdx, %rdi")

    def load(i):
        """ymm i = 8 groups of the row at (%rcx): f16 widened."""
        if p.dt.group == 1:
            asm.ins(f"vcvtph2ps (%rcx), %ymm{i}")
            _emit_drop_low(asm, f"%ymm{i}", _drops_low(p, op))
        else:
            asm.ins(f"vmovdqu (%rcx), %ymm{i}")
        if op.shifted:
            asm.ins(f"vpxord %ymm29, %ymm{i}, %ymm{i}")
    asm.place(chunk)
    for g in range(op.lanes // 8):
        if gather:
            for i in range(8):
                asm.ins(f"movq {JR}, %rcx")
                asm.ins(f"addq {gather.row_table + 8 * (8 * g + i)}({WS}, "
                        "%rsi, 8), %rcx")
                load(i)
            emit_transpose_8x8(asm)
            for j in range(8):
                asm.ins(f"vmovdqu %ymm{8 + j}, "
                        f"{j * op.lanes * 4 + g * 32}(%rdi)")
            continue
        asm.ins(f"movq {JR}, %rcx")
        if g:
            asm.ins(f"movq {op.ld_slot}({WS}), %rsi")
            asm.ins(f"imulq ${8 * g}, %rsi")
            asm.ins("addq %rsi, %rcx")
        for i in range(8):
            load(i)
            if i < 7:
                asm.ins(f"addq {op.ld_slot}({WS}), %rcx")
        emit_transpose_8x8(asm)
        for j in range(8):
            asm.ins(f"vmovdqu %ymm{8 + j}, {j * op.lanes * 4 + g * 32}(%rdi)")
    asm.ins(f"addq ${8 * p.dt.group * p.dt.element_bytes}, {JR}")
    asm.ins(f"addq ${8 * op.lanes * 4}, %rdi")
    asm.ins("decq %rax")
    asm.ins(f"jnz {back(chunk)}")
    asm.comment("restore the row pointer and the row counter")
    if gather:
        _emit_gathered_row(asm, op, gather)
    else:
        asm.ins(f"movq {op.block}, %rsi")
        asm.ins(f"addq {IR}, %rsi")
        asm.ins(f"imulq {op.ld_slot}({WS}), %rsi")
        asm.ins(f"leaq (%rsi, {PC}, {p.dt.element_bytes}), %rsi")
        asm.ins(f"addq {op.base_slot}({WS}), %rsi")
    asm.ins(f"xorl {JR}d, {JR}d")
    asm.ins(f"movq {GROUPS}({WS}), %rax")
    asm.ins("andq $-8, %rax")
    asm.ins(f"movq %rax, {VECTOR_GROUPS}({WS})")
    asm.ins("vpxord %xmm0, %xmm0, %xmm0")
    asm.place(none)


def _emit_pack_gathered_b(asm, p, op, conv):
    """PACK B of an nchw convolution (dotconv.py), whose B(k, j) lies at
    input + column[k] + row[j] (the offset tables), into the layout of
    _emit_pack_k_major: per NR-pixel sliver, per group of k NR dwords.

    Per sliver, first its pieces (conv2d.emit_piece_table, as f32's): for
    each 16-lane vector, the runs of its lanes whose pixels are consecutive
    elements of the input (one output row at a unit width stride; one lane
    each otherwise), each a pointer and a lane mask (conv.piece_table). A
    sliver of consecutive pixels throughout skips them: plain moves from
    input + row[first] + column[k]. Otherwise per group of k, per vector,
    each piece's lanes of each k row load in one masked move from pointer +
    column[k] into the row's register (masked lanes are not read), and the
    rows interleave as _emit_k_major_group's do. At a width
    stride of 2 a piece's pixels are every other element: its move loads
    the even elements of twice its lanes (a second mask, at 12 of the
    entry) and VPMOVDW (bf16) or VPMOVWB (bytes) keeps them."""
    sliver = asm.label("PACK B gathered: next sliver")
    pad = asm.label("PACK B gathered: zero groups")
    pad_loop = asm.label("PACK B gathered: next zero group")
    done = asm.label("PACK B gathered: sliver done")
    g, eb, step = p.dt.group, p.dt.element_bytes, op.step
    rem = p.partial_group_k
    valid, kend = f"{conv.valid_slot}({WS})", f"{conv.kend_slot}({WS})"
    base = f"{conv.sliver_slot}({WS})"
    table = conv.piece_table
    # A piece's lanes step this far through the input: one element, or
    # two (compress) at a width stride of 2.
    compress = conv.row_step == 2 * eb
    lane_bytes = conv.row_step if compress else eb
    asm.comment("PACK B gathered from the input: k through the column "
                "table, pixels through the row table, a piece at a time")
    if g == 2:
        asm.ins(f"vmovdqu64 {INDEX_OFFSET}({WS}), %zmm31")
    drop_low = _drops_low(p, op)
    if drop_low:
        _emit_drop_low_mask(asm, PACK_DROP_LOW_REG)
    asm.ins("vpxord %zmm30, %zmm30, %zmm30")
    if op.shifted:
        # (An s8 A in place: a partial group's missing k are zero in A,
        # loaded under a mask, so B's 128 there adds nothing, and the K
        # loop reads no zero group.)
        _emit_sign_bias(asm)
    asm.ins(f"leaq {op.dst_offset}({WS}), %rdi")
    asm.ins(f"xorl {JR}d, {JR}d")
    asm.place(sliver)
    asm.ins(f"movq %rdi, {base}")
    asm.comment("pixels of the sliver before the edge -> valid; %r12 = "
                "&row[jc + jr]")
    asm.ins(f"movq {NB}, %rax")
    asm.ins(f"subq {JR}, %rax")
    asm.ins(f"movl ${op.lanes}, %edx")
    asm.ins("cmpq %rdx, %rax")
    asm.ins("cmovaq %rdx, %rax")
    asm.ins(f"movq %rax, {valid}")
    asm.ins(f"leaq ({JC}, {JR}), %rdx")
    asm.ins(f"leaq {conv.row_table}({WS}, %rdx, 8), %r12")
    whole = asm.label("PACK B gathered: a whole sliver of consecutive "
                      "elements")
    if conv.row_step == eb:
        pieces = asm.label("PACK B gathered: the sliver's pieces")
        asm.ins(f"cmpq ${op.lanes}, %rax")
        asm.ins(f"jb {fwd(pieces)}")
        asm.ins(f"movq {(op.lanes - 1) * 8}(%r12), %rax")
        asm.ins("subq (%r12), %rax")
        asm.ins(f"cmpq ${(op.lanes - 1) * eb}, %rax")
        asm.ins(f"je {fwd(whole)}")
        asm.place(pieces)
    emit_piece_table(asm, "PACK B gathered", table, op.vectors, LANES, valid,
                     8, lane_bytes, compress)

    def start_groups():
        asm.comment("%rsi = &column[pc], kend = the end of its whole groups, "
                    "%rdx = the sliver's first group")
        asm.ins(f"leaq {conv.col_table}({WS}, {PC}, 8), %rsi")
        asm.ins(f"imulq ${g * 8}, {GROUPS}({WS}), %rdx")
        asm.ins("addq %rsi, %rdx")
        asm.ins(f"movq %rdx, {kend}")
        asm.ins(f"movq {base}, %rdx")

    start_groups()
    index = ["%rcx", "%r12", "%r13", "%r15"]

    def whole_group(rows):
        """A group of a whole sliver of consecutive elements from %rax:
        unmasked moves."""
        for r in range(rows):
            asm.ins(f"movq {8 * r}(%rsi), {index[r]}")
        for v in range(op.vectors):
            for r in range(g):
                if r >= rows:
                    asm.ins(f"vpxord %xmm{r}, %xmm{r}, %xmm{r}")
                elif eb == 2:
                    asm.ins(f"vmovdqu16 {32 * v}(%rax, {index[r]}), %ymm{r}")
                else:
                    asm.ins(f"vmovdqu8 {16 * v}(%rax, {index[r]}), %xmm{r}")
            _emit_group_interleave(asm, p, g, rows, drop_low)
            if op.shifted:
                asm.ins("vpxord %zmm29, %zmm0, %zmm0")   # plus 128
            asm.ins(f"vmovdqu32 %zmm0, {64 * v}(%rdx)")

    def group(rows):
        for r in range(rows):
            asm.ins(f"movq {8 * r}(%rsi), {index[r]}")
        for v in range(op.vectors):
            piece = asm.label(f"PACK B gathered: {rows} k, vector {v}'s "
                              "next piece")
            loaded = asm.label(f"PACK B gathered: {rows} k, vector {v} "
                               "loaded")
            for r in range(g):
                reg = f"%ymm{r}" if eb == 2 else f"%xmm{r}"
                asm.ins(f"vpxord {reg}, {reg}, {reg}")
            asm.ins(f"leaq {table + v * PIECES_STEP}({WS}), %rdi")
            asm.place(piece)
            asm.ins("kmovw 8(%rdi), %k6")
            asm.ins("kortestw %k6, %k6")
            asm.ins(f"jz {fwd(loaded)}")
            asm.ins("movq (%rdi), %rax")
            if compress:
                asm.ins("kmovd 12(%rdi), %k5")
            for r in range(rows):
                if compress and eb == 2:
                    asm.ins(f"vmovdqu16 (%rax, {index[r]}), %zmm4{{%k5}}{{z}}")
                    asm.ins(f"vpmovdw %zmm4, %ymm{r}{{%k6}}")
                elif compress:
                    asm.ins(f"vmovdqu8 (%rax, {index[r]}), %ymm4{{%k5}}{{z}}")
                    asm.ins(f"vpmovwb %ymm4, %xmm{r}{{%k6}}")
                elif eb == 2:
                    asm.ins(f"vmovdqu16 (%rax, {index[r]}), %ymm{r}{{%k6}}")
                else:
                    asm.ins(f"vmovdqu8 (%rax, {index[r]}), %xmm{r}{{%k6}}")
            asm.ins(f"addq ${PIECE_BYTES}, %rdi")
            asm.ins(f"jmp {back(piece)}")
            asm.place(loaded)
            _emit_group_interleave(asm, p, g, rows, drop_low)
            if op.shifted:
                asm.ins("vpxord %zmm29, %zmm0, %zmm0")   # plus 128
            asm.ins(f"vmovdqu32 %zmm0, {64 * v}(%rdx)")

    def groups_loop(name, one_group):
        loop = asm.label(f"PACK B gathered: next group{name}")
        last = asm.label(f"PACK B gathered: the last partial group{name}")
        asm.ins(f"cmpq {kend}, %rsi")
        asm.ins(f"jae {fwd(last)}")
        asm.place(loop)
        one_group(g)
        asm.ins(f"addq ${g * 8}, %rsi")
        asm.ins(f"addq ${step}, %rdx")
        asm.ins(f"cmpq {kend}, %rsi")
        asm.ins(f"jb {back(loop)}")
        asm.place(last)
        if rem:
            asm.ins(f"cmpq $0, {REM}({WS})")
            asm.ins(f"je {fwd(pad)}")
            asm.comment(f"the last {rem} k of K, the rest of the group "
                        "zero")
            one_group(rem)
            asm.ins(f"addq ${step}, %rdx")

    groups_loop("", group)
    if conv.row_step == eb:
        asm.ins(f"jmp {fwd(pad)}")
        asm.place(whole)
        asm.comment("a whole sliver of consecutive elements: from "
                    "input + row[jc + jr]")
        start_groups()
        asm.ins("movq (%r12), %rax")
        asm.ins(f"addq 8({WS}), %rax")
        groups_loop(", whole sliver", whole_group)
    asm.place(pad)
    asm.ins(f"movq {PAD_GROUPS}({WS}), %rax")
    asm.ins("testq %rax, %rax")
    asm.ins(f"jz {fwd(done)}")
    asm.place(pad_loop)
    for v in range(op.vectors):
        asm.ins(f"vmovdqu32 %zmm30, {64 * v}(%rdx)")
    asm.ins(f"addq ${step}, %rdx")
    asm.ins("decq %rax")
    asm.ins(f"jnz {back(pad_loop)}")
    asm.place(done)
    asm.ins(f"movq {base}, %rdi")
    asm.ins(f"addq ${op.sliver_bytes}, %rdi")
    asm.ins(f"addq ${op.lanes}, {JR}")
    asm.ins(f"cmpq {NB}, {JR}")
    asm.ins(f"jb {back(sliver)}")


def _gather(p, op):
    """The convolution whose input A's rows are gathered from (dotconv.py),
    or None: B, or a plain GEMM, or an nchw convolution's A (its filter)."""
    return _gathered_a(p) if op.name == "A" else None


def _gathered_a(p):
    """The nhwc convolution whose pixels are A's rows, or None (a GEMM, or
    an nchw convolution: its A is the filter as stored)."""
    return p.conv if p.conv is not None and p.conv.gathers == "A" else None


def _emit_gathered_row(asm, op, gather):
    """%rsi = row (block + IR)'s source: its row-table offset plus the
    block's input + column[pc]. A kc block lies within one run of
    consecutive k (dotconv.py), so the row's groups follow each other."""
    asm.ins(f"leaq ({op.block}, {IR}), %rax")
    asm.ins(f"movq {gather.row_table}({WS}, %rax, 8), %rsi")
    asm.ins(f"addq {gather.base_slot}({WS}), %rsi")


def _emit_b_column_sums(asm, p):
    """s8 A: for each column of the packed B panel, 128 sum_k B(k, j) over
    this kc block (VPDPBUSD of 0x80 bytes by the packed groups; padding
    is zero), into the workspace: what the tiles, whose A is plus 128,
    subtract."""
    sliver = asm.label("COLUMN SUMS: next sliver")
    groups = asm.label("COLUMN SUMS: next group")
    asm.comment("COLUMN SUMS of the packed B, times 128")
    _emit_sign_bias(asm)
    if p.b_prepacked:
        asm.ins(f"movq {B_PANEL}({WS}), %rsi")
    else:
        asm.ins(f"leaq {p.bp_offset}({WS}), %rsi")
    asm.ins(f"leaq {p.corr_offset}({WS}), %rdi")
    asm.ins(f"xorl {JR}d, {JR}d")
    asm.place(sliver)
    for v in range(p.nv):
        asm.ins(f"vpxord %zmm{v}, %zmm{v}, %zmm{v}")
    asm.ins("movq %rsi, %rdx")
    asm.ins(f"movq {ITERATIONS}({WS}), %rax")
    asm.ins(f"imulq ${p.k_unroll}, %rax")
    asm.place(groups)
    for v in range(p.nv):
        asm.ins(f"vpdpbusd {64 * v}(%rdx), %zmm29, %zmm{v}")
    asm.ins(f"addq ${p.nr * 4}, %rdx")
    asm.ins("decq %rax")
    asm.ins(f"jnz {back(groups)}")
    for v in range(p.nv):
        asm.ins(f"vmovdqu32 %zmm{v}, {64 * v}(%rdi)")
    asm.ins(f"addq ${_b_sliver_step(p)}, %rsi")
    asm.ins(f"addq ${p.nr * 4}, %rdi")
    asm.ins(f"addq ${p.nr}, {JR}")
    asm.ins(f"cmpq {NB}, {JR}")
    asm.ins(f"jb {back(sliver)}")


def _b_sliver_step(p):
    """Bytes from one B sliver to the next: the workspace panel's kc
    groups, or all of K's in the caller's prepacked B."""
    return p.nr * (p.k_groups if p.b_prepacked else p.kc_groups) * 4


def _emit_pack(asm, p, op):
    if op.name == "B" and p.conv is not None and p.conv.gathers == "B":
        _emit_pack_gathered_b(asm, p, op, p.conv)
    elif op.k_major:
        _emit_pack_k_major(asm, p, op)
    else:
        _emit_pack_lane_major(asm, p, op)


def _acc(p, i, v):
    return f"%zmm{i * p.nv + v}"


def _b_reg(p, v):
    return f"%zmm{p.mr * p.nv + v}"


def _a_reg(p):
    return f"%zmm{p.mr * p.nv + p.nv}"


def _has_epilogue(p):
    return p.bias != "none" or has_activation(p)


def _bound_reg(p):
    """relu's bound (leaky relu's product): the second B register, free
    once the K loop is done, or the register past A's for a single B
    vector."""
    return _b_reg(p, 1) if p.nv > 1 else f"%zmm{p.mr * p.nv + p.nv + 1}"


def emit_epilogue_setup(asm, p, zero, bound):
    """relu's floor (zero, or relu_min) and its bound broadcast into the
    registers `zero` and `bound`, or leaky relu's slope into `zero`
    (`bound` then takes its products), where the epilogue has them (these
    kernels' and amx.py's)."""
    if p.relu:
        emit_relu_floor(asm, p, zero, f"vpxord {zero}, {zero}, {zero}")
    if p.relu_max is not None:
        asm.ins(f"vbroadcastss {relu_max_address(p)}, {bound}")
    if p.leaky_slope is not None:
        asm.ins(f"vbroadcastss {leaky_slope_address(p)}, {zero}")


def emit_epilogue(asm, p, acc, bias, zero, bound, spare=None):
    """acc = epilogue(acc), as sgemm.py's: + bias (VADDPS's operands, with
    a lane mask where it has one: masked-out lanes are not read; None or
    False: no bias), relu (sgemm.emit_relu) and its bound (min keeping
    NaN), or leaky relu (sgemm.emit_leaky_relu); `zero` (the floor, or
    the slope) and `bound` from emit_epilogue_setup. Or a smooth
    activation (the f32 matrix-vector form's: x86.emit_smooth_activation)
    through `zero`, `bound` and `spare`."""
    if bias:
        asm.ins(f"vaddps {bias}")
    if p.smooth is not None:
        emit_smooth_activation(asm, p, acc, (zero, bound, spare))
        return
    if p.relu:
        emit_relu(asm, p, acc, zero)
    if p.relu_max is not None:
        asm.ins(f"vminps {acc}, {bound}, {acc}")
    if p.leaky_slope is not None:
        emit_leaky_relu(asm, p, acc, zero, bound)


def _emit_epilogue_setup(asm, p):
    """Before the last store of a tile: relu's zero (the first B register)
    and bound, %rax = the bias of the tile's first column (or row)."""
    emit_epilogue_setup(asm, p, _b_reg(p, 0), _bound_reg(p))
    if p.bias != "none":
        first, sliver = (JC, JR) if p.bias == "columns" else (IC, IR)
        asm.ins(f"movq {BIAS_OFFSET}({WS}), %rax")
        asm.ins(f"leaq (%rax, {first}, 4), %rax")
        asm.ins(f"leaq (%rax, {sliver}, 4), %rax")


def _emit_epilogue_vector(asm, p, acc, i, v, mask):
    """acc (row i, vector v) = relu(acc + bias) (emit_epilogue): a bias
    along the columns through the lane mask, along the rows broadcast from
    row i's. A smooth activation's third scratch vector is A's broadcast
    register (C's load, added by then)."""
    bias = (f"{64 * v}(%rax), {acc}, {acc}{mask}" if p.bias == "columns"
            else f"{4 * i}(%rax){{1to16}}, {acc}, {acc}"
            if p.bias == "rows" else None)
    emit_epilogue(asm, p, acc, bias, _b_reg(p, 0), _bound_reg(p),
                  _a_reg(p))


def _emit_compute(asm, p):
    """One MR x NR tile at (ic + ir, jc + jr) over the block's groups, then
    C updated: the accumulators added to C (or stored, for the first block
    of an overwriting kernel), masked past N, up to row mb."""
    # (Labels in the order of the packed form's text, which is kept.)
    k_loops = ([asm.label("K loop: next k_unroll groups, A in place"),
                asm.label("K loop: next k_unroll groups, A copied")]
               if p.a_direct else [asm.label("K loop: next k_unroll pairs")])
    add = asm.label("C += the tile")
    done = asm.label("tile stored")
    if p.a_direct:
        asm.comment("COMPUTE: A sliver (its pointer) -> %rax, B sliver -> "
                    "%rsi")
        asm.ins(f"movq {p.a_pointer_table}({WS}, {IR}, 8), %rax")
    else:
        asm.comment("COMPUTE: packed A sliver -> %rax, B sliver -> %rsi")
        asm.ins(f"imulq ${p.kc_groups * 4}, {IR}, %rax")
        asm.ins(f"leaq {AP_OFFSET}({WS}, %rax), %rax")
    asm.ins(f"imulq ${_b_sliver_step(p) // p.nr}, {JR}, %rsi")
    if p.b_prepacked:
        asm.ins(f"addq {B_PANEL}({WS}), %rsi")
    else:
        asm.ins(f"leaq {p.bp_offset}({WS}, %rsi), %rsi")
    for i in range(p.mr):
        for v in range(p.nv):
            r = _acc(p, i, v)
            asm.ins(f"vpxord {r}, {r}, {r}")
    # With D written from the only kc block and C not read, C is not
    # touched at all.
    only_d = p.half_output and p.k <= p.kc and p.overwrite
    if p.c_transposed:
        # The tile is C^T's: its columns are C's rows.
        asm.comment("C tile: %rdi = C + (jc + jr) * ldc + (ic + ir) * 4"
                    + ("" if only_d else ", C's rows prefetched"))
        emit_c_tile_pointer(asm, p.c_transposed, C_ROW_BYTES)
        if not only_d:
            asm.ins("movq %rdi, %rdx")
            for j in range(p.nr):
                asm.ins("prefetcht0 (%rdx)")
                if j + 1 < p.nr:
                    asm.ins(f"addq {LD_BYTES_OFFSET + 16}({WS}), %rdx")
    else:
        asm.comment("C tile: %rdi = C + (ic + ir) * ldc + (jc + jr) * 4"
                    + ("" if only_d else
                       ", its lines prefetched while the K loop runs"))
        emit_c_tile_pointer(asm, p.c_transposed, C_ROW_BYTES)
    if not only_d and not p.c_transposed:
        asm.ins("movq %rdi, %rdx")
        for i in range(p.mr):
            for v in range(p.nv):
                asm.ins(f"prefetcht0 {64 * v}(%rdx)")
            if i + 1 < p.mr:
                asm.ins(f"addq {LD_BYTES_OFFSET + 16}({WS}), %rdx")
    if p.a_direct:
        # Rows a_row_stride apart where A lies; a copied sliver (the
        # pointer's bit 63: user addresses are below 2^47, and bytes lie
        # at any address) has them kc_groups dwords apart.
        copied = asm.label("K loop of a copied A sliver")
        k_done = asm.label("K loops done")
        asm.ins("btrq $63, %rax")
        asm.ins(f"jc {fwd(copied)}")
        whole = p.run_k // p.dt.group * 4     # bytes a run's loop steps A

        def next_run_in_place(run):
            # The run's offset past the last run's, less what the loop
            # stepped.
            _emit_run_offset(asm, p, run, run - 1, "%rdx")
            asm.ins(f"leaq {-whole}(%rax, %rdx), %rax")

        def next_run_copied(run):
            # Copied runs lie a run's groups apart: its partial one is
            # what the loop did not step.
            if p.a_tail:
                asm.ins("addq $4, %rax")

        if p.runtime_a_rows:
            bases = emit_runtime_a_bases(asm, p.mr,
                                         f"{LD_BYTES_OFFSET}({WS})")
            _emit_k_loop(asm, p, k_loops[0], lambda u, i: "{}({}{})".format(
                4 * u, *runtime_a_row(i)), 4 * p.k_unroll, a_bases=bases)
        else:
            _emit_k_loop(asm, p, k_loops[0],
                         lambda u, i: f"{i * p.a_row_stride + 4 * u}(%rax)",
                         4 * p.k_unroll, next_run_in_place)
        asm.ins(f"jmp {fwd(k_done)}")
        asm.place(copied)
        _emit_k_loop(asm, p, k_loops[1],
                     lambda u, i: f"{i * p.kc_groups * 4 + 4 * u}(%rax)",
                     4 * p.k_unroll, next_run_copied)
        asm.place(k_done)
        if p.runtime_a_rows:
            asm.comment("the registers the K loop borrowed")
            asm.ins(f"movq {p.borrowed_offset}({WS}), {NB}")
            asm.ins(f"movq {p.borrowed_offset + 8}({WS}), {MB}")
            emit_c_tile_pointer(asm, p.c_transposed, C_ROW_BYTES)
    else:
        _emit_k_loop(asm, p, k_loops[0],
                     lambda u, i: f"{(u * p.mr + i) * 4}(%rax)",
                     p.k_unroll * p.mr * 4)

    asm.comment("C update: rows left in %rsi")
    asm.ins(f"movl {NB}d, %ecx")
    asm.ins(f"subl {JR}d, %ecx")
    if p.c_transposed:
        # (The tile's columns before the edge: C's rows to store.)
        asm.ins(f"movq %rcx, {TILE_COLUMNS}({WS})")
    _lane_masks(asm, p, "%ecx", p.nv, p.nr)
    asm.ins(f"movq {MB}, %rsi")
    asm.ins(f"subq {IR}, %rsi")
    if p.fault == "write-past-edge":
        # Every lane and row stored, each accumulator's bits plus one, so
        # that what lands past the edge differs from what was there (a
        # zero lane added to an s32 sentinel would not); the packs read
        # nothing past the operands.
        asm.comment("fault write-past-edge: all lanes, all rows, bits + 1")
        asm.ins(f"movq ${p.mr}, %rsi")
        if p.c_transposed:
            asm.ins(f"movq ${p.nr}, {TILE_COLUMNS}({WS})")
        asm.ins("movl $-1, %eax")
        for v in range(p.nv):
            asm.ins(f"kmovw %eax, %k{v + 1}")
        t = _a_reg(p)
        asm.ins(f"vpternlogd $0xff, {t}, {t}, {t}")
        for i in range(p.mr):
            for v in range(p.nv):
                asm.ins(f"vpsubd {t}, {_acc(p, i, v)}, {_acc(p, i, v)}")
    asm.ins(f"movq {LD_BYTES_OFFSET + 16}({WS}), %rcx")

    def last_store(read_c):
        """The last kc block's store: the epilogue, into C or D."""
        if _has_epilogue(p):
            _emit_epilogue_setup(asm, p)
        _emit_tile_store(asm, p, done, read_c, epilogue=True,
                         to_d=p.half_output)

    special_last = p.half_output or _has_epilogue(p)
    if special_last and p.k <= p.kc:
        last_store(read_c=not p.overwrite)
    else:
        last = asm.label("the last kc block: "
                         + (f"D = {p.dt.name}(" if p.half_output else "C = (")
                         + "C + the tile)"
                         + (" and the epilogue" if _has_epilogue(p) else ""))
        if special_last:
            asm.ins(f"leaq ({PC}, {KB}), %rdx")
            asm.ins(f"cmpq ${p.k}, %rdx")
            asm.ins(f"je {fwd(last)}")
        if p.overwrite:
            asm.ins(f"testq {PC}, {PC}")
            asm.ins(f"jnz {fwd(add)}")
            _emit_tile_store(asm, p, done, read_c=False)
            asm.ins(f"jmp {fwd(done)}")
        asm.place(add)
        _emit_tile_store(asm, p, done, read_c=True)
        if special_last:
            asm.ins(f"jmp {fwd(done)}")
            asm.place(last)
            last_store(read_c=True)
    asm.place(done)


def _emit_k_loop(asm, p, k_loop, a_operand, a_step, next_run=None,
                 a_bases=("%rax",)):
    """The block's K loop (at label k_loop): per K step, k_unroll groups of
    the B sliver (%rsi) against the A sliver (%rax), row i's group u the
    memory operand a_operand(u, i); A then steps a_step bytes (each of
    a_bases), B k_unroll groups. A in place
    from blocks of runs (p.k_runs runs of p.run_k k, or one block ending
    in a partial group): per run, its whole groups (a count of K steps
    that every block shares), then its partial group once (p.a_tail k a
    row, loaded under a mask, the rest zero, and broadcast); between runs
    next_run(run) moves %rax from where the loop left it to the run's
    first k (B's groups follow on)."""
    a = _a_reg(p)

    def dots(i):
        for v in range(p.nv):
            # shift_b: B (plus 128) the unsigned bytes, A the signed.
            signed, unsigned = ((a, _b_reg(p, v)) if p.shift_b else
                                (_b_reg(p, v), a))
            asm.ins(f"{p.dt.dot} {signed}, {unsigned}, {_acc(p, i, v)}")

    def load_b(u):
        for v in range(p.nv):
            asm.ins(f"vmovups {(u * p.nr + v * LANES) * 4}(%rsi), "
                    f"{_b_reg(p, v)}")

    in_runs = p.a_direct and (p.a_tail or p.k_runs > 1)
    if p.a_tail:
        asm.ins(f"movl ${(1 << p.a_tail) - 1}, %ecx")
        asm.ins(f"kmovd %ecx, {A_TAIL_MASK}")
    for run in range(p.k_runs if in_runs else 1):
        if run:
            k_loop = asm.label(f"K loop: next k_unroll groups, run {run}")
            next_run(run)
        if in_runs:
            asm.ins(f"movl ${p.run_k // p.dt.group // p.k_unroll}, %ecx")
        else:
            asm.ins(f"movq {ITERATIONS}({WS}), %rcx")
        asm.ins(".p2align 4")
        asm.place(k_loop)
        for u in range(p.k_unroll):
            load_b(u)
            for i in range(p.mr):
                asm.ins(f"vpbroadcastd {a_operand(u, i)}, {a}")
                dots(i)
        for base in a_bases:
            asm.ins(f"addq ${a_step}, {base}")
        asm.ins(f"addq ${p.k_unroll * p.nr * 4}, %rsi")
        asm.ins("decq %rcx")
        asm.ins(f"jnz {back(k_loop)}")
        if not p.a_tail:
            continue
        asm.comment(f"the run's partial group: {p.a_tail} k a row, the "
                    "rest zero")
        load_b(0)
        move = "vmovdqu16" if p.dt.element_bytes == 2 else "vmovdqu8"
        for i in range(p.mr):
            asm.ins(f"{move} {a_operand(0, i)}, "
                    f"{a.replace('zmm', 'xmm')}{{{A_TAIL_MASK}}}{{z}}")
            asm.ins(f"vpbroadcastd {a.replace('zmm', 'xmm')}, {a}")
            dots(i)
        if run + 1 < p.k_runs:
            asm.ins(f"addq ${p.nr * 4}, %rsi")


def _emit_a_in_place(asm, p):
    """A in place (a_layout "direct"), instead of PACK A: per sliver of
    the block (first row IR), its pointer into the table: where its first
    row's block of k lies when all MR rows lie before the edge
    a_row_stride bytes apart (a convolution's: in one output row, checked
    in its row table), else a copy of its rows into its packed place, kb
    elements each, rows kc_groups dwords apart, zero past the edge, bit
    63 set. No padding is read: K and kc are whole K steps."""
    sliver = asm.label("A in place: next sliver")
    copy = asm.label("A in place: sliver copied")
    row = asm.label("A in place: next row of a copied sliver")
    zero = asm.label("A in place: a row past the edge")
    next_row = asm.label("A in place: row copied")
    done = asm.label("A in place: sliver done")
    eb, conv = p.dt.element_bytes, _gathered_a(p)
    asm.comment(f"A in place: {p.mr}-row slivers where they lie, rows "
                + ("lda" if p.runtime_ld else f"{p.a_row_stride}")
                + " bytes apart; no PACK A")
    if p.runtime_a_rows:
        # The block's columns and rows wait here while the K loops borrow
        # their registers.
        asm.ins(f"movq {NB}, {p.borrowed_offset}({WS})")
        asm.ins(f"movq {MB}, {p.borrowed_offset + 8}({WS})")
    if conv is not None:
        emit_block_input_base(asm, conv)
    asm.ins(f"xorl {IR}d, {IR}d")
    asm.place(sliver)
    _emit_a_row_source(asm, p, "%rsi", 0)
    asm.ins(f"movq {MB}, %rdx")
    asm.ins(f"subq {IR}, %rdx")                       # rows before the edge
    asm.ins(f"cmpq ${p.mr}, %rdx")
    asm.ins(f"jb {fwd(copy)}")
    if conv is not None:
        asm.comment("in one output row: each row a_row_stride past the "
                    "last")
        asm.ins(f"leaq ({IC}, {IR}), %rcx")
        for j in range(1, p.mr):
            asm.ins(f"movq {conv.row_table + 8 * j}({WS}, %rcx, 8), %rax")
            asm.ins(f"subq {conv.row_table + 8 * (j - 1)}({WS}, %rcx, 8), "
                    "%rax")
            asm.ins(f"cmpq ${p.a_row_stride}, %rax")
            asm.ins(f"jne {fwd(copy)}")
    asm.ins(f"movq %rsi, {p.a_pointer_table}({WS}, {IR}, 8)")
    asm.ins(f"jmp {fwd(done)}")
    asm.place(copy)
    asm.comment("copied: kb elements a row, rows kc_groups dwords apart")
    asm.ins(f"imulq ${p.kc_groups * 4}, {IR}, %rax")
    asm.ins(f"leaq {AP_OFFSET}({WS}, %rax), %rax")
    asm.ins("movq %rax, %rcx")
    asm.ins("btsq $63, %rcx")
    asm.ins(f"movq %rcx, {p.a_pointer_table}({WS}, {IR}, 8)")
    asm.ins(f"xorl {JR}d, {JR}d")
    asm.place(row)
    asm.ins(f"imulq ${p.kc_groups * 4}, {JR}, %rdi")
    asm.ins("addq %rax, %rdi")
    run_bytes = p.run_k * eb
    run_groups = -(-p.run_k // p.dt.group)
    if p.k_runs > 1:
        asm.ins(f"movl ${p.k_runs * run_groups * 4}, %ecx")
    else:
        asm.ins(f"leaq ({KB}, {KB}, {eb - 1}), %rcx" if eb == 2 else
                f"movq {KB}, %rcx")                    # kb * eb bytes
    asm.ins(f"leaq ({IR}, {JR}), %rsi")
    asm.ins(f"cmpq {MB}, %rsi")
    asm.ins(f"jae {fwd(zero)}")
    _emit_a_row_source(asm, p, "%rsi", JR)
    for run in range(p.k_runs):
        if run:
            # The next run of the input into the next run's groups.
            _emit_run_offset(asm, p, run, run - 1, "%rdx")
            asm.ins(f"leaq {-run_bytes}(%rsi, %rdx), %rsi")
            if run_groups * 4 != run_bytes:
                asm.ins(f"addq ${run_groups * 4 - run_bytes}, %rdi")
        if p.k_runs > 1:
            asm.ins(f"movl ${run_bytes}, %ecx")
        asm.ins("rep movsb")
    asm.ins(f"jmp {fwd(next_row)}")
    asm.place(zero)
    asm.ins("movq %rax, %rsi")                          # rep stosb takes %al
    asm.ins("xorl %eax, %eax")
    asm.ins("rep stosb")
    asm.ins("movq %rsi, %rax")
    asm.place(next_row)
    asm.ins(f"incq {JR}")
    asm.ins(f"cmpq ${p.mr}, {JR}")
    asm.ins(f"jb {back(row)}")
    asm.place(done)
    if p.fault == "drop-k":
        asm.comment("fault drop-k: the sliver's first group of row 0 read "
                    "from the second")
        asm.ins(f"addq $4, {p.a_pointer_table}({WS}, {IR}, 8)")
    asm.ins(f"addq ${p.mr}, {IR}")
    asm.ins(f"cmpq {MB}, {IR}")
    asm.ins(f"jb {back(sliver)}")


def _emit_a_row_sums(asm, p):
    """shift_b: for each row i of the block (before the edge), 128 sum_k
    A(i, k) over the kc block, read where the row lies: VPDPBUSD of 0x80
    bytes (unsigned 128) by 64 bytes of the row at a time (the last under
    a byte mask), the 16 lanes summed, into the row-correction table."""
    row = asm.label("ROW SUMS: next row of A")
    chunk = asm.label("ROW SUMS: next 64 bytes")
    tail = asm.label("ROW SUMS: the row's last bytes")
    done = asm.label("ROW SUMS: row summed")
    asm.comment("ROW SUMS of A as it lies, times 128 (B is packed plus 128)")
    _emit_sign_bias(asm)
    asm.ins(f"xorl {IR}d, {IR}d")   # rows JR of the block from its first
    asm.ins(f"xorl {JR}d, {JR}d")
    asm.place(row)
    asm.ins(f"cmpq {MB}, {JR}")
    asm.ins(f"jae {fwd(done)}")
    # (A block of runs keeps the row's start in %rdi.)
    _emit_a_row_source(asm, p, "%rdi" if p.k_runs > 1 else "%rsi", JR)
    asm.ins("vpxord %zmm0, %zmm0, %zmm0")
    for run in range(p.k_runs):
        if run:
            # A convolution's run, past the block's first k.
            chunk = asm.label(f"ROW SUMS: next 64 bytes, run {run}")
            tail = asm.label(f"ROW SUMS: the run's last bytes, run {run}")
            _emit_run_offset(asm, p, run, 0, "%rsi")
            asm.ins("addq %rdi, %rsi")
        elif p.k_runs > 1:
            asm.ins("movq %rdi, %rsi")
        asm.ins(f"movl ${p.run_k}, %ecx" if p.k_runs > 1 else
                f"movq {KB}, %rcx")
        asm.ins("cmpq $64, %rcx")
        asm.ins(f"jb {fwd(tail)}")
        asm.place(chunk)
        asm.ins("vpdpbusd (%rsi), %zmm29, %zmm0")
        asm.ins("addq $64, %rsi")
        asm.ins("subq $64, %rcx")
        asm.ins("cmpq $64, %rcx")
        asm.ins(f"jae {back(chunk)}")
        asm.place(tail)
        asm.ins("movq $-1, %rax")
        asm.ins("bzhiq %rcx, %rax, %rax")
        asm.ins("kmovq %rax, %k1")
        asm.ins("vmovdqu8 (%rsi), %zmm1{%k1}{z}")
        asm.ins("vpdpbusd %zmm1, %zmm29, %zmm0")
    emit_sum_s32_lanes(asm, 0, 1)
    asm.ins(f"vmovd %xmm0, {p.row_corr_offset}({WS}, {JR}, 4)")
    asm.ins(f"incq {JR}")
    asm.ins(f"jmp {back(row)}")
    asm.place(done)


def _emit_run_offset(asm, p, run, since, reg):
    """reg = how far run `run` of a convolution's kc block (p.k_runs runs
    of p.run_k k) lies in the input past run `since`: the difference of
    their first k's column-table entries, in bytes; only reg is
    written."""
    table, k = p.conv.col_table, p.run_k
    asm.ins(f"movq {table + 8 * k * run}({WS}, {PC}, 8), {reg}")
    asm.ins(f"subq {table + 8 * k * since}({WS}, {PC}, 8), {reg}")


def _emit_a_row_source(asm, p, reg, row):
    """reg = where row IR + `row` (a register, or 0) of the block holds
    its block of k: A + (ic + r) * lda + pc elements, or a convolution's
    input + column[pc] + row[ic + r]; only reg is written."""
    if _gathered_a(p) is not None:
        asm.ins(f"leaq ({IC}, {IR}), {reg}")
        if row != 0:
            asm.ins(f"addq {row}, {reg}")
        asm.ins(f"movq {p.conv.row_table}({WS}, {reg}, 8), {reg}")
        asm.ins(f"addq {p.conv.base_slot}({WS}), {reg}")
        return
    asm.ins(f"leaq ({IC}, {IR}), {reg}")
    if row != 0:
        asm.ins(f"addq {row}, {reg}")
    asm.ins(f"imulq {LD_BYTES_OFFSET}({WS}), {reg}" if p.runtime_ld else
            f"imulq ${p.a_row_stride}, {reg}")
    asm.ins(f"leaq ({reg}, {PC}, {p.dt.element_bytes}), {reg}")
    asm.ins(f"addq 0({WS}), {reg}")


def emit_store_sums(asm, acc, address, mask="", half=None):
    """The f32 lanes of acc (a zmm or ymm register) stored at `address`
    under `mask` (a "{%kN}" suffix, or none): as they are, or with `half`
    ("f16", "bf16": a 16-bit D) rounded to nearest even into the low half
    of acc's width (VCVTPS2PH imm 0, VCVTNEPS2BF16), whose words the same
    lane mask selects."""
    if half is None:
        asm.ins(f"vmovups {acc}, {address}{mask}")
        return
    low = acc.replace("zmm", "ymm") if "zmm" in acc else \
        acc.replace("ymm", "xmm")
    if half == "f16":
        asm.ins(f"vcvtps2ph $0, {acc}, {low}")
    else:
        asm.ins(f"vcvtneps2bf16 {acc}, {low}")
    asm.ins(f"vmovdqu16 {low}, {address}{mask}")


def _emit_tile_store(asm, p, done, read_c, epilogue=False, to_d=False):
    """The tile's rows up to the last valid one (%rsi rows left), each
    vector masked past N: C (%rdi, ldc bytes in %rcx) added with `read_c`
    (an s8 A's correction subtracted first), the epilogue applied with
    `epilogue` (bias pointer in %rax), then stored into C or, with `to_d`,
    rounded to bf16 into D (its tile in %rdx, rows ldd apart)."""
    if p.c_transposed:
        _emit_tile_store_transposed(asm, p, done, read_c, epilogue, to_d)
        return
    t = _a_reg(p)
    if to_d:
        asm.comment("D tile: %rdx = D + (ic + ir) * ldd + (jc + jr) * 2")
        _emit_d_tile(asm, p, (IC, IR), (JC, JR))
    _emit_correction_pointer(asm, p)
    for i in range(p.mr):
        for v in range(p.nv):
            mask = f"{{%k{v + 1}}}"
            acc = _acc(p, i, v)
            _emit_correction(asm, p, acc, i, v)
            if read_c:
                asm.ins(f"vmovups {64 * v}(%rdi), {t}{mask}{{z}}")
                asm.ins(f"{p.dt.add} {t}, {acc}, {acc}")
            if epilogue:
                _emit_epilogue_vector(asm, p, acc, i, v, mask)
            emit_store_sums(asm, acc, f"{32 * v}(%rdx)" if to_d else
                            f"{64 * v}(%rdi)", mask,
                            p.dt.name if to_d else None)
        if i + 1 < p.mr:
            asm.ins(f"cmpq ${i + 1}, %rsi")
            asm.ins(f"jbe {fwd(done)}")
            if read_c or not to_d:
                asm.ins("addq %rcx, %rdi")
            if to_d:
                asm.ins(f"addq {LDD_BYTES}({WS}), %rdx")


def _emit_d_tile(asm, p, rows, columns):
    """%rdx = D's tile: D + (rows) * ldd + (columns) * 2, each a pair of
    loop registers (C's rows and columns, whichever the tile's are)."""
    asm.ins(f"leaq ({rows[0]}, {rows[1]}), %rdx")
    asm.ins(f"imulq {LDD_BYTES}({WS}), %rdx")
    asm.ins(f"addq {OUTPUT_OFFSET}({WS}), %rdx")
    asm.ins(f"leaq (%rdx, {columns[0]}, 2), %rdx")
    asm.ins(f"leaq (%rdx, {columns[1]}, 2), %rdx")


def _emit_correction_pointer(asm, p):
    """%rdx = the tile's s8 correction, where it has one: its rows' 128
    sum_k A(i, k) (A in place, B plus 128), or its sliver's 128 sum_k
    B(k, j) (A packed plus 128)."""
    if p.shift_b:
        asm.comment("the tile's rows' 128 sum_k A(i, k) -> %rdx")
        asm.ins(f"leaq {p.row_corr_offset}({WS}, {IR}, 4), %rdx")
    elif p.dt.shift_a:
        asm.comment("the sliver's 128 sum_k B(k, j) -> %rdx")
        asm.ins(f"leaq {p.corr_offset}({WS}, {JR}, 4), %rdx")


def _emit_correction(asm, p, acc, i, v):
    """The s8 correction of accumulator (row i, vector v) subtracted
    (_emit_correction_pointer's %rdx)."""
    if p.shift_b:
        asm.ins(f"vpsubd {4 * i}(%rdx){{1to16}}, {acc}, {acc}")
    elif p.dt.shift_a:
        asm.ins(f"vpsubd {64 * v}(%rdx), {acc}, {acc}")


def _emit_tile_store_transposed(asm, p, done, read_c, epilogue, to_d):
    """_emit_tile_store for the product transposed: the tile's row i is
    C's column (ic + ir + i), its vector v C's rows (jc + jr + 16 v ..).
    An s8 A's correction is subtracted from the accumulators, which go to
    the spill area; then each vector's MR rows come back (zero past MR),
    are transposed (zmm r = C's row 16 v + r, lane i its column) and
    update C a row at a time under %k7, the tile's rows before the edge
    (%rsi, at most MR): C added with `read_c`, the epilogue (a bias per
    column of C: the tile's rows, %rax) with `epilogue`, stored into C or
    rounded into D (`to_d`). C's rows past the tile's columns before the
    edge (TILE_COLUMNS) are not reached."""
    z = [f"%zmm{i}" for i in range(32)]
    asm.comment("C " + ("+" if read_c else "") + "= the tile transposed"
                + (", epilogue" if epilogue else "")
                + (f", rounded to {p.dt.name} into D" if to_d else "")
                + ": through the spill area, 16 x 16 at a time")
    asm.comment("%k7 = the tile's rows before the edge (C's columns)")
    asm.ins(f"movl ${p.mr}, %edx")
    asm.ins("cmpq %rdx, %rsi")
    asm.ins("cmovbq %rsi, %rdx")
    asm.ins("movl $-1, %ecx")
    asm.ins("bzhil %edx, %ecx, %ecx")
    asm.ins("kmovw %ecx, %k7")
    asm.ins(f"movq {LD_BYTES_OFFSET + 16}({WS}), %rcx")
    _emit_correction_pointer(asm, p)
    for i in range(p.mr):
        for v in range(p.nv):
            acc = _acc(p, i, v)
            _emit_correction(asm, p, acc, i, v)
            asm.ins(f"vmovaps {acc}, "
                    f"{p.spill_offset + (i * p.nr + v * LANES) * 4}({WS})")
    if to_d:
        asm.comment("D tile: %rdx = D + (jc + jr) * ldd + (ic + ir) * 2")
        _emit_d_tile(asm, p, (JC, JR), (IC, IR))
    zero, bound, t = z[16], z[17], z[18]
    for v in range(p.nv):
        for i in range(LANES):
            if i < p.mr:
                asm.ins(f"vmovaps "
                        f"{p.spill_offset + (i * p.nr + v * LANES) * 4}"
                        f"({WS}), {z[i]}")
            else:
                asm.ins(f"vpxord {z[i]}, {z[i]}, {z[i]}")
        # (It clobbers zmm16 to zmm31: the epilogue's registers after it.)
        emit_transpose_16x16(asm)
        if epilogue:
            emit_epilogue_setup(asm, p, zero, bound)
        for r in range(LANES):
            row = v * LANES + r
            asm.ins(f"cmpq ${row}, {TILE_COLUMNS}({WS})")
            asm.ins(f"jbe {fwd(done)}")
            acc = z[r]
            if read_c:
                asm.ins(f"vmovups (%rdi), {t}{{%k7}}{{z}}")
                asm.ins(f"{p.dt.add} {t}, {acc}, {acc}")
            if epilogue:
                # The tile's bias along its rows is C's along its columns:
                # a vector of it (from %rax) for every row of C.
                bias = (f"(%rax), {acc}, {acc}{{%k7}}" if p.bias == "rows"
                        else None)
                emit_epilogue(asm, p, acc, bias, zero, bound, z[19])
            emit_store_sums(asm, acc, "(%rdx)" if to_d else "(%rdi)",
                            "{%k7}", p.dt.name if to_d else None)
            if read_c or not to_d:
                asm.ins("addq %rcx, %rdi")
            if to_d:
                asm.ins(f"addq {LDD_BYTES}({WS}), %rdx")


def interleave_words(first, swap):
    """The 32 words of a VPERMT2W index that interleaves columns first ..
    first + 15 of two rows of 32 bf16 (its two tables) into pairs: word 2j
    <- row k's column first + j, 2j+1 <- row k+1's (32 + first + j); with
    `swap` (fault swap-pairs) the other way round."""
    words = []
    for j in range(first, first + 16):
        pair = [j, 32 + j]
        words += pair[::-1] if swap else pair
    return words


def _emit_interleave_index(asm, p):
    """The VPERMT2W index into the header: word 2j <- row k's j, 2j+1 <-
    row k+1's j (32 + j)."""
    index = interleave_words(0, p.fault == "swap-pairs")
    for q in range(8):
        words = index[4 * q:4 * q + 4]
        value = sum(word << (16 * n) for n, word in enumerate(words))
        asm.ins(f"movabsq ${value:#x}, %rax")
        asm.ins(f"movq %rax, {INDEX_OFFSET + 8 * q}({WS})")


def emit_leading_dims_in_bytes(asm, p, types, element_bytes, ldd_slot,
                               swap_ab=False):
    """lda, ldb and ldc in bytes into the header (88, 96, 104), from the
    caller's elements (runtime_ld) or the immediates; with a bf16 output
    ldd in bytes too, into `ldd_slot`. `types`: A's, B's and C's names.
    `swap_ab` (the product transposed, whose A is the caller's B): the
    caller's lda and ldb, swapped."""
    a_type, b_type, c_type = types
    asm.comment(f"lda, ldb ({a_type}, {b_type}) and ldc ({c_type}) in bytes")
    eb = element_bytes
    sources = (1, 0, 2) if swap_ab else (0, 1, 2)
    for i, size in enumerate((eb, eb, 4)):
        if p.runtime_ld:
            asm.ins(f"movq {LD_OFFSET + 8 * sources[i]}({WS}), %rax")
            if size > 1:
                asm.ins(f"shlq ${size.bit_length() - 1}, %rax")
        else:
            ld = (p.lda, p.ldb, p.ldc)[i]
            asm.ins(f"movq ${ld * size}, %rax")
        asm.ins(f"movq %rax, {LD_BYTES_OFFSET + 8 * i}({WS})")
    if p.half_output:
        asm.comment("ldd (16-bit D) in bytes")
        if p.runtime_ld:
            asm.ins(f"movq {OUTPUT_LD_OFFSET}({WS}), %rax")
            asm.ins("addq %rax, %rax")
        else:
            asm.ins(f"movq ${p.ldd * 2}, %rax")
        asm.ins(f"movq %rax, {ldd_slot}({WS})")


def emit_block_input_base(asm, gather, input_slot=0):
    """gather's base slot = the input (its pointer at `input_slot` in the
    header) + column[pc]: where the kc block's first k lies, to which each
    gathered row adds its row offset (the offset tables)."""
    asm.ins(f"movq {gather.col_table}({WS}, {PC}, 8), %rax")
    asm.ins(f"addq {input_slot}({WS}), %rax")
    asm.ins(f"movq %rax, {gather.base_slot}({WS})")


def _emit_body(p):
    asm = Asm()
    emit_fault_entry(asm, p.fault)
    emit_relu_constants(asm, p)
    emit_smooth_constants(asm, p)
    # An nchw convolution's arguments are (input, filter, output): its B,
    # A and C (dotconv.py); the product transposed's (A, B, C) its B, A
    # and C^T.
    a, b = ("%rsi", "%rdi") if p.c_transposed or (
        p.conv is not None and p.conv.gathers == "B") else ("%rdi", "%rsi")
    asm.ins(f"movq {a}, 0(%rcx)")
    asm.ins(f"movq {b}, 8(%rcx)")
    asm.ins("movq %rdx, 16(%rcx)")
    asm.ins(f"movq %rcx, {WS}")
    emit_leading_dims_in_bytes(asm, p, p.dt.types, p.dt.element_bytes,
                               LDD_BYTES, swap_ab=p.c_transposed)
    if p.dt.group == 2:
        _emit_interleave_index(asm, p)
    if p.conv is not None:
        p.conv.emit_tables(asm)
    done = asm.label("empty part of C: nothing to do")
    emit_zero_k_exit(asm, p, done)
    emit_nest(asm, p, done, _emit_column_block, _emit_row_block,
              _emit_sliver_loops, p.c_transposed)
    if p.reads_range or p.dynamic_k:
        asm.place(done)
    asm.ins("vzeroupper")
    return asm.text()


def emit_zero_k_exit(asm, p, done):
    """A run-time K of 0 adds nothing to C: to `done`."""
    if p.dynamic_k:
        asm.ins(f"cmpq $0, {K_SLOT}({WS})")
        asm.ins(f"je {fwd(done)}")


def _emit_column_block(asm, p):
    """At each (jc, pc) block: its counts, PACK B (or a prepacked B's
    panel), and the column sums an s8 A's correction needs."""
    _emit_block_counts(asm, p)
    if p.b_prepacked:
        # (Its slivers (jc + jr) / NR from B + (jc + jr) * k_groups * 4.)
        emit_prepacked_panel(asm, p.k_groups, p.dt.group, p.nr, B_PANEL)
    else:
        _emit_pack(asm, p, _operands(p)[1])
    if p.dt.shift_a and not p.shift_b:
        _emit_b_column_sums(asm, p)


def _emit_row_block(asm, p):
    """At each ic block: PACK A, or A in place (with the row sums a
    shifted B's correction needs)."""
    if p.a_direct:
        _emit_a_in_place(asm, p)
        if p.shift_b:
            _emit_a_row_sums(asm, p)
    else:
        _emit_pack(asm, p, _operands(p)[0])


def _emit_sliver_loops(asm, p):
    """The jr and ir loops around the microkernel."""
    jr_loop = asm.label("jr: next sliver of B")
    ir_loop = asm.label("ir: next sliver of A")
    emit_sliver_heads(asm, p, jr_loop, ir_loop)
    _emit_compute(asm, p)
    emit_sliver_ends(asm, p, jr_loop, ir_loop)


def _emit_in_place_entry(asm, p, done, slots):
    """The entry of the forms that read B in place: the fault's, A, B and C
    into the header, the leading dimensions in bytes, then the part (rows
    [m_begin, m_end), columns [n_begin, n_end): the header's or all of
    them) into the kernel's `slots` in that order; an empty part jumps to
    `done`."""
    emit_fault_entry(asm, p.fault)
    asm.ins("movq %rdi, 0(%rcx)")
    asm.ins("movq %rsi, 8(%rcx)")
    asm.ins("movq %rdx, 16(%rcx)")
    asm.ins(f"movq %rcx, {WS}")
    emit_leading_dims_in_bytes(asm, p, p.dt.types, p.dt.element_bytes,
                               LDD_BYTES)
    asm.comment("the part: rows [m_begin, m_end), columns [n_begin, n_end)")
    if p.reads_range:
        asm.ins(f"movq {RANGE_OFFSET}({WS}), %rax")
        asm.ins(f"movq {RANGE_OFFSET + 8}({WS}), %rcx")
        asm.ins(f"movq {RANGE_OFFSET + 16}({WS}), %rdx")
        asm.ins(f"movq {RANGE_OFFSET + 24}({WS}), %rsi")
    else:
        asm.ins("xorl %eax, %eax")
        asm.ins(f"movq ${p.m}, %rcx")
        asm.ins("xorl %edx, %edx")
        asm.ins(f"movq ${p.n}, %rsi")
    asm.ins("cmpq %rcx, %rax")
    asm.ins(f"jge {fwd(done)}")
    asm.ins("cmpq %rsi, %rdx")
    asm.ins(f"jge {fwd(done)}")
    for reg, slot in zip(("%rax", "%rcx", "%rdx", "%rsi"), slots):
        asm.ins(f"movq {reg}, {slot}({WS})")


def gemv_chunk(p):
    """k a K step of the matrix-vector form takes from each row: a zmm
    register of groups (32 bf16, 16 f16 widened)."""
    return LANES * p.dt.group


# From this many rows of A (static, of 2-byte types), a pass of the
# matrix-vector form takes three rows, which share each chunk of B^T's
# rows three ways: 11 loads (8 of them B^T's, from L2 where its 8 rows do
# not fit L1) for 24 dot products rather than 10 for 16.
GEMV_THREE_ROWS_FROM = 12


def gemv_a_rows(p):
    """Rows of A a pass of the matrix-vector form takes: two, which share
    each chunk of B^T's rows as loaded (and widened), but one for a single
    row of A, and three for GEMV_THREE_ROWS_FROM rows and more of bf16 or
    f16 (f32's 16 lanes a chunk halve the work a load of B^T brings)."""
    if p.m == 1 and not p.reads_range:
        return 1
    if p.m >= GEMV_THREE_ROWS_FROM and p.dt.name in ("bf16", "f16") \
            and not p.dynamic_m:
        return 3
    return 2


def _gemv_acc(a, r):
    """Row a of A's accumulator against row r of B^T."""
    return f"%zmm{GEMV_ROWS * a + r}"


class GemvRegisters:
    """The matrix-vector form's vector registers for `rows` rows of A a
    pass: the accumulators zmm0 .. 8 * rows - 1, then A's chunks (one per
    row of A), then B^T's rows as loaded: one register each with one or
    two rows of A (zmm18-25), two in turn with three (zmm27-28); then the
    fault drop-low's mask (0xffff0000 in every lane); s8 A: 128 in every
    byte (zmm26) and the rows' sums (zmm27, zmm28)."""

    def __init__(self, rows):
        self.a = GEMV_ROWS * max(rows, 2)
        self.three = rows == 3
        self.drop_low = 29 if self.three else 26
        # s8 A (one or two rows): 128 in every byte, and each row's
        # 128 sum_k A(i, k) in lanes.
        self.byte_128 = 26
        self.row_sums = 27

    def b(self, r):
        return 27 + r % 2 if self.three else 18 + r


# A's rows' pointers in a pass (the third in %rdx, C's pointer only once
# the sums are stored).
GEMV_A_ROW_REGS = ("%rdi", "%rsi", "%rdx")


def _emit_gemv_chunk(asm, p, mask=None):
    """acc(a, r) += chunk of A's row a (at (%rdi|%rsi, %rax)) times row r
    of B^T's (at (%r8+r, %rax)); under `mask` (a mask register of one bit
    an element) the elements past it are zeros."""
    widen = p.dt.name == "f16"
    rows = gemv_a_rows(p)
    regs = GemvRegisters(rows)
    chunk_reg = "%ymm{}" if widen else "%zmm{}"
    zero = f"{{{mask}}}{{z}}" if mask else ""
    move = {4: "vmovups", 2: "vmovdqu16", 1: "vmovdqu8"}[p.dt.element_bytes]
    # s8 A: B^T's bytes plus 128 (the sign bit flipped) the unsigned
    # operand, A the signed one, each row's 128 sum_k A(i, k) on the side.
    shifted = p.dt.shift_a

    def load(src, reg):
        if widen and not mask:
            asm.ins(f"vcvtph2ps {src}, %zmm{reg}")
            return
        asm.ins(f"{move} {src}, {chunk_reg.format(reg)}{zero}")
        if widen:
            asm.ins(f"vcvtph2ps %ymm{reg}, %zmm{reg}")

    for a in range(rows):
        load(f"({GEMV_A_ROW_REGS[a]}, %rax)", regs.a + a)
        if shifted:
            asm.ins(f"vpdpbusd %zmm{regs.a + a}, %zmm{regs.byte_128}, "
                    f"%zmm{regs.row_sums + a}")
    for r in range(GEMV_ROWS):
        b = f"(%r{8 + r}, %rax)"
        if widen or mask or rows > 1 or shifted:
            load(b, regs.b(r))
            b = f"%zmm{regs.b(r)}"
            _emit_drop_low(asm, b, p.fault == "drop-low", regs.drop_low)
        if shifted:
            asm.ins(f"vpxord %zmm{regs.byte_128}, {b}, {b}")
        for a in range(rows):
            asm.ins(f"{p.dt.dot} %zmm{regs.a + a}, {b}, {_gemv_acc(a, r)}"
                    if shifted else
                    f"{p.dt.dot} {b}, %zmm{regs.a + a}, {_gemv_acc(a, r)}")


def gemv_sums_register(a):
    """The ymm register that holds row a's 8 sums (_emit_gemv_sums)."""
    return GEMV_ROWS * a if a < 2 else 1


def _emit_gemv_sums(asm, a, t, integer=False):
    """Row a's 8 accumulators' 16 lanes each summed (`t` a free register):
    16 -> 8 -> 4, then two VHADDPS levels: the 8 sums in the ymm of
    gemv_sums_register(a). VHADDPS and VINSERTF128 have no EVEX form:
    the third row's 4-lane sums move to xmm1-7 and xmm9 first, which the
    first two rows' sums (ymm0, ymm8) have left free."""
    base = GEMV_ROWS * a
    regs = range(base, base + GEMV_ROWS)
    # (s32 sums: the integer instructions of each step.)
    i, add, hadd = ("i", "vpaddd", "vphaddd") if integer else \
        ("f", "vaddps", "vhaddps")
    for r in regs:
        asm.ins(f"vextract{i}64x4 $1, %zmm{r}, %ymm{t}")
        asm.ins(f"{add} %ymm{t}, %ymm{r}, %ymm{r}")
    for r in regs:
        asm.ins(f"vextract{i}32x4 $1, %ymm{r}, %xmm{t}")
        asm.ins(f"{add} %xmm{t}, %xmm{r}, %xmm{r}")
    low = list(regs)
    if a >= 2:
        low = [1, 2, 3, 4, 5, 6, 7, 9]
        for r, x in zip(regs, low):
            asm.ins(f"vmovaps %xmm{r}, %xmm{x}")
    assert low[0] == gemv_sums_register(a)
    for b in (0, 4):
        x = low[b:b + 4]
        asm.ins(f"{hadd} %xmm{x[1]}, %xmm{x[0]}, %xmm{x[0]}")
        asm.ins(f"{hadd} %xmm{x[3]}, %xmm{x[2]}, %xmm{x[2]}")
        asm.ins(f"{hadd} %xmm{x[2]}, %xmm{x[0]}, %xmm{x[0]}")
    asm.ins(f"vinsert{i}128 $1, %xmm{low[4]}, %ymm{low[0]}, %ymm{low[0]}")


def _emit_gemv_row_sum(asm, regs, a):
    """s8 A: row a's 128 sum_k A(i, k) (16 lanes in its row_sums register)
    summed and subtracted from each of its 8 sums (regs.a free)."""
    s = regs.row_sums + a
    emit_sum_s32_lanes(asm, s, regs.a)
    asm.ins(f"vpbroadcastd %xmm{s}, %ymm{s}")
    sums = f"%ymm{gemv_sums_register(a)}"
    asm.ins(f"vpsubd %ymm{s}, {sums}, {sums}")


def _emit_gemv_body(p):
    """The pack_b false form: per group of GEMV_ROWS rows j of B^T and per
    one, two or three rows i of A in the part (gemv_a_rows), C(i, j) (+)=
    sum over K of A(i, k) B^T(j, k), B^T read in place (module
    docstring)."""
    asm = Asm()
    row_loop = asm.label("GEMV: next rows of A")
    col_loop = asm.label("GEMV: next rows of B^T")
    chunk = gemv_chunk(p)
    rows = gemv_a_rows(p)
    regs = GemvRegisters(rows)
    k_loop = asm.label(f"GEMV: next {chunk} k")
    done = asm.label("empty part: nothing to do")
    if rows > 1:
        last_row = asm.label("GEMV: the part's last row stored")
    _emit_in_place_entry(asm, p, done, (GEMV_M_BEGIN, GEMV_M_END, GEMV_COL,
                                        GEMV_N_END))
    emit_relu_constants(asm, p)
    emit_smooth_constants(asm, p)
    if p.fault == "drop-low":
        _emit_drop_low_mask(asm, regs.drop_low, "B^T's elements")
    if p.dt.shift_a:
        asm.comment("128 in every byte: B^T's bytes plus 128, A's row sums")
        _emit_sign_bias(asm, regs.byte_128)
    chunks, tail = divmod(p.k, chunk)
    if p.fault == "drop-k":
        asm.comment("fault drop-k: the last full chunk of K (or the tail) "
                    "left out")
        if chunks:
            chunks -= 1
        else:
            tail = 0
    asm.place(col_loop)
    asm.comment(f"rows j .. j + {GEMV_ROWS - 1} of B^T -> %r8 .. %r15, "
                "those past N the last one again")
    asm.ins(f"movq {GEMV_N_END}({WS}), %rcx")
    asm.ins("decq %rcx")
    for r in range(GEMV_ROWS):
        reg = f"%r{8 + r}"
        asm.ins(f"movq {GEMV_COL}({WS}), %rax")
        if r:
            asm.ins(f"addq ${r}, %rax")
            asm.ins("cmpq %rcx, %rax")
            asm.ins("cmovgq %rcx, %rax")
        asm.ins(f"imulq {LD_BYTES_OFFSET + 8}({WS}), %rax")
        asm.ins(f"addq 8({WS}), %rax")
        asm.ins(f"movq %rax, {reg}")
    asm.ins(f"movq {GEMV_M_BEGIN}({WS}), %rax")
    asm.ins(f"movq %rax, {GEMV_ROW}({WS})")
    asm.place(row_loop)
    asm.comment("A's row -> %rdi"
                + (f", the next {rows - 1} (the part's last again past it)"
                   f" -> {', '.join(GEMV_A_ROW_REGS[1:rows])}"
                   if rows > 1 else "") + ", C's row -> slot")
    asm.ins(f"movq {GEMV_ROW}({WS}), %rax")
    if rows > 1:
        asm.ins(f"movq {GEMV_M_END}({WS}), %rcx")
        asm.ins("decq %rcx")
    for a in range(1, rows):
        reg = GEMV_A_ROW_REGS[a]
        asm.ins(f"leaq {a}(%rax), {reg}")
        asm.ins(f"cmpq %rcx, {reg}")
        asm.ins(f"cmovgq %rcx, {reg}")
        asm.ins(f"imulq {LD_BYTES_OFFSET}({WS}), {reg}")
        asm.ins(f"addq 0({WS}), {reg}")
    asm.ins("movq %rax, %rdi")
    asm.ins(f"imulq {LD_BYTES_OFFSET}({WS}), %rdi")
    asm.ins(f"addq 0({WS}), %rdi")
    asm.ins(f"imulq {LD_BYTES_OFFSET + 16}({WS}), %rax")
    asm.ins(f"addq 16({WS}), %rax")
    asm.ins(f"movq %rax, {GEMV_C_ROW}({WS})")
    for a in range(rows):
        for r in range(GEMV_ROWS):
            acc = _gemv_acc(a, r)
            asm.ins(f"vpxord {acc}, {acc}, {acc}")
        if p.dt.shift_a:
            s = f"%zmm{regs.row_sums + a}"
            asm.ins(f"vpxord {s}, {s}, {s}")
    asm.ins("xorl %eax, %eax")
    if chunks:
        asm.ins(f"movq ${chunks}, %rcx")
        asm.ins(".p2align 4")
        asm.place(k_loop)
        _emit_gemv_chunk(asm, p)
        asm.ins(f"addq ${chunk * p.dt.element_bytes}, %rax")
        asm.ins("decq %rcx")
        asm.ins(f"jnz {back(k_loop)}")
    if tail:
        asm.comment(f"the last {tail} k: A and each row under a mask")
        if tail > 32:
            asm.ins(f"movabsq ${(1 << tail) - 1:#x}, %rcx")
            asm.ins("kmovq %rcx, %k1")
        else:
            asm.ins(f"movl ${(1 << tail) - 1:#x}, %ecx")
            asm.ins("kmovd %ecx, %k1" if p.dt.group < 4
                    else "kmovq %rcx, %k1")
        _emit_gemv_chunk(asm, p, mask="%k1")
    for a in range(rows):
        _emit_gemv_sums(asm, a, regs.a, integer=p.dt.group == 4)
        if p.dt.shift_a:
            _emit_gemv_row_sum(asm, regs, a)
    asm.comment("C(i, j ..) (+)= them, masked past N")
    asm.ins(f"movq {GEMV_N_END}({WS}), %rcx")
    asm.ins(f"subq {GEMV_COL}({WS}), %rcx")
    if p.fault == "write-past-edge":
        asm.ins(f"movl ${(1 << GEMV_ROWS) - 1}, %eax")
    else:
        asm.ins(f"movl ${GEMV_ROWS}, %edx")
        asm.ins("cmpl %edx, %ecx")
        asm.ins("cmovgl %edx, %ecx")
        asm.ins("movl $-1, %eax")
        asm.ins("bzhil %ecx, %eax, %eax")
    asm.ins("kmovw %eax, %k2")
    asm.ins(f"movq {GEMV_COL}({WS}), %rdx")
    asm.ins("shlq $2, %rdx")
    asm.ins(f"addq {GEMV_C_ROW}({WS}), %rdx")
    if p.bias == "columns":
        asm.comment("the columns' bias -> %rsi")
        asm.ins(f"movq {GEMV_COL}({WS}), %rsi")
        asm.ins("shlq $2, %rsi")
        asm.ins(f"addq {BIAS_OFFSET}({WS}), %rsi")
    if p.half_output:
        asm.comment(f"D's row ({p.dt.name}) -> %rdi")
        asm.ins(f"movq {GEMV_ROW}({WS}), %rdi")
        asm.ins(f"imulq {LDD_BYTES}({WS}), %rdi")
        asm.ins(f"addq {OUTPUT_OFFSET}({WS}), %rdi")
        asm.ins(f"movq {GEMV_COL}({WS}), %rax")
        asm.ins("leaq (%rdi, %rax, 2), %rdi")
    # (regs.a + 2, a smooth activation's third: B^T's rows' registers
    # or the byte mask's, free once the K loop is done.)
    zero, bound = f"%ymm{regs.a}", f"%ymm{regs.a + 1}"
    spare = f"%ymm{regs.a + 2}"
    emit_epilogue_setup(asm, p, zero, bound)
    for a in range(rows):
        sums = f"%ymm{gemv_sums_register(a)}"
        if a:
            asm.comment("the next row's, unless past the part")
            asm.ins(f"movq {GEMV_ROW}({WS}), %rax")
            asm.ins("incq %rax" if a == 1 else f"addq ${a}, %rax")
            asm.ins(f"cmpq {GEMV_M_END}({WS}), %rax")
            asm.ins(f"jge {fwd(last_row)}")
            asm.ins(f"addq {LD_BYTES_OFFSET + 16}({WS}), %rdx")
            if p.half_output:
                asm.ins(f"addq {LDD_BYTES}({WS}), %rdi")
        if not p.overwrite:
            asm.ins(f"{p.dt.add} (%rdx), {sums}, {sums}{{%k2}}")
        emit_epilogue(asm, p, sums, p.bias == "columns"
                      and f"(%rsi), {sums}, {sums}{{%k2}}", zero, bound,
                      spare)
        emit_store_sums(asm, sums, "(%rdi)" if p.half_output else "(%rdx)",
                        "{%k2}", p.dt.name if p.half_output else None)
    if rows > 1:
        asm.place(last_row)
    asm.ins(f"addq ${rows}, {GEMV_ROW}({WS})")
    asm.ins(f"movq {GEMV_ROW}({WS}), %rax")
    asm.ins(f"cmpq {GEMV_M_END}({WS}), %rax")
    asm.ins(f"jl {back(row_loop)}")
    asm.ins(f"addq ${GEMV_ROWS}, {GEMV_COL}({WS})")
    asm.ins(f"movq {GEMV_COL}({WS}), %rax")
    asm.ins(f"cmpq {GEMV_N_END}({WS}), %rax")
    asm.ins(f"jl {back(col_loop)}")
    asm.place(done)
    asm.ins("vzeroupper")
    return asm.text()


def _stream_tag(kblock, masked):
    """The labels' name of a streamed block."""
    tag = "edge" if masked else "whole"
    return f"{kblock.name} K block, {tag}" if kblock.name else tag


def _emit_stream_block(asm, p, kblock, masked, buffer=None):
    """One block of STREAM_COLUMNS columns (%rsi: B's row 0 there) against
    the pass's rows of A in the workspace (%rax), over K (f16:
    _emit_stream_f16_k_loop; bf16: _emit_stream_bf16_k_loop); then C
    (%rdi) += or = the sums, rows past the part not stored."""
    nv = STREAM_VECTORS
    tag = _stream_tag(kblock, masked)

    def acc(r, v):
        return f"%zmm{r * nv + v}"
    fill = buffer == "fill"
    if buffer == "read":
        _emit_stream_read_k_loop(asm, p, kblock, tag, acc)
    elif p.dt.name == "bf16":
        _emit_stream_bf16_k_loop(asm, p, kblock, masked, tag, acc, fill)
    elif p.dt.group == 4:
        _emit_stream_i8_k_loop(asm, p, kblock, masked, tag, acc, fill)
    else:
        _emit_stream_f16_k_loop(asm, p, kblock, masked, tag, acc, fill)
    stored = asm.label(f"B's rows: the part's rows stored ({tag} block)")
    _emit_stream_store(asm, p, kblock, masked, stored, acc)


def _emit_stream_dots(asm, p, b, acc):
    """One K step of the streamed form against B's vectors `b` (as the
    instruction takes them), then %rax to the next step of A's rows: f16,
    each row's widened A(i, k) broadcast and 4 FMAs; bf16, each row's
    pair of A the broadcast memory operand of 4 VDPBF16PS; 8-bit, each
    row's quad of A broadcast and 4 VPDPBUSD (s8 A the signed operand
    against B's bytes plus 128, u8 A the unsigned one)."""
    rows = p.stream_rows
    if p.dt.name == "bf16":
        for r in range(rows):
            for v in range(STREAM_VECTORS):
                asm.ins(f"{p.dt.dot} {r * p.stream_a_stride}(%rax){{1to16}}, "
                        f"{b[v]}, {acc(r, v)}")
    elif p.dt.group == 4:
        a = f"%zmm{STREAM_I8_A_REG}"
        for r in range(rows):
            asm.ins(f"vpbroadcastd {r * p.stream_a_stride}(%rax), {a}")
            for v in range(STREAM_VECTORS):
                # (VPDPBUSD: the second operand's bytes unsigned, the
                # first's signed.)
                asm.ins(f"vpdpbusd {a}, {b[v]}, {acc(r, v)}"
                        if p.dt.shift_a
                        else f"vpdpbusd {b[v]}, {a}, {acc(r, v)}")
    else:
        a = f"%zmm{rows * STREAM_VECTORS + STREAM_VECTORS}"
        for r in range(rows):
            asm.ins(f"vbroadcastss {r * p.stream_a_stride}(%rax), {a}")
            for v in range(STREAM_VECTORS):
                asm.ins(f"vfmadd231ps {b[v]}, {a}, {acc(r, v)}")
    asm.ins("addq $4, %rax")


def _emit_stream_rows_loop(asm, name, steps, comment, prefetches, step,
                           rows):
    """The K loop over B's rows of bf16 and 8-bit: `steps` times, the
    `prefetches` (addresses off %rsi, row k, and %rdx, row k + 1), the
    step (`step`), both row pointers `rows` rows on (%r8: ldb in
    bytes)."""
    k_loop = asm.label(name)
    asm.ins(f"movq ${steps}, %rcx")
    asm.ins(".p2align 4")
    asm.place(k_loop)
    asm.comment(comment)
    for address in prefetches:
        asm.ins(f"prefetcht0 {address}")
    step()
    asm.ins(f"leaq (%rsi, %r8, {rows}), %rsi")
    asm.ins(f"leaq (%rdx, %r8, {rows}), %rdx")
    asm.ins("decq %rcx")
    asm.ins(f"jnz {back(k_loop)}")


def _emit_stream_i8_k_loop(asm, p, kblock, masked, tag, acc, fill):
    """The 8-bit K loop of a streamed block: per four k, rows k to k + 3
    of the block (64 bytes each, under the byte mask k5 with `masked`)
    interleaved into quads (B(k, j), .., B(k + 3, j)) by byte then word
    unpacks, within each 128-bit lane: quad register m holds in lane
    4L + d column 16L + 4m + d (the store puts the columns back in order,
    _emit_stream_unpermute). u8 A: each row's quad of A broadcast into a
    register, the u8 operand of VPDPBUSD, B the s8 one; s8 A: B's bytes
    plus 128 (the sign bit flipped) the u8 operand, each row's quad of A
    the broadcast s8 memory operand, the sums started at the row's
    -128 sum_k A(i, k) (%r11). K's last one to three k are padded with
    zero rows (nothing past B is read)."""
    shifted = p.dt.shift_a
    _emit_stream_start_sums(asm, p, kblock, acc)
    k = _stream_block_k(p, kblock, asm)
    quads, rem = divmod(k, 4)
    asm.comment("%r8: ldb in bytes; %rdx: row k + 1; %r10: the prefetch "
                "distance plus two rows")
    asm.ins(f"movq {LD_BYTES_OFFSET + 8}({WS}), %r8")
    asm.ins("leaq (%rsi, %r8), %rdx")
    asm.ins("leaq (%r9, %r8, 2), %r10")
    raw = STREAM_I8_ROWS
    # fault swap-pairs: rows k and k + 1 the other way round.
    order = (1, 0, 2, 3) if p.fault == "swap-pairs" else (0, 1, 2, 3)
    sources = ("(%rsi)", "(%rdx)", "(%rsi, %r8, 2)", "(%rdx, %r8, 2)")

    def quad_step(present):
        mask = "{%k5}{z}" if masked else ""
        for row in range(4):
            reg = f"%zmm{raw[order[row]]}"
            if row < present:
                asm.ins(f"vmovdqu8 {sources[row]}, {reg}{mask}")
            else:
                asm.ins(f"vpxord {reg}, {reg}, {reg}")
        z = [f"%zmm{r}" for r in raw]
        q = [f"%zmm{r}" for r in STREAM_QUADS]
        asm.ins(f"vpunpcklbw {z[1]}, {z[0]}, {q[2]}")
        asm.ins(f"vpunpckhbw {z[1]}, {z[0]}, {q[3]}")
        asm.ins(f"vpunpcklbw {z[3]}, {z[2]}, {z[0]}")
        asm.ins(f"vpunpckhbw {z[3]}, {z[2]}, {z[1]}")
        asm.ins(f"vpunpcklwd {z[0]}, {q[2]}, {q[0]}")
        asm.ins(f"vpunpckhwd {z[0]}, {q[2]}, {q[1]}")
        asm.ins(f"vpunpcklwd {z[1]}, {q[3]}, {q[2]}")
        asm.ins(f"vpunpckhwd {z[1]}, {q[3]}, {q[3]}")
        if shifted:
            for reg in q:
                asm.ins(f"vpxord %zmm{STREAM_I8_128_REG}, {reg}, {reg}")
        _emit_stream_fill(asm, fill, q)
        _emit_stream_dots(asm, p, q, acc)

    if quads:
        _emit_stream_rows_loop(
            asm, f"B's rows: next four k ({tag} block)", quads,
            f"rows k to k + 3 {STREAM_PREFETCH_ROWS} k ahead (%r9: that "
            "many rows' bytes, %r10: two rows more): each row is another "
            "page, past the hardware prefetchers",
            ("(%rsi, %r9)", "(%rdx, %r9)", "(%rsi, %r10)", "(%rdx, %r10)"),
            lambda: quad_step(4), 4)
    if rem:
        asm.comment(f"K's last {rem} k, the quads padded with zero rows")
        quad_step(rem)


def _emit_stream_unpermute(asm, acc, r):
    """Row r's sums of an 8-bit streamed block back in column order: quad
    register m's 128-bit lane L holds columns 16L + 4m .. 16L + 4m + 3, so
    vector v's lane m is accumulator m's lane v (a 4 x 4 transpose of
    128-bit lanes, two VSHUFI32X4 stages through STREAM_I8_ROWS)."""
    a = [acc(r, m) for m in range(STREAM_VECTORS)]
    t = [f"%zmm{reg}" for reg in STREAM_I8_ROWS]
    asm.ins(f"vshufi32x4 $0x44, {a[1]}, {a[0]}, {t[0]}")
    asm.ins(f"vshufi32x4 $0xee, {a[1]}, {a[0]}, {t[1]}")
    asm.ins(f"vshufi32x4 $0x44, {a[3]}, {a[2]}, {t[2]}")
    asm.ins(f"vshufi32x4 $0xee, {a[3]}, {a[2]}, {t[3]}")
    asm.ins(f"vshufi32x4 $0x88, {t[2]}, {t[0]}, {a[0]}")
    asm.ins(f"vshufi32x4 $0xdd, {t[2]}, {t[0]}, {a[1]}")
    asm.ins(f"vshufi32x4 $0x88, {t[3]}, {t[1]}, {a[2]}")
    asm.ins(f"vshufi32x4 $0xdd, {t[3]}, {t[1]}, {a[3]}")


def _emit_stream_start_sums(asm, p, kblock, acc):
    """The accumulators' start: zero, or for s8 A in the first K block
    each row's -128 sum_k A(i, k) (%r11: the pass's first row's)."""
    if p.dt.shift_a and kblock.first:
        asm.comment("the sums start at -128 sum_k A(i, k) (%r11: the "
                    "pass's first row's)")
        for r in range(p.stream_rows):
            for v in range(STREAM_VECTORS):
                asm.ins(f"vpbroadcastd {4 * r}(%r11), {acc(r, v)}")
    else:
        _emit_zero_accumulators(asm, p, acc)


def _emit_stream_fill(asm, fill, vectors):
    """The group's first pass (`fill`): one K step's vectors of B, as the
    instruction takes them, into the block's buffer (%r12), for the
    group's later passes."""
    if not fill:
        return
    for v, reg in enumerate(vectors):
        asm.ins(f"vmovdqu64 {reg}, {64 * v}(%r12)")
    asm.ins(f"addq ${64 * STREAM_VECTORS}, %r12")


def stream_block_steps(p, k):
    """K steps (of a group of k: a pair for bf16, a quad for bytes) over
    `k` k of a K block, a last partial one included."""
    return -(-k // p.dt.group)


def _emit_stream_read_k_loop(asm, p, kblock, tag, acc):
    """A later pass of the group over one block: per K step, B's vectors
    from the buffer the first pass filled (%r12), 256 bytes a step, as
    they were built (so nothing is loaded from B, nothing interleaved or
    widened), against this pass's rows of A."""
    rows, nv = p.stream_rows, STREAM_VECTORS
    _emit_stream_start_sums(asm, p, kblock, acc)
    steps = stream_block_steps(p, _stream_block_k(p, kblock, asm))
    if p.dt.group == 4:
        b = [f"%zmm{r}" for r in STREAM_QUADS]
    else:
        b = [f"%zmm{rows * nv + v}" for v in range(nv)]
    k_loop = asm.label(f"B's rows from the buffer: next K step ({tag} "
                       "block)")
    asm.ins(f"movq ${steps}, %rcx")
    asm.ins(".p2align 4")
    asm.place(k_loop)
    for v in range(nv):
        asm.ins(f"vmovdqu64 {64 * v}(%r12), {b[v]}")
    asm.ins(f"addq ${64 * nv}, %r12")
    _emit_stream_dots(asm, p, b, acc)
    asm.ins("decq %rcx")
    asm.ins(f"jnz {back(k_loop)}")


def _stream_block_k(p, kblock, asm):
    """The k of a streamed K block (fault drop-k: K's last left out)."""
    if p.fault == "drop-k" and kblock.last:
        asm.comment("fault drop-k: the last k left out")
        return kblock.k - 1
    return kblock.k


def _emit_zero_accumulators(asm, p, acc):
    for r in range(p.stream_rows):
        for v in range(STREAM_VECTORS):
            asm.ins(f"vpxord {acc(r, v)}, {acc(r, v)}, {acc(r, v)}")


def _emit_stream_f16_k_loop(asm, p, kblock, masked, tag, acc, fill):
    """f16's K loop of a streamed block: per k the block's row of B
    widened (VCVTPH2PS; under the lane masks k1-k4 with `masked`), each
    row's widened A(i, k) broadcast, STREAM_VECTORS FMAs a row."""
    rows, nv = p.stream_rows, STREAM_VECTORS
    k_loop = asm.label(f"B's rows: next k ({tag} block)")
    b_reg = rows * nv
    _emit_stream_start_sums(asm, p, kblock, acc)
    k = _stream_block_k(p, kblock, asm)
    asm.ins(f"movq ${k}, %rcx")
    asm.ins(".p2align 4")
    asm.place(k_loop)
    asm.comment(f"B's row {STREAM_PREFETCH_ROWS} k ahead (%r9: that many "
                "rows' bytes): each row is another page, past the "
                "hardware prefetchers")
    for line in range(0, STREAM_COLUMNS * 2, 64):
        asm.ins(f"prefetcht0 {line}(%rsi, %r9)")
    for v in range(nv):
        b = f"%zmm{b_reg + v}"
        if masked:
            asm.ins(f"vmovdqu16 {32 * v}(%rsi), %ymm{b_reg + v}"
                    f"{{%k{v + 1}}}{{z}}")
            asm.ins(f"vcvtph2ps %ymm{b_reg + v}, {b}")
        else:
            asm.ins(f"vcvtph2ps {32 * v}(%rsi), {b}")
        _emit_drop_low(asm, b, p.fault == "drop-low", STREAM_DROP_LOW_REG)
    b = [f"%zmm{b_reg + v}" for v in range(nv)]
    _emit_stream_fill(asm, fill, b)
    _emit_stream_dots(asm, p, b, acc)
    asm.ins(f"addq {LD_BYTES_OFFSET + 8}({WS}), %rsi")
    asm.ins("decq %rcx")
    asm.ins(f"jnz {back(k_loop)}")


def _emit_stream_bf16_k_loop(asm, p, kblock, masked, tag, acc, fill):
    """bf16's K loop of a streamed block: per pair of k, rows k (%rsi) and
    k + 1 (%rdx) of the block loaded (two 32-column halves, under the word
    masks k5 and k6 with `masked`) and interleaved by VPERMT2W into four
    vectors of 16 columns' pairs (B(k, j), B(k + 1, j)), as VDPBF16PS
    wants them; each row's pair (A(i, k), A(i, k + 1)) broadcast from the
    workspace as the instruction's memory operand. An odd K's last k is
    paired with zeros (nothing past B is read)."""
    rows, nv = p.stream_rows, STREAM_VECTORS
    b_reg = rows * nv
    raw, low, high = b_reg + nv, b_reg + nv + 1, b_reg + nv + 2
    _emit_stream_start_sums(asm, p, kblock, acc)
    k = _stream_block_k(p, kblock, asm)
    pairs, odd = divmod(k, 2)
    asm.comment("the interleaving indices; %r8: ldb in bytes; %rdx: row "
                "k + 1")
    asm.ins(f"vmovdqu16 {p.stream_index_label[0]}b(%rip), %zmm{low}")
    asm.ins(f"vmovdqu16 {p.stream_index_label[0]}b+64(%rip), %zmm{high}")
    asm.ins(f"movq {LD_BYTES_OFFSET + 8}({WS}), %r8")
    asm.ins("leaq (%rsi, %r8), %rdx")

    def pair_step(with_second):
        for h in range(2):
            mask = f"{{%k{5 + h}}}{{z}}" if masked else ""
            lo, hi = f"%zmm{b_reg + 2 * h}", f"%zmm{b_reg + 2 * h + 1}"
            asm.ins(f"vmovdqu16 {64 * h}(%rsi), {lo}{mask}")
            asm.ins(f"vmovdqa64 {lo}, {hi}")
            if with_second:
                asm.ins(f"vmovdqu16 {64 * h}(%rdx), %zmm{raw}{mask}")
            asm.ins(f"vpermt2w %zmm{raw}, %zmm{low}, {lo}")
            asm.ins(f"vpermt2w %zmm{raw}, %zmm{high}, {hi}")
        b = [f"%zmm{b_reg + v}" for v in range(nv)]
        _emit_stream_fill(asm, fill, b)
        _emit_stream_dots(asm, p, b, acc)

    if pairs:
        _emit_stream_rows_loop(
            asm, f"B's rows: next pair of k ({tag} block)", pairs,
            f"rows k and k + 1 {STREAM_PREFETCH_ROWS} k ahead (%r9: that "
            "many rows' bytes): each row is another page, past the "
            "hardware prefetchers",
            [f"{line}({row}, %r9)" for row in ("%rsi", "%rdx")
             for line in range(0, STREAM_COLUMNS * 2, 64)],
            lambda: pair_step(True), 2)
    if odd:
        asm.comment("K's last k, paired with zeros")
        asm.ins(f"vpxord %zmm{raw}, %zmm{raw}, %zmm{raw}")
        pair_step(False)


def _emit_stream_interleave_indices(asm, p):
    """bf16's VPERMT2W indices, as data in the body (jumped over; the K
    loops load them %rip-relative): interleave_words of columns 0 .. 15
    and of 16 .. 31 (fault swap-pairs: the rows the other way round, as
    PACK B's index). Sets p.stream_index_label."""
    over = asm.label("past the interleaving indices")
    asm.ins(f"jmp {fwd(over)}")
    asm.ins(".p2align 6")
    p.stream_index_label = asm.label("VPERMT2W indices: rows k and k + 1 "
                                     "into pairs")
    asm.place(p.stream_index_label)
    for first in (0, 16):
        words = interleave_words(first, p.fault == "swap-pairs")
        asm.ins(".short " + ", ".join(str(w) for w in words))
    asm.place(over)


def _emit_stream_store(asm, p, kblock, masked, stored, acc):
    """C's rows of a streamed block (%rdi; D's at %r11), masked past N
    with `masked`, none past the part: += or = the sums, the epilogue
    (the last K block's; the others' sums stored into C as they are)."""
    rows, nv = p.stream_rows, STREAM_VECTORS
    b_reg = rows * nv
    asm.comment("C's rows of the block, masked past N, none past the part")
    asm.ins(f"movq {STREAM_M_END}({WS}), %rdx")
    asm.ins(f"subq {STREAM_ROW}({WS}), %rdx")
    zero, bound = f"%zmm{b_reg}", f"%zmm{b_reg + 1}"
    if kblock.last:
        emit_epilogue_setup(asm, p, zero, bound)
    to_d = p.half_output and kblock.last
    # (write-past-edge stores the block's lanes past N too: zeros.)
    for r in range(rows):
        if r:
            asm.ins(f"cmpq ${r}, %rdx")
            asm.ins(f"jbe {fwd(stored)}")
            asm.ins(f"addq {LD_BYTES_OFFSET + 16}({WS}), %rdi")
            if to_d:
                asm.ins(f"addq {LDD_BYTES}({WS}), %r11")
        if p.dt.group == 4:
            _emit_stream_unpermute(asm, acc, r)
        for v in range(nv):
            mask = f"{{%k{v + 1}}}" if masked else ""
            if not (p.overwrite and kblock.first):
                asm.ins(f"{p.dt.add} {64 * v}(%rdi), {acc(r, v)}, "
                        f"{acc(r, v)}{mask}")
            if kblock.last:
                emit_epilogue(asm, p, acc(r, v), p.bias == "columns" and
                              f"{64 * v}(%r10), {acc(r, v)}, "
                              f"{acc(r, v)}{mask}", zero, bound,
                              f"%zmm{b_reg + 2}")
            if p.fault == "write-past-edge":
                mask = ""
            emit_store_sums(asm, acc(r, v), f"{32 * v}(%r11)"
                            if to_d else f"{64 * v}(%rdi)", mask,
                            p.dt.name if to_d else None)
    if rows > 1:
        asm.place(stored)


def _emit_stream_body(p):
    """f16, bf16 and 8-bit with B as stored and pack_b false: per group of
    up to stream_group_rows of the part's rows (passes of stream_rows;
    past the part the last row again), those rows of A copied into the
    workspace (f16 widened to f32; zero past K); then per K block
    (stream_k_blocks) and block of STREAM_COLUMNS columns, each pass of
    the group over the K block (_emit_stream_passes): the first streams
    B's rows in place from memory, the later ones read the vectors it
    left in the buffer. B is read from memory once a group."""
    asm = Asm()
    group_loop = asm.label("B's rows: next group of rows of A")
    copy_loop = asm.label("B's rows: next row of A copied")
    column_labels = _stream_column_labels(asm, stream_k_blocks(p)[0])
    done = asm.label("empty part: nothing to do")
    kp = p.stream_a_stride // 4
    group = p.stream_group_rows
    _emit_in_place_entry(asm, p, done, (STREAM_ROW, STREAM_M_END,
                                        STREAM_N_BEGIN, STREAM_N_END))
    emit_relu_constants(asm, p)
    emit_smooth_constants(asm, p)
    bf16 = p.dt.name == "bf16"
    if bf16:
        _emit_stream_interleave_indices(asm, p)
    if p.fault == "drop-low":
        _emit_drop_low_mask(asm, STREAM_DROP_LOW_REG)
    bytes_ = p.dt.group == 4
    asm.ins(f"imulq ${STREAM_PREFETCH_ROWS}, {LD_BYTES_OFFSET + 8}({WS}), "
            "%r9")
    if p.dt.shift_a:
        asm.comment("128 in every byte: B plus 128, and A's row sums")
        _emit_sign_bias(asm, STREAM_I8_128_REG)
    # A's rows copied a vector at a time: 16 f16 widened, 32 bf16, 64
    # bytes.
    per_chunk = 4 * LANES if bytes_ else 2 * LANES if bf16 else LANES
    whole, tail = divmod(p.k, per_chunk)
    asm.place(group_loop)
    asm.comment(f"the group: rows [row, min(row + {group}, m_end)) -> slots")
    asm.ins(f"movq {STREAM_ROW}({WS}), %rax")
    asm.ins(f"movq %rax, {STREAM_GROUP}({WS})")
    asm.ins(f"addq ${group}, %rax")
    asm.ins(f"cmpq {STREAM_M_END}({WS}), %rax")
    asm.ins(f"cmovgq {STREAM_M_END}({WS}), %rax")
    asm.ins(f"movq %rax, {STREAM_GROUP_END}({WS})")
    if tail and bytes_:
        asm.ins(f"movabsq ${(1 << tail) - 1:#x}, %rax")
        asm.ins("kmovq %rax, %k1")
    elif tail:
        asm.ins(f"movl ${(1 << tail) - 1:#x}, %eax")
        asm.ins("kmovd %eax, %k1")
    asm.comment(f"the group's {group} rows of A "
                + (f"as they are, {p.stream_a_stride} bytes apart"
                   if bf16 or bytes_ else f"widened, {kp} floats apart")
                + (" (and each row's -128 sum_k A(i, k))"
                   if p.dt.shift_a else "")
                + " (zero past K; past the part the last row again): "
                "%rdx the row of the group, %rdi where it goes")
    asm.ins("xorl %edx, %edx")
    asm.ins(f"leaq {STREAM_A_OFFSET}({WS}), %rdi")
    asm.ins(f"movq {STREAM_M_END}({WS}), %rcx")
    asm.ins("decq %rcx")
    asm.place(copy_loop)
    asm.ins(f"movq {STREAM_GROUP}({WS}), %rax")
    asm.ins("addq %rdx, %rax")
    asm.ins("cmpq %rcx, %rax")
    asm.ins("cmovgq %rcx, %rax")
    asm.ins(f"imulq {LD_BYTES_OFFSET}({WS}), %rax")
    asm.ins(f"addq 0({WS}), %rax")
    if bytes_:
        _emit_stream_copy_bytes(asm, p, whole, tail)
    elif bf16:
        for c in range(whole):
            asm.ins(f"vmovdqu16 {64 * c}(%rax), %zmm0")
            asm.ins(f"vmovdqu16 %zmm0, {64 * c}(%rdi)")
        if tail:
            asm.ins(f"vmovdqu16 {64 * whole}(%rax), %zmm0{{%k1}}{{z}}")
            asm.ins(f"vmovdqu16 %zmm0, {64 * whole}(%rdi)")
    else:
        for c in range(whole):
            asm.ins(f"vcvtph2ps {32 * c}(%rax), %zmm0")
            asm.ins(f"vmovups %zmm0, {64 * c}(%rdi)")
        if tail:
            asm.ins(f"vmovdqu16 {32 * whole}(%rax), %ymm0{{%k1}}{{z}}")
            asm.ins("vcvtph2ps %ymm0, %zmm0")
            asm.ins(f"vmovups %zmm0, {64 * whole}(%rdi)")
    asm.ins(f"addq ${p.stream_a_stride}, %rdi")
    asm.ins("incq %rdx")
    asm.ins(f"cmpq ${group}, %rdx")
    asm.ins(f"jl {back(copy_loop)}")
    for i, kblock in enumerate(stream_k_blocks(p)):
        _emit_stream_columns(asm, p, kblock, column_labels if i == 0 else
                             _stream_column_labels(asm, kblock))
    asm.ins(f"movq {STREAM_GROUP_END}({WS}), %rax")
    asm.ins(f"movq %rax, {STREAM_ROW}({WS})")
    asm.ins(f"cmpq {STREAM_M_END}({WS}), %rax")
    asm.ins(f"jl {back(group_loop)}")
    asm.place(done)
    asm.ins("vzeroupper")
    return asm.text()


@dataclass(frozen=True)
class StreamKBlock:
    """One block of K the streamed form runs over every block of columns
    before the next (BLIS's pc loop), so that the pages of B's rows it
    reads, one a row where a row is a page or more, stay in the TLB for
    all the blocks of columns: the first block starts the sums (C's, or
    none with overwrite), the others add to C, the last applies the
    epilogue and a 16-bit D (C holds the partial sums before it) and takes
    K's last k that are not a whole group. One block when K fits kc
    (name "")."""
    name: str       # "", "first", "middle" (each of them), "last"
    first: bool
    last: bool
    k: int          # k in the block (each middle block's)


def stream_k_blocks(p):
    """The streamed form's K blocks: K in blocks of kc (whole groups of
    k), the first and last written out, the middle ones a loop."""
    if p.kc >= p.k:
        return (StreamKBlock("", True, True, p.k),)
    count = -(-p.k // p.kc)
    return ((StreamKBlock("first", True, False, p.kc),)
            + ((StreamKBlock("middle", False, False, p.kc),)
               if count > 2 else ())
            + (StreamKBlock("last", False, True, p.k - (count - 1) * p.kc),))


def _stream_column_labels(asm, kblock):
    """The labels of the column loop of one K block (_emit_stream_columns)."""
    of = f" ({kblock.name} K block)" if kblock.name else ""
    return (asm.label(f"B's rows: next block of columns{of}"),
            asm.label(f"B's rows: the block at the edge of N{of}"),
            asm.label(f"B's rows: block done{of}"))


def _emit_stream_columns(asm, p, kblock, labels):
    """The streamed form's blocks of STREAM_COLUMNS columns over one K
    block (StreamKBlock; its first k in STREAM_K0 unless K is one block):
    the whole ones, then the one at N's edge under lane masks."""
    col_loop, edge, next_col = labels
    last_k0 = p.k - stream_k_blocks(p)[-1].k
    if kblock.name == "first":
        asm.ins(f"movq $0, {STREAM_K0}({WS})")
    elif kblock.name == "middle":
        k_block_loop = asm.label("B's rows: next middle K block")
        asm.ins(f"movq ${kblock.k}, {STREAM_K0}({WS})")
        asm.place(k_block_loop)
    elif kblock.name == "last":
        asm.ins(f"movq ${last_k0}, {STREAM_K0}({WS})")
    asm.ins(f"movq {STREAM_N_BEGIN}({WS}), %rax")
    asm.ins(f"movq %rax, {STREAM_COL}({WS})")
    asm.place(col_loop)
    asm.ins(f"movq {STREAM_N_END}({WS}), %rcx")
    asm.ins(f"subq {STREAM_COL}({WS}), %rcx")
    asm.ins(f"cmpq ${STREAM_COLUMNS}, %rcx")
    asm.ins(f"jb {fwd(edge)}")
    _emit_stream_passes(asm, p, kblock, masked=False)
    asm.ins(f"jmp {fwd(next_col)}")
    asm.place(edge)
    asm.comment("lane masks k1-k4 for the columns left (%ecx < "
                f"{STREAM_COLUMNS})")
    for v in range(STREAM_VECTORS):
        asm.ins("movl %ecx, %edx")
        if v:
            asm.ins(f"subl ${LANES * v}, %edx")
        asm.ins("xorl %r8d, %r8d")
        asm.ins("testl %edx, %edx")
        asm.ins("cmovsl %r8d, %edx")
        asm.ins(f"movl ${LANES}, %r8d")
        asm.ins("cmpl %r8d, %edx")
        asm.ins("cmovgl %r8d, %edx")
        asm.ins("movl $-1, %r8d")
        asm.ins("bzhil %edx, %r8d, %r8d")
        asm.ins(f"kmovw %r8d, %k{v + 1}")
    if p.dt.name == "bf16":
        asm.comment("k5, k6: the same columns' words of each 32-column half")
        asm.ins("kunpckwd %k1, %k2, %k5")
        asm.ins("kunpckwd %k3, %k4, %k6")
    elif p.dt.group == 4:
        asm.comment("k5: the same columns' bytes")
        asm.ins("movq $-1, %r8")
        asm.ins("bzhiq %rcx, %r8, %r8")
        asm.ins("kmovq %r8, %k5")
    _emit_stream_passes(asm, p, kblock, masked=True)
    asm.place(next_col)
    asm.ins(f"addq ${STREAM_COLUMNS}, {STREAM_COL}({WS})")
    asm.ins(f"movq {STREAM_COL}({WS}), %rax")
    asm.ins(f"cmpq {STREAM_N_END}({WS}), %rax")
    asm.ins(f"jl {back(col_loop)}")
    if kblock.name == "middle":
        asm.ins(f"addq ${kblock.k}, {STREAM_K0}({WS})")
        asm.ins(f"cmpq ${last_k0}, {STREAM_K0}({WS})")
        asm.ins(f"jl {back(k_block_loop)}")


def _emit_stream_copy_bytes(asm, p, chunks, tail):
    """One row of 8-bit A (%rax) copied to %rdi, 64 bytes at a time (the
    tail under k1, zero past K); s8: with its -128 sum_k A(i, k) (VPDPBUSD
    of 128 in each byte by the row) stored at the group row %rdx's slot."""
    shifted = p.dt.shift_a
    if shifted:
        asm.ins("vpxord %zmm1, %zmm1, %zmm1")
    for c in range(chunks + (1 if tail else 0)):
        mask = "{%k1}{z}" if c == chunks else ""
        asm.ins(f"vmovdqu8 {64 * c}(%rax), %zmm0{mask}")
        asm.ins(f"vmovdqu8 %zmm0, {64 * c}(%rdi)")
        if shifted:
            asm.ins(f"vpdpbusd %zmm0, %zmm{STREAM_I8_128_REG}, %zmm1")
    if not shifted:
        return
    asm.comment("the row's sum of its 16 lanes, negated")
    emit_sum_s32_lanes(asm, 1, 2)
    asm.ins("vmovd %xmm1, %eax")
    asm.ins("negl %eax")
    asm.ins(f"movl %eax, {p.stream_corr_offset}({WS}, %rdx, 4)")


def _emit_stream_passes(asm, p, kblock, masked):
    """The group's passes over one block of columns (STREAM_COL), each
    from its first row in STREAM_ROW (_emit_stream_pass). With a buffer
    (p.stream_buffer) the first pass builds B's vectors from B's rows and
    leaves them there, the later ones read them back."""
    tag = _stream_tag(kblock, masked)
    pass_loop = asm.label(f"B's rows: next pass of the group ({tag} block)")
    asm.ins(f"movq {STREAM_GROUP}({WS}), %rax")
    asm.ins(f"movq %rax, {STREAM_ROW}({WS})")
    if p.stream_buffer:
        passes_done = asm.label(f"B's rows: the group's passes done ({tag} "
                                "block)")
        _emit_stream_pass(asm, p, kblock, masked, "fill")
        _emit_stream_next_pass(asm, p)
        asm.ins(f"jge {fwd(passes_done)}")
    asm.place(pass_loop)
    _emit_stream_pass(asm, p, kblock, masked,
                      "read" if p.stream_buffer else None)
    _emit_stream_next_pass(asm, p)
    asm.ins(f"jl {back(pass_loop)}")
    if p.stream_buffer:
        asm.place(passes_done)


def _emit_stream_next_pass(asm, p):
    """STREAM_ROW to the next pass's, compared with the group's end."""
    asm.ins(f"addq ${p.stream_rows}, {STREAM_ROW}({WS})")
    asm.ins(f"movq {STREAM_ROW}({WS}), %rax")
    asm.ins(f"cmpq {STREAM_GROUP_END}({WS}), %rax")


def _emit_stream_pass(asm, p, kblock, masked, buffer):
    """One pass: %rsi B at the block's column (and the K block's row),
    %rdi C's block of the pass's first row, %rax its rows of A in the
    workspace (at the K block's k), %r10 the block's bias, %r11 D's block
    (s8 A: the rows' -128 sum_k A(i, k)), %r12 the buffer; then the block
    (_emit_stream_block)."""
    asm.comment(f"%rsi: B + col * {p.dt.element_bytes}, %rdi: C's block, "
                "%rax: the pass's A"
                + (", %r10: the block's bias" if p.bias == "columns" else "")
                + (", %r11: D's block" if p.half_output else ""))
    asm.ins(f"movq {STREAM_COL}({WS}), %rdx")
    if p.half_output:
        asm.ins(f"movq {STREAM_ROW}({WS}), %r11")
        asm.ins(f"imulq {LDD_BYTES}({WS}), %r11")
        asm.ins(f"addq {OUTPUT_OFFSET}({WS}), %r11")
        asm.ins("leaq (%r11, %rdx, 2), %r11")
    if p.bias == "columns":
        asm.ins(f"movq {BIAS_OFFSET}({WS}), %r10")
        asm.ins("leaq (%r10, %rdx, 4), %r10")
    asm.ins(f"movq 8({WS}), %rsi")
    asm.ins(f"leaq (%rsi, %rdx, {p.dt.element_bytes}), %rsi")
    asm.ins(f"movq {STREAM_ROW}({WS}), %rdi")
    asm.ins(f"imulq {LD_BYTES_OFFSET + 16}({WS}), %rdi")
    asm.ins(f"addq 16({WS}), %rdi")
    asm.ins("leaq (%rdi, %rdx, 4), %rdi")
    asm.ins(f"movq {STREAM_ROW}({WS}), %rax")
    asm.ins(f"subq {STREAM_GROUP}({WS}), %rax")
    if p.dt.shift_a:
        asm.comment("%r11: the pass's first row's -128 sum_k A(i, k)")
        asm.ins(f"leaq {p.stream_corr_offset}({WS}, %rax, 4), %r11")
    asm.ins(f"imulq ${p.stream_a_stride}, %rax, %rax")
    asm.ins(f"leaq {STREAM_A_OFFSET}({WS}, %rax), %rax")
    if kblock.name:
        asm.comment("the K block's first row of B and k of A")
        asm.ins(f"movq {STREAM_K0}({WS}), %rdx")
        a_bytes = 4 if p.dt.name == "f16" else p.dt.element_bytes
        asm.ins(f"leaq (%rax, %rdx, {a_bytes}), %rax")
        asm.ins(f"imulq {LD_BYTES_OFFSET + 8}({WS}), %rdx")
        asm.ins("addq %rdx, %rsi")
    if buffer:
        asm.ins(f"leaq {p.stream_buffer_offset}({WS}), %r12")
    _emit_stream_block(asm, p, kblock, masked, buffer)


def emit(request):
    if request.get("k_runs", 1) != 1:
        raise RequestError("k_runs: a convolution's kc blocks of several "
                           "runs of its input (dotconv.py), not a GEMM's")
    p = Params(request)
    a_type, b_type, c_type = p.dt.types
    m, n = p.c_problem[:2]
    trans_a, trans_b = (False, True) if p.c_transposed else (p.trans_a,
                                                             p.trans_b)
    product = (f"{'A^T' if trans_a else 'A'} ({a_type}) * "
               f"{'B^T' if trans_b else 'B'} ({b_type})")
    summary = (f"D[{m}x{n}] ({p.dt.name}) = {p.dt.name}("
               f"{'' if p.overwrite else 'C (f32) + '}{product})"
               if p.half_output else
               f"C[{m}x{n}] ({c_type}) {'=' if p.overwrite else '+='} "
               + product)
    return kernel_text(p, p.symbol(), request, p.dt.kind,
                       f"{summary}, K = {p.k}"
                       + (", computed as C^T = B^T A^T" if p.c_transposed
                          else ""))


def kernel_text(p, symbol, request, kind, summary, headers=()):
    """The kernel file of the GEMM `p` (a convolution's too: dotconv.py)."""
    return function_text(
        kind, summary, symbol,
        _emit_gemv_body(p) if p.gemv else _emit_stream_body(p)
        if p.b_stream else _emit_body(p), request,
        p.workspace_bytes, p.runtime_ld,
        [f"zmm{i}" for i in range(REGISTERS)]
        + [f"k{v + 1}" for v in range(
            2 if p.gemv else STREAM_VECTORS if p.b_stream else p.nv)]
        + (["k5", "k6"] if p.b_stream and p.dt.name == "bf16" else [])
        + (["k5"] if p.b_stream and p.dt.group == 4 else [])
        + (["k6"] if p.dt.group == 4 and p.partial_group_ks
           and not p.b_stream else [])
        # (k7: PACK A's partial lanes, A in place's partial groups, the
        # transposed store's columns.)
        + (["k7"] if (p.trans_a or p.a_tail or p.c_transposed)
           and p.nv < 7 else []),
        p.dt.features,
        headers=["# qm.inner_loop_flops: "
                 + str(GEMV_ROWS * gemv_a_rows(p) * gemv_chunk(p) * 2
                       if p.gemv else
                       STREAM_COLUMNS * p.stream_rows * 2 * p.dt.group
                       if p.b_stream else
                       LANES * p.dt.ops_per_lane * p.mr * p.nv * p.k_unroll)]
        + ([f"# qm.b_prepacked: nr={p.nr} k_groups={p.k_groups} "
            f"element_bytes={p.dt.element_bytes} "
            f"plus128={int(p.shift_b)}"] if p.b_prepacked else [])
        + list(headers),
        runtime_sizes=tuple(size for size, dynamic in (
            ("m", p.dynamic_m), ("n", p.dynamic_n), ("k", p.dynamic_k))
            if dynamic))

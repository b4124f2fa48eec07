"""GEMMs on Intel AMX (Advanced Matrix Extensions): bf16 with f32
accumulation (TDPBF16PS, kind "sbgemm") and 8-bit integers with int32
accumulation (TDPBUSD for u8 x s8, TDPBSSD for s8 x s8, kind "igemm"),
request isa "amx".

C += A * B, row-major, the types of dotgemm.py (its operand and header
contract, docs/KernelContract.md): A (M x K, lda), B (K x N, ldb; or N x K
with trans_b, torch's linear weights), C (M x N, ldc, f32 or s32); A, B, C
and the workspace in %rdi, %rsi, %rdx, %rcx. sbgemm also takes
dotgemm.py's bf16 output (D = bf16(C + A * B)) and epilogue (a bias along
the columns, relu, its bound), applied where the last kc block stores. An
nhwc convolution (AmxConv, below) is the same GEMM with A gathered from
its input.

AMX computes on tiles, two-dimensional registers of up to 16 rows of 64
bytes (tmm0-tmm7), configured by LDTILECFG. One TDPBF16PS adds to a 16 x 16
f32 tile the products of a 16 x 32 bf16 tile of A (its rows as stored: 32
k a row) and a 16 x 16 tile of B whose rows are k groups and whose
elements are dwords holding one group (2 bf16 or 4 bytes of k, the "VNNI"
layout dotgemm.py packs for VDPBF16PS). A tile step is therefore TK = 64 /
element bytes k (32 bf16, 64 bytes).

The register block is MR x NR = (16 or 32) x (16 or 32): MR/16 A tiles
(tmm4, tmm5), NR/16 B tiles (tmm6, tmm7) and their products' C tiles
(tmm0-tmm3). The sketch is BLIS's, as in dotgemm.py:

    for jc in 0..N step nc:                 nb = min(nc, N - jc)
      for pc in 0..K step kc:               kb = min(kc, K - pc)
        PACK B[pc:pc+kb, jc:jc+nb] -> Bp    per tile step t, per 16-column
                                            sliver s: 16 groups x 16 dwords
        for ic in 0..M step mc:             mb = min(mc, M - ic)
          PACK A[ic:ic+mb, pc:pc+kb] -> Ap  per MR rows, per tile step t:
                                            the rows' 64 bytes, side by side
          for jr in 0..nb step NR:
            for ir in 0..mb step MR:
              C tiles <- C (or zero: overwrite, first kc block)
              for t in tile steps:          TILELOADD A and B tiles,
                                            TDPBF16PS each C tile
              C <- C tiles                  (the last kc block with an
                                            epilogue or a bf16 output: C
                                            or D <- epilogue(C tiles))

Both packs zero the k past kb up to a whole tile step, so no product past
K is ever added (zero times zero); rows past mb and columns past nb are
not packed at all: what the tiles compute from them lands in C's rows and
columns past the edge, which are never stored. A block that is whole in C
loads and stores its tiles at C itself (TILELOADD with ldc as the stride);
one at an edge goes through a staging tile in the workspace: C's rows and
columns inside the edge copied in under masks, the tiles computed there,
and the same rows and columns copied back.

Other forms (docs/KernelContract.md, "AMX tiles"): A in place
(`a_layout: "direct"`: no PACK A, the tiles loaded where A's rows lie
through a per-block sliver table); B prepacked by the caller
(`b_prepacked`: dotgemm.py's panel layout with this NR, no PACK B); the
product transposed (`pack_b: false` with B^T: C^T = B^T * A^T, B^T's rows
the tiles' A in place, C through 16 x 16 transposes); and for a
convolution whose run of consecutive k no tile step divides (3 channels),
kc whole runs, each packed padded with zero k to whole tile steps.

Linux grants a process the tile data state only on request
(arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)): every call of the
kernel asks first (a system call, about 70 ns on the machine this was
written on), so a module that embeds it runs under stock mlir-runner-22 or
as an AOT object with nothing of ours linked. A kernel the system refuses
stops at UD2 (SIGILL) before its first tile instruction. The kernel ends
with TILERELEASE.
"""

from dataclasses import dataclass

from .blis import (IC, IR, JC, JR, KB, LD_BYTES_OFFSET, MB, NB, PC, WS,
                   emit_nest, emit_sliver_ends, emit_sliver_heads, min_into)
from .errors import RequestError
from .fields import (ACTIVATION_FIELDS, activation_suffix, bool_field,
                     cache_blocks, check_known, check_target_features,
                     has_activation, int_field, leading_dims,
                     read_activation, round_up)
from .dotgemm import (ELEMENT_TYPES, element_types, emit_block_input_base,
                      emit_epilogue, emit_epilogue_setup,
                      emit_leading_dims_in_bytes, emit_store_sums,
                      emit_zero_k_exit)
from .header import BIAS_OFFSET, OUTPUT_OFFSET
from .x86 import (Asm, back, check_disp, emit_fault_entry,
                  emit_relu_constants, emit_transpose_16x16, function_text,
                  fwd)

# Workspace (bytes from its pointer): dotgemm.py's header (A, B, C at 0,
# 8, 16; the part's rows and columns at 24; lda, ldb, ldc in elements at 64
# with runtime_ld, in bytes at LD_BYTES_OFFSET written by the kernel; the
# bias at BIAS_OFFSET, D at OUTPUT_OFFSET), then the tile configuration,
# 64 zero bytes (the row a pack reads past K), the staging tile of an edge
# block, and the packs.
TILECFG_OFFSET = 128
ZERO_ROW_OFFSET = 192
STEPS = 256                 # the kc block's tile steps
LDD_BYTES = 264             # bf16_output: D's leading dimension in bytes
C_BLOCK_SLOT = 272          # a_layout direct: the block's C and IR
IR_SLOT = 280               # during its K loop, and where its first A
A_END_SLOT = 288            # tile's steps end
PACK_STRIDE_SLOT = 296      # PACK B: a group of columns' distance in Bp
SPLIT_MASK_OFFSET = 304     # f16: 0xffff0000, an f32's hi part (split)
# bf16: the VPERMI2W indices that interleave two rows of 32 columns into
# the dwords of columns 0-15 and 16-31; f16: the two VPERMI2D indices of
# PACK A (_emit_split_index).
PAIR_INDEX_OFFSET = 320
STAGE_OFFSET = 448
TILE_ROWS = 16
TILE_BYTES = 64             # a tile row
TILE_SIZE = TILE_ROWS * TILE_BYTES

ARCH_PRCTL = 158            # x86-64 system call number
ARCH_REQ_XCOMP_PERM = 0x1023
XFEATURE_XTILEDATA = 18

# Tiles: C tiles first (row a, column b at 2a + b), then A's, then B's.
C_TILES = (0, 1, 2, 3)
A_TILES = (4, 5)
B_TILES = (6, 7)


@dataclass(frozen=True)
class TileType:
    """One row per element-type combination: data, not code."""
    name: str           # "bf16", "u8s8", "s8s8", "f16"
    kind: str           # the request's kind
    op: str             # the symbol's operation
    element_bytes: int  # of A and B
    group: int          # k per dword of a B tile row
    dot: str            # the tile instruction
    suffix: str         # the symbol's ISA part
    features: tuple     # LLVM features of the code
    # f16 on the bf16 tiles: each element split exactly into two bf16, x =
    # hi + lo (hi its upper 8 significant bits, lo the other 3), packed as
    # four bf16 a k: A's k the dwords (hi, hi), (lo, lo), B's k the dword
    # (hi, lo) in two tile rows, so that TDPBF16PS adds a*b = hi*hi +
    # hi*lo + lo*hi + lo*lo, each product exact in f32.
    split: bool = False

    @property
    def types(self):
        return ELEMENT_TYPES[self.name]

    @property
    def tile_k(self):
        """k a tile step: 64 bytes of A's row (four bf16 a k, split)."""
        return TILE_BYTES // (self.element_bytes * (4 if self.split else 1))


_COMMON = ("avx512f", "avx512bw", "avx512vl", "bmi2", "amx-tile")
TILE_TYPES = {
    "bf16": TileType("bf16", "sbgemm", "sbgemm", 2, 2, "tdpbf16ps",
                     "amxbf16", _COMMON + ("amx-bf16", "avx512bf16")),
    "u8s8": TileType("u8s8", "igemm", "u8s8gemm", 1, 4, "tdpbusd",
                     "amxint8", _COMMON + ("amx-int8",)),
    "s8s8": TileType("s8s8", "igemm", "s8s8gemm", 1, 4, "tdpbssd",
                     "amxint8", _COMMON + ("amx-int8",)),
    "f16": TileType("f16", "shgemm", "shgemm", 2, 1, "tdpbf16ps",
                    "amxbf16", _COMMON + ("amx-bf16", "avx512dq"),
                    split=True),
}

# Test-only deliberately broken kernels the validator must catch: drop-k
# leaves the first k of every tile step out of packed A, swap-pairs
# interleaves a group of B in reverse order (A(i,k) meets B(k+1,j)),
# write-past-edge stores an edge block's whole tiles into C, drop-low
# packs f16's hi parts alone (bf16's precision, not f16's).
FAULTS = (None, "drop-k", "swap-pairs", "write-past-edge", "segfault",
          "hang", "drop-low")


# Fields of the dot GEMMs' requests (C++'s GemmDesc) the AMX kernels take
# only at their defaults.
_NOT_YET = ("trans_a",)


def _output_field(kind):
    """The request field of a 16-bit output D: f16_output for shgemm,
    bf16_output for sbgemm (C++'s halfOutputField)."""
    return "f16_output" if kind == "shgemm" else "bf16_output"


class _FeatureRow:
    """What check_target_features needs of an ISA row."""

    def __init__(self, tt):
        self.name = "amx"
        self.features = tt.features


class Params:
    """A validated request with the blocking clamped to the problem."""

    #: The nhwc convolution whose A this GEMM gathers (AmxConv), or None.
    conv = None

    def __init__(self, request, k_run=None):
        """k_run (AmxConv, where no whole tile steps divide the input's
        run of consecutive k): K is whole runs of k_run k, kc whole runs,
        and each run is packed padded with zero k to whole tile steps."""
        kind = request.get("kind", "sbgemm")
        check_known(request, (
            "isa", "m", "n", "k", "lda", "ldb", "ldc", "mr", "nr", "kc",
            "mc", "nc", "overwrite", "runtime_ld", "parallel", "fault",
            "target_features", "k_unroll", "trans_b", "a_layout",
            "b_prepacked", "pack_b", "dynamic_m", "dynamic_n", "dynamic_k")
            + _NOT_YET
            + (("a_type",) if kind == "igemm" else
               (_output_field(kind), "ldd", "bias") + ACTIVATION_FIELDS))
        for field in _NOT_YET:
            if request.get(field, False) not in (False, "none"):
                raise RequestError(
                    f"amx kernels take A as stored: not {field} "
                    f"(dotgemm.py's kernels do)")
        # The tile step is the K unroll.
        int_field(request, "k_unroll", default=1, minimum=1, maximum=1)
        self.tt = TILE_TYPES[element_types(request, kind)]
        if request.get("isa") != "amx":
            raise RequestError("amx.py writes isa amx kernels, got "
                               + repr(request.get("isa")))
        check_target_features(request, _FeatureRow(self.tt))
        self.features = self.tt.features
        self.m = int_field(request, "m")
        self.n = int_field(request, "n")
        self.k = int_field(request, "k")
        self.overwrite = bool_field(request, "overwrite")
        self.runtime_ld = bool_field(request, "runtime_ld")
        self.parallel = bool_field(request, "parallel")
        # A run-time M (dotgemm.py's dynamic_m): the rows of C from the
        # header's part (24, 32), as the parallel form's; M blocks only.
        self.dynamic_m = bool_field(request, "dynamic_m")
        # N likewise: the columns from the header's part (40, 48); PACK B
        # and the stores already mask the last columns at run time.
        self.dynamic_n = bool_field(request, "dynamic_n")
        self.reads_range = self.parallel or self.dynamic_m or self.dynamic_n
        # A run-time K (dotgemm.py's dynamic_k): K from the header at each
        # call, the kc loop's bound; the packs and the K loop already take
        # each block's k at run time.
        self.dynamic_k = bool_field(request, "dynamic_k")
        # B stored N x K (a torch linear layer's weight): PACK B reads each
        # column's k where they lie, a tile column at a time.
        self.trans_b = bool_field(request, "trans_b")
        self.lda, self.ldb, self.ldc = leading_dims(
            request, self.m, self.n, self.k, False, self.trans_b,
            dynamic_n=self.dynamic_n, dynamic_k=self.dynamic_k)
        # D = bf16(C + A * B) (f16: f16(...), field f16_output), rounded
        # once, from the last kc block (what torch's f32 accumulator and
        # arith.truncf become), as dotgemm.py's: D's pointer at header 120,
        # its ldd (16-bit elements) at 56 with runtime_ld, else the field
        # (default n); C the earlier blocks' partial sums, scratch to the
        # caller.
        self.half_output = bool_field(request, _output_field(kind))
        # The epilogue (sbgemm, f16), as dotgemm.py's: + bias[j] (its
        # pointer at header 112), relu and its bound or leaky relu, where
        # the last kc block stores.
        self.bias = request.get("bias", "none")
        if self.bias not in ("none", "columns"):
            raise RequestError(f"bias {self.bias!r}: an amx kernel adds a "
                               "bias along the columns (\"columns\") or none")
        read_activation(request, self)
        self.relu_min_label = self.relu_max_label = None
        self.ldd = None
        if "ldd" in request and (self.runtime_ld or not self.half_output):
            raise RequestError("field 'ldd' is D's leading dimension: it "
                               f"needs {_output_field(kind)} and immediate "
                               "leading dimensions")
        if self.half_output and not self.runtime_ld:
            self.ldd = int_field(request, "ldd", minimum=self.n,
                                 default=self.n)
        # pack_b false, B^T as stored: the product transposed, C^T = B^T *
        # A^T, for C's few rows against a large B^T (a token's rows through
        # a linear layer): B^T's rows are the tiles' A, read where they lie
        # (a_layout direct), A's rows are packed as the tiles' B (PACK B^T,
        # a tile step of all of A's rows at a time), and C passes through
        # 16 x 16 transposes where its tiles are loaded and stored (the
        # epilogue and a bf16 D applied to C's rows there). The weights
        # stream once and nothing packs them. From here on m, n, lda, ldb,
        # the blocking and the part of C are the transposed problem's (its
        # rows C's columns); c_m, c_n are C's.
        self.c_m, self.c_n = self.m, self.n
        self.transposed = request.get("pack_b", True) is False
        if request.get("pack_b", True) not in (True, False):
            raise RequestError("field 'pack_b' must be true or false")
        if self.dynamic_m and (self.transposed or not self.runtime_ld
                               or k_run is not None):
            raise RequestError("dynamic_m: rows from the header, with "
                               "runtime_ld, B packed, not a convolution")
        if self.dynamic_n and (self.transposed or
                               bool_field(request, "b_prepacked")):
            raise RequestError("dynamic_n: columns from the header, with B "
                               "packed at each call (not pack_b false or "
                               "b_prepacked)")
        if self.transposed:
            why = ("B as stored (it needs trans_b: B^T's rows are read in "
                   "place)" if not self.trans_b else
                   "a_layout k-major (B^T is read in place)"
                   if request.get("a_layout", "direct") != "direct" else
                   "b_prepacked (B^T is read as it lies)"
                   if request.get("b_prepacked", False) else None)
            if why:
                raise RequestError(f"pack_b false computes C^T = B^T * A^T "
                                   f"with B^T in place: not with {why}")
            self.m, self.n = self.n, self.m
            self.lda, self.ldb = self.ldb, self.lda
        # The tile product: u8 x s8 transposed is s8 (B^T) x u8 (A).
        self.dot = ("tdpbsud" if self.transposed and self.tt.name == "u8s8"
                    else self.tt.dot)
        self.mr = int_field(request, "mr")
        self.nr = int_field(request, "nr")
        if self.nr not in (16, 32):
            raise RequestError(
                f"nr = {self.nr}: an AMX block is one or two tiles of 16 "
                "columns (16 or 32)")
        # A and C tiles may hold fewer than 16 rows (the tile
        # configuration's rows): mr 8 to 16 is one tile of mr rows, an even
        # mr from 18 to 32 two tiles of mr / 2. A convolution's tile of one
        # output row (14 pixels at res4, two tiles of 14 across res3's 28)
        # is then read where it lies, where a tile of 16 would cross rows.
        if not (8 <= self.mr <= 16 or
                (16 < self.mr <= 32 and self.mr % 2 == 0)):
            raise RequestError(
                f"mr = {self.mr}: an AMX block is one tile of 8 to 16 rows "
                "or two tiles of equal rows (an even mr up to 32)")
        blocks = request
        if self.transposed:
            # The request blocks C (mr, mc its rows); the kernel's rows are
            # C's columns.
            self.mr, self.nr = self.nr, self.mr
            blocks = dict(request, mc=request.get("nc"), nc=request.get("mc"))
        self.tm = 1 if self.mr <= TILE_ROWS else 2
        self.tn = self.nr // TILE_ROWS
        # The rows of each A and C tile (B's tiles: 16 rows of k groups).
        self.tile_rows = self.mr // self.tm
        tk = self.tt.tile_k
        self.k_run = k_run
        self.kc, self.mc, self.nc = cache_blocks(
            blocks, self.m, self.n, self.k, self.mr, self.nr, k_run or tk)
        self.fault = request.get("fault")
        if self.fault not in FAULTS:
            raise RequestError(
                f"unknown fault {self.fault!r}; expected one of "
                + ", ".join(f for f in FAULTS if f) + " (test-only)")
        if self.fault == "drop-low" and not self.tt.split:
            raise RequestError("fault drop-low: only f16 is split into "
                               "parts")
        if self.fault == "swap-pairs" and self.tt.split:
            raise RequestError("fault swap-pairs: f16's B dwords hold one "
                               "k, no pairs to swap")
        if self.fault == "swap-pairs" and self.trans_b:
            raise RequestError("fault swap-pairs: B transposed has its "
                               "groups in place, no pairs to swap")
        # B prepacked by the caller, once (constant weights; PrepackedB.h,
        # docs/KernelContract.md "B prepacked"): dotgemm.py's layout with
        # this kernel's NR, per NR columns all of K's groups (up to whole
        # tile steps, zero past K) of NR dwords, which the tile loads read
        # as they lie (a B tile: 16 groups of 16 columns, rows NR * 4 bytes
        # apart). No PACK B.
        self.b_prepacked = bool_field(request, "b_prepacked")
        if self.b_prepacked and self.fault == "swap-pairs":
            raise RequestError("fault swap-pairs is PACK B's: a prepacked B "
                               "has no PACK B")
        self.k_groups = round_up(self.k, tk) // self.tt.group
        self.b_tile_stride = self.nr * 4 if self.b_prepacked else TILE_BYTES
        self.k_steps = -(-self.kc // tk)
        # Every kc block whole tile steps (K a multiple of kc and of the
        # step, K static): PACK A copies a row's steps unrolled, without
        # masks.
        self.whole_steps = (not self.dynamic_k and self.k % tk == 0
                            and self.k % self.kc == 0)
        # Runs (k_run): a kc block's tile step t packs k_run's piece
        # step_rows[t] = (its first k from pc, its k), zero past them.
        self.step_rows = None
        if k_run:
            if self.b_prepacked:
                raise RequestError("b_prepacked: not with kc whole runs of "
                                   f"{k_run} k (the prepacked layout has no "
                                   "padding)")
            run_steps = -(-k_run // tk)
            self.step_rows = [(j * k_run + s * tk, min(tk, k_run - s * tk))
                              for j in range(self.kc // k_run)
                              for s in range(run_steps)]
            self.k_steps = len(self.step_rows)
            self.whole_steps = False
        # Packed A: per MR rows, per tile step, the MR rows' 64 bytes
        # (the A tiles of a step side by side); packed B: per NR columns,
        # per tile step, NR/16 B tiles side by side. A block's K loop then
        # reads both in order, one step after the other.
        self.a_step_bytes = self.mr * TILE_BYTES
        self.b_step_bytes = self.nr * TILE_BYTES
        self.stage_bytes = self.mr * self.nr * 4
        self.ap_offset = STAGE_OFFSET + self.stage_bytes
        # A in place ("direct"): no PACK A; the K loop loads each A tile
        # from where its rows lie, TILELOADD's stride the rows' distance
        # (lda, or a convolution's pixel step), through a table of the
        # block's slivers written where PACK A would run: per sliver, its
        # two A tiles' first rows and their strides (32 bytes). A tile that
        # cannot be read in place (rows past mb; a convolution's pixels
        # across output rows) is copied, rows kc elements apart, zero past
        # mb. No k past K is read: K and kc are whole tile steps.
        self.a_layout = request.get(
            "a_layout", "direct" if self.transposed else "k-major")
        if self.a_layout not in ("k-major", "direct"):
            raise RequestError(
                f"a_layout {self.a_layout!r}: amx kernels pack A "
                "(\"k-major\") or read it in place (\"direct\")")
        self.a_direct = self.a_layout == "direct"
        if self.transposed and self.nr not in (16, 32):
            raise RequestError(
                f"mr = {self.nr}: pack_b false blocks C's rows (the "
                "transposed product's columns) by 16 or 32")
        if self.tile_rows != TILE_ROWS and not self.a_direct:
            raise RequestError(
                f"mr = {self.mr} (tiles of {self.tile_rows} rows): only with "
                "a_layout direct (PACK A writes tiles of 16 rows)")
        if self.tt.split:
            why = ("a_layout direct" if self.a_direct else
                   "pack_b false" if self.transposed else
                   "b_prepacked" if self.b_prepacked else
                   "kc whole runs" if k_run else None)
            if why:
                raise RequestError(f"f16 is split into bf16 parts where it "
                                   f"is packed: not with {why}")
        if self.dynamic_k:
            why = ("a 16-bit D" if self.half_output else
                   "overwrite or an epilogue (with K = 0 no kc block runs "
                   "to store C)" if self.overwrite or _has_epilogue(self)
                   else "pack_b false" if self.transposed
                   else "a prepacked B (its layout spans K)"
                   if self.b_prepacked else "A in place" if self.a_direct
                   else "a convolution" if k_run else None)
            if why:
                raise RequestError(f"dynamic_k: not with {why}")
        eb = self.tt.element_bytes
        if self.a_direct:
            if k_run:
                raise RequestError("a_layout direct: not with kc whole runs "
                                   f"of {k_run} k, padded to tile steps")
            if self.k % tk or self.kc % tk:
                raise RequestError(
                    f"a_layout direct reads A in place: K ({self.k}) and kc "
                    f"({self.kc}) must be whole tile steps of {tk} k")
            self.a_copy_stride = self.kc * eb
            # A sliver's entry (32 bytes) at IR times this, IR a multiple
            # of mr.
            self.a_entry_scale = next(s for s in (1, 2, 4, 8)
                                      if s * self.mr >= 32)
            self.a_table = self.ap_offset
            self.a_copy = self.a_table + round_up(
                self.mc * self.a_entry_scale, 64)
            self.bp_offset = self.a_copy + self.mc * self.a_copy_stride
        else:
            self.bp_offset = self.ap_offset + \
                self.k_steps * self.a_step_bytes * (self.mc // self.mr)
        # (PACK B writes 32 columns (bf16) or 64 (bytes) at a time: room
        # for the slivers past nc.)
        self.workspace_bytes = self.bp_offset + (
            0 if self.b_prepacked else self.k_steps * TILE_SIZE * (
                round_up(self.nc, 4 * TILE_ROWS) // TILE_ROWS))
        check_disp(self.workspace_bytes, "workspace")
        if not self.runtime_ld:
            for ld, size in ((self.lda, eb), (self.ldb, eb), (self.ldc, 4)):
                check_disp(ld * size * max(self.m, self.k), "row")

    def symbol(self):
        lda, ldb = ((self.ldb, self.lda) if self.transposed else
                    (self.lda, self.ldb))
        lds = "_ldrt" if self.runtime_ld else (
            f"_lda{lda}_ldb{ldb}_ldc{self.ldc}"
            + (f"_ldd{self.ldd}" if self.half_output else ""))
        return (f"qm_{self.tt.op}_{self.c_m}x{self.c_n}x{self.k}_n"
                f"{'t' if self.trans_b else 'n'}"
                f"{'_mrt' if self.dynamic_m else ''}"
                f"{'_nrt' if self.dynamic_n else ''}"
                f"{'_krt' if self.dynamic_k else ''}{self.store_part()}"
                f"{('_o' + self.tt.name) if self.half_output else ''}{lds}"
                f"{'_btdirect' if self.transposed else ''}"
                f"{'_bpre' if self.b_prepacked else ''}{self.block_part()}")

    def store_part(self):
        """The symbol's overwrite and epilogue: `_b0`, `_bias`, `_relu..`."""
        return (f"{'_b0' if self.overwrite else ''}"
                f"{'_bias' if self.bias == 'columns' else ''}"
                f"{activation_suffix(self)}")

    def block_part(self):
        """The symbol's blocking, form, fault and ISA, from `_{MR}x{NR}`."""
        fault = "" if self.fault is None else "_fault_" + self.fault.replace(
            "-", "_")
        # C's blocking (the transposed product's swapped back).
        mr, nr, mc, nc = ((self.nr, self.mr, self.nc, self.mc)
                          if self.transposed else
                          (self.mr, self.nr, self.mc, self.nc))
        return (f"_{mr}x{nr}_kc{self.kc}_mc{mc}_nc{nc}"
                f"{'_adirect' if self.a_direct else ''}"
                f"{'_par' if self.parallel else ''}{fault}"
                f"_x86_64_{self.tt.suffix}")


def _tmm(index):
    return f"%tmm{index}"


def _emit_permission(asm):
    """arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA); UD2 if refused.
    The system call clobbers %rcx and %r11 (the kernel's clobbers)."""
    refused = asm.label("tile data refused")
    granted = asm.label("tile data granted")
    asm.comment("ask Linux for the tile data state (granted once a process, "
                "asking again is harmless)")
    asm.ins(f"movl ${ARCH_PRCTL}, %eax")
    asm.ins(f"movl ${ARCH_REQ_XCOMP_PERM:#x}, %edi")
    asm.ins(f"movl ${XFEATURE_XTILEDATA}, %esi")
    asm.ins("syscall")
    asm.ins("testq %rax, %rax")
    asm.ins(f"jz {fwd(granted)}")
    asm.place(refused)
    asm.ins("ud2")
    asm.place(granted)


def _emit_times_tile_rows(asm, p, reg):
    """reg *= the A and C tiles' rows (a row's bytes to a tile's)."""
    if p.tile_rows == TILE_ROWS:
        asm.ins(f"shlq $4, {reg}")
    else:
        asm.ins(f"imulq ${p.tile_rows}, {reg}, {reg}")


def _emit_tile_config(asm, p):
    """Palette 1, every tile rows of 64 bytes, loaded with LDTILECFG: the
    C and A tiles p.tile_rows, B's 16."""
    rows = [p.tile_rows if t in C_TILES + A_TILES else TILE_ROWS
            for t in range(8)]
    asm.comment("tile configuration: palette 1, tmm0-tmm7 "
                + ", ".join(map(str, rows)) + " rows x 64 bytes; then the "
                "zero row")
    asm.ins("vpxord %zmm0, %zmm0, %zmm0")
    asm.ins(f"vmovdqu64 %zmm0, {TILECFG_OFFSET}({WS})")
    asm.ins(f"vmovdqu64 %zmm0, {ZERO_ROW_OFFSET}({WS})")
    asm.ins(f"movb $1, {TILECFG_OFFSET}({WS})")
    asm.ins("movabsq $0x0040004000400040, %rax")   # colsb: 64 bytes
    asm.ins(f"movq %rax, {TILECFG_OFFSET + 16}({WS})")
    asm.ins(f"movq %rax, {TILECFG_OFFSET + 24}({WS})")
    asm.ins("movabsq $0x" + "".join(f"{r:02x}" for r in reversed(rows))
            + ", %rax")   # rows, a byte a tile
    asm.ins(f"movq %rax, {TILECFG_OFFSET + 48}({WS})")
    asm.ins(f"ldtilecfg {TILECFG_OFFSET}({WS})")


def _emit_sliver_place(asm, p):
    """IC = the packed place of the 16-column sliver at column JR: Bp +
    (JR / NR) * steps * NR * 64 + (JR % NR) * 64 (its tile among its NR
    columns'). Clobbers %rax."""
    asm.ins(f"movq {JR}, {IC}")
    asm.ins(f"andq ${-p.nr}, {IC}")
    asm.ins(f"imulq {STEPS}({WS}), {IC}")
    asm.ins(f"movq {JR}, %rax")
    asm.ins(f"andq ${p.nr - 1}, %rax")
    asm.ins(f"addq %rax, {IC}")
    asm.ins(f"shlq $6, {IC}")
    asm.ins(f"leaq {p.bp_offset}({WS}, {IC}), {IC}")


def _emit_column_mask(asm, columns):
    """%k1: the `columns` from JR on that lie inside nb (all of them from
    nb - JR >= columns on). Clobbers %rax and %rdx."""
    asm.ins(f"movq {NB}, %rax")
    asm.ins(f"subq {JR}, %rax")
    asm.ins(f"movl ${columns}, %edx")
    asm.ins("cmpq %rdx, %rax")
    asm.ins("cmovaq %rdx, %rax")
    asm.ins("movq $-1, %rdx")
    asm.ins("bzhiq %rax, %rdx, %rdx")
    asm.ins("kmovq %rdx, %k1")


def _emit_last_columns_mask(asm, columns, kmov):
    """%k1: the columns of the block's last group of `columns` (nb's
    remainder, all of them when it is whole). Clobbers %rax and %rdx."""
    asm.ins(f"movq {NB}, %rax")
    asm.ins("decq %rax")
    asm.ins(f"andq ${columns - 1}, %rax")
    asm.ins("incq %rax")
    asm.ins("movq $-1, %rdx")
    asm.ins("bzhiq %rax, %rdx, %rdx")
    asm.ins(f"{kmov} {'%edx' if kmov == 'kmovd' else '%rdx'}, %k1")


def _emit_pair_index(asm):
    """The two VPERMI2W indices at PAIR_INDEX_OFFSET: word 2j of the first
    takes word j of the first table (row k), word 2j + 1 word j of the
    second (row k + 1); the second index the same for columns 16-31."""
    for half in range(2):
        for q in range(8):          # four words a quadword
            words = []
            for w in range(4 * q, 4 * q + 4):
                j = 16 * half + w // 2
                words.append(j if w % 2 == 0 else 32 + j)
            value = sum(v << (16 * i) for i, v in enumerate(words))
            asm.ins(f"movabsq ${value:#x}, %rax")
            asm.ins(f"movq %rax, {PAIR_INDEX_OFFSET + 64 * half + 8 * q}"
                    f"({WS})")


def _emit_split_index(asm):
    """f16: the two VPERMI2D indices at PAIR_INDEX_OFFSET that interleave
    the (hi, hi) dwords of sixteen k (the first table) with their (lo, lo)
    dwords (the second) into A's rows of two tile steps (k 0-7, 8-15)."""
    for step in range(2):
        for q in range(8):          # two dwords a quadword
            k = 8 * step + q
            value = k | (16 + k) << 32
            asm.ins(f"movabsq ${value:#x}, %rax")
            asm.ins(f"movq %rax, {PAIR_INDEX_OFFSET + 64 * step + 8 * q}"
                    f"({WS})")
    asm.ins(f"movl $0xffff0000, {SPLIT_MASK_OFFSET}({WS})")


def _emit_split(asm, p, width, x, hi, lo, mask):
    """x (f32 lanes of f16 values, %{width}mm registers named by number)
    split exactly into hi = x's upper 16 bits (the bf16 toward zero; the
    mask at SPLIT_MASK_OFFSET) and lo = x - hi (at most 3 significant
    bits, so its upper 16 bits are all of it; zero where x is infinite,
    whose lo would be NaN). The drop-low fault leaves lo zero. Uses
    `mask`."""
    r = f"%{width}mm"
    lanes = 16 if width == "z" else 8
    asm.ins(f"vpandd {SPLIT_MASK_OFFSET}({WS}){{1to{lanes}}}, {r}{x}, "
            f"{r}{hi}")
    if p.fault == "drop-low":
        asm.ins(f"vpxord {r}{lo}, {r}{lo}, {r}{lo}")
        return
    asm.ins(f"vfpclassps $0x18, {r}{x}, {mask}")     # +inf, -inf
    asm.ins(f"knotw {mask}, {mask}")
    asm.ins(f"vsubps {r}{hi}, {r}{x}, {r}{lo}{{{mask}}}{{z}}")


def _emit_group_masks(asm, p, rows, kmov):
    """At a group of `rows` rows of B (IR its first packed k): %k2.. the
    rows inside the block (k below kb), or with runs (step_rows) inside
    the tile step's piece of a run, none past them; with runs, at a tile
    step's first group, MB = the step's first row of B (pc + its first
    k). Clobbers %rax, %rcx, %rdx."""
    tk = p.tt.tile_k
    asm.comment(f"rows past the block's k: masked to nothing (%k2-"
                f"%k{1 + rows})")
    if p.step_rows:
        same = asm.label("PACK B: the step's rows go on")
        asm.ins(f"movq {IR}, %rcx")
        asm.ins(f"shrq ${tk.bit_length() - 1}, %rcx")
        asm.ins("shlq $4, %rcx")                  # the step's table entry
        asm.ins(f"testq ${tk - 1}, {IR}")
        asm.ins(f"jnz {fwd(same)}")
        asm.ins(f"movq {p.step_table}({WS}, %rcx), {MB}")
        asm.ins(f"addq {PC}, {MB}")
        _emit_b_row(asm, p)
        asm.place(same)
        asm.ins(f"movq {p.step_table + 8}({WS}, %rcx), %rcx")
        asm.ins(f"movq {IR}, %rdx")
        asm.ins(f"andq ${tk - 1}, %rdx")
    else:
        asm.ins(f"movq {KB}, %rcx")
        asm.ins(f"movq {IR}, %rdx")
    for i in range(rows):
        asm.ins("movq $-1, %rax")
        asm.ins("cmpq %rcx, %rdx")
        asm.ins(f"cmovaeq {ZERO_ROW_OFFSET}({WS}), %rax")
        asm.ins(f"{kmov} {'%eax' if kmov == 'kmovd' else '%rax'}, "
                f"%k{2 + i}")
        if i + 1 < rows:
            asm.ins("incq %rdx")


def _emit_b_row(asm, p):
    """MB = where row MB (a k of B) holds column jc: B + MB * ldb + jc."""
    eb = p.tt.element_bytes
    asm.ins(f"imulq {LD_BYTES_OFFSET + 8}({WS}), {MB}")
    asm.ins(f"leaq ({MB}, {JC}, {eb}), {MB}" if eb > 1 else
            f"addq {JC}, {MB}")
    asm.ins(f"addq 8({WS}), {MB}")


def _emit_pack_b_rows(asm, p, rows, columns, kmov, body, tile_rows=1):
    """B[pc:pc+kb, jc:jc+nb] (B as stored) into VNNI tiles, a group of
    `rows` rows (a k group) at a time, the group's rows read along
    `columns` columns at a time: body(masks) loads the group's rows at
    (%rax), (%rax, %rsi), (%rax, %rsi, 2) and (%rdx) (the fourth row;
    %rsi ldb in bytes) under the masks (rows past the block's k masked to
    nothing, the last columns masked to nb too) and stores the slivers'
    tile rows from (%rcx) on, %rdi apart a block of NR columns. Each row
    is read in order, so that B streams from memory a row at a time
    (walking a sliver's rows down B instead, ldb apart, found each row's
    64 bytes in another page: bf16 16x4096x4096 87.5 GFLOPS that way, 131
    this). A group fills `tile_rows` rows of its slivers' tiles (two for
    f16's k). Registers: IR the group's first packed k, MB its first row,
    IC its place in the first sliver, JR the columns done."""
    group_loop = asm.label(f"PACK B: next group of {rows} rows")
    column_loop = asm.label(f"PACK B: next {columns} columns of the group")
    tail = asm.label("PACK B: the group's last columns, masked to nb")
    group_done = asm.label("PACK B: group done")
    same_step = asm.label("PACK B: the next group in the same tile step")
    _emit_last_columns_mask(asm, columns, kmov)
    asm.ins(f"movq {STEPS}({WS}), %rdi")
    asm.ins("movq %rdi, %rax")
    # The next `columns` columns: columns / 16 slivers on.
    asm.ins(f"shlq ${(columns * TILE_BYTES).bit_length() - 1}, %rax")
    asm.ins(f"movq %rax, {PACK_STRIDE_SLOT}({WS})")
    asm.ins(f"shlq ${(p.nr * TILE_BYTES).bit_length() - 1}, %rdi")
    asm.ins(f"movq {LD_BYTES_OFFSET + 8}({WS}), %rsi")
    asm.ins(f"movq {PC}, {MB}")
    _emit_b_row(asm, p)
    asm.ins(f"leaq {p.bp_offset}({WS}), {IC}")
    asm.ins(f"xorl {IR}d, {IR}d")
    asm.place(group_loop)
    _emit_group_masks(asm, p, rows, kmov)
    masks = tuple(f"%k{2 + i}" for i in range(rows))
    asm.ins(f"movq {MB}, %rax")
    if rows == 4:
        asm.ins("leaq (%rax, %rsi, 2), %rdx")
        asm.ins("addq %rsi, %rdx")
    asm.ins(f"movq {IC}, %rcx")
    asm.ins(f"movl ${columns}, {JR}d")
    asm.place(column_loop)
    asm.ins(f"cmpq {NB}, {JR}")
    asm.ins(f"ja {fwd(tail)}")
    body(masks)
    asm.ins("addq $64, %rax")
    if rows == 4:
        asm.ins("addq $64, %rdx")
    asm.ins(f"addq {PACK_STRIDE_SLOT}({WS}), %rcx")
    asm.ins(f"addq ${columns}, {JR}")
    asm.ins(f"jmp {back(column_loop)}")
    asm.place(tail)
    asm.ins(f"subq ${columns}, {JR}")
    asm.ins(f"cmpq {NB}, {JR}")
    asm.ins(f"jae {fwd(group_done)}")
    kand = "kandd" if kmov == "kmovd" else "kandq"
    for mask in masks:
        asm.ins(f"{kand} %k1, {mask}, {mask}")
    body(masks)
    asm.place(group_done)
    asm.ins(f"leaq ({MB}, %rsi, {rows}), {MB}")
    asm.ins(f"addq ${TILE_BYTES * tile_rows}, {IC}")
    asm.ins(f"addq ${rows}, {IR}")
    asm.ins(f"testq ${p.tt.tile_k - 1}, {IR}")
    asm.ins(f"jnz {fwd(same_step)}")
    asm.ins(f"addq ${p.b_step_bytes - TILE_SIZE}, {IC}")
    asm.place(same_step)
    asm.ins(f"movq {STEPS}({WS}), %rax")
    asm.ins(f"shlq ${p.tt.tile_k.bit_length() - 1}, %rax")
    asm.ins(f"cmpq %rax, {IR}")
    asm.ins(f"jb {back(group_loop)}")


def _emit_pack_b_pairs(asm, p):
    """bf16 B into VNNI tiles (_emit_pack_b_rows): a pair of rows, 32
    columns (two slivers) at a time, interleaved by VPERMI2W into the
    dwords of the two slivers' tiles."""
    asm.comment("PACK B: pairs of rows of B read along, 32 bf16 at a time "
                "interleaved into the pairs of two slivers, zero past kb")
    asm.ins(f"vmovdqu64 {PAIR_INDEX_OFFSET}({WS}), %zmm5")
    asm.ins(f"vmovdqu64 {PAIR_INDEX_OFFSET + 64}({WS}), %zmm6")
    first, second = ("%zmm2", "%zmm1") if p.fault == "swap-pairs" else \
        ("%zmm1", "%zmm2")

    def body(masks):
        asm.ins(f"vmovdqu16 (%rax), %zmm1{{{masks[0]}}}{{z}}")
        asm.ins(f"vmovdqu16 (%rax, %rsi), %zmm2{{{masks[1]}}}{{z}}")
        asm.ins("vmovdqa64 %zmm5, %zmm3")
        asm.ins("vmovdqa64 %zmm6, %zmm4")
        asm.ins(f"vpermi2w {second}, {first}, %zmm3")
        asm.ins(f"vpermi2w {second}, {first}, %zmm4")
        asm.ins("vmovdqu32 %zmm3, (%rcx)")
        if p.nr == 2 * TILE_ROWS:   # the second sliver: the next tile
            asm.ins(f"vmovdqu32 %zmm4, {TILE_SIZE}(%rcx)")
        else:                       # the next block's
            asm.ins("vmovdqu32 %zmm4, (%rcx, %rdi)")

    _emit_pack_b_rows(asm, p, 2, 32, "kmovd", body)


def _emit_pack_b_split(asm, p):
    """f16 B into the bf16 tiles (_emit_pack_b_rows): a row of B read 32
    columns (two slivers) at a time, widened to f32, split (_emit_split)
    into the dwords (hi, lo) of each column, stored twice: the k's two
    rows of its slivers' tiles (TileType.split)."""
    asm.comment("PACK B: rows of f16 read along, 32 at a time split into "
                "(hi, lo) bf16 dwords, each the two tile rows of its k")

    def body(masks):
        asm.ins(f"vmovdqu16 (%rax), %zmm0{{{masks[0]}}}{{z}}")
        asm.ins("vcvtph2ps %ymm0, %zmm1")
        asm.ins("vextracti64x4 $1, %zmm0, %ymm0")
        asm.ins("vcvtph2ps %ymm0, %zmm2")
        for x in (1, 2):
            _emit_split(asm, p, "z", x, 3, 4, "%k4")
            asm.ins("vpsrld $16, %zmm3, %zmm3")
            asm.ins(f"vpord %zmm4, %zmm3, %zmm{x}")
        second = ((TILE_SIZE, "(%rcx)") if p.nr == 2 * TILE_ROWS else
                  (0, "(%rcx, %rdi)"))
        for x, (disp, base) in ((1, (0, "(%rcx)")), (2, second)):
            for row in (0, TILE_BYTES):
                asm.ins(f"vmovdqu32 %zmm{x}, {disp + row}{base}")

    _emit_pack_b_rows(asm, p, 1, 32, "kmovd", body, tile_rows=2)


def _emit_pack_b_transposed(asm, p):
    """B^T[jc:jc+nb, pc:pc+kb] (stored N x K) into VNNI tiles: a column's
    64 bytes of k of a tile step are its tile column as they lie (one dword
    a group), loaded under the mask of the k left; sixteen columns
    transposed into the tile's rows; a column past nb is the zero row; with
    runs (step_rows), each step's piece of a run from the step table.
    Registers: JR the sliver's first column, MB its row of B^T, IC the
    destination, IR the step's first k, %rsi ldb in bytes, %rdi the zero
    row, %rdx the column's row, %rax and %rcx scratch."""
    tt = p.tt
    eb = tt.element_bytes
    tk = tt.tile_k
    # f16: two tile steps a pass (16 k of each column, the transpose's
    # sixteen rows), each k two tile rows.
    pass_k = 2 * tk if tt.split else tk
    sliver_loop = asm.label("PACK B^T: next 16 columns")
    step_loop = asm.label("PACK B^T: next tile step")
    load = "vmovdqu16" if eb == 2 else "vmovdqu8"
    asm.comment("PACK B^T: each column's k as they lie, 16 columns "
                "transposed into a tile, zero past kb and nb"
                + ("; f16: a column's 16 k (two steps) split into (hi, "
                   "lo) dwords, each k two tile rows" if tt.split else ""))
    asm.ins(f"movq {LD_BYTES_OFFSET + 8}({WS}), %rsi")
    asm.ins(f"leaq {ZERO_ROW_OFFSET}({WS}), %rdi")
    asm.ins(f"xorl {JR}d, {JR}d")
    asm.place(sliver_loop)
    asm.ins(f"leaq ({JC}, {JR}), {MB}")
    asm.ins(f"imulq %rsi, {MB}")
    asm.ins(f"leaq ({MB}, {PC}, {eb}), {MB}" if eb > 1 else
            f"addq {PC}, {MB}")
    asm.ins(f"addq 8({WS}), {MB}")
    _emit_sliver_place(asm, p)
    asm.ins(f"xorl {IR}d, {IR}d")
    asm.place(step_loop)
    if p.step_rows:
        # The step's piece of a run: its k from pc + its first.
        asm.ins(f"movq {IR}, %rcx")
        asm.ins(f"shrq ${tk.bit_length() - 1}, %rcx")
        asm.ins("shlq $4, %rcx")
        asm.ins(f"movq {p.step_table + 8}({WS}, %rcx), %rax")
        asm.ins(f"movq {p.step_table}({WS}, %rcx), %rdx")
        asm.ins(f"leaq ({MB}, %rdx, {eb}), %rdx" if eb > 1 else
                f"addq {MB}, %rdx")
    else:
        # The k of this step (f16: of two steps): all of them, or the k
        # left of kb.
        asm.ins(f"movq {KB}, %rax")
        asm.ins(f"subq {IR}, %rax")
        asm.ins(f"movl ${pass_k}, %ecx")
        asm.ins("cmpq %rcx, %rax")
        asm.ins("cmovaq %rcx, %rax")
    asm.ins("movq $-1, %rcx")
    asm.ins("bzhiq %rax, %rcx, %rcx")
    asm.ins("kmovq %rcx, %k2")
    if not p.step_rows:
        asm.ins(f"movq {MB}, %rdx")
    for j in range(TILE_ROWS):
        asm.ins(f"leaq {j}({JR}), %rcx")
        asm.ins(f"cmpq {NB}, %rcx")
        asm.ins("movq %rdx, %rax")
        asm.ins("cmovaeq %rdi, %rax")
        if tt.split:
            # The column's 16 k (two steps): their (hi, lo) dwords.
            asm.ins(f"vmovdqu16 (%rax), %ymm{j}{{%k2}}{{z}}")
            asm.ins(f"vcvtph2ps %ymm{j}, %zmm{j}")
            _emit_split(asm, p, "z", j, 16, 17, "%k4")
            asm.ins("vpsrld $16, %zmm16, %zmm16")
            asm.ins(f"vpord %zmm17, %zmm16, %zmm{j}")
        else:
            asm.ins(f"{load} (%rax), %zmm{j}{{%k2}}{{z}}")
        asm.ins("addq %rsi, %rdx")
    # sgemm's transpose of sixteen vectors: zmm g = every column's dword g,
    # the tile's row g (f16: its k g, rows 2g and 2g + 1).
    emit_transpose_16x16(asm)
    if tt.split:
        # Its first step's 8 k, then (where kb reaches it) the second's.
        one_step = asm.label("PACK B^T: kb ends in the first step")
        for g in range(2 * tk):
            if g == tk:
                asm.ins(f"leaq {tk}({IR}), %rax")
                asm.ins(f"cmpq {KB}, %rax")
                asm.ins(f"jae {fwd(one_step)}")
            base = p.b_step_bytes if g >= tk else 0
            for row in (2 * (g % tk), 2 * (g % tk) + 1):
                asm.ins(f"vmovdqu32 %zmm{g}, "
                        f"{base + row * TILE_BYTES}({IC})")
        asm.place(one_step)
    else:
        for g in range(TILE_ROWS):
            asm.ins(f"vmovdqu32 %zmm{g}, {g * TILE_BYTES}({IC})")
    asm.ins(f"addq ${p.b_step_bytes * pass_k // tk}, {IC}")
    asm.ins(f"addq ${pass_k}, {IR}")
    if p.step_rows:
        asm.ins(f"movq {STEPS}({WS}), %rax")
        asm.ins(f"shlq ${tk.bit_length() - 1}, %rax")
        asm.ins(f"cmpq %rax, {IR}")
    else:
        asm.ins(f"addq ${pass_k * eb}, {MB}")
        asm.ins(f"cmpq {KB}, {IR}")
    asm.ins(f"jb {back(step_loop)}")
    asm.ins(f"addq $16, {JR}")
    asm.ins(f"cmpq {NB}, {JR}")
    asm.ins(f"jb {back(sliver_loop)}")


def _emit_pack_b(asm, p):
    """8-bit B into VNNI tiles (_emit_pack_b_rows): a group of four rows,
    64 columns (four slivers) at a time, interleaved by byte and word
    unpacks into dwords (the lowest k in the lowest byte) within 128-bit
    lanes, the lanes of the four results transposed into the four
    slivers' tile rows."""
    asm.comment("PACK B: groups of 4 rows read along, 64 bytes at a time "
                "interleaved into dwords, zero past kb")
    first, second = ((1, 0), (3, 2)) if p.fault == "swap-pairs" else \
        ((0, 1), (2, 3))
    rows = ("(%rax)", "(%rax, %rsi)", "(%rax, %rsi, 2)", "(%rdx)")

    def body(masks):
        for i in range(4):
            asm.ins(f"vmovdqu8 {rows[i]}, %zmm{i}{{{masks[i]}}}{{z}}")
        asm.ins(f"vpunpcklbw %zmm{first[1]}, %zmm{first[0]}, %zmm4")
        asm.ins(f"vpunpckhbw %zmm{first[1]}, %zmm{first[0]}, %zmm5")
        asm.ins(f"vpunpcklbw %zmm{second[1]}, %zmm{second[0]}, %zmm6")
        asm.ins(f"vpunpckhbw %zmm{second[1]}, %zmm{second[0]}, %zmm7")
        # q0..q3: lane L holds columns 16 L + 4 i .. + 3.
        asm.ins("vpunpcklwd %zmm6, %zmm4, %zmm0")
        asm.ins("vpunpckhwd %zmm6, %zmm4, %zmm1")
        asm.ins("vpunpcklwd %zmm7, %zmm5, %zmm2")
        asm.ins("vpunpckhwd %zmm7, %zmm5, %zmm3")
        asm.ins("vshufi32x4 $0x88, %zmm1, %zmm0, %zmm4")
        asm.ins("vshufi32x4 $0xdd, %zmm1, %zmm0, %zmm5")
        asm.ins("vshufi32x4 $0x88, %zmm3, %zmm2, %zmm6")
        asm.ins("vshufi32x4 $0xdd, %zmm3, %zmm2, %zmm7")
        # Sliver i of the four: its place from %rcx (nr 16: the fourth
        # three blocks on, %rcx moved a block for it).
        places = (("(%rcx)", f"{TILE_SIZE}(%rcx)", "(%rcx, %rdi)",
                   f"{TILE_SIZE}(%rcx, %rdi)") if p.nr == 2 * TILE_ROWS
                  else ("(%rcx)", "(%rcx, %rdi)", "(%rcx, %rdi, 2)",
                        "(%rcx, %rdi, 2)"))
        for lane, (a, b, imm) in enumerate(((4, 6, 0x88), (5, 7, 0x88),
                                            (4, 6, 0xdd), (5, 7, 0xdd))):
            asm.ins(f"vshufi32x4 ${imm:#x}, %zmm{b}, %zmm{a}, %zmm0")
            if lane == 3 and p.nr == TILE_ROWS:
                asm.ins("addq %rdi, %rcx")
            asm.ins(f"vmovdqu32 %zmm0, {places[lane]}")
        if p.nr == TILE_ROWS:
            asm.ins("subq %rdi, %rcx")

    _emit_pack_b_rows(asm, p, 4, 64, "kmovq", body)


def _emit_pack_a_head(asm, p, step_k):
    """Before PACK A's rows: %k2 all `step_k` k of a load, %k3 the k of the
    block's last (kb's remainder, all of them when whole), both without
    their first k under the drop-k fault; %rdi the block's first source
    row (A + ic * lda + pc, or a convolution's input + column[pc] in its
    base slot), %rdx the packed place, IR 0."""
    asm.ins(f"leaq -1({KB}), %rax")
    asm.ins(f"andq ${step_k - 1}, %rax")
    asm.ins("incq %rax")
    asm.ins("movq $-1, %rsi" if step_k >= 32 else
            f"movl ${(1 << step_k) - 1}, %esi")
    asm.ins("bzhiq %rax, %rsi, %rax")
    if p.fault == "drop-k":
        asm.ins("andq $-2, %rax")
        asm.ins("andq $-2, %rsi")
    asm.ins("kmovq %rax, %k3")
    asm.ins("kmovq %rsi, %k2")
    if p.conv is not None:
        asm.comment("source rows: input + column[pc] + row[ic + r] (the "
                    "offset tables; a kc block lies within one run of the "
                    "input)")
        emit_block_input_base(asm, p.conv)
    else:
        eb = p.tt.element_bytes
        asm.ins(f"movq {LD_BYTES_OFFSET}({WS}), %rsi")
        asm.ins(f"movq {IC}, %rdi")
        asm.ins("imulq %rsi, %rdi")
        asm.ins(f"leaq (%rdi, {PC}, {eb}), %rdi" if eb > 1 else
                f"addq {PC}, %rdi")
        asm.ins(f"addq 0({WS}), %rdi")
    asm.ins(f"leaq {p.ap_offset}({WS}), %rdx")
    asm.ins(f"xorl {IR}d, {IR}d")


def _emit_pack_a_row_source(asm, p):
    """At a row of PACK A: a convolution's row IR from its offset table
    into %rdi (a GEMM's row is the last one's plus lda already)."""
    if p.conv is not None:
        asm.ins(f"leaq ({IC}, {IR}), %rax")
        asm.ins(f"movq {p.conv.row_table}({WS}, %rax, 8), %rdi")
        asm.ins(f"addq {p.conv.base_slot}({WS}), %rdi")


def _emit_pack_a(asm, p):
    """A[ic:ic+mb, pc:pc+kb] into rows of 64 bytes a tile step (row r of
    step t at Ap + (r / MR) * steps * MR * 64 + t * MR * 64 + (r % MR) * 64),
    zero past kb: every step's
    load whole (%k2) but the last's, masked to the k left (%k3); where
    every block is whole steps (whole_steps), a row's steps unrolled.
    Registers: IR the row, %rdi the source row, %rdx its packed place, JR
    the k left."""
    tt = p.tt
    eb = tt.element_bytes
    tk = tt.tile_k
    row_loop = asm.label("PACK A: next row")
    step_loop = asm.label("PACK A: next tile step of the row")
    last = asm.label("PACK A: the last tile step, masked to kb")
    stored = asm.label("PACK A: store the step")
    next_row = asm.label("PACK A: the next row's place")
    load = "vmovdqu16" if eb == 2 else "vmovdqu8"
    asm.comment(f"PACK A: rows of {tk} k a tile step, zero past kb")
    _emit_pack_a_head(asm, p, tk)
    conv = p.conv
    asm.place(row_loop)
    _emit_pack_a_row_source(asm, p)
    if p.whole_steps:
        # Every block is kc, whole tile steps: the row's steps unrolled,
        # plain moves.
        steps = p.kc // tk
        for t in range(steps):
            reg = f"%zmm{t % 8}"
            if t == 0 and p.fault == "drop-k":
                asm.ins(f"{load} (%rdi), {reg}{{%k2}}{{z}}")
            else:
                asm.ins(f"vmovdqu64 {t * TILE_BYTES}(%rdi), {reg}")
            asm.ins(f"vmovdqu64 {reg}, {t * p.a_step_bytes}(%rdx)")
        if conv is None:
            asm.ins(f"addq {LD_BYTES_OFFSET}({WS}), %rdi")
        asm.ins("addq $64, %rdx")
        asm.ins(f"incq {IR}")
        asm.ins(f"testq ${p.mr - 1}, {IR}")
        asm.ins(f"jnz {fwd(next_row)}")
        asm.ins(f"addq ${steps * p.a_step_bytes - p.mr * TILE_BYTES}, %rdx")
        asm.place(next_row)
        asm.ins(f"cmpq {MB}, {IR}")
        asm.ins(f"jb {back(row_loop)}")
        return
    asm.ins("movq %rdi, %rax")
    asm.ins("movq %rdx, %rcx")
    asm.ins(f"movq {KB}, {JR}")
    asm.place(step_loop)
    asm.ins(f"cmpq ${tk}, {JR}")
    asm.ins(f"jle {fwd(last)}")
    asm.ins(f"{load} (%rax), %zmm0{{%k2}}{{z}}")
    asm.ins(f"jmp {fwd(stored)}")
    asm.place(last)
    asm.ins(f"{load} (%rax), %zmm0{{%k3}}{{z}}")
    asm.place(stored)
    asm.ins("vmovdqu32 %zmm0, (%rcx)")
    asm.ins("addq $64, %rax")
    asm.ins(f"addq ${p.a_step_bytes}, %rcx")
    asm.ins(f"subq ${tk}, {JR}")
    asm.ins(f"jg {back(step_loop)}")
    if conv is None:
        asm.ins(f"addq {LD_BYTES_OFFSET}({WS}), %rdi")
    asm.ins("addq $64, %rdx")
    asm.ins(f"incq {IR}")
    # After the last row of MR, the next MR rows' steps start where this
    # row's would continue, MR - 1 rows back.
    asm.ins(f"testq ${p.mr - 1}, {IR}")
    asm.ins(f"jnz {fwd(next_row)}")
    asm.ins(f"leaq {-(p.mr - 1) * TILE_BYTES}(%rcx), %rdx")
    asm.place(next_row)
    asm.ins(f"cmpq {MB}, {IR}")
    asm.ins(f"jb {back(row_loop)}")


def _emit_pack_a_split(asm, p):
    """f16 A[ic:ic+mb, pc:pc+kb] into the layout of _emit_pack_a: a row's
    16 k a pass (two tile steps) widened to f32, split (_emit_split),
    their dwords (hi, hi) and (lo, lo) interleaved k by k into the two
    steps' rows (TileType.split); the last pass masked to kb (%k3), zero
    past it, its second step stored where kb reaches it. Registers: IR
    the row, %rdi the source row, %rdx its packed place, JR the k left."""
    tk = p.tt.tile_k
    pass_k = 2 * tk
    row_loop = asm.label("PACK A: next row")
    step_loop = asm.label("PACK A: next two tile steps of the row")
    last = asm.label("PACK A: the last pass, masked to kb")
    loaded = asm.label("PACK A: split the pass")
    one_step = asm.label("PACK A: kb ends in the pass's first step")
    asm.comment(f"PACK A: rows of f16, {pass_k} k (two tile steps) a pass "
                "split into (hi, hi), (lo, lo) bf16 dwords, zero past kb")
    asm.ins(f"vmovdqu32 {PAIR_INDEX_OFFSET}({WS}), %zmm6")
    asm.ins(f"vmovdqu32 {PAIR_INDEX_OFFSET + 64}({WS}), %zmm5")
    _emit_pack_a_head(asm, p, pass_k)
    conv = p.conv
    asm.place(row_loop)
    _emit_pack_a_row_source(asm, p)
    asm.ins("movq %rdi, %rax")
    asm.ins("movq %rdx, %rcx")
    asm.ins(f"movq {KB}, {JR}")
    asm.place(step_loop)
    asm.ins(f"cmpq ${pass_k}, {JR}")
    asm.ins(f"jle {fwd(last)}")
    asm.ins("vmovdqu16 (%rax), %ymm0{%k2}{z}")
    asm.ins(f"jmp {fwd(loaded)}")
    asm.place(last)
    asm.ins("vmovdqu16 (%rax), %ymm0{%k3}{z}")
    asm.place(loaded)
    asm.ins("vcvtph2ps %ymm0, %zmm0")
    _emit_split(asm, p, "z", 0, 1, 2, "%k4")
    for part in (1, 2):
        asm.ins(f"vpsrld $16, %zmm{part}, %zmm3")
        asm.ins(f"vpord %zmm3, %zmm{part}, %zmm{part}")
    asm.ins("vmovdqa64 %zmm6, %zmm3")
    asm.ins("vpermi2d %zmm2, %zmm1, %zmm3")
    asm.ins("vmovdqa64 %zmm5, %zmm4")
    asm.ins("vpermi2d %zmm2, %zmm1, %zmm4")
    asm.ins("vmovdqu32 %zmm3, (%rcx)")
    asm.ins(f"cmpq ${tk}, {JR}")
    asm.ins(f"jle {fwd(one_step)}")
    asm.ins(f"vmovdqu32 %zmm4, {p.a_step_bytes}(%rcx)")
    asm.place(one_step)
    asm.ins(f"addq ${2 * pass_k}, %rax")
    asm.ins(f"addq ${2 * p.a_step_bytes}, %rcx")
    asm.ins(f"subq ${pass_k}, {JR}")
    asm.ins(f"jg {back(step_loop)}")
    if conv is None:
        asm.ins(f"addq {LD_BYTES_OFFSET}({WS}), %rdi")
    _emit_pack_a_next_row(asm, p, row_loop)


def _emit_pack_a_next_row(asm, p, row_loop):
    """The end of a PACK A row whose steps sit a_step_bytes apart from
    %rdx: the next row's place (64 bytes on, or after the last of MR rows
    the next MR rows' first step), back to `row_loop` while rows of the
    block are left."""
    next_row = asm.label("PACK A: the next row's place")
    asm.ins("addq $64, %rdx")
    asm.ins(f"incq {IR}")
    asm.ins(f"testq ${p.mr - 1}, {IR}")
    asm.ins(f"jnz {fwd(next_row)}")
    asm.comment("the next MR rows' steps")
    asm.ins(f"movq {STEPS}({WS}), %rax")
    asm.ins(f"imulq ${p.a_step_bytes}, %rax, %rax")
    asm.ins(f"leaq {-p.mr * TILE_BYTES}(%rdx, %rax), %rdx")
    asm.place(next_row)
    asm.ins(f"cmpq {MB}, {IR}")
    asm.ins(f"jb {back(row_loop)}")


def _emit_pack_a_runs(asm, p):
    """A convolution's A whose kc block is whole runs (k_run): each tile
    step of a row its piece of a run (step_rows), loaded from input +
    row[ic + r] + column[pc + first k] under the mask of its k, zero past
    them; the block's steps' column bases first. Rows in the layout of
    _emit_pack_a. Registers: IR the row, %rax its offset, %rdx its packed
    place, %rsi a step's base."""
    conv = p.conv
    tt = p.tt
    eb = tt.element_bytes
    tk = tt.tile_k
    row_loop = asm.label("PACK A: next row")
    row_done = asm.label("PACK A: the row's steps done")
    load = "vmovdqu16" if eb == 2 else "vmovdqu8"
    asm.comment(f"PACK A: runs of {p.k_run} k, each padded to whole tile "
                "steps")
    for t, (row, _) in enumerate(p.step_rows):
        # A step past K (the last block's) keeps a base inside the table.
        asm.ins(f"leaq {row}({PC}), %rax")
        asm.ins(f"movl ${p.k - 1}, %ecx")
        asm.ins("cmpq %rcx, %rax")
        asm.ins("cmovaq %rcx, %rax")
        asm.ins(f"movq {conv.col_table}({WS}, %rax, 8), %rax")
        asm.ins(f"addq 0({WS}), %rax")
        asm.ins(f"movq %rax, {p.step_cols + 8 * t}({WS})")
    counts = sorted({count for _, count in p.step_rows})
    masks = {}
    for i, count in enumerate(counts):
        masks[count] = f"%k{2 + i}"
        asm.ins(f"movq ${(1 << count) - 1 if count < 64 else -1}, %rax")
        asm.ins(f"kmovq %rax, %k{2 + i}")
    asm.ins(f"leaq {p.ap_offset}({WS}), %rdx")
    asm.ins(f"xorl {IR}d, {IR}d")
    asm.place(row_loop)
    asm.ins(f"leaq ({IC}, {IR}), %rax")
    asm.ins(f"movq {conv.row_table}({WS}, %rax, 8), %rax")
    for t, (_, count) in enumerate(p.step_rows):
        if t and p.k % p.kc:
            asm.ins(f"cmpq ${t}, {STEPS}({WS})")
            asm.ins(f"jbe {fwd(row_done)}")
        asm.ins(f"movq {p.step_cols + 8 * t}({WS}), %rsi")
        mask = masks[count]
        if t == 0 and p.fault == "drop-k":
            asm.ins(f"kshiftrq $1, {mask}, %k1")
            asm.ins(f"kshiftlq $1, %k1, %k1")
            mask = "%k1"
        asm.ins(f"{load} (%rsi, %rax), %zmm0{{{mask}}}{{z}}")
        asm.ins(f"vmovdqu64 %zmm0, {t * p.a_step_bytes}(%rdx)")
    asm.place(row_done)
    _emit_pack_a_next_row(asm, p, row_loop)


def _a_entry(p, field):
    """The memory operand of the current sliver's (IR's) A table entry:
    field 0 and 8 its A tiles' first rows, 16 and 24 their strides."""
    return f"{p.a_table + field}({WS}, {IR}, {p.a_entry_scale})"


def _emit_a_source(asm, p, reg, row):
    """reg = where row IR + `row` (an immediate) of the block holds its
    block of k: A + (ic + r) * lda + pc elements, or a convolution's input
    + column[pc] + row[ic + r]; only reg written."""
    if p.conv is not None:
        asm.ins(f"leaq ({IC}, {IR}), {reg}")
        asm.ins(f"movq {p.conv.row_table + 8 * row}({WS}, {reg}, 8), {reg}")
        asm.ins(f"addq {p.conv.base_slot}({WS}), {reg}")
        return
    asm.ins(f"leaq {row}({IC}, {IR}), {reg}")
    asm.ins(f"imulq {LD_BYTES_OFFSET}({WS}), {reg}")
    eb = p.tt.element_bytes
    asm.ins(f"leaq ({reg}, {PC}, {eb}), {reg}" if eb > 1 else
            f"addq {PC}, {reg}")
    asm.ins(f"addq 0({WS}), {reg}")


def _emit_copy_rows(asm, p, first, rows):
    """Rows IR + first .. IR + first + rows - 1 of the block, kb elements
    each (whole 64-byte tile steps), copied to %rdi on, a_copy_stride
    bytes apart; a row at or past mb zero. Uses JR, %rax, %rcx, %rdx,
    %rsi."""
    row = asm.label("A copy: next row")
    step = asm.label("A copy: next 64 bytes")
    zero = asm.label("A copy: a row past mb, zero")
    zero_step = asm.label("A copy: next 64 zero bytes")
    copied = asm.label("A copy: row done")
    eb = p.tt.element_bytes
    asm.ins(f"leaq ({KB}, {KB}), %rdx" if eb == 2 else f"movq {KB}, %rdx")
    asm.ins(f"movq ${first}, {JR}")
    asm.place(row)
    asm.ins(f"leaq ({IR}, {JR}), %rax")
    asm.ins(f"cmpq {MB}, %rax")
    asm.ins(f"jae {fwd(zero)}")
    if p.conv is not None:
        asm.ins(f"addq {IC}, %rax")
        asm.ins(f"movq {p.conv.row_table}({WS}, %rax, 8), %rsi")
        asm.ins(f"addq {p.conv.base_slot}({WS}), %rsi")
    else:
        asm.ins(f"leaq ({IC}, %rax), %rsi")
        asm.ins(f"imulq {LD_BYTES_OFFSET}({WS}), %rsi")
        asm.ins(f"leaq (%rsi, {PC}, {eb}), %rsi" if eb > 1 else
                f"addq {PC}, %rsi")
        asm.ins(f"addq 0({WS}), %rsi")
    asm.ins("xorl %ecx, %ecx")
    asm.place(step)
    asm.ins("vmovdqu64 (%rsi, %rcx), %zmm0")
    asm.ins("vmovdqu64 %zmm0, (%rdi, %rcx)")
    asm.ins("addq $64, %rcx")
    asm.ins("cmpq %rdx, %rcx")
    asm.ins(f"jb {back(step)}")
    asm.ins(f"jmp {fwd(copied)}")
    asm.place(zero)
    asm.ins("vpxord %zmm0, %zmm0, %zmm0")
    asm.ins("xorl %ecx, %ecx")
    asm.place(zero_step)
    asm.ins("vmovdqu64 %zmm0, (%rdi, %rcx)")
    asm.ins("addq $64, %rcx")
    asm.ins("cmpq %rdx, %rcx")
    asm.ins(f"jb {back(zero_step)}")
    asm.place(copied)
    asm.ins(f"addq ${p.a_copy_stride}, %rdi")
    asm.ins(f"incq {JR}")
    asm.ins(f"cmpq ${first + rows}, {JR}")
    asm.ins(f"jb {back(row)}")


def _emit_a_in_place(asm, p):
    """A in place (a_layout direct), where PACK A would run: the block's
    sliver table. A GEMM's sliver: its rows where they lie, lda bytes
    apart, when all MR are before mb, else copied whole. A convolution's
    A tile (p.tile_rows pixels): where they lie when all are before mb and
    each is the pixel step past the last (one output row, checked in the
    row table), else copied; a copied tile's rows are the pixel step apart
    too, so one stride serves the sliver's two tiles. (Tiles of fewer
    rows dividing the output row, mr 28 at rows of 14, 28 or 56 pixels,
    never cross one.)"""
    sliver = asm.label("A in place: next sliver")
    eb = p.tt.element_bytes
    conv = p.conv
    asm.comment(f"A in place: the block's {p.mr}-row slivers' tiles where "
                "they lie; no PACK A")
    if conv is not None:
        emit_block_input_base(asm, conv)
    asm.ins(f"xorl {IR}d, {IR}d")
    asm.place(sliver)
    if conv is None:
        copy = asm.label("A in place: a sliver past mb, copied")
        done = asm.label("A in place: sliver done")
        asm.ins(f"movq {MB}, %rax")
        asm.ins(f"subq {IR}, %rax")
        asm.ins(f"cmpq ${p.mr}, %rax")
        asm.ins(f"jb {fwd(copy)}")
        _emit_a_source(asm, p, "%rsi", 0)
        asm.ins(f"movq {LD_BYTES_OFFSET}({WS}), %rcx")
        asm.ins(f"movq %rsi, {_a_entry(p, 0)}")
        _emit_times_tile_rows(asm, p, "%rcx")
        asm.ins("addq %rcx, %rsi")
        asm.ins(f"movq %rsi, {_a_entry(p, 8)}")
        asm.ins(f"movq {LD_BYTES_OFFSET}({WS}), %rcx")
        asm.ins(f"movq %rcx, {_a_entry(p, 16)}")
        asm.ins(f"movq %rcx, {_a_entry(p, 24)}")
        asm.ins(f"jmp {fwd(done)}")
        asm.place(copy)
        asm.ins(f"imulq ${p.a_copy_stride}, {IR}, %rdi")
        asm.ins(f"leaq {p.a_copy}({WS}, %rdi), %rdi")
        asm.ins(f"movq %rdi, {_a_entry(p, 0)}")
        asm.ins(f"leaq {p.tile_rows * p.a_copy_stride}(%rdi), %rax")
        asm.ins(f"movq %rax, {_a_entry(p, 8)}")
        asm.ins(f"movq ${p.a_copy_stride}, {_a_entry(p, 16)}")
        asm.ins(f"movq ${p.a_copy_stride}, {_a_entry(p, 24)}")
        _emit_copy_rows(asm, p, 0, p.mr)
        asm.place(done)
    else:
        for h in range(p.tm):
            first = h * p.tile_rows
            copy = asm.label(f"A in place: tile {h} copied")
            done = asm.label(f"A in place: tile {h} done")
            asm.ins(f"movq {MB}, %rax")
            asm.ins(f"subq {IR}, %rax")
            asm.ins(f"cmpq ${first + p.tile_rows}, %rax")
            asm.ins(f"jb {fwd(copy)}")
            asm.comment("in one output row: each pixel the pixel step past "
                        "the last")
            asm.ins(f"leaq ({IC}, {IR}), %rcx")
            for j in range(first + 1, first + p.tile_rows):
                asm.ins(f"movq {conv.row_table + 8 * j}({WS}, %rcx, 8), "
                        "%rax")
                asm.ins(f"subq {conv.row_table + 8 * (j - 1)}({WS}, %rcx, "
                        "8), %rax")
                asm.ins(f"cmpq ${conv.pixel_step}, %rax")
                asm.ins(f"jne {fwd(copy)}")
            _emit_a_source(asm, p, "%rsi", first)
            asm.ins(f"movq %rsi, {_a_entry(p, 8 * h)}")
            asm.ins(f"movq ${conv.pixel_step}, {_a_entry(p, 16 + 8 * h)}")
            asm.ins(f"jmp {fwd(done)}")
            asm.place(copy)
            asm.ins(f"leaq {first}({IR}), %rdi")
            asm.ins(f"imulq ${p.a_copy_stride}, %rdi")
            asm.ins(f"leaq {p.a_copy}({WS}, %rdi), %rdi")
            asm.ins(f"movq %rdi, {_a_entry(p, 8 * h)}")
            asm.ins(f"movq ${p.a_copy_stride}, {_a_entry(p, 16 + 8 * h)}")
            _emit_copy_rows(asm, p, first, p.tile_rows)
            asm.place(done)
    if p.fault == "drop-k":
        asm.comment("fault drop-k: the sliver's first tile a k late")
        asm.ins(f"addq ${eb}, {_a_entry(p, 0)}")
    asm.ins(f"addq ${p.mr}, {IR}")
    asm.ins(f"cmpq {MB}, {IR}")
    asm.ins(f"jb {back(sliver)}")


def _column_masks(asm):
    """%k1, %k2: the block's columns inside nb (columns jr.. of the 32 the
    staging tile holds; a column count of 32 or more keeps all)."""
    asm.ins(f"movq {NB}, %rax")
    asm.ins(f"subq {JR}, %rax")
    asm.ins("movl $32, %ecx")
    asm.ins("cmpq %rcx, %rax")
    asm.ins("cmovaq %rcx, %rax")
    asm.ins("movq $-1, %rcx")
    asm.ins("bzhiq %rax, %rcx, %rcx")
    asm.ins("kmovd %ecx, %k1")
    asm.ins("kshiftrd $16, %k1, %k2")


def _emit_stage(asm, p, into_tiles):
    """An edge block's C rows (at most mr, below mb) and columns (below nb)
    between C and the staging tile, under the column masks; %rdx C's
    block, %rsi ldc in bytes."""
    row_loop = asm.label("staging: next row")
    asm.ins(f"movq {MB}, %rcx")
    asm.ins(f"subq {IR}, %rcx")
    min_into(asm, "%rcx", p.mr)
    asm.ins("movq %rdx, %rax")
    asm.ins(f"leaq {STAGE_OFFSET}({WS}), %rdi")
    asm.place(row_loop)
    for v in range(p.tn):
        mask = f"%k{v + 1}"
        if into_tiles:
            asm.ins(f"vmovdqu32 {64 * v}(%rax), %zmm{v}{{{mask}}}{{z}}")
            asm.ins(f"vmovdqu32 %zmm{v}, {64 * v}(%rdi)")
        else:
            asm.ins(f"vmovdqu32 {64 * v}(%rdi), %zmm{v}")
            asm.ins(f"vmovdqu32 %zmm{v}, {64 * v}(%rax){{{mask}}}")
    asm.ins("addq %rsi, %rax")
    asm.ins(f"addq ${p.nr * 4}, %rdi")
    asm.ins("decq %rcx")
    asm.ins(f"jnz {back(row_loop)}")


def _emit_c_tiles(asm, p, op, address=None):
    """`op` (tileloadd, tilestored or tilezero) on each of the block's C
    tiles; address(a, b) is tile (a, b)'s memory operand."""
    for a in range(p.tm):
        for b in range(p.tn):
            tile = _tmm(C_TILES[2 * a + b])
            if op == "tilezero":
                asm.ins(f"tilezero {tile}")
            elif op == "tileloadd":
                asm.ins(f"tileloadd {address(a, b)}, {tile}")
            else:
                asm.ins(f"tilestored {tile}, {address(a, b)}")


def _c_address(a, b):
    """C tile (a, b) in C: the block at %rdx, its second row of tiles at
    %rdi, ldc in %rsi."""
    return f"{64 * b}({'%rdx' if a == 0 else '%rdi'}, %rsi, 1)"


def _stage_address(p):
    """C tile (a, b) in the staging tile (_emit_stage_pointers)."""
    return lambda a, b: (f"{a * p.tile_rows * p.nr * 4 + 64 * b}"
                         "(%rax, %rcx, 1)")


def _emit_stage_pointers(asm, p):
    """%rax the staging tile, %rcx its row stride (NR f32)."""
    asm.ins(f"leaq {STAGE_OFFSET}({WS}), %rax")
    asm.ins(f"movl ${p.nr * 4}, %ecx")


def _has_epilogue(p):
    return p.bias != "none" or has_activation(p)


def _emit_store_last(asm, p):
    """The last kc block's tiles through the staging tile, each row inside
    mb through the epilogue (+ bias[j] under the lane mask, relu: max with
    NaN from the second operand and + 0 for -0, its bound: min keeping
    NaN, as dotgemm.py's) into C, or rounded to bf16 (VCVTNEPS2BF16: to
    nearest even) into D, under the column masks."""
    row_loop = asm.label("last kc block: next row")
    _emit_stage_pointers(asm, p)
    _emit_c_tiles(asm, p, "tilestored", _stage_address(p))
    _column_masks(asm)
    asm.ins(f"movq {MB}, %rcx")
    asm.ins(f"subq {IR}, %rcx")
    min_into(asm, "%rcx", p.mr)        # the rows inside mb
    size, ld, base = ((2, LDD_BYTES, OUTPUT_OFFSET) if p.half_output else
                      (4, LD_BYTES_OFFSET + 16, 16))
    asm.ins(f"movq {ld}({WS}), %rsi")
    asm.ins(f"leaq ({IC}, {IR}), %rax")
    asm.ins("imulq %rsi, %rax")
    asm.ins(f"leaq ({JC}, {JR}), %rdi")
    asm.ins(f"leaq (%rax, %rdi, {size}), %rax")
    asm.ins(f"addq {base}({WS}), %rax")
    if p.bias == "columns":
        asm.ins(f"movq {BIAS_OFFSET}({WS}), %rdx")
        asm.ins("leaq (%rdx, %rdi, 4), %rdx")
    zero, bound = "%zmm6", "%zmm7"
    emit_epilogue_setup(asm, p, zero, bound)
    asm.ins(f"leaq {STAGE_OFFSET}({WS}), %rdi")
    asm.place(row_loop)
    for v in range(p.tn):
        acc, mask = f"%zmm{v}", f"{{%k{v + 1}}}"
        asm.ins(f"vmovups {64 * v}(%rdi), {acc}")
        emit_epilogue(asm, p, acc, p.bias == "columns" and
                       f"{64 * v}(%rdx), {acc}, {acc}{mask}", zero, bound)
        emit_store_sums(asm, acc, f"{32 * v if p.half_output else 64 * v}"
                        "(%rax)", mask, p.tt.name if p.half_output else None)
    asm.ins("addq %rsi, %rax")
    asm.ins(f"addq ${p.nr * 4}, %rdi")
    asm.ins("decq %rcx")
    asm.ins(f"jnz {back(row_loop)}")


def _emit_k_steps(asm, p):
    """The block's tile steps: C tiles += A tiles x B tiles."""
    tt = p.tt
    k_loop = asm.label("next tile step")
    asm.comment(f"{p.tm * p.tn} C tiles += A tiles x B tiles, "
                f"{tt.tile_k} k a step")
    # This block's packed B: jr times 64 bytes a tile step; its packed A
    # likewise, or (a_layout direct) its A tiles where the sliver table
    # says, at their strides (%rsi, %rdx; B's 64 in IR or %rdx, C's block
    # and IR saved).
    def packed(reg, index, offset):
        asm.ins(f"movq {index}, {reg}")
        asm.ins(f"imulq %rdi, {reg}")
        asm.ins(f"shlq $6, {reg}")
        asm.ins(f"leaq {offset}({WS}, {reg}), {reg}")

    asm.ins(f"movq {STEPS}({WS}), %rdi")
    if not p.a_direct:
        packed("%rax", IR, p.ap_offset)
    if p.b_prepacked:
        # The caller's B: sliver (jc + jr) / NR, group pc / group.
        asm.ins(f"leaq ({JC}, {JR}), %rcx")
        asm.ins(f"imulq ${p.k_groups * 4}, %rcx, %rcx")
        asm.ins(f"imulq ${p.nr * 4 // p.tt.group}, {PC}, %rsi")
        asm.ins("addq %rsi, %rcx")
        asm.ins(f"addq 8({WS}), %rcx")
    else:
        packed("%rcx", JR, p.bp_offset)
    if p.a_direct:
        a_tiles, a_strides = ("%rax", "%rdi"), ("%rsi", "%rdx")
        asm.ins("shlq $6, %rdi")
        asm.ins(f"movq {_a_entry(p, 0)}, %rax")
        asm.ins("addq %rax, %rdi")
        asm.ins(f"movq %rdi, {A_END_SLOT}({WS})")
        asm.ins(f"movq %rdx, {C_BLOCK_SLOT}({WS})")
        asm.ins(f"movq {_a_entry(p, 16)}, %rsi")
        if p.tm == 2:
            b_stride = IR
            asm.ins(f"movq {_a_entry(p, 8)}, %rdi")
            asm.ins(f"movq {_a_entry(p, 24)}, %rdx")
            asm.ins(f"movq {IR}, {IR_SLOT}({WS})")
            asm.ins(f"movl ${p.b_tile_stride}, {IR}d")
        else:
            b_stride = "%rdx"
            asm.ins(f"movl ${p.b_tile_stride}, %edx")
    else:
        a_tiles, a_strides = ("%rax", "%rax"), ("%rsi", "%rsi")
        b_stride = "%rsi"
        asm.ins(f"movl ${TILE_BYTES}, %esi")
        if p.b_tile_stride != TILE_BYTES:
            b_stride = "%rdx"
            asm.ins(f"movq %rdx, {C_BLOCK_SLOT}({WS})")
            asm.ins(f"movl ${p.b_tile_stride}, %edx")
    asm.raw("\t.p2align 4")
    asm.place(k_loop)
    # Each tile loaded just before its first product, so that a load
    # waits only for the previous step's last product of that tile.
    for a in range(p.tm):
        offset = 0 if p.a_direct else a * TILE_SIZE
        asm.ins(f"tileloadd {offset}({a_tiles[a]}, {a_strides[a]}, 1), "
                f"{_tmm(A_TILES[a])}")
        for b in range(p.tn):
            if a == 0:
                offset = b * (TILE_BYTES if p.b_prepacked else TILE_SIZE)
                asm.ins(f"tileloadd {offset}(%rcx, {b_stride}, 1), "
                        f"{_tmm(B_TILES[b])}")
            asm.ins(f"{p.dot} {_tmm(B_TILES[b])}, {_tmm(A_TILES[a])}, "
                    f"{_tmm(C_TILES[2 * a + b])}")
    if p.a_direct:
        asm.ins(f"addq ${p.b_step_bytes}, %rcx")
        for reg in a_tiles[:p.tm]:
            asm.ins(f"addq ${TILE_BYTES}, {reg}")
        asm.ins(f"cmpq {A_END_SLOT}({WS}), %rax")
        asm.ins(f"jb {back(k_loop)}")
        asm.ins(f"movq {C_BLOCK_SLOT}({WS}), %rdx")
        if p.tm == 2:
            asm.ins(f"movq {IR_SLOT}({WS}), {IR}")
    else:
        asm.ins(f"addq ${p.a_step_bytes}, %rax")
        asm.ins(f"addq ${p.b_step_bytes}, %rcx")
        asm.ins("decq %rdi")
        asm.ins(f"jnz {back(k_loop)}")
        if b_stride == "%rdx":
            asm.ins(f"movq {C_BLOCK_SLOT}({WS}), %rdx")


def _emit_block(asm, p):
    """One MR x NR block of C: its tiles from C (or the staging tile, or
    zero), the tile steps, its tiles back."""
    if p.transposed:
        _emit_block_transposed(asm, p)
        return
    edge = asm.label("edge block: C into the staging tile")
    edge_out = asm.label("edge block: the staging tile into C")
    loaded = asm.label("C tiles loaded")
    stored = asm.label("block done")
    zero = asm.label("first kc block of an overwrite: C tiles zero")
    asm.ins(f"movq {LD_BYTES_OFFSET + 16}({WS}), %rsi")
    asm.ins(f"leaq ({IC}, {IR}), %rdx")
    asm.ins("imulq %rsi, %rdx")
    asm.ins(f"leaq ({JC}, {JR}), %rax")
    asm.ins("leaq (%rdx, %rax, 4), %rdx")
    asm.ins(f"addq 16({WS}), %rdx")
    asm.ins("movq %rsi, %rdi")
    _emit_times_tile_rows(asm, p, "%rdi")
    asm.ins("addq %rdx, %rdi")          # the second row of tiles
    if p.fault != "write-past-edge":
        asm.ins(f"movq {MB}, %rax")
        asm.ins(f"subq {IR}, %rax")
        asm.ins(f"cmpq ${p.mr}, %rax")
        asm.ins(f"jb {fwd(edge)}")
        asm.ins(f"movq {NB}, %rax")
        asm.ins(f"subq {JR}, %rax")
        asm.ins(f"cmpq ${p.nr}, %rax")
        asm.ins(f"jb {fwd(edge)}")
    if p.overwrite:
        asm.ins(f"testq {PC}, {PC}")
        asm.ins(f"jz {fwd(zero)}")
    _emit_c_tiles(asm, p, "tileloadd", _c_address)
    asm.ins(f"jmp {fwd(loaded)}")
    if p.fault != "write-past-edge":
        asm.place(edge)
        _column_masks(asm)
        if p.overwrite:
            asm.ins(f"testq {PC}, {PC}")
            asm.ins(f"jz {fwd(zero)}")
        _emit_stage(asm, p, into_tiles=True)
        _emit_stage_pointers(asm, p)
        _emit_c_tiles(asm, p, "tileloadd", _stage_address(p))
        asm.ins(f"jmp {fwd(loaded)}")
    if p.overwrite:
        asm.place(zero)
        _emit_c_tiles(asm, p, "tilezero")
    asm.place(loaded)
    _emit_k_steps(asm, p)
    asm.ins(f"movq {LD_BYTES_OFFSET + 16}({WS}), %rsi")
    asm.ins("movq %rsi, %rdi")
    _emit_times_tile_rows(asm, p, "%rdi")
    asm.ins("addq %rdx, %rdi")
    through_epilogue = p.half_output or _has_epilogue(p)
    if through_epilogue:
        last = asm.label("last kc block: the epilogue, into C or D")
        asm.ins(f"leaq ({PC}, {KB}), %rax")
        asm.ins(f"cmpq ${p.k}, %rax")
        asm.ins(f"jae {fwd(last)}")
    if p.fault != "write-past-edge":
        asm.ins(f"movq {MB}, %rax")
        asm.ins(f"subq {IR}, %rax")
        asm.ins(f"cmpq ${p.mr}, %rax")
        asm.ins(f"jb {fwd(edge_out)}")
        asm.ins(f"movq {NB}, %rax")
        asm.ins(f"subq {JR}, %rax")
        asm.ins(f"cmpq ${p.nr}, %rax")
        asm.ins(f"jb {fwd(edge_out)}")
    _emit_c_tiles(asm, p, "tilestored", _c_address)
    if p.fault != "write-past-edge":
        asm.ins(f"jmp {fwd(stored)}")
        asm.place(edge_out)
        _emit_stage_pointers(asm, p)
        _emit_c_tiles(asm, p, "tilestored", _stage_address(p))
        _column_masks(asm)
        _emit_stage(asm, p, into_tiles=False)
    if through_epilogue:
        asm.ins(f"jmp {fwd(stored)}")
        asm.place(last)
        _emit_store_last(asm, p)
    asm.place(stored)


def _emit_transposed_tile(asm, p, a, b, to_d=False):
    """C^T tile (a, b) of the block (C^T rows IC + IR + 16a.., C's
    columns; C^T columns JC + JR + 16b.., C's rows) as 16 rows of C: %rax
    the first row's address (C's, or with `to_d` D's), %rsi their stride,
    %rdx the mask of the columns inside C (bits), %rcx the rows inside C
    (0 to 16)."""
    asm.ins(f"movq {MB}, %rax")
    asm.ins(f"subq {IR}, %rax")
    if a:
        asm.ins(f"subq ${TILE_ROWS * a}, %rax")
    asm.ins("xorl %ecx, %ecx")
    asm.ins("testq %rax, %rax")
    asm.ins("cmovsq %rcx, %rax")
    asm.ins(f"movl ${TILE_ROWS}, %ecx")
    asm.ins("cmpq %rcx, %rax")
    asm.ins("cmovaq %rcx, %rax")
    asm.ins("movq $-1, %rdx")
    asm.ins("bzhiq %rax, %rdx, %rdx")
    asm.ins(f"movq {NB}, %rcx")
    asm.ins(f"subq {JR}, %rcx")
    if b:
        asm.ins(f"subq ${TILE_ROWS * b}, %rcx")
    asm.ins("xorl %eax, %eax")
    asm.ins("testq %rcx, %rcx")
    asm.ins("cmovsq %rax, %rcx")
    min_into(asm, "%rcx", TILE_ROWS)
    size, ld, base = ((2, LDD_BYTES, OUTPUT_OFFSET) if to_d else
                      (4, LD_BYTES_OFFSET + 16, 16))
    asm.ins(f"movq {ld}({WS}), %rsi")
    asm.ins(f"leaq {TILE_ROWS * b}({JC}, {JR}), %rax")
    asm.ins("imulq %rsi, %rax")
    asm.ins(f"leaq {TILE_ROWS * a}({IC}, {IR}), %rdi")
    asm.ins(f"leaq (%rax, %rdi, {size}), %rax")
    asm.ins(f"addq {base}({WS}), %rax")


def _emit_row_mask(asm, g):
    """%k2: the column mask (%rdx) for row g of the tile when g is inside C
    (%rcx rows), none past it."""
    asm.ins("xorl %edi, %edi")
    asm.ins(f"cmpq ${g}, %rcx")
    asm.ins("cmovaq %rdx, %rdi")
    asm.ins("kmovw %edi, %k2")


def _staging_row(p, a, b, g):
    """Row g of C^T tile (a, b) in the staging tile."""
    offset = STAGE_OFFSET + (TILE_ROWS * a + g) * p.nr * 4 + TILE_BYTES * b
    return f"{offset}({WS})"


def _emit_block_transposed(asm, p):
    """The transposed product's block (pack_b false): C^T's tiles from C's
    rows transposed 16 x 16 into the staging tile (or zero), the tile
    steps, and back through the staging tile and a transpose into C's rows
    (under masks: C^T's rows past mb are C's columns past the edge), with
    the epilogue (bias[j] along C's row, relu, its bound) or into D at the
    last kc block."""
    loaded = asm.label("C^T tiles loaded")
    if p.overwrite:
        from_c = asm.label("C^T tiles from C")
        asm.ins(f"testq {PC}, {PC}")
        asm.ins(f"jnz {fwd(from_c)}")
        _emit_c_tiles(asm, p, "tilezero")
        asm.ins(f"jmp {fwd(loaded)}")
        asm.place(from_c)
    asm.comment("C^T tiles: C's rows, transposed 16 x 16 into the staging "
                "tile")
    for a in range(p.tm):
        for b in range(p.tn):
            _emit_transposed_tile(asm, p, a, b)
            for g in range(TILE_ROWS):
                _emit_row_mask(asm, g)
                asm.ins(f"vmovups (%rax), %zmm{g}{{%k2}}{{z}}")
                asm.ins("addq %rsi, %rax")
            emit_transpose_16x16(asm)
            for g in range(TILE_ROWS):
                asm.ins(f"vmovups %zmm{g}, {_staging_row(p, a, b, g)}")
    _emit_stage_pointers(asm, p)
    _emit_c_tiles(asm, p, "tileloadd", _stage_address(p))
    asm.place(loaded)
    _emit_k_steps(asm, p)
    stored = asm.label("C^T block stored")
    if p.half_output or _has_epilogue(p):
        last = asm.label("last kc block: the epilogue, into C or D")
        asm.ins(f"leaq ({PC}, {KB}), %rax")
        asm.ins(f"cmpq ${p.k}, %rax")
        asm.ins(f"jae {fwd(last)}")
        _emit_transposed_out(asm, p, False)
        asm.ins(f"jmp {fwd(stored)}")
        asm.place(last)
        _emit_transposed_out(asm, p, True)
    else:
        _emit_transposed_out(asm, p, False)
    asm.place(stored)


def _emit_transposed_out(asm, p, last):
    """C^T's tiles into the staging tile, each 16 x 16 transposed into C's
    rows and stored under the masks; `last`: through the epilogue, into C
    or (bf16_output) D."""
    to_d = last and p.half_output
    asm.comment("C^T tiles through the staging tile, transposed into C's "
                f"rows{' (the epilogue)' if last else ''}")
    _emit_stage_pointers(asm, p)
    _emit_c_tiles(asm, p, "tilestored", _stage_address(p))
    zero, bound, bias = "%zmm16", "%zmm17", "%zmm18"
    for a in range(p.tm):
        for b in range(p.tn):
            for g in range(TILE_ROWS):
                asm.ins(f"vmovups {_staging_row(p, a, b, g)}, %zmm{g}")
            emit_transpose_16x16(asm)
            _emit_transposed_tile(asm, p, a, b, to_d)
            if p.fault == "write-past-edge":
                asm.comment("fault write-past-edge: every column of the "
                            "tile stored")
                asm.ins("movl $0xffff, %edx")
            if last and p.bias == "columns":
                # bias[j] for C's columns IC + IR + 16a..
                asm.ins(f"leaq {TILE_ROWS * a}({IC}, {IR}), %rdi")
                asm.ins("shlq $2, %rdi")
                asm.ins(f"addq {BIAS_OFFSET}({WS}), %rdi")
                asm.ins("kmovw %edx, %k1")
                asm.ins(f"vmovups (%rdi), {bias}{{%k1}}{{z}}")
            if last:
                emit_epilogue_setup(asm, p, zero, bound)
            for g in range(TILE_ROWS):
                acc = f"%zmm{g}"
                if last:
                    emit_epilogue(asm, p, acc, p.bias == "columns" and
                                   f"{bias}, {acc}, {acc}", zero, bound)
                _emit_row_mask(asm, g)
                emit_store_sums(asm, acc, "(%rax)", "{%k2}",
                                p.tt.name if to_d else None)
                asm.ins("addq %rsi, %rax")


def _emit_body(p):
    tt = p.tt
    asm = Asm()
    emit_fault_entry(asm, p.fault)
    emit_relu_constants(asm, p)
    # The transposed product's A is B^T and its B is A.
    asm.ins(f"movq {'%rsi' if p.transposed else '%rdi'}, 0(%rcx)")
    asm.ins(f"movq {'%rdi' if p.transposed else '%rsi'}, 8(%rcx)")
    asm.ins("movq %rdx, 16(%rcx)")
    asm.ins(f"movq %rcx, {WS}")
    _emit_permission(asm)
    _emit_tile_config(asm, p)
    emit_leading_dims_in_bytes(asm, p, tt.types, tt.element_bytes,
                               LDD_BYTES)
    if p.transposed and p.runtime_ld:
        asm.comment("the transposed product: its lda is B's, its ldb A's")
        asm.ins(f"movq {LD_BYTES_OFFSET}({WS}), %rax")
        asm.ins(f"movq {LD_BYTES_OFFSET + 8}({WS}), %rdx")
        asm.ins(f"movq %rdx, {LD_BYTES_OFFSET}({WS})")
        asm.ins(f"movq %rax, {LD_BYTES_OFFSET + 8}({WS})")
    if p.conv is not None:
        p.conv.emit_tables(asm)
    if p.step_rows:
        asm.comment("each tile step's piece of a run: its first k from pc, "
                    "its k")
        for t, (row, count) in enumerate(p.step_rows):
            asm.ins(f"movq ${row}, {p.step_table + 16 * t}({WS})")
            asm.ins(f"movq ${count}, {p.step_table + 16 * t + 8}({WS})")
    if tt.split:
        _emit_split_index(asm)
    elif not p.trans_b and tt.group == 2 and not p.b_prepacked:
        _emit_pair_index(asm)
    done = asm.label("empty part of C: nothing to do")
    emit_zero_k_exit(asm, p, done)
    emit_nest(asm, p, done, _emit_column_block, _emit_row_block,
              _emit_sliver_loops, p.transposed)
    asm.place(done)
    asm.ins("tilerelease")
    asm.ins("vzeroupper")
    return asm.text()


def _emit_column_block(asm, p):
    """At each (jc, pc) block: its tile steps (STEPS), and PACK B unless B
    is prepacked."""
    tt = p.tt
    if p.step_rows:
        # kb whole runs: its runs' tile steps.
        asm.ins(f"movq {KB}, %rax")
        asm.ins("xorl %edx, %edx")
        asm.ins(f"movl ${p.k_run}, %ecx")
        asm.ins("divq %rcx")
        asm.ins(f"imulq ${len(p.step_rows) // (p.kc // p.k_run)}, %rax, "
                "%rax")
    else:
        asm.ins(f"leaq {tt.tile_k - 1}({KB}), %rax")
        asm.ins(f"shrq ${tt.tile_k.bit_length() - 1}, %rax")
    asm.ins(f"movq %rax, {STEPS}({WS})")
    if p.b_prepacked:
        pass
    elif p.trans_b:
        _emit_pack_b_transposed(asm, p)
    elif tt.split:
        _emit_pack_b_split(asm, p)
    elif tt.group == 2:
        _emit_pack_b_pairs(asm, p)
    else:
        _emit_pack_b(asm, p)


def _emit_row_block(asm, p):
    """At each ic block: PACK A, or A in place."""
    if p.a_direct:
        _emit_a_in_place(asm, p)
    elif p.step_rows:
        _emit_pack_a_runs(asm, p)
    elif p.tt.split:
        _emit_pack_a_split(asm, p)
    else:
        _emit_pack_a(asm, p)


def _emit_sliver_loops(asm, p):
    """The jr and ir loops around the block of tiles."""
    jr_loop = asm.label("jr: next NR columns")
    ir_loop = asm.label("ir: next MR rows")
    emit_sliver_heads(asm, p, jr_loop, ir_loop)
    _emit_block(asm, p)
    emit_sliver_ends(asm, p, jr_loop, ir_loop)


def emit(request):
    p = Params(request)
    a_type, b_type, c_type = p.tt.types
    product = f"A ({a_type}) * {'B^T' if p.trans_b else 'B'} ({b_type})"
    summary = (f"D[{p.m}x{p.n}] ({a_type}) = {a_type}("
               f"{'' if p.overwrite else 'C (f32) + '}{product})"
               if p.half_output else
               f"C[{p.m}x{p.n}] ({c_type}) {'=' if p.overwrite else '+='} "
               + product) + f", K = {p.k}, on AMX tiles"
    return _kernel_file(p, p.symbol(), request, p.tt.kind, summary, [])


def _kernel_file(p, symbol, request, kind, summary, headers):
    """The kernel file of the GEMM `p` (a convolution's too)."""
    return function_text(
        kind, summary, symbol, _emit_body(p), request,
        p.workspace_bytes, p.runtime_ld,
        [f"zmm{i}" for i in range(32 if p.trans_b else 8)]
        + ["k1", "k2", "k3", "k4", "k5"]
        + [f"tmm{i}" for i in range(8)],
        p.features,
        headers=["# qm.inner_loop_flops: " + str(
            p.tm * p.tn * p.tile_rows * TILE_ROWS * p.tt.tile_k * 2)]
        + ([f"# qm.b_prepacked: nr={p.nr} k_groups={p.k_groups} "
            f"element_bytes={p.tt.element_bytes} plus128=0"]
           if p.b_prepacked else []) + headers,
        runtime_sizes=tuple(size for size, dynamic in (
            ("m", p.dynamic_m), ("n", p.dynamic_n), ("k", p.dynamic_k))
            if dynamic))


#: The probe's instruction by its name (peak.py's "instruction" field).
#: amx-f16 times the same TDPBF16PS, counting an f16 multiply-add a
#: quarter of its bf16 ones (TileType.split).
PEAK_INSTRUCTIONS = {"amx-bf16": TILE_TYPES["bf16"],
                     "amx-int8": TILE_TYPES["u8s8"],
                     "amx-f16": TILE_TYPES["f16"]}


def emit_peak_probe(request):
    """The tile engine's peak (peak.py's protocol, isa amx): `iterations`
    rounds of one tile product into each of four C tiles (16 x 16 dwords,
    each a tile step of k), 4 x 16 x 16 x tile_k x 2 ops a round."""
    from .peak import probe_file
    name = request.get("instruction", "amx-bf16")
    if name not in PEAK_INSTRUCTIONS:
        raise RequestError(f"unknown instruction {name!r} for isa amx; "
                           "expected amx-bf16, amx-int8 or amx-f16")
    if "accumulators" in request:
        raise RequestError("an AMX probe has four accumulators, its C tiles")
    tt = PEAK_INSTRUCTIONS[name]
    check_target_features(request, _FeatureRow(tt))
    asm = Asm()
    loop = asm.label("round")
    done = asm.label("done")
    asm.ins("movq %rdi, %rdx")          # the system call takes %rdi
    _emit_permission(asm)
    asm.comment("tile configuration on the stack: palette 1, 16 x 64 bytes")
    asm.ins("subq $64, %rsp")
    asm.ins("vpxord %zmm0, %zmm0, %zmm0")
    asm.ins("vmovdqu64 %zmm0, (%rsp)")
    asm.ins("movb $1, (%rsp)")
    asm.ins("movabsq $0x0040004000400040, %rax")
    asm.ins("movq %rax, 16(%rsp)")
    asm.ins("movq %rax, 24(%rsp)")
    asm.ins("movabsq $0x1010101010101010, %rax")
    asm.ins("movq %rax, 48(%rsp)")
    asm.ins("ldtilecfg (%rsp)")
    asm.ins("addq $64, %rsp")
    for t in C_TILES + A_TILES + B_TILES:
        asm.ins(f"tilezero {_tmm(t)}")
    asm.ins("testq %rdx, %rdx")
    asm.ins(f"jz {fwd(done)}")
    asm.raw("\t.p2align 5")
    asm.place(loop)
    for i, c in enumerate(C_TILES):
        asm.ins(f"{tt.dot} {_tmm(B_TILES[i % 2])}, {_tmm(A_TILES[i // 2])}, "
                f"{_tmm(c)}")
    asm.ins("decq %rdx")
    asm.ins(f"jnz {back(loop)}")
    asm.place(done)
    asm.ins("tilerelease")
    asm.ins("vzeroupper")
    return probe_file(
        f"qm_{name.replace('-', '')}_peak_x86_64_amx",
        len(C_TILES) * TILE_ROWS * TILE_ROWS * tt.tile_k * 2,
        ["rax", "rcx", "rdx", "rsi", "rdi", "r11", "zmm0"]
        + [f"tmm{i}" for i in range(8)], tt.features, asm.text())


class AmxConv:
    """An nhwc convolution on AMX tiles (kinds sbconv2d, shconv2d and
    iconv2d with isa amx): dotconv.py's implicit GEMM, M = N*OH*OW pixels,
    N = F, K = KH*KW*C in (kh, kw, c) order, B the filter (hwcf as stored, fhwc
    transposed), C the output; PACK A reads pixel r's k of a kc block from
    input + row[r] + column[pc] (conv2d.py's offset tables, written at
    entry), so kc divides the run of consecutive k (C, or KW*C) and is
    whole tile steps. bf16 and f16: a bias per output channel (the GEMM's
    columns), relu and its bound, as the GEMM's; f16 split as the GEMM's
    (kc whole tile steps of 8 k dividing the run: no padded runs);
    nchw_fchw is dotconv.py's."""

    #: The pixels of every image are the GEMM's rows: blis.emit_nest runs
    #: once for the batch.
    images = 1

    def __init__(self, request):
        from .conv2d import (GEOMETRY_FIELDS, StrideSteps, contiguous_run,
                             conv_geometry, gather_dims,
                             runtime_strides_field)
        self.kind = request.get("kind")
        integer = self.kind == "iconv2d"
        gemm_fields = ("isa", "mr", "nr", "k_unroll", "kc", "mc", "nc",
                       "overwrite", "fault", "target_features", "parallel",
                       "a_layout", "b_prepacked")
        typed = ("a_type",) if integer else ("bias",) + ACTIVATION_FIELDS
        check_known(request, gemm_fields + GEOMETRY_FIELDS
                    + ("runtime_strides",) + typed)
        self.runtime_strides = runtime_strides_field(request)
        g = self.geometry = conv_geometry(request, ("nhwc_hwcf", "nhwc_fhwc"))
        k = g.kh * g.kw * g.c
        gemm = {"kind": "igemm" if integer else
                "shgemm" if self.kind == "shconv2d" else "sbgemm",
                "m": g.n * g.oh * g.ow, "n": g.f, "k": k, "lda": k,
                "ldb": g.f, "ldc": g.f}
        if g.layout == "nhwc_fhwc":
            gemm.update(trans_b=True, ldb=k)
        gemm.update({f: request[f] for f in gemm_fields + typed
                     if f in request and f != "bias"})
        # A bias per output channel: the GEMM's columns.
        if bool_field(request, "bias"):
            gemm["bias"] = "columns"
        # A kc that is not whole tile steps dividing the run of consecutive
        # k (the stem's 3 channels: KW*C = 21) is whole runs, each packed
        # padded with zero k to whole tile steps (Params' k_run).
        eb = 1 if integer else 2
        tk = TILE_TYPES[element_types(gemm, gemm["kind"])].tile_k
        run = contiguous_run(
            gather_dims(g, eb, StrideSteps(g, eb, self.runtime_strides, 0))[1],
            eb)
        kc = request.get("kc")
        k_run = None
        if isinstance(kc, int) and kc > 0 and (
                run % kc or kc % tk):
            if kc % run:
                raise RequestError(
                    f"kc = {kc} must divide {run}, the k that lie in "
                    "consecutive elements of the input, in whole tile steps "
                    "(so that each row of a packed block is one piece of "
                    f"it), or be whole runs of {run} k (each packed padded "
                    "to whole tile steps)")
            k_run = run
        p = self.gemm = Params(gemm, k_run=k_run)
        p.conv = self
        offset = round_up(p.workspace_bytes, 64)
        self.base_slot = offset  # input + column[pc] of the packed block
        steps = StrideSteps(g, eb, self.runtime_strides, offset + 8)
        self.row_dims, self.col_dims = gather_dims(g, eb, steps)
        # Consecutive pixels of one output row lie the pixel step apart
        # (an immediate, run-time strides or not): A in place reads a tile
        # of them at that stride.
        self.pixel_step = self.row_dims[-1][1]
        self.run = contiguous_run(self.col_dims, eb)
        assert self.run == run
        self.runtime_steps = steps.steps
        self.row_table = offset + 64
        self.col_table = self.row_table + round_up(p.m * 8, 64)
        p.workspace_bytes = self.col_table + round_up(k * 8, 64)
        if p.step_rows:
            # Each tile step's piece of a run, and its column base.
            p.step_table = p.workspace_bytes
            p.step_cols = p.step_table + 16 * p.k_steps
            p.workspace_bytes = p.step_cols + round_up(8 * p.k_steps, 64)
        check_disp(p.workspace_bytes, "workspace")
        for count, bytes_ in self.row_dims + self.col_dims:
            if isinstance(bytes_, int):
                check_disp(count * bytes_, "input")

    def emit_tables(self, asm):
        """At entry (_emit_body): the row and column tables."""
        from .conv2d import emit_gather_tables
        emit_gather_tables(asm, self.runtime_steps,
                           ((self.row_table, self.row_dims),
                            (self.col_table, self.col_dims)))

    def symbol(self):
        p = self.gemm
        kind = {"bf16": "sbconv2d", "f16": "shconv2d"}.get(
            p.tt.name, f"{p.tt.name}conv2d")
        return (f"{self.geometry.symbol_stem(kind)}"
                f"{'_isrt' if self.runtime_strides else ''}"
                f"{p.store_part()}{p.block_part()}")


def emit_conv(request):
    from .dotconv import conv_summary
    conv = AmxConv(request)
    g, p = conv.geometry, conv.gemm
    summary = conv_summary(g, p.tt.types, p) + " on AMX tiles"
    return _kernel_file(p, conv.symbol(), request, conv.kind, summary,
                        ["# qm.input_strides: runtime"]
                        if conv.runtime_strides else [])

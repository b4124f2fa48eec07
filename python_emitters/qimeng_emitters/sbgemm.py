"""bf16 GEMM with f32 accumulation for x86-64 AVX512-BF16 (VDPBF16PS).

C (f32) += A (bf16) * B (bf16), row-major, every product exact in f32 and
each pair of products summed into an f32 accumulator (OpenBLAS calls this
sbgemm). One request = one kernel for one shape, in the function and body
forms of docs/KernelContract.md (A, B, C and the workspace in %rdi, %rsi,
%rdx, %rcx).

VDPBF16PS multiplies a register of 16 bf16 pairs by another and adds each
pair's two products to one f32 lane: its operands must hold the two k of a
pair side by side (the "VNNI" layout). The sketch is the f32 one
(sgemm.py), with pairs of k where it has k:

    for jc in 0..N step nc:              nb = min(nc, N - jc)
      for pc in 0..K step kc:            kb = min(kc, K - pc), kc even
        PACK B[pc:pc+kb, jc:jc+nb] -> Bp   NR-wide slivers; per k pair NR
                                           dwords (B(k,j), B(k+1,j))
        for ic in 0..M step mc:          mb = min(mc, M - ic)
          PACK A[ic:ic+mb, pc:pc+kb] -> Ap MR-tall slivers; per k pair MR
                                           dwords (A(i,k), A(i,k+1))
          for jr in 0..nb step NR:
            for ir in 0..mb step MR:
              COMPUTE MR x NR += Ap sliver * Bp sliver over the pairs

Both packs pad with zeros: an odd kb's last pair has a zero partner, the
pairs are padded to a multiple of the K unroll, rows past mb and columns
past nb are zero. So the K loop has no edge code, zero times zero adds
nothing, and the C update masks the columns past N (AVX-512 mask
registers) and stops at the last row.

Leading dimensions are in elements (A and B in bf16, C in f32), immediates
or (runtime_ld) read from the workspace header at every call; the kernel
keeps them in bytes in the header either way.
"""

import json

from . import GENERATOR_VERSION, PROTOCOL_VERSION
from .errors import RequestError
from .fields import (bool_field, check_known, check_target_features,
                     int_field)
from .sgemm import _emit_transpose_8x8 as emit_transpose_8x8
from .x86 import SYSV, Asm, back, check_disp, fwd

# Workspace (bytes from its pointer): the header of docs/KernelContract.md,
# then the VPERMT2W index that interleaves two rows of B, per-block counts,
# and the packed blocks.
HEADER_BYTES = 128
LD_OFFSET = 64              # lda, ldb, ldc as int64 elements (runtime_ld)
LD_BYTES_OFFSET = 88        # the same in bytes, written by the kernel
INDEX_OFFSET = 128          # 32 words: B(k, j) to word 2j, B(k+1, j) to 2j+1
COUNTS_OFFSET = 192         # per kc block: see _COUNT_SLOTS
AP_OFFSET = 256

# Per-kc-block counts the packs and the K loop read (int64 slots), and the
# pairs of the current A sliver that PACK A's transposes copied.
PAIRS, ODD, PAD_PAIRS, ITERATIONS, VECTOR_PAIRS = (
    COUNTS_OFFSET + 8 * i for i in range(5))

#: Features the code needs: VDPBF16PS, word-granular masked loads
#: (VMOVDQU16, VPERMT2W) and BZHI for the column masks.
FEATURES = ("avx512f", "avx512bw", "avx512vl", "avx512bf16", "bmi2")

# Test-only deliberately broken kernels the validator must catch:
# drop-k zeroes the first pair of every packed A row, swap-pairs
# interleaves B's two rows the wrong way round (A(i,k) meets B(k+1,j)),
# write-past-edge stores whole vectors past N and rows past M.
FAULTS = (None, "drop-k", "swap-pairs", "write-past-edge", "segfault",
          "hang")

# Register map of the body (as sgemm.py).
WS, JC, NB, PC, KB, IC, MB, JR, IR = (
    "%rbx", "%r8", "%r9", "%r10", "%r11", "%r12", "%r13", "%r14", "%r15")
ABI = SYSV
LANES = 16          # f32 lanes of a zmm register: one lane per bf16 pair
REGISTERS = 32


def _round_up(value, multiple):
    return (value + multiple - 1) // multiple * multiple


class Params:
    """A validated request with the blocking clamped to the problem."""

    def __init__(self, request):
        check_known(request, (
            "isa", "m", "n", "k", "lda", "ldb", "ldc", "trans_a", "trans_b",
            "mr", "nr",
            "k_unroll", "kc", "mc", "nc", "overwrite", "runtime_ld",
            "fault", "target_features"))
        if request.get("isa") != "avx512":
            raise RequestError(
                "sbgemm kernels are written for isa avx512 (with "
                "AVX512-BF16), got " + repr(request.get("isa")))
        self.features = FEATURES
        check_target_features(request, _FeatureRow)
        self.m = int_field(request, "m")
        self.n = int_field(request, "n")
        self.k = int_field(request, "k")
        # A stored K x M, B stored N x K: the packs swap roles (a
        # transposed operand is packed as the other one as stored).
        self.trans_a = bool_field(request, "trans_a")
        self.trans_b = bool_field(request, "trans_b")
        self.overwrite = bool_field(request, "overwrite")
        self.runtime_ld = bool_field(request, "runtime_ld")
        if self.runtime_ld:
            given = [f for f in ("lda", "ldb", "ldc") if f in request]
            if given:
                raise RequestError(
                    "runtime_ld kernels read lda, ldb and ldc from the "
                    "workspace at run time; the request must not fix them "
                    "(got " + ", ".join(given) + ")")
            self.lda = self.ldb = self.ldc = None
        else:
            a_cols = self.m if self.trans_a else self.k
            b_cols = self.k if self.trans_b else self.n
            self.lda = int_field(request, "lda", minimum=a_cols,
                                  default=a_cols)
            self.ldb = int_field(request, "ldb", minimum=b_cols,
                                  default=b_cols)
            self.ldc = int_field(request, "ldc", minimum=self.n,
                                  default=self.n)
        self.mr = int_field(request, "mr")
        self.nr = int_field(request, "nr")
        if self.nr % LANES:
            raise RequestError(
                f"nr = {self.nr} must be a multiple of {LANES} (f32 lanes "
                "of a zmm register)")
        self.nv = self.nr // LANES
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
                f"k_unroll (pairs per K iteration) must be 1, 2, 4 or 8, "
                f"got {self.k_unroll}")
        kc = int_field(request, "kc")
        mc = int_field(request, "mc")
        nc = int_field(request, "nc")
        if kc % 2:
            raise RequestError(
                f"kc = {kc} must be even: a block holds whole k pairs")
        if mc % self.mr:
            raise RequestError(f"mc = {mc} must be a multiple of mr = {self.mr}")
        if nc % self.nr:
            raise RequestError(f"nc = {nc} must be a multiple of nr = {self.nr}")
        self.kc = min(kc, _round_up(self.k, 2))
        self.mc = min(mc, _round_up(self.m, self.mr))
        self.nc = min(nc, _round_up(self.n, self.nr))
        self.fault = request.get("fault")
        if self.fault not in FAULTS:
            raise RequestError(
                f"unknown fault {self.fault!r}; expected one of "
                + ", ".join(f for f in FAULTS if f) + " (test-only)")
        # Packed slivers: kc_pairs pairs each, a whole number of K
        # iterations; A slivers MR dwords per pair, B slivers NR.
        self.kc_pairs = _round_up(self.kc // 2, self.k_unroll)
        self.a_sliver = self.mr * self.kc_pairs * 4
        self.b_sliver = self.nr * self.kc_pairs * 4
        self.ap_bytes = _round_up((self.mc // self.mr) * self.a_sliver, 64)
        self.bp_offset = AP_OFFSET + self.ap_bytes
        self.bp_bytes = _round_up((self.nc // self.nr) * self.b_sliver, 64)
        self.workspace_bytes = self.bp_offset + self.bp_bytes
        check_disp(self.workspace_bytes, "workspace")
        if not self.runtime_ld:
            for ld, size in ((self.lda, 2), (self.ldb, 2), (self.ldc, 4)):
                check_disp(ld * size * max(self.m, self.k), "row")

    def symbol(self):
        lds = "_ldrt" if self.runtime_ld else (
            f"_lda{self.lda}_ldb{self.ldb}_ldc{self.ldc}")
        fault = "" if self.fault is None else "_fault_" + self.fault.replace(
            "-", "_")
        trans = ("t" if self.trans_a else "n") + ("t" if self.trans_b else "n")
        return (f"qm_sbgemm_{self.m}x{self.n}x{self.k}_{trans}"
                f"{'_b0' if self.overwrite else ''}{lds}"
                f"_{self.mr}x{self.nr}_ku{self.k_unroll}"
                f"_kc{self.kc}_mc{self.mc}_nc{self.nc}{fault}"
                "_x86_64_avx512bf16")


class _FeatureRow:
    """What check_target_features needs of an ISA row."""
    name = "avx512 (bf16)"
    features = FEATURES


def _min_into(asm, dst, limit):
    """dst = min(dst, limit) for unsigned dst; clobbers %rax."""
    asm.ins(f"movq ${limit}, %rax")
    asm.ins(f"cmpq %rax, {dst}")
    asm.ins(f"cmovaq %rax, {dst}")


def _lane_masks(asm, p, lanes_left, vectors, width):
    """k1..k<vectors>: the lanes of each 16-lane vector of a sliver `width`
    lanes wide that lie before the edge, from `lanes_left` (a 32-bit
    register, >= 1): min(lanes_left, width) - 16 v, clamped to [0, 16]
    (BZHI reads only its index's low byte); all lanes with the
    write-past-edge fault (the packs then read past the edge too, so that
    what the C update writes there differs from what was there). Clobbers
    %eax, %edx."""
    for v in range(vectors):
        if p.fault == "write-past-edge":
            asm.ins("movl $-1, %eax")
            asm.ins(f"kmovw %eax, %k{v + 1}")
            continue
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
    NR columns of B), each pair of k holding `lanes` dwords. `k_major`:
    the operand as stored has k along its rows (B, or A transposed), so
    two rows interleave into a pair of k per lane; otherwise each lane is
    a row of it with k along the row (A, or B transposed), its pairs
    consecutive dwords."""

    def __init__(self, name, lanes, base_slot, ld_slot, dst_offset,
                 sliver_bytes, block, count, k_major):
        self.name, self.lanes = name, lanes
        self.base_slot, self.ld_slot = base_slot, ld_slot
        self.dst_offset, self.sliver_bytes = dst_offset, sliver_bytes
        self.block, self.count, self.k_major = block, count, k_major

    @property
    def vectors(self):
        return -(-self.lanes // LANES)

    @property
    def partial_lanes(self):
        """Lanes of the last vector when it is not whole, else 0."""
        return self.lanes % LANES


def _operands(p):
    a = Operand("A", p.mr, 0, LD_BYTES_OFFSET, AP_OFFSET, p.a_sliver, IC,
                MB, p.trans_a)
    b = Operand("B", p.nr, 8, LD_BYTES_OFFSET + 8, p.bp_offset, p.b_sliver,
                JC, NB, not p.trans_b)
    return a, b


def _emit_block_counts(asm, p):
    """The counts of this kc block (kb in %r11) into the header slots:
    whole pairs, whether a half pair is left, the zero pairs that pad to
    a multiple of the K unroll, and the K loop's iterations."""
    asm.comment("counts of this kc block")
    asm.ins(f"movq {KB}, %rax")
    asm.ins("shrq $1, %rax")
    asm.ins(f"movq %rax, {PAIRS}({WS})")
    asm.ins(f"movq {KB}, %rdx")
    asm.ins("andq $1, %rdx")
    asm.ins(f"movq %rdx, {ODD}({WS})")
    asm.ins("addq %rax, %rdx")                       # ceil(kb / 2)
    ku = p.k_unroll
    asm.ins(f"leaq {ku - 1}(%rdx), %rax")
    asm.ins(f"shrq ${ku.bit_length() - 1}, %rax")    # iterations
    asm.ins(f"movq %rax, {ITERATIONS}({WS})")
    asm.ins(f"shlq ${ku.bit_length() - 1}, %rax")    # padded pairs
    asm.ins("subq %rdx, %rax")
    asm.ins(f"movq %rax, {PAD_PAIRS}({WS})")


def _emit_pack_k_major(asm, p, op):
    """Each sliver of an operand stored with k along its rows, per pair of
    k `lanes` dwords (X(k, l), X(k+1, l)): two rows of 16 lanes
    interleaved by VPERMT2W; lanes past the block's edge zero (masked
    loads), a sliver narrower than a vector stored under a mask (k7)."""
    name = op.name
    sliver = asm.label(f"PACK {name}: next sliver")
    pairs = asm.label(f"PACK {name}: next pair of rows")
    odd = asm.label(f"PACK {name}: the last half pair")
    pad = asm.label(f"PACK {name}: zero pairs")
    pad_loop = asm.label(f"PACK {name}: next zero pair")
    done = asm.label(f"PACK {name}: sliver done")
    step = op.lanes * 4
    asm.comment(f"PACK {name} (k along its rows)")
    asm.ins(f"vmovdqu64 {INDEX_OFFSET}({WS}), %zmm31")
    asm.ins("vpxord %zmm30, %zmm30, %zmm30")
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
    asm.comment(f"source: {name} + pc * ld + (block + lane) * 2")
    asm.ins(f"movq {PC}, %rsi")
    asm.ins(f"imulq {op.ld_slot}({WS}), %rsi")
    asm.ins(f"leaq ({op.block}, {JR}), %rax")
    asm.ins("leaq (%rsi, %rax, 2), %rsi")
    asm.ins(f"addq {op.base_slot}({WS}), %rsi")
    asm.ins(f"movq {op.ld_slot}({WS}), %rcx")
    asm.ins("movq %rdi, %rdx")
    asm.ins(f"movq {PAIRS}({WS}), %rax")
    asm.ins("testq %rax, %rax")
    asm.ins(f"jz {fwd(odd)}")
    asm.place(pairs)
    for v in range(op.vectors):
        asm.ins(f"vmovdqu16 {32 * v}(%rsi), %ymm0{{%k{v + 1}}}{{z}}")
        asm.ins(f"vmovdqu16 {32 * v}(%rsi, %rcx), %ymm1{{%k{v + 1}}}{{z}}")
        asm.ins("vpermt2w %zmm1, %zmm31, %zmm0")
        store("%zmm0", v, "%rdx")
    asm.ins("leaq (%rsi, %rcx, 2), %rsi")
    asm.ins(f"addq ${step}, %rdx")
    asm.ins("decq %rax")
    asm.ins(f"jnz {back(pairs)}")
    asm.place(odd)
    asm.ins(f"cmpq $0, {ODD}({WS})")
    asm.ins(f"je {fwd(pad)}")
    for v in range(op.vectors):
        asm.ins(f"vmovdqu16 {32 * v}(%rsi), %ymm0{{%k{v + 1}}}{{z}}")
        asm.ins("vpermt2w %zmm30, %zmm31, %zmm0")
        store("%zmm0", v, "%rdx")
    asm.ins(f"addq ${step}, %rdx")
    asm.place(pad)
    asm.ins(f"movq {PAD_PAIRS}({WS}), %rax")
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


def _emit_pack_lane_major(asm, p, op):
    """Each sliver of an operand stored with its lanes as rows (A, or B
    transposed), per pair of k `lanes` dwords (X(l,k), X(l,k+1)); lanes
    past the block's edge zero. With `lanes` a multiple of 8, a sliver of
    whole rows first has its pairs copied 8 at a time by 8 x 8 dword
    transposes (a pair is a dword: rows of 8 pairs in, 8 pairs of 8 rows
    out); then one row at a time, from the first pair not copied: its
    pairs are consecutive dwords, `lanes` dwords apart in the sliver."""
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
    step = op.lanes * 4
    asm.comment(f"PACK {name} (lanes along its rows)")
    asm.comment(f"source row: {name} + block * ld + pc * 2")
    asm.ins(f"movq {op.block}, %rsi")
    asm.ins(f"imulq {op.ld_slot}({WS}), %rsi")
    asm.ins(f"leaq (%rsi, {PC}, 2), %rsi")
    asm.ins(f"addq {op.base_slot}({WS}), %rsi")
    asm.ins(f"leaq {op.dst_offset}({WS}), %rdx")  # this row's first dword
    asm.ins(f"xorl {IR}d, {IR}d")                   # row
    asm.ins(f"xorl {JR}d, {JR}d")                   # row within the sliver
    asm.ins(f"movq $0, {VECTOR_PAIRS}({WS})")
    asm.ins("vpxord %xmm0, %xmm0, %xmm0")
    asm.place(row)
    asm.ins(f"cmpq {op.count}, {IR}")
    asm.ins(f"jae {fwd(zero_rows)}")
    row_copy = asm.label("PACK A: this row's remaining pairs")
    if op.lanes % 8 == 0:
        _emit_pack_transposed(asm, p, op, row_copy)
    asm.place(row_copy)
    asm.ins(f"movq {VECTOR_PAIRS}({WS}), %rax")
    asm.ins("leaq (%rsi, %rax, 4), %rcx")
    asm.ins(f"imulq ${step}, %rax, %rdi")
    asm.ins("addq %rdx, %rdi")
    asm.ins(f"subq {PAIRS}({WS}), %rax")
    asm.ins("negq %rax")
    asm.ins(f"jz {fwd(odd)}")
    asm.place(pairs)
    asm.ins("vmovd (%rcx), %xmm1")
    asm.ins("vmovd %xmm1, (%rdi)")
    asm.ins("addq $4, %rcx")
    asm.ins(f"addq ${step}, %rdi")
    asm.ins("decq %rax")
    asm.ins(f"jnz {back(pairs)}")
    asm.place(odd)
    asm.ins(f"cmpq $0, {ODD}({WS})")
    asm.ins(f"je {fwd(pad)}")
    asm.ins("vpinsrw $0, (%rcx), %xmm0, %xmm1")
    asm.ins("vmovd %xmm1, (%rdi)")
    asm.ins(f"addq ${step}, %rdi")
    asm.place(pad)
    asm.ins(f"movq {PAD_PAIRS}({WS}), %rax")
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
    edge: its first pairs / 8 * 8 pairs, 8 at a time, by transposes
    (ymm0-15, and xmm0 zeroed again after); their count into VECTOR_PAIRS,
    0 for any other sliver. %rsi is the sliver's first row, %rdx its packed
    base; JR serves as the source pointer and is 0 again after."""
    chunk = asm.label(f"PACK {op.name}: next 8 pairs of the sliver, "
                      "transposed")
    none = asm.label(f"PACK {op.name}: no transposed pairs in this sliver")
    asm.ins(f"testq {JR}, {JR}")
    asm.ins(f"jnz {fwd(row_copy)}")
    asm.ins(f"movq $0, {VECTOR_PAIRS}({WS})")
    asm.ins(f"leaq {op.lanes}({IR}), %rax")
    asm.ins(f"cmpq {op.count}, %rax")
    asm.ins(f"ja {fwd(row_copy)}")
    asm.ins(f"movq {PAIRS}({WS}), %rax")
    asm.ins("shrq $3, %rax")
    asm.ins(f"jz {fwd(none)}")
    asm.ins(f"movq %rsi, {JR}")
    asm.ins("movq %rdx, %rdi")
    asm.place(chunk)
    for g in range(op.lanes // 8):
        asm.ins(f"movq {JR}, %rcx")
        if g:
            asm.ins(f"movq {op.ld_slot}({WS}), %rsi")
            asm.ins(f"imulq ${8 * g}, %rsi")
            asm.ins("addq %rsi, %rcx")
        for i in range(8):
            asm.ins(f"vmovdqu (%rcx), %ymm{i}")
            if i < 7:
                asm.ins(f"addq {op.ld_slot}({WS}), %rcx")
        emit_transpose_8x8(asm)
        for j in range(8):
            asm.ins(f"vmovdqu %ymm{8 + j}, {j * op.lanes * 4 + g * 32}(%rdi)")
    asm.ins(f"addq $32, {JR}")
    asm.ins(f"addq ${8 * op.lanes * 4}, %rdi")
    asm.ins("decq %rax")
    asm.ins(f"jnz {back(chunk)}")
    asm.comment("restore the row pointer and the row counter")
    asm.ins(f"movq {op.block}, %rsi")
    asm.ins(f"addq {IR}, %rsi")
    asm.ins(f"imulq {op.ld_slot}({WS}), %rsi")
    asm.ins(f"leaq (%rsi, {PC}, 2), %rsi")
    asm.ins(f"addq {op.base_slot}({WS}), %rsi")
    asm.ins(f"xorl {JR}d, {JR}d")
    asm.ins(f"movq {PAIRS}({WS}), %rax")
    asm.ins("andq $-8, %rax")
    asm.ins(f"movq %rax, {VECTOR_PAIRS}({WS})")
    asm.ins("vpxord %xmm0, %xmm0, %xmm0")
    asm.place(none)


def _emit_pack(asm, p, op):
    if op.k_major:
        _emit_pack_k_major(asm, p, op)
    else:
        _emit_pack_lane_major(asm, p, op)


def _acc(p, i, v):
    return f"%zmm{i * p.nv + v}"


def _b_reg(p, v):
    return f"%zmm{p.mr * p.nv + v}"


def _a_reg(p):
    return f"%zmm{p.mr * p.nv + p.nv}"


def _emit_compute(asm, p):
    """One MR x NR tile at (ic + ir, jc + jr) over the block's pairs, then
    C updated: the accumulators added to C (or stored, for the first block
    of an overwriting kernel), masked past N, up to row mb."""
    k_loop = asm.label("K loop: next k_unroll pairs")
    add = asm.label("C += the tile")
    done = asm.label("tile stored")
    asm.comment("COMPUTE: packed A sliver -> %rax, B sliver -> %rsi")
    asm.ins(f"imulq ${p.kc_pairs * 4}, {IR}, %rax")
    asm.ins(f"leaq {AP_OFFSET}({WS}, %rax), %rax")
    asm.ins(f"imulq ${p.kc_pairs * 4}, {JR}, %rsi")
    asm.ins(f"leaq {p.bp_offset}({WS}, %rsi), %rsi")
    for i in range(p.mr):
        for v in range(p.nv):
            r = _acc(p, i, v)
            asm.ins(f"vpxord {r}, {r}, {r}")
    asm.comment("C tile: %rdi = C + (ic + ir) * ldc + (jc + jr) * 4, its "
                "lines prefetched while the K loop runs")
    asm.ins(f"leaq ({IC}, {IR}), %rdi")
    asm.ins(f"imulq {LD_BYTES_OFFSET + 16}({WS}), %rdi")
    asm.ins(f"leaq ({JC}, {JR}), %rdx")
    asm.ins("leaq (%rdi, %rdx, 4), %rdi")
    asm.ins(f"addq 16({WS}), %rdi")
    asm.ins("movq %rdi, %rdx")
    for i in range(p.mr):
        for v in range(p.nv):
            asm.ins(f"prefetcht0 {64 * v}(%rdx)")
        if i + 1 < p.mr:
            asm.ins(f"addq {LD_BYTES_OFFSET + 16}({WS}), %rdx")
    asm.ins(f"movq {ITERATIONS}({WS}), %rcx")
    asm.ins(".p2align 4")
    asm.place(k_loop)
    a = _a_reg(p)
    for u in range(p.k_unroll):
        for v in range(p.nv):
            asm.ins(f"vmovups {(u * p.nr + v * LANES) * 4}(%rsi), "
                    f"{_b_reg(p, v)}")
        for i in range(p.mr):
            asm.ins(f"vpbroadcastd {(u * p.mr + i) * 4}(%rax), {a}")
            for v in range(p.nv):
                asm.ins(f"vdpbf16ps {_b_reg(p, v)}, {a}, {_acc(p, i, v)}")
    asm.ins(f"addq ${p.k_unroll * p.mr * 4}, %rax")
    asm.ins(f"addq ${p.k_unroll * p.nr * 4}, %rsi")
    asm.ins("decq %rcx")
    asm.ins(f"jnz {back(k_loop)}")

    asm.comment("C update: rows left in %rsi")
    asm.ins(f"movl {NB}d, %ecx")
    asm.ins(f"subl {JR}d, %ecx")
    _lane_masks(asm, p, "%ecx", p.nv, p.nr)
    asm.ins(f"movq {MB}, %rsi")
    asm.ins(f"subq {IR}, %rsi")
    if p.fault == "write-past-edge":
        asm.ins(f"movq ${p.mr}, %rsi")
    asm.ins(f"movq {LD_BYTES_OFFSET + 16}({WS}), %rcx")
    if p.overwrite:
        asm.ins(f"testq {PC}, {PC}")
        asm.ins(f"jnz {fwd(add)}")
        _emit_c_rows(asm, p, done, read_c=False)
        asm.ins(f"jmp {fwd(done)}")
    asm.place(add)
    _emit_c_rows(asm, p, done, read_c=True)
    asm.place(done)


def _emit_c_rows(asm, p, done, read_c):
    t = _a_reg(p)
    for i in range(p.mr):
        for v in range(p.nv):
            mask = f"{{%k{v + 1}}}"
            acc = _acc(p, i, v)
            if read_c:
                asm.ins(f"vmovups {64 * v}(%rdi), {t}{mask}{{z}}")
                asm.ins(f"vaddps {t}, {acc}, {acc}")
            asm.ins(f"vmovups {acc}, {64 * v}(%rdi){mask}")
        if i + 1 < p.mr:
            asm.ins(f"cmpq ${i + 1}, %rsi")
            asm.ins(f"jbe {fwd(done)}")
            asm.ins("addq %rcx, %rdi")


def _emit_body(p):
    asm = Asm()
    jc_loop = asm.label("jc: next nc block of columns")
    pc_loop = asm.label("pc: next kc block of the reduction")
    ic_loop = asm.label("ic: next mc block of rows")
    jr_loop = asm.label("jr: next sliver of B")
    ir_loop = asm.label("ir: next sliver of A")
    if p.fault == "segfault":
        asm.comment("fault segfault: store through a null pointer")
        asm.ins("xorl %eax, %eax")
        asm.ins("movl %eax, (%rax)")
    elif p.fault == "hang":
        spin = asm.label("fault hang: spin forever")
        asm.place(spin)
        asm.ins(f"jmp {back(spin)}")
    asm.ins("movq %rdi, 0(%rcx)")
    asm.ins("movq %rsi, 8(%rcx)")
    asm.ins("movq %rdx, 16(%rcx)")
    asm.ins(f"movq %rcx, {WS}")
    asm.comment("lda, ldb (bf16) and ldc (f32) in bytes")
    for i, size in enumerate((2, 2, 4)):
        if p.runtime_ld:
            asm.ins(f"movq {LD_OFFSET + 8 * i}({WS}), %rax")
            asm.ins(f"shlq ${size.bit_length() - 1}, %rax")
        else:
            ld = (p.lda, p.ldb, p.ldc)[i]
            asm.ins(f"movq ${ld * size}, %rax")
        asm.ins(f"movq %rax, {LD_BYTES_OFFSET + 8 * i}({WS})")
    asm.comment("the VPERMT2W index: word 2j <- row k's j, 2j+1 <- row "
                "k+1's j (32 + j)")
    for q in range(8):
        words = []
        for w in range(4 * q, 4 * q + 4):
            j, second = divmod(w, 2)
            if p.fault == "swap-pairs":
                second = 1 - second
            words.append(j + 32 * second)
        value = sum(word << (16 * n) for n, word in enumerate(words))
        asm.ins(f"movabsq ${value:#x}, %rax")
        asm.ins(f"movq %rax, {INDEX_OFFSET + 8 * q}({WS})")

    asm.ins(f"xorl {JC}d, {JC}d")
    asm.place(jc_loop)
    asm.ins(f"movq ${p.n}, {NB}")
    asm.ins(f"subq {JC}, {NB}")
    _min_into(asm, NB, p.nc)
    asm.ins(f"xorl {PC}d, {PC}d")
    asm.place(pc_loop)
    asm.ins(f"movq ${p.k}, {KB}")
    asm.ins(f"subq {PC}, {KB}")
    _min_into(asm, KB, p.kc)
    _emit_block_counts(asm, p)
    a_op, b_op = _operands(p)
    _emit_pack(asm, p, b_op)
    asm.ins(f"xorl {IC}d, {IC}d")
    asm.place(ic_loop)
    asm.ins(f"movq ${p.m}, {MB}")
    asm.ins(f"subq {IC}, {MB}")
    _min_into(asm, MB, p.mc)
    _emit_pack(asm, p, a_op)
    asm.ins(f"xorl {JR}d, {JR}d")
    asm.place(jr_loop)
    asm.ins(f"xorl {IR}d, {IR}d")
    asm.place(ir_loop)
    _emit_compute(asm, p)
    asm.ins(f"addq ${p.mr}, {IR}")
    asm.ins(f"cmpq {MB}, {IR}")
    asm.ins(f"jb {back(ir_loop)}")
    asm.ins(f"addq ${p.nr}, {JR}")
    asm.ins(f"cmpq {NB}, {JR}")
    asm.ins(f"jb {back(jr_loop)}")
    asm.ins(f"addq ${p.mc}, {IC}")
    asm.ins(f"cmpq ${p.m}, {IC}")
    asm.ins(f"jb {back(ic_loop)}")
    asm.ins(f"addq ${p.kc}, {PC}")
    asm.ins(f"cmpq ${p.k}, {PC}")
    asm.ins(f"jb {back(pc_loop)}")
    asm.ins(f"addq ${p.nc}, {JC}")
    asm.ins(f"cmpq ${p.n}, {JC}")
    asm.ins(f"jb {back(jc_loop)}")
    asm.ins("vzeroupper")
    return asm.text()


def emit(request):
    p = Params(request)
    symbol = p.symbol()
    body = _emit_body(p)
    meta = {k: request[k] for k in sorted(request)}
    out = [
        f"# QiMeng-TensorOp sbgemm kernel, qimeng_emitters "
        f"{GENERATOR_VERSION}, protocol {PROTOCOL_VERSION}",
        f"# C[{p.m}x{p.n}] (f32) {'=' if p.overwrite else '+='} "
        f"{'A^T' if p.trans_a else 'A'} (bf16) * "
        f"{'B^T' if p.trans_b else 'B'} (bf16), K = {p.k}",
        f"# qm.symbol: {symbol}",
        f"# qm.workspace_bytes: {p.workspace_bytes}",
        "# qm.leading_dims: " + ("runtime" if p.runtime_ld else "immediate"),
        "# qm.args: " + ",".join(ABI.args),
        "# qm.clobbers: " + ",".join(
            list(ABI.gprs) + [f"zmm{i}" for i in range(REGISTERS)]
            + [f"k{v + 1}" for v in range(p.nv)]
            + (["k7"] if p.trans_a and p.nv < 7 else [])),
        "# qm.features: " + ",".join(FEATURES),
        f"# qm.inner_loop_flops: {64 * p.mr * p.nv * p.k_unroll}",
        f"# qm.generator: {GENERATOR_VERSION}",
        "# qm.request: " + json.dumps(meta, sort_keys=True,
                                      separators=(",", ":")),
        "\t.text",
        f"\t.globl\t{symbol}",
        "\t.p2align\t5",
        f"\t.type\t{symbol},@function",
        f"{symbol}:",
    ]
    out += [f"\tpushq\t%{reg}" for reg in ABI.callee_saved]
    out.append("# qm.body.begin")
    out.append(body.rstrip("\n"))
    out.append("# qm.body.end")
    out += [f"\tpopq\t%{reg}" for reg in reversed(ABI.callee_saved)]
    out += ["\tretq", f"\t.size\t{symbol}, .-{symbol}",
            "\t.section\t.note.GNU-stack,\"\",@progbits"]
    return "\n".join(out) + "\n"

"""BLIS's loops around the microkernel, shared by the x86-64 generators:
one loop nest, three microkernel writers (sgemm.py: f32 on FMA;
dotgemm.py: bf16, f16 and int8 on the dot-product instructions; amx.py:
AMX tiles). BLIS keeps its five loops and the places of its packs in
frame/, apart from the kernels of each architecture; sketch.py is the same
split for the in-place nest of the AArch64 and RISC-V writers.

    [the part of C this call computes: all of it, or rows [m_begin, m_end)
     and columns [n_begin, n_end) from the header (a part of a parallel
     call, a run-time M or N), an empty part to `done`]
    for each image of the batch:             an nchw convolution (B gathered)
      for jc in n_begin..n_end step nc:      NB = min(nc, n_end - jc)
        for pc in 0..K step kc:              KB = min(kc, K - pc)
          writer's column block: PACK B[pc:pc+KB, jc:jc+NB] (or its
                                 prepacked panel, or B read in place)
          for ic in m_begin..m_end step mc:  MB = min(mc, m_end - ic)
            writer's row block:  PACK A[ic:ic+MB, pc:pc+KB] (or A in place)
            writer's compute:    the jr and ir loops over the block's
                                 slivers (emit_sliver_heads and
                                 emit_sliver_ends where the writer puts
                                 nothing between them and its microkernel)

The writers decide everything inside a block: the blocking (mr, nr, kc,
mc, nc in their Params, from the request), the packed layouts, the loop
order inside the block and the microkernel. docs/KernelContract.md states
the register map below and the header the loops read. What the writers'
blocks address through that register map is here too: a prepacked B's
panel, the C tile, and the rows of an A read in place with a run-time lda.
"""

from .header import K_SLOT, RANGE_OFFSET
from .x86 import back, check_disp, fwd

# The body's registers: the workspace, then the loops' counters and the
# sizes of the current blocks.
WS, JC, NB, PC, KB, IC, MB, JR, IR = (
    "%rbx", "%r8", "%r9", "%r10", "%r11", "%r12", "%r13", "%r14", "%r15")

# Where the x86 kernels keep lda, ldb and ldc in bytes (three int64 in
# the header, written by the kernel at entry from the caller's elements
# or its immediates).
LD_BYTES_OFFSET = 88


def min_into(asm, dst, limit):
    """dst = min(dst, limit) for unsigned dst; clobbers %rax."""
    asm.ins(f"movq ${limit}, %rax")
    asm.ins(f"cmpq %rax, {dst}")
    asm.ins(f"cmovaq %rax, {dst}")


def k_operand(p):
    """K as an instruction operand: an immediate, or (dynamic_k) the
    header slot the caller writes it in."""
    return f"{K_SLOT}({WS})" if p.dynamic_k else f"${p.k}"


def emit_part_of_c(asm, p, done, transposed=False):
    """The part of C this call computes: (m_begin, m_end, n_begin, n_end)
    as operands, from the header (p.reads_range: a part of a parallel call,
    or a run-time M or N; an empty part jumps to `done`, JC set to
    n_begin) or the whole of C (m_begin and n_begin None). `transposed`:
    the kernel computes C^T, its rows the header's columns and its columns
    the header's rows."""
    if not p.reads_range:
        return None, f"${p.m}", None, f"${p.n}"
    fields = (2, 3, 0, 1) if transposed else (0, 1, 2, 3)
    m_begin, m_end, n_begin, n_end = (f"{RANGE_OFFSET + 8 * i}({WS})"
                                      for i in fields)
    asm.comment("rows [m_begin, m_end), columns [n_begin, n_end) from "
                f"the header{' (of C^T)' if transposed else ''}")
    asm.ins(f"movq {m_begin}, %rax")
    asm.ins(f"cmpq {m_end}, %rax")
    asm.ins(f"jge {fwd(done)}")
    asm.ins(f"movq {n_begin}, {JC}")
    asm.ins(f"cmpq {n_end}, {JC}")
    asm.ins(f"jge {fwd(done)}")
    return m_begin, m_end, n_begin, n_end


def emit_nest(asm, p, done, column_block, row_block, compute,
              transposed=False):
    """The loops of the module docstring around a writer's three parts,
    each a function of (asm, p) that writes its part: `column_block` at
    each (jc, pc) block, `row_block` at each ic block, `compute` inside
    it. `p` (the writer's Params) gives the sizes (m, n, and k or
    dynamic_k), the blocking (mc, nc, kc), reads_range and the
    convolution (conv: one whose `images` exceed 1 runs the nest once an
    image, through its emit_batch_begin and emit_batch_next). The caller
    places `done` after the nest where the part of C may be empty."""
    jc_loop = asm.label("jc: next nc block of columns")
    pc_loop = asm.label("pc: next kc block of the reduction")
    ic_loop = asm.label("ic: next mc block of rows")
    m_begin, m_end, n_begin, n_end = emit_part_of_c(asm, p, done,
                                                    transposed)
    conv = p.conv
    image_loop = None
    if conv is not None and conv.images > 1:
        image_loop = asm.label("next image of the batch")
        conv.emit_batch_begin(asm)
        asm.place(image_loop)
    if n_begin is None:
        asm.ins(f"xorl {JC}d, {JC}d")
    elif image_loop is not None:
        asm.ins(f"movq {n_begin}, {JC}")
    asm.place(jc_loop)
    asm.ins(f"movq {n_end}, {NB}")
    asm.ins(f"subq {JC}, {NB}")
    min_into(asm, NB, p.nc)
    asm.ins(f"xorl {PC}d, {PC}d")
    asm.place(pc_loop)
    asm.ins(f"movq {k_operand(p)}, {KB}")
    asm.ins(f"subq {PC}, {KB}")
    min_into(asm, KB, p.kc)
    column_block(asm, p)
    if m_begin is None:
        asm.ins(f"xorl {IC}d, {IC}d")
    else:
        asm.ins(f"movq {m_begin}, {IC}")
    asm.place(ic_loop)
    asm.ins(f"movq {m_end}, {MB}")
    asm.ins(f"subq {IC}, {MB}")
    min_into(asm, MB, p.mc)
    row_block(asm, p)
    compute(asm, p)
    _emit_loop_ends(asm, ((IC, p.mc, m_end, ic_loop),
                          (PC, p.kc, k_operand(p), pc_loop),
                          (JC, p.nc, n_end, jc_loop)))
    if image_loop is not None:
        conv.emit_batch_next(asm, image_loop)


def _sliver_loops(p, jr_loop, ir_loop, order):
    """The jr (NR columns up to NB) and ir (MR rows up to MB) loops as
    (register, step, bound, label), outer first: jr outside unless `order`
    is "ir-jr"."""
    jr = (JR, p.nr, NB, jr_loop)
    ir = (IR, p.mr, MB, ir_loop)
    return (ir, jr) if order == "ir-jr" else (jr, ir)


def emit_sliver_heads(asm, p, jr_loop, ir_loop, order="jr-ir"):
    """The heads of the jr and ir loops over a block's slivers, from 0:
    "jr-ir" keeps one B sliver in L1 while the A slivers stream from L2
    (BLIS); "ir-jr" keeps one A sliver there while the B slivers
    stream."""
    for reg, _, _, loop in _sliver_loops(p, jr_loop, ir_loop, order):
        asm.ins(f"xorl {reg}d, {reg}d")
        asm.place(loop)


def emit_sliver_ends(asm, p, jr_loop, ir_loop, order="jr-ir"):
    """The ends of the loops emit_sliver_heads began, inner first."""
    _emit_loop_ends(asm, reversed(_sliver_loops(p, jr_loop, ir_loop,
                                                order)))


def _emit_loop_ends(asm, loops):
    """The ends of `loops`, innermost first, each (register, step, bound,
    label): the register on by its step, back to the label while below
    the bound (unsigned)."""
    for reg, step, bound, loop in loops:
        asm.ins(f"addq ${step}, {reg}")
        asm.ins(f"cmpq {bound}, {reg}")
        asm.ins(f"jb {back(loop)}")


def emit_prepacked_panel(asm, rows, group, nr, slot):
    """A prepacked B's panel for the block at (jc, pc) into workspace
    `slot`: B + jc * rows * 4 + pc / group * NR * 4, `rows` the layout's
    rows (k groups) a sliver, `group` the k a row holds (docs/
    KernelContract.md, "B prepacked")."""
    asm.comment(f"B prepacked: the block's panel = B + jc * {rows} * 4 + pc"
                f"{f' / {group}' if group > 1 else ''} * NR * 4")
    asm.ins(f"imulq ${check_disp(rows * 4, 'B sliver')}, {JC}, %rax")
    asm.ins(f"movq {PC}, %rdx")
    if group > 1:
        asm.ins(f"shrq ${group.bit_length() - 1}, %rdx")
    asm.ins(f"imulq ${nr * 4}, %rdx, %rdx")
    asm.ins("addq %rdx, %rax")
    asm.ins(f"addq 8({WS}), %rax")
    asm.ins(f"movq %rax, {slot}({WS})")


def emit_c_tile_pointer(asm, transposed, ldc):
    """%rdi = C + (ic + ir)*ldc + (jc + jr)*4: the tile's first element (C
    in header slot 16, `ldc` a Stride of C's row bytes); C + (jc +
    jr)*ldc + (ic + ir)*4 for the product transposed (the tile's rows are
    C's columns). %rdx is written too. (sgemm.py's and dotgemm.py's
    tiles.)"""
    rows, cols = ((JC, JR), (IC, IR)) if transposed else ((IC, IR), (JC, JR))
    asm.ins(f"leaq ({rows[0]},{rows[1]}), %rdi")
    ldc.multiply(asm, "%rdi", "%rdi", "C row")
    asm.ins(f"leaq ({cols[0]},{cols[1]}), %rdx")
    asm.ins("leaq (%rdi,%rdx,4), %rdi")
    asm.ins(f"addq 16({WS}), %rdi")


# A read in place with a run-time lda (a_layout "direct", runtime_ld): the
# K loop reaches row i of a sliver from one of three base registers plus a
# multiple of lda (in bytes in %r9). Where the K loops leave %rdx free (B's
# rows a packed step, no next panel swept: sgemm.py's a_rows_three_lda),
# 3 lda waits there and the bases hold rows 0, 3 and 10: 0, 1, 2, 4 or 8
# lda, or 3, 6 or 12, past one of them reach rows 0 to 16
# (RUNTIME_A_REACH; what dotgemm.py's K loops do too); else they hold rows
# 0, 3 and 6, each reaching its three rows at 0, 1 or 2 lda: nine. %r9
# (nc block's columns) and %r13 (mc block's rows) wait in the workspace
# meanwhile, and %rdi (the C tile) is computed again.
A_ROW_BASES = ("%rax", "%r13", "%rdi")
A_LDA_REG, A_LDA3_REG = "%r9", "%rdx"
RUNTIME_A_BASES = tuple(zip(A_ROW_BASES, (0, 3, 10)))
RUNTIME_A_STEPS = {0: "", 1: f",{A_LDA_REG}", 2: f",{A_LDA_REG},2",
                   4: f",{A_LDA_REG},4", 8: f",{A_LDA_REG},8",
                   3: f",{A_LDA3_REG}", 6: f",{A_LDA3_REG},2",
                   12: f",{A_LDA3_REG},4"}
# Without 3 lda: the rows a base reaches (0, 1 or 2 lda past it), and the
# rows all of the bases reach.
ROWS_A_BASE = 3
RUNTIME_A_REACH_LDA_ONLY = len(A_ROW_BASES) * ROWS_A_BASE


def runtime_a_row(i):
    """(base register, index) that reach row i of a sliver read in place
    with a run-time lda and 3 lda in A_LDA3_REG, or None past the last
    such row."""
    for base, first in RUNTIME_A_BASES:
        step = RUNTIME_A_STEPS.get(i - first)
        if step is not None:
            return base, step
    return None


RUNTIME_A_REACH = next(i for i in range(64) if runtime_a_row(i) is None)
assert RUNTIME_A_REACH == 17


def emit_runtime_a_bases(asm, mr, lda_operand):
    """Before the K loop of an mr-row sliver read in place with a run-time
    lda and 3 lda (its row 0 at %rax): lda (`lda_operand`, bytes) and 3
    lda into their registers, and the further bases its rows need; returns
    the bases the loop steps."""
    asm.comment(f"rows from bases: lda -> {A_LDA_REG}, 3 lda -> "
                f"{A_LDA3_REG}, rows " + ", ".join(
                    f"{first} -> {base}" for base, first in RUNTIME_A_BASES))
    asm.ins(f"movq {lda_operand}, {A_LDA_REG}")
    asm.ins(f"leaq ({A_LDA_REG}, {A_LDA_REG}, 2), {A_LDA3_REG}")
    used = {runtime_a_row(i)[0] for i in range(mr)}
    for base, first in RUNTIME_A_BASES[1:]:
        if base not in used:
            continue
        # From row 0 in the largest steps: 3 lda; 8 lda then 2 lda.
        source, left = "%rax", first
        while left:
            step = max(s for s in RUNTIME_A_STEPS if s <= left)
            asm.ins(f"leaq ({source}{RUNTIME_A_STEPS[step]}), {base}")
            source, left = base, left - step
    return [base for base, _ in RUNTIME_A_BASES if base in used]

"""SGEMM for x86-64 AVX2/AVX-512: BLIS-style blocking, PACK and COMPUTE.

One request = one complete kernel for one shape: C += op(A) * op(B),
row-major, leading dimensions and transposes baked in. The code is a body
that takes A, B, C and a workspace pointer in %rdi, %rsi, %rdx, %rcx; the
function form wraps it with a prologue and epilogue. docs/KernelContract.md
states the ABI; this module is its implementation.

Loop nest (blis.py's, shared with dotgemm.py and amx.py; this module
writes its packs and its microkernel):

    for jc in 0..N step nc:              nb = min(nc, N - jc)
      for pc in 0..K step kc:            kb = min(kc, K - pc)
        PACK B[pc:pc+kb, jc:jc+nb] -> Bp   (NR-wide slivers, k-major)
        for ic in 0..M step mc:          mb = min(mc, M - ic)
          PACK A[ic:ic+mb, pc:pc+kb] -> Ap (MR-tall slivers, k-major)
          for jr in 0..nb step NR:
            for ir in 0..mb step MR:
              COMPUTE MR x NR += Ap sliver * Bp sliver over kb

With fuse_pack_b there is no PACK B: the COMPUTE of a sliver's first tile
(the first ic block, ir = 0) reads B in place and stores Bp as it goes.
"""

import collections
import copy

from .blis import (A_LDA_REG, A_ROW_BASES, IC, JC, KB, LD_BYTES_OFFSET, MB,
                   NB, PC, ROWS_A_BASE, RUNTIME_A_REACH,
                   RUNTIME_A_REACH_LDA_ONLY, RUNTIME_A_STEPS, WS,
                   emit_c_tile_pointer, emit_nest, emit_prepacked_panel,
                   emit_runtime_a_bases, emit_sliver_ends, emit_sliver_heads,
                   k_operand, min_into, runtime_a_row)
from .errors import RequestError
from .fields import (ACTIVATION_FIELDS, SMOOTH_FIELD, activation_suffix,
                     bool_field, cache_blocks, check_known,
                     check_target_features, has_activation, int_field,
                     leading_dims, read_activation, round_up)
from .header import (BIAS_OFFSET, HEADER_BYTES, K_SLOT, LD_OFFSET,
                     RANGE_OFFSET)
from .x86 import (Asm, Stride, back, check_disp, emit_fault_entry,
                  emit_leaky_relu, emit_relu, emit_relu_constants,
                  emit_relu_floor, emit_smooth_activation,
                  emit_smooth_constants, emit_transpose_8x8,
                  emit_transpose_16x16,
                  function_text, fwd, isa_field, leaky_slope_address,
                  relu_max_address, relu_min_address, xmm)

# Workspace layout (bytes from the workspace pointer): the header
# (header.py, docs/KernelContract.md), then the edge tile and the packed
# blocks. The caller's slots (header.py): RANGE_OFFSET, K_SLOT, LD_OFFSET,
# BIAS_OFFSET; the x86 kernels' (blis.py): LD_BYTES_OFFSET; this kernel's
# own:
NEXT_PANEL_SLOT = 56        # next B panel's line to prefetch (fuse_pack_b,
                            # B in place: sweep_lines_in_place, or B^T's
                            # row: sweep_next_transposed_panel), but with
                            # dynamic_k, whose K_SLOT it is
                            # (Params.next_panel_slot)
B_PANEL_SLOT = 56           # b_prepacked: the block's panel in the caller's
                            # B (excludes fuse_pack_b and dynamic_k)
SWEEP_ROW_END_SLOT = 64     # sweep_lines_in_place (static ldb): the end of
SWEEP_ROW_BYTES_SLOT = 72   # the row's columns the walk is in, and their
                            # bytes (nb * 4)
SAVE_SLOT = 120             # a register the AVX2 edge epilogue borrows
TILE_OFFSET = HEADER_BYTES  # MR x NR edge tile

# The K loops prefetch the next panel of a B^T that PACK B transposes
# (Params.sweep_next_transposed_panel) where a row of it is at most
# SWEEP_LINES cache lines (kc 128) and the tiles take at most SWEEP_AHEAD K
# iterations per row of the panel. A B read in place (sweep_b) is swept at
# most SWEEP_LINES lines an iteration too.
SWEEP_LINES = 8
SWEEP_AHEAD = 12

# How many k rows ahead the tile that packs a B sliver (fuse_pack_b)
# prefetches B in place.
FUSED_B_PREFETCH_ROWS = 8

# Test-only deliberately broken kernels: the validator and the isolation
# must catch each of them.
FAULTS = (None, "drop-k", "write-past-edge", "segfault", "hang")

# A read in place with a run-time lda: its rows from base registers
# (blis.py's RUNTIME_A_BASES, or A_ROW_BASES without 3 lda); the row
# stride that says so.
RUNTIME_A_ROWS = "runtime"


UNIT = Stride(4)


class Params:
    """A validated request with the blocking clamped to the problem."""

    #: The convolution this GEMM computes (conv2d.Conv), or None.
    conv = None

    def __init__(self, request):
        check_known(request, (
            "isa", "m", "n", "k", "lda", "ldb", "ldc", "trans_a", "trans_b",
            "mr", "nr", "k_unroll", "kc", "mc", "nc", "prefetch_a",
            "prefetch_b", "order", "pack_b", "fuse_pack_b", "b_prepacked",
            "fault",
            "target_features", "parallel", "loop_order", "a_layout",
            "overwrite", "runtime_ld", "dynamic_m", "dynamic_n", "dynamic_k",
            "bias", "product", "sweep_b") + ACTIVATION_FIELDS
            + (SMOOTH_FIELD,))
        self.isa = isa_field(request)
        check_target_features(request, self.isa)
        self.m = int_field(request, "m")
        self.n = int_field(request, "n")
        self.k = int_field(request, "k")
        self.trans_a = bool_field(request, "trans_a")
        self.trans_b = bool_field(request, "trans_b")
        self.parallel = bool_field(request, "parallel")
        # M is a run-time value: the rows [m_begin, m_end) come from the
        # header as in the parallel form, and `m` is only the size the
        # blocking was clamped for (the tuning's representative).
        self.dynamic_m = bool_field(request, "dynamic_m")
        # N likewise: the columns [n_begin, n_end) from the header, `n` the
        # representative; C's ldc then is a run-time value too.
        self.dynamic_n = bool_field(request, "dynamic_n")
        # K likewise: from the header (K_SLOT) at each call, `k` the
        # representative the kc blocking was clamped for.
        self.dynamic_k = bool_field(request, "dynamic_k")
        # The epilogue, applied where the last kc block stores C: a bias
        # per column (bias[j]) or per row (bias[i]), its pointer in the
        # header, and relu (NaN stays NaN and -0 becomes +0, as
        # arith.maximumf(x, 0)).
        self.bias = request.get("bias", "none")
        if self.bias not in BIASES:
            raise RequestError(
                f"unknown bias {self.bias!r}; expected one of "
                + ", ".join(BIASES))
        # relu's floor other than 0 (relu is then max(x, relu_min)) and its
        # bound (relu6, hardtanh): min(x, max) after relu, NaN kept
        # (arith.minimumf); relu_nan_to_floor: relu makes a NaN its floor
        # (torch-mlir's clamp) instead of keeping it. Or leaky relu's
        # slope (leaky_slope): x > 0 ? x : slope * x, where relu would be.
        # Or a smooth activation (smooth: sigmoid, silu, gelu_tanh,
        # gelu_erf), to a few ulps (x86.emit_smooth_activation).
        read_activation(request, self)
        # C = A * B: the first kc block stores the accumulators, C is never
        # read (a zero-filled C whose fill the pass removed).
        self.overwrite = bool_field(request, "overwrite")
        self.pack_b = request.get("pack_b", True)
        if not isinstance(self.pack_b, bool):
            raise RequestError("field 'pack_b' must be true or false")
        self.fuse_pack_b = bool_field(request, "fuse_pack_b")
        # B read in place streams from memory: sweep its next panel where
        # the blocking allows (sweep_lines_in_place).
        self.sweep_b = bool_field(request, "sweep_b")
        # Leading dimensions: immediates in the code, or (runtime_ld) read
        # from the workspace header at every call.
        self.runtime_ld = bool_field(request, "runtime_ld")
        self.lda, self.ldb, self.ldc = leading_dims(
            request, self.m, self.n, self.k, self.trans_a, self.trans_b,
            self.dynamic_m, self.dynamic_n, self.dynamic_k)
        # The symbol and the header name C's problem, whichever product
        # computes it.
        self.c_problem = CProblem(self.m, self.n, self.trans_a, self.trans_b,
                                  self.lda, self.ldb, self.dynamic_m,
                                  self.dynamic_n, self.bias)
        self.product = request.get("product", "direct")
        if self.product not in PRODUCTS:
            raise RequestError(
                f"unknown product {self.product!r}; expected one of "
                + ", ".join(PRODUCTS))
        self.c_transposed = self.product == "transposed"
        # The header's slots of A's and B's leading dimensions (bytes) and
        # of the rows' and columns' ranges: the caller's A and B, and C's
        # rows and columns.
        ld_slots = (LD_BYTES_OFFSET, LD_BYTES_OFFSET + 8)
        self.m_range_slot, self.n_range_slot = RANGE_OFFSET, RANGE_OFFSET + 16
        if self.c_transposed:
            self._transpose_product(request)
            ld_slots = ld_slots[::-1]
            self.m_range_slot, self.n_range_slot = \
                self.n_range_slot, self.m_range_slot
        if self.runtime_ld:
            self.a_ld, self.b_ld, self.c_ld = (
                Stride(slot=slot) for slot in ld_slots + (
                    LD_BYTES_OFFSET + 16,))
        else:
            self.a_ld, self.b_ld, self.c_ld = (
                Stride(ld * 4) for ld in (self.lda, self.ldb, self.ldc))
        self.mr = int_field(request, "mr")
        self.nr = int_field(request, "nr")
        lanes = self.isa.lanes
        if self.nr % lanes:
            raise RequestError(
                f"nr = {self.nr} must be a multiple of {lanes} "
                f"(f32 lanes of {self.isa.name})")
        self.nv = self.nr // lanes
        self.order = request.get("order", "bcast")
        if self.order not in ORDERS:
            raise RequestError(
                f"unknown order {self.order!r}; expected one of "
                + ", ".join(ORDERS))
        if self.order == "embedded" and self.isa.name != "avx512":
            raise RequestError("order 'embedded' needs avx512 (embedded "
                               "broadcasts are EVEX only)")
        needed = registers_needed(self.mr, self.nv, self.order)
        if needed > self.isa.registers:
            raise RequestError(
                f"a {self.mr}x{self.nr} register block needs {needed} vector "
                f"registers; {self.isa.name} has {self.isa.registers}")
        # The epilogue's registers beside the accumulators (the C++ model's
        # epilogueVectorRegisters keeps to the same counts).
        accumulators = self.mr * self.nv
        for wanted, what, count in (
                (self.relu, "relu", 2),
                (self.relu_max is not None, "a bound on relu", 4),
                (self.leaky_slope is not None, "leaky relu", 4),
                (self.smooth is not None, self.smooth, 4),
                (self.bias == "rows", "a bias along the rows", 3)):
            if wanted and accumulators + count > self.isa.registers:
                words = {2: "two", 3: "three", 4: "four"}[count]
                raise RequestError(
                    f"{what} needs {words} vector registers beside the "
                    f"{accumulators} accumulators")
        if self.c_transposed and self.mr > self.isa.lanes:
            raise RequestError(
                f"product 'transposed' stores a row of C's tile, mr = "
                f"{self.mr} of its columns, as one vector: mr <= "
                f"{self.isa.lanes}")
        self.a_layout = request.get("a_layout", "k-major")
        if self.a_layout not in A_LAYOUTS:
            raise RequestError(
                f"unknown a_layout {self.a_layout!r}; expected one of "
                + ", ".join(A_LAYOUTS))
        if self.a_layout in ("rows", "direct") and self.trans_a:
            raise RequestError(
                f"a_layout '{self.a_layout}' reads rows of A as stored: it "
                "needs trans_a false")
        # Direct slivers are rows too, lda apart (the pointer table and the
        # scratch sliver are placed with the workspace below).
        self.a_direct = self.a_layout == "direct"
        self.a_rows = self.a_layout in ("rows", "direct")
        # Bytes from one row of an A sliver to the next (rows layout); a
        # convolution reading A in place sets its pixel step instead.
        self.a_row_stride = None
        # Workspace offset of the per-sliver A pointers (a convolution
        # reading A in place); None: slivers are packed at ap_offset.
        # Slivers copied to scratch have their rows kc floats apart and
        # bit 0 of their pointer set.
        self.a_pointer_table = None
        self.loop_order = request.get("loop_order", "jr-ir")
        if self.loop_order not in LOOP_ORDERS:
            raise RequestError(
                f"unknown loop_order {self.loop_order!r}; expected one of "
                + ", ".join(LOOP_ORDERS))
        self.k_unroll = int_field(request, "k_unroll", default=1)
        if self.k_unroll not in (1, 2, 4, 8, 16):
            raise RequestError(
                f"k_unroll must be 1, 2, 4, 8 or 16, got {self.k_unroll}")
        self.kc, self.mc, self.nc = cache_blocks(
            request, self.m, self.n, self.k, self.mr, self.nr)
        self.prefetch_a = int_field(request, "prefetch_a", 0, default=0)
        self.prefetch_b = int_field(request, "prefetch_b", 0, default=0)
        for name in ("prefetch_a", "prefetch_b"):
            if getattr(self, name) > 8192:
                raise RequestError(f"{name} must be at most 8192 bytes")
        self.fault = request.get("fault")
        if self.fault not in FAULTS:
            raise RequestError(
                f"unknown fault {self.fault!r}; expected one of drop-k, "
                "write-past-edge, segfault, hang (test-only)")
        # Edge code exists only where the shape needs it (or a fault does,
        # or M is a run-time value).
        self.row_edges = self.m % self.mr != 0 or self.dynamic_m
        self.col_edges = self.n % self.nr != 0 or self.dynamic_n
        # An AVX-512 tile short of columns masks each of its vectors with a
        # mask register of its own (%k1 .. %k7).
        if self.col_edges and self.isa.name == "avx512" and self.nv > 7:
            raise RequestError(
                f"nr {self.nr} is {self.nv} vectors: a tile short of columns "
                "(n not a multiple of nr) takes a mask register a vector, "
                "seven at most (nr 112)")
        # B read in place whose last sliver is short of columns (AVX-512):
        # that sliver's loads of B are masked to its columns, so that they
        # read nothing past N (memory faults suppressed where the lanes are
        # masked off); its accumulators past N stay zero.
        self.b_edge_masked = (not self.pack_b and self.col_edges
                              and self.isa.name == "avx512")
        if not self.pack_b and (self.trans_b or (
                self.col_edges and not self.b_edge_masked)):
            raise RequestError(
                "pack_b = false reads B in place, NR columns at a time: it "
                "needs B not transposed and, except on avx512 (whose last "
                "sliver's loads are masked), n a multiple of nr (not a "
                "run-time n)")
        if self.fuse_pack_b and (not self.pack_b or self.trans_b
                                 or self.col_edges):
            raise RequestError(
                "fuse_pack_b packs each B sliver in the K loop of its first "
                "tile, from B in place: it needs pack_b, B not transposed "
                "and n a multiple of nr (not a run-time n)")
        if self.dynamic_k:
            if self.fuse_pack_b:
                raise RequestError(
                    "dynamic_k and fuse_pack_b exclude each other (K's "
                    "header slot is the fused packing's)")
        # B packed by the caller, once (constant weights), in the layout of
        # docs/KernelContract.md ("B prepacked"): per NR-wide sliver of all
        # N, all K rows of NR floats (zero past N). A kc block's panel is
        # the slivers' rows from pc on; no PACK B.
        self.b_prepacked = bool_field(request, "b_prepacked")
        if self.b_prepacked:
            why = ("pack_b false (B read in place)" if not self.pack_b
                   else "fuse_pack_b (B packed in the first tile)"
                   if self.fuse_pack_b
                   else "a run-time K or N (the layout is all of K and N)"
                   if self.dynamic_k or self.dynamic_n else None)
            if why:
                raise RequestError(f"b_prepacked: not with {why}")
        if self.fault == "write-past-edge":
            self.row_edges = self.col_edges = True
        # Workspace.
        self.tile_bytes = round_up(self.mr * self.nr * 4, 64)
        self.ap_offset = TILE_OFFSET + self.tile_bytes
        self.ap_bytes = round_up(self.mc * self.kc * 4, 64)
        # Bytes from one k row of a B sliver to the next: packed NR floats,
        # or B's own row stride when it is read in place.
        self.b_row = Stride(self.nr * 4) if self.pack_b else self.b_ld
        if self.runtime_a_rows and self.mr > self.runtime_a_reach:
            raise RequestError(
                "a_layout 'direct' with runtime_ld addresses A's rows from "
                f"{len(A_ROW_BASES)} base registers: it needs mr <= "
                f"{self.runtime_a_reach} ({RUNTIME_A_REACH} where B is "
                f"packed and no next panel is swept), got {self.mr}")
        if self.a_direct:
            # No packed A: two slots (the row and column counts, kept
            # while a run-time lda's K loop borrows their registers), the
            # slivers' pointers (one int64 per row of an mc block; a sliver
            # uses its first row's), then one scratch sliver for the rows
            # short of MR at the end of M (or, see a_first_sliver_copied,
            # for the first sliver).
            if self.runtime_ld:
                self.a_row_stride = RUNTIME_A_ROWS
            else:
                self.a_row_stride = check_disp(self.lda * 4, "A row")
                check_disp(self.mr * self.lda * 4, "A row")
            self.a_slots = self.ap_offset
            self.a_pointer_table = self.ap_offset + 64
            self.a_scratch = self.a_pointer_table + round_up(self.mc * 8, 64)
            self.a_sliver_bytes = round_up(self.mr * self.kc * 4, 64)
            self.ap_bytes = 64 + round_up(self.mc * 8, 64) + (
                2 if self.a_first_sliver_copied else 1) * self.a_sliver_bytes
        self.bp_offset = self.ap_offset + self.ap_bytes
        self.bp_bytes = round_up(self.kc * self.nc * 4, 64) \
            if self.pack_b and not self.b_prepacked else 0
        self.workspace_bytes = self.bp_offset + self.bp_bytes
        check_disp(self.workspace_bytes, "workspace")
        if not self.runtime_ld:
            check_disp((self.nr if self.c_transposed else self.mr)
                       * self.ldc * 4, "C row")
            check_disp(max(self.lda, self.ldb) * 4 * max(self.mr, self.nr),
                       "packing source")

    def _transpose_product(self, request):
        """product "transposed": the kernel computes C^T = op(B)^T *
        op(A)^T, B^T's rows its A (read in place with a_layout direct) and
        A's rows its B, and stores its tiles transposed into C
        (_emit_c_write_transposed). From here on m, n, the transposes,
        lda, ldb, the run-time sizes, the bias and the blocking are that
        product's: its rows are C's columns. The caller's ABI is C's (A,
        B and their slots as for the direct product; c_problem keeps C's
        for the symbol and the header). AVX-512 (16 x 16 transposes,
        masked row stores), not with B prepacked, read in place or packed
        by the tiles."""
        why = ("isa avx2 (C's tiles are transposed with AVX-512)"
               if self.isa.name != "avx512" else
               "b_prepacked (the panels are B's, not its A's)"
               if bool_field(request, "b_prepacked") else
               "fuse_pack_b or pack_b false (B is A's rows)"
               if bool_field(request, "fuse_pack_b")
               or request.get("pack_b", True) is False else None)
        if why:
            raise RequestError(f"product 'transposed': not with {why}")
        self.m, self.n = self.n, self.m
        self.trans_a, self.trans_b = not self.trans_b, not self.trans_a
        self.lda, self.ldb = self.ldb, self.lda
        self.dynamic_m, self.dynamic_n = self.dynamic_n, self.dynamic_m
        self.bias = {"rows": "columns", "columns": "rows"}.get(
            self.bias, self.bias)

    @property
    def runtime_a_rows(self):
        """A read in place with a run-time lda: its K loop addresses the
        rows from base registers (A_ROW_BASES) and lda in %r9."""
        return self.a_direct and self.runtime_ld

    @property
    def a_rows_three_lda(self):
        """A sliver read in place with a run-time lda whose K loops leave
        %rdx free for 3 lda (B's rows a packed step, no next panel swept,
        not a convolution's segmented loop): its rows from RUNTIME_A_BASES
        (17), not three a base (9)."""
        return (self.runtime_a_rows and self.b_row.static and self.conv is None
                and not self.sweep_next_panel)

    @property
    def runtime_a_reach(self):
        """The rows a sliver read in place with a run-time lda reaches."""
        return (RUNTIME_A_REACH if self.a_rows_three_lda
                else RUNTIME_A_REACH_LDA_ONLY)

    def runtime_a_row(self, i):
        """(base register, index) that reach row i of a sliver read in
        place with a run-time lda: the 3-lda table (a_rows_three_lda), or
        base i // 3 plus (i % 3) lda."""
        if self.a_rows_three_lda:
            return runtime_a_row(i)
        return (A_ROW_BASES[i // ROWS_A_BASE],
                RUNTIME_A_STEPS[i % ROWS_A_BASE])

    @property
    def a_row_bases(self):
        """The registers a K loop over a sliver read in place with a
        run-time lda advances: those its rows need, in A_ROW_BASES'
        order."""
        used = {self.runtime_a_row(i)[0] for i in range(self.mr)}
        return tuple(b for b in A_ROW_BASES if b in used)

    @property
    def a_rows_borrow_rdi(self):
        """A run-time-lda sliver whose rows need the third base takes %rdi
        (the C tile's pointer): past six rows, or with 3 lda past nine."""
        return self.runtime_a_rows and "%rdi" in self.a_row_bases

    @property
    def a_first_sliver_copied(self):
        """The tiles that pack B (fuse_pack_b) hold their copy's
        destination in %rdi: where the sliver would borrow it, the first
        sliver of each block, the only one those tiles read, is copied to
        the scratch sliver."""
        return self.a_rows_borrow_rdi and self.fuse_pack_b

    @property
    def has_epilogue(self):
        return self.bias != "none" or has_activation(self)

    @property
    def stores_at_zero_k(self):
        """A run-time K of 0 still stores C (C = epilogue(0), or
        epilogue(C)): the kc loop runs one empty block, which packs
        nothing and stores the zero accumulators as the last block does.
        Kernels that only add to C skip everything at K = 0."""
        return self.dynamic_k and (self.overwrite or self.has_epilogue)

    @property
    def runtime_sizes(self):
        """Which of m, n and k the kernel reads from its header: C's (the
        caller's, also for the product transposed)."""
        c = self.c_problem
        return tuple(name for name, dynamic in (
            ("m", c.dynamic_m), ("n", c.dynamic_n),
            ("k", self.dynamic_k)) if dynamic)

    @property
    def reads_range(self):
        """The part of C comes from the header (parallel form, or M or N at
        run time)."""
        return self.parallel or self.dynamic_m or self.dynamic_n

    @property
    def sweep_next_panel(self):
        """With B packed by the tiles and more than one pc block, the K
        loops prefetch the next panel into L2, a line per iteration (not
        where the segmented K loop holds the column table in %rdx); B in
        place swept (sweep_lines_in_place) or B^T's rows
        (sweep_next_transposed_panel) likewise, more lines an
        iteration."""
        if self.sweep_next_transposed_panel or self.sweep_lines_in_place:
            return True
        return self.fuse_pack_b and self.k > self.kc and not self.dynamic_k \
            and not (
            self.conv is not None and self.conv.segmented)

    @property
    def sweep_lines_in_place(self):
        """sweep_b: B read in place (pack_b false) streams from memory, and
        every tile waits on its lines. With all of M in one row block, the
        K loops prefetch the next panel (the next kc rows of this column
        block's nb columns, or after the last pc block the next column
        block's first) into L2, a row's columns at a time, so many lines
        an iteration (at most SWEEP_LINES) that the walk covers it within
        this panel's iterations: NR * 4 * k_unroll bytes of each row per
        row sliver and iteration. AVX-512, a static N and K (a run-time M's
        rows come from the header, as the parallel form's do: M past the
        request's only makes the walk run past the next panel, and a
        prefetch never faults), K in more than one
        block, a static ldb or (runtime_ld) A in place (the walk then
        takes IC's register, sweep_register, and its slots the A slots'
        spare ones); 0 elsewhere (the request then changes nothing)."""
        if (not self.sweep_b or self.pack_b or self.trans_b
                or self.conv is not None
                or not (self.b_ld.static or self.runtime_a_rows)
                or self.isa.name != "avx512"
                or (self.k <= self.kc and not self.dynamic_k)
                or self.m > self.mc):
            return 0
        slivers = -(-self.m // self.mr)
        per_iteration = -(-self.nr * 4 * self.k_unroll // (64 * slivers))
        return per_iteration if per_iteration <= SWEEP_LINES else 0

    @property
    def sweep_register(self):
        """The register that walks the swept next panel in the K loops:
        %rdx, or where %rdx holds B's run-time row step (B in place,
        runtime_ld) IC's, which no K loop reads: the row block's first
        row waits in sweep_ic_slot meanwhile (a sliver read in place with
        a run-time lda may take every other free register as a row base,
        %rdi included)."""
        return "%rdx" if self.b_row.static else IC

    @property
    def sweep_row_slots(self):
        """The in-place walk's row end and row bytes: header slots 64 and
        72, or with run-time leading dimensions (whose elements those
        slots hold) the A slots' third and fourth."""
        if self.runtime_ld:
            return self.a_slots + 16, self.a_slots + 24
        return SWEEP_ROW_END_SLOT, SWEEP_ROW_BYTES_SLOT

    @property
    def next_panel_slot(self):
        """Where the sweep's walk waits between K loops: NEXT_PANEL_SLOT,
        or with a run-time K (whose slot that is; B in place then has a
        run-time ldb, so A is read in place) the A slots' sixth."""
        return self.a_slots + 40 if self.dynamic_k else NEXT_PANEL_SLOT

    @property
    def sweep_ic_slot(self):
        """Where IC waits while the walk takes its register (the A slots'
        fifth)."""
        return self.a_slots + 32

    @property
    def sweep_walks_rows(self):
        """The in-place sweep's next panel is not one run of memory (a
        part of C's columns, more than one column block, or rows longer
        than N): the walk moves from a row's columns to the next row's.
        Otherwise it runs through the panel in address order."""
        return bool(self.sweep_lines_in_place) and (
            self.parallel or self.dynamic_n or self.n > self.nc
            or self.b_ld.nbytes != self.n * 4)

    @property
    def sweep_next_transposed_panel(self):
        """With B^T packed (PACK B transposes it) and all of M in one row
        block, so that each panel meets the tiles once: the K loops
        prefetch the next panel's rows of B^T into L2, one row (kc floats,
        at most SWEEP_LINES lines) per iteration, so that its PACK B reads
        them from L2 rather than memory; where the tiles take at most
        SWEEP_AHEAD K iterations per row of the panel (the walk then stays
        within that many panels of the next). AVX-512; not with a run-time
        size (M may then take more blocks). On Zen 5, side by side with
        8x48 kc 128: 32x4096x4096 1.33x (2.7 iterations a row), 64 rows
        1.18x (5.3), 128 rows 1.06x (10.7), 256 rows 0.90x (21); 6x64 kc
        384 (24 lines a row): 48 rows 1.00x, 96 rows 0.98x. Not where a
        sliver of A in place with a run-time lda has more rows than three
        a base reach: %rdx, the walk's, holds 3 lda then
        (a_rows_three_lda)."""
        iterations_per_row = (-(-self.m // self.mr) * self.kc
                              / (self.k_unroll * self.nr))
        rows_need_rdx = (self.runtime_a_rows
                         and self.mr > RUNTIME_A_REACH_LDA_ONLY)
        return (self.trans_b and self.pack_b and not self.fuse_pack_b
                and not rows_need_rdx
                and not self.b_prepacked and self.conv is None
                and not self.runtime_sizes and self.isa.name == "avx512"
                and self.m <= self.mc and self.kc * 4 <= SWEEP_LINES * 64
                and iterations_per_row <= SWEEP_AHEAD)

    def symbol(self):
        """C's problem (as the caller sees it), then the blocking."""
        c = self.c_problem
        trans = ("t" if c.trans_a else "n") + ("t" if c.trans_b else "n")
        beta = (("_mrt" if c.dynamic_m else "")
                + ("_nrt" if c.dynamic_n else "")
                + ("_krt" if self.dynamic_k else "")
                + ("_b0" if self.overwrite else "")
                + ("_bias" if c.bias != "none" else "")
                + activation_suffix(self))
        lds = "_ldrt" if self.runtime_ld else (
            f"_lda{c.lda}_ldb{c.ldb}_ldc{self.ldc}")
        return (f"qm_sgemm_{c.m}x{c.n}x{self.k}_{trans}{beta}{lds}"
                + self.blocking_suffix())

    def blocking_suffix(self):
        """The symbol's part after the operands: blocking, variants, isa."""
        fault = "" if self.fault is None else "_fault_" + self.fault.replace(
            "-", "_")
        par = "_par" if self.parallel else ""
        return (f"_{self.mr}x{self.nr}_ku{self.k_unroll}"
                f"_kc{self.kc}_mc{self.mc}_nc{self.nc}"
                f"_pfa{self.prefetch_a}_pfb{self.prefetch_b}"
                f"{'' if self.order == 'bcast' else '_' + self.order}"
                f"{'' if self.pack_b else '_nopackb'}"
                f"{'_fusedb' if self.fuse_pack_b else ''}"
                f"{'_bpre' if self.b_prepacked else ''}"
                f"{'' if self.loop_order == 'jr-ir' else '_irjr'}"
                f"{'_adirect' if self.a_direct else ''}"
                f"{'_arows' if self.a_rows and not self.a_direct else ''}"
                f"{'_ct' if self.c_transposed else ''}"
                f"{'_sweepb' if self.sweep_lines_in_place else ''}"
                f"{par}{fault}"
                f"_x86_64_{self.isa.name}")


def _emit_pack(asm, p, name, R, stride_k, stride_r, width_reg, src_slot,
               outer_index, inner_step_index, dst_offset, has_edges):
    """Packs one panel into R-wide slivers, k-major, zero-padded.

    Element (k, r) of the panel is at src + k*stride_k + r*stride_r bytes
    (Strides), where src = base + outer_index*stride_k + (inner base +
    r0)*stride_r. Sliver s holds rows r0 = s*R .. s*R+R-1 as kb rows of R
    floats. `width_reg` holds the panel's extent in r (nb or mb); %r14
    walks r0.
    """
    isa = p.isa
    sk, sr = stride_k, stride_r
    loop = asm.label(f"pack {name}: next sliver")
    edge = asm.label(f"pack {name}: edge sliver")
    done = asm.label(f"pack {name}: sliver done")
    asm.comment(f"PACK {name}: {R}-wide slivers, k-major, zero-padded")
    if p.stores_at_zero_k:
        packed = asm.label(f"pack {name}: empty kc block, nothing to copy")
        asm.ins(f"testq {KB}, {KB}")
        asm.ins(f"jz {fwd(packed)}")
    asm.ins(f"xorl %r14d, %r14d")
    asm.place(loop)
    # %rsi = base + outer*sk + (inner + r0)*sr
    asm.ins(f"movq {src_slot}(%rbx), %rsi")
    sk.multiply(asm, outer_index, "%rax")
    asm.ins("addq %rax, %rsi")
    asm.ins(f"leaq ({inner_step_index},%r14), %rax")
    sr.multiply(asm, "%rax", "%rax")
    asm.ins("addq %rax, %rsi")
    # %rdi = ws + dst_offset + r0*kb*4
    asm.ins("movq %r14, %rax")
    asm.ins(f"imulq {KB}, %rax")
    asm.ins(f"leaq {dst_offset}(%rbx,%rax,4), %rdi")
    asm.ins(f"movq {KB}, %rcx")
    if has_edges:
        asm.ins(f"movq {width_reg}, %rdx")
        asm.ins("subq %r14, %rdx")
        asm.ins(f"cmpq ${R}, %rdx")
        asm.ins(f"jb {fwd(edge)}")
    # Full sliver.
    row = asm.label(f"pack {name}: full sliver, next k")
    full_done = asm.label(f"pack {name}: full sliver copied")
    block = isa.lanes
    if sk.static and sk.nbytes == 4 and not (sr.static and sr.nbytes == 4) \
            and R % block == 0:
        # The sliver's R rows lie along k (a transposed B, or A with MR a
        # multiple of the lanes): square blocks of a vector's lanes are
        # read a row of `block` k at a time and transposed in registers;
        # the kb % block last k go one by one below.
        _emit_pack_transposed_chunks(asm, p, name, R, sr)
        asm.ins(f"movq {KB}, %rcx")
        asm.ins(f"andq ${block - 1}, %rcx")
        asm.ins(f"jz {fwd(full_done)}")
    asm.place(row)
    if sr.static and sr.nbytes == 4 and R % isa.lanes == 0:
        for v in range(R // isa.lanes):
            off = v * isa.vector_bytes
            asm.ins(f"vmovups {off}(%rsi), {isa.reg(0)}")
            asm.ins(f"vmovups {isa.reg(0)}, {off}(%rdi)")
    elif sr.static:
        for r in range(R):
            asm.ins(f"vmovss {sr.times(r, 'pack')}(%rsi), {xmm(0)}")
            asm.ins(f"vmovss {xmm(0)}, {r * 4}(%rdi)")
    else:
        # Run-time stride: %r15 walks the sliver's row.
        asm.ins("movq %rsi, %r15")
        for r in range(R):
            asm.ins(f"vmovss (%r15), {xmm(0)}")
            asm.ins(f"vmovss {xmm(0)}, {r * 4}(%rdi)")
            if r + 1 < R:
                sr.add_to(asm, "%r15")
    sk.add_to(asm, "%rsi")
    asm.ins(f"addq ${R * 4}, %rdi")
    asm.ins("decq %rcx")
    asm.ins(f"jnz {back(row)}")
    asm.place(full_done)
    if has_edges:
        asm.ins(f"jmp {fwd(done)}")
        # Edge sliver: zero the row, then copy the %rdx valid elements.
        asm.place(edge)
        asm.ins(f"vxorps {xmm(1)}, {xmm(1)}, {xmm(1)}")
        erow = asm.label(f"pack {name}: edge sliver, next k")
        ecol = asm.label(f"pack {name}: edge sliver, next element")
        asm.place(erow)
        for r in range(R):
            asm.ins(f"vmovss {xmm(1)}, {r * 4}(%rdi)")
        asm.ins("xorl %eax, %eax")
        asm.ins("movq %rsi, %r15")
        asm.place(ecol)
        asm.ins(f"vmovss (%r15), {xmm(0)}")
        asm.ins(f"vmovss {xmm(0)}, (%rdi,%rax,4)")
        sr.add_to(asm, "%r15")
        asm.ins("incq %rax")
        asm.ins("cmpq %rdx, %rax")
        asm.ins(f"jb {back(ecol)}")
        sk.add_to(asm, "%rsi")
        asm.ins(f"addq ${R * 4}, %rdi")
        asm.ins("decq %rcx")
        asm.ins(f"jnz {back(erow)}")
        asm.place(done)
    asm.ins(f"addq ${R}, %r14")
    asm.ins(f"cmpq {width_reg}, %r14")
    asm.ins(f"jb {back(loop)}")
    if p.stores_at_zero_k:
        asm.place(packed)


def _emit_pack_transposed_chunks(asm, p, name, R, sr):
    """The full-sliver copy of _emit_pack for slivers whose R rows lie
    along k (row r at %rsi + r*sr, k contiguous), a vector's lanes of k at
    a time (b = 8 on AVX2, 16 on AVX-512): per group of b rows, one vector
    load per row, a b x b transpose in registers, one vector store per k
    into the packed rows (R floats apart). Leaves %rsi and %rdi at the
    first k not copied (kb rounded down to b); clobbers %rcx, %r15 and
    the vector registers."""
    b = p.isa.lanes
    wide = b == 16
    vb = 4 * b
    chunk = asm.label(f"pack {name}: next {b} k, transposed")
    skip = asm.label(f"pack {name}: fewer than {b} k")
    asm.ins(f"movq {KB}, %rcx")
    asm.ins(f"shrq ${b.bit_length() - 1}, %rcx")
    asm.ins(f"jz {fwd(skip)}")
    asm.place(chunk)
    if not sr.static:
        asm.ins("movq %rsi, %r15")
    row_reg = (lambda i: f"%zmm{i}") if wide else (lambda i: f"%ymm{i}")
    out_reg = (lambda j: f"%zmm{j}") if wide else (lambda j: f"%ymm{8 + j}")
    for g in range(R // b):
        for i in range(b):
            if sr.static:
                src = f"{sr.times(g * b + i, 'pack')}(%rsi)"
            else:
                src = "(%r15)"
            asm.ins(f"vmovups {src}, {row_reg(i)}")
            if not sr.static and g * b + i + 1 < R:
                sr.add_to(asm, "%r15")
        if wide:
            emit_transpose_16x16(asm)
        else:
            emit_transpose_8x8(asm)
        for j in range(b):
            asm.ins(f"vmovups {out_reg(j)}, {j * R * 4 + g * vb}(%rdi)")
    asm.ins(f"addq ${vb}, %rsi")
    asm.ins(f"addq ${b * R * 4}, %rdi")
    asm.ins("decq %rcx")
    asm.ins(f"jnz {back(chunk)}")
    asm.place(skip)


def emit_row_copy(asm, p, name, src, dst):
    """Copies kb floats from `src` to `dst` (registers, unchanged), vector
    by vector, then the rest one by one; clobbers %rax and vector 0."""
    isa = p.isa
    vec = asm.label(f"{name}: next vector")
    tail = asm.label(f"{name}: remainder")
    tail_loop = asm.label(f"{name}: next float")
    done = asm.label(f"{name}: copied")
    asm.ins("xorl %eax, %eax")
    asm.ins(f"cmpq ${isa.lanes}, {KB}")
    asm.ins(f"jb {fwd(tail)}")
    asm.place(vec)
    asm.ins(f"vmovups ({src},%rax,4), {isa.reg(0)}")
    asm.ins(f"vmovups {isa.reg(0)}, ({dst},%rax,4)")
    asm.ins(f"addq ${isa.lanes}, %rax")
    asm.ins(f"leaq {isa.lanes}(%rax), %rcx")
    asm.ins(f"cmpq {KB}, %rcx")
    asm.ins(f"jbe {back(vec)}")
    asm.place(tail)
    asm.ins(f"cmpq {KB}, %rax")
    asm.ins(f"jae {fwd(done)}")
    asm.place(tail_loop)
    asm.ins(f"vmovss ({src},%rax,4), {xmm(0)}")
    asm.ins(f"vmovss {xmm(0)}, ({dst},%rax,4)")
    asm.ins("incq %rax")
    asm.ins(f"cmpq {KB}, %rax")
    asm.ins(f"jb {back(tail_loop)}")
    asm.place(done)


def emit_row_zero(asm, p, name, dst):
    """Zeroes kb floats at `dst`; clobbers %rax and vector 0."""
    loop = asm.label(f"{name}: next zero")
    done = asm.label(f"{name}: zeroed")
    asm.ins(f"vxorps {xmm(0)}, {xmm(0)}, {xmm(0)}")
    asm.ins("xorl %eax, %eax")
    asm.place(loop)
    asm.ins(f"vmovss {xmm(0)}, ({dst},%rax,4)")
    asm.ins("incq %rax")
    asm.ins(f"cmpq {KB}, %rax")
    asm.ins(f"jb {back(loop)}")
    asm.place(done)


def a_row_stride(p):
    """Bytes between the rows of an A sliver in the rows layout."""
    return p.a_row_stride if p.a_row_stride is not None else p.kc * 4


def _emit_pack_a_rows(asm, p):
    """PACK A, rows layout: sliver s holds its MR rows of A, each the kb
    floats A[ic + s*MR + r][pc .. pc+kb) copied as stored, kc floats apart;
    rows past M are zero."""
    R = p.mr
    sliver = asm.label("pack A rows: next sliver")
    asm.comment(f"PACK A: {R}-row slivers, rows of kb floats {p.kc} apart")
    asm.ins("xorl %r14d, %r14d")
    asm.place(sliver)
    _emit_a_sliver_start(asm, p)
    # %rdi = Ap + r0 * kc * 4
    asm.ins(f"imulq ${check_disp(p.kc * 4, 'A row')}, %r14, %rax")
    asm.ins(f"leaq {p.ap_offset}(%rbx,%rax), %rdi")
    _emit_sliver_rows_copy(asm, p, "pack A rows")
    asm.ins(f"addq ${R}, %r14")
    asm.ins(f"cmpq {MB}, %r14")
    asm.ins(f"jb {back(sliver)}")


def _emit_a_sliver_start(asm, p):
    """For the A sliver at row r0 = %r14 of the block: %rsi = A + ((ic +
    r0) * lda + pc) * 4, where it lies; %rdx = its rows inside M."""
    asm.ins("movq 0(%rbx), %rsi")
    asm.ins(f"leaq ({IC},%r14), %rax")
    p.a_ld.multiply(asm, "%rax", "%rax", "A row")
    asm.ins("addq %rax, %rsi")
    asm.ins(f"leaq (%rsi,{PC},4), %rsi")
    asm.ins(f"movq {MB}, %rdx")
    asm.ins("subq %r14, %rdx")


def _emit_sliver_rows_copy(asm, p, name):
    """Copies the MR rows of A from %rsi (rows lda apart) to %rdi (rows kc
    floats apart), kb floats each; rows from %rdx on (rows of the sliver
    inside M) are zero. Clobbers %rsi, %rdi, %r15, %rax, %rcx, vector 0."""
    row = asm.label(f"{name}: next row")
    zero = asm.label(f"{name}: row past M")
    next_row = asm.label(f"{name}: row done")
    asm.ins("xorl %r15d, %r15d")
    asm.place(row)
    asm.ins("cmpq %rdx, %r15")
    asm.ins(f"jae {fwd(zero)}")
    emit_row_copy(asm, p, name, "%rsi", "%rdi")
    asm.ins(f"jmp {fwd(next_row)}")
    asm.place(zero)
    emit_row_zero(asm, p, name, "%rdi")
    asm.place(next_row)
    p.a_ld.add_to(asm, "%rsi")
    asm.ins(f"addq ${p.kc * 4}, %rdi")
    asm.ins("incq %r15")
    asm.ins(f"cmpq ${p.mr}, %r15")
    asm.ins(f"jb {back(row)}")


def _emit_a_in_place(asm, p):
    """A in place (a_layout "direct"): each sliver's pointer for the
    microkernel, in the pointer table. A sliver of MR rows inside M points
    at A + ((ic + r0) * lda + pc) * 4, its rows lda apart; the one short of
    rows (the last of M) is copied into the scratch sliver, rows kc floats
    apart and zero past M, and points there with bit 0 set."""
    R = p.mr
    sliver = asm.label("A in place: next sliver")
    copy = asm.label("A in place: sliver short of rows")
    done = asm.label("A in place: sliver done")
    asm.comment(f"A in place: {R}-row slivers read where they lie, rows "
                + ("lda" if p.runtime_ld else f"{p.a_row_stride}")
                + " bytes apart; no PACK A")
    if p.runtime_a_rows:
        # The block's column and row counts wait here while the K loops
        # borrow their registers.
        asm.ins(f"movq {NB}, {p.a_slots}(%rbx)")
        asm.ins(f"movq {MB}, {p.a_slots + 8}(%rbx)")
    asm.ins("xorl %r14d, %r14d")
    asm.place(sliver)
    _emit_a_sliver_start(asm, p)
    asm.ins(f"cmpq ${R}, %rdx")
    asm.ins(f"jb {fwd(copy)}")
    if p.a_first_sliver_copied:
        # The first sliver to the second scratch sliver (the first is the
        # short one's).
        first = asm.label("A in place: first sliver to scratch")
        asm.ins("testq %r14, %r14")
        asm.ins(f"jz {fwd(first)}")
    asm.ins(f"movq %rsi, {p.a_pointer_table}(%rbx,%r14,8)")
    asm.ins(f"jmp {fwd(done)}")
    asm.place(copy)
    asm.ins(f"leaq {p.a_scratch}(%rbx), %rdi")
    if p.a_first_sliver_copied:
        rows_copy = asm.label("A in place: sliver to scratch")
        asm.ins(f"jmp {fwd(rows_copy)}")
        asm.place(first)
        asm.ins(f"leaq {p.a_scratch + p.a_sliver_bytes}(%rbx), %rdi")
        asm.place(rows_copy)
    asm.ins("leaq 1(%rdi), %rax")
    asm.ins(f"movq %rax, {p.a_pointer_table}(%rbx,%r14,8)")
    _emit_sliver_rows_copy(asm, p, "A in place, short sliver")
    asm.place(done)
    asm.ins(f"addq ${R}, %r14")
    asm.ins(f"cmpq {MB}, %r14")
    asm.ins(f"jb {back(sliver)}")


# Instruction orders of the K step (the tuner's "order" decision):
#   bcast      load the B vectors, then per row: broadcast A, FMAs;
#   pipelined  the broadcast of row i+1 is issued before the FMAs of row i,
#              alternating two A registers (one more register);
#   embedded   AVX-512 only: FMAs take A straight from memory with an
#              embedded {1toN} broadcast (no A register at all);
#   bmem       bcast, but the last B vector is not loaded: each row's FMA
#              on it reads it from memory (L1), which frees its register
#              (7x64 on AVX-512: 28 accumulators, 3 B vectors, A).
LOOP_ORDERS = ("jr-ir", "ir-jr")
# A slivers: packed k-major (MR floats per k, BLIS), packed in rows (each
# of the MR rows kb floats long, kc floats apart), or direct: read in place,
# rows lda apart (libxsmm), only the sliver short of rows copied (in
# conv2d.py: A read in place from the input).
A_LAYOUTS = ("k-major", "rows", "direct")
ORDERS = ("bcast", "pipelined", "embedded", "bmem")
# Biases an epilogue adds: none, bias[j] to every element of column j, or
# bias[i] to every element of row i (an NCHW convolution's channels).
BIASES = ("none", "columns", "rows")
# How the kernel forms C: "direct", or "transposed" (C^T = B^T * A^T, its
# tiles stored transposed; Params._transpose_product).
PRODUCTS = ("direct", "transposed")
# C's problem as the caller states it (Params.c_problem).
CProblem = collections.namedtuple("CProblem", (
    "m", "n", "trans_a", "trans_b", "lda", "ldb", "dynamic_m", "dynamic_n",
    "bias"))


def registers_needed(mr, nv, order):
    """Vector registers a K step uses: accumulators, B vectors, A."""
    b_regs = nv - 1 if order == "bmem" else nv
    a_regs = {"bcast": 1, "pipelined": 2, "embedded": 0, "bmem": 1}[order]
    return mr * nv + b_regs + a_regs


class BStream:
    """How a K loop reads B: from %rsi, `row` (a Stride) from one k to the
    next (a packed sliver's NR floats, or B's own row stride in place).
    With `copy_row`, B is read in place and every vector loaded is stored
    at %rdi too, `copy_row` bytes per k: the tile that uses a B sliver
    first packs it. A static row is a displacement within an unrolled K
    loop, and %rsi moves once per iteration; a run-time row (runtime_ld)
    moves %rsi after every k step, and the prefetch ahead of a copied row
    is at %rsi + %r15, which the caller sets to FUSED_B_PREFETCH_ROWS
    rows. `masked` (set on the copy that reads a short last sliver in
    place): B's loads go through %k1.. (_emit_b_edge_masks)."""

    def __init__(self, row, aligned, copy_row=None, sweep=False,
                 row_reg=None):
        self.row, self.aligned, self.copy_row = row, aligned, copy_row
        self.masked = False
        # With `sweep`, every K loop iteration also prefetches the next
        # line of the next B panel in place into L2, %rdx walking it.
        self.sweep = sweep
        # A register holding a run-time row (loaded by the caller before
        # the K loops), added instead of the header slot.
        self.row_reg = row_reg
        # Within an unrolled K loop of an even unroll, a row in a register
        # is stepped two k at a time: the second k's row at (%rsi,row).
        self.paired = False

    def address(self, u, offset):
        """The B bytes `offset` into row u of an unrolled K loop."""
        if self.row.static:
            return f"{self.row.times(u, 'B step') + offset}(%rsi)"
        if self.paired and u % 2:
            return f"{offset}(%rsi,{self.row_reg})"
        return f"{offset}(%rsi)"

    def emit_step_end(self, asm, u):
        """After the k step at unroll position u: a run-time row moves %rsi
        now (paired: after every second step, by two rows)."""
        if self.paired:
            if u % 2:
                asm.ins(f"leaq (%rsi,{self.row_reg},2), %rsi")
        elif self.row_reg:
            asm.ins(f"addq {self.row_reg}, %rsi")
        elif not self.row.static:
            self.row.add_to(asm, "%rsi")

    def emit_advance(self, asm, steps):
        """After `steps` k steps: a static row moves %rsi now."""
        if self.row.static:
            asm.ins(f"addq ${self.row.times(steps, 'B step')}, %rsi")
        if self.copy_row:
            asm.ins(f"addq ${check_disp(steps * self.copy_row, 'B step')}, "
                    "%rdi")


def packed_b(p):
    """B as the K loop reads it after PACK: packed (aligned in the
    workspace; a prepacked B wherever its caller put it), or in place."""
    return BStream(p.b_row, p.pack_b and not p.b_prepacked,
                   sweep=p.sweep_next_panel)


def _emit_k_step(asm, p, u, row_stride, b, rows=None):
    """One k step of the COMPUTE microkernel at unroll position u; in the
    rows layout, A's rows are `row_stride` bytes apart. With `rows`, only
    the block's first `rows` rows (the others' accumulators stay zero)."""
    isa = p.isa
    rows = p.mr if rows is None else rows
    b_reg = p.mr * p.nv
    # B vectors held in registers (bmem: all but the last), then A's.
    b_held = p.nv - 1 if p.order == "bmem" else p.nv
    a_regs = [b_reg + b_held, b_reg + b_held + 1]

    def b_addr(v):
        return b.address(u, v * isa.vector_bytes)

    load = "vmovaps" if b.aligned else "vmovups"
    # The short last sliver of B in place: vector v's lanes within N are
    # %k(v + 1) (_emit_b_edge_masks), every load of B through them.
    masked = b.masked and not b.copy_row

    def b_mask(v, zero=True):
        return f" {{%k{v + 1}}}{'{z}' if zero else ''}" if masked else ""
    for v in range(p.nv):
        # A vector not held is loaded only to be copied, through A's
        # register, before A's first broadcast.
        reg = isa.reg(b_reg + v if v < b_held else a_regs[0])
        if v < b_held or b.copy_row:
            asm.ins(f"{load} {b_addr(v)}, {reg}{b_mask(v)}")
        if b.copy_row:
            asm.ins(f"vmovaps {reg}, "
                    f"{u * b.copy_row + v * isa.vector_bytes}(%rdi)")
    if b.copy_row:
        # B in place comes from L2 or beyond: each line of the sliver's
        # row FUSED_B_PREFETCH_ROWS k ahead.
        for off in range(0, p.nr * 4, 64):
            if b.row.static:
                ahead = b.row.times(FUSED_B_PREFETCH_ROWS + u) + off
                asm.ins(f"prefetcht0 {check_disp(ahead, 'B prefetch')}"
                        "(%rsi)")
            else:
                asm.ins(f"prefetcht0 {off}(%rsi,%r15)")
    elif p.prefetch_b:
        asm.ins(f"prefetcht0 {b.address(u, p.prefetch_b)}")

    def a_addr(i, disp=0):
        if row_stride == RUNTIME_A_ROWS:
            return "{}({}{})".format(disp + u * 4, *p.runtime_a_row(i))
        if p.a_rows:
            return f"{disp + i * row_stride + u * 4}(%rax)"
        return f"{disp + (u * p.mr + i) * 4}(%rax)"

    def fmas(i, a_operand):
        for v in range(p.nv):
            acc = i * p.nv + v
            b_operand = isa.reg(b_reg + v) if v < b_held else b_addr(v)
            # B from memory: the FMA's own mask keeps the lanes past N
            # (and their loads) out, their accumulators zero.
            mask = b_mask(v, zero=False) if v >= b_held else ""
            asm.ins(f"vfmadd231ps {a_operand}, {b_operand}, "
                    f"{isa.reg(acc)}{mask}" if p.order == "embedded" else
                    f"vfmadd231ps {b_operand}, {a_operand}, "
                    f"{isa.reg(acc)}{mask}")

    if p.order == "embedded":
        for i in range(rows):
            fmas(i, f"{a_addr(i)}{{1to{isa.lanes}}}")
    elif p.order == "pipelined":
        asm.ins(f"vbroadcastss {a_addr(0)}, {isa.reg(a_regs[0])}")
        for i in range(rows):
            if i + 1 < rows:
                asm.ins(f"vbroadcastss {a_addr(i + 1)}, "
                        f"{isa.reg(a_regs[(i + 1) % 2])}")
            fmas(i, isa.reg(a_regs[i % 2]))
    else:
        for i in range(rows):
            asm.ins(f"vbroadcastss {a_addr(i)}, {isa.reg(a_regs[0])}")
            fmas(i, isa.reg(a_regs[0]))
    if p.prefetch_a and p.a_rows:
        # Every 16 k steps (one line of each row), a line ahead per row.
        if (u * 4) % 64 == 0:
            for i in range(rows):
                asm.ins(f"prefetcht0 {a_addr(i, p.prefetch_a)}")
    elif p.prefetch_a and (u * p.mr * 4) % 64 < p.mr * 4:
        asm.ins(f"prefetcht0 {p.prefetch_a + u * p.mr * 4}(%rax)")
    b.emit_step_end(asm, u)


def _emit_row_updates(asm, p, next_tile, masked=False, read_c=True,
                      epilogue=False):
    """C += accumulators (C = accumulators unless `read_c`) row by row for
    %rdx valid rows (1 <= %rdx <= MR), vector wide; with `masked`, through
    the column masks in %k1.. (AVX-512), whose masked-out lanes are neither
    read nor written."""
    isa = p.isa
    tmp = isa.reg(p.mr * p.nv)  # the first B register, free after the K loop
    _emit_c_rows_setup(asm, p)
    if epilogue:
        _emit_epilogue_setup(asm, p)
    for i in range(p.mr):
        if epilogue:
            _emit_epilogue_row(asm, p, i)
        for v in range(p.nv):
            acc = isa.reg(i * p.nv + v)
            addr = _c_address(p, i, v * isa.vector_bytes)
            if masked:
                if read_c:
                    asm.ins(f"vmovups {addr}, {tmp} {{%k{v + 1}}} {{z}}")
                    asm.ins(f"vaddps {tmp}, {acc}, {acc}")
                if epilogue:
                    _emit_epilogue_vector(asm, p, acc, v,
                                          f" {{%k{v + 1}}}")
                asm.ins(f"vmovups {acc}, {addr} {{%k{v + 1}}}")
            else:
                if read_c:
                    asm.ins(f"vaddps {addr}, {acc}, {acc}")
                if epilogue:
                    _emit_epilogue_vector(asm, p, acc, v)
                asm.ins(f"vmovups {acc}, {addr}")
        if i + 1 < p.mr:
            asm.ins(f"cmpq ${i + 1}, %rdx")
            # The fault writes one row more than %rdx.
            jump = "jb" if p.fault == "write-past-edge" else "jbe"
            asm.ins(f"{jump} {fwd(next_tile)}")
            _emit_c_next_row(asm, p, i)
    asm.ins(f"jmp {fwd(next_tile)}")


# A tile's C rows with a run-time ldc: %rax = ldc and %rcx = 3*ldc bytes
# (free once the K loop is done) reach four rows from %rdi, which then
# moves four rows on with one lea; no load sits between two rows' stores.
def _emit_c_rows_setup(asm, p):
    """Before a tile's C update: with a run-time ldc, %rax and %rcx."""
    if not p.c_ld.static:
        asm.ins(f"movq {p.c_ld.operand()}, %rax")
        asm.ins("leaq (%rax,%rax,2), %rcx")


def _c_address(p, i, offset):
    """Row i of the tile, `offset` bytes in: i*ldc + offset from %rdi, or
    (run-time ldc) through %rax and %rcx from the group of four rows %rdi
    is at."""
    if p.c_ld.static:
        return f"{p.c_ld.times(i, 'C row') + offset}(%rdi)"
    return (f"{offset}(%rdi)", f"{offset}(%rdi,%rax)",
            f"{offset}(%rdi,%rax,2)", f"{offset}(%rdi,%rcx)")[i % 4]


def _emit_c_next_row(asm, p, i):
    """After row i of a tile's C update, before row i + 1: with a run-time
    ldc, %rdi moves to the next group of four rows."""
    if not p.c_ld.static and i % 4 == 3:
        asm.ins("leaq (%rdi,%rax,4), %rdi")


def _emit_b_edge_masks(asm, p):
    """At a tile's start, B read in place with a short last sliver
    (b_edge_masked): %k1.. = the lanes of the sliver's columns within N, all
    of them but in the last sliver. Clobbers %rsi, %rcx and %rax."""
    full = asm.label("B sliver of whole vectors: every lane")
    done = asm.label("B's lane masks set")
    asm.ins(f"movq {NB}, %rsi")
    asm.ins("subq %r14, %rsi")
    asm.ins(f"cmpq ${p.nr}, %rsi")
    asm.ins(f"jae {fwd(full)}")
    asm.comment("the last sliver, short of columns: B's loads masked")
    _emit_column_masks(asm, p, fault_extra=False)
    asm.ins(f"jmp {fwd(done)}")
    asm.place(full)
    for v in range(p.nv):
        asm.ins(f"kxnorw %k{v + 1}, %k{v + 1}, %k{v + 1}")
    asm.place(done)


def _emit_column_masks(asm, p, fault_extra=True):
    """%k1.. = lane masks of the %rsi valid columns (AVX-512 edge tiles;
    the fault write-past-edge widens them where `fault_extra`)."""
    extra = 1 if fault_extra and p.fault == "write-past-edge" else 0
    if extra:
        asm.comment("fault write-past-edge: masks one column too wide, "
                    "one row too many")
    for v in range(p.nv):
        # bits = clamp(w + extra - lanes*v, 0, lanes); mask = ones >> (lanes - bits)
        asm.ins(f"leaq {extra - p.isa.lanes * v}(%rsi), %rcx")
        asm.ins("xorl %eax, %eax")
        asm.ins("testq %rcx, %rcx")
        asm.ins("cmovsq %rax, %rcx")
        asm.ins(f"movl ${p.isa.lanes}, %eax")
        asm.ins("cmpq %rax, %rcx")
        asm.ins("cmovaq %rax, %rcx")
        asm.ins(f"negl %ecx")
        asm.ins(f"addl ${p.isa.lanes}, %ecx")
        asm.ins(f"movl ${(1 << p.isa.lanes) - 1}, %eax")
        asm.ins("shrl %cl, %eax")
        asm.ins(f"kmovw %eax, %k{v + 1}")


def _emit_c_update(asm, p, next_tile):
    """C += the accumulators of one MR x NR tile; for an overwriting kernel,
    C = the accumulators in the first kc block (pc = 0) and C += them
    after, so that C is never read before it is written; with an
    epilogue, the last kc block (pc + kb = K) applies it as it stores."""
    if p.k <= p.kc and not p.dynamic_k:
        # One kc block: the first and the last.
        _emit_c_write(asm, p, next_tile, read_c=not p.overwrite,
                      epilogue=p.has_epilogue)
        return
    if p.overwrite:
        later = asm.label("later kc block: C += accumulators")
        stored = asm.label("first kc block stored")
        asm.ins(f"testq {PC}, {PC}")
        asm.ins(f"jnz {fwd(later)}")
        if p.has_epilogue and p.dynamic_k:
            # A run-time K may end in its first block (K <= kc, or 0).
            not_last = asm.label("first kc block, not the last")
            only = asm.label("only kc block stored")
            asm.ins(f"cmpq {k_operand(p)}, {KB}")
            asm.ins(f"jne {fwd(not_last)}")
            asm.comment("first and last kc block: C = epilogue(accumulators)")
            _emit_c_write(asm, p, only, read_c=False, epilogue=True)
            asm.ins(f"jmp {fwd(next_tile)}")
            asm.place(not_last)
        asm.comment("first kc block: C = accumulators (C is not read)")
        _emit_c_write(asm, p, stored, read_c=False)
        asm.ins(f"jmp {fwd(next_tile)}")
        asm.place(later)
    if p.has_epilogue:
        middle = asm.label("not the last kc block: no epilogue")
        stored = asm.label("last kc block stored")
        asm.ins(f"leaq ({PC},{KB}), %rax")
        asm.ins(f"cmpq {k_operand(p)}, %rax")
        asm.ins(f"jne {fwd(middle)}")
        asm.comment("last kc block: C = epilogue(C + accumulators)")
        _emit_c_write(asm, p, stored, read_c=True, epilogue=True)
        asm.ins(f"jmp {fwd(next_tile)}")
        asm.place(middle)
    _emit_c_write(asm, p, next_tile, read_c=True)


def _zero_register(p):
    """The vector register relu compares with (its floor: zero, or
    relu_min): the second one past the accumulators (the first is the
    masked updates' temporary)."""
    return p.isa.reg(p.mr * p.nv + 1)


def _bound_register(p):
    """The vector register holding relu's bound (or leaky relu's product):
    the fourth one past the accumulators (the third is a bias along the
    rows)."""
    return p.isa.reg(p.mr * p.nv + 3)


def _emit_epilogue_setup(asm, p):
    """Before a tile's epilogue: relu's zero register (and its bound), and
    %rsi = the bias of the tile's first column (bias + jc + jr) or row
    (bias + ic + ir)."""
    _emit_activation_constants(asm, p, p.mr * p.nv + 1, _bound_register(p))
    _emit_bias_pointer(asm, p)


def _emit_activation_constants(asm, p, floor, bound):
    """Register number `floor` = relu's floor (zero, or relu_min) or leaky
    relu's slope, register `bound` = relu's bound, for _emit_activation."""
    if p.relu:
        emit_relu_floor(asm, p, p.isa.reg(floor), p.isa.zero(floor))
    if p.leaky_slope is not None:
        asm.ins(f"vbroadcastss {leaky_slope_address(p)}, {p.isa.reg(floor)}")
    if p.relu_max is not None:
        asm.ins(f"vbroadcastss {relu_max_address(p)}, {bound}")


def _emit_bias_pointer(asm, p):
    """%rsi = the bias of the tile's first column (bias + jc + jr) or row
    (bias + ic + ir); nothing without a bias."""
    if p.bias == "columns":
        asm.ins(f"movq {BIAS_OFFSET}(%rbx), %rsi")
        asm.ins(f"leaq (%rsi,{JC},4), %rsi")
        asm.ins("leaq (%rsi,%r14,4), %rsi")
    elif p.bias == "rows":
        asm.ins(f"movq {BIAS_OFFSET}(%rbx), %rsi")
        asm.ins(f"leaq (%rsi,{IC},4), %rsi")
        asm.ins("leaq (%rsi,%r15,4), %rsi")


def _emit_epilogue_row(asm, p, i):
    """Before row i's vectors: a bias along the rows broadcast once into
    the third register past the accumulators."""
    if p.bias == "rows":
        asm.ins(f"vbroadcastss {4 * i}(%rsi), "
                f"{p.isa.reg(p.mr * p.nv + 2)}")


def _emit_epilogue_vector(asm, p, acc, v, mask=""):
    """acc = epilogue(acc) for vector v of a tile row: + bias (through
    `mask`, whose masked-out lanes are not read), then relu (emit_relu),
    then the bound; or leaky relu (emit_leaky_relu) instead."""
    if p.bias == "columns":
        asm.ins(f"vaddps {v * p.isa.vector_bytes}(%rsi), {acc}, {acc}"
                f"{mask}")
    elif p.bias == "rows":
        asm.ins(f"vaddps {p.isa.reg(p.mr * p.nv + 2)}, {acc}, {acc}")
    _emit_activation(asm, p, acc, _zero_register(p), _bound_register(p),
                     _bound_register(p), p.isa.reg(p.mr * p.nv))


def _emit_activation(asm, p, acc, floor, bound, product, spare):
    """acc = relu(acc) (its floor, or leaky relu's slope, in `floor`),
    leaky relu (slope * acc into `product`), then the bound (in
    `bound`); or the smooth activation through `floor`, `product` and
    `spare`."""
    if p.smooth is not None:
        emit_smooth_activation(asm, p, acc, (floor, product, spare))
        return
    if p.relu:
        emit_relu(asm, p, acc, floor)
    if p.leaky_slope is not None:
        emit_leaky_relu(asm, p, acc, floor, product)
    if p.relu_max is not None:
        # min(bound, x) returns its second operand, x, for a NaN x.
        asm.ins(f"vminps {acc}, {bound}, {acc}")


def _emit_c_write(asm, p, next_tile, read_c, epilogue=False):
    """C += the accumulators of one MR x NR tile (C = them unless `read_c`;
    with `epilogue`, C = epilogue(that)),
    of which %r13 - %r15 rows and %r9 - %r14 columns are valid. Full tiles
    take plain vector updates; tiles short of rows update the valid rows
    only; tiles short of columns use lane masks (AVX-512) or spill to the
    edge tile and add the valid part with scalar code (AVX2). Nothing
    outside the valid part of C is read or written. Places `next_tile` at
    its end."""
    if p.c_transposed:
        _emit_c_write_transposed(asm, p, next_tile, read_c, epilogue)
        return
    isa = p.isa
    col_edge = asm.label("tile short of columns")
    row_edge = asm.label("tile short of rows")
    if p.col_edges:
        asm.ins(f"movq {NB}, %rsi")
        asm.ins("subq %r14, %rsi")
        asm.ins(f"cmpq ${p.nr}, %rsi")
        asm.ins(f"jb {fwd(col_edge)}")
    if p.row_edges:
        asm.ins(f"movq {MB}, %rdx")
        asm.ins("subq %r15, %rdx")
        asm.ins(f"cmpq ${p.mr}, %rdx")
        asm.ins(f"jb {fwd(row_edge)}")
    asm.comment("full tile: C " + ("+" if read_c else "") + "= accumulators"
                + (", epilogue" if epilogue else ""))
    _emit_c_rows_setup(asm, p)
    if epilogue:
        _emit_epilogue_setup(asm, p)
    for i in range(p.mr):
        if epilogue:
            _emit_epilogue_row(asm, p, i)
        for v in range(p.nv):
            acc = isa.reg(i * p.nv + v)
            addr = _c_address(p, i, v * isa.vector_bytes)
            if read_c:
                asm.ins(f"vaddps {addr}, {acc}, {acc}")
            if epilogue:
                _emit_epilogue_vector(asm, p, acc, v)
            asm.ins(f"vmovups {acc}, {addr}")
        if i + 1 < p.mr:
            _emit_c_next_row(asm, p, i)
    if p.row_edges:
        asm.ins(f"jmp {fwd(next_tile)}")
        asm.place(row_edge)
        asm.comment("tile short of rows: update the %rdx valid rows")
        _emit_row_updates(asm, p, next_tile, read_c=read_c,
                          epilogue=epilogue)
    if not p.col_edges:
        asm.place(next_tile)
        return
    if not p.row_edges:
        asm.ins(f"jmp {fwd(next_tile)}")
    asm.place(col_edge)
    asm.ins(f"movq {MB}, %rdx")
    asm.ins("subq %r15, %rdx")
    min_into(asm, "%rdx", p.mr)
    if isa.name == "avx512":
        asm.comment("tile short of columns: masked row updates")
        _emit_column_masks(asm, p)
        _emit_row_updates(asm, p, next_tile, masked=True, read_c=read_c,
                          epilogue=epilogue)
        asm.place(next_tile)
        return
    asm.comment("tile short of columns: spill, add the valid part to C")
    _emit_spill_tile(asm, p)
    asm.ins("movq %rsi, %rcx")
    asm.ins(f"leaq {TILE_OFFSET}(%rbx), %rsi")
    if epilogue:
        # No register is free: %r15 (ir) lends itself to the bias pointer
        # and comes back from the header after the rows.
        asm.ins(f"movq %r15, {SAVE_SLOT}(%rbx)")
        if p.bias == "columns":
            asm.ins(f"movq {BIAS_OFFSET}(%rbx), %r15")
            asm.ins(f"leaq (%r15,{JC},4), %r15")
            asm.ins("leaq (%r15,%r14,4), %r15")
        elif p.bias == "rows":
            # %r15 is ir: the tile's first row's bias from the saved value.
            asm.ins(f"movq {BIAS_OFFSET}(%rbx), %rax")
            asm.ins(f"leaq (%rax,{IC},4), %rax")
            asm.ins("leaq (%rax,%r15,4), %r15")
        if p.leaky_slope is not None:
            asm.ins(f"vmovss {leaky_slope_address(p)}, {xmm(1)}")
        elif p.relu_min is None:
            asm.ins(f"vxorps {xmm(1)}, {xmm(1)}, {xmm(1)}")
        else:
            asm.ins(f"vmovss {relu_min_address(p)}, {xmm(1)}")
        if p.relu_max is not None:
            # %xmm2 held accumulators, now in the edge tile.
            asm.ins(f"vmovss {relu_max_address(p)}, {xmm(2)}")
    e_row = asm.label("edge: next row")
    e_col = asm.label("edge: next column")
    asm.place(e_row)
    asm.ins("xorl %eax, %eax")
    asm.place(e_col)
    if read_c:
        asm.ins(f"vmovss (%rdi,%rax,4), {xmm(0)}")
        asm.ins(f"vaddss (%rsi,%rax,4), {xmm(0)}, {xmm(0)}")
    else:
        asm.ins(f"vmovss (%rsi,%rax,4), {xmm(0)}")
    if epilogue and p.bias == "columns":
        asm.ins(f"vaddss (%r15,%rax,4), {xmm(0)}, {xmm(0)}")
    elif epilogue and p.bias == "rows":
        asm.ins(f"vaddss (%r15), {xmm(0)}, {xmm(0)}")
    if epilogue and p.relu:
        emit_relu(asm, p, xmm(0), xmm(1), "ss")
    if epilogue and p.leaky_slope is not None:
        # %xmm2 held accumulators, now in the edge tile.
        emit_leaky_relu(asm, p, xmm(0), xmm(1), xmm(2), "ss")
    if epilogue and p.relu_max is not None:
        asm.ins(f"vminss {xmm(0)}, {xmm(2)}, {xmm(0)}")
    if epilogue and p.smooth is not None:
        # Lane 0 of a vector computation (the constants are whole
        # vectors); %xmm1 - %xmm3 held accumulators, now in the edge tile.
        emit_smooth_activation(asm, p, xmm(0), (xmm(1), xmm(2), xmm(3)))
    asm.ins(f"vmovss {xmm(0)}, (%rdi,%rax,4)")
    asm.ins("incq %rax")
    asm.ins("cmpq %rcx, %rax")
    if p.fault == "write-past-edge":
        asm.comment("fault write-past-edge: one column too many")
        asm.ins(f"jbe {back(e_col)}")
    else:
        asm.ins(f"jb {back(e_col)}")
    p.c_ld.add_to(asm, "%rdi")
    asm.ins(f"addq ${p.nr * 4}, %rsi")
    if epilogue and p.bias == "rows":
        asm.ins("addq $4, %r15")
    asm.ins("decq %rdx")
    asm.ins(f"jnz {back(e_row)}")
    if epilogue:
        asm.ins(f"movq {SAVE_SLOT}(%rbx), %r15")
    asm.place(next_tile)


def _tile_offset(p, i, v):
    """Workspace offset of accumulator (row i, vector v) in the edge tile:
    MR rows of NR floats."""
    return TILE_OFFSET + (i * p.nr + v * p.isa.lanes) * 4


def _emit_spill_tile(asm, p):
    """The accumulators to the edge tile (_tile_offset)."""
    for i in range(p.mr):
        for v in range(p.nv):
            asm.ins(f"vmovaps {p.isa.reg(i * p.nv + v)}, "
                    f"{_tile_offset(p, i, v)}(%rbx)")


def _emit_c_write_transposed(asm, p, next_tile, read_c, epilogue):
    """_emit_c_write for the product transposed: the tile's row i is C's
    column, its vector v the lanes-many C rows from v * lanes on. The
    accumulators go to the edge tile, then each vector's column of the
    tile comes back as MR rows, is transposed (emit_transpose_16x16: zmm
    r = C's row v * lanes + r, lane i its column) and updates C a row at a
    time through %k1, the lanes of the valid columns (the tile's valid
    rows). Rows of C past the valid ones (the tile's valid columns, %rdx)
    are not reached. Nothing outside the valid part of C is read or
    written. Places `next_tile` at its end."""
    isa = p.isa
    lanes = isa.lanes
    z = [f"%zmm{i}" for i in range(32)]
    # The epilogue's registers, free once the tile is transposed.
    floor, bound, product = 16, z[17], z[18]
    extra = 1 if p.fault == "write-past-edge" else 0
    if extra:
        asm.comment("fault write-past-edge: one column and one row of C "
                    "too many")
    asm.comment("C " + ("+" if read_c else "") + "= the tile transposed"
                + (", epilogue" if epilogue else "")
                + ": through the edge tile, lanes x lanes at a time")
    _emit_spill_tile(asm, p)
    # %k1 = the tile's valid rows (C's columns), %rdx = its valid columns
    # (C's rows).
    if p.row_edges:
        asm.ins(f"movq {MB}, %rcx")
        asm.ins("subq %r15, %rcx")
        min_into(asm, "%rcx", p.mr)
        if extra:
            asm.ins("incq %rcx")
    else:
        asm.ins(f"movl ${p.mr + extra}, %ecx")
    asm.ins("movl $1, %eax")
    asm.ins("shll %cl, %eax")
    asm.ins("decl %eax")
    asm.ins("kmovw %eax, %k1")
    if p.col_edges:
        asm.ins(f"movq {NB}, %rdx")
        asm.ins("subq %r14, %rdx")
        if extra:
            asm.ins("incq %rdx")
    if epilogue:
        _emit_bias_pointer(asm, p)
    for v in range(p.nv):
        for i in range(p.mr):
            asm.ins(f"vmovaps {_tile_offset(p, i, v)}(%rbx), {z[i]}")
        # (It clobbers zmm16 to zmm31: the constants come after it.)
        emit_transpose_16x16(asm)
        if epilogue:
            _emit_activation_constants(asm, p, floor, bound)
        for r in range(lanes):
            row = v * lanes + r
            if p.col_edges:
                asm.ins(f"cmpq ${row}, %rdx")
                asm.ins(f"jbe {fwd(next_tile)}")
            addr = (f"{p.c_ld.times(row, 'C row')}(%rdi)" if p.c_ld.static
                    else "(%rdi)")
            acc = z[r]
            if read_c:
                asm.ins(f"vaddps {addr}, {acc}, {acc} {{%k1}}")
            if epilogue:
                # The kernel's bias along its columns is C's along its
                # rows: one value a row of C; along its rows, C's columns.
                if p.bias == "columns":
                    asm.ins(f"vaddps {4 * row}(%rsi){{1to{lanes}}}, {acc}, "
                            f"{acc}")
                elif p.bias == "rows":
                    asm.ins(f"vaddps (%rsi), {acc}, {acc} {{%k1}}")
                _emit_activation(asm, p, acc, z[floor], bound, product,
                                 z[19])
            asm.ins(f"vmovups {acc}, {addr} {{%k1}}")
            if not p.c_ld.static:
                p.c_ld.add_to(asm, "%rdi")
    asm.place(next_tile)


def _emit_k_loops(asm, p, row_stride, k_done, b, rows=None):
    """The K loop over kb, unrolled by k_unroll, and its remainder; falls
    through (or jumps) to `k_done` with the accumulators complete. With
    `rows`, the FMAs of the block's first `rows` rows only."""
    k_loop = asm.label(f"k loop, unrolled by {p.k_unroll}")
    k_rem = asm.label("k remainder")
    k_rem_loop = asm.label("k remainder loop")
    shift = p.k_unroll.bit_length() - 1
    if p.fault == "drop-k":
        asm.comment("fault drop-k: the last k term of every block is lost")
        _emit_kb_less_one(asm)
    else:
        asm.ins(f"movq {KB}, %rcx")
    if shift:
        asm.ins(f"shrq ${shift}, %rcx")
    else:
        asm.ins("testq %rcx, %rcx")
    asm.ins(f"jz {fwd(k_rem)}")
    asm.raw("\t.p2align 5")
    asm.place(k_loop)
    b.paired = bool(b.row_reg) and p.k_unroll % 2 == 0
    for u in range(p.k_unroll):
        _emit_k_step(asm, p, u, row_stride, b, rows)
    b.paired = False
    a_step = 4 if p.a_rows else p.mr * 4
    for base in _a_bases(p, row_stride):
        asm.ins(f"addq ${p.k_unroll * a_step}, {base}")
    b.emit_advance(asm, p.k_unroll)
    # B in place swept: the next panel a row's columns at a time where it
    # is not one run of memory.
    row_walk = b.sweep and p.sweep_walks_rows
    walk = p.sweep_register
    if b.sweep and p.sweep_next_transposed_panel:
        for line in range(0, p.kc * 4, 64):
            asm.ins(f"prefetcht1 {line}({walk})")
        p.b_ld.add_to(asm, walk)
    elif b.sweep:
        # B in place swept, or (one line) packed by the tiles.
        lines = p.sweep_lines_in_place or 1
        for line in range(lines):
            asm.ins(f"prefetcht1 {line * 64 or ''}({walk})")
        asm.ins(f"addq ${lines * 64}, {walk}")
        if row_walk:
            # Past the row's columns: the next row's, out of the loop's
            # line (the loop falls through while the row lasts).
            next_row = asm.label("sweep: the next row of the next panel")
            same_row = asm.label("sweep: same row of the next panel")
            row_end, row_bytes = p.sweep_row_slots
            asm.ins(f"cmpq {row_end}(%rbx), {walk}")
            asm.ins(f"jae {fwd(next_row)}")
            asm.place(same_row)
    asm.ins("decq %rcx")
    asm.ins(f"jnz {back(k_loop)}")
    if row_walk:
        asm.ins(f"jmp {fwd(k_rem)}")
        asm.place(next_row)
        asm.ins(f"movq {row_end}(%rbx), {walk}")
        asm.ins(f"subq {row_bytes}(%rbx), {walk}")
        # (A run-time row: the step B's own walk adds, in b.row_reg.)
        row = (f"${p.b_ld.times(1, 'B row')}" if p.b_ld.static
               else b.row_reg)
        asm.ins(f"addq {row}, {walk}")
        asm.ins(f"addq {row}, {row_end}(%rbx)")
        asm.ins(f"jmp {back(same_row)}")
    asm.place(k_rem)
    if p.k_unroll > 1:
        if p.fault == "drop-k":
            _emit_kb_less_one(asm)
        else:
            asm.ins(f"movq {KB}, %rcx")
        asm.ins(f"andq ${p.k_unroll - 1}, %rcx")
        asm.ins(f"jz {fwd(k_done)}")
        asm.place(k_rem_loop)
        _emit_k_step(asm, p, 0, row_stride, b, rows)
        for base in _a_bases(p, row_stride):
            asm.ins(f"addq ${a_step}, {base}")
        b.emit_advance(asm, 1)
        asm.ins("decq %rcx")
        asm.ins(f"jnz {back(k_rem_loop)}")


def _emit_kb_less_one(asm):
    """%rcx = kb - 1, or 0 for an empty block (a run-time K of 0): the
    borrow of the subtraction adds the one back."""
    asm.ins(f"movq {KB}, %rcx")
    asm.ins("subq $1, %rcx")
    asm.ins("adcq $0, %rcx")


def _a_bases(p, row_stride):
    """The registers a K loop advances along A: %rax, and the further row
    bases of a run-time-lda sliver read in place."""
    return p.a_row_bases if row_stride == RUNTIME_A_ROWS else ("%rax",)


def _emit_runtime_a_rows_setup(asm, p):
    """Before the K loop of a sliver read in place with a run-time lda:
    %r9 = lda bytes, and each further base three rows below the last (or
    with 3 lda, emit_runtime_a_bases)."""
    if p.a_rows_three_lda:
        emit_runtime_a_bases(asm, p.mr, p.a_ld.operand())
        return
    asm.ins(f"movq {p.a_ld.operand()}, {A_LDA_REG}")
    bases = p.a_row_bases
    for prev, base in zip(bases, bases[1:]):
        asm.ins(f"leaq ({prev},{A_LDA_REG},2), {base}")
        asm.ins(f"addq {A_LDA_REG}, {base}")


def _emit_runtime_a_rows_restore(asm, p):
    """After the K loops: the registers a run-time-lda sliver borrowed."""
    asm.ins(f"movq {p.a_slots}(%rbx), {NB}")
    asm.ins(f"movq {p.a_slots + 8}(%rbx), {MB}")
    if p.a_rows_borrow_rdi:
        emit_c_tile_pointer(asm, p.c_transposed, p.c_ld)


def _emit_b_in_place(asm, p):
    """%rsi = B + pc*ldb + jc + jr: the sliver's first element in place."""
    asm.ins("movq 8(%rbx), %rsi")
    p.b_ld.multiply(asm, PC, "%rdx", "B row")
    asm.ins("addq %rdx, %rsi")
    asm.ins(f"leaq ({JC},%r14), %rdx")
    asm.ins("leaq (%rsi,%rdx,4), %rsi")


def _emit_a_k_loops(asm, p, k_done, b, scratch_only=False):
    """The K loops for the sliver at %rax, by A's layout; every path ends
    at `k_done`. With `scratch_only` the sliver is known to be in scratch
    rows."""
    if p.a_pointer_table is not None:
        # A sliver copied to scratch (its pointer's bit 0 set) has its
        # rows kc floats apart: the same K loop with that row stride.
        packed = asm.label("A sliver in scratch rows")
        asm.ins("btrq $0, %rax")
        if scratch_only:
            _emit_k_loops(asm, p, p.kc * 4, k_done, b)
            return
        # A GEMM's scratch sliver is the last of M, M % MR rows when M is
        # known: its K loop works on those rows only.
        short_rows = None
        if (p.conv is None and p.a_direct and not p.dynamic_m
                and not p.a_first_sliver_copied and p.m % p.mr):
            short_rows = p.m % p.mr
        asm.ins(f"jc {fwd(packed)}")
        if p.runtime_a_rows:
            _emit_runtime_a_rows_setup(asm, p)
        if p.conv is not None and p.conv.segmented:
            p.conv.emit_segmented_k_loops(
                asm, p, b,
                lambda u: _emit_k_step(asm, p, u, a_row_stride(p), b))
        else:
            _emit_k_loops(asm, p, a_row_stride(p), k_done, b)
        asm.ins(f"jmp {fwd(k_done)}")
        asm.place(packed)
        _emit_k_loops(asm, p, p.kc * 4, k_done, b, short_rows)
    else:
        _emit_k_loops(asm, p, a_row_stride(p), k_done, b)


def _emit_swept_k_loops(asm, p, k_done, b, scratch_only=False):
    """_emit_a_k_loops, then `k_done` placed after them; when `b` sweeps,
    the walk's register (%rdx, or sweep_register) is loaded from the next
    panel's slot before them and stored back at `k_done` (IC, where the
    walk takes its register, waits in its slot meanwhile)."""
    walk = p.sweep_register
    if b.sweep:
        if walk == IC:
            asm.ins(f"movq {IC}, {p.sweep_ic_slot}(%rbx)")
        asm.ins(f"movq {p.next_panel_slot}(%rbx), {walk}")
    _emit_a_k_loops(asm, p, k_done, b, scratch_only)
    asm.place(k_done)
    if b.sweep:
        asm.ins(f"movq {walk}, {p.next_panel_slot}(%rbx)")
        if walk == IC:
            asm.ins(f"movq {p.sweep_ic_slot}(%rbx), {IC}")
    if p.runtime_a_rows and not scratch_only:
        _emit_runtime_a_rows_restore(asm, p)


def _emit_compute(asm, p):
    """The jr/ir loops and the MR x NR microkernel with its C update."""
    isa = p.isa
    jr_loop = asm.label("jr: next NR sliver of Bp")
    ir_loop = asm.label("ir: next MR sliver of Ap")
    k_done = asm.label("k done: update C")
    next_tile = asm.label("next tile")
    asm.comment(f"COMPUTE: {p.mr}x{p.nr} register block, "
                f"{p.mr * p.nv} accumulators")
    # The macro-kernel's two loops over the packed block: jr (r14, columns
    # of Bp in NR steps) and ir (r15, rows of Ap in MR steps), in the
    # request's loop order.
    emit_sliver_heads(asm, p, jr_loop, ir_loop, p.loop_order)
    if p.b_edge_masked:
        _emit_b_edge_masks(asm, p)
    if p.a_pointer_table is not None:
        asm.ins(f"movq {p.a_pointer_table}(%rbx,%r15,8), %rax")
    elif p.a_rows:
        asm.ins(f"imulq ${check_disp(p.kc * 4, 'A row')}, %r15, %rax")
        asm.ins(f"leaq {p.ap_offset}(%rbx,%rax), %rax")
    else:
        asm.ins("movq %r15, %rax")
        asm.ins(f"imulq {KB}, %rax")
        asm.ins(f"leaq {p.ap_offset}(%rbx,%rax,4), %rax")
    if p.b_prepacked:
        asm.comment("B prepacked: the sliver = the block's panel + jr * K "
                    "* 4")
        asm.ins(f"imulq ${check_disp(p.k * 4, 'B sliver')}, %r14, %rsi")
        asm.ins(f"addq {B_PANEL_SLOT}(%rbx), %rsi")
    elif p.pack_b:
        asm.ins("movq %r14, %rsi")
        asm.ins(f"imulq {KB}, %rsi")
        asm.ins(f"leaq {p.bp_offset}(%rbx,%rsi,4), %rsi")
    else:
        asm.comment("B in place: row pc, column jc + jr")
        _emit_b_in_place(asm, p)
    emit_c_tile_pointer(asm, p.c_transposed, p.c_ld)
    # The tile's lines of C: MR rows of NR floats, or (the product
    # transposed) NR rows of C of MR floats.
    c_rows, c_cols = (p.nr, p.mr) if p.c_transposed else (p.mr, p.nr)
    line_offsets = sorted(set(range(0, c_cols * 4, 64)) | {c_cols * 4 - 4})
    if p.c_ld.static:
        for i in range(c_rows):
            for off in line_offsets:
                asm.ins(f"prefetcht0 {p.c_ld.times(i) + off}(%rdi)")
    else:
        # %rcx walks two rows at a time, %rdx = ldc bytes.
        asm.ins(f"movq {p.c_ld.operand()}, %rdx")
        asm.ins("movq %rdi, %rcx")
        for i in range(c_rows):
            for off in line_offsets:
                asm.ins(f"prefetcht0 {off}(%rcx{',%rdx' if i % 2 else ''})")
            if i % 2 and i + 1 < c_rows:
                asm.ins("leaq (%rcx,%rdx,2), %rcx")
    for acc in range(p.mr * p.nv):
        asm.ins(isa.zero(acc))
    if p.fuse_pack_b:
        # The first tile of a B sliver (first row block, ir = 0) reads the
        # sliver in place and stores it packed as it goes; PACK B is not run.
        packed_path = asm.label("B sliver packed already")
        if p.reads_range:
            asm.ins(f"cmpq {p.m_range_slot}(%rbx), {IC}")
        else:
            asm.ins(f"testq {IC}, {IC}")
        asm.ins(f"jne {fwd(packed_path)}")
        asm.ins("testq %r15, %r15")
        asm.ins(f"jne {fwd(packed_path)}")
        asm.comment("first tile of this B sliver: read B in place, store it "
                    "packed")
        asm.ins("movq %rsi, %rdi")
        _emit_b_in_place(asm, p)
        if not p.b_ld.static:
            # %r15 (ir, 0 on this path) = the prefetch distance in bytes.
            asm.ins(f"imulq ${FUSED_B_PREFETCH_ROWS}, {p.b_ld.operand()}, "
                    "%r15")
        fused_done = asm.label("B sliver packed")
        _emit_swept_k_loops(asm, p, fused_done, BStream(
            p.b_ld, False, p.nr * 4, sweep=p.sweep_next_panel),
            scratch_only=p.a_first_sliver_copied)
        if not p.b_ld.static:
            asm.ins("xorl %r15d, %r15d")
        emit_c_tile_pointer(asm, p.c_transposed, p.c_ld)
        asm.ins(f"jmp {fwd(k_done)}")
        asm.place(packed_path)
    b = packed_b(p)
    if not b.row.static:
        # B in place with a run-time ldb: %rdx holds it in the K loops.
        asm.ins(f"movq {b.row.operand()}, %rdx")
        b.row_reg = "%rdx"
    if p.b_edge_masked:
        # Only the short last sliver loads B through its masks: its own K
        # loops. Masked loads that miss the caches stream B at a third of
        # the plain loads' rate on Zen 5 (docs/Benchmarks.md, section 38),
        # so the whole slivers load B plainly.
        last = asm.label("the last sliver, short of columns: K loops "
                         "with B's loads masked")
        whole_done = asm.label("k done, a sliver of whole vectors")
        last_done = asm.label("k done, the last sliver")
        asm.ins(f"kortestw %k{p.nv}, %k{p.nv}")
        asm.ins(f"jnc {fwd(last)}")
        _emit_swept_k_loops(asm, p, whole_done, b)
        asm.ins(f"jmp {fwd(k_done)}")
        asm.place(last)
        b = copy.copy(b)
        b.masked = True
        _emit_swept_k_loops(asm, p, last_done, b)
    else:
        _emit_swept_k_loops(asm, p, asm.label("k loops done"), b)
    # Past the K loops' own ends (the sweep's walk stored, borrowed
    # registers restored): the paths above, and the fused packing's, join
    # here.
    asm.place(k_done)
    _emit_c_update(asm, p, next_tile)
    emit_sliver_ends(asm, p, jr_loop, ir_loop, p.loop_order)


def _emit_next_panel_start(asm, p):
    """NEXT_PANEL_SLOT = where the K loops' sweep starts: B(pc + kc, jc),
    the panel the next pc block packs, or after the last pc block B(0,
    jc + nc), the next jc block's first. B as stored (fuse_pack_b: the
    panel's first row in place, walked in address order) or transposed
    (PACK B's B^T: the panel's first row of B^T, walked a row at a time;
    past B^T's last row the prefetches fetch nothing of use, and never
    fault)."""
    what = "B^T" if p.trans_b else "B"
    last = asm.label(f"next {what} panel: after the last pc block")
    start = asm.label(f"next {what} panel: start set")
    asm.ins("movq 8(%rbx), %rax")
    asm.ins(f"leaq {p.kc}({PC}), %rdx")
    asm.ins(f"cmpq {k_operand(p)}, %rdx")
    asm.ins(f"jae {fwd(last)}")
    if p.trans_b:
        asm.ins("leaq (%rax,%rdx,4), %rax")
        asm.ins(f"movq {JC}, %rdx")
    p.b_ld.multiply(asm, "%rdx", "%rdx", "B row")
    asm.ins("addq %rdx, %rax")
    if not p.trans_b:
        asm.ins(f"leaq (%rax,{JC},4), %rax")
    asm.ins(f"jmp {fwd(start)}")
    asm.place(last)
    if p.trans_b:
        asm.ins(f"leaq {p.nc}({JC}), %rdx")
        p.b_ld.multiply(asm, "%rdx", "%rdx", "B row")
        asm.ins("addq %rdx, %rax")
    else:
        asm.ins(f"leaq {check_disp(p.nc * 4, 'B column')}(%rax,{JC},4), "
                "%rax")
    asm.place(start)
    asm.ins(f"movq %rax, {p.next_panel_slot}(%rbx)")
    if p.sweep_walks_rows:
        # The walk's first row: this column block's nb columns.
        row_end, row_bytes = p.sweep_row_slots
        asm.ins(f"leaq (%rax,{NB},4), %rax")
        asm.ins(f"movq %rax, {row_end}(%rbx)")
        asm.ins(f"leaq (,{NB},4), %rax")
        asm.ins(f"movq %rax, {row_bytes}(%rbx)")


def _emit_body(p):
    asm = Asm()
    emit_fault_entry(asm, p.fault)
    # A convolution (conv2d.py) gathers one operand from its input through
    # offset tables; `conv` is None for a plain GEMM.
    conv = p.conv
    if conv is None:
        # The product transposed: the caller's B is the kernel's A.
        a_slot, b_slot = (8, 0) if p.c_transposed else (0, 8)
        asm.ins(f"movq %rdi, {a_slot}(%rcx)")
        asm.ins(f"movq %rsi, {b_slot}(%rcx)")
        asm.ins("movq %rdx, 16(%rcx)")
    else:
        conv.emit_save_pointers(asm)
    asm.ins(f"movq %rcx, {WS}")
    emit_relu_constants(asm, p)
    emit_smooth_constants(asm, p)
    done = asm.label("nothing to do: an empty part of C, or K < 0 (K = 0 "
                     "where C stays as it is)")
    if p.stores_at_zero_k:
        # K = 0 runs one empty kc block, which stores C; K < 0 is no size.
        asm.ins(f"cmpq $0, {K_SLOT}({WS})")
        asm.ins(f"jl {fwd(done)}")
    elif p.dynamic_k:
        asm.ins(f"cmpq $0, {K_SLOT}({WS})")
        asm.ins(f"jle {fwd(done)}")
    if p.runtime_ld:
        asm.comment("runtime_ld: lda, ldb, ldc (elements) -> bytes")
        for i in range(3):
            asm.ins(f"movq {LD_OFFSET + 8 * i}({WS}), %rax")
            asm.ins("shlq $2, %rax")
            asm.ins(f"movq %rax, {LD_BYTES_OFFSET + 8 * i}({WS})")
    if conv is not None:
        conv.emit_tables(asm)
    emit_nest(asm, p, done, _emit_column_block, _emit_row_block,
              _emit_compute, p.c_transposed)
    if p.reads_range or p.dynamic_k:
        asm.place(done)
    asm.ins("vzeroupper")
    return asm.text()


def _emit_column_block(asm, p):
    """At each (jc, pc) block: where the K loops' sweep starts, and PACK B
    (or the convolution's gather of B, or a prepacked B's panel)."""
    if p.sweep_next_panel:
        _emit_next_panel_start(asm, p)
    # B(k, j): element (k, j) at k*ldb + j, or j*ldb + k when transposed.
    b_sk, b_sr = (UNIT, p.b_ld) if p.trans_b else (p.b_ld, UNIT)
    conv = p.conv
    if conv is not None and conv.gathers == "B":
        conv.emit_gather_pack(asm, p, "B", p.nr, NB, 8, JC, p.bp_offset)
    elif p.b_prepacked:
        emit_prepacked_panel(asm, p.k, 1, p.nr, B_PANEL_SLOT)
    elif p.pack_b and not p.fuse_pack_b:
        _emit_pack(asm, p, "B", p.nr, b_sk, b_sr, NB, 8, PC, JC, p.bp_offset,
                   p.col_edges)


def _emit_row_block(asm, p):
    """At each ic block: PACK A (or the convolution's gather of A, or A's
    rows copied, or A read in place)."""
    # A(i, k): element (i, k) at i*lda + k, or k*lda + i when transposed.
    a_sk, a_sr = (p.a_ld, UNIT) if p.trans_a else (UNIT, p.a_ld)
    conv = p.conv
    if conv is not None and conv.gathers == "A":
        conv.emit_gather_pack(asm, p, "A", p.mr, MB, 0, IC, p.ap_offset)
    elif p.a_direct:
        _emit_a_in_place(asm, p)
    elif p.a_rows:
        _emit_pack_a_rows(asm, p)
    else:
        _emit_pack(asm, p, "A", p.mr, a_sk, a_sr, MB, 0, PC, IC, p.ap_offset,
                   p.row_edges)


def emit(request):
    p = Params(request)
    c = p.c_problem
    return kernel_text(
        p, p.symbol(), request, "sgemm",
        f"C[{c.m}x{c.n}] += {'A^T' if c.trans_a else 'A'}"
        f" * {'B^T' if c.trans_b else 'B'}, K = {p.k}"
        + (", computed as C^T = B^T * A^T" if p.c_transposed else ""))


def prepacked_b_header(p):
    """The qm.b_prepacked line of a kernel that takes B prepacked (its
    layout: docs/KernelContract.md, "B prepacked"), or none."""
    return ([f"# qm.b_prepacked: nr={p.nr} k_groups={p.k} element_bytes=4 "
             "plus128=0"] if p.b_prepacked else [])


def kernel_text(p, symbol, request, kind, summary, headers=()):
    """The whole kernel: header lines (`headers`: further qm. lines, and
    the prepacked B's layout), function prologue, body, epilogue."""
    headers = list(headers) + prepacked_b_header(p)
    masks = [f"k{v + 1}" for v in range(p.nv)] if p.isa.name == "avx512" \
        else []
    return function_text(
        kind, summary, symbol, _emit_body(p), request, p.workspace_bytes,
        p.runtime_ld,
        [f"{p.isa.reg_prefix}{i}" for i in range(p.isa.registers)] + masks,
        p.isa.features, runtime_sizes=p.runtime_sizes, headers=headers)

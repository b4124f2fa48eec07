"""The workspace header: the first 128 bytes of every kernel's workspace,
where its caller writes the run-time arguments beyond the four pointers
(docs/KernelContract.md; the C++ side's include/qimeng/Kernel/
WorkspaceHeader.h, whose constants these are). The same layout on every
target and for every generator. A kernel may keep its own data in the
slots its request does not use (each generator names those).
"""

# The part of C a parallel kernel (or a run-time M or N) computes: m_begin,
# m_end, n_begin, n_end as int64 (kRangeOffset).
RANGE_OFFSET = 24
# K of a run-time-K kernel, int64 (kRuntimeKOffset).
K_SLOT = 56
# ldd of a 16-bit output with run-time leading dimensions, int64 in
# 16-bit elements: the run-time K's slot, which such a kernel does not use
# (kHalfOutputLdOffset).
OUTPUT_LD_OFFSET = 56
# lda, ldb, ldc of a run-time-ld kernel, int64 in elements; a convolution
# with run-time strides reads its input's three outer strides there
# (kLeadingDimsOffset, kInputStridesOffset).
LD_OFFSET = 64
# The epilogue's bias pointer (kBiasOffset).
BIAS_OFFSET = 112
# D's pointer, a 16-bit output's (kHalfOutputOffset).
OUTPUT_OFFSET = 120
# The header's bytes; the kernel's own data follows
# (kWorkspaceHeaderBytes).
HEADER_BYTES = 128

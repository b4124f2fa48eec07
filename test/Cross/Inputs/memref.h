/* The descriptors of f32 memrefs as MLIR's C interface passes them
   (`llvm.emit_c_interface`: a pointer to the descriptor; a returned memref
   through a pointer in the first argument), shared by the drivers here. */
#ifndef QIMENG_CROSS_INPUTS_MEMREF_H
#define QIMENG_CROSS_INPUTS_MEMREF_H

#define QM_MEMREF(rank)                                                        \
  struct {                                                                     \
    float *allocated, *aligned;                                                \
    long offset, sizes[rank], strides[rank];                                   \
  }

typedef QM_MEMREF(1) Memref1D;
typedef QM_MEMREF(2) Memref2D;
typedef QM_MEMREF(3) Memref3D;
typedef QM_MEMREF(4) Memref4D;

#endif

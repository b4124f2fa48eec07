/*===- LibxsmmArchive.c - libxsmm.a as a shared object ---------------------===
 *
 * The only source of libqimeng-libxsmm.so, whose other contents are the
 * whole of Debian's static libxsmm.a (see CMakeLists.txt). It records which
 * archive that was, for qimeng-bench's description of the library.
 *
 *===----------------------------------------------------------------------===*/
const char *qimeng_libxsmm_archive(void) { return QIMENG_LIBXSMM_ARCHIVE; }

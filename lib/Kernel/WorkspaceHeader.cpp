//===- WorkspaceHeader.cpp ------------------------------------------------===//
#include "qimeng/Kernel/WorkspaceHeader.h"
#include <cstring>

using namespace qimeng;

void qimeng::writeLeadingDims(void *workspace, const GemmDesc &d) {
  if (!d.runtimeLd)
    return;
  int64_t v[3] = {d.lda, d.ldb, d.ldc};
  std::memcpy(static_cast<char *>(workspace) + kLeadingDimsOffset, v,
              sizeof(v));
}

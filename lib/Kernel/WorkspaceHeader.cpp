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
  if (d.halfOutput)
    std::memcpy(static_cast<char *>(workspace) + kHalfOutputLdOffset, &d.ldd,
                sizeof(d.ldd));
}

void qimeng::writeInputStrides(void *workspace, const ConvDesc &d) {
  if (!d.runtimeStrides)
    return;
  std::memcpy(static_cast<char *>(workspace) + kInputStridesOffset,
              d.inputStrides, sizeof(d.inputStrides));
}

void qimeng::writeRuntimeK(void *workspace, const GemmDesc &desc) {
  if (!desc.dynamicK)
    return;
  int64_t k = desc.k;
  std::memcpy(static_cast<char *>(workspace) + kRuntimeKOffset, &k, sizeof k);
}

void qimeng::writeBias(void *workspace, const float *bias) {
  std::memcpy(static_cast<char *>(workspace) + kBiasOffset, &bias,
              sizeof(bias));
}

const float *qimeng::readBias(const void *workspace) {
  const float *bias;
  std::memcpy(&bias, static_cast<const char *>(workspace) + kBiasOffset,
              sizeof(bias));
  return bias;
}

void qimeng::writeHalfOutput(void *workspace, void *d) {
  std::memcpy(static_cast<char *>(workspace) + kHalfOutputOffset, &d,
              sizeof(d));
}

void *qimeng::readHalfOutput(const void *workspace) {
  void *d;
  std::memcpy(&d, static_cast<const char *>(workspace) + kHalfOutputOffset,
              sizeof(d));
  return d;
}

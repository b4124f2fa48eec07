//===- KernelJson.h - GemmDesc <-> JSON --------------------------*- C++
//-*-===//
//
// The one JSON spelling of a GemmDesc and of a ConvDesc, shared by the emitter
// request and the qimeng-runner protocol. Reading never throws or aborts: a
// missing or wrong-typed field is an llvm::Error naming it.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_KERNEL_KERNELJSON_H
#define QIMENG_KERNEL_KERNELJSON_H

#include "qimeng/Kernel/KernelDesc.h"
#include "llvm/Support/Error.h"
#include <nlohmann/json.hpp>

namespace qimeng {

/// {"m", "n", "k", "lda", "ldb", "ldc", "trans_a", "trans_b"}.
nlohmann::json toJson(const GemmDesc &desc);

/// Reads the fields toJson writes from `object`; `what` names the message
/// in errors ("validation request field 'm' must be an integer").
llvm::Expected<GemmDesc> gemmDescFromJson(const nlohmann::json &object,
                                          llvm::StringRef what);

/// {"layout", "n", "h", "w", "c", "f", "kh", "kw", "stride_h", "stride_w",
/// "dilation_h", "dilation_w", "input_strides": [3 integers]}, and where
/// set "runtime_strides", "overwrite", "bias", "relu", "relu_max",
/// "b_prepacked", "dtype", "output_pixel_stride".
nlohmann::json toJson(const ConvDesc &desc);

/// Reads the fields toJson(ConvDesc) writes, as gemmDescFromJson does.
llvm::Expected<ConvDesc> convDescFromJson(const nlohmann::json &object,
                                          llvm::StringRef what);

} // namespace qimeng

#endif // QIMENG_KERNEL_KERNELJSON_H

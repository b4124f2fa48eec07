//===- ErrorHelpers.h - GoogleTest helpers for llvm::Error ------*- C++ -*-===//
//
// llvm/Testing/Support is not installed by Debian; these few macros cover
// what the tests need.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_TEST_ERRORHELPERS_H
#define QIMENG_TEST_ERRORHELPERS_H

#include "llvm/Support/Error.h"
#include <gtest/gtest.h>
#include <string>

namespace qimeng::testing {

/// Consumes the error and returns its message ("" for success).
inline std::string takeMessage(llvm::Error err) {
  if (!err)
    return "";
  return llvm::toString(std::move(err));
}

} // namespace qimeng::testing

/// Asserts an llvm::Error is success, printing its message otherwise.
#define QM_ASSERT_OK(expr)                                                     \
  do {                                                                         \
    std::string qmMsg = ::qimeng::testing::takeMessage(expr);                  \
    ASSERT_TRUE(qmMsg.empty()) << qmMsg;                                       \
  } while (0)

/// Asserts an llvm::Expected holds a value; moves it into `var`.
#define QM_ASSERT_EXPECTED(var, expr)                                          \
  auto var##OrErr = (expr);                                                    \
  ASSERT_TRUE(static_cast<bool>(var##OrErr))                                   \
      << llvm::toString(var##OrErr.takeError());                               \
  auto var = std::move(*var##OrErr)

/// Asserts an llvm::Error (or Expected's error) fails with a message that
/// contains `needle`.
#define QM_ASSERT_FAILS_WITH(errExpr, needle)                                  \
  do {                                                                         \
    std::string qmMsg = ::qimeng::testing::takeMessage(errExpr);               \
    ASSERT_FALSE(qmMsg.empty()) << "expected failure containing: " << needle;  \
    ASSERT_NE(qmMsg.find(needle), std::string::npos) << qmMsg;                 \
  } while (0)

#endif // QIMENG_TEST_ERRORHELPERS_H

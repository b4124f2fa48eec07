//===- TestTargets.h - Targets the unit tests pin --------------*- C++ -*-===//
#ifndef QIMENG_TEST_UNIT_TESTTARGETS_H
#define QIMENG_TEST_UNIT_TESTTARGETS_H

#include "qimeng/Kernel/Target.h"
#include "llvm/ADT/StringRef.h"
#include <gtest/gtest.h>

namespace qimeng {

/// Target::parse(spec), a test failure (and a default Target) when it is
/// not a valid target string.
inline Target targetOf(llvm::StringRef spec) {
  auto t = Target::parse(spec);
  EXPECT_TRUE(static_cast<bool>(t)) << spec.str();
  if (!t) {
    llvm::consumeError(t.takeError());
    return Target();
  }
  return *t;
}

} // namespace qimeng

#endif // QIMENG_TEST_UNIT_TESTTARGETS_H

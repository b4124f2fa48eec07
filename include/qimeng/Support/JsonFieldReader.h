//===- JsonFieldReader.h - Typed, no-throw JSON field access -----*- C++
//-*-===//
//
// nlohmann_json without exceptions aborts the process on a wrong-typed
// access; inside mlir-opt that is a compiler crash. Everything that reads
// JSON it did not write (tuning records, runner requests and answers) goes
// through this reader.
//
//===----------------------------------------------------------------------===//
#ifndef QIMENG_SUPPORT_JSONFIELDREADER_H
#define QIMENG_SUPPORT_JSONFIELDREADER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FormatVariadic.h"
#include <climits>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace qimeng {

/// Reads typed fields of one JSON object without throwing or aborting (a
/// wrong-typed field is an llvm::Error, never a crash); errors name the
/// field: "<context> field '<prefix><name>' must be an integer".
class JsonFieldReader {
public:
  JsonFieldReader(const nlohmann::json &object, std::string context,
                  std::string prefix = "")
      : object(object), context(std::move(context)), prefix(std::move(prefix)) {
  }

  const nlohmann::json *find(const char *name) const {
    auto it = object.find(name);
    return it == object.end() ? nullptr : &*it;
  }

  llvm::Error fail(const char *name, llvm::StringRef what) const {
    return llvm::createStringError(
        llvm::formatv("{0} field '{1}{2}' must be {3}", context, prefix, name,
                      what)
            .str());
  }

  llvm::Error string(const char *name, std::string &out) const {
    const nlohmann::json *v = find(name);
    if (!v || !v->is_string())
      return fail(name, "a string");
    out = v->get<std::string>();
    return llvm::Error::success();
  }

  llvm::Error boolean(const char *name, bool &out) const {
    const nlohmann::json *v = find(name);
    if (!v || !v->is_boolean())
      return fail(name, "a boolean");
    out = v->get<bool>();
    return llvm::Error::success();
  }

  llvm::Error integer(const char *name, int &out) const {
    const nlohmann::json *v = find(name);
    if (!v || !v->is_number_integer())
      return fail(name, "an integer");
    if (v->is_number_unsigned()) {
      uint64_t value = v->get<uint64_t>();
      if (value > static_cast<uint64_t>(INT_MAX))
        return fail(name, "an integer that fits in an int");
      out = static_cast<int>(value);
      return llvm::Error::success();
    }
    int64_t value = v->get<int64_t>();
    if (value < INT_MIN || value > INT_MAX)
      return fail(name, "an integer that fits in an int");
    out = static_cast<int>(value);
    return llvm::Error::success();
  }

  llvm::Error integer64(const char *name, int64_t &out) const {
    const nlohmann::json *v = find(name);
    if (!v || !v->is_number_integer())
      return fail(name, "an integer");
    if (v->is_number_unsigned() &&
        v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      return fail(name, "an integer that fits in 64 bits");
    out = v->get<int64_t>();
    return llvm::Error::success();
  }

  llvm::Error unsignedInteger(const char *name, uint64_t &out) const {
    const nlohmann::json *v = find(name);
    if (!v || !v->is_number_unsigned())
      return fail(name, "a non-negative integer");
    out = v->get<uint64_t>();
    return llvm::Error::success();
  }

  llvm::Error number(const char *name, double &out) const {
    const nlohmann::json *v = find(name);
    if (!v || !v->is_number())
      return fail(name, "a number");
    double value = v->get<double>();
    if (!std::isfinite(value))
      return fail(name, "a finite number");
    out = value;
    return llvm::Error::success();
  }

private:
  const nlohmann::json &object;
  std::string context;
  std::string prefix;
};

} // namespace qimeng

#endif // QIMENG_SUPPORT_JSONFIELDREADER_H

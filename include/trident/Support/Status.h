//===- Status.h - Error values for the plain C++ libraries ------*- C++ -*-===//
//
// The MLIR-free libraries (Hardware, Cost, Schedule, Search, Frontend
// parsing) report user-input problems as values, never by assert or abort:
// a Status carries a message that names the input and the problem, and the
// tool prints it and exits non-zero.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_SUPPORT_STATUS_H
#define TRIDENT_SUPPORT_STATUS_H

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace trident {

/// Success, or an error message.
class [[nodiscard]] Status {
public:
  Status() = default;
  static Status ok() { return Status(); }
  static Status error(std::string message) {
    Status s;
    s.message_ = std::move(message);
    return s;
  }
  bool isOk() const { return !message_.has_value(); }
  explicit operator bool() const { return isOk(); }
  const std::string &message() const {
    static const std::string empty;
    return message_ ? *message_ : empty;
  }

private:
  std::optional<std::string> message_;
};

/// A value or an error message.
template <typename T> class [[nodiscard]] Result {
public:
  Result(T value) : v_(std::move(value)) {}
  Result(Status error) : v_(std::move(error)) {}
  bool isOk() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return isOk(); }
  T &value() { return std::get<T>(v_); }
  const T &value() const { return std::get<T>(v_); }
  T &operator*() { return value(); }
  const T &operator*() const { return value(); }
  T *operator->() { return &value(); }
  const T *operator->() const { return &value(); }
  /// The error; only valid when !isOk().
  const Status &status() const { return std::get<Status>(v_); }
  const std::string &message() const { return status().message(); }

private:
  std::variant<T, Status> v_;
};

} // namespace trident

#endif // TRIDENT_SUPPORT_STATUS_H

// SPDX-License-Identifier: GPL-2.0
//
// Result<T>: a value or an Error, returned for recoverable failures (g++ 12 has no
// std::expected). Fatal errors are exceptions caught in main().
#pragma once

#include <concepts>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace srnic {

// A recoverable failure: an errno value (0 when none applies) and what was being done.
struct Error {
  int errnum = 0;
  std::string msg;
};

// "msg: <strerror(errnum)>", or msg alone when errnum is 0.
std::string to_string(const Error &err);

template <typename T>
class Result;

// U can initialise the value of a Result<T>, and is neither an Error nor a Result.
template <typename U, typename T>
concept ValueFor =
    std::constructible_from<T, U &&> && !std::same_as<std::remove_cvref_t<U>, Error> &&
    !std::same_as<std::remove_cvref_t<U>, Result<T>>;

template <typename T>
class [[nodiscard]] Result {
  static_assert(!std::is_same_v<std::remove_cv_t<T>, Error>, "Result<Error> is ambiguous");
  static_assert(!std::is_reference_v<T>, "Result<T&> is not supported");

public:
  // Implicit from anything T can be built from, as std::expected is, so that
  // `return value;` and `return Error{...};` both work.
  template <ValueFor<T> U = T>
  Result(U &&value) : v_(std::in_place_index<0>, std::forward<U>(value)) {}
  Result(Error err) : v_(std::in_place_index<1>, std::move(err)) {}

  bool has_value() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  // Calling these on an error is a bug; they throw std::bad_variant_access.
  T &value() & { return std::get<0>(v_); }
  const T &value() const & { return std::get<0>(v_); }
  T &&value() && { return std::get<0>(std::move(v_)); }
  T &operator*() & { return value(); }
  const T &operator*() const & { return value(); }
  T &&operator*() && { return std::move(*this).value(); }
  T *operator->() { return &value(); }
  const T *operator->() const { return &value(); }

  // Calling this on a value is a bug; it throws std::bad_variant_access.
  const Error &error() const & { return std::get<1>(v_); }
  Error &&error() && { return std::get<1>(std::move(v_)); }

private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
public:
  Result() = default;
  Result(Error err) : err_(std::move(err)) {}

  bool has_value() const noexcept { return !err_.has_value(); }
  explicit operator bool() const noexcept { return has_value(); }

  // Calling this on success is a bug; it throws std::bad_optional_access.
  const Error &error() const & { return err_.value(); }
  Error &&error() && { return std::move(err_).value(); }

private:
  std::optional<Error> err_;
};

} // namespace srnic

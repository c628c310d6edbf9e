// SPDX-License-Identifier: GPL-2.0
//
// Output: one print path for text and JSON, like iproute2's print_*(PRINT_ANY, ...).
//
//   out.begin_record();
//   out.field("name", "rxe0");   // text: "name rxe0 "   JSON: "name":"rxe0"
//   out.field("ports", 1u);      // text: "ports 1 "     JSON: "ports":1
//   out.end_record();            // text: newline        JSON: closes one object
//   out.finish();                // JSON: prints all records as one array
//
// Text records are written as they end; JSON records are kept until finish(), so that a
// JSON document is printed whole (an empty "[]" when there were no records).
#pragma once

#include <concepts>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <type_traits>

#include <nlohmann/json.hpp>

namespace srnic {

enum class OutputFormat { text, json };

// What field() accepts: bool, any integer but char, or anything that converts to
// string_view. A char would silently print as a number, so it is refused.
template <typename T>
concept FieldValue = (std::integral<T> && !std::is_same_v<T, char>) ||
                     std::convertible_to<const T &, std::string_view>;

class Output {
public:
  // pretty only affects JSON (iproute2's -p).
  Output(std::ostream &os, OutputFormat format, bool pretty = false);
  Output(const Output &) = delete;
  Output &operator=(const Output &) = delete;

  OutputFormat format() const noexcept { return format_; }

  void begin_record();
  void end_record();

  // One template rather than overloads: an overload set with bool would take string
  // literals (pointer-to-bool beats the user-defined conversion to string_view).
  template <FieldValue T>
  void field(std::string_view key, const T &value) {
    if constexpr (std::is_same_v<T, bool>)
      put_bool(key, value);
    else if constexpr (std::signed_integral<T>)
      put_int(key, value);
    else if constexpr (std::unsigned_integral<T>)
      put_uint(key, value);
    else
      put_string(key, std::string_view(value));
  }

  // A structured value (array, object): JSON gets value as is, text gets `key text `, or
  // nothing when text is empty.
  void field_json(std::string_view key, const nlohmann::ordered_json &value, std::string_view text);

  // Text format only: prints line (a newline is added) outside any record, for commands
  // whose text output is not records (doctor, lat); JSON ignores it.
  void text_line(std::string_view line);

  // Prints what is pending: the JSON array of all records. Call once at the end, or once
  // per interval for commands that print one document per interval (top).
  void finish();

private:
  void put_bool(std::string_view key, bool value);
  void put_int(std::string_view key, std::int64_t value);
  void put_uint(std::string_view key, std::uint64_t value);
  void put_string(std::string_view key, std::string_view value);

  std::ostream &os_;
  OutputFormat format_;
  bool pretty_;
  bool in_record_ = false;
  std::string line_;              // text: the record being built
  nlohmann::ordered_json record_; // JSON: the record being built, keys in field order
  nlohmann::ordered_json records_ = nlohmann::ordered_json::array();
};

} // namespace srnic

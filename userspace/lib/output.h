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
// JSON document is printed whole (an empty "[]" when there were no records). A command
// that prints one document per interval (top) ends each with end_document(). Both flush
// the stream, so a reader on a pipe gets each document as soon as it is complete.
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

  // Ends one document of a command that prints several (top: one per interval): prints
  // the JSON array of the records since the last one (an empty one too) and flushes; text
  // output is only flushed.
  void end_document();

  // Ends the output (run() calls it once, after the command, even a failed one): prints
  // the JSON array of the pending records, or an empty one if the command printed no
  // document; then flushes. After end_document() with nothing pending, it prints nothing.
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
  bool printed_ = false;          // a JSON document was printed
  std::string line_;              // text: the record being built
  nlohmann::ordered_json record_; // JSON: the record being built, keys in field order
  nlohmann::ordered_json records_ = nlohmann::ordered_json::array();
};

} // namespace srnic

// SPDX-License-Identifier: GPL-2.0
#include "output.h"

#include <cassert>
#include <iterator>
#include <ostream>

#include <fmt/format.h>

namespace srnic {

Output::Output(std::ostream &os, OutputFormat format, bool pretty)
    : os_(os), format_(format), pretty_(pretty) {}

void Output::begin_record() {
  assert(!in_record_);
  in_record_ = true;
  line_.clear();
  record_ = nlohmann::ordered_json::object();
}

void Output::end_record() {
  assert(in_record_);
  in_record_ = false;
  if (format_ == OutputFormat::json) {
    records_.push_back(std::move(record_));
    return;
  }
  line_ += '\n';
  os_ << line_;
}

void Output::end_document() {
  assert(!in_record_);
  if (format_ == OutputFormat::json) {
    // Replace rather than throw on invalid UTF-8: strings come from sysfs and the kernel.
    os_ << records_.dump(pretty_ ? 4 : -1, ' ', false, nlohmann::json::error_handler_t::replace)
        << '\n';
    records_ = nlohmann::ordered_json::array();
    printed_ = true;
  }
  os_.flush();
}

void Output::finish() {
  if (format_ == OutputFormat::json && (!records_.empty() || !printed_))
    end_document();
  else
    os_.flush();
}

void Output::field_json(std::string_view key, const nlohmann::ordered_json &value,
                        std::string_view text) {
  if (format_ == OutputFormat::json)
    record_[std::string(key)] = value;
  else if (!text.empty())
    fmt::format_to(std::back_inserter(line_), "{} {} ", key, text);
}

void Output::text_line(std::string_view line) {
  assert(!in_record_);
  if (format_ == OutputFormat::text)
    os_ << line << '\n';
}

void Output::put_bool(std::string_view key, bool value) {
  if (format_ == OutputFormat::json)
    record_[std::string(key)] = value;
  else
    fmt::format_to(std::back_inserter(line_), "{} {} ", key, value);
}

void Output::put_int(std::string_view key, std::int64_t value) {
  if (format_ == OutputFormat::json)
    record_[std::string(key)] = value;
  else
    fmt::format_to(std::back_inserter(line_), "{} {} ", key, value);
}

void Output::put_uint(std::string_view key, std::uint64_t value) {
  if (format_ == OutputFormat::json)
    record_[std::string(key)] = value;
  else
    fmt::format_to(std::back_inserter(line_), "{} {} ", key, value);
}

void Output::put_string(std::string_view key, std::string_view value) {
  if (format_ == OutputFormat::json)
    record_[std::string(key)] = value;
  else
    fmt::format_to(std::back_inserter(line_), "{} {} ", key, value);
}

} // namespace srnic

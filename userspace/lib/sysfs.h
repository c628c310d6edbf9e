// SPDX-License-Identifier: GPL-2.0
//
// Sysfs: reads below a sysfs root that tests can point at a fake tree. The root is
// $SRNIC_SYSFS_ROOT when set and not empty, /sys otherwise.
#pragma once

#include "result.h"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace srnic {

class Sysfs {
public:
  explicit Sysfs(std::filesystem::path root) : root_(std::move(root)) {}
  static Sysfs from_env();

  const std::filesystem::path &root() const noexcept { return root_; }
  // root / rel; rel is relative ("module/srnic").
  std::filesystem::path path(const std::filesystem::path &rel) const { return root_ / rel; }

  // Both follow symlinks, as /sys/class/* entries are links; errors read as false.
  bool exists(const std::filesystem::path &rel) const;
  bool is_dir(const std::filesystem::path &rel) const;

  // An attribute's contents without the trailing newline.
  Result<std::string> read_attr(const std::filesystem::path &rel) const;

  // Writes value to an attribute in one write(2), as `echo value > attr` does; the kernel's
  // errno (EINVAL for a value it refuses) comes back in the Error.
  Result<void> write_attr(const std::filesystem::path &rel, std::string_view value) const;

  // Names of the entries of a directory, sorted.
  Result<std::vector<std::string>> list_dir(const std::filesystem::path &rel) const;

private:
  std::filesystem::path root_;
};

} // namespace srnic

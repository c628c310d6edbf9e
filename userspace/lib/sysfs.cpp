// SPDX-License-Identifier: GPL-2.0
#include "sysfs.h"

#include "fd.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <system_error>

namespace srnic {

namespace {

// A sysfs attribute is at most one page; allow some slack for fake trees.
constexpr std::size_t attr_max_bytes = 64 * 1024;

} // namespace

Sysfs Sysfs::from_env() {
  const char *root = std::getenv("SRNIC_SYSFS_ROOT");
  return Sysfs(root != nullptr && *root != '\0' ? root : "/sys");
}

bool Sysfs::exists(const std::filesystem::path &rel) const {
  std::error_code ec;
  return std::filesystem::exists(path(rel), ec);
}

bool Sysfs::is_dir(const std::filesystem::path &rel) const {
  std::error_code ec;
  return std::filesystem::is_directory(path(rel), ec);
}

Result<std::string> Sysfs::read_attr(const std::filesystem::path &rel) const {
  std::filesystem::path full = path(rel);
  Result<Fd> fd = Fd::open(full, O_RDONLY);
  if (!fd)
    return std::move(fd).error();
  Result<std::string> data = read_all(*fd, attr_max_bytes);
  if (!data)
    return Error{data.error().errnum, "cannot read " + full.string()};
  std::string &s = *data;
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
    s.pop_back();
  return data;
}

Result<void> Sysfs::write_attr(const std::filesystem::path &rel, std::string_view value) const {
  std::filesystem::path full = path(rel);
  Result<Fd> fd = Fd::open(full, O_WRONLY | O_TRUNC);
  if (!fd)
    return std::move(fd).error();
  ssize_t n = ::write(fd->get(), value.data(), value.size());
  if (n < 0)
    return Error{errno, "cannot write " + full.string()};
  if (static_cast<std::size_t>(n) != value.size())
    return Error{EIO, "short write to " + full.string()};
  return {};
}

Result<std::vector<std::string>> Sysfs::list_dir(const std::filesystem::path &rel) const {
  std::filesystem::path full = path(rel);
  std::error_code ec;
  std::filesystem::directory_iterator it(full, ec);
  if (ec)
    return Error{ec.value(), "cannot list " + full.string()};
  std::vector<std::string> names;
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    names.push_back(it->path().filename().string());
  if (ec)
    return Error{ec.value(), "cannot list " + full.string()};
  std::sort(names.begin(), names.end());
  return names;
}

} // namespace srnic

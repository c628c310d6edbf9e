// SPDX-License-Identifier: GPL-2.0
#include "srnic_dev.h"

#include <cerrno>
#include <filesystem>

#include <uapi/rdma/srnic.h>

namespace srnic::ctl {

namespace {

const std::filesystem::path ib_class = "class/infiniband";

// Device names come from the kernel, but never let one walk out of the class directory.
bool safe_name(std::string_view name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string_view::npos;
}

std::optional<std::string> read_optional(const Sysfs &sysfs, const std::filesystem::path &rel) {
  Result<std::string> value = sysfs.read_attr(rel);
  if (!value)
    return std::nullopt;
  return std::move(value).value();
}

} // namespace

std::optional<SrnicAttrs> srnic_attrs(const Sysfs &sysfs, std::string_view ibdev) {
  if (!safe_name(ibdev))
    return std::nullopt;
  std::filesystem::path dir = ib_class / ibdev / SRNIC_SYSFS_GROUP;
  if (!sysfs.is_dir(dir))
    return std::nullopt;
  return SrnicAttrs{read_optional(sysfs, dir / SRNIC_SYSFS_VERSION),
                    read_optional(sysfs, dir / SRNIC_SYSFS_NETDEV)};
}

Result<std::vector<std::string>> srnic_devices(const Sysfs &sysfs) {
  Result<std::vector<std::string>> names = sysfs.list_dir(ib_class);
  if (!names) {
    if (names.error().errnum == ENOENT)
      return std::vector<std::string>{}; // no RDMA core loaded, so no devices
    return names;
  }
  std::vector<std::string> srnic;
  for (std::string &name : *names)
    if (srnic_attrs(sysfs, name))
      srnic.push_back(std::move(name));
  return srnic;
}

} // namespace srnic::ctl

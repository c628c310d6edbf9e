// SPDX-License-Identifier: GPL-2.0
//
// The srnic kernel module's sysfs contract: an RDMA device is an srnic device when
// class/infiniband/<ibdev>/srnic/ is a directory; its files `version` and `netdev` hold the
// module version and the name of the net device the RDMA device is bound to.
#pragma once

#include "lib/result.h"
#include "lib/sysfs.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace srnic::ctl {

struct SrnicAttrs {
  std::optional<std::string> version; // absent if the file is missing or unreadable
  std::optional<std::string> netdev;
};

// The srnic attributes of RDMA device ibdev, or nullopt if it is not an srnic device.
std::optional<SrnicAttrs> srnic_attrs(const Sysfs &sysfs, std::string_view ibdev);

// Names of all srnic RDMA devices, sorted; empty if there is no class/infiniband.
Result<std::vector<std::string>> srnic_devices(const Sysfs &sysfs);

} // namespace srnic::ctl

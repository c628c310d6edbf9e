// SPDX-License-Identifier: GPL-2.0
//
// srnicctl dev [show [DEV]]: RDMA devices as the RDMA core reports them over rdma netlink
// (RDMA_NLDEV_CMD_GET), marked `kind srnic` when they belong to the srnic module.
#pragma once

#include "lib/output.h"
#include "lib/result.h"
#include "lib/sysfs.h"

#include <linux/netlink.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace srnic::ctl {

struct DevInfo {
  std::uint32_t index = 0;
  std::string name;
  std::optional<std::uint64_t> node_guid; // host byte order
  std::optional<std::string> fw;          // the kernel omits an empty firmware version
  std::optional<std::uint32_t> ports;     // number of ports
};

// Parses one RDMA_NLDEV_CMD_GET reply; index and name are required.
Result<DevInfo> parse_dev(const nlmsghdr &nlh);

// Dumps all RDMA devices. A kernel without the RDMA core (no NETLINK_RDMA) has none.
Result<std::vector<DevInfo>> dump_devs();

// Prints devs, or only the one named name (ENODEV if there is none such).
Result<void> show_devs(Output &out, const Sysfs &sysfs, std::span<const DevInfo> devs,
                       std::optional<std::string_view> name);

} // namespace srnic::ctl

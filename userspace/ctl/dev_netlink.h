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

// Fills an RDMA_NLDEV_CMD_NEWLINK request (as `rdma link add NAME type srnic netdev IFNAME`).
void put_newlink(nlmsghdr &nlh, std::string_view name, std::string_view netdev);
// Fills an RDMA_NLDEV_CMD_DELLINK request for the device with index `index`.
void put_dellink(nlmsghdr &nlh, std::uint32_t index);

// Creates srnic device name on netdev; errors carry the kernel's errno with what it means.
Result<void> add_link(std::string_view name, std::string_view netdev);
// Deletes RDMA device name (ENODEV if there is none; any kind, as `rdma link delete`).
Result<void> del_link(std::string_view name);

// One sentence on what errno means for `dev add` (what iproute2 leaves to the kernel log).
std::string explain_add_error(int errnum, std::string_view name, std::string_view netdev);

} // namespace srnic::ctl

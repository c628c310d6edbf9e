// SPDX-License-Identifier: GPL-2.0
//
// Parsing of RDMA_NL_NLDEV messages (uapi <rdma/rdma_netlink.h>), shared by every
// srnicctl object that talks to the RDMA core: dev today, qp and stat later.
#pragma once

#include "result.h"

#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include <array>
#include <cstdint>

struct nlattr;

namespace srnic::nl {

// The netlink message type of RDMA_NL_NLDEV command cmd (enum rdma_nldev_command).
constexpr std::uint16_t nldev_type(unsigned int cmd) {
  return static_cast<std::uint16_t>(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd));
}

// Top-level attributes of one message, indexed by enum rdma_nldev_attr; absent ones are
// null. Attributes newer than our uapi header are skipped.
using NldevAttrs = std::array<const nlattr *, RDMA_NLDEV_ATTR_MAX>;

// Fills an NldevAttrs from nlh (RDMA netlink has no family header) and checks the type of
// every attribute we know (as iproute2's nldev_policy[]), so readers can trust it.
Result<NldevAttrs> parse_nldev(const nlmsghdr &nlh);

} // namespace srnic::nl

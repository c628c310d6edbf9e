// SPDX-License-Identifier: GPL-2.0
#pragma once

#include <cstdint>
#include <string>

namespace srnic {

// Formats a GUID given in host byte order (as rdma netlink reports node and system image
// GUIDs) the way iproute2's rdma does: four 16-bit groups, "0002:c903:0031:7c60".
std::string format_guid(std::uint64_t guid);

} // namespace srnic

// SPDX-License-Identifier: GPL-2.0
#include "guid.h"

#include <fmt/format.h>

namespace srnic {

std::string format_guid(std::uint64_t guid) {
  return fmt::format("{:04x}:{:04x}:{:04x}:{:04x}", (guid >> 48) & 0xffff, (guid >> 32) & 0xffff,
                     (guid >> 16) & 0xffff, guid & 0xffff);
}

} // namespace srnic

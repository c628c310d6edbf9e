// SPDX-License-Identifier: GPL-2.0
//
// The srnic kernel module's sysfs contract: an RDMA device is an srnic device when
// class/infiniband/<ibdev>/srnic/ is a directory; its files `version` and `netdev` hold the
// module version and the name of the net device the RDMA device is bound to.
#pragma once

#include "lib/result.h"
#include "lib/sysfs.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
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

// A decimal counter or knob value ("123", "123\n" already stripped); nullopt otherwise.
std::optional<std::uint64_t> parse_u64(std::string_view text);

// "4: ACTIVE" (ports/N/state, phys_state) -> "ACTIVE"; text without ": " is returned as is.
std::string port_state_name(std::string_view text);

// A GID as sysfs prints it ("fe80:0000:...:3456") in the short IPv6 form ("fe80::...:3456",
// "::ffff:10.0.0.1"); nullopt when it is not a GID.
std::optional<std::string> format_gid(std::string_view sysfs_gid);

// srnic's active MTU for a netdev MTU (kernel/srnic_port.c, srnic_port_active_mtu()): the
// largest IB MTU that fits after RoCEv2's worst-case 84 bytes of headers; 0 when not even
// 256 fits.
unsigned int ib_mtu_for(unsigned int netdev_mtu);
// Bytes a RoCEv2 packet needs besides its payload, at worst (IPv6 + UDP + BTH + RETH +
// ImmDt + ICRC).
constexpr unsigned int roce_hdr_overhead = 40 + 8 + 12 + 16 + 4 + 4;

struct GidEntry {
  unsigned int index = 0;
  std::string gid;  // short form
  std::string type; // "RoCE v2", "IB/RoCE v1", or "" when unknown
};

struct PortView {
  unsigned int port = 0;
  std::string state;      // "ACTIVE", "DOWN", ...
  std::string phys_state; // "LinkUp", "Disabled", ...
  std::vector<GidEntry> gids; // the non-zero ones
};

// What srnicctl show, doctor and stats read about one srnic device, all from sysfs.
struct DeviceView {
  std::string name;
  std::optional<std::string> node_guid;
  std::optional<std::string> netdev;
  bool netdev_exists = false;
  std::optional<std::string> operstate; // class/net/<netdev>/operstate: "up", "down", ...
  std::optional<bool> admin_up;         // IFF_UP in class/net/<netdev>/flags
  std::optional<unsigned int> mtu;      // class/net/<netdev>/mtu
  std::vector<PortView> ports;
  std::optional<bool> dcqcn_np; // roce_np/enable; nullopt when absent
  std::optional<bool> dcqcn_rp; // roce_rp/enable
};

// Reads the view of srnic device name; ENODEV if it is not an srnic device.
Result<DeviceView> read_device_view(const Sysfs &sysfs, std::string_view name);

// The srnic devices to act on: all of them, or the one named (ENODEV with "not an srnic
// device" when it exists but is not srnic's, "no RDMA device" when it does not exist).
Result<std::vector<std::string>> select_devices(const Sysfs &sysfs,
                                                const std::optional<std::string> &name);

// Calls fn with the view of each device select_devices() picks; stops at the first error.
Result<void> for_each_device_view(const Sysfs &sysfs, const std::optional<std::string> &name,
                                  const std::function<Result<void>(const DeviceView &)> &fn);

// Counter name -> value for ports/<port>/hw_counters (non-numeric files such as lifespan
// are left out), in name order.
Result<std::vector<std::pair<std::string, std::uint64_t>>>
read_hw_counters(const Sysfs &sysfs, std::string_view dev, unsigned int port);

} // namespace srnic::ctl

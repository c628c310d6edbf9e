// SPDX-License-Identifier: GPL-2.0
//
// The srnic kernel module's sysfs contract: an RDMA device is an srnic device when
// class/infiniband/<ibdev>/srnic/ is a directory; its files `version`, `netdev` and `netns`
// hold the module version, the name of the net device the RDMA device is bound to and the
// inode number of that net device's network namespace.
#pragma once

#include "lib/result.h"
#include "lib/sysfs.h"

#include <cstdint>
#include <filesystem>
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

// An RDMA device of another driver with an Ethernet port (RoCE, or iWARP): a hardware NIC
// such as mlx5_ib on a ConnectX, or a soft one (siw, rxe). srnic refuses a netdev that has
// one (the kernel's rdma link add fails with EBUSY).
struct OtherDevice {
  std::string name;
  // The driver of its parent device (device/driver: "mlx5_core"); none for virtual devices.
  std::optional<std::string> driver;
  // The netdevs of its ports, from the GID table (ports/N/gid_attrs/ndevs/*) and the parent
  // device's net/ directory; sorted, each once.
  std::vector<std::string> netdevs;
};

// The OtherDevice view of RDMA device name; nullopt if it is srnic's, does not exist or has
// no port with link_layer Ethernet (an InfiniBand HCA).
std::optional<OtherDevice> other_device(const Sysfs &sysfs, std::string_view name);

// Every such device, sorted by name; empty if there is no class/infiniband.
Result<std::vector<OtherDevice>> other_devices(const Sysfs &sysfs);

// What srnicctl show, doctor and stats read about one device, all from sysfs: an srnic
// device, or (show, stats) another driver's device on Ethernet.
struct DeviceView {
  std::string name;
  std::string kind = "srnic";        // "srnic", or "other" for an OtherDevice
  std::optional<std::string> driver; // OtherDevice::driver
  std::optional<std::string> node_guid;
  std::optional<std::string> netdev;
  // The inode number of the netdev's network namespace (srnic/netns; nullopt from a module
  // without it). netdev_elsewhere: that is not this process's namespace (a device is seen
  // from every one), and the netdev fields below are left unread: a netdev of that name
  // here is another one.
  std::optional<std::uint64_t> netdev_netns;
  bool netdev_elsewhere = false;
  bool netdev_exists = false;
  std::optional<std::string> operstate; // class/net/<netdev>/operstate: "up", "down", ...
  std::optional<bool> admin_up;         // IFF_UP in class/net/<netdev>/flags
  std::optional<unsigned int> mtu;      // class/net/<netdev>/mtu
  // The netdev is an 802.1Q VLAN (DEVTYPE=vlan in its uevent): its real netdev (the
  // lower_<name> link), or "" when that is not listed
  std::optional<std::string> vlan_of;
  // The netdev is a bond's slave or a bridge's port (an upper_<name> link to a netdev with
  // bonding/ or bridge/): the master; for a bond its mode (the first word of bonding/mode:
  // "active-backup", "802.3ad", ...) and this slave's state (bonding_slave/state: "active" or
  // "backup"; "" when not listed); the master's ports (its lower_<name> links)
  struct PortOf {
    std::string master;
    bool bridge = false;
    std::string mode;
    std::string state;
    std::vector<std::string> ports;
  };
  std::optional<PortOf> port_of;
  std::vector<PortView> ports;
  // roce_np/enable; nullopt when absent. For an other device, the knobs mlx5 keeps under
  // class/net/<netdev>/ecn/roce_np/: enable is a file, or a directory of one file per
  // priority (on when any is).
  std::optional<bool> dcqcn_np;
  std::optional<bool> dcqcn_rp; // roce_rp/enable
  // srnic's modes (srnic/ in its sysfs directory); nullopt when absent
  std::optional<std::string> provider; // "rxe" (default mode) or "native"
  std::optional<std::uint64_t> repath_timeouts;
  std::optional<bool> rx_steer;
  std::optional<bool> rx_spread;
  std::optional<bool> tx_batch;
};

// The inode number of this process's network namespace (stat of /proc/self/ns/net);
// nullopt when it cannot be read.
std::optional<std::uint64_t> own_netns();

// The name `ip netns` gives the network namespace of inode number inum (/run/netns/<name>
// is a bind mount of it); nullopt when none does.
std::optional<std::string> netns_name(std::uint64_t inum);

// Reads the view of srnic device name; ENODEV if it is not an srnic device.
Result<DeviceView> read_device_view(const Sysfs &sysfs, std::string_view name);

// Reads the view of srnic device name, or of another driver's device on Ethernet (kind
// "other", netdev its first netdev); ENODEV if it is neither.
Result<DeviceView> read_any_device_view(const Sysfs &sysfs, std::string_view name);

// The directory of dev's DCQCN knobs of side ("np" or "rp"), relative to the sysfs root:
// class/infiniband/<dev>/roce_np for srnic, class/net/<netdev>/ecn/roce_np for another
// driver's device (mlx5); nullopt when dev is neither or side is not np/rp.
std::optional<std::filesystem::path> dcqcn_dir(const Sysfs &sysfs, std::string_view dev,
                                               std::string_view side);

// The srnic devices to act on: all of them, or the one named (ENODEV with "not an srnic
// device" when it exists but is not srnic's, "no RDMA device" when it does not exist).
Result<std::vector<std::string>> select_devices(const Sysfs &sysfs,
                                                const std::optional<std::string> &name);

// Which devices a command acts on: srnic's only, or also other drivers' on Ethernet.
enum class Scope { srnic, with_other };

// select_devices() with Scope::with_other: srnic devices, then other drivers' devices on
// Ethernet, each group sorted; a name must be one of those (ENODEV otherwise).
Result<std::vector<std::string>> select_devices(const Sysfs &sysfs,
                                                const std::optional<std::string> &name,
                                                Scope scope);

// Calls fn with the view of each device select_devices() picks; stops at the first error.
Result<void> for_each_device_view(const Sysfs &sysfs, const std::optional<std::string> &name,
                                  const std::function<Result<void>(const DeviceView &)> &fn,
                                  Scope scope = Scope::srnic);

// Counter name -> value for ports/<port>/hw_counters (non-numeric files such as lifespan
// are left out), in name order.
Result<std::vector<std::pair<std::string, std::uint64_t>>>
read_hw_counters(const Sysfs &sysfs, std::string_view dev, unsigned int port);

// The same for ports/<port>/counters, the IBA port counters (port_xmit_data, ...) that
// hardware devices such as mlx5 have besides hw_counters.
Result<std::vector<std::pair<std::string, std::uint64_t>>>
read_port_counters(const Sysfs &sysfs, std::string_view dev, unsigned int port);

} // namespace srnic::ctl

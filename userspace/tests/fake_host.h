// SPDX-License-Identifier: GPL-2.0
//
// FakeHost: a fake root with sys/ laid out as on a host running srnic: srnic0 bound to
// vethA (up, MTU 1500) with port 1 ACTIVE, a link-local RoCE v1/v2 GID pair and an IPv4
// RoCE v2 GID, hw_counters, DCQCN knobs; and mlx5_0, an RDMA device that is not srnic's
// (an InfiniBand one: its port has no link_layer Ethernet). Tests then plant
// misconfigurations in it, or a ConnectX (mlx5_roce()). run_cli() runs srnicctl on such a
// tree.
#pragma once

#include "ctl/cli.h"
#include "lib/sysfs.h"
#include "temp_dir.h"

#include <sstream>
#include <string>
#include <vector>

namespace srnic::test {

class FakeHost {
public:
  FakeHost() {
    dir_.mkdir("sys/module/srnic");
    const std::string ib = "sys/class/infiniband/srnic0/";
    dir_.write(ib + "srnic/netdev", "vethA\n");
    dir_.write(ib + "srnic/version", "0.1.0\n");
    dir_.write(ib + "srnic/repath_timeouts", "0\n");
    dir_.write(ib + "srnic/rx_steer", "0\n");
    dir_.write(ib + "srnic/tx_batch", "0\n");
    dir_.write(ib + "srnic/rx_spread", "1\n");
    dir_.write(ib + "srnic/provider", "rxe\n");
    dir_.write(ib + "node_guid", "5054:00ff:fe12:3456\n");
    const std::string p = ib + "ports/1/";
    dir_.write(p + "state", "4: ACTIVE\n");
    dir_.write(p + "phys_state", "5: LinkUp\n");
    gid(0, "fe80:0000:0000:0000:5054:00ff:fe12:3456", "IB/RoCE v1");
    gid(1, "fe80:0000:0000:0000:5054:00ff:fe12:3456", "RoCE v2");
    gid(2, "0000:0000:0000:0000:0000:ffff:0a63:0001", "RoCE v2");
    gid(3, "0000:0000:0000:0000:0000:0000:0000:0000", "");
    dir_.write(p + "hw_counters/sent_pkts", "10\n");
    dir_.write(p + "hw_counters/rcvd_pkts", "12\n");
    dir_.write(p + "hw_counters/retransmits", "0\n");
    dir_.write(p + "hw_counters/lifespan", "10\n");
    dir_.write(ib + "roce_np/enable", "1\n");
    dir_.write(ib + "roce_np/min_time_between_cnps", "4\n");
    dir_.write(ib + "roce_rp/enable", "1\n");
    dir_.write(ib + "roce_rp/rpg_min_rate", "1\n");
    dir_.write(ib + "roce_rp/rpg_ai_rate", "5\n");
    dir_.mkdir("sys/class/infiniband/mlx5_0/ports/1");
    netdev("vethA", true, "up", 1500);
    dir_.write("usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so", "");
    dir_.write("etc/libibverbs.d/rxe.driver", "driver rxe\n");
  }

  // gids/N and gid_attrs/types/N of srnic0 port 1; an empty type leaves the file out, as
  // reading an unused entry's type fails on a real host.
  void gid(int index, const std::string &gid, const std::string &type) {
    const std::string p = "sys/class/infiniband/srnic0/ports/1/";
    dir_.write(p + "gids/" + std::to_string(index), gid + "\n");
    if (!type.empty())
      dir_.write(p + "gid_attrs/types/" + std::to_string(index), type + "\n");
  }

  void netdev(const std::string &name, bool up, const std::string &operstate, unsigned mtu) {
    const std::string n = "sys/class/net/" + name + "/";
    dir_.write(n + "flags", up ? "0x1003\n" : "0x1002\n");
    dir_.write(n + "operstate", operstate + "\n");
    dir_.write(n + "mtu", std::to_string(mtu) + "\n");
  }

  // A ConnectX as mlx5_core and mlx5_ib lay it out: RDMA device name on PCI function
  // 0000:03:00.0 (driver mlx5_core, net/<ifname>), port 1 on Ethernet, ACTIVE, with an
  // IPv4 RoCE v2 GID on ifname; IBA port counters and hw_counters; mlx5's DCQCN knobs under
  // class/net/<ifname>/ecn/ (enable: one file per priority, on for priority 3).
  void mlx5_roce(const std::string &name, const std::string &ifname) {
    const std::string pci = "sys/devices/pci0000:00/0000:00:03.0/0000:03:00.0";
    dir_.mkdir("sys/bus/pci/drivers/mlx5_core");
    dir_.mkdir(pci + "/net/" + ifname);
    std::filesystem::create_directory_symlink("../../../../bus/pci/drivers/mlx5_core",
                                              dir_.path() / pci / "driver");
    const std::string ib = "sys/class/infiniband/" + name + "/";
    dir_.mkdir(ib);
    std::filesystem::create_directory_symlink(dir_.path() / pci, dir_.path() / ib / "device");
    dir_.write(ib + "node_guid", "b859:9f03:00aa:bb01\n");
    const std::string p = ib + "ports/1/";
    dir_.write(p + "link_layer", "Ethernet\n");
    dir_.write(p + "state", "4: ACTIVE\n");
    dir_.write(p + "phys_state", "5: LinkUp\n");
    dir_.write(p + "gids/0", "fe80:0000:0000:0000:ba59:9fff:feaa:bb01\n");
    dir_.write(p + "gids/1", "fe80:0000:0000:0000:ba59:9fff:feaa:bb01\n");
    dir_.write(p + "gids/2", "0000:0000:0000:0000:0000:ffff:0a00:0005\n");
    dir_.write(p + "gids/3", "0000:0000:0000:0000:0000:0000:0000:0000\n");
    dir_.write(p + "gid_attrs/types/0", "IB/RoCE v1\n");
    dir_.write(p + "gid_attrs/types/1", "RoCE v2\n");
    dir_.write(p + "gid_attrs/types/2", "RoCE v2\n");
    for (int i = 0; i < 3; i++)
      dir_.write(p + "gid_attrs/ndevs/" + std::to_string(i), ifname + "\n");
    dir_.mkdir(p + "gid_attrs/ndevs/3"); // stands for an entry whose read fails (unused)
    dir_.write(p + "counters/port_xmit_data", "1000\n");
    dir_.write(p + "counters/port_rcv_data", "2000\n");
    dir_.write(p + "counters/port_rcv_errors", "0\n");
    dir_.write(p + "hw_counters/np_cnp_sent", "7\n");
    dir_.write(p + "hw_counters/rp_cnp_handled", "3\n");
    dir_.write(p + "hw_counters/out_of_sequence", "1\n");
    dir_.write(p + "hw_counters/lifespan", "12\n");
    const std::string ecn = "sys/class/net/" + ifname + "/ecn/";
    for (int prio = 0; prio < 8; prio++) {
      dir_.write(ecn + "roce_np/enable/" + std::to_string(prio), prio == 3 ? "1\n" : "0\n");
      dir_.write(ecn + "roce_rp/enable/" + std::to_string(prio), prio == 3 ? "1\n" : "0\n");
    }
    dir_.write(ecn + "roce_np/cnp_dscp", "48\n");
    dir_.write(ecn + "roce_np/min_time_between_cnps", "4\n");
    dir_.write(ecn + "roce_rp/rpg_min_rate", "1\n");
    dir_.write(ecn + "roce_rp/rpg_ai_rate", "5\n");
    if (!std::filesystem::exists(dir_.path() / "sys/class/net" / ifname / "mtu"))
      netdev(ifname, true, "up", 9000);
  }

  const TempDir &dir() const { return dir_; }
  const std::filesystem::path &root() const { return dir_.path(); }
  const Sysfs &sysfs() const { return sysfs_; }

private:
  TempDir dir_;
  Sysfs sysfs_{dir_.path() / "sys"};
};

// What srnicctl printed and returned.
struct CliRun {
  int status;
  std::string out;
  std::string err;
};

// Runs srnicctl with args (argv without argv[0]) on sysfs.
inline CliRun run_cli(const Sysfs &sysfs, const std::vector<std::string> &args) {
  std::ostringstream out, err;
  int status = ctl::run(args, sysfs, out, err);
  return {status, out.str(), err.str()};
}

// Runs srnicctl with args on host's sysfs.
inline CliRun run_on(const FakeHost &host, const std::vector<std::string> &args) {
  return run_cli(host.sysfs(), args);
}

} // namespace srnic::test

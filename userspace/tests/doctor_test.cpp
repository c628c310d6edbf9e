// SPDX-License-Identifier: GPL-2.0
#include "ctl/cli.h"
#include "ctl/doctor.h"
#include "ctl/sysfs_view.h"
#include "ctl/verbs.h"
#include "fake_host.h"

#include <cerrno>
#include <cstdlib>
#include <sstream>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace srnic::ctl {
namespace {

using testing::HasSubstr;

// The self-test is replaced: the fake host has no device to run verbs on.
class Doctor : public testing::Test {
protected:
  Doctor() {
    opts_.run_selftest = [this](const std::string &dev, unsigned int gid) {
      selftest_calls_.push_back({dev, gid});
      if (selftest_error_)
        return Result<verbs::SelftestResult>(Error{EIO, *selftest_error_});
      return Result<verbs::SelftestResult>(verbs::SelftestResult{4096, 4096, 1024});
    };
  }

  std::vector<DoctorCheck> run() { return run_doctor(host_.sysfs(), host_.root(), opts_); }

  static DoctorCheck find(const std::vector<DoctorCheck> &checks, const std::string &name) {
    for (const DoctorCheck &c : checks)
      if (c.check == name)
        return c;
    throw std::runtime_error("no check " + name);
  }

  test::FakeHost host_;
  DoctorOptions opts_;
  std::optional<std::string> selftest_error_;
  std::vector<std::pair<std::string, unsigned int>> selftest_calls_;
};

TEST_F(Doctor, HealthyHostPasses) {
  std::vector<DoctorCheck> checks = run();
  std::vector<std::string> names;
  for (const DoctorCheck &c : checks) {
    names.push_back(c.check);
    EXPECT_EQ(c.status, CheckStatus::ok) << c.check << ": " << c.detail;
    EXPECT_EQ(c.fix, "") << c.check;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"module_srnic", "rxe_conflict", "rxe_provider",
                                             "other_rdma", "srnic_devices", "netdev", "netdev_up", "mtu",
                                             "port_active", "roce_v2_gid", "selftest"}));
  EXPECT_EQ(count_problems(checks), 0u);
  EXPECT_EQ(find(checks, "mtu").detail, "vethA MTU 1500 gives IB MTU 1024");
  // The IPv4 RoCE v2 GID is preferred over the link-local one.
  ASSERT_EQ(selftest_calls_.size(), 1u);
  EXPECT_EQ(selftest_calls_[0], (std::pair<std::string, unsigned int>{"srnic0", 2}));
}

TEST_F(Doctor, ModuleNotLoaded) {
  std::filesystem::remove_all(host_.root() / "sys/module/srnic");
  const DoctorCheck &c = find(run(), "module_srnic");
  EXPECT_EQ(c.status, CheckStatus::fail);
  EXPECT_THAT(c.fix, HasSubstr("modprobe srnic"));
}

// srnic bound to a VLAN: ib_core lists none of the VLAN's addresses among its GIDs.
TEST_F(Doctor, BoundToVlanWarns) {
  host_.dir().write("sys/class/infiniband/srnic0/srnic/netdev", "vethA.100\n");
  host_.netdev("vethA.100", true, "up", 1500);
  host_.dir().write("sys/class/net/vethA.100/uevent", "DEVTYPE=vlan\nINTERFACE=vethA.100\n");
  host_.dir().mkdir("sys/class/net/vethA.100/lower_vethA");
  std::vector<DoctorCheck> checks = run();
  const DoctorCheck &c = find(checks, "netdev_vlan");
  EXPECT_EQ(c.status, CheckStatus::warn);
  EXPECT_THAT(c.detail, HasSubstr("vethA.100 is a VLAN of vethA"));
  EXPECT_EQ(c.fix.substr(0, c.fix.find(" (")),
            "srnicctl dev del srnic0 && srnicctl dev add srnic0 netdev vethA");
  EXPECT_EQ(count_problems(checks), 0u); // a warning: the device works on link-local GIDs
}

// srnic bound to a bond's slave: fine in active-backup (the bond's addresses are its GIDs
// while the slave is active), and in a mode without an active slave while it is the only
// srnic device on the bond's slaves; a warning when another one shares the GIDs.
// vethA made a slave of bond0, whose bonding/mode reads mode_line, beside vethB.
static void enslave(test::FakeHost &host, const std::string &mode_line) {
  host.netdev("bond0", true, "up", 1500);
  host.dir().write("sys/class/net/bond0/bonding/mode", mode_line + "\n");
  host.dir().mkdir("sys/class/net/vethA/upper_bond0");
  host.dir().mkdir("sys/class/net/bond0/lower_vethA");
  host.dir().mkdir("sys/class/net/bond0/lower_vethB");
}

// A second srnic device, srnic1, bound to netdev nd.
static void second_device(test::FakeHost &host, const std::string &nd) {
  host.dir().write("sys/class/infiniband/srnic1/srnic/netdev", nd + "\n");
  host.netdev(nd, true, "up", 1500);
}

TEST_F(Doctor, BondSlaveActiveBackupOk) {
  enslave(host_, "active-backup 1");
  second_device(host_, "vethB"); // the backup slave's device: not a sharer in this mode
  host_.dir().write("sys/class/net/vethA/bonding_slave/state", "backup\n");
  std::vector<DoctorCheck> checks = run();
  const DoctorCheck &c = find(checks, "netdev_bond");
  EXPECT_EQ(c.status, CheckStatus::ok);
  EXPECT_THAT(c.detail, HasSubstr("vethA is a slave of bond0 (active-backup)"));
  EXPECT_THAT(c.detail, HasSubstr("(now backup)"));
}

TEST_F(Doctor, BondSlaveWithoutActiveSlaveAloneOk) {
  enslave(host_, "802.3ad 4");
  std::vector<DoctorCheck> checks = run();
  const DoctorCheck c = find(checks, "netdev_bond");
  EXPECT_EQ(c.status, CheckStatus::ok);
  EXPECT_THAT(c.detail, HasSubstr("vethA is a slave of bond0 (802.3ad), which has no active "
                                  "slave"));
  EXPECT_THAT(c.detail, HasSubstr("what arrives on bond0 is srnic0's (the only srnic device on "
                                  "its slaves)"));
  EXPECT_EQ(count_problems(checks), 0u);
}

TEST_F(Doctor, BondSlaveWithoutActiveSlaveSharedWarns) {
  enslave(host_, "802.3ad 4");
  second_device(host_, "vethB");
  std::vector<DoctorCheck> checks = run();
  const DoctorCheck c = find(checks, "netdev_bond");
  EXPECT_EQ(c.status, CheckStatus::warn);
  EXPECT_THAT(c.detail, HasSubstr("the GIDs of srnic0 and of srnic1 on vethB"));
  EXPECT_THAT(c.fix, HasSubstr("srnicctl dev add srnic0 netdev bond0 (one device on the bond)"));
}

// srnic bound to a bridge's port: the bridge's addresses are its GIDs.
static void bridge_port(test::FakeHost &host) {
  host.netdev("br0", true, "up", 1500);
  host.dir().mkdir("sys/class/net/br0/bridge");
  host.dir().mkdir("sys/class/net/vethA/upper_br0");
  host.dir().mkdir("sys/class/net/br0/lower_vethA");
  host.dir().mkdir("sys/class/net/br0/lower_vethB");
}

TEST_F(Doctor, BridgePortAloneOk) {
  bridge_port(host_);
  std::vector<DoctorCheck> checks = run();
  const DoctorCheck c = find(checks, "netdev_bridge");
  EXPECT_EQ(c.status, CheckStatus::ok);
  EXPECT_THAT(c.detail, HasSubstr("vethA is a port of bridge br0: the bridge's addresses are "
                                  "srnic0's GIDs"));
  EXPECT_THROW(find(checks, "netdev_bond"), std::runtime_error);
  EXPECT_EQ(count_problems(checks), 0u);
}

// A device on the bridge itself takes what arrives there: the port's device gets nothing.
TEST_F(Doctor, BridgePortBesideBridgeDeviceWarns) {
  bridge_port(host_);
  second_device(host_, "br0");
  const DoctorCheck c = find(run(), "netdev_bridge");
  EXPECT_EQ(c.status, CheckStatus::warn);
  EXPECT_THAT(c.detail, HasSubstr("br0 has a device of its own, srnic1, which takes what "
                                  "arrives on it; srnic0 gets none of it"));
  EXPECT_THAT(c.fix, HasSubstr("srnicctl dev del srnic0"));
}

TEST_F(Doctor, BridgePortSharedWarns) {
  bridge_port(host_);
  second_device(host_, "vethB");
  const DoctorCheck c = find(run(), "netdev_bridge");
  EXPECT_EQ(c.status, CheckStatus::warn);
  EXPECT_THAT(c.detail, HasSubstr("srnic gives what arrives on br0 to none of them"));
  EXPECT_THAT(c.fix, HasSubstr("srnicctl dev add srnic0 netdev br0 (one device on the bridge)"));
}

// An upper that is not a bond or a bridge (a VLAN on the netdev) is no bond or bridge check.
TEST_F(Doctor, UpperNotBondNoCheck) {
  host_.netdev("vethA.100", true, "up", 1500);
  host_.dir().mkdir("sys/class/net/vethA/upper_vethA.100");
  std::vector<DoctorCheck> checks = run();
  EXPECT_THROW(find(checks, "netdev_bond"), std::runtime_error);
  EXPECT_THROW(find(checks, "netdev_bridge"), std::runtime_error);
  EXPECT_EQ(count_problems(checks), 0u);
}

// Another kind of stacked netdev (its uevent says so) is not taken for a VLAN.
TEST_F(Doctor, NotVlanNoCheck) {
  host_.dir().write("sys/class/net/vethA/uevent", "DEVTYPE=macvlan\nINTERFACE=vethA\n");
  host_.dir().mkdir("sys/class/net/vethA/lower_eth0");
  std::vector<DoctorCheck> checks = run();
  EXPECT_THROW(find(checks, "netdev_vlan"), std::runtime_error);
  EXPECT_EQ(count_problems(checks), 0u);
}

TEST_F(Doctor, RxeLoaded) {
  host_.dir().mkdir("sys/module/rdma_rxe");
  std::vector<DoctorCheck> checks = run();
  const DoctorCheck &c = find(checks, "rxe_conflict");
  EXPECT_EQ(c.status, CheckStatus::fail);
  EXPECT_THAT(c.fix, HasSubstr("rmmod rdma_rxe"));
  EXPECT_EQ(count_problems(checks), 1u);
}

TEST_F(Doctor, ProviderMissing) {
  std::filesystem::remove(host_.root() / "usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so");
  const DoctorCheck &c = find(run(), "rxe_provider");
  EXPECT_EQ(c.status, CheckStatus::fail);
  EXPECT_THAT(c.detail, HasSubstr("no libibverbs rxe provider"));
  EXPECT_THAT(c.fix, HasSubstr("apt install ibverbs-providers"));
}

TEST_F(Doctor, ProviderDriverFileMissing) {
  std::filesystem::remove(host_.root() / "etc/libibverbs.d/rxe.driver");
  const DoctorCheck &c = find(run(), "rxe_provider");
  EXPECT_EQ(c.status, CheckStatus::fail);
  EXPECT_THAT(c.detail, HasSubstr("rxe.driver does not"));
}

// A device in native mode needs srnic's provider: found installed, or through RDMAV_DRIVERS;
// a default-mode device gets no such check.
TEST_F(Doctor, NativeProvider) {
  auto names = [](const std::vector<DoctorCheck> &checks) {
    std::vector<std::string> n;
    for (const DoctorCheck &c : checks)
      n.push_back(c.check);
    return n;
  };
  EXPECT_THAT(names(run()), testing::Not(testing::Contains("native_provider")));

  host_.dir().write("sys/class/infiniband/srnic0/srnic/provider", "native\n");
  DoctorCheck c = find(run(), "native_provider");
  EXPECT_EQ(c.status, CheckStatus::fail);
  EXPECT_EQ(c.dev, "srnic0");
  EXPECT_THAT(c.detail, HasSubstr("provider is not installed"));
  EXPECT_THAT(c.fix, HasSubstr("RDMAV_DRIVERS="));

  host_.dir().write("work/build/userspace/provider/libsrnic-rdmav34.so", "");
  opts_.rdmav_drivers = "/nowhere/libfoo:/work/build/userspace/provider/libsrnic";
  c = find(run(), "native_provider");
  EXPECT_EQ(c.status, CheckStatus::ok) << c.detail;
  EXPECT_THAT(c.detail, HasSubstr("(RDMAV_DRIVERS)"));

  opts_.rdmav_drivers = "/elsewhere/libsrnic"; // named, but no such file
  EXPECT_EQ(find(run(), "native_provider").status, CheckStatus::fail);

  host_.dir().write("usr/lib/x86_64-linux-gnu/libibverbs/libsrnic-rdmav34.so", "");
  EXPECT_EQ(find(run(), "native_provider").status, CheckStatus::fail); // no driver file yet
  host_.dir().write("etc/libibverbs.d/srnic.driver", "driver srnic\n");
  c = find(run(), "native_provider");
  EXPECT_EQ(c.status, CheckStatus::ok) << c.detail;
  EXPECT_THAT(c.detail, HasSubstr("libsrnic-rdmav34.so"));
}

TEST_F(Doctor, NoDevices) {
  std::filesystem::remove_all(host_.root() / "sys/class/infiniband/srnic0");
  std::vector<DoctorCheck> checks = run();
  const DoctorCheck &c = find(checks, "srnic_devices");
  EXPECT_EQ(c.status, CheckStatus::fail);
  EXPECT_THAT(c.fix, HasSubstr("srnicctl dev add srnic0 netdev"));
  EXPECT_EQ(checks.back().check, "srnic_devices");
  EXPECT_TRUE(selftest_calls_.empty());
}

TEST_F(Doctor, NetdevDownSkipsSelftest) {
  host_.netdev("vethA", false, "down", 1500);
  host_.dir().write("sys/class/infiniband/srnic0/ports/1/state", "1: DOWN\n");
  host_.dir().write("sys/class/infiniband/srnic0/ports/1/phys_state", "3: Disabled\n");
  std::vector<DoctorCheck> checks = run();
  const DoctorCheck &up = find(checks, "netdev_up");
  EXPECT_EQ(up.status, CheckStatus::fail);
  EXPECT_EQ(up.detail, "vethA is administratively down");
  EXPECT_EQ(up.fix, "ip link set vethA up");
  EXPECT_EQ(find(checks, "port_active").status, CheckStatus::fail);
  EXPECT_EQ(find(checks, "port_active").detail, "port 1 is DOWN (Disabled)");
  EXPECT_EQ(find(checks, "selftest").status, CheckStatus::skip);
  EXPECT_TRUE(selftest_calls_.empty());
  EXPECT_EQ(count_problems(checks), 2u);
}

TEST_F(Doctor, NoCarrier) {
  host_.netdev("vethA", true, "lowerlayerdown", 1500);
  const DoctorCheck &c = find(run(), "netdev_up");
  EXPECT_EQ(c.status, CheckStatus::fail);
  EXPECT_THAT(c.detail, HasSubstr("no carrier (operstate lowerlayerdown)"));
}

TEST_F(Doctor, NetdevGone) {
  std::filesystem::remove_all(host_.root() / "sys/class/net/vethA");
  std::vector<DoctorCheck> checks = run();
  const DoctorCheck &c = find(checks, "netdev");
  EXPECT_EQ(c.status, CheckStatus::fail);
  EXPECT_EQ(c.detail, "netdev vethA is gone");
  EXPECT_THAT(c.fix, HasSubstr("srnicctl dev del srnic0"));
}

// A device is seen from every network namespace; one whose netdev is in another is checked
// there. A netdev of the same name here is another one: it is not read, nor counted as a
// bridge's port with a device.
TEST_F(Doctor, NetdevInAnotherNamespaceIsCheckedThere) {
  std::optional<std::uint64_t> here = own_netns();
  ASSERT_TRUE(here);
  bridge_port(host_);
  second_device(host_, "vethB"); // a port of br0 here, but srnic1's vethB is elsewhere
  host_.dir().write("sys/class/infiniband/srnic1/srnic/netns", fmt::format("{}\n", *here + 1));
  host_.dir().write("sys/class/infiniband/srnic0/srnic/netns", fmt::format("{}\n", *here));
  host_.netdev("vethB", false, "down", 300); // not srnic1's: no netdev_up nor mtu failure
  const std::string p1 = "sys/class/infiniband/srnic1/ports/1/";
  host_.dir().write(p1 + "state", "4: ACTIVE\n");
  host_.dir().write(p1 + "gids/1", "0000:0000:0000:0000:0000:ffff:0a63:0002\n");
  host_.dir().write(p1 + "gid_attrs/types/1", "RoCE v2\n");
  std::vector<DoctorCheck> checks = run();
  EXPECT_EQ(count_problems(checks), 0u);
  std::vector<DoctorCheck> srnic1;
  for (const DoctorCheck &c : checks)
    if (c.dev == "srnic1")
      srnic1.push_back(c);
  ASSERT_GE(srnic1.size(), 2u);
  EXPECT_EQ(srnic1.front().check, "netdev");
  EXPECT_EQ(srnic1.front().status, CheckStatus::skip);
  EXPECT_THAT(srnic1.front().detail,
              HasSubstr(fmt::format("bound to netdev vethB in network namespace net:[{}], not "
                                    "this one: doctor checks it there",
                                    *here + 1)));
  for (const DoctorCheck &c : srnic1)
    EXPECT_TRUE(c.check != "netdev_up" && c.check != "mtu") << c.check;
  EXPECT_EQ(srnic1.back().check, "selftest");
  EXPECT_EQ(srnic1.back().status, CheckStatus::skip);
  EXPECT_THAT(srnic1.back().detail, HasSubstr("another network namespace"));
  ASSERT_EQ(selftest_calls_.size(), 1u); // srnic0's only
  EXPECT_EQ(selftest_calls_[0].first, "srnic0");
  // srnic0, in this namespace, is the only srnic device on br0's ports here
  EXPECT_EQ(find(checks, "netdev_bridge").status, CheckStatus::ok);
  EXPECT_EQ(find(checks, "netdev").status, CheckStatus::ok);
}

TEST_F(Doctor, MtuTooSmall) {
  host_.netdev("vethA", true, "up", 300);
  const DoctorCheck &c = find(run(), "mtu");
  EXPECT_EQ(c.status, CheckStatus::fail);
  EXPECT_THAT(c.detail, HasSubstr("too small for RoCE (needs 340"));
  EXPECT_EQ(c.fix, "ip link set vethA mtu 1500");
}

TEST_F(Doctor, SmallMtuIsAWarning) {
  host_.netdev("vethA", true, "up", 576);
  std::vector<DoctorCheck> checks = run();
  const DoctorCheck &c = find(checks, "mtu");
  EXPECT_EQ(c.status, CheckStatus::warn);
  EXPECT_THAT(c.detail, HasSubstr("gives IB MTU 256"));
  EXPECT_EQ(count_problems(checks), 0u);
}

TEST_F(Doctor, NoRoceV2Gid) {
  host_.gid(1, "fe80:0000:0000:0000:5054:00ff:fe12:3456", "IB/RoCE v1");
  host_.gid(2, "0000:0000:0000:0000:0000:0000:0000:0000", "");
  std::vector<DoctorCheck> checks = run();
  const DoctorCheck &c = find(checks, "roce_v2_gid");
  EXPECT_EQ(c.status, CheckStatus::fail);
  EXPECT_THAT(c.fix, HasSubstr("ip addr add ADDRESS/PREFIX dev vethA"));
  EXPECT_EQ(find(checks, "selftest").status, CheckStatus::skip);
}

TEST_F(Doctor, SelftestFailure) {
  selftest_error_ = "SEND data differs at byte 7 of 4096";
  std::vector<DoctorCheck> checks = run();
  const DoctorCheck &c = find(checks, "selftest");
  EXPECT_EQ(c.status, CheckStatus::fail);
  EXPECT_THAT(c.detail, HasSubstr("SEND data differs at byte 7"));
  EXPECT_FALSE(c.fix.empty());
}

TEST_F(Doctor, NoSelftestOption) {
  opts_.selftest = false;
  EXPECT_EQ(find(run(), "selftest").status, CheckStatus::skip);
  EXPECT_TRUE(selftest_calls_.empty());
}

TEST(DoctorFormat, TextLines) {
  DoctorCheck ok{"mtu", "srnic0", CheckStatus::ok, "vethA MTU 1500 gives IB MTU 1024", ""};
  EXPECT_EQ(format_check(ok), "OK    mtu           srnic0: vethA MTU 1500 gives IB MTU 1024");
  DoctorCheck bad{"netdev_up", "srnic0", CheckStatus::fail, "vethA is administratively down",
                  "ip link set vethA up"};
  EXPECT_EQ(format_check(bad), "FAIL  netdev_up     srnic0: vethA is administratively down\n"
                               "      fix: ip link set vethA up");
  DoctorCheck host{"rxe_conflict", "", CheckStatus::ok, "module rdma_rxe is not loaded", ""};
  EXPECT_EQ(format_check(host), "OK    rxe_conflict  module rdma_rxe is not loaded");
}

// Through the CLI on the fake root (--no-selftest: there is no device for verbs).
TEST_F(Doctor, CliJsonListsChecksWithFixes) {
  host_.netdev("vethA", false, "down", 1500);
  std::ostringstream out, err;
  int status = ctl::run({"-j", "doctor", "--no-selftest"}, host_.sysfs(), out, err, host_.root());
  EXPECT_EQ(status, EXIT_FAILURE);
  EXPECT_EQ(err.str(), "srnicctl: 1 problem found; each has its fix above\n");
  nlohmann::json j = nlohmann::json::parse(out.str());
  ASSERT_TRUE(j.is_array());
  bool seen = false;
  for (const auto &c : j) {
    EXPECT_TRUE(c["check"].is_string());
    EXPECT_TRUE(c["status"].is_string());
    EXPECT_TRUE(c["detail"].is_string());
    if (c["check"] == "netdev_up") {
      seen = true;
      EXPECT_EQ(c["dev"], "srnic0");
      EXPECT_EQ(c["status"], "fail");
      EXPECT_EQ(c["fix"], "ip link set vethA up");
    }
  }
  EXPECT_TRUE(seen);
}

TEST_F(Doctor, CliTextHealthy) {
  std::ostringstream out, err;
  int status = ctl::run({"doctor", "--no-selftest"}, host_.sysfs(), out, err, host_.root());
  EXPECT_EQ(status, EXIT_SUCCESS) << err.str();
  EXPECT_THAT(out.str(), testing::StartsWith("OK    module_srnic  module srnic is loaded\n"));
  EXPECT_THAT(out.str(), HasSubstr("SKIP  selftest      srnic0: not run (--no-selftest)\n"));
}

TEST(Verbs, PatternAndMismatch) {
  std::vector<std::uint8_t> p = verbs::test_pattern(65536, 1);
  std::vector<std::uint8_t> q = verbs::test_pattern(65536, 2);
  EXPECT_NE(p, q);
  EXPECT_EQ(verbs::first_mismatch(p, p), -1);
  // No 256-byte period, so a shifted copy is caught.
  EXPECT_NE(std::vector<std::uint8_t>(p.begin(), p.begin() + 256),
            std::vector<std::uint8_t>(p.begin() + 256, p.begin() + 512));
  std::vector<std::uint8_t> r = p;
  r[4097] ^= 1;
  EXPECT_EQ(verbs::first_mismatch(p, r), 4097);
  r.resize(100);
  EXPECT_EQ(verbs::first_mismatch(std::vector<std::uint8_t>(p.begin(), p.begin() + 100), r), -1);
  EXPECT_EQ(verbs::first_mismatch(p, r), 100);
}

TEST(Verbs, OpenUnknownDeviceFails) {
  Result<verbs::ContextPtr> ctx = verbs::open_device("no_such_rdma_dev");
  ASSERT_FALSE(ctx);
}

} // namespace
} // namespace srnic::ctl

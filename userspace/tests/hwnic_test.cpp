// SPDX-License-Identifier: GPL-2.0
//
// Other drivers' RDMA devices on Ethernet (a ConnectX with mlx5_ib, laid out by
// FakeHost::mlx5_roce()): found with their netdevs and driver, shown, their counters and
// mlx5's ecn/ DCQCN knobs read, and reported by doctor when they share srnic's netdev.
#include "ctl/doctor.h"
#include "ctl/sysfs_view.h"
#include "fake_host.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace srnic::ctl {
namespace {

using testing::HasSubstr;
using test::CliRun;
using test::run_on;

class HwNic : public testing::Test {
protected:
  HwNic() { host_.mlx5_roce("mlx5_1", "eth0"); }

  // A device of another driver without a parent device (siw, rxe, a stand-in): its
  // netdev is known from its GID table only.
  void virtual_roce(const std::string &name, const std::string &ifname) {
    const std::string p = "sys/class/infiniband/" + name + "/ports/1/";
    host_.dir().write(p + "link_layer", "Ethernet\n");
    host_.dir().write(p + "state", "1: DOWN\n");
    host_.dir().write(p + "phys_state", "3: Disabled\n");
    host_.dir().write(p + "gids/0", "fe80:0000:0000:0000:0000:0000:0000:0001\n");
    host_.dir().write(p + "gid_attrs/ndevs/0", ifname + "\n");
  }

  nlohmann::json json(const std::vector<std::string> &args) {
    CliRun r = run_on(host_, args);
    EXPECT_EQ(r.status, EXIT_SUCCESS) << r.err;
    return nlohmann::json::parse(r.out);
  }

  test::FakeHost host_;
};

TEST_F(HwNic, FindsTheConnectX) {
  std::optional<OtherDevice> o = other_device(host_.sysfs(), "mlx5_1");
  ASSERT_TRUE(o);
  EXPECT_EQ(o->name, "mlx5_1");
  EXPECT_EQ(o->driver, "mlx5_core");
  EXPECT_EQ(o->netdevs, std::vector<std::string>{"eth0"}); // GID table and device/net agree
  // srnic's own device and an InfiniBand HCA are not "other devices on Ethernet"
  EXPECT_FALSE(other_device(host_.sysfs(), "srnic0"));
  EXPECT_FALSE(other_device(host_.sysfs(), "mlx5_0"));
  EXPECT_FALSE(other_device(host_.sysfs(), "nope"));
  EXPECT_FALSE(other_device(host_.sysfs(), ".."));
}

TEST_F(HwNic, VirtualDeviceNetdevFromGids) {
  virtual_roce("siw0", "vethB");
  Result<std::vector<OtherDevice>> all = other_devices(host_.sysfs());
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].name, "mlx5_1");
  EXPECT_EQ((*all)[1].name, "siw0");
  EXPECT_EQ((*all)[1].driver, std::nullopt);
  EXPECT_EQ((*all)[1].netdevs, std::vector<std::string>{"vethB"});
}

TEST_F(HwNic, ShowListsItAfterSrnic) {
  nlohmann::json j = json({"-j", "show"});
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["dev"], "srnic0");
  EXPECT_EQ(j[0]["kind"], "srnic");
  EXPECT_EQ(j[1]["dev"], "mlx5_1");
  EXPECT_EQ(j[1]["kind"], "other");
  EXPECT_EQ(j[1]["driver"], "mlx5_core");
  EXPECT_EQ(j[1]["state"], "ACTIVE");
  EXPECT_EQ(j[1]["netdev"], "eth0");
  EXPECT_EQ(j[1]["netdev_state"], "up");
  EXPECT_EQ(j[1]["mtu"], 9000);
  EXPECT_FALSE(j[1].contains("active_mtu")); // srnic's MTU rule is not mlx5's
  EXPECT_EQ(j[1]["gids"][2]["gid"], "::ffff:10.0.0.5");
  EXPECT_EQ(j[1]["dcqcn"]["np"], true); // priority 3 is on
  EXPECT_EQ(j[1]["dcqcn"]["rp"], true);
}

TEST_F(HwNic, ShowDcqcnOffWhenNoPriorityIsOn) {
  host_.dir().write("sys/class/net/eth0/ecn/roce_np/enable/3", "0\n");
  nlohmann::json j = json({"-j", "show", "mlx5_1"});
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["dcqcn"]["np"], false);
  EXPECT_EQ(j[0]["dcqcn"]["rp"], true);
}

TEST_F(HwNic, ShowWithoutEcnKnobs) {
  std::filesystem::remove_all(host_.root() / "sys/class/net/eth0/ecn");
  nlohmann::json j = json({"-j", "show", "mlx5_1"});
  EXPECT_TRUE(j[0]["dcqcn"].is_null());
}

TEST_F(HwNic, StatsReadsPortCountersAndHwCounters) {
  nlohmann::json j = json({"-j", "stats"});
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["dev"], "srnic0");
  EXPECT_EQ(j[1]["dev"], "mlx5_1");
  EXPECT_EQ(j[1]["kind"], "other");
  EXPECT_EQ(j[1]["port"], 1);
  EXPECT_EQ(j[1]["port_xmit_data"], 1000);
  EXPECT_EQ(j[1]["port_rcv_data"], 2000);
  EXPECT_EQ(j[1]["np_cnp_sent"], 7);
  EXPECT_EQ(j[1]["rp_cnp_handled"], 3);
  EXPECT_FALSE(j[1].contains("lifespan"));
}

TEST_F(HwNic, StatsText) {
  CliRun r = run_on(host_, {"stats", "mlx5_1"});
  ASSERT_EQ(r.status, EXIT_SUCCESS) << r.err;
  EXPECT_EQ(r.out, "dev mlx5_1 kind other port 1 port_rcv_data 2000 port_rcv_errors 0 "
                   "port_xmit_data 1000 np_cnp_sent 7 out_of_sequence 1 rp_cnp_handled 3 \n");
}

TEST_F(HwNic, StatsOfADeviceWithoutCounters) {
  virtual_roce("siw0", "vethB");
  nlohmann::json j = json({"-j", "stats", "siw0"});
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["dev"], "siw0");
  EXPECT_EQ(j[0]["port"], 1);
  EXPECT_EQ(j[0].size(), 3u); // dev, kind, port
}

TEST_F(HwNic, DcqcnShowReadsEcnKnobs) {
  nlohmann::json j = json({"-j", "dcqcn", "show"});
  ASSERT_EQ(j.size(), 4u); // srnic0 np, rp; mlx5_1 np, rp
  EXPECT_EQ(j[2]["dev"], "mlx5_1");
  EXPECT_EQ(j[2]["kind"], "other");
  EXPECT_EQ(j[2]["side"], "np");
  EXPECT_EQ(j[2]["cnp_dscp"], 48);
  EXPECT_EQ(j[2]["min_time_between_cnps"], 4);
  EXPECT_EQ(j[2]["enable/3"], 1);
  EXPECT_EQ(j[2]["enable/0"], 0);
  EXPECT_EQ(j[3]["side"], "rp");
  EXPECT_EQ(j[3]["rpg_ai_rate"], 5);
}

TEST_F(HwNic, DcqcnShowAllSkipsDevicesWithoutKnobsButNamedOneFails) {
  virtual_roce("siw0", "vethB");
  nlohmann::json j = json({"-j", "dcqcn", "show"});
  ASSERT_EQ(j.size(), 4u);
  for (const auto &r : j)
    EXPECT_NE(r["dev"], "siw0");
  CliRun r = run_on(host_, {"dcqcn", "show", "siw0"});
  EXPECT_EQ(r.status, EXIT_FAILURE);
  EXPECT_THAT(r.err, HasSubstr("siw0 has no DCQCN knobs"));
  EXPECT_THAT(r.err, HasSubstr("class/net/vethB/ecn/roce_np is absent"));
}

TEST_F(HwNic, DcqcnSetIsForSrnicOnly) {
  CliRun r = run_on(host_, {"dcqcn", "set", "mlx5_1", "np", "cnp_dscp", "26"});
  EXPECT_EQ(r.status, EXIT_FAILURE);
  EXPECT_THAT(r.err, HasSubstr("mlx5_1 is not an srnic device"));
}

class HwNicDoctor : public testing::Test {
protected:
  HwNicDoctor() {
    opts_.selftest = false;
  }
  std::vector<DoctorCheck> run() { return run_doctor(host_.sysfs(), host_.root(), opts_); }
  // The host-wide other_rdma check, or the first one about a device.
  static DoctorCheck other_rdma(const std::vector<DoctorCheck> &checks) {
    auto it = std::find_if(checks.begin(), checks.end(),
                           [](const DoctorCheck &c) { return c.check == "other_rdma"; });
    if (it == checks.end())
      throw std::runtime_error("no other_rdma check");
    return *it;
  }
  test::FakeHost host_;
  DoctorOptions opts_;
};

TEST_F(HwNicDoctor, NoOtherDevice) {
  std::vector<DoctorCheck> checks = run();
  DoctorCheck c = other_rdma(checks);
  EXPECT_EQ(c.status, CheckStatus::ok);
  EXPECT_EQ(c.detail, "no RDMA device of another driver on Ethernet");
}

TEST_F(HwNicDoctor, ConnectXOnItsOwnNetdevIsReported) {
  host_.mlx5_roce("mlx5_1", "eth0");
  std::vector<DoctorCheck> checks = run();
  EXPECT_EQ(count_problems(checks), 0u);
  DoctorCheck c = other_rdma(checks);
  EXPECT_EQ(c.status, CheckStatus::ok);
  EXPECT_EQ(c.detail, "RDMA devices of other drivers: mlx5_1 (mlx5_core) on eth0 (srnic "
                        "refuses their netdevs)");
}

TEST_F(HwNicDoctor, ConnectXSharingSrnicsNetdevFails) {
  host_.mlx5_roce("mlx5_1", "vethA");
  std::vector<DoctorCheck> checks = run();
  EXPECT_EQ(count_problems(checks), 1u);
  DoctorCheck c = other_rdma(checks);
  EXPECT_EQ(c.status, CheckStatus::fail);
  EXPECT_EQ(c.dev, "srnic0");
  EXPECT_THAT(c.detail,
              HasSubstr("srnic0 shares netdev vethA with RDMA device mlx5_1 (driver mlx5_core)"));
  EXPECT_THAT(c.fix, HasSubstr("srnicctl dev del srnic0"));

  CliRun r = run_on(host_, {"doctor", "--no-selftest"});
  EXPECT_EQ(r.status, EXIT_FAILURE);
  EXPECT_THAT(r.out, HasSubstr("FAIL  other_rdma    srnic0: srnic0 shares netdev vethA"));
}

// srnic0's netdev vethA is in another namespace: the ConnectX's vethA here is another one.
TEST_F(HwNicDoctor, SameNameInAnotherNamespaceIsNotShared) {
  std::optional<std::uint64_t> here = own_netns();
  ASSERT_TRUE(here);
  host_.mlx5_roce("mlx5_1", "vethA");
  host_.dir().write("sys/class/infiniband/srnic0/srnic/netns", fmt::format("{}\n", *here + 1));
  std::vector<DoctorCheck> checks = run();
  EXPECT_EQ(count_problems(checks), 0u);
  DoctorCheck c = other_rdma(checks);
  EXPECT_EQ(c.status, CheckStatus::ok);
}

} // namespace
} // namespace srnic::ctl

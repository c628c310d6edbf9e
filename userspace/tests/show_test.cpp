// SPDX-License-Identifier: GPL-2.0
#include "ctl/dev_netlink.h"
#include "ctl/sysfs_view.h"
#include "fake_host.h"
#include "lib/nldev.h"
#include "nl_msg.h"

#include <libmnl/libmnl.h>
#include <rdma/rdma_netlink.h>

#include <cstdlib>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace srnic::ctl {
namespace {

using testing::HasSubstr;

using test::CliRun;
using test::run_on;

TEST(ParseU64, DecimalOnly) {
  EXPECT_EQ(parse_u64("0"), 0u);
  EXPECT_EQ(parse_u64("18446744073709551615"), 18446744073709551615u);
  EXPECT_FALSE(parse_u64(""));
  EXPECT_FALSE(parse_u64("12 "));
  EXPECT_FALSE(parse_u64("-1"));
  EXPECT_FALSE(parse_u64("0x10"));
  EXPECT_FALSE(parse_u64("18446744073709551616"));
}

TEST(PortStateName, DropsTheNumber) {
  EXPECT_EQ(port_state_name("4: ACTIVE"), "ACTIVE");
  EXPECT_EQ(port_state_name("5: LinkUp"), "LinkUp");
  EXPECT_EQ(port_state_name("DOWN"), "DOWN");
}

TEST(FormatGid, ShortIpv6Form) {
  EXPECT_EQ(format_gid("fe80:0000:0000:0000:5054:00ff:fe12:3456"), "fe80::5054:ff:fe12:3456");
  EXPECT_EQ(format_gid("0000:0000:0000:0000:0000:ffff:0a63:0001"), "::ffff:10.99.0.1");
  EXPECT_EQ(format_gid("0000:0000:0000:0000:0000:0000:0000:0000"), "::");
  EXPECT_FALSE(format_gid("not a gid"));
}

TEST(IbMtuFor, FollowsTheKernel) {
  EXPECT_EQ(ib_mtu_for(1500), 1024u);
  EXPECT_EQ(ib_mtu_for(9000), 4096u);
  EXPECT_EQ(ib_mtu_for(4096 + 84), 4096u);
  EXPECT_EQ(ib_mtu_for(4096 + 83), 2048u);
  EXPECT_EQ(ib_mtu_for(1280), 1024u);
  EXPECT_EQ(ib_mtu_for(576), 256u);
  EXPECT_EQ(ib_mtu_for(84 + 256), 256u);
  EXPECT_EQ(ib_mtu_for(84 + 255), 0u);
  EXPECT_EQ(ib_mtu_for(68), 0u);
}

TEST(DeviceView, ReadsEverything) {
  test::FakeHost host;
  Result<DeviceView> v = read_device_view(host.sysfs(), "srnic0");
  ASSERT_TRUE(v) << to_string(v.error());
  EXPECT_EQ(v->netdev, "vethA");
  EXPECT_TRUE(v->netdev_exists);
  EXPECT_EQ(v->operstate, "up");
  EXPECT_EQ(v->admin_up, true);
  EXPECT_EQ(v->mtu, 1500u);
  ASSERT_EQ(v->ports.size(), 1u);
  EXPECT_EQ(v->ports[0].state, "ACTIVE");
  EXPECT_EQ(v->ports[0].phys_state, "LinkUp");
  ASSERT_EQ(v->ports[0].gids.size(), 3u); // the zero GID is left out
  EXPECT_EQ(v->ports[0].gids[2].gid, "::ffff:10.99.0.1");
  EXPECT_EQ(v->ports[0].gids[2].type, "RoCE v2");
  EXPECT_EQ(v->dcqcn_np, true);
  EXPECT_EQ(v->dcqcn_rp, true);
  EXPECT_EQ(v->repath_timeouts, 0u);
  EXPECT_EQ(v->rx_steer, false);
  EXPECT_EQ(v->tx_batch, false);
  EXPECT_EQ(v->provider, "rxe");
}

// srnic/netns names the netdev's namespace: this one's reads the netdev; another's leaves
// it unread (a same-named netdev here is another one), and show says other_netns.
TEST(DeviceView, NetdevInAnotherNamespace) {
  test::FakeHost host;
  std::optional<std::uint64_t> here = own_netns();
  ASSERT_TRUE(here);
  host.dir().write("sys/class/infiniband/srnic0/srnic/netns", std::to_string(*here) + "\n");
  Result<DeviceView> v = read_device_view(host.sysfs(), "srnic0");
  ASSERT_TRUE(v) << to_string(v.error());
  EXPECT_EQ(v->netdev_netns, *here);
  EXPECT_FALSE(v->netdev_elsewhere);
  EXPECT_EQ(v->mtu, 1500u);

  host.dir().write("sys/class/infiniband/srnic0/srnic/netns", std::to_string(*here + 1) + "\n");
  v = read_device_view(host.sysfs(), "srnic0");
  ASSERT_TRUE(v) << to_string(v.error());
  EXPECT_TRUE(v->netdev_elsewhere);
  EXPECT_FALSE(v->netdev_exists);
  EXPECT_FALSE(v->mtu);
  CliRun r = run_on(host, {"show"});
  ASSERT_EQ(r.status, EXIT_SUCCESS) << r.err;
  EXPECT_THAT(r.out, testing::HasSubstr("netdev vethA netdev_state other_netns "));
}

TEST(DeviceView, NotSrnic) {
  test::FakeHost host;
  Result<DeviceView> v = read_device_view(host.sysfs(), "mlx5_0");
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error().msg, "mlx5_0 is not an srnic device");
}

TEST(SelectDevices, ExplainsWhatIsWrongWithTheName) {
  test::FakeHost host;
  EXPECT_EQ(*select_devices(host.sysfs(), std::nullopt), std::vector<std::string>{"srnic0"});
  EXPECT_EQ(select_devices(host.sysfs(), "mlx5_0").error().msg, "mlx5_0 is not an srnic device");
  EXPECT_EQ(select_devices(host.sysfs(), "nope").error().msg, "no RDMA device nope");
  EXPECT_EQ(select_devices(host.sysfs(), "../x").error().msg, "no RDMA device ../x");
}

TEST(HwCounters, NumericFilesButLifespan) {
  test::FakeHost host;
  auto c = read_hw_counters(host.sysfs(), "srnic0", 1);
  ASSERT_TRUE(c);
  std::vector<std::pair<std::string, std::uint64_t>> want = {
      {"rcvd_pkts", 12}, {"retransmits", 0}, {"sent_pkts", 10}};
  EXPECT_EQ(*c, want);
}

TEST(ShowCli, Text) {
  test::FakeHost host;
  CliRun r = run_on(host, {"show"});
  ASSERT_EQ(r.status, EXIT_SUCCESS) << r.err;
  EXPECT_EQ(r.out, "dev srnic0 kind srnic port 1 state ACTIVE phys_state LinkUp node_guid 5054:00ff:fe12:3456 "
                   "netdev vethA netdev_state up mtu 1500 active_mtu 1024 gids "
                   "0:fe80::5054:ff:fe12:3456/v1,1:fe80::5054:ff:fe12:3456/v2,"
                   "2:::ffff:10.99.0.1/v2 dcqcn np:on,rp:on "
                   "modes provider:rxe,repath_timeouts:0,rx_steer:off,rx_spread:on,tx_batch:off \n");
}

TEST(ShowCli, Json) {
  test::FakeHost host;
  host.dir().write("sys/class/infiniband/srnic0/roce_rp/enable", "0\n");
  host.dir().write("sys/class/infiniband/srnic0/srnic/tx_batch", "1\n");
  host.dir().write("sys/class/infiniband/srnic0/srnic/rx_spread", "0\n");
  CliRun r = run_on(host, {"-j", "show", "srnic0"});
  ASSERT_EQ(r.status, EXIT_SUCCESS) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["dev"], "srnic0");
  EXPECT_EQ(j[0]["port"], 1);
  EXPECT_EQ(j[0]["state"], "ACTIVE");
  EXPECT_EQ(j[0]["active_mtu"], 1024);
  EXPECT_EQ(j[0]["gids"][2]["gid"], "::ffff:10.99.0.1");
  EXPECT_EQ(j[0]["gids"][2]["type"], "RoCE v2");
  EXPECT_EQ(j[0]["gids"][2]["index"], 2);
  EXPECT_EQ(j[0]["dcqcn"]["np"], true);
  EXPECT_EQ(j[0]["dcqcn"]["rp"], false);
  EXPECT_EQ(j[0]["modes"]["repath_timeouts"], 0);
  EXPECT_EQ(j[0]["modes"]["rx_steer"], false);
  EXPECT_EQ(j[0]["modes"]["rx_spread"], false);
  EXPECT_EQ(j[0]["modes"]["tx_batch"], true);
  EXPECT_EQ(j[0]["modes"]["provider"], "rxe");
}

TEST(ShowCli, NoDcqcnIsNull) {
  test::FakeHost host;
  std::filesystem::remove_all(host.root() / "sys/class/infiniband/srnic0/roce_np");
  std::filesystem::remove_all(host.root() / "sys/class/infiniband/srnic0/roce_rp");
  CliRun r = run_on(host, {"-j", "show"});
  ASSERT_EQ(r.status, EXIT_SUCCESS) << r.err;
  EXPECT_TRUE(nlohmann::json::parse(r.out)[0]["dcqcn"].is_null());
}

TEST(ShowCli, NonSrnicDeviceFails) {
  test::FakeHost host;
  CliRun r = run_on(host, {"show", "mlx5_0"});
  EXPECT_EQ(r.status, EXIT_FAILURE);
  EXPECT_EQ(r.err, "srnicctl: mlx5_0 is neither an srnic device nor an RDMA device on Ethernet: "
                   "No such device\n");
}

TEST(StatsCli, Json) {
  test::FakeHost host;
  CliRun r = run_on(host, {"-j", "stats"});
  ASSERT_EQ(r.status, EXIT_SUCCESS) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["dev"], "srnic0");
  EXPECT_EQ(j[0]["port"], 1);
  EXPECT_EQ(j[0]["sent_pkts"], 10);
  EXPECT_EQ(j[0]["rcvd_pkts"], 12);
  EXPECT_FALSE(j[0].contains("lifespan"));
}

TEST(StatsCli, Text) {
  test::FakeHost host;
  CliRun r = run_on(host, {"stats", "srnic0"});
  ASSERT_EQ(r.status, EXIT_SUCCESS) << r.err;
  EXPECT_EQ(r.out, "dev srnic0 kind srnic port 1 rcvd_pkts 12 retransmits 0 sent_pkts 10 \n");
}

TEST(StatsCli, MissingCountersFail) {
  test::FakeHost host;
  std::filesystem::remove_all(host.root() / "sys/class/infiniband/srnic0/ports/1/hw_counters");
  CliRun r = run_on(host, {"stats"});
  EXPECT_EQ(r.status, EXIT_FAILURE);
  EXPECT_THAT(r.err, HasSubstr("srnic0 port 1: no counters"));
}

// dev add / del: the requests, parsed back as the kernel's nldev_newlink() does.
TEST(DevLink, NewlinkRequest) {
  test::MsgBuf buf;
  nlmsghdr *nlh = buf.put(nl::nldev_type(RDMA_NLDEV_CMD_NEWLINK), NLM_F_REQUEST | NLM_F_ACK);
  put_newlink(*nlh, "srnic0", "vethA");
  Result<nl::NldevAttrs> tb = nl::parse_nldev(*nlh);
  ASSERT_TRUE(tb);
  ASSERT_NE((*tb)[RDMA_NLDEV_ATTR_DEV_NAME], nullptr);
  ASSERT_NE((*tb)[RDMA_NLDEV_ATTR_LINK_TYPE], nullptr);
  ASSERT_NE((*tb)[RDMA_NLDEV_ATTR_NDEV_NAME], nullptr);
  EXPECT_STREQ(mnl_attr_get_str((*tb)[RDMA_NLDEV_ATTR_DEV_NAME]), "srnic0");
  EXPECT_STREQ(mnl_attr_get_str((*tb)[RDMA_NLDEV_ATTR_LINK_TYPE]), "srnic");
  EXPECT_STREQ(mnl_attr_get_str((*tb)[RDMA_NLDEV_ATTR_NDEV_NAME]), "vethA");
}

TEST(DevLink, DellinkRequest) {
  test::MsgBuf buf;
  nlmsghdr *nlh = buf.put(nl::nldev_type(RDMA_NLDEV_CMD_DELLINK), NLM_F_REQUEST | NLM_F_ACK);
  put_dellink(*nlh, 7);
  Result<nl::NldevAttrs> tb = nl::parse_nldev(*nlh);
  ASSERT_TRUE(tb);
  ASSERT_NE((*tb)[RDMA_NLDEV_ATTR_DEV_INDEX], nullptr);
  EXPECT_EQ(mnl_attr_get_u32((*tb)[RDMA_NLDEV_ATTR_DEV_INDEX]), 7u);
}

TEST(DevLink, AddErrorsSayWhatIsWrong) {
  EXPECT_THAT(explain_add_error(EPERM, "s0", "eth0"), HasSubstr("run as root"));
  EXPECT_THAT(explain_add_error(EEXIST, "s0", "eth0"), HasSubstr("named s0 already exists"));
  EXPECT_THAT(explain_add_error(ENODEV, "s0", "eth0"), HasSubstr("no netdev eth0"));
  EXPECT_THAT(explain_add_error(EINVAL, "s0", "eth0"), HasSubstr("is srnic loaded?"));
}

TEST(DevLink, AddGrammar) {
  test::FakeHost host;
  CliRun r = run_on(host, {"dev", "add", "srnic9", "dev", "vethA"});
  EXPECT_EQ(r.status, EXIT_FAILURE);
  EXPECT_THAT(r.err, HasSubstr("expected \"netdev\" after the device name, got \"dev\""));
  r = run_on(host, {"dev", "add", "srnic9"});
  EXPECT_EQ(r.status, EXIT_FAILURE);
  EXPECT_EQ(r.out, "");
  r = run_on(host, {"dev", "del"});
  EXPECT_EQ(r.status, EXIT_FAILURE);
}

TEST(DevLink, DelUnknownDevice) {
  test::FakeHost host;
  CliRun r = run_on(host, {"dev", "del", "no_such_rdma_dev"});
  EXPECT_EQ(r.status, EXIT_FAILURE);
  EXPECT_EQ(r.err, "srnicctl: device no_such_rdma_dev: No such device\n");
}

} // namespace
} // namespace srnic::ctl

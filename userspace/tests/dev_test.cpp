// SPDX-License-Identifier: GPL-2.0
#include "ctl/dev_netlink.h"
#include "ctl/sysfs_view.h"
#include "lib/guid.h"
#include "lib/nldev.h"
#include "nl_msg.h"
#include "temp_dir.h"

#include <libmnl/libmnl.h>
#include <rdma/rdma_netlink.h>

#include <cerrno>
#include <sstream>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace srnic::ctl {
namespace {

constexpr std::uint16_t dev_get = nl::nldev_type(RDMA_NLDEV_CMD_GET);

TEST(FormatGuid, FourGroupsOfSixteenBits) {
  EXPECT_EQ(format_guid(0x0002c90300317c60), "0002:c903:0031:7c60");
  EXPECT_EQ(format_guid(0), "0000:0000:0000:0000");
  EXPECT_EQ(format_guid(0xffffffffffffffff), "ffff:ffff:ffff:ffff");
  EXPECT_EQ(format_guid(0x0123456789abcdef), "0123:4567:89ab:cdef");
}

// An RDMA_NLDEV_CMD_GET reply as the kernel's fill_dev_info() builds it.
nlmsghdr *put_dev_record(test::MsgBuf &buf, std::uint32_t index, const char *name) {
  nlmsghdr *nlh = buf.put(dev_get);
  mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, index);
  mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, name);
  return nlh;
}

TEST(ParseDev, ReadsAllFields) {
  test::MsgBuf buf;
  nlmsghdr *nlh = put_dev_record(buf, 3, "srnic0");
  mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
  mnl_attr_put_u64(nlh, RDMA_NLDEV_ATTR_CAP_FLAGS, 0x1234);
  mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_FW_VERSION, "0.1.0");
  mnl_attr_put_u64(nlh, RDMA_NLDEV_ATTR_NODE_GUID, 0x5054'00ff'fe12'3456);
  mnl_attr_put_u64(nlh, RDMA_NLDEV_ATTR_SYS_IMAGE_GUID, 0x5054'00ff'fe12'3456);
  mnl_attr_put_u8(nlh, RDMA_NLDEV_ATTR_DEV_NODE_TYPE, 1);

  Result<DevInfo> dev = parse_dev(*nlh);
  ASSERT_TRUE(dev) << to_string(dev.error());
  EXPECT_EQ(dev->index, 3u);
  EXPECT_EQ(dev->name, "srnic0");
  EXPECT_EQ(dev->ports, 1u);
  EXPECT_EQ(dev->fw, "0.1.0");
  EXPECT_EQ(dev->node_guid, 0x5054'00ff'fe12'3456u);
}

TEST(ParseDev, OptionalFieldsMayBeAbsent) {
  test::MsgBuf buf;
  nlmsghdr *nlh = put_dev_record(buf, 0, "rxe0");
  Result<DevInfo> dev = parse_dev(*nlh);
  ASSERT_TRUE(dev) << to_string(dev.error());
  EXPECT_EQ(dev->name, "rxe0");
  EXPECT_FALSE(dev->fw);
  EXPECT_FALSE(dev->node_guid);
  EXPECT_FALSE(dev->ports);
}

TEST(ParseDev, RequiresName) {
  test::MsgBuf buf;
  nlmsghdr *nlh = buf.put(dev_get);
  mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 1);
  Result<DevInfo> dev = parse_dev(*nlh);
  ASSERT_FALSE(dev);
  EXPECT_EQ(dev.error().errnum, EPROTO);
}

TEST(ParseDev, RequiresIndex) {
  test::MsgBuf buf;
  nlmsghdr *nlh = buf.put(dev_get);
  mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, "rxe0");
  EXPECT_FALSE(parse_dev(*nlh));
}

TEST(ParseDev, RejectsOtherMessageTypes) {
  test::MsgBuf buf;
  nlmsghdr *nlh = buf.put(nl::nldev_type(RDMA_NLDEV_CMD_PORT_GET));
  mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 1);
  mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, "rxe0");
  Result<DevInfo> dev = parse_dev(*nlh);
  ASSERT_FALSE(dev);
  EXPECT_EQ(dev.error().errnum, EPROTO);
}

TEST(ParseDev, RejectsShortGuid) {
  test::MsgBuf buf;
  nlmsghdr *nlh = put_dev_record(buf, 1, "rxe0");
  mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_NODE_GUID, 1);
  EXPECT_FALSE(parse_dev(*nlh));
}

// A fake sysfs with one srnic device (srnic0, bound to veth0), one bare srnic directory
// (srnic1) and one non-srnic device (rxe0).
class SrnicSysfs : public testing::Test {
protected:
  SrnicSysfs() {
    dir_.write("class/infiniband/srnic0/srnic/version", "0.1.0\n");
    dir_.write("class/infiniband/srnic0/srnic/netdev", "veth0\n");
    dir_.mkdir("class/infiniband/srnic1/srnic");
    dir_.mkdir("class/infiniband/rxe0/ports/1");
  }

  test::TempDir dir_;
  Sysfs sysfs_{dir_.path()};
};

TEST_F(SrnicSysfs, SrnicDeviceHasAttributes) {
  std::optional<SrnicAttrs> attrs = srnic_attrs(sysfs_, "srnic0");
  ASSERT_TRUE(attrs);
  EXPECT_EQ(attrs->version, "0.1.0");
  EXPECT_EQ(attrs->netdev, "veth0");
}

TEST_F(SrnicSysfs, SrnicDirectoryAloneMakesAnSrnicDevice) {
  std::optional<SrnicAttrs> attrs = srnic_attrs(sysfs_, "srnic1");
  ASSERT_TRUE(attrs);
  EXPECT_FALSE(attrs->version);
  EXPECT_FALSE(attrs->netdev);
}

TEST_F(SrnicSysfs, OtherDevicesAreNotSrnic) {
  EXPECT_FALSE(srnic_attrs(sysfs_, "rxe0"));
  EXPECT_FALSE(srnic_attrs(sysfs_, "mlx5_0"));
}

TEST_F(SrnicSysfs, SrnicFileIsNotAnSrnicDirectory) {
  dir_.write("class/infiniband/odd0/srnic", "");
  EXPECT_FALSE(srnic_attrs(sysfs_, "odd0"));
}

TEST_F(SrnicSysfs, NamesCannotEscapeTheClassDirectory) {
  dir_.mkdir("class/srnic");
  EXPECT_FALSE(srnic_attrs(sysfs_, ".."));
  EXPECT_FALSE(srnic_attrs(sysfs_, "../infiniband/srnic0"));
  EXPECT_FALSE(srnic_attrs(sysfs_, ""));
}

TEST_F(SrnicSysfs, ListsOnlySrnicDevices) {
  Result<std::vector<std::string>> devs = srnic_devices(sysfs_);
  ASSERT_TRUE(devs) << to_string(devs.error());
  EXPECT_THAT(*devs, testing::ElementsAre("srnic0", "srnic1"));
}

TEST(SrnicDevices, NoneWithoutInfinibandClass) {
  test::TempDir dir;
  Result<std::vector<std::string>> devs = srnic_devices(Sysfs(dir.path()));
  ASSERT_TRUE(devs) << to_string(devs.error());
  EXPECT_TRUE(devs->empty());
}

std::vector<DevInfo> sample_devs() {
  return {
      DevInfo{0, "rxe0", 0x5054'00ff'fe12'3456, std::nullopt, 1},
      DevInfo{1, "srnic0", 0x0002'c903'0031'7c60, "0.1.0", 1},
  };
}

TEST_F(SrnicSysfs, ShowPrintsTextRecords) {
  std::ostringstream os;
  Output out(os, OutputFormat::text);
  std::vector<DevInfo> devs = sample_devs();
  ASSERT_TRUE(show_devs(out, sysfs_, devs, std::nullopt));
  out.finish();
  EXPECT_EQ(os.str(), "index 0 name rxe0 node_guid 5054:00ff:fe12:3456 ports 1 kind other \n"
                      "index 1 name srnic0 node_guid 0002:c903:0031:7c60 fw 0.1.0 ports 1 "
                      "kind srnic version 0.1.0 netdev veth0 \n");
}

TEST_F(SrnicSysfs, ShowPrintsJsonArray) {
  std::ostringstream os;
  Output out(os, OutputFormat::json);
  std::vector<DevInfo> devs = sample_devs();
  ASSERT_TRUE(show_devs(out, sysfs_, devs, std::nullopt));
  out.finish();
  nlohmann::json j = nlohmann::json::parse(os.str());
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0], nlohmann::json::parse(R"({"index":0,"name":"rxe0",
      "node_guid":"5054:00ff:fe12:3456","ports":1,"kind":"other"})"));
  EXPECT_EQ(j[1], nlohmann::json::parse(R"({"index":1,"name":"srnic0",
      "node_guid":"0002:c903:0031:7c60","fw":"0.1.0","ports":1,"kind":"srnic",
      "version":"0.1.0","netdev":"veth0"})"));
}

TEST_F(SrnicSysfs, ShowFiltersByName) {
  std::ostringstream os;
  Output out(os, OutputFormat::json);
  std::vector<DevInfo> devs = sample_devs();
  ASSERT_TRUE(show_devs(out, sysfs_, devs, "srnic0"));
  out.finish();
  nlohmann::json j = nlohmann::json::parse(os.str());
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["name"], "srnic0");
}

TEST_F(SrnicSysfs, ShowUnknownNameIsEnodev) {
  std::ostringstream os;
  Output out(os, OutputFormat::text);
  std::vector<DevInfo> devs = sample_devs();
  Result<void> res = show_devs(out, sysfs_, devs, "mlx5_0");
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().errnum, ENODEV);
  EXPECT_EQ(to_string(res.error()), "device mlx5_0: No such device");
  EXPECT_EQ(os.str(), "");
}

TEST_F(SrnicSysfs, ShowWithoutDevicesPrintsEmptyArray) {
  std::ostringstream os;
  Output out(os, OutputFormat::json);
  ASSERT_TRUE(show_devs(out, sysfs_, {}, std::nullopt));
  out.finish();
  EXPECT_EQ(os.str(), "[]\n");
}

} // namespace
} // namespace srnic::ctl

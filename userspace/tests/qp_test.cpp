// SPDX-License-Identifier: GPL-2.0
#include "ctl/qp.h"
#include "lib/nldev.h"
#include "nl_msg.h"

#include <libmnl/libmnl.h>
#include <rdma/rdma_netlink.h>

#include <cerrno>
#include <functional>

#include <gtest/gtest.h>

namespace srnic::ctl {
namespace {

constexpr std::uint16_t qp_get = nl::nldev_type(RDMA_NLDEV_CMD_RES_QP_GET);

// A RES_QP_GET reply for device srnic1 (index 4), with no QP table yet.
nlmsghdr *put_dev_reply(test::MsgBuf &buf) {
  nlmsghdr *nlh = buf.put(qp_get);
  mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 4);
  mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, "srnic1");
  return nlh;
}

// put_dev_reply() plus a QP table of one entry, whose attributes fill_entry puts.
nlmsghdr *put_one_qp_reply(test::MsgBuf &buf, const std::function<void(nlmsghdr *)> &fill_entry) {
  nlmsghdr *nlh = put_dev_reply(buf);
  nlattr *table = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_RES_QP);
  nlattr *entry = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_RES_QP_ENTRY);
  fill_entry(nlh);
  mnl_attr_nest_end(nlh, entry);
  mnl_attr_nest_end(nlh, table);
  return nlh;
}

// A RES_QP_GET reply as 6.1's res_get_common_dumpit() and a driver's fill_res_qp_entry()
// build it: device handle, then a QP table of entries, each with a driver table.
nlmsghdr *put_qp_reply(test::MsgBuf &buf, bool with_driver) {
  return put_one_qp_reply(buf, [with_driver](nlmsghdr *nlh) {
    mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
    mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_LQPN, 17);
    mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_RQPN, 18);
    mnl_attr_put_u8(nlh, RDMA_NLDEV_ATTR_RES_TYPE, 2);
    mnl_attr_put_u8(nlh, RDMA_NLDEV_ATTR_RES_STATE, 3);
    if (with_driver) {
      nlattr *drv = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_DRIVER);
      mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DRIVER_STRING, "sq_psn");
      mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DRIVER_U32, 1234);
      mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DRIVER_STRING, "flags");
      mnl_attr_put_u8(nlh, RDMA_NLDEV_ATTR_DRIVER_PRINT_TYPE, RDMA_NLDEV_PRINT_TYPE_HEX);
      mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DRIVER_U32, 0x40);
      mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DRIVER_STRING, "rate_bytes_per_sec");
      mnl_attr_put_u64(nlh, RDMA_NLDEV_ATTR_DRIVER_U64, 12'500'000'000ull);
      mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DRIVER_STRING, "delta");
      mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DRIVER_S32, static_cast<std::uint32_t>(-5));
      mnl_attr_nest_end(nlh, drv);
    }
  });
}

TEST(ParseQp, EntryWithDriverAttributes) {
  test::MsgBuf buf;
  nlmsghdr *nlh = put_qp_reply(buf, true);
  Result<std::vector<QpRes>> qps = parse_qp_res(*nlh);
  ASSERT_TRUE(qps) << to_string(qps.error());
  ASSERT_EQ(qps->size(), 1u);
  const QpRes &qp = (*qps)[0];
  EXPECT_EQ(qp.dev_index, 4u);
  EXPECT_EQ(qp.dev_name, "srnic1");
  EXPECT_EQ(qp.lqpn, 17u);
  EXPECT_EQ(qp.rqpn, 18u);
  EXPECT_EQ(qp.port, 1u);
  EXPECT_EQ(qp_type_name(*qp.type), "RC");
  EXPECT_EQ(qp_state_name(*qp.state), "RTS");
  ASSERT_EQ(qp.driver.size(), 4u);
  EXPECT_EQ(qp.driver[0].name, "sq_psn");
  EXPECT_EQ(qp.driver[0].value, 1234);
  EXPECT_FALSE(qp.driver[0].hex);
  EXPECT_TRUE(qp.driver[1].hex);
  EXPECT_EQ(qp.driver[1].value, 0x40);
  const DriverAttr *rate = find_driver_attr(qp, "rate_bytes_per_sec");
  ASSERT_NE(rate, nullptr);
  EXPECT_EQ(rate->value, 12'500'000'000);
  EXPECT_EQ(qp.driver[3].value, -5);
  EXPECT_TRUE(qp.driver[3].is_signed);
  EXPECT_EQ(find_driver_attr(qp, "nope"), nullptr);
}

TEST(ParseQp, NoDriverTable) {
  test::MsgBuf buf;
  nlmsghdr *nlh = put_qp_reply(buf, false);
  Result<std::vector<QpRes>> qps = parse_qp_res(*nlh);
  ASSERT_TRUE(qps);
  ASSERT_EQ(qps->size(), 1u);
  EXPECT_TRUE((*qps)[0].driver.empty());
}

TEST(ParseQp, NoQpTableIsNoQps) {
  test::MsgBuf buf;
  nlmsghdr *nlh = put_dev_reply(buf);
  Result<std::vector<QpRes>> qps = parse_qp_res(*nlh);
  ASSERT_TRUE(qps);
  EXPECT_TRUE(qps->empty());
}

TEST(ParseQp, EntryNeedsQpNumber) {
  test::MsgBuf buf;
  nlmsghdr *nlh =
      put_one_qp_reply(buf, [](nlmsghdr *n) { mnl_attr_put_u8(n, RDMA_NLDEV_ATTR_RES_STATE, 3); });
  Result<std::vector<QpRes>> qps = parse_qp_res(*nlh);
  ASSERT_FALSE(qps);
  EXPECT_EQ(qps.error().errnum, EPROTO);
}

TEST(ParseQp, ValueWithoutNameIsMalformed) {
  test::MsgBuf buf;
  nlmsghdr *nlh = put_one_qp_reply(buf, [](nlmsghdr *n) {
    mnl_attr_put_u32(n, RDMA_NLDEV_ATTR_RES_LQPN, 17);
    nlattr *drv = mnl_attr_nest_start(n, RDMA_NLDEV_ATTR_DRIVER);
    mnl_attr_put_u32(n, RDMA_NLDEV_ATTR_DRIVER_U32, 1);
    mnl_attr_nest_end(n, drv);
  });
  EXPECT_FALSE(parse_qp_res(*nlh));
}

// A DC QP: ib_core's type DRIVER, its kind in the string attribute dc_type
// (rdma_nl_put_driver_string(): two strings, name then value).
TEST(ParseQp, DcQpShownByItsDcType) {
  test::MsgBuf buf;
  nlmsghdr *nlh = put_one_qp_reply(buf, [](nlmsghdr *n) {
    mnl_attr_put_u32(n, RDMA_NLDEV_ATTR_RES_LQPN, 21);
    mnl_attr_put_u8(n, RDMA_NLDEV_ATTR_RES_TYPE, 0xff);
    nlattr *drv = mnl_attr_nest_start(n, RDMA_NLDEV_ATTR_DRIVER);
    mnl_attr_put_strz(n, RDMA_NLDEV_ATTR_DRIVER_STRING, "dc_type");
    mnl_attr_put_strz(n, RDMA_NLDEV_ATTR_DRIVER_STRING, "DCT");
    mnl_attr_put_strz(n, RDMA_NLDEV_ATTR_DRIVER_STRING, "dc_attachments");
    mnl_attr_put_u32(n, RDMA_NLDEV_ATTR_DRIVER_U32, 3);
    mnl_attr_nest_end(n, drv);
  });
  Result<std::vector<QpRes>> qps = parse_qp_res(*nlh);
  ASSERT_TRUE(qps) << to_string(qps.error());
  ASSERT_EQ(qps->size(), 1u);
  const QpRes &qp = (*qps)[0];
  ASSERT_EQ(qp.driver.size(), 2u);
  EXPECT_EQ(qp.driver[0].name, "dc_type");
  ASSERT_TRUE(qp.driver[0].text);
  EXPECT_EQ(*qp.driver[0].text, "DCT");
  EXPECT_EQ(qp.driver[1].name, "dc_attachments");
  EXPECT_EQ(qp.driver[1].value, 3);
  EXPECT_FALSE(qp.driver[1].text);
  EXPECT_EQ(qp_type_name(*qp.type), "DRIVER");
  EXPECT_EQ(qp_type_shown(qp), "DCT");
}

TEST(QpNames, StatesAndTypes) {
  EXPECT_EQ(qp_state_name(0), "RESET");
  EXPECT_EQ(qp_state_name(6), "ERR");
  EXPECT_EQ(qp_state_name(99), "UNKNOWN");
  EXPECT_EQ(qp_type_name(4), "UD");
  EXPECT_EQ(qp_type_name(1), "GSI");
}

} // namespace
} // namespace srnic::ctl

// SPDX-License-Identifier: GPL-2.0
#include "lib/nl_socket.h"
#include "lib/nldev.h"
#include "nl_msg.h"

#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <rdma/rdma_netlink.h>
#include <sys/socket.h>

#include <cerrno>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace srnic::nl {
namespace {

using test::MsgBuf;
using test::test_portid;
using test::test_seq;

constexpr std::uint16_t dev_get = nldev_type(RDMA_NLDEV_CMD_GET);

// Records the index of each message a callback saw.
struct Recorder {
  std::vector<std::uint32_t> indexes;
  MsgCallback cb() {
    return [this](const nlmsghdr &nlh) -> Result<void> {
      Result<NldevAttrs> tb = parse_nldev(nlh);
      if (!tb)
        return std::move(tb).error();
      indexes.push_back(mnl_attr_get_u32((*tb)[RDMA_NLDEV_ATTR_DEV_INDEX]));
      return {};
    };
  }
};

void put_dev(MsgBuf &buf, std::uint32_t index) {
  nlmsghdr *nlh = buf.put(dev_get);
  mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, index);
}

TEST(NlDev, MessageTypeIsClientAndCommand) {
  // (RDMA_NL_NLDEV = 5) << 10 | (RDMA_NLDEV_CMD_GET = 1)
  EXPECT_EQ(dev_get, 0x1401);
}

TEST(RunCallbacks, CallsCallbackPerMessageUntilDone) {
  MsgBuf buf;
  put_dev(buf, 7);
  put_dev(buf, 9);
  buf.put_done();
  Recorder rec;
  Result<bool> done = run_callbacks(buf.bytes(), test_seq, test_portid, rec.cb());
  ASSERT_TRUE(done) << to_string(done.error());
  EXPECT_TRUE(*done);
  EXPECT_THAT(rec.indexes, testing::ElementsAre(7, 9));
}

TEST(RunCallbacks, WithoutDoneAsksForMore) {
  MsgBuf buf;
  put_dev(buf, 1);
  Recorder rec;
  Result<bool> done = run_callbacks(buf.bytes(), test_seq, test_portid, rec.cb());
  ASSERT_TRUE(done);
  EXPECT_FALSE(*done);
  EXPECT_EQ(rec.indexes.size(), 1u);
}

TEST(RunCallbacks, NlmsgErrorCarriesKernelErrno) {
  MsgBuf buf;
  buf.put_error(EPERM);
  Recorder rec;
  Result<bool> done = run_callbacks(buf.bytes(), test_seq, test_portid, rec.cb());
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().errnum, EPERM);
  EXPECT_EQ(to_string(done.error()), "netlink request failed: Operation not permitted");
}

TEST(RunCallbacks, KernelErrnoIsNotMistakenForLibmnlErrors) {
  // libmnl uses ESRCH/EPROTO for port id/sequence mismatches; a kernel error with the same
  // value must still read as the kernel's.
  MsgBuf buf;
  buf.put_error(ESRCH);
  Recorder rec;
  Result<bool> done = run_callbacks(buf.bytes(), test_seq, test_portid, rec.cb());
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().errnum, ESRCH);
  EXPECT_EQ(done.error().msg, "netlink request failed");
}

TEST(RunCallbacks, AckEndsTheReply) {
  MsgBuf buf;
  buf.put_error(0);
  Recorder rec;
  Result<bool> done = run_callbacks(buf.bytes(), test_seq, test_portid, rec.cb());
  ASSERT_TRUE(done);
  EXPECT_TRUE(*done);
}

TEST(RunCallbacks, DoneWithNegativeStatusIsAnError) {
  MsgBuf buf;
  put_dev(buf, 1);
  buf.put_done(-EMSGSIZE);
  Recorder rec;
  Result<bool> done = run_callbacks(buf.bytes(), test_seq, test_portid, rec.cb());
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().errnum, EMSGSIZE);
}

TEST(RunCallbacks, DoneWithoutStatusEnds) {
  MsgBuf buf;
  buf.put_done(std::nullopt);
  Recorder rec;
  Result<bool> done = run_callbacks(buf.bytes(), test_seq, test_portid, rec.cb());
  ASSERT_TRUE(done);
  EXPECT_TRUE(*done);
}

TEST(RunCallbacks, CallbackErrorStopsAndIsReturned) {
  MsgBuf buf;
  put_dev(buf, 1);
  put_dev(buf, 2);
  buf.put_done();
  int calls = 0;
  Result<bool> done =
      run_callbacks(buf.bytes(), test_seq, test_portid, [&calls](const nlmsghdr &) -> Result<void> {
        ++calls;
        return Error{EINVAL, "bad record"};
      });
  ASSERT_FALSE(done);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(done.error().errnum, EINVAL);
  EXPECT_EQ(done.error().msg, "bad record");
}

TEST(RunCallbacks, WrongSequenceNumberIsRejected) {
  MsgBuf buf;
  buf.put(dev_get, NLM_F_MULTI, test_seq - 1);
  Recorder rec;
  Result<bool> done = run_callbacks(buf.bytes(), test_seq, test_portid, rec.cb());
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().errnum, EPROTO);
  EXPECT_THAT(done.error().msg, testing::HasSubstr("sequence"));
  EXPECT_TRUE(rec.indexes.empty());
}

TEST(RunCallbacks, WrongPortIdIsRejected) {
  MsgBuf buf;
  buf.put(dev_get, NLM_F_MULTI, test_seq, test_portid + 1);
  Recorder rec;
  Result<bool> done = run_callbacks(buf.bytes(), test_seq, test_portid, rec.cb());
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().errnum, ESRCH);
  EXPECT_THAT(done.error().msg, testing::HasSubstr("port id"));
}

TEST(RunCallbacks, InterruptedDumpIsAnError) {
  MsgBuf buf;
  nlmsghdr *nlh = buf.put(dev_get, NLM_F_MULTI | NLM_F_DUMP_INTR);
  mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 1);
  Recorder rec;
  Result<bool> done = run_callbacks(buf.bytes(), test_seq, test_portid, rec.cb());
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().errnum, EINTR);
}

TEST(ParseNldev, FillsTableByAttributeType) {
  MsgBuf buf;
  nlmsghdr *nlh = buf.put(dev_get);
  mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 3);
  mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, "srnic0");
  Result<NldevAttrs> tb = parse_nldev(*nlh);
  ASSERT_TRUE(tb) << to_string(tb.error());
  ASSERT_NE((*tb)[RDMA_NLDEV_ATTR_DEV_INDEX], nullptr);
  ASSERT_NE((*tb)[RDMA_NLDEV_ATTR_DEV_NAME], nullptr);
  EXPECT_EQ(mnl_attr_get_u32((*tb)[RDMA_NLDEV_ATTR_DEV_INDEX]), 3u);
  EXPECT_STREQ(mnl_attr_get_str((*tb)[RDMA_NLDEV_ATTR_DEV_NAME]), "srnic0");
  EXPECT_EQ((*tb)[RDMA_NLDEV_ATTR_FW_VERSION], nullptr);
}

TEST(ParseNldev, SkipsAttributesNewerThanOurHeader) {
  MsgBuf buf;
  nlmsghdr *nlh = buf.put(dev_get);
  mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_MAX + 5, 1);
  mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 3);
  Result<NldevAttrs> tb = parse_nldev(*nlh);
  ASSERT_TRUE(tb) << to_string(tb.error());
  EXPECT_NE((*tb)[RDMA_NLDEV_ATTR_DEV_INDEX], nullptr);
}

TEST(ParseNldev, RejectsShortInteger) {
  MsgBuf buf;
  nlmsghdr *nlh = buf.put(dev_get);
  mnl_attr_put_u8(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 3);
  Result<NldevAttrs> tb = parse_nldev(*nlh);
  ASSERT_FALSE(tb);
  EXPECT_THAT(tb.error().msg,
              testing::HasSubstr("attribute " + std::to_string(RDMA_NLDEV_ATTR_DEV_INDEX)));
}

TEST(ParseNldev, RejectsUnterminatedString) {
  MsgBuf buf;
  nlmsghdr *nlh = buf.put(dev_get);
  mnl_attr_put(nlh, RDMA_NLDEV_ATTR_DEV_NAME, 4, "abcd");
  Result<NldevAttrs> tb = parse_nldev(*nlh);
  EXPECT_FALSE(tb);
}

// The tests below need a kernel, but not RDMA: they run dump() over route netlink, which
// every Linux network namespace has.
void put_ifinfomsg(nlmsghdr &nlh) {
  auto *ifi = static_cast<ifinfomsg *>(mnl_nlmsg_put_extra_header(&nlh, sizeof(ifinfomsg)));
  ifi->ifi_family = AF_UNSPEC;
}

TEST(NlSocket, DumpRunsToDoneWithFreshSequenceNumbers) {
  Result<NlSocket> sock = NlSocket::open(NETLINK_ROUTE);
  if (!sock)
    GTEST_SKIP() << "no route netlink: " << to_string(sock.error());
  std::vector<std::uint32_t> seqs;
  for (int round = 0; round < 2; ++round) {
    int links = 0;
    std::uint32_t seq = 0;
    Result<void> res = sock->dump(
        RTM_GETLINK,
        [&](const nlmsghdr &nlh) -> Result<void> {
          links += nlh.nlmsg_type == RTM_NEWLINK;
          seq = nlh.nlmsg_seq;
          return {};
        },
        put_ifinfomsg);
    ASSERT_TRUE(res) << to_string(res.error());
    EXPECT_GE(links, 1) << "every namespace has lo";
    seqs.push_back(seq);
  }
  EXPECT_EQ(seqs[1], seqs[0] + 1);
}

TEST(NlSocket, KernelErrorBecomesError) {
  Result<NlSocket> sock = NlSocket::open(NETLINK_ROUTE);
  if (!sock)
    GTEST_SKIP() << "no route netlink: " << to_string(sock.error());
  Result<void> res = sock->dump(RTM_MAX + 1, [](const nlmsghdr &) -> Result<void> { return {}; });
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().errnum, EOPNOTSUPP);
}

TEST(NlSocket, CallbackErrorLeavesSocketUsable) {
  Result<NlSocket> sock = NlSocket::open(NETLINK_ROUTE);
  if (!sock)
    GTEST_SKIP() << "no route netlink: " << to_string(sock.error());
  int calls = 0;
  Result<void> res = sock->dump(
      RTM_GETLINK,
      [&calls](const nlmsghdr &) -> Result<void> {
        ++calls;
        return Error{EBADMSG, "stop"};
      },
      put_ifinfomsg);
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().msg, "stop");
  EXPECT_EQ(calls, 1);
  res = sock->dump(
      RTM_GETLINK, [](const nlmsghdr &) -> Result<void> { return {}; }, put_ifinfomsg);
  EXPECT_TRUE(res) << to_string(res.error());
}

TEST(NlSocket, MoveKeepsTheSocket) {
  Result<NlSocket> sock = NlSocket::open(NETLINK_ROUTE);
  if (!sock)
    GTEST_SKIP() << "no route netlink: " << to_string(sock.error());
  std::uint32_t portid = sock->portid();
  EXPECT_NE(portid, 0u);
  NlSocket moved = std::move(sock).value();
  EXPECT_EQ(moved.portid(), portid);
  Result<void> res = moved.dump(
      RTM_GETLINK, [](const nlmsghdr &) -> Result<void> { return {}; }, put_ifinfomsg);
  EXPECT_TRUE(res) << to_string(res.error());
}

} // namespace
} // namespace srnic::nl

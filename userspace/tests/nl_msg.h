// SPDX-License-Identifier: GPL-2.0
//
// MsgBuf: builds netlink datagrams in memory with libmnl, as the kernel would send them.
#pragma once

#include <libmnl/libmnl.h>
#include <linux/netlink.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace srnic::test {

constexpr std::uint32_t test_seq = 1000;
constexpr std::uint32_t test_portid = 4242;

class MsgBuf {
public:
  // Appends a message header; add attributes to the returned header with mnl_attr_put_*().
  nlmsghdr *put(std::uint16_t type, std::uint16_t flags = NLM_F_MULTI, std::uint32_t seq = test_seq,
                std::uint32_t portid = test_portid) {
    close_last();
    last_ = mnl_nlmsg_put_header(buf_.data() + len_);
    last_->nlmsg_type = type;
    last_->nlmsg_flags = flags;
    last_->nlmsg_seq = seq;
    last_->nlmsg_pid = portid;
    return last_;
  }

  // NLMSG_ERROR carrying -errnum (0 makes it an ACK).
  void put_error(int errnum, std::uint32_t seq = test_seq) {
    nlmsghdr *nlh = put(NLMSG_ERROR, 0, seq);
    auto *err = static_cast<nlmsgerr *>(mnl_nlmsg_put_extra_header(nlh, sizeof(nlmsgerr)));
    err->error = -errnum;
  }

  // NLMSG_DONE, optionally with the int status the kernel appends to it.
  void put_done(std::optional<int> status = 0) {
    nlmsghdr *nlh = put(NLMSG_DONE);
    if (status)
      *static_cast<int *>(mnl_nlmsg_put_extra_header(nlh, sizeof(int))) = *status;
  }

  std::span<const std::byte> bytes() {
    close_last();
    return {buf_.data(), len_};
  }

private:
  void close_last() {
    if (last_ != nullptr)
      len_ += last_->nlmsg_len;
    last_ = nullptr;
  }

  std::vector<std::byte> buf_ = std::vector<std::byte>(32768);
  std::size_t len_ = 0;
  nlmsghdr *last_ = nullptr;
};

} // namespace srnic::test

// SPDX-License-Identifier: GPL-2.0
//
// NlSocket: a move-only owner of a libmnl netlink socket, with the request/dump loop of
// iproute2's rd_prepare_msg()/rd_recv_msg(). Callers parse messages with libmnl.
#pragma once

#include "result.h"

#include <linux/netlink.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>

struct mnl_socket;

namespace srnic::nl {

// Called once per data message of a reply; an Error stops the dump and is returned by dump().
using MsgCallback = std::function<Result<void>(const nlmsghdr &)>;
// Adds an extra header and/or attributes to a request before it is sent.
using RequestWriter = std::function<void(nlmsghdr &)>;

class NlSocket {
public:
  // Opens and binds (auto port id) a socket on netlink bus `bus` (NETLINK_RDMA, ...).
  static Result<NlSocket> open(int bus);
  static Result<NlSocket> open_rdma() { return open(NETLINK_RDMA); }

  NlSocket(NlSocket &&) noexcept = default;
  NlSocket &operator=(NlSocket &&) noexcept = default;
  NlSocket(const NlSocket &) = delete;
  NlSocket &operator=(const NlSocket &) = delete;
  ~NlSocket() = default;

  // Sends a NLM_F_DUMP request of message type `type` with a fresh sequence number, then
  // runs cb on every reply message until NLMSG_DONE. NLMSG_ERROR becomes an Error
  // carrying the kernel's errno. If cb fails, the rest of the reply is read and dropped
  // and cb's Error is returned.
  Result<void> dump(std::uint16_t type, const MsgCallback &cb, const RequestWriter &write = {});

  // Sends a request of type `type` with NLM_F_ACK (plus extra_flags, e.g. NLM_F_CREATE)
  // and waits for the kernel's ACK; NLMSG_ERROR becomes an Error with the kernel's errno.
  // Reply messages before the ACK, if any, go to cb.
  Result<void> request(std::uint16_t type, const RequestWriter &write,
                       std::uint16_t extra_flags = 0, const MsgCallback &cb = {});

  std::uint32_t portid() const noexcept { return portid_; }

private:
  // A deleter type rather than a destructor: the defaulted move operations then leave
  // the moved-from socket null, so it closes nothing.
  struct Closer {
    void operator()(mnl_socket *sock) const noexcept;
  };

  NlSocket(std::unique_ptr<mnl_socket, Closer> sock, std::uint32_t portid, std::uint32_t seq)
      : sock_(std::move(sock)), portid_(portid), seq_(seq) {}

  Result<void> send(const nlmsghdr &nlh);
  // Sends one request of type with flags (write adds its attributes) and runs on_msg on
  // each message of the reply, to its end (NLMSG_DONE or the ACK).
  Result<void> transact(std::uint16_t type, std::uint16_t flags, const RequestWriter &write,
                        const MsgCallback &on_msg);

  std::unique_ptr<mnl_socket, Closer> sock_;
  std::uint32_t portid_;
  std::uint32_t seq_; // last sequence number used
};

// Runs cb on each data message in one received datagram, checking the sequence number and
// port id. Returns true once the reply is complete (NLMSG_DONE, or an ACK), false if more
// datagrams follow. NLMSG_ERROR yields an Error with the kernel's errno; an error from cb
// is returned as is.
Result<bool> run_callbacks(std::span<const std::byte> buf, std::uint32_t seq, std::uint32_t portid,
                           const MsgCallback &cb);

} // namespace srnic::nl

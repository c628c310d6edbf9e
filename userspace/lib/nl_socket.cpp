// SPDX-License-Identifier: GPL-2.0
#include "nl_socket.h"

#include <libmnl/libmnl.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <ctime>
#include <optional>
#include <vector>

#include <fmt/format.h>

namespace srnic::nl {

namespace {

// Requests are small; replies to dumps come in datagrams of up to 32 KiB, and a shorter
// receive buffer truncates them (libmnl's MNL_SOCKET_DUMP_SIZE).
constexpr std::size_t request_buf_size = 8192;
constexpr std::size_t dump_buf_size = 32768;

struct CallbackState {
  const MsgCallback *cb;
  std::optional<Error> err; // from cb, or the kernel's NLMSG_ERROR / NLMSG_DONE status
};

int data_cb(const nlmsghdr *nlh, void *data) {
  auto *state = static_cast<CallbackState *>(data);
  Result<void> res = (*state->cb)(*nlh);
  if (res)
    return MNL_CB_OK;
  state->err = std::move(res).error();
  return MNL_CB_ERROR;
}

// NLMSG_ERROR: an ACK when error is 0, otherwise the kernel's negative errno.
int error_cb(const nlmsghdr *nlh, void *data) {
  auto *state = static_cast<CallbackState *>(data);
  if (mnl_nlmsg_get_payload_len(nlh) < sizeof(nlmsgerr)) {
    state->err = Error{EBADMSG, "truncated netlink error message"};
    return MNL_CB_ERROR;
  }
  const auto *err = static_cast<const nlmsgerr *>(mnl_nlmsg_get_payload(nlh));
  if (err->error == 0)
    return MNL_CB_STOP;
  state->err = Error{-err->error, "netlink request failed"};
  return MNL_CB_ERROR;
}

// NLMSG_DONE: ends a dump. Its optional int payload is the dump's status; libmnl's default
// handler ignores it, iproute2's rtnl_dump_done() does not.
int done_cb(const nlmsghdr *nlh, void *data) {
  auto *state = static_cast<CallbackState *>(data);
  if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(int)) {
    int status = *static_cast<const int *>(mnl_nlmsg_get_payload(nlh));
    if (status < 0) {
      state->err = Error{-status, "netlink dump failed"};
      return MNL_CB_ERROR;
    }
  }
  return MNL_CB_STOP;
}

} // namespace

void NlSocket::Closer::operator()(mnl_socket *sock) const noexcept {
  mnl_socket_close(sock);
}

Result<NlSocket> NlSocket::open(int bus) {
  std::unique_ptr<mnl_socket, Closer> sock(mnl_socket_open2(bus, SOCK_CLOEXEC));
  if (!sock)
    return Error{errno, fmt::format("cannot open netlink socket (bus {})", bus)};
  if (mnl_socket_bind(sock.get(), 0, MNL_SOCKET_AUTOPID) < 0)
    return Error{errno, fmt::format("cannot bind netlink socket (bus {})", bus)};
  std::uint32_t portid = mnl_socket_get_portid(sock.get());
  // Start from the clock, as iproute2 does, so a reply meant for an earlier process that
  // had the same port id cannot match.
  auto seq = static_cast<std::uint32_t>(std::time(nullptr));
  return NlSocket(std::move(sock), portid, seq);
}

Result<void> NlSocket::send(const nlmsghdr &nlh) {
  ssize_t n = mnl_socket_sendto(sock_.get(), &nlh, nlh.nlmsg_len);
  if (n < 0)
    return Error{errno, "netlink send failed"};
  if (static_cast<std::size_t>(n) != nlh.nlmsg_len)
    return Error{EIO, "netlink send truncated"};
  return {};
}

Result<void> NlSocket::transact(std::uint16_t type, std::uint16_t flags,
                                const RequestWriter &write, const MsgCallback &on_msg) {
  std::vector<std::byte> buf(request_buf_size);
  nlmsghdr *nlh = mnl_nlmsg_put_header(buf.data());
  nlh->nlmsg_type = type;
  nlh->nlmsg_flags = flags;
  nlh->nlmsg_seq = ++seq_;
  if (write)
    write(*nlh);
  if (Result<void> sent = send(*nlh); !sent)
    return sent;

  buf.resize(dump_buf_size);
  for (;;) {
    ssize_t n = mnl_socket_recvfrom(sock_.get(), buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return Error{errno, "netlink receive failed"};
    }
    Result<bool> done =
        run_callbacks(std::span(buf.data(), static_cast<std::size_t>(n)), seq_, portid_, on_msg);
    if (!done)
      return std::move(done).error();
    if (*done)
      return {};
  }
}

Result<void> NlSocket::dump(std::uint16_t type, const MsgCallback &cb, const RequestWriter &write) {
  // After cb fails, keep reading to the end of the reply without calling it again, so no
  // stale datagram is left queued to break the next request on this socket.
  std::optional<Error> cb_err;
  MsgCallback until_error = [&cb, &cb_err](const nlmsghdr &msg) -> Result<void> {
    if (!cb_err) {
      Result<void> res = cb(msg);
      if (!res)
        cb_err = std::move(res).error();
    }
    return {};
  };
  if (Result<void> r = transact(type, NLM_F_REQUEST | NLM_F_DUMP, write, until_error); !r)
    return r;
  if (cb_err)
    return std::move(*cb_err);
  return {};
}

Result<void> NlSocket::request(std::uint16_t type, const RequestWriter &write,
                               std::uint16_t extra_flags, const MsgCallback &cb) {
  MsgCallback on_msg = [&cb](const nlmsghdr &msg) -> Result<void> {
    if (cb)
      return cb(msg);
    return {};
  };
  return transact(type, static_cast<std::uint16_t>(NLM_F_REQUEST | NLM_F_ACK | extra_flags), write,
                  on_msg);
}

Result<bool> run_callbacks(std::span<const std::byte> buf, std::uint32_t seq, std::uint32_t portid,
                           const MsgCallback &cb) {
  // Control types without a handler (NLMSG_NOOP, NLMSG_OVERRUN) are skipped.
  std::array<mnl_cb_t, NLMSG_MIN_TYPE> ctl_cbs{};
  ctl_cbs[NLMSG_ERROR] = error_cb;
  ctl_cbs[NLMSG_DONE] = done_cb;

  CallbackState state{&cb, std::nullopt};
  int ret = mnl_cb_run2(buf.data(), buf.size(), seq, portid, data_cb, &state, ctl_cbs.data(),
                        ctl_cbs.size());
  if (ret >= MNL_CB_OK)
    return false;
  if (ret == MNL_CB_STOP)
    return true;
  if (state.err)
    return std::move(*state.err);
  // Otherwise libmnl itself rejected the datagram and says why in errno.
  int err = errno;
  switch (err) {
  case ESRCH:
    return Error{err, "netlink reply has the wrong port id"};
  case EPROTO:
    return Error{err, "netlink reply has the wrong sequence number"};
  case EINTR:
    return Error{err, "netlink dump interrupted by a concurrent change; retry"};
  default:
    return Error{err, "malformed netlink reply"};
  }
}

} // namespace srnic::nl

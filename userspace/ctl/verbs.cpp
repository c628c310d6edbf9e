// SPDX-License-Identifier: GPL-2.0
#include "verbs.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>

namespace srnic::verbs {

namespace {

constexpr std::uint8_t port_num = 1;
constexpr std::size_t half = 4096; // bytes moved by each of WRITE and SEND
constexpr std::uint64_t write_wr_id = 1, send_wr_id = 2, recv_wr_id = 3;
constexpr auto completion_timeout = std::chrono::seconds(10);

const char *wc_status(ibv_wc_status s) { return ibv_wc_status_str(s); }

struct Buffer {
  std::vector<std::uint8_t> data;
  MrPtr mr;
};

Result<Buffer> make_buffer(ibv_pd *pd, std::vector<std::uint8_t> data) {
  Buffer b{std::move(data), nullptr};
  b.mr.reset(ibv_reg_mr(pd, b.data.data(), b.data.size(),
                        IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ));
  if (!b.mr)
    return Error{errno, "ibv_reg_mr"};
  return b;
}

Result<QpPtr> make_qp(ibv_pd *pd, ibv_cq *cq) {
  ibv_qp_init_attr attr{};
  attr.send_cq = cq;
  attr.recv_cq = cq;
  attr.qp_type = IBV_QPT_RC;
  attr.cap.max_send_wr = 4;
  attr.cap.max_recv_wr = 4;
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  QpPtr qp(ibv_create_qp(pd, &attr));
  if (!qp)
    return Error{errno, "ibv_create_qp (RC)"};
  return qp;
}

// RESET -> INIT -> RTR -> RTS, connected to remote_qpn through dgid.
Result<void> connect_qp(ibv_qp *qp, std::uint32_t remote_qpn, const ibv_gid &dgid,
                        unsigned int gid_index, ibv_mtu mtu) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = port_num;
  a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  if (int e = ibv_modify_qp(qp, &a,
                            IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
    return Error{e, fmt::format("ibv_modify_qp QP {:#x} to INIT", qp->qp_num)};

  a = {};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = mtu;
  a.dest_qp_num = remote_qpn;
  a.rq_psn = 0;
  a.max_dest_rd_atomic = 1;
  a.min_rnr_timer = 12;
  a.ah_attr.is_global = 1;
  a.ah_attr.grh.dgid = dgid;
  a.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(gid_index);
  a.ah_attr.grh.hop_limit = 1;
  a.ah_attr.port_num = port_num;
  if (int e = ibv_modify_qp(qp, &a,
                            IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
    return Error{e, fmt::format("ibv_modify_qp QP {:#x} to RTR", qp->qp_num)};

  a = {};
  a.qp_state = IBV_QPS_RTS;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.sq_psn = 0;
  a.max_rd_atomic = 1;
  if (int e = ibv_modify_qp(qp, &a,
                            IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
    return Error{e, fmt::format("ibv_modify_qp QP {:#x} to RTS", qp->qp_num)};
  return {};
}

// Polls cq until `want` successful completions came, each wr_id once.
Result<void> wait_completions(ibv_cq *cq, int want) {
  auto deadline = std::chrono::steady_clock::now() + completion_timeout;
  int got = 0;
  while (got < want) {
    ibv_wc wc[4];
    int n = ibv_poll_cq(cq, 4, wc);
    if (n < 0)
      return Error{EIO, "ibv_poll_cq"};
    for (int i = 0; i < n; i++) {
      if (wc[i].status != IBV_WC_SUCCESS)
        return Error{EIO, fmt::format("completion of wr_id {} on QP {:#x} failed: {} "
                                      "(vendor error {:#x})",
                                      wc[i].wr_id, wc[i].qp_num, wc_status(wc[i].status),
                                      wc[i].vendor_err)};
      got++;
    }
    if (n == 0) {
      if (std::chrono::steady_clock::now() > deadline)
        return Error{ETIMEDOUT, fmt::format("only {} of {} completions after {} s", got, want,
                                            completion_timeout.count())};
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  return {};
}

} // namespace

Result<ContextPtr> open_device(const std::string &name) {
  int n = 0;
  DeviceList list(ibv_get_device_list(&n));
  if (!list)
    return Error{errno, "ibv_get_device_list"};
  for (int i = 0; i < n; i++) {
    if (name != ibv_get_device_name(list.get()[i]))
      continue;
    ContextPtr ctx(ibv_open_device(list.get()[i]));
    if (!ctx)
      return Error{errno, fmt::format("ibv_open_device {}", name)};
    return ctx;
  }
  return Error{ENODEV, fmt::format("libibverbs does not list {} (is the rxe provider installed?)",
                                   name)};
}

std::vector<std::uint8_t> test_pattern(std::size_t len, std::uint8_t seed) {
  std::vector<std::uint8_t> p(len);
  for (std::size_t i = 0; i < len; i++)
    p[i] = static_cast<std::uint8_t>((i * 131 + seed) ^ (i >> 8) ^ 0x5a);
  return p;
}

long first_mismatch(const std::vector<std::uint8_t> &want, const std::vector<std::uint8_t> &got) {
  std::size_t n = std::min(want.size(), got.size());
  for (std::size_t i = 0; i < n; i++)
    if (want[i] != got[i])
      return static_cast<long>(i);
  if (want.size() != got.size())
    return static_cast<long>(n);
  return -1;
}

Result<SelftestResult> loopback_selftest(const std::string &name, unsigned int gid_index) {
  Result<ContextPtr> ctx = open_device(name);
  if (!ctx)
    return std::move(ctx).error();
  ibv_port_attr port{};
  if (int e = ibv_query_port(ctx->get(), port_num, &port))
    return Error{e, "ibv_query_port"};
  if (port.state != IBV_PORT_ACTIVE)
    return Error{ENETDOWN, fmt::format("port {} is not ACTIVE", port_num)};
  ibv_gid gid{};
  if (int e = ibv_query_gid(ctx->get(), port_num, static_cast<int>(gid_index), &gid))
    return Error{e, fmt::format("ibv_query_gid index {}", gid_index)};

  PdPtr pd(ibv_alloc_pd(ctx->get()));
  if (!pd)
    return Error{errno, "ibv_alloc_pd"};
  CqPtr cq(ibv_create_cq(ctx->get(), 16, nullptr, nullptr, 0));
  if (!cq)
    return Error{errno, "ibv_create_cq"};
  Result<QpPtr> qa = make_qp(pd.get(), cq.get());
  if (!qa)
    return std::move(qa).error();
  Result<QpPtr> qb = make_qp(pd.get(), cq.get());
  if (!qb)
    return std::move(qb).error();

  std::vector<std::uint8_t> pattern = test_pattern(2 * half, 0x3c);
  Result<Buffer> src = make_buffer(pd.get(), pattern);
  Result<Buffer> wdst = make_buffer(pd.get(), std::vector<std::uint8_t>(half));
  Result<Buffer> rdst = make_buffer(pd.get(), std::vector<std::uint8_t>(half));
  for (Result<Buffer> *b : {&src, &wdst, &rdst})
    if (!*b)
      return std::move(*b).error();

  ibv_mtu mtu = port.active_mtu;
  if (Result<void> r = connect_qp(qa->get(), (*qb)->qp_num, gid, gid_index, mtu); !r)
    return r.error();
  if (Result<void> r = connect_qp(qb->get(), (*qa)->qp_num, gid, gid_index, mtu); !r)
    return r.error();

  ibv_sge rsge{reinterpret_cast<std::uintptr_t>(rdst->data.data()), half, rdst->mr->lkey};
  ibv_recv_wr rwr{};
  rwr.wr_id = recv_wr_id;
  rwr.sg_list = &rsge;
  rwr.num_sge = 1;
  ibv_recv_wr *bad_rwr = nullptr;
  if (int e = ibv_post_recv(qb->get(), &rwr, &bad_rwr))
    return Error{e, "ibv_post_recv"};

  ibv_sge wsge{reinterpret_cast<std::uintptr_t>(src->data.data()), half, src->mr->lkey};
  ibv_sge ssge{reinterpret_cast<std::uintptr_t>(src->data.data() + half), half, src->mr->lkey};
  ibv_send_wr swr[2]{};
  swr[0].wr_id = write_wr_id;
  swr[0].sg_list = &wsge;
  swr[0].num_sge = 1;
  swr[0].opcode = IBV_WR_RDMA_WRITE;
  swr[0].send_flags = IBV_SEND_SIGNALED;
  swr[0].wr.rdma.remote_addr = reinterpret_cast<std::uintptr_t>(wdst->data.data());
  swr[0].wr.rdma.rkey = wdst->mr->rkey;
  swr[0].next = &swr[1];
  swr[1].wr_id = send_wr_id;
  swr[1].sg_list = &ssge;
  swr[1].num_sge = 1;
  swr[1].opcode = IBV_WR_SEND;
  swr[1].send_flags = IBV_SEND_SIGNALED;
  ibv_send_wr *bad_swr = nullptr;
  if (int e = ibv_post_send(qa->get(), swr, &bad_swr))
    return Error{e, "ibv_post_send"};
  if (Result<void> r = wait_completions(cq.get(), 3); !r)
    return r.error();

  std::vector<std::uint8_t> want_w(pattern.begin(), pattern.begin() + half);
  std::vector<std::uint8_t> want_s(pattern.begin() + half, pattern.end());
  if (long at = first_mismatch(want_w, wdst->data); at >= 0)
    return Error{EIO, fmt::format("RDMA WRITE data differs at byte {} of {}", at, half)};
  if (long at = first_mismatch(want_s, rdst->data); at >= 0)
    return Error{EIO, fmt::format("SEND data differs at byte {} of {}", at, half)};
  return SelftestResult{half, half, static_cast<unsigned int>(128u << mtu)};
}

} // namespace srnic::verbs

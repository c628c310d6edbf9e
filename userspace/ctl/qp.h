// SPDX-License-Identifier: GPL-2.0
//
// srnicctl qp [show [DEV]]: QPs from rdma netlink (RDMA_NLDEV_CMD_RES_QP_GET, what
// `rdma resource show qp -dd` prints) with the driver's own attributes, read generically
// as name/value pairs (srnic: sq_psn, una_psn, epsn, retries left, pacing rate, ...).
#pragma once

#include "lib/result.h"

#include <linux/netlink.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace srnic::ctl {

struct DriverAttr {
  std::string name;
  std::int64_t value = 0; // u64 values above INT64_MAX do not occur in practice
  bool is_signed = false;
  bool hex = false; // RDMA_NLDEV_PRINT_TYPE_HEX
  std::optional<std::string> text; // a string attribute's value (DC: dc_type)
};

struct QpRes {
  std::uint32_t dev_index = 0;
  std::string dev_name;
  std::uint32_t lqpn = 0;
  std::optional<std::uint32_t> port;
  std::optional<std::uint32_t> rqpn;
  std::optional<std::uint8_t> type;  // enum ib_qp_type
  std::optional<std::uint8_t> state; // enum ib_qp_state
  std::vector<DriverAttr> driver;
};

// Parses one RES_QP_GET reply message: each RDMA_NLDEV_ATTR_RES_QP_ENTRY in it.
Result<std::vector<QpRes>> parse_qp_res(const nlmsghdr &nlh);

// The driver attribute called name, if any.
const DriverAttr *find_driver_attr(const QpRes &qp, std::string_view name);

// Dumps the QPs of RDMA device dev_index with driver details.
Result<std::vector<QpRes>> dump_qps(std::uint32_t dev_index);

std::string_view qp_state_name(std::uint8_t state);
std::string_view qp_type_name(std::uint8_t type);
// The type to show: a DC QP (ib_core's DRIVER) by its dc_type, DCI or DCT.
std::string qp_type_shown(const QpRes &qp);

} // namespace srnic::ctl

// SPDX-License-Identifier: GPL-2.0
#include "qp.h"

#include "command.h"
#include "dev_netlink.h"
#include "lib/nl_socket.h"
#include "lib/nldev.h"
#include "sysfs_view.h"

#include <libmnl/libmnl.h>
#include <rdma/rdma_netlink.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace srnic::ctl {

namespace {

using NestAttrs = std::array<const nlattr *, RDMA_NLDEV_ATTR_MAX>;

int collect_cb(const nlattr *attr, void *data) {
  if (mnl_attr_type_valid(attr, RDMA_NLDEV_ATTR_MAX - 1) < 0)
    return MNL_CB_OK;
  (*static_cast<NestAttrs *>(data))[mnl_attr_get_type(attr)] = attr;
  return MNL_CB_OK;
}

// The attributes nested in nest (libmnl's mnl_attr_for_each_nested() is C only).
std::vector<const nlattr *> nested(const nlattr *nest) {
  std::vector<const nlattr *> out;
  const auto *begin = static_cast<const char *>(mnl_attr_get_payload(nest));
  const char *end = begin + mnl_attr_get_payload_len(nest);
  for (const auto *a = reinterpret_cast<const nlattr *>(begin);
       mnl_attr_ok(a, static_cast<int>(end - reinterpret_cast<const char *>(a)));
       a = mnl_attr_next(a))
    out.push_back(a);
  return out;
}

// The driver table is a flat list: STRING name, optional PRINT_TYPE, then one value.
Result<std::vector<DriverAttr>> parse_driver(const nlattr *table) {
  std::vector<DriverAttr> attrs;
  std::optional<std::string> name;
  bool hex = false;
  for (const nlattr *a : nested(table)) {
    std::uint16_t type = mnl_attr_get_type(a);
    switch (type) {
    case RDMA_NLDEV_ATTR_DRIVER_STRING:
      if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) < 0)
        return Error{EPROTO, "bad driver attribute name"};
      // rdma_nl_put_driver_string(): a name, then its value, both strings
      if (name) {
        attrs.push_back(DriverAttr{*name, 0, false, false, std::string(mnl_attr_get_str(a))});
        name.reset();
        break;
      }
      name = mnl_attr_get_str(a);
      hex = false;
      break;
    case RDMA_NLDEV_ATTR_DRIVER_PRINT_TYPE:
      if (mnl_attr_validate(a, MNL_TYPE_U8) < 0)
        return Error{EPROTO, "bad driver attribute print type"};
      hex = mnl_attr_get_u8(a) == RDMA_NLDEV_PRINT_TYPE_HEX;
      break;
    case RDMA_NLDEV_ATTR_DRIVER_U32:
    case RDMA_NLDEV_ATTR_DRIVER_S32:
    case RDMA_NLDEV_ATTR_DRIVER_U64:
    case RDMA_NLDEV_ATTR_DRIVER_S64: {
      bool wide = type == RDMA_NLDEV_ATTR_DRIVER_U64 || type == RDMA_NLDEV_ATTR_DRIVER_S64;
      if (!name || mnl_attr_validate(a, wide ? MNL_TYPE_U64 : MNL_TYPE_U32) < 0)
        return Error{EPROTO, "driver attribute value without a name, or of a bad size"};
      DriverAttr d{*name, 0, false, hex, std::nullopt};
      switch (type) {
      case RDMA_NLDEV_ATTR_DRIVER_U32:
        d.value = mnl_attr_get_u32(a);
        break;
      case RDMA_NLDEV_ATTR_DRIVER_S32:
        d.value = static_cast<std::int32_t>(mnl_attr_get_u32(a));
        d.is_signed = true;
        break;
      case RDMA_NLDEV_ATTR_DRIVER_U64:
        d.value = static_cast<std::int64_t>(mnl_attr_get_u64(a));
        break;
      default:
        d.value = static_cast<std::int64_t>(mnl_attr_get_u64(a));
        d.is_signed = true;
      }
      attrs.push_back(std::move(d));
      name.reset();
      break;
    }
    default:
      break; // newer kinds of driver attributes: skipped
    }
  }
  return attrs;
}

Result<QpRes> parse_entry(const nlattr *entry, const QpRes &base) {
  NestAttrs tb{};
  if (mnl_attr_parse_nested(entry, collect_cb, &tb) < 0)
    return Error{EPROTO, "malformed QP entry"};
  if (!tb[RDMA_NLDEV_ATTR_RES_LQPN] || mnl_attr_validate(tb[RDMA_NLDEV_ATTR_RES_LQPN], MNL_TYPE_U32) < 0)
    return Error{EPROTO, "QP entry without a QP number"};
  QpRes qp = base;
  qp.lqpn = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_RES_LQPN]);
  if (const nlattr *a = tb[RDMA_NLDEV_ATTR_PORT_INDEX]; a && mnl_attr_validate(a, MNL_TYPE_U32) == 0)
    qp.port = mnl_attr_get_u32(a);
  if (const nlattr *a = tb[RDMA_NLDEV_ATTR_RES_RQPN]; a && mnl_attr_validate(a, MNL_TYPE_U32) == 0)
    qp.rqpn = mnl_attr_get_u32(a);
  if (const nlattr *a = tb[RDMA_NLDEV_ATTR_RES_TYPE]; a && mnl_attr_validate(a, MNL_TYPE_U8) == 0)
    qp.type = mnl_attr_get_u8(a);
  if (const nlattr *a = tb[RDMA_NLDEV_ATTR_RES_STATE]; a && mnl_attr_validate(a, MNL_TYPE_U8) == 0)
    qp.state = mnl_attr_get_u8(a);
  if (const nlattr *a = tb[RDMA_NLDEV_ATTR_DRIVER]) {
    Result<std::vector<DriverAttr>> d = parse_driver(a);
    if (!d)
      return std::move(d).error();
    qp.driver = std::move(d).value();
  }
  return qp;
}

void print_qp(Output &out, const QpRes &qp) {
  out.begin_record();
  out.field("dev", qp.dev_name);
  if (qp.port)
    out.field("port", *qp.port);
  out.field("lqpn", qp.lqpn);
  if (qp.rqpn)
    out.field("rqpn", *qp.rqpn);
  if (qp.type)
    out.field("type", qp_type_shown(qp));
  if (qp.state)
    out.field("state", qp_state_name(*qp.state));
  nlohmann::ordered_json drv = nlohmann::ordered_json::object();
  std::vector<std::string> text;
  for (const DriverAttr &d : qp.driver) {
    if (d.text) {
      drv[d.name] = *d.text;
      text.push_back(fmt::format("{}={}", d.name, *d.text));
      continue;
    }
    if (d.is_signed)
      drv[d.name] = d.value;
    else
      drv[d.name] = static_cast<std::uint64_t>(d.value);
    text.push_back(d.hex ? fmt::format("{}={:#x}", d.name, static_cast<std::uint64_t>(d.value))
                         : fmt::format("{}={}", d.name, d.value));
  }
  out.field_json("driver", drv, fmt::format("{}", fmt::join(text, ",")));
  out.end_record();
}

Result<void> qp_show(Context &ctx, const std::optional<std::string> &name) {
  Result<std::vector<std::string>> srnic = select_devices(ctx.sysfs, name);
  if (!srnic)
    return std::move(srnic).error();
  Result<std::vector<DevInfo>> devs = dump_devs();
  if (!devs)
    return std::move(devs).error();
  for (const DevInfo &d : *devs) {
    if (std::find(srnic->begin(), srnic->end(), d.name) == srnic->end())
      continue;
    Result<std::vector<QpRes>> qps = dump_qps(d.index);
    if (!qps)
      return std::move(qps).error();
    for (const QpRes &qp : *qps)
      print_qp(ctx.out, qp);
  }
  return {};
}

} // namespace

Result<std::vector<QpRes>> parse_qp_res(const nlmsghdr &nlh) {
  Result<nl::NldevAttrs> parsed = nl::parse_nldev(nlh);
  if (!parsed)
    return std::move(parsed).error();
  const nl::NldevAttrs &tb = *parsed;
  if (!tb[RDMA_NLDEV_ATTR_DEV_INDEX] || !tb[RDMA_NLDEV_ATTR_DEV_NAME])
    return Error{EPROTO, "QP record lacks a device index or name"};
  QpRes base;
  base.dev_index = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_DEV_INDEX]);
  base.dev_name = mnl_attr_get_str(tb[RDMA_NLDEV_ATTR_DEV_NAME]);
  std::vector<QpRes> qps;
  const nlattr *table = tb[RDMA_NLDEV_ATTR_RES_QP];
  if (!table)
    return qps;
  for (const nlattr *entry : nested(table)) {
    if (mnl_attr_get_type(entry) != RDMA_NLDEV_ATTR_RES_QP_ENTRY)
      continue;
    Result<QpRes> qp = parse_entry(entry, base);
    if (!qp)
      return std::move(qp).error();
    qps.push_back(std::move(qp).value());
  }
  return qps;
}

const DriverAttr *find_driver_attr(const QpRes &qp, std::string_view name) {
  for (const DriverAttr &d : qp.driver)
    if (d.name == name)
      return &d;
  return nullptr;
}

Result<std::vector<QpRes>> dump_qps(std::uint32_t dev_index) {
  Result<nl::NlSocket> sock = nl::NlSocket::open_rdma();
  if (!sock)
    return std::move(sock).error();
  std::vector<QpRes> qps;
  Result<void> res = sock->dump(
      nl::nldev_type(RDMA_NLDEV_CMD_RES_QP_GET),
      [&qps](const nlmsghdr &nlh) -> Result<void> {
        Result<std::vector<QpRes>> some = parse_qp_res(nlh);
        if (!some)
          return std::move(some).error();
        for (QpRes &q : *some)
          qps.push_back(std::move(q));
        return {};
      },
      [dev_index](nlmsghdr &nlh) {
        mnl_attr_put_u32(&nlh, RDMA_NLDEV_ATTR_DEV_INDEX, dev_index);
        mnl_attr_put_u8(&nlh, RDMA_NLDEV_ATTR_DRIVER_DETAILS, 1);
      });
  if (!res)
    return Error{res.error().errnum, "cannot list QPs: " + res.error().msg};
  return qps;
}

std::string_view qp_state_name(std::uint8_t state) {
  static constexpr std::array<std::string_view, 7> names = {"RESET", "INIT", "RTR", "RTS",
                                                            "SQD",   "SQE",  "ERR"};
  return state < names.size() ? names[state] : "UNKNOWN";
}

std::string_view qp_type_name(std::uint8_t type) {
  switch (type) {
  case 0:
    return "SMI";
  case 1:
    return "GSI";
  case 2:
    return "RC";
  case 3:
    return "UC";
  case 4:
    return "UD";
  case 8:
    return "RAW_PACKET";
  case 9:
    return "XRC_INI";
  case 10:
    return "XRC_TGT";
  case 0xff:
    return "DRIVER";
  default:
    return "UNKNOWN";
  }
}

std::string qp_type_shown(const QpRes &qp) {
  if (!qp.type)
    return "UNKNOWN";
  if (*qp.type == 0xff)
    for (const DriverAttr &d : qp.driver)
      if (d.name == "dc_type" && d.text)
        return *d.text;
  return std::string(qp_type_name(*qp.type));
}

void cmd_qp(CLI::App &root, Action &action) {
  CLI::App *qp = root.add_subcommand("qp", "QPs of srnic devices with srnic's transport state "
                                           "(default command: show)");
  qp->require_subcommand(0, 1);
  add_dev_filter_command(*qp, "show", "QPs of all srnic devices, or of DEV", action, qp_show);
  qp->callback([&action, qp] {
    if (qp->get_subcommands().empty())
      action = [](Context &ctx) { return qp_show(ctx, std::nullopt); };
  });
}

} // namespace srnic::ctl

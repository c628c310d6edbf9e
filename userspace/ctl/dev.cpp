// SPDX-License-Identifier: GPL-2.0
#include "dev.h"

#include "command.h"
#include "lib/guid.h"
#include "lib/nl_socket.h"
#include "lib/nldev.h"
#include "srnic_dev.h"

#include <libmnl/libmnl.h>
#include <rdma/rdma_netlink.h>

#include <cerrno>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace srnic::ctl {

namespace {

void print_dev(Output &out, const Sysfs &sysfs, const DevInfo &dev) {
  out.begin_record();
  out.field("index", dev.index);
  out.field("name", dev.name);
  if (dev.node_guid)
    out.field("node_guid", format_guid(*dev.node_guid));
  if (dev.fw)
    out.field("fw", *dev.fw);
  if (dev.ports)
    out.field("ports", *dev.ports);
  std::optional<SrnicAttrs> srnic = srnic_attrs(sysfs, dev.name);
  out.field("kind", srnic ? "srnic" : "other");
  if (srnic && srnic->version)
    out.field("version", *srnic->version);
  if (srnic && srnic->netdev)
    out.field("netdev", *srnic->netdev);
  out.end_record();
}

Result<void> dev_show(Context &ctx, const std::optional<std::string> &name) {
  Result<std::vector<DevInfo>> devs = dump_devs();
  if (!devs)
    return std::move(devs).error();
  return show_devs(ctx.out, ctx.sysfs, *devs, name);
}

} // namespace

Result<DevInfo> parse_dev(const nlmsghdr &nlh) {
  if (nlh.nlmsg_type != nl::nldev_type(RDMA_NLDEV_CMD_GET))
    return Error{EPROTO, fmt::format("unexpected rdma netlink message type {:#x}", nlh.nlmsg_type)};
  Result<nl::NldevAttrs> parsed = nl::parse_nldev(nlh);
  if (!parsed)
    return std::move(parsed).error();
  const nl::NldevAttrs &tb = *parsed;
  if (!tb[RDMA_NLDEV_ATTR_DEV_INDEX] || !tb[RDMA_NLDEV_ATTR_DEV_NAME])
    return Error{EPROTO, "rdma device record lacks an index or a name"};

  DevInfo dev;
  dev.index = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_DEV_INDEX]);
  dev.name = mnl_attr_get_str(tb[RDMA_NLDEV_ATTR_DEV_NAME]);
  if (const nlattr *a = tb[RDMA_NLDEV_ATTR_NODE_GUID])
    dev.node_guid = mnl_attr_get_u64(a);
  if (const nlattr *a = tb[RDMA_NLDEV_ATTR_FW_VERSION])
    dev.fw = mnl_attr_get_str(a);
  if (const nlattr *a = tb[RDMA_NLDEV_ATTR_PORT_INDEX])
    dev.ports = mnl_attr_get_u32(a); // for CMD_GET: the number of ports
  return dev;
}

Result<std::vector<DevInfo>> dump_devs() {
  Result<nl::NlSocket> sock = nl::NlSocket::open_rdma();
  if (!sock) {
    // NETLINK_RDMA is registered by ib_core; without it there are no RDMA devices.
    if (sock.error().errnum == EPROTONOSUPPORT)
      return std::vector<DevInfo>{};
    return std::move(sock).error();
  }
  std::vector<DevInfo> devs;
  Result<void> res =
      sock->dump(nl::nldev_type(RDMA_NLDEV_CMD_GET), [&devs](const nlmsghdr &nlh) -> Result<void> {
        Result<DevInfo> dev = parse_dev(nlh);
        if (!dev)
          return std::move(dev).error();
        devs.push_back(std::move(dev).value());
        return {};
      });
  if (!res)
    return Error{res.error().errnum, "cannot list rdma devices: " + res.error().msg};
  return devs;
}

Result<void> show_devs(Output &out, const Sysfs &sysfs, std::span<const DevInfo> devs,
                       std::optional<std::string_view> name) {
  bool found = false;
  for (const DevInfo &dev : devs) {
    if (name && dev.name != *name)
      continue;
    print_dev(out, sysfs, dev);
    found = true;
  }
  if (name && !found)
    return Error{ENODEV, fmt::format("device {}", *name)};
  return {};
}

void cmd_dev(CLI::App &root, Action &action) {
  CLI::App *dev = root.add_subcommand("dev", "RDMA devices (default command: show)");
  dev->require_subcommand(0, 1);

  CLI::App *show = dev->add_subcommand("show", "Show all RDMA devices, or DEV only");
  auto name = std::make_shared<std::string>();
  CLI::Option *name_opt = show->add_option("DEV", *name, "RDMA device name");
  show->callback([&action, name, name_opt] {
    std::optional<std::string> filter;
    if (name_opt->count() > 0)
      filter = *name;
    action = [filter](Context &ctx) { return dev_show(ctx, filter); };
  });

  dev->callback([&action, dev, show] {
    if (!dev->got_subcommand(show))
      action = [](Context &ctx) { return dev_show(ctx, std::nullopt); };
  });
}

} // namespace srnic::ctl

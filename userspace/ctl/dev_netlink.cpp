// SPDX-License-Identifier: GPL-2.0
#include "dev_netlink.h"

#include "command.h"
#include "lib/guid.h"
#include "lib/nl_socket.h"
#include "lib/nldev.h"
#include "sysfs_view.h"

#include <libmnl/libmnl.h>
#include <rdma/rdma_netlink.h>

#include <uapi/rdma/srnic.h>

#include <algorithm>
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

Result<void> dev_add(Context &ctx, const std::string &name, const std::string &netdev) {
  if (Result<void> res = add_link(name, netdev); !res)
    return res;
  // Show what was created, so `-j dev add` is a JSON record of the new device.
  return dev_show(ctx, name);
}

} // namespace

void put_newlink(nlmsghdr &nlh, std::string_view name, std::string_view netdev) {
  mnl_attr_put_strz(&nlh, RDMA_NLDEV_ATTR_DEV_NAME, std::string(name).c_str());
  mnl_attr_put_strz(&nlh, RDMA_NLDEV_ATTR_LINK_TYPE, SRNIC_LINK_TYPE);
  mnl_attr_put_strz(&nlh, RDMA_NLDEV_ATTR_NDEV_NAME, std::string(netdev).c_str());
}

void put_dellink(nlmsghdr &nlh, std::uint32_t index) {
  mnl_attr_put_u32(&nlh, RDMA_NLDEV_ATTR_DEV_INDEX, index);
}

std::string explain_add_error(int errnum, std::string_view name, std::string_view netdev) {
  switch (errnum) {
  case EPERM:
  case EACCES:
    return "creating an RDMA link needs CAP_NET_ADMIN (run as root)";
  case EEXIST:
    return fmt::format("an RDMA device named {} already exists", name);
  case ENODEV:
    return fmt::format("no netdev {}, or it is not an Ethernet device", netdev);
  case EINVAL:
    return fmt::format("the kernel refused {} on {} (bad name, or no link type \"{}\": is srnic "
                       "loaded?); see dmesg",
                       name, netdev, SRNIC_LINK_TYPE);
  case EBUSY:
    return fmt::format("netdev {} already has an RDMA device", netdev);
  default:
    return fmt::format("cannot create {} on {}", name, netdev);
  }
}

Result<void> add_link(std::string_view name, std::string_view netdev) {
  if (name.empty() || name.size() >= 64 || netdev.empty() || netdev.size() >= 16)
    return Error{EINVAL, fmt::format("bad device name \"{}\" or netdev name \"{}\"", name, netdev)};
  Result<nl::NlSocket> sock = nl::NlSocket::open_rdma();
  if (!sock) {
    if (sock.error().errnum == EPROTONOSUPPORT)
      return Error{EPROTONOSUPPORT, "no rdma netlink: the RDMA core (ib_core) is not loaded"};
    return std::move(sock).error();
  }
  Result<void> res = sock->request(
      nl::nldev_type(RDMA_NLDEV_CMD_NEWLINK),
      // No NLM_F_CREATE|NLM_F_EXCL (iproute2 sends none either): rdma netlink reads
      // NLM_F_EXCL, which is NLM_F_MATCH, as part of NLM_F_DUMP and looks for a dump.
      [&](nlmsghdr &nlh) { put_newlink(nlh, name, netdev); });
  if (!res)
    return Error{res.error().errnum, explain_add_error(res.error().errnum, name, netdev)};
  return {};
}

Result<void> del_link(std::string_view name) {
  Result<std::vector<DevInfo>> devs = dump_devs();
  if (!devs)
    return std::move(devs).error();
  auto it = std::find_if(devs->begin(), devs->end(),
                         [name](const DevInfo &d) { return d.name == name; });
  if (it == devs->end())
    return Error{ENODEV, fmt::format("device {}", name)};
  Result<nl::NlSocket> sock = nl::NlSocket::open_rdma();
  if (!sock)
    return std::move(sock).error();
  std::uint32_t index = it->index;
  Result<void> res = sock->request(nl::nldev_type(RDMA_NLDEV_CMD_DELLINK),
                                   [index](nlmsghdr &nlh) { put_dellink(nlh, index); });
  if (!res) {
    int e = res.error().errnum;
    if (e == EPERM || e == EACCES)
      return Error{e, "deleting an RDMA link needs CAP_NET_ADMIN (run as root)"};
    if (e == EINVAL)
      return Error{e, fmt::format("{} cannot be deleted (not created with a link type?)", name)};
    return Error{e, fmt::format("cannot delete {}", name)};
  }
  return {};
}

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

  add_dev_filter_command(*dev, "show", "Show all RDMA devices, or DEV only", action, dev_show,
                         "RDMA device name");

  CLI::App *add = dev->add_subcommand("add", "Create srnic device NAME on netdev IFNAME");
  auto add_args = std::make_shared<std::vector<std::string>>();
  add->add_option("ARGS", *add_args, "NAME netdev IFNAME")->expected(3)->required();
  add->callback([&action, add_args] {
    const std::vector<std::string> &a = *add_args;
    if (a[1] != "netdev")
      throw CLI::ValidationError(
          fmt::format("expected \"netdev\" after the device name, got \"{}\"", a[1]));
    action = [name = a[0], netdev = a[2]](Context &ctx) { return dev_add(ctx, name, netdev); };
  });

  CLI::App *del = dev->add_subcommand("del", "Delete RDMA device NAME");
  del->alias("delete");
  auto del_name = std::make_shared<std::string>();
  del->add_option("NAME", *del_name, "RDMA device name")->required();
  del->callback([&action, del_name] {
    action = [name = *del_name](Context &) { return del_link(name); };
  });

  dev->callback([&action, dev] {
    if (dev->get_subcommands().empty())
      action = [](Context &ctx) { return dev_show(ctx, std::nullopt); };
  });
}

} // namespace srnic::ctl

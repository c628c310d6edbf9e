// SPDX-License-Identifier: GPL-2.0
//
// srnicctl show [DEV]: one record per srnic device and port, from sysfs: port state, the
// netdev and its state and MTU, the active IB MTU that follows from it, the GIDs and
// whether DCQCN is enabled, and srnic's modes (re-pathing, receive steering, trains). Then the same for other drivers' RDMA devices on Ethernet
// (kind "other": a hardware RoCE NIC such as mlx5), whose DCQCN state comes from mlx5's
// class/net/<netdev>/ecn/ knobs.
#include "show.h"

#include "command.h"
#include "sysfs_view.h"

#include <utility>

#include <fmt/format.h>

namespace srnic::ctl {

void print_device_view(Output &out, const DeviceView &v) {
  std::vector<PortView> ports = v.ports;
  if (ports.empty())
    ports.push_back(PortView{}); // still one record, so the device shows
  for (const PortView &p : ports) {
    out.begin_record();
    out.field("dev", v.name);
    out.field("kind", v.kind);
    if (v.driver)
      out.field("driver", *v.driver);
    if (p.port != 0) {
      out.field("port", p.port);
      out.field("state", p.state);
      out.field("phys_state", p.phys_state);
    }
    if (v.node_guid)
      out.field("node_guid", *v.node_guid);
    out.field("netdev", v.netdev.value_or(""));
    out.field("netdev_state", v.netdev_elsewhere ? std::string("other_netns")
                              : v.netdev_exists  ? v.operstate.value_or("unknown")
                                                 : std::string("absent"));
    if (v.mtu) {
      out.field("mtu", *v.mtu);
      if (v.kind == "srnic") // srnic's rule; other drivers report their own
        out.field("active_mtu", ib_mtu_for(*v.mtu));
    }
    nlohmann::ordered_json gids = nlohmann::ordered_json::array();
    std::vector<std::string> texts;
    for (const GidEntry &g : p.gids) {
      gids.push_back({{"index", g.index}, {"gid", g.gid}, {"type", g.type}});
      texts.push_back(fmt::format("{}:{}{}", g.index, g.gid,
                                  g.type == "RoCE v2" ? "/v2" : g.type.empty() ? "" : "/v1"));
    }
    out.field_json("gids", gids, texts.empty() ? "none" : fmt::format("{}", fmt::join(texts, ",")));
    nlohmann::ordered_json dcqcn = nullptr;
    std::string dcqcn_text = "absent";
    if (v.dcqcn_np || v.dcqcn_rp) {
      dcqcn = nlohmann::ordered_json::object();
      if (v.dcqcn_np)
        dcqcn["np"] = *v.dcqcn_np;
      if (v.dcqcn_rp)
        dcqcn["rp"] = *v.dcqcn_rp;
      dcqcn_text = fmt::format("np:{},rp:{}", v.dcqcn_np ? (*v.dcqcn_np ? "on" : "off") : "-",
                               v.dcqcn_rp ? (*v.dcqcn_rp ? "on" : "off") : "-");
    }
    out.field_json("dcqcn", dcqcn, dcqcn_text);
    if (v.kind == "srnic") {
      nlohmann::ordered_json modes = nlohmann::ordered_json::object();
      std::vector<std::string> mtexts;
      if (v.provider) {
        modes["provider"] = *v.provider;
        mtexts.push_back(fmt::format("provider:{}", *v.provider));
      }
      if (v.repath_timeouts) {
        modes["repath_timeouts"] = *v.repath_timeouts;
        mtexts.push_back(fmt::format("repath_timeouts:{}", *v.repath_timeouts));
      }
      for (const auto &[name, on] : {std::pair{"rx_steer", v.rx_steer}, std::pair{"rx_spread", v.rx_spread},
                                     std::pair{"tx_batch", v.tx_batch}})
        if (on) {
          modes[name] = *on;
          mtexts.push_back(fmt::format("{}:{}", name, *on ? "on" : "off"));
        }
      out.field_json("modes", modes, mtexts.empty() ? "none" : fmt::format("{}", fmt::join(mtexts, ",")));
    }
    out.end_record();
  }
}

namespace {

Result<void> show(Context &ctx, const std::optional<std::string> &name) {
  return for_each_device_view(
      ctx.sysfs, name,
      [&ctx](const DeviceView &v) -> Result<void> {
        print_device_view(ctx.out, v);
        return {};
      },
      Scope::with_other);
}

} // namespace

void cmd_show(CLI::App &root, Action &action) {
  add_dev_filter_command(root, "show",
                         "srnic devices (then other RDMA devices on Ethernet): ports, state, "
                         "netdev, MTU, GIDs, DCQCN (all, or DEV only)",
                         action, show, "RDMA device name");
}

} // namespace srnic::ctl

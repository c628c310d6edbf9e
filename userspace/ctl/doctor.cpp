// SPDX-License-Identifier: GPL-2.0
#include "doctor.h"

#include "command.h"
#include "sysfs_view.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace srnic::ctl {

namespace {

namespace fs = std::filesystem;

DoctorCheck ok(std::string check, std::string dev, std::string detail) {
  return {std::move(check), std::move(dev), CheckStatus::ok, std::move(detail), {}};
}

DoctorCheck problem(CheckStatus status, std::string check, std::string dev, std::string detail,
                    std::string fix) {
  return {std::move(check), std::move(dev), status, std::move(detail), std::move(fix)};
}

// Rebinding dev to a netdev.
std::string readd_fix(const std::string &dev) {
  return fmt::format("srnicctl dev del {0} && srnicctl dev add {0} netdev IFNAME", dev);
}

DoctorCheck check_module(const Sysfs &sysfs) {
  if (sysfs.is_dir("module/srnic"))
    return ok("module_srnic", "", "module srnic is loaded");
  return problem(CheckStatus::fail, "module_srnic", "", "module srnic is not loaded",
                 "modprobe srnic (or insmod srnic.ko from a build: make module)");
}

DoctorCheck check_rxe(const Sysfs &sysfs) {
  if (!sysfs.exists("module/rdma_rxe"))
    return ok("rxe_conflict", "", "module rdma_rxe is not loaded");
  return problem(CheckStatus::fail, "rxe_conflict", "",
                 "module rdma_rxe is loaded: it and srnic both claim UDP port 4791 and the rxe "
                 "driver id, so they cannot run together",
                 "rdma link delete every rxe device, then rmmod rdma_rxe");
}

// The libibverbs provider plugin named lib<name>-rdmav*.so in a provider directory below
// root; empty if there is none.
std::string find_plugin(const fs::path &root, std::string_view name) {
  std::vector<fs::path> dirs = {root / "usr/lib64/libibverbs", root / "usr/lib/libibverbs"};
  std::error_code ec;
  for (fs::directory_iterator it(root / "usr/lib", ec), end; !ec && it != end; it.increment(ec))
    dirs.push_back(it->path() / "libibverbs");
  std::string prefix = fmt::format("lib{}-rdmav", name);
  std::string plugin;
  for (const fs::path &d : dirs) {
    std::error_code ec2;
    for (fs::directory_iterator it(d, ec2), end; !ec2 && it != end; it.increment(ec2)) {
      std::string n = it->path().filename().string();
      if (n.starts_with(prefix) && n.ends_with(".so"))
        plugin = it->path().string();
    }
  }
  return plugin;
}

// rdma-core's rxe provider (srnic speaks its ABI): the plugin and its driver file.
DoctorCheck check_provider(const fs::path &root) {
  std::string plugin = find_plugin(root, "rxe");
  std::error_code ec;
  bool driver = fs::exists(root / "etc/libibverbs.d/rxe.driver", ec);
  std::string fix = "apt install ibverbs-providers (rdma-core's rxe provider drives srnic)";
  if (plugin.empty())
    return problem(CheckStatus::fail, "rxe_provider", "",
                   "no libibverbs rxe provider (librxe-rdmav*.so): verbs applications will not "
                   "see srnic devices",
                   fix);
  if (!driver)
    return problem(CheckStatus::fail, "rxe_provider", "",
                   fmt::format("{} exists but /etc/libibverbs.d/rxe.driver does not, so "
                               "libibverbs never loads it",
                               plugin),
                   fix);
  return ok("rxe_provider", "", fmt::format("rxe provider {}", plugin));
}

// The srnic devices by the netdev each is bound to, in this namespace (names are per
// namespace).
using DevicesByNetdev = std::map<std::string, std::string>;

// Other drivers' RDMA devices on Ethernet (hardware RoCE NICs such as mlx5): srnic refuses
// their netdevs, and an srnic device that shares one (the other device came later) loses its
// packets to the hardware. One check per srnic device sharing a netdev; one otherwise.
void check_other_rdma(const Sysfs &sysfs, const DevicesByNetdev &by_netdev,
                      std::vector<DoctorCheck> &out) {
  Result<std::vector<OtherDevice>> others = other_devices(sysfs);
  if (!others) {
    out.push_back(problem(CheckStatus::warn, "other_rdma", "", to_string(others.error()), ""));
    return;
  }
  if (others->empty()) {
    out.push_back(ok("other_rdma", "", "no RDMA device of another driver on Ethernet"));
    return;
  }
  std::vector<std::string> list;
  bool shared = false;
  for (const OtherDevice &o : *others) {
    list.push_back(fmt::format("{}{} on {}", o.name, o.driver ? " (" + *o.driver + ")" : "",
                               o.netdevs.empty() ? "no netdev" : fmt::format("{}", fmt::join(o.netdevs, ","))));
    for (const std::string &nd : o.netdevs) {
      auto it = by_netdev.find(nd);
      if (it == by_netdev.end())
        continue;
      const std::string &d = it->second;
      shared = true;
      out.push_back(problem(
          CheckStatus::fail, "other_rdma", d,
          fmt::format("{} shares netdev {} with RDMA device {}{}: both answer RoCEv2 on its "
                      "addresses, and a hardware NIC takes the packets first",
                      d, nd, o.name, o.driver ? " (driver " + *o.driver + ")" : ""),
          fmt::format("use {} on {}, or move srnic: srnicctl dev del {} && srnicctl dev add {} "
                      "netdev OTHER_IFNAME",
                      o.name, nd, d, d)));
    }
  }
  if (!shared)
    out.push_back(ok("other_rdma", "",
                     fmt::format("RDMA devices of other drivers: {} (srnic refuses their "
                                 "netdevs)",
                                 fmt::join(list, ", "))));
}

// The RoCE v2 GID the self-test uses: an IPv4 one if there is one.
const GidEntry *pick_v2_gid(const PortView &port) {
  const GidEntry *best = nullptr;
  for (const GidEntry &g : port.gids) {
    if (g.type != "RoCE v2")
      continue;
    if (g.gid.starts_with("::ffff:"))
      return &g;
    if (!best)
      best = &g;
  }
  return best;
}

// The netdev check of srnic device dev, from its view (or why it could not be read).
DoctorCheck check_netdev(const std::string &dev, const Result<DeviceView> &view) {
  if (!view)
    return problem(CheckStatus::fail, "netdev", dev, to_string(view.error()),
                   "srnicctl dev del " + dev);
  std::string nd = view->netdev.value_or("");
  // seen from every namespace, checked from its netdev's
  if (view->netdev_elsewhere) {
    std::uint64_t inum = *view->netdev_netns;
    std::optional<std::string> name = netns_name(inum);
    return {"netdev", dev, CheckStatus::skip,
            name ? fmt::format("bound to netdev {} in network namespace {}, not this one: "
                               "doctor checks it there (ip netns exec {} srnicctl doctor)",
                               nd, *name, *name)
                 : fmt::format("bound to netdev {} in network namespace net:[{}], not this "
                               "one: doctor checks it there (nsenter --net=/proc/PID/ns/net "
                               "srnicctl doctor, PID a process in it)",
                               nd, inum),
            {}};
  }
  if (nd.empty() || !view->netdev_exists)
    return problem(CheckStatus::fail, "netdev", dev,
                   nd.empty() ? "no bound netdev" : fmt::format("netdev {} is gone", nd),
                   readd_fix(dev));
  return ok("netdev", dev, fmt::format("bound to netdev {}", nd));
}

// netdev_bond, netdev_bridge: nd is a bond's slave or a bridge's port. ib_core lists the
// master's addresses among the GIDs of the devices below it: of the active slave's device
// only in the bond modes with one (active-backup, tlb, alb), otherwise of every one. srnic
// gives what arrives on the master to the active slave's device, or else to the one srnic
// device below the master: two or more share its GIDs and get none of it.
DoctorCheck check_port_of(const DeviceView::PortOf &p, const std::string &dev,
                          const std::string &nd, const DevicesByNetdev &by_netdev) {
  std::string check = p.bridge ? "netdev_bridge" : "netdev_bond";
  std::string kind = p.bridge ? "bridge" : "bond";
  std::string what = p.bridge ? fmt::format("{} is a port of bridge {}", nd, p.master)
                              : fmt::format("{} is a slave of {} ({})", nd, p.master, p.mode);
  // a device on the master itself takes everything that arrives there
  if (auto own = by_netdev.find(p.master); own != by_netdev.end())
    return problem(CheckStatus::warn, check, dev,
                   fmt::format("{}: {} has a device of its own, {}, which takes what arrives "
                               "on it; {} gets none of it",
                               what, p.master, own->second, dev),
                   fmt::format("srnicctl dev del {} (the device on the {} serves it)", dev,
                               kind));
  if (!p.bridge &&
      (p.mode == "active-backup" || p.mode == "balance-tlb" || p.mode == "balance-alb"))
    return ok(check, dev,
              fmt::format("{}: the bond's addresses are {}'s GIDs while {} is its active "
                          "slave{}",
                          what, dev, nd,
                          p.state.empty() ? "" : fmt::format(" (now {})", p.state)));
  std::vector<std::string> others;
  for (const std::string &port : p.ports)
    if (auto it = by_netdev.find(port); port != nd && it != by_netdev.end())
      others.push_back(fmt::format("{} on {}", it->second, port));
  if (others.empty())
    return ok(check, dev,
              fmt::format("{}{}: the {}'s addresses are {}'s GIDs, and what arrives on {} is "
                          "{}'s (the only srnic device on its {})",
                          what, p.bridge ? "" : ", which has no active slave", kind, dev,
                          p.master, dev, p.bridge ? "ports" : "slaves"));
  return problem(CheckStatus::warn, check, dev,
                 fmt::format("{}{}: the {}'s addresses are the GIDs of {} and of {}, and srnic "
                             "gives what arrives on {} to none of them",
                             what, p.bridge ? "" : ", which has no active slave", kind, dev,
                             fmt::join(others, ", "), p.master),
                 fmt::format("srnicctl dev del {0} && srnicctl dev add {0} netdev {1} (one "
                             "device on the {2})",
                             dev, p.master, kind));
}

// The checks of the bound netdev nd once it exists: netdev_up, netdev_vlan (a VLAN only),
// netdev_bond or netdev_bridge (a bond's slave or a bridge's port only), mtu.
void check_netdev_state(const DeviceView &v, const std::string &dev, const std::string &nd,
                        const DevicesByNetdev &by_netdev, std::vector<DoctorCheck> &out) {
  std::string oper = v.operstate.value_or("unknown");
  if (v.admin_up && !*v.admin_up)
    out.push_back(problem(CheckStatus::fail, "netdev_up", dev,
                          fmt::format("{} is administratively down", nd),
                          fmt::format("ip link set {} up", nd)));
  else if (oper != "up" && oper != "unknown")
    out.push_back(problem(CheckStatus::fail, "netdev_up", dev,
                          fmt::format("{} is up but has no carrier (operstate {})", nd, oper),
                          fmt::format("connect {} (for a veth: ip link set PEER up)", nd)));
  else
    out.push_back(ok("netdev_up", dev, fmt::format("{} is up", nd)));

  // ib_core gives a VLAN's addresses to the RDMA device of its real netdev only
  if (v.vlan_of) {
    std::string real = v.vlan_of->empty() ? "its real netdev" : *v.vlan_of;
    out.push_back(problem(CheckStatus::warn, "netdev_vlan", dev,
                          fmt::format("{} is a VLAN of {}: a device bound to a VLAN gets only its "
                                      "link-local GID, none for the VLAN's addresses (RDMA-CM "
                                      "cannot use them)",
                                      nd, real),
                          fmt::format("srnicctl dev del {0} && srnicctl dev add {0} netdev {1} "
                                      "(the VLAN's addresses become its GIDs, its packets stay "
                                      "tagged)",
                                      dev, v.vlan_of->empty() ? "REAL_NETDEV" : real)));
  }
  if (v.port_of)
    out.push_back(check_port_of(*v.port_of, dev, nd, by_netdev));
  if (!v.mtu)
    return;
  unsigned int ib = ib_mtu_for(*v.mtu);
  std::string detail = fmt::format("{} MTU {} gives IB MTU {}", nd, *v.mtu, ib);
  if (ib == 0)
    out.push_back(problem(CheckStatus::fail, "mtu", dev,
                          fmt::format("{} MTU {} is too small for RoCE (needs {} for IB MTU 256)",
                                      nd, *v.mtu, 256 + roce_hdr_overhead),
                          fmt::format("ip link set {} mtu 1500", nd)));
  else if (ib < 1024)
    out.push_back(problem(CheckStatus::warn, "mtu", dev,
                          detail + ": small packets cost throughput",
                          fmt::format("ip link set {} mtu 1500 (IB MTU 1024; {} for 4096)", nd,
                                      4096 + roce_hdr_overhead)));
  else
    out.push_back(ok("mtu", dev, detail));
}

// A device in native mode (type srnic_native) is listed by libibverbs only when srnic's own
// provider is loaded: installed (plugin and driver file), or named by RDMAV_DRIVERS (a path
// prefix, to which libibverbs appends -rdmav34.so).
DoctorCheck check_native_provider(const fs::path &root, const std::string &dev,
                                  const DoctorOptions &opts) {
  std::error_code ec;
  std::string env = opts.rdmav_drivers;
  for (std::size_t pos = 0; pos <= env.size();) {
    std::size_t end = env.find_first_of(":;", pos);
    if (end == std::string::npos)
      end = env.size();
    fs::path p = env.substr(pos, end - pos);
    pos = end + 1;
    if (p.filename() != "libsrnic")
      continue;
    fs::path so = p;
    so += "-rdmav34.so";
    if (fs::exists(root / so.relative_path(), ec))
      return ok("native_provider", dev, fmt::format("srnic provider {} (RDMAV_DRIVERS)", so.string()));
  }
  std::string plugin = find_plugin(root, "srnic");
  if (!plugin.empty() && fs::exists(root / "etc/libibverbs.d/srnic.driver", ec))
    return ok("native_provider", dev, fmt::format("srnic provider {}", plugin));
  return problem(CheckStatus::fail, "native_provider", dev,
                 "in native mode (type srnic_native) but srnic's provider is not installed: "
                 "libibverbs leaves the device out of its list",
                 "apt install ./srnic-tools_*.deb (it holds the provider), or "
                 "RDMAV_DRIVERS=<checkout>/build/userspace/provider/libsrnic, or make the device "
                 "in the default mode: rdma link add NAME type srnic netdev IFNAME");
}

// Appends the checks of one srnic device, dev, whose sysfs view is view.
void check_device(const fs::path &root, const std::string &dev, const Result<DeviceView> &view,
                  const DoctorOptions &opts, const DevicesByNetdev &by_netdev,
                  std::vector<DoctorCheck> &out) {
  std::size_t first = out.size();
  out.push_back(check_netdev(dev, view));
  if (!view)
    return;
  const DeviceView &v = *view;
  std::string nd = v.netdev.value_or("");
  if (out.back().status == CheckStatus::ok)
    check_netdev_state(v, dev, nd, by_netdev, out);
  if (v.provider == "native")
    out.push_back(check_native_provider(root, dev, opts));

  const PortView *port = v.ports.empty() ? nullptr : &v.ports.front();
  if (!port)
    out.push_back(problem(CheckStatus::fail, "port_active", dev, "no port in sysfs",
                          "srnicctl dev del " + dev));
  else if (port->state != "ACTIVE")
    out.push_back(
        problem(CheckStatus::fail, "port_active", dev,
                fmt::format("port {} is {} ({})", port->port, port->state, port->phys_state),
                nd.empty() ? readd_fix(dev)
                           : fmt::format("ip link set {} up (the port follows "
                                         "the netdev's carrier)",
                                         nd)));
  else
    out.push_back(ok("port_active", dev, fmt::format("port {} is ACTIVE", port->port)));

  const GidEntry *gid = port ? pick_v2_gid(*port) : nullptr;
  if (!gid)
    out.push_back(problem(CheckStatus::fail, "roce_v2_gid", dev, "no RoCE v2 GID",
                          fmt::format("ip addr add ADDRESS/PREFIX dev {} (GIDs come from the "
                                      "netdev's IP addresses; IPv6 link-local needs it up)",
                                      nd.empty() ? "IFNAME" : nd)));
  else
    out.push_back(ok("roce_v2_gid", dev,
                     fmt::format("RoCE v2 GID {} at index {}", gid->gid, gid->index)));

  bool healthy = std::none_of(out.begin() + static_cast<long>(first), out.end(),
                              [](const DoctorCheck &c) { return c.status == CheckStatus::fail; });
  if (!opts.selftest) {
    out.push_back({"selftest", dev, CheckStatus::skip, "not run (--no-selftest)", {}});
  } else if (v.netdev_elsewhere) {
    out.push_back({"selftest", dev, CheckStatus::skip,
                   "not run: its netdev is in another network namespace", {}});
  } else if (!healthy || !gid) {
    out.push_back({"selftest", dev, CheckStatus::skip,
                   "not run: fix the problems above first", {}});
  } else {
    Result<verbs::SelftestResult> r = opts.run_selftest(dev, gid->index);
    if (r)
      out.push_back(ok("selftest", dev,
                       fmt::format("loopback RC QP pair via GID {}: RDMA WRITE {} B and SEND {} B "
                                   "verified byte for byte (path MTU {})",
                                   gid->index, r->write_bytes, r->send_bytes, r->path_mtu)));
    else
      out.push_back(problem(CheckStatus::fail, "selftest", dev,
                            "loopback self-test failed: " + to_string(r.error()),
                            "look at dmesg for srnic messages; rerun with the srnic counters "
                            "(srnicctl stats) to see where packets stop"));
  }
}

// The failed srnic_devices check of srnic devices that cannot be listed.
DoctorCheck unlisted(const Error &e) {
  return problem(CheckStatus::fail, "srnic_devices", "", to_string(e), "");
}

// The srnic devices; when they cannot be listed, a failed srnic_devices check says why.
Result<std::vector<std::string>> list_devices(const Sysfs &sysfs, std::vector<DoctorCheck> &out) {
  Result<std::vector<std::string>> devs = srnic_devices(sysfs);
  if (!devs)
    out.push_back(unlisted(devs.error()));
  return devs;
}

Result<void> doctor(Context &ctx, const DoctorOptions &opts) {
  std::vector<DoctorCheck> checks = run_doctor(ctx.sysfs, ctx.root, opts);
  for (const DoctorCheck &c : checks) {
    if (ctx.out.format() == OutputFormat::text) {
      ctx.out.text_line(format_check(c));
      continue;
    }
    ctx.out.begin_record();
    ctx.out.field("check", c.check);
    if (!c.dev.empty())
      ctx.out.field("dev", c.dev);
    ctx.out.field("status", status_name(c.status));
    ctx.out.field("detail", c.detail);
    if (!c.fix.empty())
      ctx.out.field("fix", c.fix);
    ctx.out.end_record();
  }
  std::size_t problems = count_problems(checks);
  if (problems > 0)
    return Error{0, fmt::format("{} problem{} found; each has its fix above", problems,
                                problems == 1 ? "" : "s")};
  return {};
}

// srnicctl health: run_health()'s checks as records of check, ok (not failed) and detail
// (prefixed with the device for per-device checks).
Result<void> health(Context &ctx) {
  std::vector<DoctorCheck> checks = run_health(ctx.sysfs);
  for (const DoctorCheck &c : checks) {
    ctx.out.begin_record();
    ctx.out.field("check", c.check);
    ctx.out.field("ok", c.status != CheckStatus::fail);
    ctx.out.field("detail", c.dev.empty() ? c.detail : c.dev + ": " + c.detail);
    ctx.out.end_record();
  }
  std::size_t failed = count_problems(checks);
  if (failed > 0)
    return Error{0, fmt::format("{} of {} health checks failed", failed, checks.size())};
  return {};
}

} // namespace

std::string_view status_name(CheckStatus s) {
  switch (s) {
  case CheckStatus::ok:
    return "ok";
  case CheckStatus::warn:
    return "warn";
  case CheckStatus::fail:
    return "fail";
  case CheckStatus::skip:
    return "skip";
  }
  return "?";
}

std::vector<DoctorCheck> run_doctor(const Sysfs &sysfs, const fs::path &root,
                                    const DoctorOptions &opts) {
  std::vector<DoctorCheck> checks;
  checks.push_back(check_module(sysfs));
  checks.push_back(check_rxe(sysfs));
  checks.push_back(check_provider(root));
  // each device's view read once: other_rdma and the bond and bridge checks need the map
  // of netdevs before the devices' own checks
  Result<std::vector<std::string>> devs = srnic_devices(sysfs);
  std::vector<Result<DeviceView>> views;
  DevicesByNetdev by_netdev;
  for (const std::string &d : devs ? *devs : std::vector<std::string>{}) {
    const Result<DeviceView> &v = views.emplace_back(read_device_view(sysfs, d));
    if (v && v->netdev && !v->netdev_elsewhere)
      by_netdev.emplace(*v->netdev, d);
  }
  check_other_rdma(sysfs, by_netdev, checks);
  if (!devs) {
    checks.push_back(unlisted(devs.error()));
    return checks;
  }
  if (devs->empty()) {
    checks.push_back(problem(CheckStatus::fail, "srnic_devices", "", "no srnic device",
                             "srnicctl dev add srnic0 netdev IFNAME (an Ethernet netdev)"));
    return checks;
  }
  checks.push_back(ok("srnic_devices", "", fmt::format("{}", fmt::join(*devs, ", "))));
  for (std::size_t i = 0; i < devs->size(); i++)
    check_device(root, (*devs)[i], views[i], opts, by_netdev, checks);
  return checks;
}

std::vector<DoctorCheck> run_health(const Sysfs &sysfs) {
  std::vector<DoctorCheck> checks = {check_module(sysfs), check_rxe(sysfs)};
  Result<std::vector<std::string>> devs = list_devices(sysfs, checks);
  for (const std::string &d : devs ? *devs : std::vector<std::string>{})
    checks.push_back(check_netdev(d, read_device_view(sysfs, d)));
  return checks;
}

std::size_t count_problems(const std::vector<DoctorCheck> &checks) {
  return static_cast<std::size_t>(std::count_if(
      checks.begin(), checks.end(), [](const DoctorCheck &c) { return c.status == CheckStatus::fail; }));
}

std::string format_check(const DoctorCheck &c) {
  std::string status(status_name(c.status));
  std::transform(status.begin(), status.end(), status.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
  std::string line = fmt::format("{:<4}  {:<13} {}{}", status, c.check,
                                 c.dev.empty() ? "" : c.dev + ": ", c.detail);
  if (!c.fix.empty())
    line += fmt::format("\n      fix: {}", c.fix);
  return line;
}

void cmd_doctor(CLI::App &root, Action &action) {
  CLI::App *cmd = root.add_subcommand(
      "doctor", "Diagnose this host for srnic, each problem with its fix; loopback self-test");
  auto no_selftest = std::make_shared<bool>(false);
  cmd->add_flag("--no-selftest", *no_selftest, "Skip the loopback self-test");
  cmd->callback([&action, no_selftest] {
    DoctorOptions opts;
    opts.selftest = !*no_selftest;
    if (const char *env = std::getenv("RDMAV_DRIVERS"))
      opts.rdmav_drivers = env;
    action = [opts](Context &ctx) { return doctor(ctx, opts); };
  });
}

void cmd_health(CLI::App &root, Action &action) {
  CLI::App *cmd = root.add_subcommand(
      "health", "Check that srnic is loaded and usable on this host (doctor's quick checks)");
  cmd->callback([&action] { action = health; });
}

} // namespace srnic::ctl

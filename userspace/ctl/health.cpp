// SPDX-License-Identifier: GPL-2.0
#include "health.h"

#include "command.h"
#include "sysfs_view.h"

#include <algorithm>
#include <filesystem>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace srnic::ctl {

namespace {

HealthCheck check_srnic_loaded(const Sysfs &sysfs) {
  const std::filesystem::path mod = "module/srnic";
  if (sysfs.is_dir(mod))
    return {"srnic_loaded", true, "module srnic is loaded"};
  return {"srnic_loaded", false,
          fmt::format("module srnic is not loaded ({} absent)", sysfs.path(mod).string())};
}

HealthCheck check_rxe_not_loaded(const Sysfs &sysfs) {
  const std::filesystem::path mod = "module/rdma_rxe";
  if (!sysfs.exists(mod))
    return {"rxe_not_loaded", true, "module rdma_rxe is not loaded"};
  return {"rxe_not_loaded", false,
          "module rdma_rxe is loaded; it cannot coexist with srnic (rmmod rdma_rxe)"};
}

HealthCheck check_netdev(const Sysfs &sysfs, const std::string &ibdev) {
  std::optional<SrnicAttrs> attrs = srnic_attrs(sysfs, ibdev);
  if (!attrs || !attrs->netdev || attrs->netdev->empty())
    return {"netdev_present", false, fmt::format("{}: no srnic/netdev attribute", ibdev)};
  const std::string &netdev = *attrs->netdev;
  // A netdev name never contains '/'; refuse one that would leave class/net.
  if (netdev.find('/') == std::string::npos &&
      sysfs.exists(std::filesystem::path("class/net") / netdev))
    return {"netdev_present", true, fmt::format("{}: netdev {} exists", ibdev, netdev)};
  return {"netdev_present", false, fmt::format("{}: netdev {} does not exist", ibdev, netdev)};
}

Result<void> health(Context &ctx) {
  std::vector<HealthCheck> checks = run_health_checks(ctx.sysfs);
  for (const HealthCheck &c : checks) {
    ctx.out.begin_record();
    ctx.out.field("check", c.check);
    ctx.out.field("ok", c.ok);
    ctx.out.field("detail", c.detail);
    ctx.out.end_record();
  }
  auto failed = std::count_if(checks.begin(), checks.end(), [](const auto &c) { return !c.ok; });
  if (failed > 0)
    return Error{0, fmt::format("{} of {} health checks failed", failed, checks.size())};
  return {};
}

} // namespace

std::vector<HealthCheck> run_health_checks(const Sysfs &sysfs) {
  std::vector<HealthCheck> checks;
  checks.push_back(check_srnic_loaded(sysfs));
  checks.push_back(check_rxe_not_loaded(sysfs));
  Result<std::vector<std::string>> devs = srnic_devices(sysfs);
  if (!devs) {
    checks.push_back({"netdev_present", false, to_string(devs.error())});
    return checks;
  }
  for (const std::string &ibdev : *devs)
    checks.push_back(check_netdev(sysfs, ibdev));
  return checks;
}

void cmd_health(CLI::App &root, Action &action) {
  CLI::App *health_cmd =
      root.add_subcommand("health", "Check that srnic is loaded and usable on this host");
  health_cmd->callback([&action] { action = health; });
}

} // namespace srnic::ctl

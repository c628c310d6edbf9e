// SPDX-License-Identifier: GPL-2.0
//
// srnicctl stats [DEV]: every port counter of srnic devices (ports/N/hw_counters, what
// `rdma statistic show` prints), one record per device and port. The set of counters is
// whatever the module exports. Other drivers' RDMA devices on Ethernet (a hardware RoCE NIC
// such as mlx5) follow, with kind "other": their IBA port counters (ports/N/counters) and
// hw_counters, whichever they have.
#include "command.h"
#include "sysfs_view.h"

#include <cstdint>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace srnic::ctl {

namespace {

Result<void> stats(Context &ctx, const std::optional<std::string> &name) {
  return for_each_device_view(
      ctx.sysfs, name,
      [&ctx](const DeviceView &v) -> Result<void> {
        for (const PortView &p : v.ports) {
          auto counters = read_hw_counters(ctx.sysfs, v.name, p.port);
          std::vector<std::pair<std::string, std::uint64_t>> all;
          if (v.kind == "srnic") {
            if (!counters)
              return Error{counters.error().errnum,
                           fmt::format("{} port {}: no counters ({})", v.name, p.port,
                                       counters.error().msg)};
          } else if (auto port = read_port_counters(ctx.sysfs, v.name, p.port)) {
            all = std::move(*port);
          }
          if (counters)
            all.insert(all.end(), counters->begin(), counters->end());
          ctx.out.begin_record();
          ctx.out.field("dev", v.name);
          ctx.out.field("kind", v.kind);
          ctx.out.field("port", p.port);
          for (const auto &[counter, value] : all)
            ctx.out.field(counter, value);
          ctx.out.end_record();
        }
        return {};
      },
      Scope::with_other);
}

} // namespace

void cmd_stats(CLI::App &root, Action &action) {
  add_dev_filter_command(root, "stats",
                         "Port counters of srnic devices, then of other RDMA devices on Ethernet "
                         "(all, or DEV)",
                         action, stats, "RDMA device name");
}

} // namespace srnic::ctl

// SPDX-License-Identifier: GPL-2.0
//
// srnicctl stats [DEV]: every port counter of srnic devices (ports/N/hw_counters, what
// `rdma statistic show` prints), one record per device and port. The set of counters is
// whatever the module exports.
#include "command.h"
#include "srnic_dev.h"

#include <utility>

#include <fmt/format.h>

namespace srnic::ctl {

namespace {

Result<void> stats(Context &ctx, const std::optional<std::string> &name) {
  return for_each_device_view(ctx.sysfs, name, [&ctx](const DeviceView &v) -> Result<void> {
    for (const PortView &p : v.ports) {
      auto counters = read_hw_counters(ctx.sysfs, v.name, p.port);
      if (!counters)
        return Error{counters.error().errnum, fmt::format("{} port {}: no counters ({})", v.name,
                                                          p.port, counters.error().msg)};
      ctx.out.begin_record();
      ctx.out.field("dev", v.name);
      ctx.out.field("port", p.port);
      for (const auto &[counter, value] : *counters)
        ctx.out.field(counter, value);
      ctx.out.end_record();
    }
    return {};
  });
}

} // namespace

void cmd_stats(CLI::App &root, Action &action) {
  add_dev_filter_command(root, "stats", "Port counters of srnic devices (all, or DEV)", action,
                         stats);
}

} // namespace srnic::ctl

// SPDX-License-Identifier: GPL-2.0
//
// Helpers shared by the cmd_<object>() entry points (command.h).
#include "command.h"

#include <memory>
#include <utility>

#include <CLI/CLI.hpp>

namespace srnic::ctl {

CLI::App *add_dev_filter_command(CLI::App &parent, const std::string &name, const std::string &help,
                                 Action &action, DevFilterFn fn, const std::string &dev_help) {
  CLI::App *cmd = parent.add_subcommand(name, help);
  auto dev = std::make_shared<std::string>();
  CLI::Option *opt = cmd->add_option("DEV", *dev, dev_help);
  cmd->callback([&action, fn = std::move(fn), dev, opt] {
    std::optional<std::string> filter;
    if (opt->count() > 0)
      filter = *dev;
    action = [fn, filter](Context &ctx) { return fn(ctx, filter); };
  });
  return cmd;
}

} // namespace srnic::ctl

// SPDX-License-Identifier: GPL-2.0
//
// The interface between srnicctl's front end (cli.cpp) and its objects. As in iproute2's
// rdma, each object lives in its own file and exports one cmd_<object>() entry point; here
// it adds the object's CLI11 subcommand tree and, from the callback of whichever command
// was parsed, sets the Action to run. A new object (qp, dcqcn, ...) is one file plus one
// line in cli.cpp's object table.
#pragma once

#include "lib/output.h"
#include "lib/result.h"
#include "lib/sysfs.h"

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace srnic::ctl {

// What a command may use. Output is already set up from -j/-p.
struct Context {
  Output &out;
  const Sysfs &sysfs;
  // The file system root for files outside sysfs (doctor: libibverbs providers); "/"
  // except in tests.
  const std::filesystem::path &root;
};

// The command chosen on the command line. An Error is printed as one stderr line and
// makes srnicctl exit with EXIT_FAILURE.
using Action = std::function<Result<void>(Context &)>;

// What a command with an optional DEV argument runs: every device when the filter is
// empty, else only that one.
using DevFilterFn = std::function<Result<void>(Context &, const std::optional<std::string> &)>;

// Adds subcommand name (with help) to parent, taking one optional positional DEV
// (described by dev_help); when it is parsed, sets action to run fn with DEV, or with
// std::nullopt when DEV was not given. Returns the subcommand.
CLI::App *add_dev_filter_command(CLI::App &parent, const std::string &name, const std::string &help,
                                 Action &action, DevFilterFn fn,
                                 const std::string &dev_help = "srnic device name");

void cmd_dev(CLI::App &root, Action &action);
void cmd_health(CLI::App &root, Action &action);
void cmd_show(CLI::App &root, Action &action);
void cmd_stats(CLI::App &root, Action &action);
void cmd_qp(CLI::App &root, Action &action);
void cmd_dcqcn(CLI::App &root, Action &action);
void cmd_doctor(CLI::App &root, Action &action);
void cmd_top(CLI::App &root, Action &action);
void cmd_lat(CLI::App &root, Action &action);

} // namespace srnic::ctl

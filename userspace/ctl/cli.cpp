// SPDX-License-Identifier: GPL-2.0
#include "cli.h"

#include "command.h"

#include <array>
#include <cstdlib>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace srnic::ctl {

namespace {

// Objects in the order `srnicctl --help` lists them.
constexpr std::array objects = {
    cmd_dev,
    cmd_show,
    cmd_stats,
    cmd_qp,
    cmd_dcqcn,
    cmd_doctor,
    cmd_top,
    cmd_lat,
    cmd_health,
};

struct GlobalOptions {
  bool json = false;
  bool pretty = false;
};

// Help speaks of objects and commands, as iproute2's rdma does, not of subcommands.
void label_help(CLI::App &app) {
  app.get_formatter()->label("SUBCOMMAND", "OBJECT");
  for (CLI::App *object : app.get_subcommands([](CLI::App *) { return true; })) {
    object->group("Objects");
    auto formatter = std::make_shared<CLI::Formatter>();
    formatter->label("SUBCOMMAND", "COMMAND");
    object->formatter(formatter);
    for (CLI::App *command : object->get_subcommands([](CLI::App *) { return true; })) {
      command->group("Commands");
      command->formatter(formatter);
    }
  }
}

void add_global_options(CLI::App &app, GlobalOptions &opts) {
  app.add_flag("-j,--json", opts.json, "Print JSON: an array with one object per record");
  app.add_flag("-p,--pretty", opts.pretty, "Pretty-print JSON output");
  app.set_version_flag("-V,--version", "srnicctl " SRNIC_VERSION);
}

// The deepest subcommand the command line reached: the root, an object or a command.
const CLI::App *deepest_parsed(const CLI::App &app) {
  const CLI::App *at = &app;
  while (!at->get_subcommands().empty())
    at = at->get_subcommands().front();
  return at;
}

std::string names_of(const CLI::App &app) {
  std::vector<std::string> names;
  for (const CLI::App *sub : app.get_subcommands([](const CLI::App *) { return true; }))
    names.push_back(sub->get_name());
  return fmt::format("{}", fmt::join(names, ", "));
}

// iproute2-style wording for the usual mistakes; CLI11's own for the rest.
std::string usage_message(const CLI::App &app, const CLI::ParseError &e) {
  const CLI::App *at = deepest_parsed(app);
  std::vector<std::string> extra = app.remaining(true);
  bool at_root = at == &app;
  if (extra.empty()) {
    if (at_root)
      return fmt::format("missing object; one of: {}", names_of(app));
    return e.what();
  }
  const std::string &arg = extra.front();
  if (arg.starts_with('-')) {
    bool global = !at_root && app.get_option_no_throw(arg) != nullptr;
    return fmt::format("unknown option \"{}\"{}", arg,
                       global ? "; global options go before the object" : "");
  }
  if (at_root)
    return fmt::format("unknown object \"{}\"; one of: {}", arg, names_of(app));
  if (!at->get_subcommands([](const CLI::App *) { return true; }).empty())
    return fmt::format("unknown command \"{}\" for {}; one of: {}", arg, at->get_name(),
                       names_of(*at));
  return fmt::format("unexpected argument \"{}\" for {}", arg, at->get_name());
}

} // namespace

int run(const std::vector<std::string> &args, const Sysfs &sysfs, std::ostream &out,
        std::ostream &err, const std::filesystem::path &root) {
  CLI::App app{"Inspect and control srnic, the software RoCEv2 RDMA NIC.", "srnicctl"};
  GlobalOptions opts;
  add_global_options(app, opts);
  app.require_subcommand(1);
  Action action;
  for (auto add_object : objects)
    add_object(app, action);
  label_help(app);

  // CLI11 consumes a vector from the back.
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError &e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success))
      return app.exit(e, out, err); // --help, --version
    err << "srnicctl: " << usage_message(app, e) << " (see 'srnicctl --help')\n";
    return EXIT_FAILURE;
  }
  if (!action) {
    // Every object sets one; reaching this is a bug in a cmd_<object>().
    err << "srnicctl: internal error: nothing to do\n";
    return EXIT_FAILURE;
  }

  Output output(out, opts.json ? OutputFormat::json : OutputFormat::text, opts.pretty);
  Context ctx{output, sysfs, root};
  Result<void> res = action(ctx);
  // Print what was gathered even on failure, so -j output stays a JSON document.
  output.finish();
  if (!res) {
    err << "srnicctl: " << to_string(res.error()) << '\n';
    return EXIT_FAILURE;
  }
  return EXIT_SUCCESS;
}

} // namespace srnic::ctl

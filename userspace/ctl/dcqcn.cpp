// SPDX-License-Identifier: GPL-2.0
#include "dcqcn.h"

#include "command.h"
#include "sysfs_view.h"

#include <algorithm>
#include <cerrno>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace srnic::ctl {

namespace {

// Where dev's knobs live; for anything but an srnic device or another driver's device on
// Ethernet, where an srnic device's would (so that errors name a path).
std::filesystem::path side_path(const Sysfs &sysfs, std::string_view dev, std::string_view side) {
  return dcqcn_dir(sysfs, dev, side)
      .value_or(std::filesystem::path("class/infiniband") / dev / knob_dir(side));
}

void knob_field(Output &out, const Knob &k) {
  if (std::optional<std::uint64_t> n = parse_u64(k.value))
    out.field(k.name, *n);
  else
    out.field(k.name, k.value);
}

Result<void> dcqcn_show(Context &ctx, const std::optional<std::string> &name) {
  Result<std::vector<std::string>> devs = select_devices(ctx.sysfs, name, Scope::with_other);
  if (!devs)
    return std::move(devs).error();
  for (const std::string &d : *devs) {
    bool srnic = srnic_attrs(ctx.sysfs, d).has_value();
    // Listing all devices, another driver's device without mlx5's ecn/ knobs is left out.
    if (!srnic && !name && !ctx.sysfs.is_dir(side_path(ctx.sysfs, d, "np")) &&
        !ctx.sysfs.is_dir(side_path(ctx.sysfs, d, "rp")))
      continue;
    for (std::string_view side : {"np", "rp"}) {
      Result<std::vector<Knob>> knobs = read_knobs(ctx.sysfs, d, side);
      if (!knobs)
        return std::move(knobs).error();
      ctx.out.begin_record();
      ctx.out.field("dev", d);
      ctx.out.field("kind", srnic ? "srnic" : "other");
      ctx.out.field("side", side);
      for (const Knob &k : *knobs)
        knob_field(ctx.out, k);
      ctx.out.end_record();
    }
  }
  return {};
}

Result<void> dcqcn_set(Context &ctx, const std::string &dev, const std::string &side,
                       const std::string &knob, const std::string &value) {
  Result<Knob> set = set_knob(ctx.sysfs, dev, side, knob, value);
  if (!set)
    return std::move(set).error();
  ctx.out.begin_record();
  ctx.out.field("dev", dev);
  ctx.out.field("side", side);
  knob_field(ctx.out, *set);
  ctx.out.end_record();
  return {};
}

} // namespace

std::string knob_dir(std::string_view side) {
  if (side == "np")
    return "roce_np";
  if (side == "rp")
    return "roce_rp";
  return {};
}

Result<std::vector<Knob>> read_knobs(const Sysfs &sysfs, std::string_view dev,
                                     std::string_view side) {
  if (knob_dir(side).empty())
    return Error{ENOENT, fmt::format("unknown DCQCN side \"{}\"; one of: np, rp", side)};
  std::filesystem::path dir = side_path(sysfs, dev, side);
  Result<std::vector<std::string>> names = sysfs.list_dir(dir);
  if (!names) {
    if (srnic_attrs(sysfs, dev))
      return Error{ENOENT, fmt::format("{} has no DCQCN knobs ({} is absent: this srnic module "
                                       "has no DCQCN)",
                                       dev, sysfs.path(dir).string())};
    return Error{ENOENT, fmt::format("{} has no DCQCN knobs ({} is absent)", dev,
                                     sysfs.path(dir).string())};
  }
  std::vector<Knob> knobs;
  for (const std::string &n : *names) {
    if (sysfs.is_dir(dir / n)) {
      // mlx5's per-priority files: enable/0 .. enable/7
      if (Result<std::vector<std::string>> sub = sysfs.list_dir(dir / n))
        for (const std::string &m : *sub) {
          if (sysfs.is_dir(dir / n / m))
            continue;
          Result<std::string> v = sysfs.read_attr(dir / n / m);
          knobs.push_back({n + "/" + m, v ? *v : std::string()});
        }
      continue;
    }
    // A write-only or unreadable knob still shows, with an empty value.
    Result<std::string> v = sysfs.read_attr(dir / n);
    knobs.push_back({n, v ? *v : std::string()});
  }
  return knobs;
}

Error knob_write_error(int errnum, std::string_view dev, std::string_view side,
                       std::string_view knob, std::string_view value) {
  std::string what = fmt::format("{}: {}/{}", dev, knob_dir(side), knob);
  if (errnum == EINVAL || errnum == ERANGE)
    return Error{errnum, fmt::format("{}: the kernel refused value \"{}\"", what, value)};
  if (errnum == EACCES || errnum == EPERM)
    return Error{errnum, fmt::format("{}: setting DCQCN knobs needs root", what)};
  return Error{errnum, fmt::format("{}: cannot write \"{}\"", what, value)};
}

Result<Knob> set_knob(const Sysfs &sysfs, std::string_view dev, std::string_view side,
                      std::string_view knob, std::string_view value) {
  Result<std::vector<std::string>> devs = select_devices(sysfs, std::string(dev));
  if (!devs)
    return std::move(devs).error();
  Result<std::vector<Knob>> knobs = read_knobs(sysfs, dev, side);
  if (!knobs)
    return std::move(knobs).error();
  auto it = std::find_if(knobs->begin(), knobs->end(),
                         [knob](const Knob &k) { return k.name == knob; });
  if (it == knobs->end()) {
    std::vector<std::string> names;
    for (const Knob &k : *knobs)
      names.push_back(k.name);
    return Error{ENOENT, fmt::format("{}: unknown {} knob \"{}\"; knobs: {}", dev, side, knob,
                                     fmt::join(names, ", "))};
  }
  std::filesystem::path rel = side_path(sysfs, dev, side) / it->name;
  if (Result<void> w = sysfs.write_attr(rel, value); !w) {
    return knob_write_error(w.error().errnum, dev, side, knob, value);
  }
  Result<std::string> now = sysfs.read_attr(rel);
  return Knob{it->name, now ? *now : std::string(value)};
}

void cmd_dcqcn(CLI::App &root, Action &action) {
  CLI::App *dcqcn = root.add_subcommand("dcqcn", "DCQCN knobs (default command: show)");
  dcqcn->require_subcommand(0, 1);

  add_dev_filter_command(*dcqcn, "show",
                         "Knobs of all srnic devices and of other RDMA devices with mlx5's "
                         "class/net/<netdev>/ecn/ knobs, or DEV only",
                         action, dcqcn_show, "RDMA device name");

  CLI::App *set = dcqcn->add_subcommand("set", "Set one knob: DEV np|rp KNOB VALUE");
  auto args = std::make_shared<std::vector<std::string>>();
  set->add_option("ARGS", *args, "DEV np|rp KNOB VALUE")->expected(4)->required();
  set->callback([&action, args] {
    const std::vector<std::string> &a = *args;
    if (knob_dir(a[1]).empty())
      throw CLI::ValidationError(fmt::format("side must be np or rp, not \"{}\"", a[1]));
    action = [a](Context &ctx) { return dcqcn_set(ctx, a[0], a[1], a[2], a[3]); };
  });

  dcqcn->callback([&action, dcqcn] {
    if (dcqcn->get_subcommands().empty())
      action = [](Context &ctx) { return dcqcn_show(ctx, std::nullopt); };
  });
}

} // namespace srnic::ctl

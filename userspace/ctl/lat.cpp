// SPDX-License-Identifier: GPL-2.0
//
// srnicctl lat [DEV] [-d SEC]: log2 histogram of send WQE post-to-completion latency from
// the srnic_lat BPF programs (bpf/srnic_lat.bpf.c), like libbpf-tools' biolatency.
#include "command.h"
#include "probe_view.h"
#include "probes.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "srnic_lat.skel.h"

namespace srnic::ctl {

namespace {

constexpr std::string_view lat_events[] = {"srnic_wqe_post", "srnic_wqe_done"};

using LatSkel = std::unique_ptr<srnic_lat_bpf, decltype(&srnic_lat_bpf::destroy)>;

struct LatOptions {
  std::optional<std::string> dev;
  double duration = 5.0;
  bool verbose = false;
};

Result<void> lat(Context &ctx, const LatOptions &opts) {
  if (Result<void> ok = check_tracepoints(ctx.sysfs, geteuid() == 0, lat_events); !ok)
    return ok;
  probes::set_libbpf_verbose(opts.verbose);
  std::optional<std::uint32_t> dev;
  if (opts.dev) {
    Result<std::uint32_t> index = probes::dev_index(*opts.dev);
    if (!index)
      return std::move(index).error();
    dev = *index;
  }
  LatSkel skel(srnic_lat_bpf::open(), &srnic_lat_bpf::destroy);
  if (!skel)
    return probes::libbpf_error(errno, "cannot open the srnic_lat BPF object");
  skel->rodata->filter_dev = dev.has_value();
  skel->rodata->targ_dev = dev.value_or(0);
  if (int err = srnic_lat_bpf::load(skel.get()))
    return probes::libbpf_error(err, "cannot load the srnic_lat BPF programs (run with -v for "
                                     "the verifier log)");
  if (int err = srnic_lat_bpf::attach(skel.get()))
    return probes::libbpf_error(err, "cannot attach to the srnic tracepoints");

  probes::StopOnSignal signals;
  if (ctx.out.format() == OutputFormat::text)
    ctx.out.text_line(fmt::format("Tracing srnic send WQE latency for {} s... Hit Ctrl-C to end.",
                                  opts.duration));
  (void)probes::sleep_for(std::chrono::duration<double>(opts.duration));

  srnic_lat_hist h{};
  std::uint32_t zero = 0;
  if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.hist), &zero, &h) != 0)
    return Error{errno, "cannot read the latency histogram"};
  std::vector<HistBucket> buckets = hist_buckets(h);
  if (ctx.out.format() == OutputFormat::text) {
    ctx.out.text_line(format_log2_hist(buckets, "usecs"));
    ctx.out.text_line(fmt::format("{} completions, mean {:.1f} us, {} without a recorded post",
                                  h.count,
                                  h.count ? static_cast<double>(h.sum_ns) / 1000.0 /
                                                static_cast<double>(h.count)
                                          : 0.0,
                                  h.unmatched));
    return {};
  }
  for (const HistBucket &b : buckets) {
    ctx.out.begin_record();
    ctx.out.field("usecs_low", b.low);
    ctx.out.field("usecs_high", b.high);
    ctx.out.field("count", b.count);
    ctx.out.end_record();
  }
  return {};
}

} // namespace

void cmd_lat(CLI::App &root, Action &action) {
  CLI::App *cmd = root.add_subcommand(
      "lat", "Histogram of send WQE post-to-completion latency (eBPF)");
  auto opts = std::make_shared<LatOptions>();
  auto dev = std::make_shared<std::string>();
  CLI::Option *dev_opt = cmd->add_option("DEV", *dev, "Only this RDMA device");
  cmd->add_option("-d,--duration", opts->duration, "Seconds to trace (default 5)")
      ->check(CLI::Range(0.1, 86400.0));
  cmd->add_flag("-v,--verbose", opts->verbose, "libbpf debug output");
  cmd->callback([&action, opts, dev, dev_opt] {
    LatOptions o = *opts;
    if (dev_opt->count() > 0)
      o.dev = *dev;
    action = [o](Context &ctx) { return lat(ctx, o); };
  });
}

} // namespace srnic::ctl

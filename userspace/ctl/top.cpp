// SPDX-License-Identifier: GPL-2.0
//
// srnicctl top [DEV] [-i SEC] [-n COUNT]: live per-QP view from the srnic_top BPF
// programs (bpf/srnic_top.bpf.c) on the srnic tracepoints.
#include "command.h"
#include "probe_view.h"
#include "probes.h"
#include "qp.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "srnic_top.skel.h"

namespace srnic::ctl {

namespace {

constexpr std::string_view top_events[] = {"srnic_pkt_tx",  "srnic_pkt_rx", "srnic_retransmit",
                                           "srnic_nak",     "srnic_cnp",    "srnic_rate"};

// The skeleton, destroyed (programs detached, maps freed) whatever way top ends.
using TopSkel = std::unique_ptr<srnic_top_bpf, decltype(&srnic_top_bpf::destroy)>;

struct TopOptions {
  std::optional<std::string> dev;
  double interval = 1.0;
  unsigned int count = 0; // 0: until interrupted
  bool verbose = false;
};

Result<QpTotals> snapshot(const srnic_top_bpf &skel) {
  QpTotals totals;
  int fd = bpf_map__fd(skel.maps.qp_stats);
  srnic_qp_key key{}, next{};
  srnic_qp_key *prev = nullptr;
  while (bpf_map_get_next_key(fd, prev, &next) == 0) {
    srnic_qp_stats s{};
    if (bpf_map_lookup_elem(fd, &next, &s) == 0)
      totals[QpId{next.dev, next.qpn}] = s;
    key = next;
    prev = &key;
  }
  if (errno != ENOENT)
    return Error{errno, "cannot read the qp_stats map"};
  return totals;
}

// For QPs that had no srnic_rate event: the pacing rate the driver reports in
// `rdma resource show qp -dd` (the first driver attribute whose name starts with "rate").
void fill_rates_from_driver(std::vector<TopRow> &rows) {
  std::map<std::uint32_t, std::vector<QpRes>> by_dev;
  for (TopRow &r : rows) {
    if (r.rate)
      continue;
    auto it = by_dev.find(r.id.dev);
    if (it == by_dev.end()) {
      Result<std::vector<QpRes>> qps = dump_qps(r.id.dev);
      it = by_dev.emplace(r.id.dev, qps ? std::move(qps).value() : std::vector<QpRes>{}).first;
    }
    for (const QpRes &qp : it->second) {
      if (qp.lqpn != r.id.qpn)
        continue;
      for (const DriverAttr &d : qp.driver)
        if (d.name.starts_with("rate") && d.value >= 0) {
          r.rate = static_cast<std::uint64_t>(d.value);
          break;
        }
    }
  }
}

Result<TopSkel> open_top(const TopOptions &opts, std::optional<std::uint32_t> dev) {
  TopSkel skel(srnic_top_bpf::open(), &srnic_top_bpf::destroy);
  if (!skel)
    return probes::libbpf_error(errno, "cannot open the srnic_top BPF object");
  skel->rodata->filter_dev = dev.has_value();
  skel->rodata->targ_dev = dev.value_or(0);
  (void)opts;
  if (int err = srnic_top_bpf::load(skel.get()))
    return probes::libbpf_error(err, "cannot load the srnic_top BPF programs (run with -v for "
                                     "the verifier log)");
  if (int err = srnic_top_bpf::attach(skel.get()))
    return probes::libbpf_error(err, "cannot attach to the srnic tracepoints");
  return skel;
}

Result<void> top(Context &ctx, const TopOptions &opts) {
  if (Result<void> ok = check_tracepoints(ctx.sysfs, geteuid() == 0, top_events); !ok)
    return ok;
  probes::set_libbpf_verbose(opts.verbose);
  Result<std::map<std::uint32_t, std::string>> names = probes::dev_names();
  if (!names)
    return std::move(names).error();
  std::optional<std::uint32_t> dev;
  if (opts.dev) {
    for (const auto &[index, n] : *names)
      if (n == *opts.dev)
        dev = index;
    if (!dev)
      return Error{ENODEV, fmt::format("no RDMA device {}", *opts.dev)};
  }
  Result<TopSkel> skel = open_top(opts, dev);
  if (!skel)
    return std::move(skel).error();

  probes::StopOnSignal signals;
  QpTotals prev;
  auto sample = [&](double secs) -> Result<std::vector<TopRow>> {
    Result<QpTotals> cur = snapshot(**skel);
    if (!cur)
      return std::move(cur).error();
    // Devices created while top runs get their names on the next lookup.
    for (const auto &[id, s] : *cur)
      if (!names->contains(id.dev))
        if (Result<std::map<std::uint32_t, std::string>> n = probes::dev_names())
          *names = std::move(n).value();
    std::vector<TopRow> rows = top_rows(prev, *cur, secs, *names);
    fill_rates_from_driver(rows);
    prev = std::move(cur).value();
    return rows;
  };
  return run_top(ctx.out, opts.interval, opts.count, probes::sleep_for, sample);
}

} // namespace

void cmd_top(CLI::App &root, Action &action) {
  CLI::App *cmd =
      root.add_subcommand("top", "Live per-QP throughput, packets, retransmits, CNPs, rate (eBPF)");
  auto opts = std::make_shared<TopOptions>();
  auto dev = std::make_shared<std::string>();
  CLI::Option *dev_opt = cmd->add_option("DEV", *dev, "Only this RDMA device");
  cmd->add_option("-i,--interval", opts->interval, "Seconds between updates (default 1)")
      ->check(CLI::Range(0.1, 3600.0));
  cmd->add_option("-n,--count", opts->count, "Stop after COUNT updates (default: until Ctrl-C)");
  cmd->add_flag("-v,--verbose", opts->verbose, "libbpf debug output");
  cmd->callback([&action, opts, dev, dev_opt] {
    TopOptions o = *opts;
    if (dev_opt->count() > 0)
      o.dev = *dev;
    action = [o](Context &ctx) { return top(ctx, o); };
  });
}

} // namespace srnic::ctl

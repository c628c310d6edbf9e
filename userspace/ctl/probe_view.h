// SPDX-License-Identifier: GPL-2.0
//
// What srnicctl top and lat compute and print from their BPF maps, kept apart from libbpf
// so that it is unit-tested without loading programs: per-QP rates over an interval, the
// log2 latency histogram, and whether the srnic tracepoints exist at all.
#pragma once

#include "lib/output.h"
#include "lib/result.h"
#include "lib/sysfs.h"

#include "srnic_maps.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace srnic::ctl {

struct QpId {
  std::uint32_t dev = 0;
  std::uint32_t qpn = 0;
  auto operator<=>(const QpId &) const = default;
};

using QpTotals = std::map<QpId, srnic_qp_stats>;

// One QP over one interval.
struct TopRow {
  QpId id;
  std::string dev_name;
  std::uint64_t tx_bytes = 0, rx_bytes = 0; // in the interval
  double tx_bytes_per_sec = 0, rx_bytes_per_sec = 0;
  std::uint64_t tx_pkts = 0, rx_pkts = 0, retransmits = 0, naks_tx = 0, naks_rx = 0;
  std::uint64_t cnps_tx = 0, cnps_rx = 0;
  std::optional<std::uint64_t> rate; // bytes/s; from srnic_rate, else the -dd rate
};

// Differences between two snapshots of qp_stats over `seconds`; QPs without any activity
// in the interval are left out. Sorted by tx+rx bytes, busiest first, then by QP.
// dev_names maps ib_device index to name (index printed when absent).
std::vector<TopRow> top_rows(const QpTotals &prev, const QpTotals &now, double seconds,
                             const std::map<std::uint32_t, std::string> &dev_names);

// -j: one record per row (the caller prints one JSON array per interval); text: a table.
void print_top(Output &out, std::span<const TopRow> rows, std::int64_t unix_ts,
               double interval_sec);

// top's interval loop, kept apart from libbpf: sleep(interval), then sample(seconds since
// the last sample) gives the interval's rows, which print_top() prints; -j prints one JSON
// array per interval. count 0 runs until sleep returns false (a stop was requested); the
// interval it cut short is printed too.
using TopSleep = std::function<bool(std::chrono::duration<double>)>;
using TopSample = std::function<Result<std::vector<TopRow>>(double seconds)>;
Result<void> run_top(Output &out, double interval, unsigned int count, const TopSleep &sleep,
                     const TopSample &sample);

// "1.5 MB/s"-style (decimal, as perftest's MB/sec) for the text table.
std::string human_rate(double bytes_per_sec);

struct HistBucket {
  std::uint64_t low = 0, high = 0; // [low, high] microseconds
  std::uint64_t count = 0;
};

// The slots from the first to the last non-empty one (none when all are empty), with
// libbpf-tools' bounds: slot 0 is 0-1, slot i is 2^i .. 2^(i+1)-1.
std::vector<HistBucket> hist_buckets(const srnic_lat_hist &h);

// libbpf-tools' print_log2_hist() text: "     usecs : count  distribution" and one line
// of stars per bucket, 40 stars for the largest.
std::string format_log2_hist(std::span<const HistBucket> buckets, std::string_view unit);

// The srnic events top (or lat) attaches to. Checks, in order, root (EPERM), a mounted
// tracefs (kernel/tracing or kernel/debug/tracing under sysfs) and each event directory
// under events/srnic/, with the fix in the message.
Result<void> check_tracepoints(const Sysfs &sysfs, bool is_root,
                               std::span<const std::string_view> events);

} // namespace srnic::ctl

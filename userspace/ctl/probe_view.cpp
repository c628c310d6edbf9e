// SPDX-License-Identifier: GPL-2.0
#include "probe_view.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <ctime>

#include <fmt/format.h>

namespace srnic::ctl {

std::vector<TopRow> top_rows(const QpTotals &prev, const QpTotals &now, double seconds,
                             const std::map<std::uint32_t, std::string> &dev_names) {
  std::vector<TopRow> rows;
  for (const auto &[id, cur] : now) {
    srnic_qp_stats old{};
    if (auto it = prev.find(id); it != prev.end())
      old = it->second;
    // Counters only grow while the map lives; a smaller value means the entry was
    // recreated, so count it from zero.
    auto delta = [](std::uint64_t n, std::uint64_t o) { return n >= o ? n - o : n; };
    TopRow r;
    r.id = id;
    if (auto it = dev_names.find(id.dev); it != dev_names.end())
      r.dev_name = it->second;
    else
      r.dev_name = std::to_string(id.dev);
    r.tx_bytes = delta(cur.tx_bytes, old.tx_bytes);
    r.rx_bytes = delta(cur.rx_bytes, old.rx_bytes);
    r.tx_pkts = delta(cur.tx_pkts, old.tx_pkts);
    r.rx_pkts = delta(cur.rx_pkts, old.rx_pkts);
    r.retransmits = delta(cur.retransmits, old.retransmits);
    r.naks_tx = delta(cur.naks_tx, old.naks_tx);
    r.naks_rx = delta(cur.naks_rx, old.naks_rx);
    r.cnps_tx = delta(cur.cnps_tx, old.cnps_tx);
    r.cnps_rx = delta(cur.cnps_rx, old.cnps_rx);
    if (r.tx_pkts + r.rx_pkts + r.retransmits + r.naks_tx + r.naks_rx + r.cnps_tx + r.cnps_rx ==
            0 &&
        cur.rate_events == old.rate_events)
      continue;
    if (seconds > 0) {
      r.tx_bytes_per_sec = static_cast<double>(r.tx_bytes) / seconds;
      r.rx_bytes_per_sec = static_cast<double>(r.rx_bytes) / seconds;
    }
    if (cur.rate_events > 0)
      r.rate = cur.rate;
    rows.push_back(std::move(r));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const TopRow &a, const TopRow &b) {
    return a.tx_bytes + a.rx_bytes > b.tx_bytes + b.rx_bytes;
  });
  return rows;
}

std::string human_rate(double bps) {
  if (bps >= 1e9)
    return fmt::format("{:.1f} GB/s", bps / 1e9);
  if (bps >= 1e6)
    return fmt::format("{:.1f} MB/s", bps / 1e6);
  if (bps >= 1e3)
    return fmt::format("{:.1f} kB/s", bps / 1e3);
  return fmt::format("{:.0f} B/s", bps);
}

void print_top(Output &out, std::span<const TopRow> rows, std::int64_t unix_ts,
               double interval_sec) {
  if (out.format() == OutputFormat::text) {
    out.text_line(fmt::format("{:<10} {:>8} {:>12} {:>12} {:>8} {:>8} {:>6} {:>9} {:>9} {:>12}",
                              "DEV", "QPN", "TX", "RX", "TX_PKTS", "RX_PKTS", "RETX", "NAK_TX/RX",
                              "CNP_TX/RX", "RATE"));
    for (const TopRow &r : rows)
      out.text_line(fmt::format("{:<10} {:>8} {:>12} {:>12} {:>8} {:>8} {:>6} {:>9} {:>9} {:>12}",
                                r.dev_name, r.id.qpn, human_rate(r.tx_bytes_per_sec),
                                human_rate(r.rx_bytes_per_sec), r.tx_pkts, r.rx_pkts,
                                r.retransmits, fmt::format("{}/{}", r.naks_tx, r.naks_rx),
                                fmt::format("{}/{}", r.cnps_tx, r.cnps_rx),
                                r.rate ? human_rate(static_cast<double>(*r.rate)) : "-"));
    out.text_line("");
    return;
  }
  for (const TopRow &r : rows) {
    out.begin_record();
    out.field("ts", unix_ts);
    out.field("interval_ms", static_cast<std::uint64_t>(std::llround(interval_sec * 1000)));
    out.field("dev", r.dev_name);
    out.field("dev_index", r.id.dev);
    out.field("qpn", r.id.qpn);
    out.field("tx_bytes", r.tx_bytes);
    out.field("rx_bytes", r.rx_bytes);
    out.field("tx_bytes_per_sec", static_cast<std::uint64_t>(std::llround(r.tx_bytes_per_sec)));
    out.field("rx_bytes_per_sec", static_cast<std::uint64_t>(std::llround(r.rx_bytes_per_sec)));
    out.field("tx_pkts", r.tx_pkts);
    out.field("rx_pkts", r.rx_pkts);
    out.field("retransmits", r.retransmits);
    out.field("naks_tx", r.naks_tx);
    out.field("naks_rx", r.naks_rx);
    out.field("cnps_tx", r.cnps_tx);
    out.field("cnps_rx", r.cnps_rx);
    out.field_json("rate", r.rate ? nlohmann::ordered_json(*r.rate) : nlohmann::ordered_json(), "");
    out.end_record();
  }
}

Result<void> run_top(Output &out, double interval, unsigned int count, const TopSleep &sleep,
                     const TopSample &sample) {
  auto last = std::chrono::steady_clock::now();
  for (unsigned int i = 0; count == 0 || i < count; i++) {
    bool more = sleep(std::chrono::duration<double>(interval));
    auto now = std::chrono::steady_clock::now();
    double secs = std::chrono::duration<double>(now - last).count();
    Result<std::vector<TopRow>> rows = sample(secs);
    if (!rows)
      return std::move(rows).error();
    print_top(out, *rows, static_cast<std::int64_t>(std::time(nullptr)), secs);
    // Out now, not when the next interval ends: `srnicctl -j top | jq` shows each one.
    out.end_document();
    last = now;
    if (!more)
      break;
  }
  return {};
}

std::vector<HistBucket> hist_buckets(const srnic_lat_hist &h) {
  int first = -1, last = -1;
  for (int i = 0; i < SRNIC_LAT_SLOTS; i++) {
    if (h.slots[i] == 0)
      continue;
    if (first < 0)
      first = i;
    last = i;
  }
  std::vector<HistBucket> b;
  for (int i = first; first >= 0 && i <= last; i++) {
    std::uint64_t low = i == 0 ? 0 : (std::uint64_t{1} << i);
    std::uint64_t high = (std::uint64_t{1} << (i + 1)) - 1;
    b.push_back({low, high, h.slots[i]});
  }
  return b;
}

std::string format_log2_hist(std::span<const HistBucket> buckets, std::string_view unit) {
  constexpr int width = 40;
  std::uint64_t max = 0;
  for (const HistBucket &b : buckets)
    max = std::max(max, b.count);
  std::string s = fmt::format("{:>24} : count    distribution\n", unit);
  for (const HistBucket &b : buckets) {
    int stars = max == 0 ? 0 : static_cast<int>(b.count * width / max);
    s += fmt::format("{:>10} -> {:<10} : {:<8} |{:<40}|\n", b.low, b.high, b.count,
                     std::string(static_cast<std::size_t>(stars), '*'));
  }
  return s;
}

Result<void> check_tracepoints(const Sysfs &sysfs, bool is_root,
                               std::span<const std::string_view> events) {
  if (!is_root)
    return Error{EPERM, "loading BPF programs needs root (CAP_BPF and CAP_PERFMON): run "
                        "srnicctl as root"};
  std::optional<std::filesystem::path> tracefs;
  for (const char *dir : {"kernel/tracing", "kernel/debug/tracing"})
    if (sysfs.is_dir(std::filesystem::path(dir) / "events")) {
      tracefs = dir;
      break;
    }
  if (!tracefs)
    return Error{ENOENT, "tracefs is not mounted: mount -t tracefs nodev /sys/kernel/tracing"};
  std::vector<std::string> missing;
  for (std::string_view ev : events)
    if (!sysfs.is_dir(*tracefs / "events/srnic" / ev))
      missing.emplace_back(ev);
  if (missing.size() == events.size())
    return Error{ENOENT, fmt::format("no srnic tracepoints in {}: the srnic module is not loaded "
                                     "(modprobe srnic), or was built without tracepoints",
                                     sysfs.path(*tracefs / "events/srnic").string())};
  if (!missing.empty())
    return Error{ENOENT, fmt::format("this srnic module lacks tracepoint{} {}: update it",
                                     missing.size() > 1 ? "s" : "", fmt::join(missing, ", "))};
  return {};
}

} // namespace srnic::ctl

// SPDX-License-Identifier: GPL-2.0
#include "ctl/probe_view.h"
#include "temp_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <ext/stdio_sync_filebuf.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace srnic::ctl {
namespace {

using testing::HasSubstr;

srnic_qp_stats stats(std::uint64_t tx_bytes, std::uint64_t tx_pkts, std::uint64_t retx = 0) {
  srnic_qp_stats s{};
  s.tx_bytes = tx_bytes;
  s.tx_pkts = tx_pkts;
  s.rx_bytes = tx_bytes / 2;
  s.rx_pkts = tx_pkts;
  s.retransmits = retx;
  return s;
}

const std::map<std::uint32_t, std::string> names = {{3, "srnic0"}};

TEST(TopRows, DeltasOverTheInterval) {
  QpTotals prev = {{{3, 17}, stats(1000, 10)}};
  QpTotals now = {{{3, 17}, stats(5000, 30, 2)}, {{3, 18}, stats(100, 1)}};
  std::vector<TopRow> rows = top_rows(prev, now, 2.0, names);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].id.qpn, 17u); // busiest first
  EXPECT_EQ(rows[0].dev_name, "srnic0");
  EXPECT_EQ(rows[0].tx_bytes, 4000u);
  EXPECT_DOUBLE_EQ(rows[0].tx_bytes_per_sec, 2000.0);
  EXPECT_EQ(rows[0].rx_bytes, 2000u);
  EXPECT_EQ(rows[0].tx_pkts, 20u);
  EXPECT_EQ(rows[0].retransmits, 2u);
  EXPECT_FALSE(rows[0].rate);
  EXPECT_EQ(rows[1].id.qpn, 18u); // new QP: counted from zero
  EXPECT_EQ(rows[1].tx_bytes, 100u);
}

TEST(TopRows, IdleQpsAreLeftOut) {
  QpTotals prev = {{{3, 17}, stats(1000, 10)}};
  EXPECT_TRUE(top_rows(prev, prev, 1.0, names).empty());
}

TEST(TopRows, RateEventMakesARowAndSetsRate) {
  srnic_qp_stats s = stats(1000, 10);
  QpTotals prev = {{{3, 17}, s}};
  s.rate = 12'500'000;
  s.rate_events = 1;
  QpTotals now = {{{3, 17}, s}};
  std::vector<TopRow> rows = top_rows(prev, now, 1.0, names);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].rate, 12'500'000u);
}

TEST(TopRows, UnknownDeviceShowsItsIndex) {
  QpTotals now = {{{9, 1}, stats(10, 1)}};
  EXPECT_EQ(top_rows({}, now, 1.0, names)[0].dev_name, "9");
}

TEST(TopRows, ShrunkCounterCountsFromZero) {
  QpTotals prev = {{{3, 17}, stats(1000, 10)}};
  QpTotals now = {{{3, 17}, stats(300, 3)}};
  EXPECT_EQ(top_rows(prev, now, 1.0, names)[0].tx_bytes, 300u);
}

TEST(PrintTop, JsonRecords) {
  QpTotals now = {{{3, 17}, stats(4000, 4, 1)}};
  std::vector<TopRow> rows = top_rows({}, now, 0.5, names);
  std::ostringstream os;
  Output out(os, OutputFormat::json);
  print_top(out, rows, 1700000000, 0.5);
  out.finish();
  nlohmann::json j = nlohmann::json::parse(os.str());
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["ts"], 1700000000);
  EXPECT_EQ(j[0]["interval_ms"], 500);
  EXPECT_EQ(j[0]["dev"], "srnic0");
  EXPECT_EQ(j[0]["dev_index"], 3);
  EXPECT_EQ(j[0]["qpn"], 17);
  EXPECT_EQ(j[0]["tx_bytes"], 4000);
  EXPECT_EQ(j[0]["tx_bytes_per_sec"], 8000);
  EXPECT_EQ(j[0]["retransmits"], 1);
  EXPECT_TRUE(j[0]["rate"].is_null());
}

TEST(PrintTop, EmptyIntervalIsAnEmptyArray) {
  std::ostringstream os;
  Output out(os, OutputFormat::json);
  print_top(out, {}, 1, 1.0);
  out.end_document();
  print_top(out, {}, 2, 1.0);
  out.end_document();
  out.finish();
  EXPECT_EQ(os.str(), "[]\n[]\n");
}

// A pipe whose write end is an ostream as std::cout is one: libstdc++'s stdio_sync_filebuf
// over a stdio FILE, which a pipe makes fully buffered (written out on a flush, a full
// buffer or exit only).
class StdoutPipe {
public:
  StdoutPipe() = default;
  StdoutPipe(const StdoutPipe &) = delete;
  StdoutPipe &operator=(const StdoutPipe &) = delete;
  ~StdoutPipe() {
    std::fclose(file_);
    close(fds_[0]);
  }

  std::ostream &os() { return os_; }

  // Everything the read end has had so far.
  const std::string &read() {
    char b[4096];
    ssize_t n;
    while ((n = ::read(fds_[0], b, sizeof(b))) > 0)
      got_.append(b, static_cast<std::size_t>(n));
    return got_;
  }

  std::size_t lines() {
    const std::string &got = read();
    return static_cast<std::size_t>(std::count(got.begin(), got.end(), '\n'));
  }

private:
  static std::array<int, 2> make_pipe() {
    std::array<int, 2> fds{};
    if (pipe2(fds.data(), O_NONBLOCK | O_CLOEXEC) != 0)
      throw std::runtime_error("pipe2 failed");
    return fds;
  }

  std::array<int, 2> fds_ = make_pipe();
  FILE *file_ = fdopen(fds_[1], "w");
  __gnu_cxx::stdio_sync_filebuf<char> buf_{file_};
  std::ostream os_{&buf_};
  std::string got_;
};

// srnicctl -j top | jq: each interval's array reaches the pipe when the interval ends, not
// when the next one ends or top exits. sleep() sees what a reader has got by then.
TEST(RunTop, JsonIntervalReachesAPipeWhenItEnds) {
  StdoutPipe pipe;
  Output out(pipe.os(), OutputFormat::json);
  std::vector<std::size_t> lines_at_sleep;
  auto sleep = [&](std::chrono::duration<double>) {
    lines_at_sleep.push_back(pipe.lines());
    return true;
  };
  unsigned int samples = 0;
  auto sample = [&](double secs) -> Result<std::vector<TopRow>> {
    if (++samples == 2)
      return top_rows({}, {{{3, 17}, stats(4000, 4)}}, secs, names);
    return std::vector<TopRow>{};
  };
  ASSERT_TRUE(run_top(out, 0.1, 3, sleep, sample));
  EXPECT_EQ(pipe.lines(), 3u);
  EXPECT_EQ(lines_at_sleep, (std::vector<std::size_t>{0, 1, 2}));
  out.finish(); // as run() ends: nothing is left to print
  pipe.os().flush();
  std::istringstream docs(pipe.read());
  std::vector<std::size_t> sizes;
  for (std::string line; std::getline(docs, line);)
    sizes.push_back(nlohmann::json::parse(line).size());
  EXPECT_EQ(sizes, (std::vector<std::size_t>{0, 1, 0}));
}

// The text table too: a reader has each interval's table when it ends.
TEST(RunTop, TextIntervalReachesAPipeWhenItEnds) {
  StdoutPipe pipe;
  Output out(pipe.os(), OutputFormat::text);
  std::vector<std::size_t> lines_at_sleep;
  auto sleep = [&](std::chrono::duration<double>) {
    lines_at_sleep.push_back(pipe.lines());
    return true;
  };
  auto sample = [](double secs) -> Result<std::vector<TopRow>> {
    return top_rows({}, {{{3, 17}, stats(4000, 4)}}, secs, names);
  };
  ASSERT_TRUE(run_top(out, 0.1, 2, sleep, sample));
  // Each interval: the header, one row, an empty line.
  EXPECT_EQ(lines_at_sleep, (std::vector<std::size_t>{0, 3}));
  EXPECT_EQ(pipe.lines(), 6u);
}

// Without -n: until sleep() is interrupted; the cut-short interval is printed, then top
// returns.
TEST(RunTop, StopEndsTheLoopAfterPrintingTheInterval) {
  std::ostringstream os;
  Output out(os, OutputFormat::json);
  unsigned int sleeps = 0;
  auto sleep = [&](std::chrono::duration<double> d) {
    EXPECT_EQ(d.count(), 0.25);
    return ++sleeps < 2;
  };
  auto sample = [](double) -> Result<std::vector<TopRow>> { return std::vector<TopRow>{}; };
  ASSERT_TRUE(run_top(out, 0.25, 0, sleep, sample));
  out.finish();
  EXPECT_EQ(sleeps, 2u);
  EXPECT_EQ(os.str(), "[]\n[]\n");
}

TEST(RunTop, SampleErrorEndsTop) {
  std::ostringstream os;
  Output out(os, OutputFormat::json);
  auto sleep = [](std::chrono::duration<double>) { return true; };
  auto sample = [](double) -> Result<std::vector<TopRow>> {
    return Error{EIO, "cannot read the qp_stats map"};
  };
  Result<void> r = run_top(out, 0.1, 0, sleep, sample);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().errnum, EIO);
}

TEST(PrintTop, TextTable) {
  QpTotals now = {{{3, 17}, stats(2'500'000, 4)}};
  std::ostringstream os;
  Output out(os, OutputFormat::text);
  print_top(out, top_rows({}, now, 1.0, names), 1, 1.0);
  EXPECT_THAT(os.str(), testing::StartsWith("DEV             QPN           TX"));
  EXPECT_THAT(os.str(), HasSubstr("\nsrnic0           17     2.5 MB/s     1.2 MB/s        4        4"));
}

TEST(HumanRate, Units) {
  EXPECT_EQ(human_rate(0), "0 B/s");
  EXPECT_EQ(human_rate(999), "999 B/s");
  EXPECT_EQ(human_rate(1500), "1.5 kB/s");
  EXPECT_EQ(human_rate(40e6), "40.0 MB/s");
  EXPECT_EQ(human_rate(3.2e9), "3.2 GB/s");
}

TEST(Hist, BucketsFromFirstToLastNonEmpty) {
  srnic_lat_hist h{};
  EXPECT_TRUE(hist_buckets(h).empty());
  h.slots[3] = 5;
  h.slots[5] = 10;
  std::vector<HistBucket> b = hist_buckets(h);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0].low, 8u);
  EXPECT_EQ(b[0].high, 15u);
  EXPECT_EQ(b[0].count, 5u);
  EXPECT_EQ(b[1].count, 0u);
  EXPECT_EQ(b[2].low, 32u);
  EXPECT_EQ(b[2].high, 63u);
  h.slots[0] = 1;
  EXPECT_EQ(hist_buckets(h)[0].low, 0u);
  EXPECT_EQ(hist_buckets(h)[0].high, 1u);
}

TEST(Hist, Log2Text) {
  std::vector<HistBucket> b = {{8, 15, 5}, {16, 31, 0}, {32, 63, 10}};
  EXPECT_EQ(format_log2_hist(b, "usecs"),
            "                   usecs : count    distribution\n"
            "         8 -> 15         : 5        |********************                    |\n"
            "        16 -> 31         : 0        |                                        |\n"
            "        32 -> 63         : 10       |****************************************|\n");
}

constexpr std::string_view events[] = {"srnic_pkt_tx", "srnic_pkt_rx"};

TEST(Tracepoints, NeedRoot) {
  test::TempDir dir;
  Result<void> r = check_tracepoints(Sysfs(dir.path()), false, events);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().errnum, EPERM);
  EXPECT_THAT(r.error().msg, HasSubstr("needs root"));
}

TEST(Tracepoints, TracefsNotMounted) {
  test::TempDir dir;
  Result<void> r = check_tracepoints(Sysfs(dir.path()), true, events);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().msg, HasSubstr("mount -t tracefs"));
}

TEST(Tracepoints, ModuleNotLoaded) {
  test::TempDir dir;
  dir.mkdir("kernel/tracing/events/sched");
  Result<void> r = check_tracepoints(Sysfs(dir.path()), true, events);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().msg, HasSubstr("no srnic tracepoints"));
  EXPECT_THAT(r.error().msg, HasSubstr("not loaded"));
}

TEST(Tracepoints, SomeMissing) {
  test::TempDir dir;
  dir.mkdir("kernel/debug/tracing/events/srnic/srnic_pkt_tx");
  Result<void> r = check_tracepoints(Sysfs(dir.path()), true, events);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().msg, HasSubstr("lacks tracepoint srnic_pkt_rx"));
}

TEST(Tracepoints, AllPresent) {
  test::TempDir dir;
  dir.mkdir("kernel/tracing/events/srnic/srnic_pkt_tx");
  dir.mkdir("kernel/tracing/events/srnic/srnic_pkt_rx");
  EXPECT_TRUE(check_tracepoints(Sysfs(dir.path()), true, events));
}

} // namespace
} // namespace srnic::ctl

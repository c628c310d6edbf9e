// SPDX-License-Identifier: GPL-2.0
#include "probes.h"

#include "dev_netlink.h"

#include <bpf/libbpf.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <thread>

#include <fmt/format.h>

namespace srnic::ctl::probes {

namespace {

std::atomic<bool> stop{false};
bool verbose_libbpf = false;
struct sigaction old_int, old_term;

int libbpf_print(enum libbpf_print_level level, const char *format, va_list args) {
  if (level == LIBBPF_DEBUG && !verbose_libbpf)
    return 0;
  return std::vfprintf(stderr, format, args);
}

void on_signal(int) { stop.store(true); }

} // namespace

void set_libbpf_verbose(bool verbose) {
  verbose_libbpf = verbose;
  libbpf_set_print(libbpf_print);
}

StopOnSignal::StopOnSignal() {
  stop.store(false);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
}

StopOnSignal::~StopOnSignal() {
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
}

bool stop_requested() { return stop.load(); }

bool sleep_for(std::chrono::duration<double> d) {
  using clock = std::chrono::steady_clock;
  clock::time_point end = clock::now() + std::chrono::duration_cast<clock::duration>(d);
  while (!stop.load()) {
    clock::time_point now = clock::now();
    if (now >= end)
      return true;
    clock::duration left = end - now;
    std::this_thread::sleep_for(std::min<clock::duration>(left, std::chrono::milliseconds(50)));
  }
  return false;
}

Result<std::map<std::uint32_t, std::string>> dev_names() {
  Result<std::vector<DevInfo>> devs = dump_devs();
  if (!devs)
    return std::move(devs).error();
  std::map<std::uint32_t, std::string> names;
  for (const DevInfo &d : *devs)
    names[d.index] = d.name;
  return names;
}

Result<std::uint32_t> dev_index(const std::string &name) {
  Result<std::map<std::uint32_t, std::string>> names = dev_names();
  if (!names)
    return std::move(names).error();
  for (const auto &[index, n] : *names)
    if (n == name)
      return index;
  return Error{ENODEV, fmt::format("no RDMA device {}", name)};
}

Error libbpf_error(int err, const std::string &what) {
  return Error{err < 0 ? -err : err, what};
}

} // namespace srnic::ctl::probes

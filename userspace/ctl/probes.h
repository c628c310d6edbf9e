// SPDX-License-Identifier: GPL-2.0
//
// Shared by srnicctl top and lat: libbpf's log routed to stderr only with -v, SIGINT/
// SIGTERM ending the loop, the ib_device index <-> name map, and an interruptible sleep.
#pragma once

#include "lib/result.h"

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace srnic::ctl::probes {

// libbpf's messages: warnings and errors always, debug output with verbose.
void set_libbpf_verbose(bool verbose);

// Installs SIGINT/SIGTERM handlers that make stop_requested() true (restored on exit).
class StopOnSignal {
public:
  StopOnSignal();
  StopOnSignal(const StopOnSignal &) = delete;
  StopOnSignal &operator=(const StopOnSignal &) = delete;
  ~StopOnSignal();
};
bool stop_requested();

// Sleeps for d or until a stop is requested; false if it was.
bool sleep_for(std::chrono::duration<double> d);

// ib_device index -> name from rdma netlink.
Result<std::map<std::uint32_t, std::string>> dev_names();

// The index of RDMA device name; ENODEV if there is none.
Result<std::uint32_t> dev_index(const std::string &name);

// "what: strerror(-err)" for a libbpf call that failed with err (negative errno).
Error libbpf_error(int err, const std::string &what);

} // namespace srnic::ctl::probes

// SPDX-License-Identifier: GPL-2.0
//
// srnicctl doctor: diagnoses a host for srnic, check by check, each problem with its fix,
// then runs a loopback self-test on every srnic device that passed its checks.
// srnicctl health is a quick view of the same checks (run_health()).
#pragma once

#include "lib/result.h"
#include "lib/sysfs.h"
#include "verbs.h"

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace srnic::ctl {

enum class CheckStatus { ok, warn, fail, skip };

std::string_view status_name(CheckStatus s);

struct DoctorCheck {
  std::string check;  // stable snake_case name
  std::string dev;    // the srnic device it is about; empty for host-wide checks
  CheckStatus status = CheckStatus::ok;
  std::string detail; // what was found
  std::string fix;    // how to fix it; empty when ok
};

using SelftestFn =
    std::function<Result<verbs::SelftestResult>(const std::string &dev, unsigned int gid_index)>;

struct DoctorOptions {
  bool selftest = true;
  SelftestFn run_selftest = verbs::loopback_selftest;
  std::string rdmav_drivers; // the RDMAV_DRIVERS libibverbs sees (native_provider)
};

// The checks, in order: module_srnic, rxe_conflict, rxe_provider, other_rdma (other
// drivers' RDMA devices on Ethernet; fails for each srnic device sharing a netdev with
// one), srnic_devices; then per
// srnic device netdev, netdev_up, mtu, native_provider (a device in native mode only),
// port_active, roce_v2_gid and selftest. Files outside
// sysfs (the libibverbs provider) are looked up below root.
std::vector<DoctorCheck> run_doctor(const Sysfs &sysfs, const std::filesystem::path &root,
                                    const DoctorOptions &opts);

// srnicctl health's checks, a subset of run_doctor()'s made by the same code: module_srnic,
// rxe_conflict, then netdev per srnic device (srnic_devices only when they cannot be
// listed). Reads sysfs only; no self-test.
std::vector<DoctorCheck> run_health(const Sysfs &sysfs);

// Checks that failed: what makes doctor exit non-zero (warnings and skips do not).
std::size_t count_problems(const std::vector<DoctorCheck> &checks);

// The text form of one check: a status/name/detail line, and a "fix:" line if it has one.
std::string format_check(const DoctorCheck &c);

} // namespace srnic::ctl

// SPDX-License-Identifier: GPL-2.0
//
// srnicctl health: is this host ready to run srnic? One record per check.
#pragma once

#include "lib/sysfs.h"

#include <string>
#include <vector>

namespace srnic::ctl {

struct HealthCheck {
  std::string check; // a stable snake_case name
  bool ok = false;
  std::string detail;
};

// The checks, in order: module srnic loaded; module rdma_rxe not loaded (both claim UDP
// port 4791 and RDMA_DRIVER_RXE); then, per srnic device, that its netdev exists.
std::vector<HealthCheck> run_health_checks(const Sysfs &sysfs);

} // namespace srnic::ctl

// SPDX-License-Identifier: GPL-2.0
//
// srnicctl show [DEV]: srnic devices and their ports.
#pragma once

#include "lib/output.h"
#include "sysfs_view.h"

namespace srnic::ctl {

// One record per port of v (one record without port fields if it has none).
void print_device_view(Output &out, const DeviceView &v);

} // namespace srnic::ctl

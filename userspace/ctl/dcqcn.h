// SPDX-License-Identifier: GPL-2.0
//
// srnicctl dcqcn show [DEV] | set DEV np|rp KNOB VALUE: the DCQCN knobs, one sysfs file
// each under class/infiniband/<dev>/roce_np/ (notification point) and roce_rp/ (reaction
// point), with mlx5's names. The set of knobs is whatever those directories hold. show also
// reads other drivers' RDMA devices on Ethernet where mlx5 keeps them, under
// class/net/<netdev>/ecn/roce_np|roce_rp/ (enable there is one file per priority:
// "enable/3"); set writes srnic's only.
#pragma once

#include "lib/result.h"
#include "lib/sysfs.h"

#include <string>
#include <string_view>
#include <vector>

namespace srnic::ctl {

struct Knob {
  std::string name;
  std::string value; // as read, newline stripped
};

// "np" -> "roce_np", "rp" -> "roce_rp"; empty for anything else.
std::string knob_dir(std::string_view side);

// The knobs of dev's side ("np" or "rp"), sorted by name, files one directory down as
// "dir/file". ENOENT with a message saying the module has no DCQCN when the directory is
// absent.
Result<std::vector<Knob>> read_knobs(const Sysfs &sysfs, std::string_view dev,
                                     std::string_view side);

// Writes value to knob and returns the value read back. Errors: dev not an srnic device
// (ENODEV), bad side or unknown knob (ENOENT, listing the knobs), a value the kernel
// refuses (EINVAL), not root (EACCES).
Result<Knob> set_knob(const Sysfs &sysfs, std::string_view dev, std::string_view side,
                      std::string_view knob, std::string_view value);

// The error set_knob() returns when writing value failed with errnum.
Error knob_write_error(int errnum, std::string_view dev, std::string_view side,
                       std::string_view knob, std::string_view value);

} // namespace srnic::ctl

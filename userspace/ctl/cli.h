// SPDX-License-Identifier: GPL-2.0
//
// srnicctl [-j] [-p] [-V] OBJECT [COMMAND [ARGS]]
#pragma once

#include "lib/sysfs.h"

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

namespace srnic::ctl {

// Runs srnicctl on args (argv without argv[0]), printing to out and err; returns the exit
// status: EXIT_SUCCESS, or EXIT_FAILURE after one "srnicctl: ..." line on err.
// root is where files outside sysfs are looked up (doctor); tests point it at a fake tree.
int run(const std::vector<std::string> &args, const Sysfs &sysfs, std::ostream &out,
        std::ostream &err, const std::filesystem::path &root = "/");

} // namespace srnic::ctl

// SPDX-License-Identifier: GPL-2.0
//
// srnicctl: inspect and control srnic devices. See cli.h for the grammar.
#include "cli.h"
#include "lib/sysfs.h"

#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char **argv) {
  try {
    std::vector<std::string> args(argv + 1, argv + argc);
    // $SRNIC_ROOT: a fake root for doctor's checks outside sysfs (tests only).
    const char *root = std::getenv("SRNIC_ROOT");
    return srnic::ctl::run(args, srnic::Sysfs::from_env(), std::cout, std::cerr,
                           root != nullptr && *root != '\0' ? root : "/");
  } catch (const std::exception &e) {
    // Fatal errors only; recoverable ones come back from run() as an exit status.
    std::cerr << "srnicctl: " << e.what() << '\n';
    return EXIT_FAILURE;
  }
}

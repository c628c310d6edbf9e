// SPDX-License-Identifier: GPL-2.0
#include "result.h"

#include <system_error>

namespace srnic {

std::string to_string(const Error &err) {
  if (err.errnum == 0)
    return err.msg;
  // generic_category().message() is strerror() without the thread-safety caveat.
  return err.msg + ": " + std::generic_category().message(err.errnum);
}

} // namespace srnic

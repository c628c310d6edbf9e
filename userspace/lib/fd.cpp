// SPDX-License-Identifier: GPL-2.0
#include "fd.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace srnic {

Result<Fd> Fd::open(const std::filesystem::path &path, int flags) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0)
    return Error{errno, "cannot open " + path.string()};
  return Fd(fd);
}

void Fd::reset(int fd) noexcept {
  // close(2) is not retried on EINTR: on Linux the descriptor is gone either way.
  if (fd_ >= 0 && fd_ != fd)
    ::close(fd_);
  fd_ = fd;
}

Result<std::string> read_all(const Fd &fd, std::size_t max_bytes) {
  std::string data;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return Error{errno, "read failed"};
    }
    if (n == 0)
      return data;
    if (data.size() + static_cast<std::size_t>(n) > max_bytes)
      return Error{EFBIG, "read failed"};
    data.append(buf, static_cast<std::size_t>(n));
  }
}

} // namespace srnic

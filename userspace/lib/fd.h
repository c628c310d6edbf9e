// SPDX-License-Identifier: GPL-2.0
//
// Fd: a move-only owner of a file descriptor, closed on destruction (bpftrace's util::FD).
#pragma once

#include "result.h"

#include <filesystem>

namespace srnic {

class Fd {
public:
  Fd() noexcept = default;
  explicit Fd(int fd) noexcept : fd_(fd) {}
  Fd(const Fd &) = delete;
  Fd &operator=(const Fd &) = delete;
  Fd(Fd &&other) noexcept : fd_(other.release()) {}
  Fd &operator=(Fd &&other) noexcept {
    reset(other.release());
    return *this;
  }
  ~Fd() { reset(); }

  // open(2) with O_CLOEXEC added to flags.
  static Result<Fd> open(const std::filesystem::path &path, int flags);

  int get() const noexcept { return fd_; }
  bool valid() const noexcept { return fd_ >= 0; }
  explicit operator bool() const noexcept { return valid(); }

  // Gives up ownership without closing; the Fd is left empty.
  int release() noexcept {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

  // Closes the owned descriptor (if any, and if it differs from fd) and takes fd.
  void reset(int fd = -1) noexcept;

private:
  int fd_ = -1;
};

// Reads fd until EOF, failing with EFBIG if more than max_bytes arrive.
Result<std::string> read_all(const Fd &fd, std::size_t max_bytes);

} // namespace srnic

// SPDX-License-Identifier: GPL-2.0
//
// RAII owners for libibverbs objects and the loopback self-test that `srnicctl doctor`
// runs: two RC QPs on one device, connected to each other through a RoCEv2 GID of the
// device, move a pattern with RDMA WRITE and with SEND; both copies are compared byte for
// byte with what was sent.
#pragma once

#include "lib/result.h"

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace srnic::verbs {

// unique_ptr deleter calling a verbs destroy function; their int result is dropped since
// nothing can be done about a failing destroy in a destructor.
template <auto Destroy>
struct Deleter {
  template <typename T>
  void operator()(T *p) const noexcept {
    (void)Destroy(p);
  }
};

using DeviceList = std::unique_ptr<ibv_device *, Deleter<ibv_free_device_list>>;
using ContextPtr = std::unique_ptr<ibv_context, Deleter<ibv_close_device>>;
using PdPtr = std::unique_ptr<ibv_pd, Deleter<ibv_dealloc_pd>>;
using CqPtr = std::unique_ptr<ibv_cq, Deleter<ibv_destroy_cq>>;
using QpPtr = std::unique_ptr<ibv_qp, Deleter<ibv_destroy_qp>>;
using MrPtr = std::unique_ptr<ibv_mr, Deleter<ibv_dereg_mr>>;

// Opens RDMA device name through libibverbs (ENODEV if the provider does not list it).
Result<ContextPtr> open_device(const std::string &name);

// The bytes the self-test sends: not repeating within 64 KiB, never all zero.
std::vector<std::uint8_t> test_pattern(std::size_t len, std::uint8_t seed);

// Index of the first byte where got differs from want, or -1 when equal.
long first_mismatch(const std::vector<std::uint8_t> &want, const std::vector<std::uint8_t> &got);

struct SelftestResult {
  std::size_t write_bytes = 0; // RDMA WRITE bytes verified
  std::size_t send_bytes = 0;  // SEND bytes verified
  unsigned int path_mtu = 0;   // the IB MTU the QPs used
};

// Runs the loopback self-test on port 1 of device name with GID index gid_index. Fails
// with what went wrong (which verb, which completion status, which byte differed).
Result<SelftestResult> loopback_selftest(const std::string &name, unsigned int gid_index);

} // namespace srnic::verbs

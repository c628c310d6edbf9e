// SPDX-License-Identifier: GPL-2.0
#include "nldev.h"

#include <libmnl/libmnl.h>

#include <cerrno>

#include <fmt/format.h>

namespace srnic::nl {

namespace {

// Expected payload type per attribute; MNL_TYPE_UNSPEC means not checked. Extend this as
// objects start reading more attributes.
constexpr auto nldev_policy = [] {
  std::array<mnl_attr_data_type, RDMA_NLDEV_ATTR_MAX> p{};
  p[RDMA_NLDEV_ATTR_DEV_INDEX] = MNL_TYPE_U32;
  p[RDMA_NLDEV_ATTR_DEV_NAME] = MNL_TYPE_NUL_STRING;
  p[RDMA_NLDEV_ATTR_PORT_INDEX] = MNL_TYPE_U32;
  p[RDMA_NLDEV_ATTR_CAP_FLAGS] = MNL_TYPE_U64;
  p[RDMA_NLDEV_ATTR_FW_VERSION] = MNL_TYPE_NUL_STRING;
  p[RDMA_NLDEV_ATTR_NODE_GUID] = MNL_TYPE_U64;
  p[RDMA_NLDEV_ATTR_SYS_IMAGE_GUID] = MNL_TYPE_U64;
  p[RDMA_NLDEV_ATTR_DEV_NODE_TYPE] = MNL_TYPE_U8;
  p[RDMA_NLDEV_ATTR_NDEV_INDEX] = MNL_TYPE_U32;
  p[RDMA_NLDEV_ATTR_NDEV_NAME] = MNL_TYPE_NUL_STRING;
  p[RDMA_NLDEV_ATTR_DEV_PROTOCOL] = MNL_TYPE_NUL_STRING;
  return p;
}();

struct ParseState {
  NldevAttrs *tb;
  int bad_type; // the first attribute that failed validation, or -1
};

int attr_cb(const nlattr *attr, void *data) {
  auto *state = static_cast<ParseState *>(data);
  if (mnl_attr_type_valid(attr, RDMA_NLDEV_ATTR_MAX - 1) < 0)
    return MNL_CB_OK; // newer kernel: not an attribute we know
  std::uint16_t type = mnl_attr_get_type(attr);
  if (nldev_policy[type] != MNL_TYPE_UNSPEC && mnl_attr_validate(attr, nldev_policy[type]) < 0) {
    state->bad_type = type;
    return MNL_CB_ERROR;
  }
  (*state->tb)[type] = attr;
  return MNL_CB_OK;
}

} // namespace

Result<NldevAttrs> parse_nldev(const nlmsghdr &nlh) {
  NldevAttrs tb{};
  ParseState state{&tb, -1};
  if (mnl_attr_parse(&nlh, 0, attr_cb, &state) < 0) {
    int err = errno;
    if (state.bad_type >= 0)
      return Error{err, fmt::format("rdma netlink attribute {} has a bad payload", state.bad_type)};
    return Error{err, "malformed rdma netlink message"};
  }
  return tb;
}

} // namespace srnic::nl

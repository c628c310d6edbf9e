// SPDX-License-Identifier: GPL-2.0
#include "srnic_dev.h"

#include <arpa/inet.h>
#include <linux/if.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include <uapi/rdma/srnic.h>

namespace srnic::ctl {

namespace {

const std::filesystem::path ib_class = "class/infiniband";

// Device names come from the kernel, but never let one walk out of the class directory.
bool safe_name(std::string_view name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string_view::npos;
}

std::optional<std::string> read_optional(const Sysfs &sysfs, const std::filesystem::path &rel) {
  Result<std::string> value = sysfs.read_attr(rel);
  if (!value)
    return std::nullopt;
  return std::move(value).value();
}

} // namespace

std::optional<SrnicAttrs> srnic_attrs(const Sysfs &sysfs, std::string_view ibdev) {
  if (!safe_name(ibdev))
    return std::nullopt;
  std::filesystem::path dir = ib_class / ibdev / SRNIC_SYSFS_GROUP;
  if (!sysfs.is_dir(dir))
    return std::nullopt;
  return SrnicAttrs{read_optional(sysfs, dir / SRNIC_SYSFS_VERSION),
                    read_optional(sysfs, dir / SRNIC_SYSFS_NETDEV)};
}

Result<std::vector<std::string>> srnic_devices(const Sysfs &sysfs) {
  Result<std::vector<std::string>> names = sysfs.list_dir(ib_class);
  if (!names) {
    if (names.error().errnum == ENOENT)
      return std::vector<std::string>{}; // no RDMA core loaded, so no devices
    return names;
  }
  std::vector<std::string> srnic;
  for (std::string &name : *names)
    if (srnic_attrs(sysfs, name))
      srnic.push_back(std::move(name));
  return srnic;
}

std::optional<std::uint64_t> parse_u64(std::string_view text) {
  std::uint64_t v = 0;
  if (text.empty())
    return std::nullopt;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size())
    return std::nullopt;
  return v;
}

std::string port_state_name(std::string_view text) {
  std::size_t colon = text.find(": ");
  if (colon == std::string_view::npos)
    return std::string(text);
  return std::string(text.substr(colon + 2));
}

std::optional<std::string> format_gid(std::string_view sysfs_gid) {
  std::array<unsigned char, 16> raw{};
  if (inet_pton(AF_INET6, std::string(sysfs_gid).c_str(), raw.data()) != 1)
    return std::nullopt;
  std::array<char, INET6_ADDRSTRLEN> text{};
  if (inet_ntop(AF_INET6, raw.data(), text.data(), text.size()) == nullptr)
    return std::nullopt;
  return std::string(text.data());
}

unsigned int ib_mtu_for(unsigned int netdev_mtu) {
  if (netdev_mtu <= roce_hdr_overhead)
    return 0;
  unsigned int room = netdev_mtu - roce_hdr_overhead;
  for (unsigned int mtu : {4096u, 2048u, 1024u, 512u, 256u})
    if (room >= mtu)
      return mtu;
  return 0;
}

namespace {

std::vector<GidEntry> read_gids(const Sysfs &sysfs, const std::filesystem::path &port_dir) {
  std::vector<GidEntry> gids;
  Result<std::vector<std::string>> names = sysfs.list_dir(port_dir / "gids");
  if (!names)
    return gids;
  for (const std::string &n : *names) {
    std::optional<std::uint64_t> index = parse_u64(n);
    if (!index)
      continue;
    std::optional<std::string> raw = read_optional(sysfs, port_dir / "gids" / n);
    if (!raw)
      continue;
    std::optional<std::string> gid = format_gid(*raw);
    if (!gid || *gid == "::")
      continue;
    // Reading the type of an unused entry fails (EINVAL); keep the GID with no type then.
    std::string type = read_optional(sysfs, port_dir / "gid_attrs/types" / n).value_or("");
    gids.push_back({static_cast<unsigned int>(*index), *gid, type});
  }
  std::sort(gids.begin(), gids.end(),
            [](const GidEntry &a, const GidEntry &b) { return a.index < b.index; });
  return gids;
}

std::optional<bool> read_enable(const Sysfs &sysfs, const std::filesystem::path &rel) {
  std::optional<std::string> v = read_optional(sysfs, rel);
  if (!v)
    return std::nullopt;
  std::optional<std::uint64_t> n = parse_u64(*v);
  return n && *n != 0;
}

} // namespace

Result<DeviceView> read_device_view(const Sysfs &sysfs, std::string_view name) {
  std::optional<SrnicAttrs> attrs = srnic_attrs(sysfs, name);
  if (!attrs)
    return Error{ENODEV, fmt::format("{} is not an srnic device", name)};
  DeviceView view;
  view.name = std::string(name);
  std::filesystem::path dir = ib_class / name;
  view.node_guid = read_optional(sysfs, dir / "node_guid");
  view.netdev = attrs->netdev;
  if (view.netdev && safe_name(*view.netdev)) {
    std::filesystem::path net = std::filesystem::path("class/net") / *view.netdev;
    view.netdev_exists = sysfs.exists(net);
    if (view.netdev_exists) {
      view.operstate = read_optional(sysfs, net / "operstate");
      if (std::optional<std::string> flags = read_optional(sysfs, net / "flags")) {
        unsigned long f = 0;
        if (std::sscanf(flags->c_str(), "%lx", &f) == 1)
          view.admin_up = (f & IFF_UP) != 0;
      }
      if (std::optional<std::string> mtu = read_optional(sysfs, net / "mtu"))
        if (std::optional<std::uint64_t> m = parse_u64(*mtu))
          view.mtu = static_cast<unsigned int>(*m);
    }
  }
  if (Result<std::vector<std::string>> ports = sysfs.list_dir(dir / "ports")) {
    for (const std::string &p : *ports) {
      std::optional<std::uint64_t> num = parse_u64(p);
      if (!num)
        continue;
      std::filesystem::path pd = dir / "ports" / p;
      PortView pv;
      pv.port = static_cast<unsigned int>(*num);
      pv.state = port_state_name(read_optional(sysfs, pd / "state").value_or("?"));
      pv.phys_state = port_state_name(read_optional(sysfs, pd / "phys_state").value_or("?"));
      pv.gids = read_gids(sysfs, pd);
      view.ports.push_back(std::move(pv));
    }
  }
  view.dcqcn_np = read_enable(sysfs, dir / "roce_np/enable");
  view.dcqcn_rp = read_enable(sysfs, dir / "roce_rp/enable");
  return view;
}

Result<std::vector<std::string>> select_devices(const Sysfs &sysfs,
                                                const std::optional<std::string> &name) {
  if (!name)
    return srnic_devices(sysfs);
  if (srnic_attrs(sysfs, *name))
    return std::vector<std::string>{*name};
  if (safe_name(*name) && sysfs.is_dir(ib_class / *name))
    return Error{ENODEV, fmt::format("{} is not an srnic device", *name)};
  return Error{ENODEV, fmt::format("no RDMA device {}", *name)};
}

Result<void> for_each_device_view(const Sysfs &sysfs, const std::optional<std::string> &name,
                                  const std::function<Result<void>(const DeviceView &)> &fn) {
  Result<std::vector<std::string>> devs = select_devices(sysfs, name);
  if (!devs)
    return std::move(devs).error();
  for (const std::string &d : *devs) {
    Result<DeviceView> v = read_device_view(sysfs, d);
    if (!v)
      return std::move(v).error();
    if (Result<void> r = fn(*v); !r)
      return r;
  }
  return {};
}

Result<std::vector<std::pair<std::string, std::uint64_t>>>
read_hw_counters(const Sysfs &sysfs, std::string_view dev, unsigned int port) {
  std::filesystem::path dir = ib_class / dev / "ports" / std::to_string(port) / "hw_counters";
  Result<std::vector<std::string>> names = sysfs.list_dir(dir);
  if (!names)
    return std::move(names).error();
  std::vector<std::pair<std::string, std::uint64_t>> counters;
  for (const std::string &n : *names) {
    if (n == "lifespan") // the refresh period in ms, a setting rather than a counter
      continue;
    std::optional<std::string> raw = read_optional(sysfs, dir / n);
    if (!raw)
      continue;
    if (std::optional<std::uint64_t> v = parse_u64(*raw))
      counters.emplace_back(n, *v);
  }
  return counters;
}

} // namespace srnic::ctl

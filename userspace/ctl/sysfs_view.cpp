// SPDX-License-Identifier: GPL-2.0
#include "sysfs_view.h"

#include <arpa/inet.h>
#include <linux/if.h>
#include <sys/stat.h>

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

namespace {

// Fills the netdev state fields of v from class/net/<v.netdev>.
void read_netdev_state(const Sysfs &sysfs, DeviceView &v) {
  if (!v.netdev || !safe_name(*v.netdev))
    return;
  std::filesystem::path net = std::filesystem::path("class/net") / *v.netdev;
  v.netdev_exists = sysfs.exists(net);
  if (!v.netdev_exists)
    return;
  v.operstate = read_optional(sysfs, net / "operstate");
  if (std::optional<std::string> flags = read_optional(sysfs, net / "flags")) {
    unsigned long f = 0;
    if (std::sscanf(flags->c_str(), "%lx", &f) == 1)
      v.admin_up = (f & IFF_UP) != 0;
  }
  if (std::optional<std::string> mtu = read_optional(sysfs, net / "mtu"))
    if (std::optional<std::uint64_t> m = parse_u64(*mtu))
      v.mtu = static_cast<unsigned int>(*m);
  std::string uevent = read_optional(sysfs, net / "uevent").value_or("");
  Result<std::vector<std::string>> names = sysfs.list_dir(net);
  if (("\n" + uevent + "\n").find("\nDEVTYPE=vlan\n") != std::string::npos) {
    v.vlan_of = "";
    if (names)
      for (const std::string &n : *names)
        if (n.starts_with("lower_"))
          v.vlan_of = n.substr(6);
  }
  if (!names)
    return;
  for (const std::string &n : *names) {
    if (!n.starts_with("upper_"))
      continue;
    std::string upper = n.substr(6);
    if (!safe_name(upper))
      continue;
    std::filesystem::path up = std::filesystem::path("class/net") / upper;
    std::optional<std::string> mode = read_optional(sysfs, up / "bonding/mode");
    bool bridge = !mode && sysfs.exists(up / "bridge");
    if (!mode && !bridge)
      continue;
    DeviceView::PortOf p{upper, bridge, "", "", {}};
    if (mode) {
      p.mode = mode->substr(0, mode->find(' '));
      p.state = read_optional(sysfs, net / "bonding_slave/state").value_or("");
    }
    if (Result<std::vector<std::string>> lowers = sysfs.list_dir(up))
      for (const std::string &l : *lowers)
        if (l.starts_with("lower_"))
          p.ports.push_back(l.substr(6));
    v.port_of = std::move(p);
  }
}

std::vector<PortView> read_ports(const Sysfs &sysfs, const std::filesystem::path &dir) {
  std::vector<PortView> ports;
  Result<std::vector<std::string>> names = sysfs.list_dir(dir / "ports");
  if (!names)
    return ports;
  for (const std::string &p : *names) {
    std::optional<std::uint64_t> num = parse_u64(p);
    if (!num)
      continue;
    std::filesystem::path pd = dir / "ports" / p;
    PortView pv;
    pv.port = static_cast<unsigned int>(*num);
    pv.state = port_state_name(read_optional(sysfs, pd / "state").value_or("?"));
    pv.phys_state = port_state_name(read_optional(sysfs, pd / "phys_state").value_or("?"));
    pv.gids = read_gids(sysfs, pd);
    ports.push_back(std::move(pv));
  }
  std::sort(ports.begin(), ports.end(),
            [](const PortView &a, const PortView &b) { return a.port < b.port; });
  return ports;
}

// enable of an mlx5 ecn side: a file, or a directory with one file per priority.
std::optional<bool> read_enable_any(const Sysfs &sysfs, const std::filesystem::path &rel) {
  if (!sysfs.is_dir(rel))
    return read_enable(sysfs, rel);
  Result<std::vector<std::string>> prios = sysfs.list_dir(rel);
  if (!prios)
    return std::nullopt;
  std::optional<bool> on;
  for (const std::string &p : *prios)
    if (std::optional<bool> e = read_enable(sysfs, rel / p))
      on = on.value_or(false) || *e;
  return on;
}

// An RDMA device that srnicctl shows neither as srnic's nor as another driver's on Ethernet.
Error not_srnic_nor_ethernet(std::string_view name) {
  return Error{ENODEV,
               fmt::format("{} is neither an srnic device nor an RDMA device on Ethernet", name)};
}

void add_unique(std::vector<std::string> &v, std::string s) {
  if (std::find(v.begin(), v.end(), s) == v.end())
    v.push_back(std::move(s));
}

} // namespace

std::optional<std::uint64_t> own_netns() {
  struct stat st {};
  if (stat("/proc/self/ns/net", &st) != 0)
    return std::nullopt;
  return static_cast<std::uint64_t>(st.st_ino);
}

std::optional<std::string> netns_name(std::uint64_t inum) {
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/run/netns", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    struct stat st {};
    if (stat(it->path().c_str(), &st) == 0 && static_cast<std::uint64_t>(st.st_ino) == inum)
      return it->path().filename().string();
  }
  return std::nullopt;
}

Result<DeviceView> read_device_view(const Sysfs &sysfs, std::string_view name) {
  std::optional<SrnicAttrs> attrs = srnic_attrs(sysfs, name);
  if (!attrs)
    return Error{ENODEV, fmt::format("{} is not an srnic device", name)};
  DeviceView view;
  view.name = std::string(name);
  std::filesystem::path dir = ib_class / name;
  view.node_guid = read_optional(sysfs, dir / "node_guid");
  view.netdev = attrs->netdev;
  std::filesystem::path modes = dir / SRNIC_SYSFS_GROUP;
  if (std::optional<std::string> ns = read_optional(sysfs, modes / SRNIC_SYSFS_NETNS))
    view.netdev_netns = parse_u64(*ns);
  std::optional<std::uint64_t> here = own_netns();
  view.netdev_elsewhere = view.netdev_netns && here && *view.netdev_netns != *here;
  if (!view.netdev_elsewhere)
    read_netdev_state(sysfs, view);
  view.ports = read_ports(sysfs, dir);
  view.dcqcn_np = read_enable(sysfs, dir / "roce_np/enable");
  view.dcqcn_rp = read_enable(sysfs, dir / "roce_rp/enable");
  view.provider = read_optional(sysfs, modes / SRNIC_SYSFS_PROVIDER);
  if (std::optional<std::string> r = read_optional(sysfs, modes / SRNIC_SYSFS_REPATH_TIMEOUTS))
    view.repath_timeouts = parse_u64(*r);
  view.rx_steer = read_enable(sysfs, modes / SRNIC_SYSFS_RX_STEER);
  view.rx_spread = read_enable(sysfs, modes / SRNIC_SYSFS_RX_SPREAD);
  view.tx_batch = read_enable(sysfs, modes / SRNIC_SYSFS_TX_BATCH);
  return view;
}

std::optional<OtherDevice> other_device(const Sysfs &sysfs, std::string_view name) {
  if (!safe_name(name) || srnic_attrs(sysfs, name))
    return std::nullopt;
  std::filesystem::path dir = ib_class / name;
  Result<std::vector<std::string>> ports = sysfs.list_dir(dir / "ports");
  if (!ports)
    return std::nullopt;
  OtherDevice dev;
  dev.name = std::string(name);
  bool ethernet = false;
  for (const std::string &p : *ports) {
    if (!parse_u64(p))
      continue;
    std::filesystem::path pd = dir / "ports" / p;
    if (read_optional(sysfs, pd / "link_layer") != "Ethernet")
      continue;
    ethernet = true;
    // Reading an unused GID entry's ndev fails (EINVAL); used ones name the netdev.
    if (Result<std::vector<std::string>> idx = sysfs.list_dir(pd / "gid_attrs/ndevs"))
      for (const std::string &i : *idx)
        if (std::optional<std::string> nd = read_optional(sysfs, pd / "gid_attrs/ndevs" / i))
          if (safe_name(*nd))
            add_unique(dev.netdevs, *nd);
  }
  if (!ethernet)
    return std::nullopt;
  if (Result<std::vector<std::string>> nets = sysfs.list_dir(dir / "device/net"))
    for (std::string &n : *nets)
      add_unique(dev.netdevs, std::move(n));
  std::sort(dev.netdevs.begin(), dev.netdevs.end());
  std::error_code ec;
  std::filesystem::path drv = std::filesystem::read_symlink(sysfs.path(dir / "device/driver"), ec);
  if (!ec && !drv.filename().empty())
    dev.driver = drv.filename().string();
  return dev;
}

Result<std::vector<OtherDevice>> other_devices(const Sysfs &sysfs) {
  Result<std::vector<std::string>> names = sysfs.list_dir(ib_class);
  if (!names) {
    if (names.error().errnum == ENOENT)
      return std::vector<OtherDevice>{};
    return std::move(names).error();
  }
  std::vector<OtherDevice> others;
  for (const std::string &name : *names)
    if (std::optional<OtherDevice> o = other_device(sysfs, name))
      others.push_back(std::move(*o));
  return others;
}

Result<DeviceView> read_any_device_view(const Sysfs &sysfs, std::string_view name) {
  if (srnic_attrs(sysfs, name))
    return read_device_view(sysfs, name);
  std::optional<OtherDevice> other = other_device(sysfs, name);
  if (!other)
    return not_srnic_nor_ethernet(name);
  DeviceView view;
  view.name = other->name;
  view.kind = "other";
  view.driver = other->driver;
  std::filesystem::path dir = ib_class / name;
  view.node_guid = read_optional(sysfs, dir / "node_guid");
  if (!other->netdevs.empty())
    view.netdev = other->netdevs.front();
  read_netdev_state(sysfs, view);
  view.ports = read_ports(sysfs, dir);
  if (view.netdev) {
    std::filesystem::path ecn = std::filesystem::path("class/net") / *view.netdev / "ecn";
    view.dcqcn_np = read_enable_any(sysfs, ecn / "roce_np/enable");
    view.dcqcn_rp = read_enable_any(sysfs, ecn / "roce_rp/enable");
  }
  return view;
}

std::optional<std::filesystem::path> dcqcn_dir(const Sysfs &sysfs, std::string_view dev,
                                               std::string_view side) {
  if (side != "np" && side != "rp")
    return std::nullopt;
  std::string sub = fmt::format("roce_{}", side);
  if (srnic_attrs(sysfs, dev))
    return ib_class / dev / sub;
  std::optional<OtherDevice> other = other_device(sysfs, dev);
  if (!other || other->netdevs.empty())
    return std::nullopt;
  return std::filesystem::path("class/net") / other->netdevs.front() / "ecn" / sub;
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

Result<std::vector<std::string>> select_devices(const Sysfs &sysfs,
                                                const std::optional<std::string> &name,
                                                Scope scope) {
  if (scope == Scope::srnic)
    return select_devices(sysfs, name);
  if (name) {
    if (srnic_attrs(sysfs, *name) || other_device(sysfs, *name))
      return std::vector<std::string>{*name};
    if (safe_name(*name) && sysfs.is_dir(ib_class / *name))
      return not_srnic_nor_ethernet(*name);
    return Error{ENODEV, fmt::format("no RDMA device {}", *name)};
  }
  Result<std::vector<std::string>> devs = srnic_devices(sysfs);
  if (!devs)
    return devs;
  Result<std::vector<OtherDevice>> others = other_devices(sysfs);
  if (!others)
    return std::move(others).error();
  for (OtherDevice &o : *others)
    devs->push_back(std::move(o.name));
  return devs;
}

Result<void> for_each_device_view(const Sysfs &sysfs, const std::optional<std::string> &name,
                                  const std::function<Result<void>(const DeviceView &)> &fn,
                                  Scope scope) {
  Result<std::vector<std::string>> devs = select_devices(sysfs, name, scope);
  if (!devs)
    return std::move(devs).error();
  for (const std::string &d : *devs) {
    Result<DeviceView> v =
        scope == Scope::srnic ? read_device_view(sysfs, d) : read_any_device_view(sysfs, d);
    if (!v)
      return std::move(v).error();
    if (Result<void> r = fn(*v); !r)
      return r;
  }
  return {};
}

namespace {

Result<std::vector<std::pair<std::string, std::uint64_t>>>
read_counter_dir(const Sysfs &sysfs, const std::filesystem::path &dir) {
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

} // namespace

Result<std::vector<std::pair<std::string, std::uint64_t>>>
read_hw_counters(const Sysfs &sysfs, std::string_view dev, unsigned int port) {
  return read_counter_dir(sysfs,
                          ib_class / dev / "ports" / std::to_string(port) / "hw_counters");
}

Result<std::vector<std::pair<std::string, std::uint64_t>>>
read_port_counters(const Sysfs &sysfs, std::string_view dev, unsigned int port) {
  return read_counter_dir(sysfs, ib_class / dev / "ports" / std::to_string(port) / "counters");
}

} // namespace srnic::ctl

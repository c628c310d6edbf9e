// SPDX-License-Identifier: GPL-2.0
#include "lib/sysfs.h"
#include "temp_dir.h"

#include <stdlib.h>

#include <cerrno>
#include <optional>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace srnic {
namespace {

using testing::ElementsAre;

// Sets an environment variable for one test and restores it afterwards.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : name_(name) {
    if (const char *old = getenv(name))
      old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

private:
  const char *name_;
  std::optional<std::string> old_;
};

TEST(Sysfs, RootDefaultsToSys) {
  ScopedEnv env("SRNIC_SYSFS_ROOT", nullptr);
  EXPECT_EQ(Sysfs::from_env().root(), "/sys");
}

TEST(Sysfs, EmptyEnvMeansDefault) {
  ScopedEnv env("SRNIC_SYSFS_ROOT", "");
  EXPECT_EQ(Sysfs::from_env().root(), "/sys");
}

TEST(Sysfs, RootComesFromEnv) {
  ScopedEnv env("SRNIC_SYSFS_ROOT", "/tmp/fake-sys");
  Sysfs sysfs = Sysfs::from_env();
  EXPECT_EQ(sysfs.root(), "/tmp/fake-sys");
  EXPECT_EQ(sysfs.path("module/srnic"), "/tmp/fake-sys/module/srnic");
}

TEST(Sysfs, ReadAttrStripsTrailingNewline) {
  test::TempDir dir;
  dir.write("class/infiniband/x/srnic/version", "0.1.0\n");
  Result<std::string> v = Sysfs(dir.path()).read_attr("class/infiniband/x/srnic/version");
  ASSERT_TRUE(v) << to_string(v.error());
  EXPECT_EQ(*v, "0.1.0");
}

TEST(Sysfs, ReadAttrOfMissingFileIsEnoent) {
  test::TempDir dir;
  Result<std::string> v = Sysfs(dir.path()).read_attr("nothing");
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error().errnum, ENOENT);
}

TEST(Sysfs, ExistsAndIsDir) {
  test::TempDir dir;
  dir.mkdir("module/srnic");
  dir.write("file", "");
  Sysfs sysfs(dir.path());
  EXPECT_TRUE(sysfs.exists("module/srnic"));
  EXPECT_TRUE(sysfs.is_dir("module/srnic"));
  EXPECT_TRUE(sysfs.exists("file"));
  EXPECT_FALSE(sysfs.is_dir("file"));
  EXPECT_FALSE(sysfs.exists("module/rdma_rxe"));
}

TEST(Sysfs, IsDirFollowsSymlinks) {
  // /sys/class/<class>/<dev> entries are symlinks into /sys/devices.
  test::TempDir dir;
  dir.mkdir("devices/virtual/infiniband/srnic0/srnic");
  dir.mkdir("class/infiniband");
  std::filesystem::create_directory_symlink(dir.path() / "devices/virtual/infiniband/srnic0",
                                            dir.path() / "class/infiniband/srnic0");
  EXPECT_TRUE(Sysfs(dir.path()).is_dir("class/infiniband/srnic0/srnic"));
}

TEST(Sysfs, ListDirIsSorted) {
  test::TempDir dir;
  dir.mkdir("class/net/veth1");
  dir.mkdir("class/net/eth0");
  dir.mkdir("class/net/lo");
  Result<std::vector<std::string>> names = Sysfs(dir.path()).list_dir("class/net");
  ASSERT_TRUE(names);
  EXPECT_THAT(*names, ElementsAre("eth0", "lo", "veth1"));
}

TEST(Sysfs, ListDirOfMissingDirIsEnoent) {
  test::TempDir dir;
  Result<std::vector<std::string>> names = Sysfs(dir.path()).list_dir("class/infiniband");
  ASSERT_FALSE(names);
  EXPECT_EQ(names.error().errnum, ENOENT);
}

} // namespace
} // namespace srnic

// SPDX-License-Identifier: GPL-2.0
#include "ctl/cli.h"
#include "ctl/health.h"
#include "temp_dir.h"

#include <cstdlib>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace srnic::ctl {
namespace {

using testing::HasSubstr;

// Starts as a healthy host: srnic loaded, no rxe, srnic0 bound to an existing veth0, and
// a non-srnic mlx5_0 that the checks must ignore.
class Health : public testing::Test {
protected:
  Health() {
    dir_.mkdir("module/srnic");
    dir_.write("class/infiniband/srnic0/srnic/netdev", "veth0\n");
    dir_.mkdir("class/infiniband/mlx5_0");
    dir_.mkdir("class/net/veth0");
  }

  const HealthCheck *find(const std::vector<HealthCheck> &checks, const std::string &name) {
    for (const HealthCheck &c : checks)
      if (c.check == name)
        return &c;
    return nullptr;
  }

  test::TempDir dir_;
  Sysfs sysfs_{dir_.path()};
};

TEST_F(Health, AllPassOnAHealthyHost) {
  std::vector<HealthCheck> checks = run_health_checks(sysfs_);
  ASSERT_EQ(checks.size(), 3u);
  EXPECT_EQ(checks[0].check, "srnic_loaded");
  EXPECT_EQ(checks[1].check, "rxe_not_loaded");
  EXPECT_EQ(checks[2].check, "netdev_present");
  for (const HealthCheck &c : checks)
    EXPECT_TRUE(c.ok) << c.check << ": " << c.detail;
  EXPECT_EQ(checks[2].detail, "srnic0: netdev veth0 exists");
}

TEST_F(Health, SrnicNotLoadedFails) {
  std::filesystem::remove(dir_.path() / "module/srnic");
  std::vector<HealthCheck> checks = run_health_checks(sysfs_);
  const HealthCheck *c = find(checks, "srnic_loaded");
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->ok);
  EXPECT_THAT(c->detail, HasSubstr("not loaded"));
}

TEST_F(Health, RxeLoadedFails) {
  dir_.mkdir("module/rdma_rxe");
  std::vector<HealthCheck> checks = run_health_checks(sysfs_);
  const HealthCheck *c = find(checks, "rxe_not_loaded");
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->ok);
  EXPECT_THAT(c->detail, HasSubstr("cannot coexist"));
}

TEST_F(Health, MissingNetdevFails) {
  std::filesystem::remove(dir_.path() / "class/net/veth0");
  std::vector<HealthCheck> checks = run_health_checks(sysfs_);
  const HealthCheck *c = find(checks, "netdev_present");
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->ok);
  EXPECT_EQ(c->detail, "srnic0: netdev veth0 does not exist");
}

TEST_F(Health, MissingNetdevAttributeFails) {
  std::filesystem::remove(dir_.path() / "class/infiniband/srnic0/srnic/netdev");
  std::vector<HealthCheck> checks = run_health_checks(sysfs_);
  const HealthCheck *c = find(checks, "netdev_present");
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->ok);
  EXPECT_THAT(c->detail, HasSubstr("no srnic/netdev attribute"));
}

TEST_F(Health, NetdevNameCannotEscapeClassNet) {
  dir_.write("class/infiniband/srnic0/srnic/netdev", "../infiniband\n");
  std::vector<HealthCheck> checks = run_health_checks(sysfs_);
  const HealthCheck *c = find(checks, "netdev_present");
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->ok);
}

TEST_F(Health, OneNetdevCheckPerSrnicDevice) {
  dir_.write("class/infiniband/srnic1/srnic/netdev", "veth1\n");
  std::vector<HealthCheck> checks = run_health_checks(sysfs_);
  ASSERT_EQ(checks.size(), 4u);
  EXPECT_TRUE(checks[2].ok);
  EXPECT_EQ(checks[3].detail, "srnic1: netdev veth1 does not exist");
  EXPECT_FALSE(checks[3].ok);
}

TEST(HealthEmptyHost, OnlyModuleChecksWithoutDevices) {
  test::TempDir dir;
  std::vector<HealthCheck> checks = run_health_checks(Sysfs(dir.path()));
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_FALSE(checks[0].ok);
  EXPECT_TRUE(checks[1].ok);
}

// Through the CLI: output format and exit status.
TEST_F(Health, CliHealthyExitsZero) {
  std::ostringstream out, err;
  EXPECT_EQ(run({"health"}, sysfs_, out, err), EXIT_SUCCESS);
  EXPECT_EQ(err.str(), "");
  EXPECT_EQ(out.str(), "check srnic_loaded ok true detail module srnic is loaded \n"
                       "check rxe_not_loaded ok true detail module rdma_rxe is not loaded \n"
                       "check netdev_present ok true detail srnic0: netdev veth0 exists \n");
}

TEST_F(Health, CliJsonIsArrayOfChecks) {
  dir_.mkdir("module/rdma_rxe");
  std::ostringstream out, err;
  EXPECT_EQ(run({"-j", "health"}, sysfs_, out, err), EXIT_FAILURE);
  EXPECT_EQ(err.str(), "srnicctl: 1 of 3 health checks failed\n");
  nlohmann::json j = nlohmann::json::parse(out.str());
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 3u);
  for (const auto &rec : j) {
    ASSERT_TRUE(rec.is_object());
    EXPECT_EQ(rec.size(), 3u);
    EXPECT_TRUE(rec["check"].is_string());
    EXPECT_TRUE(rec["ok"].is_boolean());
    EXPECT_TRUE(rec["detail"].is_string());
  }
  EXPECT_EQ(j[1]["check"], "rxe_not_loaded");
  EXPECT_EQ(j[1]["ok"], false);
}

TEST_F(Health, CliPrettyJson) {
  std::ostringstream out, err;
  EXPECT_EQ(run({"-j", "-p", "health"}, sysfs_, out, err), EXIT_SUCCESS);
  EXPECT_THAT(out.str(), testing::StartsWith("[\n    {\n        \"check\": \"srnic_loaded\",\n"));
  EXPECT_TRUE(nlohmann::json::accept(out.str()));
}

} // namespace
} // namespace srnic::ctl

// SPDX-License-Identifier: GPL-2.0
#include "ctl/cli.h"
#include "ctl/doctor.h"
#include "temp_dir.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace srnic::ctl {
namespace {

using testing::HasSubstr;

// srnicctl health: a quick view of doctor's checks (run_health()).
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

  const DoctorCheck *find(const std::vector<DoctorCheck> &checks, const std::string &name) {
    for (const DoctorCheck &c : checks)
      if (c.check == name)
        return &c;
    return nullptr;
  }

  test::TempDir dir_;
  Sysfs sysfs_{dir_.path()};
};

TEST_F(Health, AllPassOnAHealthyHost) {
  std::vector<DoctorCheck> checks = run_health(sysfs_);
  ASSERT_EQ(checks.size(), 3u);
  EXPECT_EQ(checks[0].check, "module_srnic");
  EXPECT_EQ(checks[1].check, "rxe_conflict");
  EXPECT_EQ(checks[2].check, "netdev");
  for (const DoctorCheck &c : checks)
    EXPECT_EQ(c.status, CheckStatus::ok) << c.check << ": " << c.detail;
  EXPECT_EQ(checks[2].dev, "srnic0");
  EXPECT_EQ(checks[2].detail, "bound to netdev veth0");
}

TEST_F(Health, SrnicNotLoadedFails) {
  std::filesystem::remove(dir_.path() / "module/srnic");
  std::vector<DoctorCheck> checks = run_health(sysfs_);
  const DoctorCheck *c = find(checks, "module_srnic");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, CheckStatus::fail);
  EXPECT_THAT(c->detail, HasSubstr("not loaded"));
}

TEST_F(Health, RxeLoadedFails) {
  dir_.mkdir("module/rdma_rxe");
  std::vector<DoctorCheck> checks = run_health(sysfs_);
  const DoctorCheck *c = find(checks, "rxe_conflict");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, CheckStatus::fail);
  EXPECT_THAT(c->detail, HasSubstr("cannot run together"));
}

TEST_F(Health, MissingNetdevFails) {
  std::filesystem::remove(dir_.path() / "class/net/veth0");
  std::vector<DoctorCheck> checks = run_health(sysfs_);
  const DoctorCheck *c = find(checks, "netdev");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, CheckStatus::fail);
  EXPECT_EQ(c->detail, "netdev veth0 is gone");
}

TEST_F(Health, MissingNetdevAttributeFails) {
  std::filesystem::remove(dir_.path() / "class/infiniband/srnic0/srnic/netdev");
  std::vector<DoctorCheck> checks = run_health(sysfs_);
  const DoctorCheck *c = find(checks, "netdev");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, CheckStatus::fail);
  EXPECT_EQ(c->detail, "no bound netdev");
}

TEST_F(Health, NetdevNameCannotEscapeClassNet) {
  dir_.write("class/infiniband/srnic0/srnic/netdev", "../infiniband\n");
  std::vector<DoctorCheck> checks = run_health(sysfs_);
  const DoctorCheck *c = find(checks, "netdev");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, CheckStatus::fail);
}

TEST_F(Health, OneNetdevCheckPerSrnicDevice) {
  dir_.write("class/infiniband/srnic1/srnic/netdev", "veth1\n");
  std::vector<DoctorCheck> checks = run_health(sysfs_);
  ASSERT_EQ(checks.size(), 4u);
  EXPECT_EQ(checks[2].status, CheckStatus::ok);
  EXPECT_EQ(checks[3].dev, "srnic1");
  EXPECT_EQ(checks[3].detail, "netdev veth1 is gone");
  EXPECT_EQ(checks[3].status, CheckStatus::fail);
}

TEST(HealthEmptyHost, OnlyModuleChecksWithoutDevices) {
  test::TempDir dir;
  std::vector<DoctorCheck> checks = run_health(Sysfs(dir.path()));
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[0].status, CheckStatus::fail);
  EXPECT_EQ(checks[1].status, CheckStatus::ok);
}

// health is a view of doctor's checks: each of its checks is one of doctor's, the same.
TEST_F(Health, EveryCheckIsOneOfDoctors) {
  std::filesystem::remove(dir_.path() / "class/net/veth0");
  dir_.mkdir("module/rdma_rxe");
  DoctorOptions opts;
  opts.selftest = false;
  std::vector<DoctorCheck> doctor = run_doctor(sysfs_, dir_.path(), opts);
  std::vector<DoctorCheck> health = run_health(sysfs_);
  ASSERT_EQ(health.size(), 3u);
  for (const DoctorCheck &h : health) {
    auto same = [&h](const DoctorCheck &d) {
      return d.check == h.check && d.dev == h.dev && d.status == h.status && d.detail == h.detail &&
             d.fix == h.fix;
    };
    EXPECT_EQ(std::count_if(doctor.begin(), doctor.end(), same), 1) << h.check << ": " << h.detail;
  }
}

// Through the CLI: output format and exit status.
TEST_F(Health, CliHealthyExitsZero) {
  std::ostringstream out, err;
  EXPECT_EQ(run({"health"}, sysfs_, out, err), EXIT_SUCCESS);
  EXPECT_EQ(err.str(), "");
  EXPECT_EQ(out.str(), "check module_srnic ok true detail module srnic is loaded \n"
                       "check rxe_conflict ok true detail module rdma_rxe is not loaded \n"
                       "check netdev ok true detail srnic0: bound to netdev veth0 \n");
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
  EXPECT_EQ(j[1]["check"], "rxe_conflict");
  EXPECT_EQ(j[1]["ok"], false);
}

TEST_F(Health, CliPrettyJson) {
  std::ostringstream out, err;
  EXPECT_EQ(run({"-j", "-p", "health"}, sysfs_, out, err), EXIT_SUCCESS);
  EXPECT_THAT(out.str(), testing::StartsWith("[\n    {\n        \"check\": \"module_srnic\",\n"));
  EXPECT_TRUE(nlohmann::json::accept(out.str()));
}

} // namespace
} // namespace srnic::ctl

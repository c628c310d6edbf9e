// SPDX-License-Identifier: GPL-2.0
#include "ctl/dcqcn.h"
#include "fake_host.h"

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace srnic::ctl {
namespace {

using testing::HasSubstr;

std::string slurp(const std::filesystem::path &p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Dcqcn, ReadKnobsSorted) {
  test::FakeHost host;
  Result<std::vector<Knob>> k = read_knobs(host.sysfs(), "srnic0", "rp");
  ASSERT_TRUE(k) << to_string(k.error());
  ASSERT_EQ(k->size(), 3u);
  EXPECT_EQ((*k)[0].name, "enable");
  EXPECT_EQ((*k)[1].name, "rpg_ai_rate");
  EXPECT_EQ((*k)[1].value, "5");
  EXPECT_EQ((*k)[2].name, "rpg_min_rate");
}

TEST(Dcqcn, AbsentDirectorySaysNoDcqcn) {
  test::FakeHost host;
  std::filesystem::remove_all(host.root() / "sys/class/infiniband/srnic0/roce_np");
  Result<std::vector<Knob>> k = read_knobs(host.sysfs(), "srnic0", "np");
  ASSERT_FALSE(k);
  EXPECT_THAT(k.error().msg, HasSubstr("srnic0 has no DCQCN knobs"));
}

TEST(Dcqcn, SetWritesAndReadsBack) {
  test::FakeHost host;
  Result<Knob> k = set_knob(host.sysfs(), "srnic0", "np", "min_time_between_cnps", "8");
  ASSERT_TRUE(k) << to_string(k.error());
  EXPECT_EQ(k->name, "min_time_between_cnps");
  EXPECT_EQ(k->value, "8");
  EXPECT_EQ(slurp(host.root() / "sys/class/infiniband/srnic0/roce_np/min_time_between_cnps"), "8");
}

TEST(Dcqcn, SetUnknownKnobListsKnobs) {
  test::FakeHost host;
  Result<Knob> k = set_knob(host.sysfs(), "srnic0", "rp", "bogus", "1");
  ASSERT_FALSE(k);
  EXPECT_EQ(k.error().errnum, ENOENT);
  EXPECT_EQ(k.error().msg,
            "srnic0: unknown rp knob \"bogus\"; knobs: enable, rpg_ai_rate, rpg_min_rate");
}

TEST(Dcqcn, SetKnobCannotEscape) {
  test::FakeHost host;
  Result<Knob> k = set_knob(host.sysfs(), "srnic0", "rp", "../roce_np/enable", "0");
  ASSERT_FALSE(k);
  EXPECT_THAT(k.error().msg, HasSubstr("unknown rp knob"));
  EXPECT_EQ(slurp(host.root() / "sys/class/infiniband/srnic0/roce_np/enable"), "1\n");
}

TEST(Dcqcn, SetOnNonSrnicDevice) {
  test::FakeHost host;
  Result<Knob> k = set_knob(host.sysfs(), "mlx5_0", "rp", "enable", "1");
  ASSERT_FALSE(k);
  EXPECT_EQ(k.error().msg, "mlx5_0 is not an srnic device");
}

TEST(Dcqcn, WriteErrors) {
  EXPECT_EQ(knob_write_error(EINVAL, "srnic0", "rp", "rpg_min_rate", "x").msg,
            "srnic0: roce_rp/rpg_min_rate: the kernel refused value \"x\"");
  EXPECT_EQ(to_string(knob_write_error(EINVAL, "s", "np", "k", "v")),
            "s: roce_np/k: the kernel refused value \"v\": Invalid argument");
  EXPECT_THAT(knob_write_error(EACCES, "s", "np", "k", "v").msg, HasSubstr("needs root"));
}

using test::CliRun;
using test::run_on;

TEST(DcqcnCli, ShowJsonOneRecordPerSide) {
  test::FakeHost host;
  CliRun r = run_on(host, {"-j", "dcqcn"});
  ASSERT_EQ(r.status, EXIT_SUCCESS) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["dev"], "srnic0");
  EXPECT_EQ(j[0]["side"], "np");
  EXPECT_EQ(j[0]["enable"], 1);
  EXPECT_EQ(j[0]["min_time_between_cnps"], 4);
  EXPECT_EQ(j[1]["side"], "rp");
  EXPECT_EQ(j[1]["rpg_ai_rate"], 5);
}

TEST(DcqcnCli, ShowText) {
  test::FakeHost host;
  CliRun r = run_on(host, {"dcqcn", "show", "srnic0"});
  ASSERT_EQ(r.status, EXIT_SUCCESS) << r.err;
  EXPECT_EQ(r.out, "dev srnic0 kind srnic side np enable 1 min_time_between_cnps 4 \n"
                   "dev srnic0 kind srnic side rp enable 1 rpg_ai_rate 5 rpg_min_rate 1 \n");
}

TEST(DcqcnCli, SetPrintsNewValue) {
  test::FakeHost host;
  CliRun r = run_on(host, {"-j", "dcqcn", "set", "srnic0", "rp", "rpg_min_rate", "100"});
  ASSERT_EQ(r.status, EXIT_SUCCESS) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j[0]["rpg_min_rate"], 100);
  EXPECT_EQ(j[0]["side"], "rp");
}

TEST(DcqcnCli, SetBadSideIsUsageError) {
  test::FakeHost host;
  CliRun r = run_on(host, {"dcqcn", "set", "srnic0", "xp", "enable", "1"});
  EXPECT_EQ(r.status, EXIT_FAILURE);
  EXPECT_THAT(r.err, HasSubstr("side must be np or rp, not \"xp\""));
}

TEST(DcqcnCli, SetNeedsFourArguments) {
  test::FakeHost host;
  CliRun r = run_on(host, {"dcqcn", "set", "srnic0", "np", "enable"});
  EXPECT_EQ(r.status, EXIT_FAILURE);
  EXPECT_THAT(r.err, testing::StartsWith("srnicctl: "));
}

TEST(DcqcnCli, ShowWithoutKnobsFails) {
  test::FakeHost host;
  std::filesystem::remove_all(host.root() / "sys/class/infiniband/srnic0/roce_np");
  CliRun r = run_on(host, {"-j", "dcqcn", "show"});
  EXPECT_EQ(r.status, EXIT_FAILURE);
  EXPECT_THAT(r.err, HasSubstr("has no DCQCN knobs"));
  EXPECT_TRUE(nlohmann::json::accept(r.out));
}

} // namespace
} // namespace srnic::ctl

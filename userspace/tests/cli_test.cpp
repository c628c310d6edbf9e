// SPDX-License-Identifier: GPL-2.0
#include "fake_host.h"
#include "temp_dir.h"

#include <cstdlib>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace srnic::ctl {
namespace {

using testing::HasSubstr;
using testing::StartsWith;

using test::CliRun;

CliRun run_cli(const std::vector<std::string> &args) {
  test::TempDir dir; // an empty sysfs: nothing loaded
  return test::run_cli(Sysfs(dir.path()), args);
}

// A usage error: exit 1, nothing on stdout, one "srnicctl: " line on stderr.
void expect_usage_error(const CliRun &r) {
  EXPECT_EQ(r.status, EXIT_FAILURE);
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, StartsWith("srnicctl: "));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(Cli, UnknownObjectIsUsageError) {
  CliRun r = run_cli({"bogus"});
  expect_usage_error(r);
  EXPECT_THAT(r.err, StartsWith("srnicctl: unknown object \"bogus\"; one of: dev, show, stats, qp, dcqcn, doctor, top, lat, health"));
}

TEST(Cli, UnknownCommandIsUsageError) {
  CliRun r = run_cli({"dev", "frobnicate"});
  expect_usage_error(r);
  EXPECT_THAT(r.err, StartsWith("srnicctl: unknown command \"frobnicate\" for dev; one of: show, add, del"));
}

TEST(Cli, MissingObjectIsUsageError) {
  CliRun r = run_cli({});
  expect_usage_error(r);
  EXPECT_THAT(r.err, StartsWith("srnicctl: missing object"));
}

TEST(Cli, UnknownOptionIsUsageError) {
  CliRun r = run_cli({"-x", "health"});
  expect_usage_error(r);
  EXPECT_THAT(r.err, StartsWith("srnicctl: unknown option \"-x\""));
}

TEST(Cli, GlobalOptionsGoBeforeTheObject) {
  CliRun r = run_cli({"health", "-j"});
  expect_usage_error(r);
  EXPECT_THAT(r.err, HasSubstr("global options go before the object"));
}

TEST(Cli, UnknownCommandOptionGetsNoGlobalHint) {
  CliRun r = run_cli({"dev", "show", "-x"});
  expect_usage_error(r);
  EXPECT_EQ(r.err, "srnicctl: unknown option \"-x\" (see 'srnicctl --help')\n");
}

TEST(Cli, ShowTakesOneDevice) {
  CliRun r = run_cli({"dev", "show", "a", "b"});
  expect_usage_error(r);
  EXPECT_THAT(r.err, StartsWith("srnicctl: unexpected argument \"b\" for show"));
}

TEST(Cli, HealthTakesNoCommand) {
  CliRun r = run_cli({"health", "show"});
  expect_usage_error(r);
  EXPECT_THAT(r.err, StartsWith("srnicctl: unexpected argument \"show\" for health"));
}

TEST(Cli, VersionSucceeds) {
  CliRun r = run_cli({"-V"});
  EXPECT_EQ(r.status, EXIT_SUCCESS);
  EXPECT_EQ(r.out, "srnicctl " SRNIC_TEST_VERSION "\n");
}

TEST(Cli, HelpListsObjects) {
  CliRun r = run_cli({"--help"});
  EXPECT_EQ(r.status, EXIT_SUCCESS);
  EXPECT_THAT(r.out, HasSubstr("Usage: srnicctl [OPTIONS] OBJECT"));
  EXPECT_THAT(r.out, HasSubstr("Objects:\n  dev "));
  EXPECT_THAT(r.out, HasSubstr("\n  health "));
  EXPECT_THAT(r.out, HasSubstr("-j,--json"));
}

TEST(Cli, ObjectHelpListsCommands) {
  CliRun r = run_cli({"dev", "--help"});
  EXPECT_EQ(r.status, EXIT_SUCCESS);
  EXPECT_THAT(r.out, HasSubstr("Usage: srnicctl dev [OPTIONS] [COMMAND]"));
  EXPECT_THAT(r.out, HasSubstr("Commands:\n  show "));
}

TEST(Cli, HealthOnEmptyHostFails) {
  CliRun r = run_cli({"health"});
  EXPECT_EQ(r.status, EXIT_FAILURE);
  EXPECT_THAT(r.out, HasSubstr("check module_srnic ok false"));
  EXPECT_EQ(r.err, "srnicctl: 1 of 2 health checks failed\n");
}

TEST(Cli, CombinedShortFlags) {
  CliRun r = run_cli({"-jp", "health"});
  EXPECT_EQ(r.status, EXIT_FAILURE);
  EXPECT_THAT(r.out, StartsWith("[\n    {"));
}

// The dev tests talk to this host's RDMA core (if any), so they only check what holds
// everywhere: a JSON array, and no device called like this.
TEST(Cli, DevDefaultsToShowAndPrintsJsonArray) {
  CliRun r = run_cli({"-j", "dev"});
  ASSERT_EQ(r.status, EXIT_SUCCESS) << r.err;
  EXPECT_TRUE(nlohmann::json::parse(r.out).is_array());
}

TEST(Cli, DevShowUnknownDeviceFails) {
  CliRun r = run_cli({"dev", "show", "no_such_rdma_dev"});
  EXPECT_EQ(r.status, EXIT_FAILURE);
  EXPECT_EQ(r.err, "srnicctl: device no_such_rdma_dev: No such device\n");
}

} // namespace
} // namespace srnic::ctl

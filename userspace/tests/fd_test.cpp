// SPDX-License-Identifier: GPL-2.0
#include "lib/fd.h"
#include "temp_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <memory>
#include <type_traits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace srnic {
namespace {

static_assert(!std::is_copy_constructible_v<Fd>);
static_assert(!std::is_copy_assignable_v<Fd>);
static_assert(std::is_nothrow_move_constructible_v<Fd>);
static_assert(std::is_nothrow_move_assignable_v<Fd>);

bool is_open(int fd) {
  return fcntl(fd, F_GETFD) != -1;
}

// Both ends of a pipe, owned by the test until handed to an Fd.
std::array<int, 2> make_pipe() {
  std::array<int, 2> fds{-1, -1};
  if (pipe2(fds.data(), O_CLOEXEC) != 0)
    ADD_FAILURE() << "pipe2 failed: " << errno;
  return fds;
}

TEST(Fd, DefaultIsEmpty) {
  Fd fd;
  EXPECT_FALSE(fd.valid());
  EXPECT_FALSE(fd);
  EXPECT_EQ(fd.get(), -1);
}

TEST(Fd, ClosesOnDestruction) {
  auto [r, w] = make_pipe();
  {
    Fd a(r);
    Fd b(w);
    EXPECT_TRUE(a.valid());
  }
  EXPECT_FALSE(is_open(r));
  EXPECT_FALSE(is_open(w));
}

TEST(Fd, MoveConstructionTransfersOwnership) {
  auto [r, w] = make_pipe();
  Fd keep_w(w);
  auto a = std::make_unique<Fd>(r);
  Fd b(std::move(*a));
  EXPECT_FALSE(a->valid());
  EXPECT_EQ(b.get(), r);
  a.reset(); // the moved-from Fd must not close what b now owns
  EXPECT_TRUE(is_open(r));
}

TEST(Fd, MoveAssignmentClosesPreviousDescriptor) {
  auto [r, w] = make_pipe();
  Fd a(r);
  Fd b(w);
  b = std::move(a);
  EXPECT_FALSE(is_open(w));
  EXPECT_TRUE(is_open(r));
  EXPECT_EQ(b.get(), r);
  EXPECT_FALSE(a.valid()); // NOLINT(bugprone-use-after-move): the moved-from state
}

TEST(Fd, SelfMoveAssignmentKeepsDescriptor) {
  auto [r, w] = make_pipe();
  Fd keep_w(w);
  Fd a(r);
  Fd &alias = a;
  a = std::move(alias);
  EXPECT_EQ(a.get(), r);
  EXPECT_TRUE(is_open(r));
}

TEST(Fd, ReleaseGivesUpOwnership) {
  auto [r, w] = make_pipe();
  Fd keep_w(w);
  int released;
  {
    Fd a(r);
    released = a.release();
    EXPECT_FALSE(a.valid());
  }
  EXPECT_EQ(released, r);
  EXPECT_TRUE(is_open(r));
  ::close(r);
}

TEST(Fd, ResetClosesOldAndTakesNew) {
  auto [r, w] = make_pipe();
  Fd a(r);
  a.reset(w);
  EXPECT_FALSE(is_open(r));
  EXPECT_EQ(a.get(), w);
  a.reset();
  EXPECT_FALSE(is_open(w));
  EXPECT_FALSE(a.valid());
}

TEST(Fd, OpenSetsCloexec) {
  test::TempDir dir;
  dir.write("f", "x");
  Result<Fd> fd = Fd::open(dir.path() / "f", O_RDONLY);
  ASSERT_TRUE(fd) << to_string(fd.error());
  EXPECT_NE(fcntl(fd->get(), F_GETFD) & FD_CLOEXEC, 0);
}

TEST(Fd, OpenFailureCarriesErrnoAndPath) {
  Result<Fd> fd = Fd::open("/nonexistent/srnic/file", O_RDONLY);
  ASSERT_FALSE(fd);
  EXPECT_EQ(fd.error().errnum, ENOENT);
  EXPECT_THAT(fd.error().msg, testing::HasSubstr("/nonexistent/srnic/file"));
}

TEST(Fd, ReadAllReadsToEnd) {
  test::TempDir dir;
  std::string big(10000, 'a');
  dir.write("f", big);
  Result<Fd> fd = Fd::open(dir.path() / "f", O_RDONLY);
  ASSERT_TRUE(fd);
  Result<std::string> data = read_all(*fd, 20000);
  ASSERT_TRUE(data);
  EXPECT_EQ(*data, big);
}

TEST(Fd, ReadAllRefusesMoreThanMax) {
  test::TempDir dir;
  dir.write("f", std::string(5000, 'a'));
  Result<Fd> fd = Fd::open(dir.path() / "f", O_RDONLY);
  ASSERT_TRUE(fd);
  Result<std::string> data = read_all(*fd, 4999);
  ASSERT_FALSE(data);
  EXPECT_EQ(data.error().errnum, EFBIG);
}

} // namespace
} // namespace srnic

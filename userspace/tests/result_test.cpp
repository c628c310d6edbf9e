// SPDX-License-Identifier: GPL-2.0
#include "lib/result.h"

#include <cerrno>
#include <memory>
#include <string>
#include <variant>

#include <gtest/gtest.h>

namespace srnic {
namespace {

Result<int> parse_positive(int v) {
  if (v <= 0)
    return Error{EINVAL, "not positive"};
  return v;
}

TEST(Result, HoldsValue) {
  Result<int> r = parse_positive(42);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r.has_value());
  EXPECT_EQ(*r, 42);
  EXPECT_EQ(r.value(), 42);
}

TEST(Result, HoldsError) {
  Result<int> r = parse_positive(-1);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().errnum, EINVAL);
  EXPECT_EQ(r.error().msg, "not positive");
}

TEST(Result, ValueOfErrorThrows) {
  Result<int> r = Error{EIO, "x"};
  EXPECT_THROW((void)r.value(), std::bad_variant_access);
}

TEST(Result, ErrorOfValueThrows) {
  Result<int> r = 1;
  EXPECT_THROW((void)r.error(), std::bad_variant_access);
}

TEST(Result, ConvertsFromWhatTCanBeBuiltFrom) {
  Result<std::string> r = "abc";
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, "abc");
  EXPECT_EQ(r->size(), 3u);
}

TEST(Result, MovesOutMoveOnlyValue) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(7);
  ASSERT_TRUE(r);
  std::unique_ptr<int> p = std::move(r).value();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(*p, 7);
}

TEST(Result, VoidDefaultIsSuccess) {
  Result<void> r;
  EXPECT_TRUE(r);
  EXPECT_THROW((void)r.error(), std::bad_optional_access);
}

TEST(Result, VoidHoldsError) {
  Result<void> r = Error{ENODEV, "gone"};
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().errnum, ENODEV);
}

TEST(Error, ToStringAppendsErrnoText) {
  EXPECT_EQ(to_string(Error{ENOENT, "cannot open /x"}),
            "cannot open /x: No such file or directory");
}

TEST(Error, ToStringWithoutErrnoIsMessageOnly) {
  EXPECT_EQ(to_string(Error{0, "2 of 3 checks failed"}), "2 of 3 checks failed");
}

} // namespace
} // namespace srnic

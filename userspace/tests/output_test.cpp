// SPDX-License-Identifier: GPL-2.0
#include "lib/output.h"

#include <cstdint>
#include <limits>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace srnic {
namespace {

// Prints two device-like records and returns what came out.
std::string print_two(OutputFormat format, bool pretty = false) {
  std::ostringstream os;
  Output out(os, format, pretty);
  out.begin_record();
  out.field("name", "rxe0");
  out.field("ports", 1u);
  out.end_record();
  out.begin_record();
  out.field("name", std::string("srnic0"));
  out.field("ports", 2);
  out.end_record();
  out.finish();
  return os.str();
}

TEST(Output, TextFieldIsNameValueSpace) {
  EXPECT_EQ(print_two(OutputFormat::text), "name rxe0 ports 1 \nname srnic0 ports 2 \n");
}

TEST(Output, TextIgnoresPretty) {
  EXPECT_EQ(print_two(OutputFormat::text, true), print_two(OutputFormat::text));
}

TEST(Output, TextRecordIsWrittenWhenItEnds) {
  std::ostringstream os;
  Output out(os, OutputFormat::text);
  out.begin_record();
  out.field("a", 1);
  EXPECT_EQ(os.str(), "");
  out.end_record();
  EXPECT_EQ(os.str(), "a 1 \n");
}

TEST(Output, JsonIsAnArrayOfOneObjectPerRecord) {
  EXPECT_EQ(print_two(OutputFormat::json),
            R"([{"name":"rxe0","ports":1},{"name":"srnic0","ports":2}])"
            "\n");
}

TEST(Output, JsonPrettyIndents) {
  EXPECT_EQ(print_two(OutputFormat::json, true), R"([
    {
        "name": "rxe0",
        "ports": 1
    },
    {
        "name": "srnic0",
        "ports": 2
    }
]
)");
}

TEST(Output, JsonWithoutRecordsIsEmptyArray) {
  std::ostringstream os;
  Output out(os, OutputFormat::json);
  out.finish();
  EXPECT_EQ(os.str(), "[]\n");
}

TEST(Output, TextWithoutRecordsIsEmpty) {
  std::ostringstream os;
  Output out(os, OutputFormat::text);
  out.finish();
  EXPECT_EQ(os.str(), "");
}

TEST(Output, JsonNothingBeforeFinish) {
  std::ostringstream os;
  Output out(os, OutputFormat::json);
  out.begin_record();
  out.field("a", 1);
  out.end_record();
  EXPECT_EQ(os.str(), "");
  out.finish();
  EXPECT_EQ(os.str(), "[{\"a\":1}]\n");
}

TEST(Output, JsonKeepsFieldOrder) {
  std::ostringstream os;
  Output out(os, OutputFormat::json);
  out.begin_record();
  out.field("z", 1);
  out.field("a", 2);
  out.end_record();
  out.finish();
  EXPECT_EQ(os.str(), "[{\"z\":1,\"a\":2}]\n");
}

TEST(Output, StringLiteralIsAStringNotABool) {
  std::ostringstream os;
  Output out(os, OutputFormat::json);
  out.begin_record();
  out.field("kind", "srnic");
  out.end_record();
  out.finish();
  EXPECT_EQ(os.str(), "[{\"kind\":\"srnic\"}]\n");
}

TEST(Output, ValueTypesInJson) {
  std::ostringstream os;
  Output out(os, OutputFormat::json);
  out.begin_record();
  out.field("ok", true);
  out.field("neg", -5);
  out.field("big", std::numeric_limits<std::uint64_t>::max());
  out.field("u8", std::uint8_t{200});
  out.end_record();
  out.finish();
  nlohmann::json j = nlohmann::json::parse(os.str());
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 1u);
  EXPECT_TRUE(j[0]["ok"].is_boolean());
  EXPECT_EQ(j[0]["ok"], true);
  EXPECT_EQ(j[0]["neg"], -5);
  EXPECT_EQ(j[0]["big"].get<std::uint64_t>(), std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(j[0]["u8"], 200);
}

TEST(Output, ValueTypesInText) {
  std::ostringstream os;
  Output out(os, OutputFormat::text);
  out.begin_record();
  out.field("ok", false);
  out.field("neg", -5);
  out.field("u8", std::uint8_t{200});
  out.end_record();
  EXPECT_EQ(os.str(), "ok false neg -5 u8 200 \n");
}

TEST(Output, JsonEscapesStrings) {
  std::ostringstream os;
  Output out(os, OutputFormat::json);
  out.begin_record();
  out.field("detail", "a \"quoted\"\nline");
  out.end_record();
  out.finish();
  EXPECT_EQ(os.str(), R"([{"detail":"a \"quoted\"\nline"}])"
                      "\n");
}

TEST(Output, JsonReplacesInvalidUtf8InsteadOfThrowing) {
  std::ostringstream os;
  Output out(os, OutputFormat::json);
  out.begin_record();
  out.field("fw", std::string("v\xff"));
  out.end_record();
  EXPECT_NO_THROW(out.finish());
  EXPECT_EQ(os.str(), "[{\"fw\":\"v\xef\xbf\xbd\"}]\n"); // U+FFFD
}

// top: one document per interval, each ended by end_document(); finish() then adds nothing.
TEST(Output, EndDocumentPrintsEachDocumentAndFinishNoExtra) {
  std::ostringstream os;
  Output out(os, OutputFormat::json);
  out.begin_record();
  out.field("n", 1);
  out.end_record();
  out.end_document();
  out.end_document(); // an interval without records is an empty array
  out.finish();
  EXPECT_EQ(os.str(), "[{\"n\":1}]\n[]\n");
}

TEST(Output, FinishPrintsRecordsLeftAfterTheLastDocument) {
  std::ostringstream os;
  Output out(os, OutputFormat::json);
  out.end_document();
  out.begin_record();
  out.field("n", 2);
  out.end_record();
  out.finish();
  EXPECT_EQ(os.str(), "[]\n[{\"n\":2}]\n");
}

// A stream that counts flushes.
class CountingBuf : public std::stringbuf {
public:
  int syncs = 0;

protected:
  int sync() override {
    syncs++;
    return std::stringbuf::sync();
  }
};

TEST(Output, EndDocumentAndFinishFlush) {
  for (OutputFormat f : {OutputFormat::text, OutputFormat::json}) {
    CountingBuf buf;
    std::ostream os(&buf);
    Output out(os, f);
    out.begin_record();
    out.field("n", 1);
    out.end_record();
    out.end_document();
    EXPECT_EQ(buf.syncs, 1);
    out.finish();
    EXPECT_EQ(buf.syncs, 2);
  }
}

} // namespace
} // namespace srnic

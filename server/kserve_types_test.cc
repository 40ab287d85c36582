// The bounded message text of client-sent values (QuoteName, DimsToString, BoundMessage).
#include "server/kserve_types.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace inferd::server {
namespace {

TEST(DimsToStringTest, ShortShapesInFull) {
  EXPECT_EQ(DimsToString({}), "[]");
  EXPECT_EQ(DimsToString({1, 3, 224, 224}), "[1,3,224,224]");
  EXPECT_EQ(DimsToString({-1, 2, 3, 4, 5, 6, 7, 8}), "[-1,2,3,4,5,6,7,8]");
}

TEST(DimsToStringTest, LongShapesShowTheirFirstDimsAndRank) {
  EXPECT_EQ(DimsToString({1, 2, 3, 4, 5, 6, 7, 8, 9}), "[1,2,3,4,5,6,7,8,... (rank 9)]");
  const std::vector<int64_t> huge(100000, 7);
  const std::string text = DimsToString(huge);
  EXPECT_EQ(text, "[7,7,7,7,7,7,7,7,... (rank 100000)]");
}

TEST(QuoteNameTest, QuotesAndEscapes) {
  EXPECT_EQ(QuoteName("x"), "'x'");
  EXPECT_EQ(QuoteName(""), "''");
  // CHexEscape: a hex digit after \x00 is escaped too, so that the escape stays unambiguous.
  EXPECT_EQ(QuoteName(std::string("a\0b\n'", 5)), "'a\\x00\\x62\\n\\''");
  EXPECT_EQ(QuoteName("input\x01"), "'input\\x01'");
}

TEST(QuoteNameTest, LongNamesAreCut) {
  const std::string name(100000, 'n');
  EXPECT_EQ(QuoteName(name), "'" + std::string(kMaxEchoedNameBytes, 'n') + "'... (100000 bytes)");
  EXPECT_EQ(QuoteName(std::string(kMaxEchoedNameBytes, 'n')),
            "'" + std::string(kMaxEchoedNameBytes, 'n') + "'");
}

TEST(BoundMessageTest, ShortMessagesUnchanged) {
  EXPECT_EQ(BoundMessage("input 'x': bad"), "input 'x': bad");
  const std::string exact(kMaxMessageBytes, 'm');
  EXPECT_EQ(BoundMessage(exact), exact);
}

TEST(BoundMessageTest, LongMessagesAreCutWithTheirSize) {
  const std::string long_message(kMaxMessageBytes + 1, 'm');
  const std::string bounded = BoundMessage(long_message);
  EXPECT_LE(bounded.size(), kMaxMessageBytes);
  const std::string tail = "... (2049 bytes in all)";
  ASSERT_GE(bounded.size(), tail.size());
  EXPECT_EQ(bounded.substr(bounded.size() - tail.size()), tail);
  EXPECT_EQ(bounded.substr(0, 10), std::string(10, 'm'));
}

TEST(BoundMessageTest, DoesNotSplitAUtf8Character) {
  std::string message;
  while (message.size() < 3 * kMaxMessageBytes) message += "\xc3\xa9";  // é
  const std::string bounded = BoundMessage(message);
  const size_t cut = bounded.find("...");
  ASSERT_NE(cut, std::string::npos);
  EXPECT_EQ(cut % 2, 0u) << "cut inside a 2-byte character";
}

}  // namespace
}  // namespace inferd::server

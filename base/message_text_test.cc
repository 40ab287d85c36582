// QuoteForMessage and BoundMessage: what an error message may echo of client-sent values.
#include "base/message_text.h"

#include <gtest/gtest.h>

#include <string>

namespace inferd {
namespace {

TEST(QuoteForMessageTest, QuotesAndEscapes) {
  EXPECT_EQ(QuoteForMessage("x"), "'x'");
  EXPECT_EQ(QuoteForMessage(""), "''");
  // CHexEscape: a hex digit after \x00 is escaped too, so that the escape stays unambiguous.
  EXPECT_EQ(QuoteForMessage(std::string("a\0b\n'", 5)), "'a\\x00\\x62\\n\\''");
  EXPECT_EQ(QuoteForMessage("input\x01"), "'input\\x01'");
}

TEST(QuoteForMessageTest, LongNamesAreCut) {
  const std::string name(100000, 'n');
  EXPECT_EQ(QuoteForMessage(name), "'" + std::string(kMaxEchoedBytes, 'n') + "'... (100000 bytes)");
  EXPECT_EQ(QuoteForMessage(std::string(kMaxEchoedBytes, 'n')),
            "'" + std::string(kMaxEchoedBytes, 'n') + "'");
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
}  // namespace inferd

#include "base/duration.h"

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

TEST(ParseDurationTest, AcceptsAndRefuses) {
  EXPECT_EQ(*ParseDuration("250ms"), absl::Milliseconds(250));
  EXPECT_EQ(*ParseDuration("10s"), absl::Seconds(10));
  EXPECT_EQ(*ParseDuration("2m"), absl::Minutes(2));
  EXPECT_EQ(*ParseDuration("1h"), absl::Hours(1));
  EXPECT_EQ(*ParseDuration("1m30s"), absl::Seconds(90));
  EXPECT_EQ(*ParseDuration("1.5s"), absl::Milliseconds(1500));
  EXPECT_EQ(*ParseDuration("0"), absl::ZeroDuration());
  EXPECT_EQ(*ParseDuration(" 500us "), absl::Microseconds(500));
  for (const char* text : {"", "10", "-1s", "inf", "10 s", "ten seconds", "10S", "1d"}) {
    EXPECT_FALSE(ParseDuration(text).ok()) << "'" << text << "'";
  }
  EXPECT_EQ(ParseDuration("10").status().message(),
            "expected a duration such as 250ms, 10s or 2m, got '10'");
}

}  // namespace
}  // namespace inferd

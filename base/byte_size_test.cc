#include "base/byte_size.h"

#include <cstdint>
#include <utility>

#include "gtest/gtest.h"

namespace inferd {
namespace {

constexpr uint64_t kKiB = uint64_t{1} << 10;
constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kGiB = uint64_t{1} << 30;

TEST(ParseByteSizeTest, Accepts) {
  const std::pair<const char*, uint64_t> cases[] = {
      {"0", 0},
      {"1048576", 1048576},
      {"12B", 12},
      {"1KiB", kKiB},
      {"200KiB", 200 * kKiB},
      {"64KiB", 64 * kKiB},
      {"1MiB", kMiB},
      {"4MiB", 4 * kMiB},
      {"512MiB", 512 * kMiB},
      {"512 MiB", 512 * kMiB},
      {" 6GiB ", 6 * kGiB},
      {"2TiB", 2 * kGiB * kKiB},
      {"1KB", 1000},
      {"5MB", 5000000},
      {"1.5MB", 1500000},
      {"3GB", 3000000000},
      {"1TB", 1000000000000},
      {"1.5GiB", 3 * kGiB / 2},
      {"0.5KiB", 512},
      {"2.5GB", 2500000000},
      {".25MiB", kMiB / 4},
  };
  for (const auto& [text, bytes] : cases) {
    absl::StatusOr<uint64_t> parsed = ParseByteSize(text);
    ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.status();
    EXPECT_EQ(*parsed, bytes) << text;
  }
  EXPECT_EQ(*ParseByteSize("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(*ParseByteSize("16777215TiB"), uint64_t{16777215} << 40);  // the largest whole TiB
}

TEST(ParseByteSizeTest, Refuses) {
  for (const char* text : {"",
                           " ",
                           "MiB",
                           "-1",
                           "1.",
                           "1.5",
                           "1.3B",
                           "6gib",
                           "6 gb",
                           "1 KiBs",
                           "1e6",
                           "0x10",
                           "1,000",
                           "18446744073709551616",
                           "16777216TiB",
                           "1 000",
                           "64K",
                           "4M",
                           "1G",
                           "+1"}) {
    EXPECT_FALSE(ParseByteSize(text).ok()) << "'" << text << "'";
  }
  EXPECT_EQ(ParseByteSize("1.3B").status().message(), "'1.3B' is not a whole number of bytes");
  EXPECT_EQ(ParseByteSize("16777216TiB").status().message(), "'16777216TiB' is too large");
  EXPECT_EQ(ParseByteSize("-1").status().message(),
            "expected a byte size such as 512MiB, 6GiB or 1048576, got '-1'");
  EXPECT_EQ(ParseByteSize("4M").status().message(),
            "unknown unit 'M' in '4M' (units, case-sensitive: B, KiB, MiB, GiB, TiB, KB, MB, GB, "
            "TB)");
}

TEST(ParseByteSizeTest, OverflowIsCaughtAtEveryScale) {
  // Just past 2^64 - 1 with each kind of unit, and many digits that would wrap 64-bit arithmetic.
  for (const char* text : {"18446744073709551616B", "18014398509481984KiB", "18446744073709552KB",
                           "99999999999999999999", "99999999999999999999TiB", "17179869184GiB",
                           "18446744073709551615.5"}) {
    absl::StatusOr<uint64_t> parsed = ParseByteSize(text);
    ASSERT_FALSE(parsed.ok()) << text << " = " << *parsed;
  }
  EXPECT_EQ(*ParseByteSize("18014398509481983KiB"), uint64_t{18014398509481983} << 10);
  EXPECT_FALSE(ParseByteSize("123456789012345678901").ok());  // 21 digits
}

}  // namespace
}  // namespace inferd

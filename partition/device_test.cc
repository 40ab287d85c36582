#include "partition/device.h"

#include "gtest/gtest.h"

namespace inferd::partition {
namespace {

TEST(DeviceTest, Normalizes) {
  EXPECT_EQ(*NormalizeDeviceName("cpu"), "cpu:0");
  EXPECT_EQ(*NormalizeDeviceName("cpu:0"), "cpu:0");
  EXPECT_EQ(*NormalizeDeviceName("cpu:01"), "cpu:1");
  EXPECT_EQ(*NormalizeDeviceName("cuda:3"), "cuda:3");
}

TEST(DeviceTest, RejectsOtherNames) {
  for (const char* bad : {"", "gpu:0", "cuda", "cuda:", "cuda:x", "cpu:-1", "cpu:1234567", "CPU"}) {
    absl::StatusOr<std::string> d = NormalizeDeviceName(bad);
    ASSERT_FALSE(d.ok()) << bad;
    EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(d.status().message().find("expected cpu, cpu:N or cuda:N"), std::string::npos);
  }
}

TEST(DeviceTest, TypeAndHost) {
  EXPECT_EQ(DeviceType("cuda:1"), "cuda");
  EXPECT_EQ(DeviceType("cpu:0"), "cpu");
  EXPECT_TRUE(IsHostDevice("cpu:2"));
  EXPECT_FALSE(IsHostDevice("cuda:0"));
}

TEST(DeviceTest, CapabilityOrder) {
  EXPECT_LT(CapabilityRank("cuda:0"), CapabilityRank("cuda:1"));
  EXPECT_LT(CapabilityRank("cuda:7"), CapabilityRank("cpu:1"));
  EXPECT_LT(CapabilityRank("cpu:1"), CapabilityRank("cpu:2"));
  EXPECT_LT(CapabilityRank("cpu:9"), CapabilityRank("cpu:0"));
}

}  // namespace
}  // namespace inferd::partition

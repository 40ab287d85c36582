#include "partition/device.h"

#include "gtest/gtest.h"

namespace inferd::partition {
namespace {

// NormalizeDeviceName is base/device_name.h's, tested in base/device_name_test.cc.

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

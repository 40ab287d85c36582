#include "base/device_name.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

TEST(NormalizeDeviceNameTest, Accepts) {
  EXPECT_EQ(*NormalizeDeviceName("cpu"), "cpu:0");
  EXPECT_EQ(*NormalizeDeviceName("cpu:0"), "cpu:0");
  EXPECT_EQ(*NormalizeDeviceName("cpu:3"), "cpu:3");
  EXPECT_EQ(*NormalizeDeviceName("cpu:01"), "cpu:1");
  EXPECT_EQ(*NormalizeDeviceName("cuda:0"), "cuda:0");
  EXPECT_EQ(*NormalizeDeviceName("cuda:01"), "cuda:1");
  EXPECT_EQ(*NormalizeDeviceName("cuda:999999"), "cuda:999999");
}

TEST(NormalizeDeviceNameTest, RefusesWithOneMessage) {
  for (const char* text : {"", "cuda", "gpu:0", "cpu:", "cuda:", "cpu:-1", "cpu:+1", "CPU",
                           "cpu:0:1", "cuda:x", "cpu 0", "cuda:9999999", "cpu:1234567"}) {
    absl::StatusOr<std::string> d = NormalizeDeviceName(text);
    ASSERT_FALSE(d.ok()) << "'" << text << "'";
    EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(d.status().message(),
              absl::StrCat("unknown device '", text, "': expected cpu, cpu:N or cuda:N"));
  }
}

TEST(DeviceIndexTest, KindAndDigits) {
  EXPECT_EQ(DeviceIndex("cuda:3", "cuda"), 3);
  EXPECT_EQ(DeviceIndex("cpu:0", "cpu"), 0);
  EXPECT_EQ(DeviceIndex("cpu:0", "cuda"), -1);
  EXPECT_EQ(DeviceIndex("cpu", "cpu"), -1);
  EXPECT_EQ(DeviceIndex("cpu:1234567", "cpu"), -1);
}

}  // namespace
}  // namespace inferd

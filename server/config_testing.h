// Helpers of the config tests (config_test.cc, config_values_test.cc, model_config_reader_test.cc,
// yaml_reader_test.cc): parse a config text and get its error or its Config. Test-only.
#ifndef INFERD_SERVER_CONFIG_TESTING_H_
#define INFERD_SERVER_CONFIG_TESTING_H_

#include <cstdint>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "server/config.h"

namespace inferd::server::config_testing {

inline constexpr uint64_t kKiB = uint64_t{1} << 10;
inline constexpr uint64_t kMiB = uint64_t{1} << 20;
inline constexpr uint64_t kGiB = uint64_t{1} << 30;

inline std::string ReadTestFile(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The error message ParseConfig gives for `yaml` ("" when it parses).
inline std::string ErrorOf(const std::string& yaml) {
  absl::StatusOr<std::shared_ptr<const Config>> config = ParseConfig(yaml, "inferd.yaml");
  if (config.ok()) return "";
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(config.status().message());
}

inline std::shared_ptr<const Config> MustParse(const std::string& yaml) {
  absl::StatusOr<std::shared_ptr<const Config>> config = ParseConfig(yaml, "inferd.yaml");
  EXPECT_TRUE(config.ok()) << config.status();
  return config.ok() ? *config : std::make_shared<const Config>();
}

}  // namespace inferd::server::config_testing

#endif  // INFERD_SERVER_CONFIG_TESTING_H_

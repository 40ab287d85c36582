// The `models:` section of inferd's config file (server/model_config_reader.cc, which also holds
// config.h's ParseModelConfig and MergeModelConfig). Internal to server/config*.
#ifndef INFERD_SERVER_MODEL_CONFIG_READER_H_
#define INFERD_SERVER_MODEL_CONFIG_READER_H_

#include <vector>

#include "absl/status/status.h"
#include "server/config.h"
#include "server/yaml_reader.h"
#include "yaml-cpp/yaml.h"

namespace inferd::server::config_internal {

// Appends the models of `node` (a list of model maps, or a map by name; `line` is the `models:`
// key's) to `out`; duplicate names are errors.
absl::Status ParseModels(const Reader& r, const YAML::Node& node, int line,
                         std::vector<ModelConfig>* out);

}  // namespace inferd::server::config_internal

#endif  // INFERD_SERVER_MODEL_CONFIG_READER_H_

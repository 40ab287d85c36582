// What the KServe v2 / Triton front ends (gRPC and HTTP) say about models, built once here so
// that both transports answer the same: model metadata, Triton's ModelConfig and
// ModelStatistics, and the server's extensions.
//
// Every function checks the name (ValidateModelName) and the version first: INVALID_ARGUMENT
// for a bad name, NOT_FOUND for an unknown model or version, UNAVAILABLE when the answer needs a
// READY model and it is not.
//
// Thread-safe.
#ifndef INFERD_SERVER_TRITON_VIEWS_H_
#define INFERD_SERVER_TRITON_VIEWS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/inference.pb.h"
#include "proto/model_config.pb.h"
#include "server/model_repository.h"

namespace inferd::server {

enum class Transport { kGrpc, kHttp };

// The model `name` (any state) at `version` (empty: the version inference would use), the name
// checked first (ValidateModelName).
absl::StatusOr<std::shared_ptr<LoadedModel>> FindModelVersion(ModelRepository& repository,
                                                              absl::string_view name,
                                                              absl::string_view version);

// ServerMetadata's extensions: the Triton protocol extensions inferd implements on `transport`
// (system_shared_memory only on gRPC: the HTTP front end has no /v2/systemsharedmemory
// endpoints yet).
std::vector<std::string> ServerExtensions(Transport transport);

// ModelMetadata of a READY model version (`version` empty: the one inference would use).
absl::StatusOr<inference::ModelMetadataResponse> ModelMetadataOf(ModelRepository& repository,
                                                                 absl::string_view name,
                                                                 absl::string_view version);

// Triton's ModelConfig of a READY model version: its config.pbtxt as inferd serves it, completed
// from the model (inputs, outputs, batching, instances) where the file is silent or absent.
absl::StatusOr<inference::ModelConfig> ModelConfigOf(ModelRepository& repository,
                                                     absl::string_view name,
                                                     absl::string_view version);

// Triton's ModelStatistics: every model version (`name` empty), one model's versions (`version`
// empty), or one version.
absl::StatusOr<inference::ModelStatisticsResponse> ModelStatisticsOf(ModelRepository& repository,
                                                                     absl::string_view name,
                                                                     absl::string_view version);

// The TYPE_* enum of a KServe datatype name ("FP32" -> TYPE_FP32, "BYTES" -> TYPE_STRING).
inference::DataType TritonDataType(engine::DataType type);

}  // namespace inferd::server

#endif  // INFERD_SERVER_TRITON_VIEWS_H_

// Triton's model configuration (config.pbtxt) and repository layout, read into inferd's
// ModelConfig.
//
// A Triton model folder is <repo>/<name>/ with a config.pbtxt and/or numbered version
// directories <name>/<N>/<default_model_filename> (default model.onnx). ParseTritonConfig reads
// the text format against inference::ModelConfig (proto/model_config.proto: the fields inferd
// honours). Fields Triton has and inferd does not honour are unknown to that message: each one
// becomes a warning naming it and its file:line, never a refusal. A syntax error refuses the
// model with file:line:col.
//
// TritonToModelConfig maps the message into server::ModelConfig (docs/triton.md has the table):
// name (must match the folder), platform/backend (ONNX Runtime only), max_batch_size,
// instance_group (count -> max_concurrent_runs; KIND_GPU -> partition device cuda:<gpus[0]>),
// dynamic_batching, and keeps the message itself in ModelConfig::triton so the ModelConfig RPC
// echoes the file. CheckTritonSignature checks input/output against the loaded model and
// CompleteTritonConfig fills in what the file left out (Triton's auto-complete).
//
// Pure functions of their arguments, no shared state: thread-safe.
#ifndef INFERD_SERVER_TRITON_CONFIG_H_
#define INFERD_SERVER_TRITON_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/model_config.pb.h"
#include "server/config.h"
#include "server/model_signature.h"

namespace inferd::server {

// Triton's default max_batch_size for an ONNX model whose every input and output has a dynamic
// first dimension, when the config does not set one (onnxruntime_backend's
// default-max-batch-size).
inline constexpr int kTritonAutoMaxBatchSize = 4;

// Parses config.pbtxt's text. `file` prefixes messages. Unknown fields (Triton features inferd
// does not serve) are appended to `warnings` as "<file>:<line>: ... field 'x' ... ignored".
// INVALID_ARGUMENT "<file>:<line>:<col>: <parser message>" for a syntax error.
absl::StatusOr<inference::ModelConfig> ParseTritonConfig(absl::string_view text,
                                                         absl::string_view file,
                                                         std::vector<std::string>* warnings);

// Maps the parsed message into inferd's settings for the model in folder `folder_name`.
// INVALID_ARGUMENT naming the field for a name that is not the folder's, a platform or backend
// other than ONNX Runtime's, a negative max_batch_size, an instance_group inferd cannot honour,
// dynamic_batching without max_batch_size, or model_warmup reading a file.
absl::StatusOr<ModelConfig> TritonToModelConfig(const inference::ModelConfig& triton,
                                                absl::string_view folder_name,
                                                absl::string_view file);

// The versions `policy` selects among `available` (the folder's numbered directories), highest
// first. Default (no policy): latest 1. NOT_FOUND when a specific version is not there or none
// is available.
absl::StatusOr<std::vector<int64_t>> SelectVersions(const inference::ModelVersionPolicy& policy,
                                                    std::vector<int64_t> available,
                                                    absl::string_view model_name);

// The config's input/output entries against the loaded model: each named tensor exists, with
// the same data type, and dims (with the batch dimension when max_batch_size > 0, or reshape's
// shape) compatible with the model's. INVALID_ARGUMENT naming the tensor and both sides.
absl::Status CheckTritonSignature(const inference::ModelConfig& triton,
                                  const ModelSignature& signature);

// The config as served: `triton` completed from the model the way Triton's ONNX Runtime backend
// auto-completes (onnxruntime_backend's AutoCompleteConfig). A file listing both inputs and
// outputs keeps them and its max_batch_size. Otherwise: a model whose every input and output
// has a dynamic first dimension gets max_batch_size kTritonAutoMaxBatchSize when the file has 0,
// and dynamic_batching {} when that is above 1; a model that cannot batch keeps 0 (a file
// setting more is INVALID_ARGUMENT); the inputs / outputs the file omits come from the model.
absl::StatusOr<inference::ModelConfig> CompleteTritonConfig(const inference::ModelConfig& triton,
                                                            const ModelSignature& signature);

// Runs each of config.pbtxt's model_warmup requests `count` times (at least once) on `session`,
// with zero or random data of the sample's data_type and dims (batch_size prepended when the
// model batches), before the model turns READY. INVALID_ARGUMENT naming the sample for an input
// the model does not have, a string or unknown type, or a sample over 256 MiB; the run's error
// otherwise.
absl::Status RunWarmup(const inference::ModelConfig& triton, engine::Session& session);

// Triton's element type for `type` (TYPE_INVALID for none).
inference::DataType TritonTypeOf(engine::DataType type);

}  // namespace inferd::server

#endif  // INFERD_SERVER_TRITON_CONFIG_H_

// ModelStreamInfer (Triton's decoupled streaming) for generative models (docs/generation.md):
// each ModelInferRequest on the stream starts one sequence; its answer streams back as one
// ModelStreamInferResponse per token (outputs text_output BYTES [1], the text the token
// completes, and token_id INT32 [1]), then a final response with no outputs whose parameter
// "triton_final_response" is true (every earlier one carries false). With input stream = false
// the whole text comes in that final response instead. Errors come back as a response with
// error_message set (Triton's way), the stream going on.
//
// Request inputs (Triton's LLM-backend names; scalars as [1] or [1, 1]):
//   text_input BYTES (required); max_tokens INT32/INT64; temperature FP32; top_k INT32;
//   top_p FP32; repetition_penalty FP32; random_seed UINT64/INT64; min_length INT32 (EOS masked
//   before it); stop BYTES (any count); stream BOOL (default true); exclude_input_in_output
//   BOOL (the answer never repeats the prompt). The same names are accepted as request
//   parameters. All but text_input are optional in ModelConfig (what genai-perf sends).
// A sequence reserves KV bytes for min(prompt + max_tokens, max_length) positions from the
// model's KvBudget before it starts: RESOURCE_EXHAUSTED (as an error response) when they do not
// fit. Sequences run on the model's worker threads (generation.max_sequences of them); a
// cancelled stream stops its sequences between tokens.
//
// Thread-safe.
#ifndef INFERD_SERVER_STREAM_INFER_HANDLER_H_
#define INFERD_SERVER_STREAM_INFER_HANDLER_H_

#include <grpcpp/grpcpp.h>
#include <grpcpp/support/server_callback.h>

#include <string>

#include "proto/inference.pb.h"
#include "server/model_repository.h"

namespace inferd::server {

grpc::ServerBidiReactor<inference::ModelInferRequest, inference::ModelStreamInferResponse>*
HandleModelStreamInfer(ModelRepository& repository, grpc::CallbackServerContext* context);

}  // namespace inferd::server

#endif  // INFERD_SERVER_STREAM_INFER_HANDLER_H_

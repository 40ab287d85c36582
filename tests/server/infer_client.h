// Client-side helpers for the end-to-end tests: ModelInfer requests from the generated models'
// test data, output checks against their references, and raw calls (health, reflection,
// methods the proto does not list) through grpc::GenericStub.
#ifndef INFERD_TESTS_SERVER_INFER_CLIENT_H_
#define INFERD_TESTS_SERVER_INFER_CLIENT_H_

#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "engine/test_data_set.h"
#include "proto/inference.grpc.pb.h"

namespace inferd::testing {

// The first test data set of a generated model directory (workspace-relative).
engine::TestDataSet LoadDataSet(const std::string& model_dir);

// A request for `model` with the data set's inputs as raw_input_contents.
inference::ModelInferRequest RawRequest(const std::string& model, const engine::TestDataSet& set);

// OK when every output of the response that the data set knows matches its reference (and the
// response has at least one output).
absl::Status CheckOutputs(const inference::ModelInferResponse& response,
                          const engine::TestDataSet& set);

// A unary call of any method with raw request bytes; the response bytes in `response`.
grpc::Status RawUnaryCall(const std::shared_ptr<grpc::Channel>& channel, const std::string& method,
                          const std::string& request, std::string* response);

// grpc.health.v1.Health/Check: 1 SERVING, 2 NOT_SERVING, or the call's error.
grpc::Status HealthCheck(const std::shared_ptr<grpc::Channel>& channel, const std::string& service,
                         int* status);

// The service names listed by server reflection (grpc.reflection.v1alpha).
grpc::Status ReflectionServices(const std::shared_ptr<grpc::Channel>& channel,
                                std::vector<std::string>* services);

}  // namespace inferd::testing

#endif  // INFERD_TESTS_SERVER_INFER_CLIENT_H_

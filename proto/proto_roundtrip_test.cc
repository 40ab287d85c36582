// Wire checks for proto/: every KServe v2 field number matches the protocol table
// (docs/protocol.md, "Messages and field numbers"), a ModelInferRequest with raw contents
// round-trips, and a response whose raw_output_contents are appended after the header (as the
// zero-copy writer does) parses to the same message.
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "proto/admin.grpc.pb.h"
#include "proto/admin.pb.h"
#include "proto/inference.grpc.pb.h"
#include "proto/inference.pb.h"

namespace {

using google::protobuf::Descriptor;
using google::protobuf::DescriptorPool;
using google::protobuf::FieldDescriptor;

std::string Bytes(std::initializer_list<uint8_t> bytes) {
  return std::string(bytes.begin(), bytes.end());
}

TEST(ProtoRoundtrip, ModelInferRequestWithRawInputs) {
  inference::ModelInferRequest request;
  request.set_model_name("mlp");
  request.set_model_version("1");
  request.set_id("req-7");
  (*request.mutable_parameters())["priority"].set_int64_param(3);
  auto* input = request.add_inputs();
  input->set_name("x");
  input->set_datatype("FP32");
  input->add_shape(1);
  input->add_shape(4);
  request.add_outputs()->set_name("y");
  const float values[4] = {1.0f, -2.5f, 3.25f, 0.0f};
  request.add_raw_input_contents(reinterpret_cast<const char*>(values), sizeof(values));

  std::string wire;
  ASSERT_TRUE(request.SerializeToString(&wire));
  inference::ModelInferRequest parsed;
  ASSERT_TRUE(parsed.ParseFromString(wire));

  EXPECT_EQ(parsed.model_name(), "mlp");
  EXPECT_EQ(parsed.model_version(), "1");
  EXPECT_EQ(parsed.id(), "req-7");
  EXPECT_EQ(parsed.parameters().at("priority").int64_param(), 3);
  ASSERT_EQ(parsed.inputs_size(), 1);
  EXPECT_EQ(parsed.inputs(0).name(), "x");
  EXPECT_EQ(parsed.inputs(0).datatype(), "FP32");
  EXPECT_EQ(std::vector<int64_t>(parsed.inputs(0).shape().begin(), parsed.inputs(0).shape().end()),
            (std::vector<int64_t>{1, 4}));
  ASSERT_EQ(parsed.outputs_size(), 1);
  EXPECT_EQ(parsed.outputs(0).name(), "y");
  ASSERT_EQ(parsed.raw_input_contents_size(), 1);
  EXPECT_EQ(parsed.raw_input_contents(0),
            std::string(reinterpret_cast<const char*>(values), sizeof(values)));
}

TEST(ProtoRoundtrip, TagsOnTheWire) {
  // model_name = 1, length-delimited: tag (1 << 3) | 2 = 0x0a.
  inference::ModelInferRequest request;
  request.set_model_name("m");
  EXPECT_EQ(request.SerializeAsString(), Bytes({0x0a, 0x01, 'm'}));

  // raw_input_contents = 7: tag (7 << 3) | 2 = 0x3a.
  request.Clear();
  request.add_raw_input_contents("ab");
  EXPECT_EQ(request.SerializeAsString(), Bytes({0x3a, 0x02, 'a', 'b'}));

  // raw_output_contents = 6: tag (6 << 3) | 2 = 0x32.
  inference::ModelInferResponse response;
  response.add_raw_output_contents("xyz");
  EXPECT_EQ(response.SerializeAsString(), Bytes({0x32, 0x03, 'x', 'y', 'z'}));

  // ServerLiveResponse.live = 1, varint: tag 0x08.
  inference::ServerLiveResponse live;
  live.set_live(true);
  EXPECT_EQ(live.SerializeAsString(), Bytes({0x08, 0x01}));
}

// The zero-copy response writer serializes the header with protobuf, then appends each output as
// 0x32, varint length, bytes. A parser must see the same message as a fully serialized one.
TEST(ProtoRoundtrip, RawOutputsAppendedAfterHeaderParse) {
  inference::ModelInferResponse header;
  header.set_model_name("cnn");
  header.set_model_version("1");
  header.set_id("r1");
  auto* out = header.add_outputs();
  out->set_name("logits");
  out->set_datatype("FP32");
  out->add_shape(1);
  out->add_shape(300);
  auto* out2 = header.add_outputs();
  out2->set_name("small");
  out2->set_datatype("UINT8");
  out2->add_shape(2);

  const std::string payload1(1200, '\x5a');  // length 1200 = varint 0xb0 0x09
  const std::string payload2 = "\x01\x02";
  std::string wire = header.SerializeAsString();
  wire += Bytes({0x32, 0xb0, 0x09}) + payload1;
  wire += Bytes({0x32, 0x02}) + payload2;

  inference::ModelInferResponse parsed;
  ASSERT_TRUE(parsed.ParseFromString(wire));
  EXPECT_EQ(parsed.model_name(), "cnn");
  ASSERT_EQ(parsed.outputs_size(), 2);
  ASSERT_EQ(parsed.raw_output_contents_size(), 2);
  EXPECT_EQ(parsed.raw_output_contents(0), payload1);
  EXPECT_EQ(parsed.raw_output_contents(1), payload2);

  inference::ModelInferResponse expected = header;
  expected.add_raw_output_contents(payload1);
  expected.add_raw_output_contents(payload2);
  EXPECT_EQ(parsed.SerializeAsString(), expected.SerializeAsString());
}

struct FieldNumber {
  const char* message;
  const char* field;
  int number;
};

// The table of docs/protocol.md ("Messages and field numbers"), row by row.
const FieldNumber kInferenceFields[] = {
    {"ServerLiveResponse", "live", 1},
    {"ServerReadyResponse", "ready", 1},
    {"ModelReadyRequest", "name", 1},
    {"ModelReadyRequest", "version", 2},
    {"ModelReadyResponse", "ready", 1},
    {"ServerMetadataResponse", "name", 1},
    {"ServerMetadataResponse", "version", 2},
    {"ServerMetadataResponse", "extensions", 3},
    {"ModelMetadataRequest", "name", 1},
    {"ModelMetadataRequest", "version", 2},
    {"ModelMetadataResponse", "name", 1},
    {"ModelMetadataResponse", "versions", 2},
    {"ModelMetadataResponse", "platform", 3},
    {"ModelMetadataResponse", "inputs", 4},
    {"ModelMetadataResponse", "outputs", 5},
    {"ModelMetadataResponse.TensorMetadata", "name", 1},
    {"ModelMetadataResponse.TensorMetadata", "datatype", 2},
    {"ModelMetadataResponse.TensorMetadata", "shape", 3},
    {"InferParameter", "bool_param", 1},
    {"InferParameter", "int64_param", 2},
    {"InferParameter", "string_param", 3},
    {"InferParameter", "double_param", 4},
    {"InferParameter", "uint64_param", 5},
    {"InferTensorContents", "bool_contents", 1},
    {"InferTensorContents", "int_contents", 2},
    {"InferTensorContents", "int64_contents", 3},
    {"InferTensorContents", "uint_contents", 4},
    {"InferTensorContents", "uint64_contents", 5},
    {"InferTensorContents", "fp32_contents", 6},
    {"InferTensorContents", "fp64_contents", 7},
    {"InferTensorContents", "bytes_contents", 8},
    {"ModelInferRequest", "model_name", 1},
    {"ModelInferRequest", "model_version", 2},
    {"ModelInferRequest", "id", 3},
    {"ModelInferRequest", "parameters", 4},
    {"ModelInferRequest", "inputs", 5},
    {"ModelInferRequest", "outputs", 6},
    {"ModelInferRequest", "raw_input_contents", 7},
    {"ModelInferRequest.InferInputTensor", "name", 1},
    {"ModelInferRequest.InferInputTensor", "datatype", 2},
    {"ModelInferRequest.InferInputTensor", "shape", 3},
    {"ModelInferRequest.InferInputTensor", "parameters", 4},
    {"ModelInferRequest.InferInputTensor", "contents", 5},
    {"ModelInferRequest.InferRequestedOutputTensor", "name", 1},
    {"ModelInferRequest.InferRequestedOutputTensor", "parameters", 2},
    {"ModelInferResponse", "model_name", 1},
    {"ModelInferResponse", "model_version", 2},
    {"ModelInferResponse", "id", 3},
    {"ModelInferResponse", "parameters", 4},
    {"ModelInferResponse", "outputs", 5},
    {"ModelInferResponse", "raw_output_contents", 6},
    {"ModelInferResponse.InferOutputTensor", "name", 1},
    {"ModelInferResponse.InferOutputTensor", "datatype", 2},
    {"ModelInferResponse.InferOutputTensor", "shape", 3},
    {"ModelInferResponse.InferOutputTensor", "parameters", 4},
    {"ModelInferResponse.InferOutputTensor", "contents", 5},
    {"RepositoryIndexRequest", "repository_name", 1},
    {"RepositoryIndexRequest", "ready", 2},
    {"RepositoryIndexResponse", "models", 1},
    {"RepositoryIndexResponse.ModelIndex", "name", 1},
    {"RepositoryIndexResponse.ModelIndex", "version", 2},
    {"RepositoryIndexResponse.ModelIndex", "state", 3},
    {"RepositoryIndexResponse.ModelIndex", "reason", 4},
    {"ModelRepositoryParameter", "bool_param", 1},
    {"ModelRepositoryParameter", "int64_param", 2},
    {"ModelRepositoryParameter", "string_param", 3},
    {"ModelRepositoryParameter", "bytes_param", 4},
    {"RepositoryModelLoadRequest", "repository_name", 1},
    {"RepositoryModelLoadRequest", "model_name", 2},
    {"RepositoryModelLoadRequest", "parameters", 3},
    {"RepositoryModelUnloadRequest", "repository_name", 1},
    {"RepositoryModelUnloadRequest", "model_name", 2},
    {"RepositoryModelUnloadRequest", "parameters", 3},
    // Triton's extensions: model configuration, statistics, system shared memory.
    {"ModelConfigRequest", "name", 1},
    {"ModelConfigRequest", "version", 2},
    {"ModelConfigResponse", "config", 1},
    {"ModelStatisticsRequest", "name", 1},
    {"ModelStatisticsRequest", "version", 2},
    {"StatisticDuration", "count", 1},
    {"StatisticDuration", "ns", 2},
    {"InferStatistics", "success", 1},
    {"InferStatistics", "fail", 2},
    {"InferStatistics", "queue", 3},
    {"InferStatistics", "compute_input", 4},
    {"InferStatistics", "compute_infer", 5},
    {"InferStatistics", "compute_output", 6},
    {"InferStatistics", "cache_hit", 7},
    {"InferStatistics", "cache_miss", 8},
    {"InferResponseStatistics", "compute_infer", 1},
    {"InferResponseStatistics", "compute_output", 2},
    {"InferResponseStatistics", "success", 3},
    {"InferResponseStatistics", "fail", 4},
    {"InferResponseStatistics", "empty_response", 5},
    {"InferResponseStatistics", "cancel", 6},
    {"InferBatchStatistics", "batch_size", 1},
    {"InferBatchStatistics", "compute_input", 2},
    {"InferBatchStatistics", "compute_infer", 3},
    {"InferBatchStatistics", "compute_output", 4},
    {"MemoryUsage", "type", 1},
    {"MemoryUsage", "id", 2},
    {"MemoryUsage", "byte_size", 3},
    {"ModelStatistics", "name", 1},
    {"ModelStatistics", "version", 2},
    {"ModelStatistics", "last_inference", 3},
    {"ModelStatistics", "inference_count", 4},
    {"ModelStatistics", "execution_count", 5},
    {"ModelStatistics", "inference_stats", 6},
    {"ModelStatistics", "batch_stats", 7},
    {"ModelStatistics", "memory_usage", 8},
    {"ModelStatistics", "response_stats", 9},
    {"ModelStatisticsResponse", "model_stats", 1},
    {"SystemSharedMemoryStatusRequest", "name", 1},
    {"SystemSharedMemoryStatusResponse.RegionStatus", "name", 1},
    {"SystemSharedMemoryStatusResponse.RegionStatus", "key", 2},
    {"SystemSharedMemoryStatusResponse.RegionStatus", "offset", 3},
    {"SystemSharedMemoryStatusResponse.RegionStatus", "byte_size", 4},
    {"SystemSharedMemoryStatusResponse", "regions", 1},
    {"SystemSharedMemoryRegisterRequest", "name", 1},
    {"SystemSharedMemoryRegisterRequest", "key", 2},
    {"SystemSharedMemoryRegisterRequest", "offset", 3},
    {"SystemSharedMemoryRegisterRequest", "byte_size", 4},
    {"SystemSharedMemoryUnregisterRequest", "name", 1},
    {"ModelStreamInferResponse", "error_message", 1},
    {"ModelStreamInferResponse", "infer_response", 2},
};

TEST(ProtoRoundtrip, InferenceFieldNumbersMatchProtocolTable) {
  // Make sure the generated file is linked in and registered.
  ASSERT_NE(inference::ModelInferRequest::descriptor(), nullptr);
  const DescriptorPool* pool = DescriptorPool::generated_pool();
  for (const FieldNumber& row : kInferenceFields) {
    const std::string full_name = std::string("inference.") + row.message;
    const Descriptor* message = pool->FindMessageTypeByName(full_name);
    ASSERT_NE(message, nullptr) << full_name;
    const FieldDescriptor* field = message->FindFieldByName(row.field);
    ASSERT_NE(field, nullptr) << full_name << "." << row.field;
    EXPECT_EQ(field->number(), row.number) << full_name << "." << row.field;
  }
  // Messages the table lists as empty.
  for (const char* empty :
       {"ServerLiveRequest", "ServerReadyRequest", "ServerMetadataRequest",
        "RepositoryModelLoadResponse", "RepositoryModelUnloadResponse",
        "SystemSharedMemoryRegisterResponse", "SystemSharedMemoryUnregisterResponse"}) {
    const Descriptor* message = pool->FindMessageTypeByName(std::string("inference.") + empty);
    ASSERT_NE(message, nullptr) << empty;
    EXPECT_EQ(message->field_count(), 0) << empty;
  }
  // Exactly the fields of the table, none more.
  int table_fields = sizeof(kInferenceFields) / sizeof(kInferenceFields[0]);
  int declared_fields = 0;
  const google::protobuf::FileDescriptor* file = inference::ModelInferRequest::descriptor()->file();
  std::vector<const Descriptor*> pending;
  for (int i = 0; i < file->message_type_count(); ++i) pending.push_back(file->message_type(i));
  while (!pending.empty()) {
    const Descriptor* d = pending.back();
    pending.pop_back();
    if (d->options().map_entry()) continue;
    declared_fields += d->field_count();
    for (int i = 0; i < d->nested_type_count(); ++i) pending.push_back(d->nested_type(i));
  }
  EXPECT_EQ(declared_fields, table_fields);
}

TEST(ProtoRoundtrip, InferenceServiceMethods) {
  EXPECT_STREQ(inference::GRPCInferenceService::service_full_name(),
               "inference.GRPCInferenceService");
  const auto* service =
      DescriptorPool::generated_pool()->FindServiceByName("inference.GRPCInferenceService");
  ASSERT_NE(service, nullptr);
  const std::vector<std::string> methods = {"ServerLive",
                                            "ServerReady",
                                            "ModelReady",
                                            "ServerMetadata",
                                            "ModelMetadata",
                                            "ModelInfer",
                                            "ModelConfig",
                                            "ModelStatistics",
                                            "RepositoryIndex",
                                            "RepositoryModelLoad",
                                            "RepositoryModelUnload",
                                            "SystemSharedMemoryStatus",
                                            "SystemSharedMemoryRegister",
                                            "SystemSharedMemoryUnregister"};
  // Plus ModelStreamInfer: a stream of requests, a stream of responses (Triton's decoupled API).
  EXPECT_EQ(service->method_count(), static_cast<int>(methods.size()) + 1);
  const auto* stream = service->FindMethodByName("ModelStreamInfer");
  ASSERT_NE(stream, nullptr);
  EXPECT_EQ(stream->input_type()->name(), "ModelInferRequest");
  EXPECT_EQ(stream->output_type()->name(), "ModelStreamInferResponse");
  EXPECT_TRUE(stream->client_streaming() && stream->server_streaming());
  for (const std::string& name : methods) {
    const auto* method = service->FindMethodByName(name);
    ASSERT_NE(method, nullptr) << name;
    EXPECT_EQ(method->input_type()->name(), name + "Request");
    EXPECT_EQ(method->output_type()->name(), name + "Response");
    EXPECT_FALSE(method->client_streaming() || method->server_streaming()) << name;
  }
}

TEST(ProtoRoundtrip, AdminServiceMethods) {
  EXPECT_STREQ(inferd::admin::v1::Admin::service_full_name(), "inferd.admin.v1.Admin");
  const auto* service =
      DescriptorPool::generated_pool()->FindServiceByName("inferd.admin.v1.Admin");
  ASSERT_NE(service, nullptr);
  for (const char* name :
       {"GetMemoryStats", "SetRetentionCap", "Trim", "ResetPeak", "GetPartitionReport"}) {
    const auto* method = service->FindMethodByName(name);
    ASSERT_NE(method, nullptr) << name;
    EXPECT_EQ(method->input_type()->name(), std::string(name) + "Request");
    EXPECT_EQ(method->output_type()->name(), std::string(name) + "Response");
  }
}

TEST(ProtoRoundtrip, AdminMemoryStatsRoundtrip) {
  inferd::admin::v1::GetMemoryStatsResponse response;
  auto* entry = response.add_arenas();
  entry->set_model("mlp");
  entry->set_device("cpu:0");
  entry->set_arena("io");
  entry->set_live_bytes(1 << 20);
  entry->set_unbounded(true);
  entry->set_outstanding_leases(2);
  inferd::admin::v1::GetMemoryStatsResponse parsed;
  ASSERT_TRUE(parsed.ParseFromString(response.SerializeAsString()));
  ASSERT_EQ(parsed.arenas_size(), 1);
  EXPECT_EQ(parsed.arenas(0).model(), "mlp");
  EXPECT_EQ(parsed.arenas(0).arena(), "io");
  EXPECT_EQ(parsed.arenas(0).live_bytes(), 1u << 20);
  EXPECT_TRUE(parsed.arenas(0).unbounded());
  EXPECT_EQ(parsed.arenas(0).retention_cap_bytes(), 0u);
  EXPECT_EQ(parsed.arenas(0).outstanding_leases(), 2u);
}

}  // namespace

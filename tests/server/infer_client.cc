#include "tests/server/infer_client.h"

#include <google/protobuf/io/coded_stream.h>
#include <grpcpp/generic/generic_stub.h>

#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/testing/runfiles.h"
#include "server/kserve_types.h"

namespace inferd::testing {
namespace {

grpc::ByteBuffer ToBuffer(const std::string& bytes) {
  grpc::Slice slice(bytes.data(), bytes.size());
  return grpc::ByteBuffer(&slice, 1);
}

std::string FromBuffer(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  (void)buffer.Dump(&slices);
  std::string s;
  for (const grpc::Slice& sl : slices)
    s.append(reinterpret_cast<const char*>(sl.begin()), sl.size());
  return s;
}

void* Tag(intptr_t i) { return reinterpret_cast<void*>(i); }

bool Await(grpc::CompletionQueue& cq) {
  void* tag;
  bool ok = false;
  return cq.Next(&tag, &ok) && ok;
}

}  // namespace

engine::TestDataSet LoadDataSet(const std::string& model_dir) {
  absl::StatusOr<std::vector<engine::TestDataSet>> sets =
      engine::ReadTestDataSets(engine::testing::Runfile(model_dir));
  if (!sets.ok() || sets->empty()) return {};
  return (*sets)[0];
}

inference::ModelInferRequest RawRequest(const std::string& model, const engine::TestDataSet& set) {
  inference::ModelInferRequest r;
  r.set_model_name(model);
  for (const engine::NamedData& d : set.inputs) {
    auto* in = r.add_inputs();
    in->set_name(d.name);
    in->set_datatype(server::KServeDataTypeName(d.type));
    for (int64_t dim : d.shape.dims()) in->add_shape(dim);
    r.add_raw_input_contents(d.bytes.data(), d.bytes.size());
  }
  return r;
}

absl::Status CheckOutputs(const inference::ModelInferResponse& response,
                          const engine::TestDataSet& set) {
  if (response.outputs_size() == 0) return absl::InvalidArgumentError("no outputs");
  if (response.raw_output_contents_size() != response.outputs_size()) {
    return absl::InvalidArgumentError(absl::StrCat(response.outputs_size(), " outputs but ",
                                                   response.raw_output_contents_size(),
                                                   " raw_output_contents"));
  }
  for (int i = 0; i < response.outputs_size(); ++i) {
    const auto& out = response.outputs(i);
    const engine::NamedData* want = nullptr;
    for (const engine::NamedData& d : set.outputs) {
      if (d.name == out.name()) want = &d;
    }
    if (want == nullptr) continue;
    const std::optional<engine::DataType> type = server::DataTypeFromKServe(out.datatype());
    if (!type) return absl::InvalidArgumentError("bad datatype " + out.datatype());
    const std::vector<int64_t> dims(out.shape().begin(), out.shape().end());
    const std::string& raw = response.raw_output_contents(i);
    absl::Status s = engine::CompareData(*want, *type, engine::Shape(absl::MakeConstSpan(dims)),
                                         raw.data(), raw.size(), {});
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

grpc::Status RawUnaryCall(const std::shared_ptr<grpc::Channel>& channel, const std::string& method,
                          const std::string& request, std::string* response) {
  grpc::GenericStub stub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  grpc::CompletionQueue cq;
  std::unique_ptr<grpc::GenericClientAsyncResponseReader> call =
      stub.PrepareUnaryCall(&ctx, method, ToBuffer(request), &cq);
  call->StartCall();
  grpc::ByteBuffer reply;
  grpc::Status status;
  call->Finish(&reply, &status, Tag(1));
  Await(cq);
  if (status.ok() && response != nullptr) *response = FromBuffer(reply);
  return status;
}

grpc::Status HealthCheck(const std::shared_ptr<grpc::Channel>& channel, const std::string& service,
                         int* status) {
  std::string req = "\x0a";
  req.push_back(static_cast<char>(service.size()));  // names here are < 128 bytes
  req += service;
  std::string reply;
  grpc::Status s = RawUnaryCall(channel, "/grpc.health.v1.Health/Check", req, &reply);
  if (!s.ok()) return s;
  *status = 0;  // UNKNOWN when the field is absent
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(reply.data()),
                                            static_cast<int>(reply.size()));
  uint32_t tag, value;
  while ((tag = in.ReadTag()) != 0) {
    if (tag == 0x08 && in.ReadVarint32(&value)) *status = static_cast<int>(value);
  }
  return s;
}

grpc::Status ReflectionServices(const std::shared_ptr<grpc::Channel>& channel,
                                std::vector<std::string>* services) {
  grpc::GenericStub stub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  grpc::CompletionQueue cq;
  auto call =
      stub.PrepareCall(&ctx, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", &cq);
  call->StartCall(Tag(1));
  Await(cq);
  call->Write(ToBuffer(std::string("\x3a\x00", 2)), Tag(2));  // list_services: ""
  Await(cq);
  call->WritesDone(Tag(3));
  Await(cq);
  grpc::ByteBuffer reply;
  call->Read(&reply, Tag(4));
  const bool got = Await(cq);
  grpc::Status status;
  call->Finish(&status, Tag(5));
  Await(cq);
  if (!status.ok()) return status;
  if (!got) return grpc::Status(grpc::StatusCode::INTERNAL, "no reflection response");
  // ServerReflectionResponse.list_services_response (6) -> service (1) -> name (1).
  const std::string bytes = FromBuffer(reply);
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  uint32_t tag;
  while ((tag = in.ReadTag()) != 0) {
    std::string field;
    uint32_t len;
    if ((tag & 7) != 2 || !in.ReadVarint32(&len) || !in.ReadString(&field, len)) break;
    if (tag >> 3 != 6) continue;
    google::protobuf::io::CodedInputStream list(reinterpret_cast<const uint8_t*>(field.data()),
                                                static_cast<int>(field.size()));
    while ((tag = list.ReadTag()) != 0) {
      std::string service, name;
      if (!list.ReadVarint32(&len) || !list.ReadString(&service, len)) break;
      google::protobuf::io::CodedInputStream one(reinterpret_cast<const uint8_t*>(service.data()),
                                                 static_cast<int>(service.size()));
      if (one.ReadTag() == 0x0a && one.ReadVarint32(&len) && one.ReadString(&name, len)) {
        services->push_back(name);
      }
    }
  }
  return status;
}

}  // namespace inferd::testing

// echo_server: the bare transport limit for loadtest. A minimal KServe v2 gRPC server (same
// proto, same port setup as inferd) whose ModelInfer answers every input as an output of the same
// name, datatype, shape and bytes, for any model name. Two variants:
//
//   --mode copy      the generated (typed) callback service: gRPC parses the request into a
//                    ModelInferRequest (copy 1), the handler copies raw_input_contents into the
//                    response (copy 2), gRPC serializes the response (copy 3). What a plain
//                    protobuf server does.
//   --mode zerocopy  ModelInfer as a raw callback method (WithRawCallbackMethod_ModelInfer): the
//                    request stays in gRPC's receive slices; the response ByteBuffer is a
//                    serialized header, then per output a tag+length slice and SUB-SLICES of the
//                    request's slices (reference-counted, no byte copied). What inferd's response
//                    writer does with its arena buffers, minus the model.
//
// Also answers ServerLive, ServerReady, ModelReady, ServerMetadata and ModelMetadata (a model
// with input "x" FP32 [-1] and output "x" FP32 [-1]: shapes come from loadtest's --shape).
//
//   echo_server [--mode copy|zerocopy] [--address 127.0.0.1:0] [--port-file FILE]
//               [--max-lifetime 3600s]
//
// Serves until SIGTERM / SIGINT or --max-lifetime, then exits 0. Loopback addresses only.
#include <grpc/grpc.h>
#include <signal.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "base/flags.h"
#include "loadtest/flags.h"
#include "loadtest/loopback.h"
#include "loadtest/wire.h"
#include "proto/inference.grpc.pb.h"

ABSL_FLAG(std::string, mode, "zerocopy", "copy (typed service) or zerocopy (raw sub-slices)");
ABSL_FLAG(std::string, address, "127.0.0.1:0", "listen address, loopback only (port 0: any)");
ABSL_FLAG(std::string, port_file, "", "write the bound port to FILE once listening");
ABSL_FLAG(inferd::loadtest::Seconds, max_lifetime, inferd::loadtest::Seconds(absl::Hours(1)),
          "exit 0 after D even without a signal");

namespace inferd::loadtest {
namespace {

using inference::GRPCInferenceService;

constexpr char kUsage[] =
    "usage: echo_server [--mode copy|zerocopy] [--address 127.0.0.1:0] [--port-file FILE]\n"
    "                   [--max-lifetime 3600s]\n";
constexpr int kUsageError = 2;

constexpr int kRawInputContentsField = 7;
constexpr int kRawOutputContentsField = 6;

grpc::ServerUnaryReactor* Finish(grpc::CallbackServerContext* context, grpc::Status status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(std::move(status));
  return reactor;
}

// Output metadata for each input of the request.
void EchoHeader(const inference::ModelInferRequest& request,
                inference::ModelInferResponse* response) {
  response->set_model_name(request.model_name());
  response->set_model_version(request.model_version().empty() ? "1" : request.model_version());
  response->set_id(request.id());
  for (const auto& in : request.inputs()) {
    auto* out = response->add_outputs();
    out->set_name(in.name());
    out->set_datatype(in.datatype());
    *out->mutable_shape() = in.shape();
  }
}

// The methods both variants share.
template <typename Base>
class EchoCommon : public Base {
 public:
  grpc::ServerUnaryReactor* ServerLive(grpc::CallbackServerContext* context,
                                       const inference::ServerLiveRequest*,
                                       inference::ServerLiveResponse* response) override {
    response->set_live(true);
    return Finish(context, grpc::Status::OK);
  }
  grpc::ServerUnaryReactor* ServerReady(grpc::CallbackServerContext* context,
                                        const inference::ServerReadyRequest*,
                                        inference::ServerReadyResponse* response) override {
    response->set_ready(true);
    return Finish(context, grpc::Status::OK);
  }
  grpc::ServerUnaryReactor* ModelReady(grpc::CallbackServerContext* context,
                                       const inference::ModelReadyRequest*,
                                       inference::ModelReadyResponse* response) override {
    response->set_ready(true);
    return Finish(context, grpc::Status::OK);
  }
  grpc::ServerUnaryReactor* ServerMetadata(grpc::CallbackServerContext* context,
                                           const inference::ServerMetadataRequest*,
                                           inference::ServerMetadataResponse* response) override {
    response->set_name("echo_server");
    response->set_version("1");
    return Finish(context, grpc::Status::OK);
  }
  grpc::ServerUnaryReactor* ModelMetadata(grpc::CallbackServerContext* context,
                                          const inference::ModelMetadataRequest* request,
                                          inference::ModelMetadataResponse* response) override {
    response->set_name(request->name());
    response->add_versions("1");
    response->set_platform("echo");
    for (auto* t : {response->add_inputs(), response->add_outputs()}) {
      t->set_name("x");
      t->set_datatype("FP32");
      t->add_shape(-1);
    }
    return Finish(context, grpc::Status::OK);
  }
};

// --mode copy: through protobuf.
class CopyEchoService final : public EchoCommon<GRPCInferenceService::CallbackService> {
 public:
  grpc::ServerUnaryReactor* ModelInfer(grpc::CallbackServerContext* context,
                                       const inference::ModelInferRequest* request,
                                       inference::ModelInferResponse* response) override {
    if (request->raw_input_contents_size() != request->inputs_size()) {
      return Finish(context, grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                          "echo_server takes raw_input_contents only, one per "
                                          "input"));
    }
    EchoHeader(*request, response);
    for (const std::string& raw : request->raw_input_contents()) {
      response->add_raw_output_contents(raw);  // a copy
    }
    return Finish(context, grpc::Status::OK);
  }
};

// --mode zerocopy: slices of the request go back out.
class ZeroCopyEchoService final
    : public EchoCommon<GRPCInferenceService::WithRawCallbackMethod_ModelInfer<
          GRPCInferenceService::CallbackService>> {
 public:
  grpc::ServerUnaryReactor* ModelInfer(grpc::CallbackServerContext* context,
                                       const grpc::ByteBuffer* request,
                                       grpc::ByteBuffer* response) override {
    absl::StatusOr<SplitMessage> m = SplitMessage::Parse(*request, kRawInputContentsField);
    inference::ModelInferRequest header;
    if (!m.ok() || !header.ParseFromString(m->other_fields())) {
      return Finish(context,
                    grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "not a ModelInferRequest"));
    }
    if (m->entry_count() != static_cast<size_t>(header.inputs_size())) {
      return Finish(context, grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                          "echo_server takes raw_input_contents only, one per "
                                          "input"));
    }
    inference::ModelInferResponse out;
    EchoHeader(header, &out);
    std::vector<grpc::Slice> slices;
    slices.emplace_back(out.SerializeAsString());
    for (size_t i = 0; i < m->entry_count(); ++i) {
      slices.emplace_back(LengthDelimitedPrefix(kRawOutputContentsField, m->entry(i).size));
      m->AppendEntrySlices(i, &slices);
    }
    *response = grpc::ByteBuffer(slices.data(), slices.size());
    return Finish(context, grpc::Status::OK);
  }
};

int Fail(const absl::Status& s) {
  std::cerr << "echo_server: " << s.message() << "\n";
  return 2;
}

int Main(int argc, char** argv) {
  const std::vector<std::string> positional = ParseCommandLine(
      argc, argv,
      CommandLineSpec{kUsage, {"mode", "address", "port-file", "max-lifetime"}, kUsageError});
  if (!positional.empty()) {
    return Fail(
        absl::InvalidArgumentError(absl::StrCat("unexpected argument '", positional[0], "'")));
  }
  const std::string mode = absl::GetFlag(FLAGS_mode);
  const std::string address = absl::GetFlag(FLAGS_address);
  const absl::Duration lifetime = absl::GetFlag(FLAGS_max_lifetime).value;
  if (absl::Status s = CheckLoopback("--address", address); !s.ok()) return Fail(s);

  std::unique_ptr<grpc::Service> service;
  if (mode == "copy") {
    service = std::make_unique<CopyEchoService>();
  } else if (mode == "zerocopy") {
    service = std::make_unique<ZeroCopyEchoService>();
  } else {
    return Fail(absl::InvalidArgumentError("--mode: expected copy or zerocopy"));
  }

  // The main thread waits for the signals; block them before gRPC starts its threads.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &port);
  builder.SetMaxReceiveMessageSize(-1);
  builder.SetMaxSendMessageSize(-1);
  builder.RegisterService(service.get());
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    return Fail(absl::UnavailableError(absl::StrCat("cannot listen on ", address)));
  }
  std::fprintf(stderr, "echo_server (%s) listening on %s (port %d)\n", mode.c_str(),
               address.c_str(), port);
  if (const std::string path = absl::GetFlag(FLAGS_port_file); !path.empty()) {
    {
      std::ofstream out(path + ".tmp");
      out << port << "\n";
    }
    if (std::rename((path + ".tmp").c_str(), path.c_str()) != 0) {
      return Fail(absl::InternalError(absl::StrCat("cannot write ", path)));
    }
  }
  const timespec wait = absl::ToTimespec(lifetime);
  const int sig = sigtimedwait(&signals, nullptr, &wait);
  std::fprintf(stderr, "echo_server: %s, shutting down\n",
               sig > 0 ? "signal" : "max lifetime reached");
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  server->Wait();
  return 0;
}

}  // namespace
}  // namespace inferd::loadtest

int main(int argc, char** argv) { return inferd::loadtest::Main(argc, argv); }

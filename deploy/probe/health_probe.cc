// health_probe: asks a gRPC server's grpc.health.v1.Health/Check for one service and exits 0 when
// it is SERVING, 1 otherwise (NOT_SERVING, unknown service, unreachable, timeout). Made for the
// Docker HEALTHCHECK and exec probes; Docker treats 0 as healthy and 1 as unhealthy.
//
//   health_probe [--addr HOST:PORT] [--service NAME] [--timeout 2s] [--ca-cert FILE]
//                [--server-name NAME]
//
// --addr defaults to 127.0.0.1:8001 (inferd's gRPC address); --service defaults to "" (the whole
// server: inferd sets it SERVING once its start-up models are loaded, NOT_SERVING while draining);
// a model name asks for that model (SERVING while it is READY). --ca-cert switches to TLS, with
// --server-name overriding the name checked in the server's certificate.
#include <grpcpp/grpcpp.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/time/time.h"
#include "deploy/probe/health.grpc.pb.h"

namespace {

constexpr char kUsage[] =
    "usage: health_probe [--addr HOST:PORT] [--service NAME] [--timeout 2s] [--ca-cert FILE] "
    "[--server-name NAME]\n"
    "exit 0: SERVING; 1: anything else; 64: bad arguments\n";
constexpr int kServing = 0;
constexpr int kUnhealthy = 1;
constexpr int kUsageError = 64;  // not 2: Docker reserves it

const char* StatusName(grpc::health::v1::HealthCheckResponse::ServingStatus s) {
  switch (s) {
    case grpc::health::v1::HealthCheckResponse::SERVING:
      return "SERVING";
    case grpc::health::v1::HealthCheckResponse::NOT_SERVING:
      return "NOT_SERVING";
    case grpc::health::v1::HealthCheckResponse::SERVICE_UNKNOWN:
      return "SERVICE_UNKNOWN";
    default:
      return "UNKNOWN";
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string addr = "127.0.0.1:8001", service, ca_cert, server_name;
  absl::Duration timeout = absl::Seconds(2);
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "health_probe: %s needs a value\n%s", arg.c_str(), kUsage);
      return kUsageError;
    }
    const std::string value = argv[++i];
    if (arg == "--addr") {
      addr = value;
    } else if (arg == "--service") {
      service = value;
    } else if (arg == "--ca-cert") {
      ca_cert = value;
    } else if (arg == "--server-name") {
      server_name = value;
    } else if (arg == "--timeout") {
      if (!absl::ParseDuration(value, &timeout) || timeout <= absl::ZeroDuration()) {
        std::fprintf(stderr, "health_probe: --timeout: expected a duration like 2s, got '%s'\n",
                     value.c_str());
        return kUsageError;
      }
    } else {
      std::fprintf(stderr, "health_probe: unknown argument '%s'\n%s", arg.c_str(), kUsage);
      return kUsageError;
    }
  }

  std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials();
  grpc::ChannelArguments channel_args;
  if (!ca_cert.empty()) {
    std::ifstream in(ca_cert);
    std::stringstream pem;
    pem << in.rdbuf();
    if (!in) {
      std::fprintf(stderr, "health_probe: --ca-cert: cannot read %s\n", ca_cert.c_str());
      return kUsageError;
    }
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = pem.str();
    creds = grpc::SslCredentials(ssl);
    if (!server_name.empty()) channel_args.SetSslTargetNameOverride(server_name);
  }
  auto stub =
      grpc::health::v1::Health::NewStub(grpc::CreateCustomChannel(addr, creds, channel_args));

  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  const grpc::Status status = stub->Check(&context, request, &response);
  const std::string shown = service.empty() ? "\"\" (server)" : "'" + service + "'";
  if (!status.ok()) {
    // NOT_FOUND: the server has no entry for the service (for inferd: no such model).
    std::printf("%s %s: health check failed: %d %s\n", addr.c_str(), shown.c_str(),
                static_cast<int>(status.error_code()), status.error_message().c_str());
    return kUnhealthy;
  }
  std::printf("%s %s: %s\n", addr.c_str(), shown.c_str(), StatusName(response.status()));
  return response.status() == grpc::health::v1::HealthCheckResponse::SERVING ? kServing
                                                                             : kUnhealthy;
}

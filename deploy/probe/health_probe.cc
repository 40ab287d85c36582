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
#include <vector>

#include "absl/flags/flag.h"
#include "absl/time/time.h"
#include "base/flags.h"
#include "deploy/probe/health.grpc.pb.h"

ABSL_FLAG(std::string, addr, "127.0.0.1:8001", "the server's gRPC address");
ABSL_FLAG(std::string, service, "", "the service to ask for (\"\": the whole server; or a model)");
ABSL_FLAG(absl::Duration, timeout, absl::Seconds(2), "the check's deadline");
ABSL_FLAG(std::string, ca_cert, "", "use TLS, trusting the CA certificate in FILE");
ABSL_FLAG(std::string, server_name, "", "with --ca-cert: the name checked in the certificate");

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
  const std::vector<std::string> positional = inferd::ParseCommandLine(
      argc, argv,
      inferd::CommandLineSpec{
          kUsage, {"addr", "service", "timeout", "ca-cert", "server-name"}, kUsageError});
  if (!positional.empty()) {
    std::fprintf(stderr, "health_probe: unknown argument '%s'\n%s", positional[0].c_str(), kUsage);
    return kUsageError;
  }
  const std::string addr = absl::GetFlag(FLAGS_addr);
  const std::string service = absl::GetFlag(FLAGS_service);
  const std::string ca_cert = absl::GetFlag(FLAGS_ca_cert);
  const std::string server_name = absl::GetFlag(FLAGS_server_name);
  const absl::Duration timeout = absl::GetFlag(FLAGS_timeout);
  if (timeout <= absl::ZeroDuration()) {
    std::fprintf(stderr, "health_probe: --timeout: expected a duration like 2s, got '%s'\n",
                 absl::FormatDuration(timeout).c_str());
    return kUsageError;
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

#include "server/server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <spdlog/spdlog.h>

#include <climits>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "kernels/cpu/cpu_kernels.h"
#include "server/admin_auth.h"
#include "server/admin_service.h"
#include "server/metrics.h"
#include "server/version.h"

namespace inferd::server {
namespace {

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> Credentials(const ServerConfig& s) {
  if (!s.tls) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions ssl;
  INFERD_ASSIGN_OR_RETURN(std::string cert, ReadWholeFile(s.tls->cert_file));
  INFERD_ASSIGN_OR_RETURN(std::string key, ReadWholeFile(s.tls->key_file));
  ssl.pem_key_cert_pairs.push_back({std::move(key), std::move(cert)});
  return grpc::SslServerCredentials(ssl);
}

}  // namespace

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

absl::StatusOr<std::unique_ptr<InferdServer>> InferdServer::Start(
    std::shared_ptr<const Config> config, InferdServerOptions options) {
  std::unique_ptr<InferdServer> server(new InferdServer(std::move(config)));
  INFERD_RETURN_IF_ERROR(server->Init(options));
  return server;
}

absl::Status InferdServer::Init(const InferdServerOptions& options) {
  const ServerConfig& sc = config_->server;
  registry_ = std::make_unique<engine::KernelRegistry>();
  INFERD_RETURN_IF_ERROR(kernels::cpu::RegisterCpuKernels(*registry_));
  repository_ = std::make_unique<ModelRepository>(config_, *registry_);
  service_ = std::make_unique<InferenceService>(*repository_);

  // pass 1: the KServe listener, serving (live, not ready) before the models load.
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  INFERD_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> creds, Credentials(sc));
  grpc::ServerBuilder builder;
  builder.AddListeningPort(sc.grpc_address, creds, &grpc_port_);
  const int max_bytes = static_cast<int>(std::min<uint64_t>(sc.max_message_bytes, INT_MAX));
  builder.SetMaxReceiveMessageSize(max_bytes);
  builder.SetMaxSendMessageSize(max_bytes);
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || grpc_port_ == 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", sc.grpc_address, " (address in use or not local?)"));
  }
  grpc::HealthCheckServiceInterface* health = server_->GetHealthCheckService();
  health->SetServingStatus("", false);
  repository_->SetStateListener([health](const std::string& name, ModelState state) {
    health->SetServingStatus(name, state == ModelState::kReady);
  });
  spdlog::info(
      "{} {} listening on {} (port {}): KServe v2 gRPC{}, health, reflection; max "
      "message {} bytes",
      kInferdName, kInferdVersion, sc.grpc_address, grpc_port_, sc.tls ? " over TLS" : "",
      max_bytes);

  // pass 2: the ops listeners (admin API; metrics are read from repository()).
  INFERD_RETURN_IF_ERROR(AddOpsServices(options));

  // pass 3: the start-up models; a failure is reported, the others serve.
  if (options.load_startup_models) {
    const std::vector<std::string> names = repository_->StartupModels();
    spdlog::info("model repository {}: loading {} model(s): {}", sc.model_repository, names.size(),
                 absl::StrJoin(names, ", "));
    repository_->LoadStartupModels();
  }
  for (const std::string& line : Summary()) spdlog::info("  {}", line);
  service_->SetReady(true);
  health->SetServingStatus("", true);
  spdlog::info("ready");
  return absl::OkStatus();
}

absl::Status InferdServer::AddOpsServices(const InferdServerOptions& options) {
  const ServerConfig& sc = config_->server;
  // The metrics exporter reads the repository at scrape time.
  if (options.serve_metrics) {
    INFERD_ASSIGN_OR_RETURN(metrics_, MetricsExporter::Start(sc.metrics_address, *repository_));
    metrics_port_ = metrics_->port();
    spdlog::info("Prometheus metrics on {} (port {}): /metrics", sc.metrics_address, metrics_port_);
  }
  std::vector<grpc::Service*> services = options.admin_services;
  if (options.serve_admin) {
    INFERD_ASSIGN_OR_RETURN(AdminAuth auth, AdminAuth::FromConfig(sc));
    admin_service_ = std::make_unique<AdminService>(*repository_, std::move(auth));
    services.push_back(admin_service_.get());
  }
  if (services.empty()) return absl::OkStatus();
  INFERD_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> creds, Credentials(sc));
  grpc::ServerBuilder builder;
  builder.AddListeningPort(sc.admin_address, creds, &admin_port_);
  for (grpc::Service* s : services) builder.RegisterService(s);
  admin_server_ = builder.BuildAndStart();
  if (admin_server_ == nullptr || admin_port_ == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", sc.admin_address));
  }
  spdlog::info(
      "admin API listening on {} (port {}){}", sc.admin_address, admin_port_,
      admin_service_ != nullptr && !sc.admin_token.empty() ? ", bearer token required" : "");
  return absl::OkStatus();
}

std::vector<std::string> InferdServer::Summary() const {
  std::vector<std::string> lines;
  for (const ModelRepository::IndexEntry& e : repository_->Index()) {
    std::string line =
        absl::StrCat("model ", e.name, " version ", e.version, ": ", ModelStateName(e.state));
    if (std::shared_ptr<LoadedModel> m = repository_->Find(e.name)) {
      if (std::shared_ptr<engine::Session> s = m->session()) {
        std::vector<std::string> devices;
        for (const engine::DeviceArenas& d : s->devices()) devices.push_back(d.device);
        absl::StrAppend(&line, " on ", absl::StrJoin(devices, ", "), ", ",
                        m->config().max_concurrent_runs, " worker(s)");
      }
    }
    if (!e.reason.empty()) absl::StrAppend(&line, ": ", e.reason);
    lines.push_back(std::move(line));
  }
  return lines;
}

void InferdServer::Shutdown(absl::Duration drain_timeout) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (stopping_) {
      stopped_cv_.wait(lock, [this] { return stopped_; });
      return;
    }
    stopping_ = true;
  }
  const absl::Time start = absl::Now();
  spdlog::info("shutting down: no new calls; draining in-flight requests (at most {})",
               absl::FormatDuration(drain_timeout));
  if (service_ != nullptr) service_->SetReady(false);
  if (server_ != nullptr) {
    // Every health entry becomes NOT_SERVING, and stays so.
    server_->GetHealthCheckService()->Shutdown();
    server_->Shutdown(absl::ToChronoTime(start + drain_timeout));
  }
  if (admin_server_ != nullptr) admin_server_->Shutdown(absl::ToChronoTime(absl::Now()));
  metrics_.reset();  // ops: stop serving /metrics (waits for scrapes in progress)
  if (repository_ != nullptr) repository_->UnloadAll();
  spdlog::info("shut down in {} ms", absl::ToInt64Milliseconds(absl::Now() - start));
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = true;
  }
  stopped_cv_.notify_all();
}

void InferdServer::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  stopped_cv_.wait(lock, [this] { return stopped_; });
}

InferdServer::~InferdServer() {
  Shutdown(absl::ZeroDuration());
  // Server::Shutdown has waited for every call, so nothing calls into the service any more.
  if (repository_ != nullptr) repository_->SetStateListener(nullptr);  // health goes with server_
  server_.reset();
  admin_server_.reset();
  service_.reset();  // joins finished load / unload threads
  repository_.reset();
}

}  // namespace inferd::server

#include "server/server.h"

#include <grpc/grpc.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/support/server_interceptor.h>
#include <netdb.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "kernels/build_kernels.h"
#include "server/admin_auth.h"
#include "server/admin_service.h"
#include "server/config_values.h"
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

// gRPC 1.51's callback handlers answer a request whose bytes do not parse with UNIMPLEMENTED and
// an empty message (CallbackUnaryHandler::RunHandler drops the parse error), which reads as "no
// such method". The interceptor sees the failed parse (POST_RECV_MESSAGE without a message) and
// rewrites the status the call then sends.
class ParseErrorInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit ParseErrorInterceptor(std::string method) : method_(std::move(method)) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    using grpc::experimental::InterceptionHookPoints;
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE) &&
        methods->GetRecvMessage() == nullptr) {
      unparsed_ = true;
    }
    if (unparsed_ && methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      methods->ModifySendStatus(grpc::Status(
          grpc::StatusCode::INVALID_ARGUMENT,
          absl::StrCat("the request to ", method_,
                       " could not be parsed: its bytes are not a serialized request message")));
    }
    methods->Proceed();
  }

 private:
  const std::string method_;
  bool unparsed_ = false;  // hooks of one call run one at a time
};

class ParseErrorInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    // Only unary calls: in a stream, a missing message also means the stream's end. ModelInfer
    // is a raw method (its bytes always "parse"; the request reader checks them).
    if (info->type() != grpc::experimental::ServerRpcInfo::Type::UNARY ||
        absl::EndsWith(info->method(), "/ModelInfer")) {
      return nullptr;
    }
    return new ParseErrorInterceptor(info->method());
  }
};

// What every gRPC listener of inferd is built with: exclusive ports, parse errors reported.
void ConfigureBuilder(grpc::ServerBuilder& builder) {
  // gRPC sets SO_REUSEPORT by default: a second process (or a second listener of ours, e.g.
  // localhost:P next to 127.0.0.1:P) binds the same port and the kernel splits the
  // connections between them.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> creators;
  creators.push_back(std::make_unique<ParseErrorInterceptorFactory>());
  builder.experimental().SetInterceptorCreators(std::move(creators));
}

// UNAVAILABLE "cannot listen on ADDR: address in use" when some address that `address` ("host:
// port", "[v6]:port") resolves to has its port taken; OK when all are free, or when there is
// nothing to check (port 0, a unix: address, a name that does not resolve: the listener itself
// reports those). gRPC binds every address a name resolves to and serves when only some bind
// (localhost:P where 127.0.0.1:P is taken gets only [::1]:P), so this checks them one by one.
absl::Status CheckPortFree(const std::string& address) {
  absl::StatusOr<Address> parsed = ParseAddress(address, /*allow_unix=*/true);
  if (!parsed.ok() || parsed->is_unix || parsed->port == 0) return absl::OkStatus();
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(parsed->port);
  if (getaddrinfo(parsed->host.c_str(), service.c_str(), &hints, &found) != 0) {
    return absl::OkStatus();
  }
  bool in_use = false;
  for (addrinfo* a = found; a != nullptr && !in_use; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;  // as the listeners set it: a port in TIME_WAIT is not "in use"
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    in_use = bind(fd, a->ai_addr, a->ai_addrlen) != 0 && errno == EADDRINUSE;
    close(fd);
  }
  freeaddrinfo(found);
  if (in_use) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", address, ": address in use"));
  }
  return absl::OkStatus();
}

// Why a listener on `address` did not start.
absl::Status ListenError(const std::string& address) {
  INFERD_RETURN_IF_ERROR(CheckPortFree(address));
  return absl::UnavailableError(absl::StrCat(
      "cannot listen on ", address, ": not an address of this host, or not allowed to bind it"));
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
  INFERD_RETURN_IF_ERROR(kernels::RegisterBuildKernels(*registry_));
  repository_ = std::make_unique<ModelRepository>(config_, *registry_);
  shared_memory_ = std::make_unique<SharedMemoryRegistry>();
  service_ = std::make_unique<InferenceService>(*repository_, shared_memory_.get());
  reloader_ = std::make_unique<RepositoryReloader>(*repository_);

  // pass 1: the KServe listener, serving (live, not ready) before the models load.
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  INFERD_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> creds, Credentials(sc));
  INFERD_RETURN_IF_ERROR(CheckPortFree(sc.grpc_address));
  grpc::ServerBuilder builder;
  ConfigureBuilder(builder);
  builder.AddListeningPort(sc.grpc_address, creds, &grpc_port_);
  const int max_bytes = static_cast<int>(std::min<uint64_t>(sc.max_message_bytes, INT_MAX));
  builder.SetMaxReceiveMessageSize(max_bytes);
  builder.SetMaxSendMessageSize(max_bytes);
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || grpc_port_ == 0) return ListenError(sc.grpc_address);
  grpc::HealthCheckServiceInterface* health = server_->GetHealthCheckService();
  health->SetServingStatus("", false);
  RepositoryReloader* reloader = reloader_.get();
  repository_->SetStateListener([health, reloader](const std::string& name, ModelState state) {
    reloader->OnStateChange(name, state);
    health->SetServingStatus(name, state == ModelState::kReady);
  });
  spdlog::info(
      "{} {} listening on {} (port {}): KServe v2 gRPC{}, health, reflection; max "
      "message {} bytes",
      kInferdName, kInferdVersion, sc.grpc_address, grpc_port_, sc.tls ? " over TLS" : "",
      max_bytes);

  // pass 1b: the KServe HTTP/REST listener, answering like gRPC (live, not ready yet).
  if (!sc.http_address.empty()) {
    INFERD_RETURN_IF_ERROR(CheckPortFree(sc.http_address));
    InferenceService* service = service_.get();
    INFERD_ASSIGN_OR_RETURN(
        http_, http::HttpServer::Start(sc, *repository_, [service] { return service->ready(); }));
    spdlog::info("KServe v2 HTTP/REST{} listening on {} (port {}), {} threads",
                 sc.tls ? " over TLS" : "", sc.http_address, http_->port(),
                 http::HttpServer::kThreads);
  }

  // pass 2: the ops listeners (admin API; metrics are read from repository()).
  INFERD_RETURN_IF_ERROR(AddOpsServices(options));

  // pass 3: the start-up models; a failure is reported, the others serve.
  if (options.load_startup_models) {
    repository_->LoadStartupModels(options.stop);
    interrupted_ = options.stop != nullptr && options.stop->load();
  }
  for (const std::string& line : Summary()) spdlog::info("  {}", line);
  if (interrupted_) return absl::OkStatus();  // never ready; the caller shuts it down
  service_->SetReady(true);
  health->SetServingStatus("", true);
  spdlog::info("ready");
  return absl::OkStatus();
}

RepositoryReloader::Summary InferdServer::ReloadRepository(const std::atomic<bool>* stop) {
  return reloader_->Reload(stop);
}

absl::Status InferdServer::AddOpsServices(const InferdServerOptions& options) {
  const ServerConfig& sc = config_->server;
  // The metrics exporter reads the repository at scrape time.
  if (options.serve_metrics) {
    INFERD_RETURN_IF_ERROR(CheckPortFree(sc.metrics_address));
    INFERD_ASSIGN_OR_RETURN(metrics_, MetricsExporter::Start(sc.metrics_address, *repository_,
                                                             kernels::BuildDeviceRuntimes()));
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
  INFERD_RETURN_IF_ERROR(CheckPortFree(sc.admin_address));
  grpc::ServerBuilder builder;
  ConfigureBuilder(builder);
  builder.AddListeningPort(sc.admin_address, creds, &admin_port_);
  for (grpc::Service* s : services) builder.RegisterService(s);
  admin_server_ = builder.BuildAndStart();
  if (admin_server_ == nullptr || admin_port_ == 0) return ListenError(sc.admin_address);
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
  // HTTP drains within what is left of the same drain timeout (both drained in parallel would
  // need a thread; gRPC's in-flight calls were mostly HTTP's too, so little is left here).
  if (http_ != nullptr)
    http_->Shutdown(std::max(absl::ZeroDuration(), start + drain_timeout - absl::Now()));
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
  http_.reset();
  admin_server_.reset();
  service_.reset();  // joins finished load / unload threads
  repository_.reset();
}

}  // namespace inferd::server

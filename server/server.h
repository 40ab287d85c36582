// InferdServer: the daemon without main(): the kernel registry, the model repository, the
// gRPC server on config.server.grpc_address with inference.GRPCInferenceService,
// grpc.health.v1.Health ("" and one entry per model: SERVING while READY) and server reflection,
// and the KServe v2 HTTP/REST listener on config.server.http_address (unless `none`), started
// right after gRPC and stopped (drained within the same drain timeout) right after it.
//
// Start binds the port, starts serving (ServerLive true, ServerReady false), loads the start-up
// models (a model that fails is reported, the others serve), then turns ready. Every listener
// binds its port exclusively (no SO_REUSEPORT): a port that another process or another of our
// listeners holds, even on one of the addresses a name resolves to, refuses the start with
// "cannot listen on ADDR: address in use". Start-up loading stops between models once
// InferdServerOptions::stop is set; Start then returns a server that is not ready
// (interrupted()), to be shut down. Shutdown stops
// accepting calls, lets in-flight requests finish within the drain timeout (then cancels the
// rest), and unloads every model; responses still being sent keep their buffers through their
// leases.
//
// Ops listeners (see AddOpsServices):
//   - a second gRPC server on config.server.admin_address serves inferd.admin.v1.Admin
//     (server/admin_service.h, bearer token per server/admin_auth.h) and any
//     InferdServerOptions::admin_services;
//   - Prometheus metrics on http://<config.server.metrics_address>/metrics (server/metrics.h),
//     read from repository() at scrape time.
//
// Example:
//   absl::StatusOr<std::unique_ptr<InferdServer>> server = InferdServer::Start(config);
//   if (!server.ok()) return Fail(server.status());
//   ... on SIGTERM, from another thread: (*server)->Shutdown(config->server.drain_timeout);
//   (*server)->Wait();
//
// Thread-safe.
#ifndef INFERD_SERVER_SERVER_H_
#define INFERD_SERVER_SERVER_H_

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/kernel_registry.h"
#include "server/admin_service.h"  // ops
#include "server/config.h"
#include "server/http/http_server.h"
#include "server/inference_service.h"
#include "server/metrics.h"  // ops
#include "server/model_repository.h"
#include "server/repository_reload.h"

namespace inferd::server {

struct InferdServerOptions {
  // admin and metrics: see AddOpsServices. Services for the admin listener on
  // config.server.admin_address; no admin listener when empty. Not owned; must outlive the
  // server.
  std::vector<grpc::Service*> admin_services;
  // ops: serve inferd.admin.v1.Admin on the admin listener, and the Prometheus metrics on
  // config.server.metrics_address (both by default).
  bool serve_admin = true;
  bool serve_metrics = true;
  // Load the start-up models before Start returns (default). Tests may turn it off.
  bool load_startup_models = true;
  // When set (e.g. by a signal thread), start-up loading stops before the next model. Not owned;
  // must outlive Start.
  const std::atomic<bool>* stop = nullptr;
};

class InferdServer {
 public:
  static absl::StatusOr<std::unique_ptr<InferdServer>> Start(std::shared_ptr<const Config> config,
                                                             InferdServerOptions options = {});
  ~InferdServer();  // Shutdown(0) if still running
  InferdServer(const InferdServer&) = delete;
  InferdServer& operator=(const InferdServer&) = delete;

  // Stops accepting, drains in-flight requests for at most `drain_timeout`, unloads the models.
  // Idempotent; concurrent callers all return once shutdown is complete.
  void Shutdown(absl::Duration drain_timeout);
  // Blocks until Shutdown has completed.
  void Wait();
  // SIGHUP: re-reads the model repository (server/repository_reload.h); stops between models
  // once `*stop` is true. Returns the summary it logged.
  RepositoryReloader::Summary ReloadRepository(const std::atomic<bool>* stop = nullptr);
  // True when Start's loading was cut short by InferdServerOptions::stop (never ready).
  bool interrupted() const { return interrupted_; }

  // The ports actually bound (useful with port 0); 0 for a listener that is not running.
  int grpc_port() const { return grpc_port_; }
  int http_port() const { return http_ != nullptr ? http_->port() : 0; }
  int admin_port() const { return admin_port_; }
  int metrics_port() const { return metrics_port_; }
  ModelRepository& repository() { return *repository_; }
  InferenceService& inference_service() { return *service_; }
  // The system shared-memory regions (HTTP's requests name them too: InferRequest's
  // set_shared_memory).
  SharedMemoryRegistry& shared_memory() { return *shared_memory_; }
  const Config& config() const { return *config_; }
  // One line per model: "mlp READY (cpu:0)", "bad UNAVAILABLE: <reason>".
  std::vector<std::string> Summary() const;

 private:
  explicit InferdServer(std::shared_ptr<const Config> config) : config_(std::move(config)) {}
  absl::Status Init(const InferdServerOptions& options);
  // ops: starts the admin listener (AdminService and options.admin_services) and the metrics
  // exporter, as the options ask.
  absl::Status AddOpsServices(const InferdServerOptions& options);
  // Loads the start-up models one by one until all are done or *stop is set.

  // Constant after Start.
  const std::shared_ptr<const Config> config_;
  std::unique_ptr<engine::KernelRegistry> registry_;
  std::unique_ptr<ModelRepository> repository_;
  // Client regions (system shared memory); before service_, which points to it.
  std::unique_ptr<SharedMemoryRegistry> shared_memory_;
  std::unique_ptr<InferenceService> service_;
  std::unique_ptr<RepositoryReloader> reloader_;
  bool interrupted_ = false;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<grpc::Server> admin_server_;
  // KServe v2 HTTP/REST on config.server.http_address (server/http/http_server.h); null when
  // http_address is `none`.
  std::unique_ptr<http::HttpServer> http_;
  int grpc_port_ = 0;
  int admin_port_ = 0;
  std::unique_ptr<AdminService> admin_service_;  // ops; outlives admin_server_'s calls
  std::unique_ptr<MetricsExporter> metrics_;     // ops; stopped by Shutdown
  int metrics_port_ = 0;

  std::mutex mu_;
  // State below is protected by mu_.
  std::condition_variable stopped_cv_;
  bool stopping_ = false;
  bool stopped_ = false;
};

// Reads a whole file (TLS certificates and keys).
absl::StatusOr<std::string> ReadWholeFile(const std::string& path);

}  // namespace inferd::server

#endif  // INFERD_SERVER_SERVER_H_

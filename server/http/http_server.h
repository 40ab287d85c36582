// HttpServer: inferd's KServe v2 / Triton HTTP/REST listener on config.server.http_address
// (libmicrohttpd), next to the gRPC one and answering the same (server/triton_views.h, one
// inference path: server/infer_job.h).
//
// Endpoints (docs/http.md):
//   GET  /v2/health/live, /v2/health/ready         200, or 400 when not ready (as Triton)
//   GET  /v2                                       server metadata (name, version, extensions)
//   GET  /v2/models/<m>[/versions/<v>]             model metadata
//   GET  .../ready                                 200 when the model is READY, else 400
//   POST .../infer                                 JSON tensors and binary tensor data
//   GET  .../config, .../stats, /v2/models/stats   Triton's ModelConfig / ModelStatistics JSON
//   POST /v2/repository/index                      [{"name","version","state","reason"}]
//   POST /v2/repository/models/<m>/load|unload     the gRPC rules: model_control: explicit and
//                                                  `Authorization: Bearer <token>` when an
//                                                  admin token is configured
// Errors are {"error": "<message>"} with Triton's status codes (json_codec.h's HttpStatusOf);
// a body over server.max_message_bytes gets 413.
//
// Threads: libmicrohttpd's internal epoll polling on a pool of kThreads threads. An /infer
// request is parsed on a pool thread, its connection suspended and the request handed to the
// model's worker (SubmitInfer); the worker's answer resumes the connection, so a pool thread never
// waits for a model. Loads and unloads run on a thread of their own for the same reason. Binary
// outputs are sent straight from the output leases (MHD_create_response_from_iovec; the free
// callback drops the leases), JSON outputs are written from them with RapidJSON.
//
// Shutdown stops accepting connections, waits for in-flight requests up to the drain timeout,
// cancels the rest, then stops the daemon.
//
// Thread-safe.
#ifndef INFERD_SERVER_HTTP_HTTP_SERVER_H_
#define INFERD_SERVER_HTTP_HTTP_SERVER_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/config.h"
#include "server/model_repository.h"

namespace inferd::server::http {

class HttpServer {
 public:
  // MHD's thread pool: enough to parse requests and write responses while models run on their
  // own workers (a pool thread never blocks on a model, a load or an unload).
  static constexpr int kThreads = 4;
  // At most this many open connections (more are refused at accept).
  static constexpr unsigned kConnectionLimit = 1024;
  // An idle connection (keep-alive, or a client that stalls mid-request) is closed after this.
  static constexpr int kConnectionTimeoutSeconds = 60;

  // Listens on config.http_address (port 0: a free one, see port()). `ready`: the server's
  // readiness (/v2/health/ready). `repository` must outlive the server.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(const ServerConfig& config,
                                                           ModelRepository& repository,
                                                           std::function<bool()> ready);
  ~HttpServer();  // Shutdown(0) if still running
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const;
  // Stops accepting; in-flight requests get at most `drain_timeout`, then are cancelled; then the
  // listener stops. Idempotent.
  void Shutdown(absl::Duration drain_timeout);

  class Impl;

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace inferd::server::http

#endif  // INFERD_SERVER_HTTP_HTTP_SERVER_H_

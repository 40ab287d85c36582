#include "server/http/http_server.h"

#include <microhttpd.h>
#include <netdb.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/message_text.h"
#include "server/admin_auth.h"
#include "server/background_threads.h"
#include "server/config_values.h"
#include "server/http/json_codec.h"
#include "server/infer_job.h"
#include "server/triton_views.h"
#include "server/version.h"

namespace inferd::server::http {
namespace {

// What a request is answered with when it is answered on the pool thread.
struct Reply {
  int status = 200;
  std::string body;
};

Reply ErrorReply(const absl::Status& status) {
  return {HttpStatusOf(status.code()), ErrorJson(status.message())};
}

MHD_Response* JsonResponse(const std::string& body) {
  MHD_Response* r = MHD_create_response_from_buffer(body.size(), const_cast<char*>(body.data()),
                                                    MHD_RESPMEM_MUST_COPY);
  if (r != nullptr && !body.empty()) {
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
  }
  return r;
}

// Counts the requests answered off the pool (infer, load, unload) from their suspension until
// their response has been sent (MHD's completed callback), for Shutdown's drain.
struct InFlight {
  std::mutex mu;
  std::condition_variable cv;
  int count = 0;
};

// A suspended request: answered later by another thread (a model's worker, a load thread).
// `mu` orders Finish (which resumes the connection) after the suspend and before the daemon's
// stop: Shutdown clears `alive` under it once it will no longer wait.
class Pending {
 public:
  ~Pending() {
    if (response_ != nullptr) MHD_destroy_response(response_);
  }
  explicit Pending(MHD_Connection* connection) : connection_(connection) {}

  // Suspends the connection unless Finish already ran (a request refused at once); returns the
  // response to queue now in that case.
  MHD_Response* SuspendOrTake(int* status) {
    std::lock_guard<std::mutex> lock(mu_);
    if (response_ != nullptr) return Take(status);
    MHD_suspend_connection(connection_);
    suspended_ = true;
    return nullptr;
  }

  // After the resume: the response.
  MHD_Response* Take(int* status) {
    MHD_Response* r = response_;
    response_ = nullptr;
    *status = status_;
    return r;
  }
  MHD_Response* TakeLocked(int* status) {
    std::lock_guard<std::mutex> lock(mu_);
    return Take(status);
  }

  // Exactly once: the answer (null: the daemon could not make a response; MHD then closes).
  void Finish(int status, MHD_Response* response) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!alive_) {
        if (response != nullptr) MHD_destroy_response(response);
      } else {
        if (response == nullptr) response = JsonResponse(ErrorJson("cannot make the response"));
        response_ = response;
        status_ = status;
        answered_ = true;
        if (suspended_) MHD_resume_connection(connection_);
      }
    }
  }
  void Finish(const Reply& reply) { Finish(reply.status, JsonResponse(reply.body)); }

  bool answered() {
    std::lock_guard<std::mutex> lock(mu_);
    return answered_;
  }
  // The connection is gone (the request completed or the daemon stops): Finish only frees.
  void Detach() {
    std::lock_guard<std::mutex> lock(mu_);
    alive_ = false;
    if (response_ != nullptr) MHD_destroy_response(response_);
    response_ = nullptr;
  }
  void Cancel() { cancelled_.store(true); }
  bool cancelled() const { return cancelled_.load(); }

 private:
  MHD_Connection* const connection_;
  std::atomic<bool> cancelled_{false};
  std::mutex mu_;
  // Protected by mu_.
  MHD_Response* response_ = nullptr;
  int status_ = 0;
  bool suspended_ = false;
  bool answered_ = false;
  bool alive_ = true;
};

// One HTTP request, from its first header to the completed callback (MHD's con_cls).
struct Call {
  std::string method;
  std::string url;
  std::shared_ptr<std::string> body = std::make_shared<std::string>();
  bool too_large = false;
  std::shared_ptr<Pending> pending;
};

// The bytes of a binary infer response: the JSON header and the leased outputs, kept until MHD
// has sent them (its free callback deletes this, which returns the leases).
struct BinaryBody {
  std::string json;
  InferResult result;
  std::vector<MHD_IoVec> iov;

  static void Free(void* cls) {
    auto* body = static_cast<BinaryBody*>(cls);
    std::function<void()> released = std::move(body->result.on_released);
    delete body;  // drops the leases: the buffers go back to their arenas
    if (released) released();
  }
};

// Builds the response to a successful /infer.
std::pair<int, MHD_Response*> InferResponse(InferResult result, const ParsedInfer& options) {
  absl::StatusOr<EncodedInfer> encoded = EncodeInferResponse(result, options);
  if (!encoded.ok() || encoded->binary.empty()) {
    std::function<void()> released = std::move(result.on_released);
    result.outputs.clear();  // JSON: the bytes have been written out of the leases
    if (released) released();
    if (!encoded.ok()) {
      return {HttpStatusOf(encoded.status().code()),
              JsonResponse(ErrorJson(encoded.status().message()))};
    }
    MHD_Response* r = JsonResponse(encoded->json);
    if (r != nullptr && encoded->binary_bytes == 0 && encoded->json.size() > 0) {
      // Every binary output was empty: still announce the header length, as Triton does.
      for (const auto& [name, binary] : options.output_binary) {
        if (binary) {
          MHD_add_response_header(r, "Inference-Header-Content-Length",
                                  std::to_string(encoded->json.size()).c_str());
          break;
        }
      }
    }
    return {200, r};
  }
  auto* body = new BinaryBody{std::move(encoded->json), std::move(result), {}};
  body->iov.push_back({body->json.data(), body->json.size()});
  for (absl::Span<const uint8_t> b : encoded->binary) body->iov.push_back({b.data(), b.size()});
  MHD_Response* r = MHD_create_response_from_iovec(
      body->iov.data(), static_cast<unsigned int>(body->iov.size()), &BinaryBody::Free, body);
  if (r == nullptr) {
    BinaryBody::Free(body);
    return {500, nullptr};
  }
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/octet-stream");
  MHD_add_response_header(r, "Inference-Header-Content-Length",
                          std::to_string(body->json.size()).c_str());
  return {200, r};
}

// HTTP's side of an /infer request (server/infer_job.h).
class HttpResponder final : public InferResponder {
 public:
  HttpResponder(std::shared_ptr<Pending> pending, ParsedInfer options, absl::Time deadline)
      : pending_(std::move(pending)), options_(std::move(options)), deadline_(deadline) {}

  bool Cancelled() const override { return pending_->cancelled(); }
  absl::Time deadline() const override { return deadline_; }
  void Respond(const absl::Status& status, InferResult result) override {
    if (!status.ok()) {
      pending_->Finish(ErrorReply(status));
      return;
    }
    auto [code, response] = InferResponse(std::move(result), options_);
    pending_->Finish(code, response);
  }

 private:
  const std::shared_ptr<Pending> pending_;
  const ParsedInfer options_;
  const absl::Time deadline_;
};

// A TLS certificate or key file, whole.
absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Header(MHD_Connection* c, const char* name) {
  const char* v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
  return v == nullptr ? std::string() : std::string(v);
}

// The model named by a path: /v2/models/<m>[/versions/<v>][/<action>].
struct ModelPath {
  std::string name;
  std::string version;
  std::string action;  // "" (metadata), ready, infer, config, stats
};

std::optional<ModelPath> ParseModelPath(const std::vector<std::string>& parts) {
  // parts: "v2", "models", <m>, ...
  ModelPath p;
  p.name = parts[2];
  size_t i = 3;
  if (parts.size() > i + 1 && parts[i] == "versions") {
    p.version = parts[i + 1];
    i += 2;
  }
  if (parts.size() == i + 1) {
    p.action = parts[i];
  } else if (parts.size() != i) {
    return std::nullopt;
  }
  return p;
}

}  // namespace

class HttpServer::Impl {
 public:
  Impl(const ServerConfig& config, ModelRepository& repository, std::function<bool()> ready)
      : config_(config),
        repository_(repository),
        ready_(std::move(ready)),
        in_flight_(std::make_shared<InFlight>()) {}
  ~Impl() { Stop(absl::ZeroDuration()); }

  absl::Status Start();
  int port() const { return port_; }
  void Stop(absl::Duration drain_timeout);

 private:
  static MHD_Result Access(void* cls, MHD_Connection* c, const char* url, const char* method,
                           const char* version, const char* upload, size_t* upload_size,
                           void** con_cls);
  static void Completed(void* cls, MHD_Connection* c, void** con_cls,
                        MHD_RequestTerminationCode why);
  static void Log(void* cls, const char* format, va_list args);

  MHD_Result Handle(MHD_Connection* c, Call& call);
  // Answers now (a Reply) or suspends the connection (nullopt: `call.pending` answers it).
  std::optional<Reply> Route(MHD_Connection* c, Call& call);
  std::optional<Reply> RouteModel(MHD_Connection* c, Call& call, const ModelPath& path);
  std::optional<Reply> Infer(MHD_Connection* c, Call& call, const ModelPath& path);
  std::optional<Reply> LoadOrUnload(MHD_Connection* c, Call& call, const std::string& name,
                                    bool load);
  Reply RepositoryIndex(const Call& call);
  Reply ModelReady(const ModelPath& path);
  // The request's Pending, counted for the drain; null once Stop has begun.
  std::shared_ptr<Pending> NewPending(MHD_Connection* c, Call& call);

  const ServerConfig config_;
  ModelRepository& repository_;
  const std::function<bool()> ready_;
  const std::shared_ptr<InFlight> in_flight_;
  MHD_Daemon* daemon_ = nullptr;
  int port_ = 0;
  std::string tls_cert_;
  std::string tls_key_;

  std::mutex mu_;
  // Protected by mu_.
  std::set<std::shared_ptr<Pending>> pending_;  // suspended or about to be
  bool stopped_ = false;
  BackgroundThreads background_;  // loads and unloads, joined by Stop
};

void HttpServer::Impl::Log(void*, const char* format, va_list args) {
  char line[512];
  std::vsnprintf(line, sizeof(line), format, args);
  std::string text(line);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  spdlog::warn("http: {}", text);
}

absl::Status HttpServer::Impl::Start() {
  absl::StatusOr<Address> address = ParseAddress(config_.http_address, /*allow_unix=*/false);
  if (!address.ok()) return address.status();
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(address->port);
  if (int err = getaddrinfo(address->host.c_str(), service.c_str(), &hints, &found); err != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", config_.http_address, ": ", gai_strerror(err)));
  }
  sockaddr_storage addr{};
  std::memcpy(&addr, found->ai_addr, found->ai_addrlen);
  const bool v6 = found->ai_family == AF_INET6;
  freeaddrinfo(found);

  // MHD_USE_ITC: MHD_quiesce_daemon (Shutdown) needs it with a thread pool.
  unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
                       MHD_USE_ITC | MHD_USE_ERROR_LOG;
  if (v6) flags |= MHD_USE_IPv6;
  std::vector<MHD_OptionItem> options = {
      {MHD_OPTION_EXTERNAL_LOGGER, reinterpret_cast<intptr_t>(&Impl::Log), this},  // first
      {MHD_OPTION_SOCK_ADDR, 0, &addr},
      {MHD_OPTION_THREAD_POOL_SIZE, kThreads, nullptr},
      {MHD_OPTION_CONNECTION_LIMIT, kConnectionLimit, nullptr},
      {MHD_OPTION_CONNECTION_TIMEOUT, kConnectionTimeoutSeconds, nullptr},
      {MHD_OPTION_NOTIFY_COMPLETED, reinterpret_cast<intptr_t>(&Impl::Completed), this},
  };
  if (config_.tls) {
    if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
      return absl::FailedPreconditionError(
          "tls is configured but this libmicrohttpd has no TLS: set server.http_address: none");
    }
    absl::StatusOr<std::string> cert = ReadFile(config_.tls->cert_file);
    if (!cert.ok()) return cert.status();
    absl::StatusOr<std::string> key = ReadFile(config_.tls->key_file);
    if (!key.ok()) return key.status();
    tls_cert_ = *std::move(cert);
    tls_key_ = *std::move(key);
    flags |= MHD_USE_TLS;
    options.push_back({MHD_OPTION_HTTPS_MEM_CERT, 0, tls_cert_.data()});
    options.push_back({MHD_OPTION_HTTPS_MEM_KEY, 0, tls_key_.data()});
  }
  options.push_back({MHD_OPTION_END, 0, nullptr});
  daemon_ = MHD_start_daemon(flags, 0, nullptr, nullptr, &Impl::Access, this, MHD_OPTION_ARRAY,
                             options.data(), MHD_OPTION_END);
  if (daemon_ == nullptr) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", config_.http_address,
                                               ": address in use, not an address of this host, "
                                               "or not allowed to bind it"));
  }
  const MHD_DaemonInfo* info = MHD_get_daemon_info(daemon_, MHD_DAEMON_INFO_BIND_PORT);
  port_ = info != nullptr ? info->port : 0;
  return absl::OkStatus();
}

void HttpServer::Impl::Stop(absl::Duration drain_timeout) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  if (daemon_ == nullptr) return;
  // No new connections. The listening socket is ours from here on (MHD no longer closes it): it
  // stays bound until the daemon has stopped, so no one else takes the port mid-drain.
  const MHD_socket listener = MHD_quiesce_daemon(daemon_);
  {
    std::unique_lock<std::mutex> lock(in_flight_->mu);
    in_flight_->cv.wait_for(lock, absl::ToChronoMilliseconds(drain_timeout),
                            [this] { return in_flight_->count == 0; });
  }
  std::set<std::shared_ptr<Pending>> pending;
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending.swap(pending_);
  }
  // Past the drain: the workers drop what has not run yet (Cancelled) and answer at once; a
  // second, short wait lets those answers go out.
  for (const auto& p : pending) p->Cancel();
  {
    std::unique_lock<std::mutex> lock(in_flight_->mu);
    in_flight_->cv.wait_for(lock, std::chrono::seconds(1),
                            [this] { return in_flight_->count == 0; });
  }
  // No resume may reach the daemon from here on: a late answer only frees its response.
  for (const auto& p : pending) p->Detach();
  MHD_stop_daemon(daemon_);
  daemon_ = nullptr;
  if (listener != MHD_INVALID_SOCKET) close(listener);
  background_.JoinAll();
}

std::shared_ptr<Pending> HttpServer::Impl::NewPending(MHD_Connection* c, Call& call) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopped_) return nullptr;  // draining: Stop no longer tracks new requests
  call.pending = std::make_shared<Pending>(c);
  pending_.insert(call.pending);
  std::lock_guard<std::mutex> count_lock(in_flight_->mu);
  ++in_flight_->count;
  return call.pending;
}

MHD_Result HttpServer::Impl::Access(void* cls, MHD_Connection* c, const char* url,
                                    const char* method, const char*, const char* upload,
                                    size_t* upload_size, void** con_cls) {
  auto* self = static_cast<Impl*>(cls);
  auto* call = static_cast<Call*>(*con_cls);
  if (call == nullptr) {  // the headers have arrived
    call = new Call{method, url};
    *con_cls = call;
    uint64_t length = 0;
    const std::string declared = Header(c, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (!declared.empty() && absl::SimpleAtoi(declared, &length)) {
      if (length > self->config_.max_message_bytes) {
        call->too_large = true;
        return self->Handle(c, *call);  // answered before the body: MHD then closes
      } else {
        // Up front only up to 64 MiB: a client's claim alone does not reserve more.
        call->body->reserve(std::min<uint64_t>(length, uint64_t{64} << 20));
      }
    }
    return MHD_YES;
  }
  if (*upload_size > 0) {
    if (!call->too_large && call->body->size() + *upload_size > self->config_.max_message_bytes) {
      call->too_large = true;
      call->body->clear();
      call->body->shrink_to_fit();
    }
    if (!call->too_large) call->body->append(upload, *upload_size);
    *upload_size = 0;
    return MHD_YES;
  }
  return self->Handle(c, *call);
}

void HttpServer::Impl::Completed(void* cls, MHD_Connection*, void** con_cls,
                                 MHD_RequestTerminationCode) {
  auto* call = static_cast<Call*>(*con_cls);
  if (call == nullptr) return;
  if (call->pending != nullptr) {
    call->pending->Cancel();  // the client is gone, or the daemon stops
    call->pending->Detach();
    InFlight& in_flight = *static_cast<Impl*>(cls)->in_flight_;
    std::lock_guard<std::mutex> lock(in_flight.mu);
    --in_flight.count;
    in_flight.cv.notify_all();
  }
  delete call;
  *con_cls = nullptr;
}

MHD_Result HttpServer::Impl::Handle(MHD_Connection* c, Call& call) {
  int status = 0;
  MHD_Response* response = nullptr;
  if (call.pending != nullptr) {  // resumed: the answer is in
    response = call.pending->TakeLocked(&status);
    {
      std::lock_guard<std::mutex> lock(mu_);
      pending_.erase(call.pending);
    }
  } else if (call.too_large) {
    const Reply r{413, ErrorJson(absl::StrCat("the request body is larger than "
                                              "server.max_message_bytes (",
                                              config_.max_message_bytes, " bytes)"))};
    status = r.status;
    response = JsonResponse(r.body);
  } else {
    std::optional<Reply> reply = Route(c, call);
    if (!reply) {
      response = call.pending->SuspendOrTake(&status);
      if (response == nullptr) return MHD_YES;  // suspended; Finish resumes it
      std::lock_guard<std::mutex> lock(mu_);
      pending_.erase(call.pending);
    } else {
      status = reply->status;
      response = JsonResponse(reply->body);
    }
  }
  if (response == nullptr) return MHD_NO;
  spdlog::debug("http {} {}: {}", call.method, QuoteForMessage(call.url), status);
  const MHD_Result queued = MHD_queue_response(c, static_cast<unsigned int>(status), response);
  MHD_destroy_response(response);
  return queued;
}

std::optional<Reply> HttpServer::Impl::Route(MHD_Connection* c, Call& call) {
  std::vector<std::string> parts = absl::StrSplit(call.url, '/', absl::SkipEmpty());
  const bool get = call.method == MHD_HTTP_METHOD_GET;
  const bool post = call.method == MHD_HTTP_METHOD_POST;
  const Reply wrong_method{
      405, ErrorJson(absl::StrCat(call.method, " is not allowed on ", QuoteForMessage(call.url)))};
  const Reply unknown{404, ErrorJson(absl::StrCat("unknown path ", QuoteForMessage(call.url)))};
  if (parts.empty() || parts[0] != "v2") return unknown;
  if (parts.size() == 1) {
    if (!get) return wrong_method;
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    w.StartObject();
    w.Key("name");
    w.String(kInferdName);
    w.Key("version");
    w.String(kInferdVersion);
    w.Key("extensions");
    w.StartArray();
    for (const std::string& e : ServerExtensions(Transport::kHttp)) w.String(e.c_str());
    w.EndArray();
    w.EndObject();
    return Reply{200, buffer.GetString()};
  }
  if (parts[1] == "health" && parts.size() == 3) {
    if (!get) return wrong_method;
    if (parts[2] == "live") return Reply{200, ""};
    if (parts[2] == "ready") return Reply{ready_() ? 200 : 400, ""};
    return unknown;
  }
  if (parts[1] == "models" && parts.size() == 3 && parts[2] == "stats") {
    if (!get) return wrong_method;
    absl::StatusOr<inference::ModelStatisticsResponse> stats =
        ModelStatisticsOf(repository_, "", "");
    if (!stats.ok()) return ErrorReply(stats.status());
    return Reply{200, ProtoToJson(*stats)};
  }
  if (parts[1] == "models" && parts.size() >= 3) {
    std::optional<ModelPath> path = ParseModelPath(parts);
    if (!path) return unknown;
    const bool wants_post = path->action == "infer";
    if (wants_post ? !post : !get) return wrong_method;
    return RouteModel(c, call, *path);
  }
  if (parts[1] == "repository") {
    if (!post) return wrong_method;
    if (parts.size() == 3 && parts[2] == "index") return RepositoryIndex(call);
    if (parts.size() == 5 && parts[2] == "models" && (parts[4] == "load" || parts[4] == "unload")) {
      return LoadOrUnload(c, call, parts[3], parts[4] == "load");
    }
  }
  return unknown;
}

std::optional<Reply> HttpServer::Impl::RouteModel(MHD_Connection* c, Call& call,
                                                  const ModelPath& path) {
  if (path.action == "infer") return Infer(c, call, path);
  if (path.action == "ready") return ModelReady(path);
  if (path.action.empty()) {
    absl::StatusOr<inference::ModelMetadataResponse> m =
        ModelMetadataOf(repository_, path.name, path.version);
    if (!m.ok()) return ErrorReply(m.status());
    return Reply{200, ProtoToJson(*m)};
  }
  if (path.action == "config") {
    absl::StatusOr<inference::ModelConfig> m = ModelConfigOf(repository_, path.name, path.version);
    if (!m.ok()) return ErrorReply(m.status());
    return Reply{200, ProtoToJson(*m)};
  }
  if (path.action == "stats") {
    absl::StatusOr<inference::ModelStatisticsResponse> m =
        ModelStatisticsOf(repository_, path.name, path.version);
    if (!m.ok()) return ErrorReply(m.status());
    return Reply{200, ProtoToJson(*m)};
  }
  return Reply{404, ErrorJson(absl::StrCat("unknown path ", QuoteForMessage(call.url)))};
}

Reply HttpServer::Impl::ModelReady(const ModelPath& path) {
  absl::StatusOr<std::shared_ptr<LoadedModel>> model =
      FindModelVersion(repository_, path.name, path.version);
  if (!model.ok()) return ErrorReply(model.status());
  return Reply{(*model)->state() == ModelState::kReady ? 200 : 400, ""};
}

std::optional<Reply> HttpServer::Impl::Infer(MHD_Connection* c, Call& call, const ModelPath& path) {
  const absl::Time received = absl::Now();
  if (absl::Status valid = ValidateModelName(path.name); !valid.ok()) return ErrorReply(valid);
  const std::string encoding = Header(c, MHD_HTTP_HEADER_CONTENT_ENCODING);
  if (!encoding.empty() && encoding != "identity") {
    return Reply{415, ErrorJson(absl::StrCat("Content-Encoding ", QuoteForMessage(encoding),
                                             " is not supported; send the body uncompressed"))};
  }
  std::optional<uint64_t> header_length;
  if (const std::string h = Header(c, "Inference-Header-Content-Length"); !h.empty()) {
    uint64_t n = 0;
    if (!absl::SimpleAtoi(h, &n)) {
      return ErrorReply(absl::InvalidArgumentError(absl::StrCat(
          "Inference-Header-Content-Length ", QuoteForMessage(h), " is not a byte count")));
    }
    header_length = n;
  }
  absl::StatusOr<ParsedInfer> parsed =
      ParseInferRequest(path.name, path.version, call.body, header_length);
  if (!parsed.ok()) return ErrorReply(parsed.status());
  call.body.reset();  // the request holds the body now
  std::unique_ptr<InferRequest> request = std::move(parsed->request);
  const absl::Time deadline =
      parsed->timeout ? received + *parsed->timeout : absl::InfiniteFuture();
  std::shared_ptr<Pending> pending = NewPending(c, call);
  if (pending == nullptr) return ErrorReply(absl::UnavailableError("the server is shutting down"));
  SubmitInfer(repository_, std::move(request),
              std::make_unique<HttpResponder>(pending, *std::move(parsed), deadline), received);
  return std::nullopt;
}

Reply HttpServer::Impl::RepositoryIndex(const Call& call) {
  bool ready_only = false;
  if (!call.body->empty()) {
    rapidjson::Document doc;
    doc.Parse(call.body->data(), call.body->size());
    if (doc.HasParseError() || !doc.IsObject()) {
      return ErrorReply(absl::InvalidArgumentError("the index request is not a JSON object"));
    }
    if (auto it = doc.FindMember("ready"); it != doc.MemberEnd()) {
      if (!it->value.IsBool()) return ErrorReply(absl::InvalidArgumentError("ready is a bool"));
      ready_only = it->value.GetBool();
    }
  }
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartArray();
  for (const ModelRepository::IndexEntry& e : repository_.Index()) {
    if (ready_only && e.state != ModelState::kReady) continue;
    w.StartObject();
    w.Key("name");
    w.String(e.name.c_str());
    w.Key("version");
    w.String(e.version.c_str());
    w.Key("state");
    w.String(ModelStateName(e.state));
    w.Key("reason");
    w.String(e.reason.c_str());
    w.EndObject();
  }
  w.EndArray();
  return Reply{200, buffer.GetString()};
}

std::optional<Reply> HttpServer::Impl::LoadOrUnload(MHD_Connection* c, Call& call,
                                                    const std::string& name, bool load) {
  const char* method = load ? "RepositoryModelLoad" : "RepositoryModelUnload";
  // The gRPC rule (admin_auth.h's CheckModelControlAccess), then the name.
  const std::string authorization = Header(c, MHD_HTTP_HEADER_AUTHORIZATION);
  AdminAuth::Metadata metadata;
  if (!authorization.empty()) metadata.emplace("authorization", authorization);
  if (absl::Status access =
          CheckModelControlAccess(config_, metadata, absl::StrCat("HTTP ", method), "HTTP");
      !access.ok()) {
    return ErrorReply(access);
  }
  if (absl::Status valid = ValidateModelName(name); !valid.ok()) return ErrorReply(valid);
  if (load && !call.body->empty()) {
    rapidjson::Document doc;
    doc.Parse(call.body->data(), call.body->size());
    if (doc.HasParseError() || !doc.IsObject()) {
      return ErrorReply(absl::InvalidArgumentError("the load request is not a JSON object"));
    }
    if (auto it = doc.FindMember("parameters");
        it != doc.MemberEnd() && !(it->value.IsObject() && it->value.ObjectEmpty())) {
      return ErrorReply(absl::InvalidArgumentError(
          "load parameters are not supported; put the model's settings in "
          "<repository>/<model>/config.yaml"));
    }
  }
  spdlog::info("HTTP {} '{}'", method, name);
  std::shared_ptr<Pending> pending = NewPending(c, call);
  if (pending == nullptr) return ErrorReply(absl::UnavailableError("the server is shutting down"));
  background_.Run([this, pending, name, load] {
    const absl::Status s = load ? repository_.Load(name) : repository_.Unload(name);
    pending->Finish(s.ok() ? Reply{200, ""} : ErrorReply(s));
  });
  return std::nullopt;
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpServer::~HttpServer() = default;

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(const ServerConfig& config,
                                                              ModelRepository& repository,
                                                              std::function<bool()> ready) {
  auto impl = std::make_unique<Impl>(config, repository, std::move(ready));
  if (absl::Status s = impl->Start(); !s.ok()) return s;
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

int HttpServer::port() const { return impl_->port(); }

void HttpServer::Shutdown(absl::Duration drain_timeout) { impl_->Stop(drain_timeout); }

}  // namespace inferd::server::http

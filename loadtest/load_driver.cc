#include "loadtest/load_driver.h"

#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"

namespace inferd::loadtest {
namespace {

constexpr size_t kErrorSamples = 5;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double CpuSeconds() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

}  // namespace

std::string StatusCodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::OK:
      return "OK";
    case grpc::CANCELLED:
      return "CANCELLED";
    case grpc::UNKNOWN:
      return "UNKNOWN";
    case grpc::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    case grpc::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::ABORTED:
      return "ABORTED";
    case grpc::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::INTERNAL:
      return "INTERNAL";
    case grpc::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::DATA_LOSS:
      return "DATA_LOSS";
    default:
      return absl::StrCat("CODE_", static_cast<int>(code));
  }
}

// The state of one Run.
class LoadDriver::Phase {
 public:
  Phase(LoadDriver& driver, int64_t requests, absl::Duration duration, int64_t first_index)
      : d_(driver),
        limit_(requests),
        duration_ns_(absl::ToInt64Nanoseconds(duration)),
        first_index_(first_index) {}

  PhaseResult Run() {
    const double cpu0 = CpuSeconds();
    t0_ns_ = NowNs();
    deadline_ns_ = t0_ns_ + duration_ns_;
    if (d_.options_.rate > 0) {
      RunOpenLoop();
    } else {
      RunClosedLoop();
    }
    std::unique_lock<std::mutex> lock(mu_);
    result_.latency = recorder_.Summarize();
    result_.wall_s = (std::max(last_done_ns_, t0_ns_) - t0_ns_) / 1e9;
    result_.client_cpu_s = CpuSeconds() - cpu0;
    result_.stopped_on_errors = stop_.load();
    return result_;
  }

 private:
  struct Call {
    std::unique_ptr<grpc::ClientContext> context;
    grpc::ByteBuffer request;
    grpc::ByteBuffer response;
    int64_t index = 0;
    size_t template_index = 0;
    int64_t start_ns = 0;  // closed loop: the send; open loop: the intended send
    int stream = 0;
  };

  void RunClosedLoop() {
    const int streams = std::max(1, d_.options_.concurrency);
    {
      std::lock_guard<std::mutex> lock(mu_);
      running_ = streams;
    }
    for (int s = 0; s < streams; ++s) {
      int64_t index;
      if (!Claim(&index)) {
        StreamDone();
        continue;
      }
      auto* c = new Call;
      c->stream = s;
      c->index = index;
      Start(c);
    }
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return running_ == 0; });
  }

  void RunOpenLoop() {
    const double period_ns = 1e9 / d_.options_.rate;
    for (int64_t i = 0; i < limit_ && !stop_.load(); ++i) {
      const int64_t intended = t0_ns_ + static_cast<int64_t>(i * period_ns);
      if (intended >= deadline_ns_) break;
      const int64_t now = NowNs();
      if (intended > now) std::this_thread::sleep_for(std::chrono::nanoseconds(intended - now));
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock,
                 [this] { return outstanding_ < d_.options_.max_outstanding || stop_.load(); });
        if (stop_.load()) break;
        ++outstanding_;
      }
      auto* c = new Call;
      c->index = i;
      c->stream = static_cast<int>(i % d_.stubs_.size());
      c->start_ns = intended;
      Start(c);
    }
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return outstanding_ == 0; });
  }

  bool Claim(int64_t* index) {
    if (stop_.load() || NowNs() >= deadline_ns_) return false;
    *index = next_.fetch_add(1);
    return *index < limit_;
  }

  void Start(Call* c) {
    c->context = std::make_unique<grpc::ClientContext>();
    c->context->set_deadline(std::chrono::system_clock::now() +
                             absl::ToChronoNanoseconds(d_.options_.timeout));
    c->template_index = static_cast<size_t>((first_index_ + c->index) % d_.templates_.size());
    c->request = d_.templates_[c->template_index].wire;  // slice references
    c->response.Clear();
    if (d_.options_.rate <= 0) c->start_ns = NowNs();
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++result_.sent;
    }
    grpc::GenericStub& stub = *d_.stubs_[c->stream % d_.stubs_.size()];
    stub.UnaryCall(c->context.get(), d_.options_.method, grpc::StubOptions(), &c->request,
                   &c->response, [this, c](grpc::Status status) { OnDone(c, status); });
  }

  void OnDone(Call* c, const grpc::Status& status) {
    const int64_t end = NowNs();
    if (d_.options_.slow_read > absl::ZeroDuration()) {
      std::this_thread::sleep_for(absl::ToChronoNanoseconds(d_.options_.slow_read));
    }
    std::string error_code, error_message;
    if (!status.ok()) {
      error_code = StatusCodeName(status.error_code());
      error_message = absl::StrCat(error_code, ": ", status.error_message());
    } else if (d_.verifier_ != nullptr) {
      absl::Status v = d_.verifier_->Check(c->template_index, c->response);
      if (!v.ok()) {
        error_code = "VERIFY_FAILED";
        error_message = absl::StrCat("VERIFY_FAILED (request ", c->index, ", ",
                                     d_.templates_[c->template_index].label, "): ", v.message());
      }
    }
    const uint64_t response_bytes = c->response.Length();
    c->response.Clear();
    c->request.Clear();
    {
      std::lock_guard<std::mutex> lock(mu_);
      last_done_ns_ = std::max(last_done_ns_, end);
      if (error_code.empty()) {
        ++result_.ok;
        recorder_.Add(end - c->start_ns);
        result_.request_payload_bytes += d_.templates_[c->template_index].payload_bytes;
        result_.response_payload_bytes += response_bytes;
      } else {
        ++result_.failed;
        ++result_.errors[error_code];
        if (result_.error_samples.size() < kErrorSamples) {
          result_.error_samples.push_back(error_message);
        }
        if (result_.failed >= d_.options_.max_errors) stop_.store(true);
      }
    }
    if (d_.options_.rate > 0) {
      delete c;
      std::lock_guard<std::mutex> lock(mu_);
      --outstanding_;
      cv_.notify_all();
      return;
    }
    int64_t index;
    if (Claim(&index)) {
      c->index = index;
      Start(c);  // from gRPC's callback: allowed by the callback API
      return;
    }
    delete c;
    StreamDone();
  }

  void StreamDone() {
    std::lock_guard<std::mutex> lock(mu_);
    if (--running_ == 0) cv_.notify_all();
  }

  LoadDriver& d_;
  // Constant during the run.
  const int64_t limit_;
  const int64_t duration_ns_;
  const int64_t first_index_;
  int64_t t0_ns_ = 0;
  int64_t deadline_ns_ = 0;

  std::atomic<int64_t> next_{0};
  std::atomic<bool> stop_{false};

  std::mutex mu_;
  // State below is protected by mu_.
  std::condition_variable cv_;
  int running_ = 0;          // closed loop: streams still sending
  int64_t outstanding_ = 0;  // open loop: calls in flight
  int64_t last_done_ns_ = 0;
  LatencyRecorder recorder_;
  PhaseResult result_;
};

LoadDriver::LoadDriver(std::vector<std::shared_ptr<grpc::Channel>> channels,
                       const std::vector<RequestTemplate>& templates, Verifier* verifier,
                       DriverOptions options)
    : templates_(templates), verifier_(verifier), options_(std::move(options)) {
  for (auto& ch : channels) stubs_.push_back(std::make_unique<grpc::GenericStub>(ch));
}

LoadDriver::~LoadDriver() = default;

PhaseResult LoadDriver::Run(int64_t requests, absl::Duration duration, int64_t first_index) {
  if (requests <= 0 || templates_.empty() || stubs_.empty()) return PhaseResult{};
  Phase phase(*this, requests, duration, first_index);
  return phase.Run();
}

}  // namespace inferd::loadtest

#include "server/metrics.h"

#include <prometheus/exposer.h>
#include <prometheus/text_serializer.h>

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <exception>
#include <limits>
#include <sstream>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "memory/arena.h"
#include "partition/plan_report.h"
#include "server/arena_selection.h"

namespace inferd::server {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = std::vector<ClientMetric::Label>;

constexpr double kInf = std::numeric_limits<double>::infinity();

// civetweb serves a connection on one thread until its request is read and answered: with 2
// threads, two idle connections (a half-open scraper, a port scan) stalled every scrape for
// civetweb's default 30 s request timeout. Enough threads for a few stray connections, and a
// short timeout for the rest: a client that has not sent its request within it is dropped
// (a scrape sends it at once).
constexpr int kExporterThreads = 8;
constexpr absl::Duration kRequestTimeout = absl::Seconds(2);

// Families in a fixed order; Take() drops the ones without samples.
class Builder {
 public:
  int Family(const char* name, const char* help, MetricType type) {
    families_.push_back(MetricFamily{name, help, type, {}});
    return static_cast<int>(families_.size()) - 1;
  }

  void Add(int family, Labels labels, double value) {
    MetricFamily& f = families_[family];
    ClientMetric m;
    m.label = std::move(labels);
    if (f.type == MetricType::Counter) {
      m.counter.value = value;
    } else {
      m.gauge.value = value;
    }
    f.metric.push_back(std::move(m));
  }

  // A histogram from per-bucket counts (`buckets[i]` for upper bound `bounds[i]`, the last for
  // +Inf).
  void AddBuckets(int family, Labels labels, const std::vector<double>& bounds,
                  const std::vector<uint64_t>& buckets, double sum) {
    ClientMetric m;
    m.label = std::move(labels);
    uint64_t cumulative = 0;
    for (size_t i = 0; i < buckets.size(); ++i) {
      cumulative += buckets[i];
      m.histogram.bucket.push_back(
          ClientMetric::Bucket{cumulative, i < bounds.size() ? bounds[i] : kInf});
    }
    m.histogram.sample_count = cumulative;
    m.histogram.sample_sum = sum;
    families_[family].metric.push_back(std::move(m));
  }

  void AddHistogram(int family, Labels labels, const LatencyHistogram::Snapshot& h) {
    ClientMetric m;
    m.label = std::move(labels);
    uint64_t cumulative = 0;
    for (size_t i = 0; i < h.buckets.size(); ++i) {
      cumulative += h.buckets[i];
      const double bound =
          i < LatencyHistogram::kBoundsSeconds.size() ? LatencyHistogram::kBoundsSeconds[i] : kInf;
      m.histogram.bucket.push_back(ClientMetric::Bucket{cumulative, bound});
    }
    // The count from the buckets, so that it equals the +Inf bucket even when the snapshot was
    // taken during traffic.
    m.histogram.sample_count = cumulative;
    m.histogram.sample_sum = h.sum_seconds;
    families_[family].metric.push_back(std::move(m));
  }

  std::vector<MetricFamily> Take() {
    std::vector<MetricFamily> out;
    for (MetricFamily& f : families_) {
      if (!f.metric.empty()) out.push_back(std::move(f));
    }
    return out;
  }

 private:
  std::vector<MetricFamily> families_;
};

double Bytes(uint64_t v) { return v == memory::Arena::kUnbounded ? kInf : static_cast<double>(v); }

struct ArenaMetric {
  const char* name;
  const char* help;
  MetricType type;
  uint64_t memory::ArenaStats::*field;
};

constexpr ArenaMetric kArenaMetrics[] = {
    {"inferd_arena_live_bytes", "Bytes of arena buffers held by live allocations and leases.",
     MetricType::Gauge, &memory::ArenaStats::live_bytes},
    {"inferd_arena_retained_bytes", "Bytes of arena buffers on the free lists, kept for reuse.",
     MetricType::Gauge, &memory::ArenaStats::retained_bytes},
    {"inferd_arena_peak_live_bytes",
     "Highest live bytes since the arena was created or its peak was reset.", MetricType::Gauge,
     &memory::ArenaStats::peak_live_bytes},
    {"inferd_arena_retention_cap_bytes",
     "Retention cap of the arena's free lists; +Inf when unbounded.", MetricType::Gauge,
     &memory::ArenaStats::retention_cap_bytes},
    {"inferd_arena_live_buffers", "Buffers held by live allocations and leases.", MetricType::Gauge,
     &memory::ArenaStats::live_buffers},
    {"inferd_arena_retained_buffers", "Buffers on the free lists.", MetricType::Gauge,
     &memory::ArenaStats::retained_buffers},
    {"inferd_arena_allocations_total", "Allocations served by the arena.", MetricType::Counter,
     &memory::ArenaStats::allocations},
    {"inferd_arena_reuses_total", "Allocations served from a retained buffer.", MetricType::Counter,
     &memory::ArenaStats::reuses},
    {"inferd_arena_allocation_failures_total", "Allocations refused (resource exhausted).",
     MetricType::Counter, &memory::ArenaStats::allocation_failures},
    {"inferd_arena_system_allocations_total", "Buffers taken from the device's system allocator.",
     MetricType::Counter, &memory::ArenaStats::system_allocations},
    {"inferd_arena_system_frees_total", "Buffers given back to the device's system allocator.",
     MetricType::Counter, &memory::ArenaStats::system_frees},
    {"inferd_arena_evictions_total", "Retained buffers freed because of the retention cap.",
     MetricType::Counter, &memory::ArenaStats::evictions},
    {"inferd_arena_evicted_bytes_total", "Bytes of retained buffers evicted by the retention cap.",
     MetricType::Counter, &memory::ArenaStats::evicted_bytes},
    {"inferd_arena_trims_total", "Trims of the arena (admin Trim calls).", MetricType::Counter,
     &memory::ArenaStats::trims},
    {"inferd_arena_trimmed_bytes_total", "Bytes released to the system by trims.",
     MetricType::Counter, &memory::ArenaStats::trimmed_bytes},
};

constexpr ModelState kStates[] = {ModelState::kLoading, ModelState::kReady, ModelState::kUnloading,
                                  ModelState::kUnavailable};

// The index of every family in the Builder, declared in exposition order.
struct Families {
  int arena[std::size(kArenaMetrics)];
  int leases, state, requests, inferences, rejected, dropped, loads, input_bytes, output_bytes;
  int queue_h, compute_h, serialize_h, request_h;
  int persistent, budget, assigned, nodes;
  int kv_reserved, kv_budget, kv_sequences, kv_refused;  // generative models
  int device_memory;                                     // GPUs {device, state}
  // Triton's per-model counters {model, version} and inferd's batch size histogram {model}.
  int nv_success, nv_failure, nv_count, nv_exec, nv_request_us, nv_queue_us, nv_input_us,
      nv_infer_us, nv_output_us, batch_h;
};

// Triton's names, types and help texts (its docs/user_guide/metrics.md), so that Triton's
// dashboards and alerts read inferd unchanged. Counters without the _total suffix, as Triton.
void DeclareTritonFamilies(Builder& b, Families& f) {
  f.nv_success =
      b.Family("nv_inference_request_success",
               "Number of successful inference requests, all batch sizes", MetricType::Counter);
  f.nv_failure =
      b.Family("nv_inference_request_failure",
               "Number of failed inference requests, all batch sizes", MetricType::Counter);
  f.nv_count = b.Family("nv_inference_count",
                        "Number of inferences performed (does not include cached requests)",
                        MetricType::Counter);
  f.nv_exec = b.Family("nv_inference_exec_count",
                       "Number of model executions performed (does not include cached requests)",
                       MetricType::Counter);
  f.nv_request_us =
      b.Family("nv_inference_request_duration_us",
               "Cumulative inference request duration in microseconds (includes cached requests)",
               MetricType::Counter);
  f.nv_queue_us =
      b.Family("nv_inference_queue_duration_us",
               "Cumulative inference queuing duration in microseconds (includes cached requests)",
               MetricType::Counter);
  f.nv_input_us = b.Family(
      "nv_inference_compute_input_duration_us",
      "Cumulative compute input duration in microseconds (does not include cached requests)",
      MetricType::Counter);
  f.nv_infer_us = b.Family(
      "nv_inference_compute_infer_duration_us",
      "Cumulative compute inference duration in microseconds (does not include cached requests)",
      MetricType::Counter);
  f.nv_output_us = b.Family("nv_inference_compute_output_duration_us",
                            "Cumulative inference compute output duration in microseconds (does "
                            "not include cached requests)",
                            MetricType::Counter);
  f.batch_h = b.Family("inferd_batch_size",
                       "Model runs by the number of requests' batch elements they ran at once.",
                       MetricType::Histogram);
}

Families DeclareFamilies(Builder& b) {
  Families f;
  for (size_t i = 0; i < std::size(kArenaMetrics); ++i) {
    f.arena[i] = b.Family(kArenaMetrics[i].name, kArenaMetrics[i].help, kArenaMetrics[i].type);
  }
  f.leases = b.Family("inferd_io_outstanding_leases",
                      "IO arena buffers pinned by responses in flight.", MetricType::Gauge);
  f.state = b.Family("inferd_model_state", "1 for the model's current state, 0 for the others.",
                     MetricType::Gauge);
  f.requests = b.Family("inferd_requests_total",
                        "ModelInfer requests, by the status code they were answered with.",
                        MetricType::Counter);
  f.inferences = b.Family("inferd_inferences_total", "Successful model runs.", MetricType::Counter);
  f.rejected = b.Family("inferd_queue_rejected_total",
                        "Requests answered RESOURCE_EXHAUSTED because the queue was full.",
                        MetricType::Counter);
  f.dropped = b.Family("inferd_queue_dropped_total",
                       "Queued requests dropped without running (deadline or cancel).",
                       MetricType::Counter);
  f.loads = b.Family("inferd_model_loads_total",
                     "Load attempts of the model by result: ok, refused_budget (the "
                     "partition or pre_allocate plan does not fit the device budgets), "
                     "failed (any other error).",
                     MetricType::Counter);
  f.input_bytes = b.Family(
      "inferd_input_bytes_total",
      "Input bytes, borrowed in place from gRPC's buffer or staged (copied) into the IO arena.",
      MetricType::Counter);
  f.output_bytes =
      b.Family("inferd_output_bytes_total", "Raw output bytes sent (zero-copy from the IO arena).",
               MetricType::Counter);
  f.queue_h =
      b.Family("inferd_queue_duration_seconds",
               "Time from enqueue until a worker takes the request.", MetricType::Histogram);
  f.compute_h =
      b.Family("inferd_compute_duration_seconds", "Time of the model run.", MetricType::Histogram);
  f.serialize_h =
      b.Family("inferd_serialize_duration_seconds",
               "Time from handing the response to gRPC until its last output lease is returned.",
               MetricType::Histogram);
  f.request_h = b.Family("inferd_request_duration_seconds",
                         "Time from receiving the request until the response is handed "
                         "to gRPC.",
                         MetricType::Histogram);
  f.persistent =
      b.Family("inferd_kernel_persistent_bytes",
               "Bytes kernels hold outside the arenas (prepacked weights).", MetricType::Gauge);
  f.budget =
      b.Family("inferd_partition_budget_bytes",
               "The device's partition budget for the model; +Inf without one.", MetricType::Gauge);
  f.assigned =
      b.Family("inferd_partition_assigned_bytes",
               "Bytes the partitioner accounted to the device (weights + activations + workspace).",
               MetricType::Gauge);
  f.nodes =
      b.Family("inferd_partition_nodes", "Graph nodes assigned to the device.", MetricType::Gauge);
  f.kv_reserved = b.Family("inferd_kv_cache_bytes",
                           "KV-cache bytes the running sequences of a generative model hold.",
                           MetricType::Gauge);
  f.kv_budget = b.Family("inferd_kv_cache_budget_bytes",
                         "The KV-cache budget of a generative model (generation.kv_cache_budget).",
                         MetricType::Gauge);
  f.kv_sequences =
      b.Family("inferd_kv_cache_sequences", "Sequences of a generative model holding a KV block.",
               MetricType::Gauge);
  f.kv_refused = b.Family("inferd_kv_cache_refused_total",
                          "Sequences refused before they started: their KV block did not fit the "
                          "budget.",
                          MetricType::Counter);
  f.device_memory = b.Family("inferd_device_memory_bytes",
                             "Memory of each GPU as its driver reports it, by state: total, used "
                             "(by every process) and free.",
                             MetricType::Gauge);
  DeclareTritonFamilies(b, f);
  return f;
}

// Each GPU of the build's device runtimes: total, used and free memory (cudaMemGetInfo).
void AddDeviceMemory(Builder& b, const Families& f,
                     const std::vector<std::shared_ptr<const engine::DeviceRuntime>>& devices) {
  for (const std::shared_ptr<const engine::DeviceRuntime>& runtime : devices) {
    const int n = runtime->DeviceCount();
    for (int d = 0; d < n; ++d) {
      absl::StatusOr<engine::DeviceMemoryInfo> m = runtime->MemoryInfo(d);
      if (!m.ok()) continue;
      const std::string device = absl::StrCat(runtime->kind().name(), ":", d);
      b.Add(f.device_memory, {{"device", device}, {"state", "total"}},
            static_cast<double>(m->total_bytes));
      b.Add(f.device_memory, {{"device", device}, {"state", "used"}},
            static_cast<double>(m->total_bytes - m->free_bytes));
      b.Add(f.device_memory, {{"device", device}, {"state", "free"}},
            static_cast<double>(m->free_bytes));
    }
  }
}

// inferd's own per-model series are labelled by model only: with several versions served at
// once they describe the version inference chooses (ModelRepository::Find: the highest READY
// one), so that no series repeats; Triton's nv_* series and the batch-size histogram carry a
// version label and cover every version.
bool IsServedSession(const ModelRepository& repository, const std::string& name,
                     const engine::Session* session) {
  const std::shared_ptr<LoadedModel> served = repository.Find(name);
  return served == nullptr || served->session().get() == session;
}

// Arenas of the loaded models (the selection holds their sessions).
void AddArenas(Builder& b, const Families& f, const ModelRepository& repository) {
  absl::StatusOr<std::vector<SelectedArena>> arenas = SelectArenas(repository, ArenaFilter{});
  if (!arenas.ok()) return;
  for (const SelectedArena& a : *arenas) {
    if (!IsServedSession(repository, a.model, a.session.get())) continue;
    const memory::ArenaStats s = a.arena->Stats();
    const Labels labels = {
        {"model", a.model}, {"device", a.device}, {"arena", memory::ArenaKindName(a.kind)}};
    for (size_t i = 0; i < std::size(kArenaMetrics); ++i) {
      const uint64_t v = s.*kArenaMetrics[i].field;
      b.Add(f.arena[i], labels,
            kArenaMetrics[i].field == &memory::ArenaStats::retention_cap_bytes
                ? Bytes(v)
                : static_cast<double>(v));
    }
    if (a.kind == memory::ArenaKind::kIO) {
      b.Add(f.leases, {{"model", a.model}, {"device", a.device}},
            static_cast<double>(s.outstanding_leases));
    }
  }
}

// Model states (every model the repository knows).
void AddModelStates(Builder& b, const Families& f, const ModelRepository& repository) {
  for (const ModelRepository::IndexEntry& e : repository.Index()) {
    const std::shared_ptr<LoadedModel> served = repository.Find(e.name);
    if (served != nullptr && served->version() != e.version) continue;
    for (ModelState st : kStates) {
      b.Add(f.state, {{"model", e.name}, {"state", ModelStateName(st)}}, e.state == st ? 1 : 0);
    }
  }
}

// Request statistics of one model (loaded, or ever loaded or tried).
void AddRequestStats(Builder& b, const Families& f, const LoadedModel& m) {
  const ModelStats& st = m.stats();
  const std::string& name = m.name();
  for (int c = 0; c < ModelStats::kNumCodes; ++c) {
    const uint64_t n = st.requests_by_code[c].load(std::memory_order_relaxed);
    if (n == 0 && c != 0) continue;
    b.Add(f.requests,
          {{"model", name}, {"code", absl::StatusCodeToString(static_cast<absl::StatusCode>(c))}},
          static_cast<double>(n));
  }
  auto value = [](const std::atomic<uint64_t>& v) {
    return static_cast<double>(v.load(std::memory_order_relaxed));
  };
  b.Add(f.inferences, {{"model", name}}, value(st.inferences));
  b.Add(f.rejected, {{"model", name}}, value(st.rejected_queue_full));
  b.Add(f.dropped, {{"model", name}, {"reason", "deadline"}}, value(st.dropped_deadline));
  b.Add(f.dropped, {{"model", name}, {"reason", "cancelled"}}, value(st.dropped_cancelled));
  b.Add(f.loads, {{"model", name}, {"result", "ok"}}, value(st.loads_ok));
  b.Add(f.loads, {{"model", name}, {"result", "refused_budget"}}, value(st.loads_refused_budget));
  b.Add(f.loads, {{"model", name}, {"result", "failed"}}, value(st.loads_failed));
  b.Add(f.input_bytes, {{"model", name}, {"mode", "borrowed"}}, value(st.input_bytes_borrowed));
  b.Add(f.input_bytes, {{"model", name}, {"mode", "staged"}}, value(st.input_bytes_staged));
  b.Add(f.output_bytes, {{"model", name}}, value(st.output_bytes));
  b.AddHistogram(f.queue_h, {{"model", name}}, st.queue.Read());
  b.AddHistogram(f.compute_h, {{"model", name}}, st.compute.Read());
  b.AddHistogram(f.serialize_h, {{"model", name}}, st.serialize.Read());
  b.AddHistogram(f.request_h, {{"model", name}}, st.request.Read());
}

// Triton's counters of one model, and its runs by batch size.
void AddTritonStats(Builder& b, const Families& f, const LoadedModel& m) {
  const ModelStats& st = m.stats();
  const Labels labels = {{"model", m.name()}, {"version", m.version()}};
  auto value = [](const std::atomic<uint64_t>& v) {
    return static_cast<double>(v.load(std::memory_order_relaxed));
  };
  auto us = [](const DurationStat& d) {
    return static_cast<double>(d.ns.load(std::memory_order_relaxed) / 1000);
  };
  b.Add(f.nv_success, labels, value(st.success.count));
  b.Add(f.nv_failure, labels, value(st.fail.count));
  b.Add(f.nv_count, labels, value(st.inference_count));
  b.Add(f.nv_exec, labels, value(st.executions));
  // Triton adds a request's duration (and its queue) to these for successful requests only.
  b.Add(f.nv_request_us, labels, us(st.success));
  b.Add(f.nv_queue_us, labels, us(st.queue_ok));
  b.Add(f.nv_input_us, labels, us(st.compute_input));
  b.Add(f.nv_infer_us, labels, us(st.compute_infer));
  b.Add(f.nv_output_us, labels, us(st.compute_output));
  // Powers of two up to 1024 (a max_batch_size beyond it lands in +Inf).
  static const std::vector<double> kBounds = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
  std::vector<uint64_t> buckets(kBounds.size() + 1, 0);
  double sum = 0;
  for (const auto& [size, e] : st.batches.Read()) {
    size_t i = 0;
    while (i < kBounds.size() && size > kBounds[i]) ++i;
    buckets[i] += e.runs;
    sum += static_cast<double>(size) * static_cast<double>(e.runs);
  }
  b.AddBuckets(f.batch_h, labels, kBounds, buckets, sum);
}

// Per loaded model: kernels' own memory and the partition.
void AddSessions(Builder& b, const Families& f, const ModelRepository& repository) {
  for (const LoadedSession& l : LoadedSessions(repository)) {
    const std::string& name = l.model->name();
    if (!IsServedSession(repository, name, l.session.get())) continue;
    b.Add(f.persistent, {{"model", name}},
          static_cast<double>(l.session->stats().kernel_persistent_bytes));
    for (const partition::DeviceReport& d : l.session->partition_report().devices) {
      const Labels labels = {{"model", name}, {"device", d.device}};
      b.Add(f.budget, labels, d.budget_bytes ? static_cast<double>(*d.budget_bytes) : kInf);
      b.Add(f.assigned, labels, static_cast<double>(d.accounted.total()));
      b.Add(f.nodes, labels, d.nodes);
    }
    if (std::shared_ptr<KvBudget> kv = l.model->shared_kv_budget()) {
      const Labels labels = {{"model", name}};
      b.Add(f.kv_reserved, labels, static_cast<double>(kv->reserved_bytes()));
      b.Add(f.kv_budget, labels, static_cast<double>(kv->budget_bytes()));
      b.Add(f.kv_sequences, labels, static_cast<double>(kv->sequences()));
      b.Add(f.kv_refused, labels, static_cast<double>(kv->refused()));
    }
  }
}

}  // namespace

std::vector<MetricFamily> MetricsCollector::Collect() const {
  Builder b;
  // pass 1: every family, in exposition order.
  const Families f = DeclareFamilies(b);
  // pass 2: arenas of the loaded models.
  AddArenas(b, f, repository_);
  // pass 3: model states.
  AddModelStates(b, f, repository_);
  // pass 4: request statistics of every model ever loaded or tried.
  for (const std::shared_ptr<LoadedModel>& m : repository_.Snapshot()) {
    if (repository_.Find(m->name()) == m) AddRequestStats(b, f, *m);
    AddTritonStats(b, f, *m);  // labelled by version: every version
  }
  // pass 5: per loaded model: kernels' own memory and the partition.
  AddSessions(b, f, repository_);
  // pass 6: the GPUs' memory.
  AddDeviceMemory(b, f, devices_);
  return b.Take();
}

void MetricsExporter::SetWakeAddress(const std::string& bind) {
  // The host of "host:port" / "[v6]:port"; a wildcard is reached through loopback.
  std::string host = bind.substr(0, bind.rfind(':'));
  if (host.size() >= 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  if (host == "0.0.0.0" || host.empty()) host = "127.0.0.1";
  if (host == "::") host = "::1";
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port_).c_str(), &hints, &found) == 0) {
    std::memcpy(&wake_address_, found->ai_addr, found->ai_addrlen);
    wake_address_len_ = found->ai_addrlen;
    freeaddrinfo(found);
  }
}

std::string RenderMetrics(const prometheus::Collectable& collectable) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, collectable.Collect());
  return out.str();
}

absl::StatusOr<std::unique_ptr<MetricsExporter>> MetricsExporter::Start(
    const std::string& address, const ModelRepository& repository,
    std::vector<std::shared_ptr<const engine::DeviceRuntime>> devices) {
  if (absl::StartsWith(address, "unix:")) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics_address '", address, "': the metrics endpoint needs a TCP address"));
  }
  // civetweb takes numeric hosts only.
  std::string bind = address;
  if (absl::StartsWith(bind, "localhost:")) bind = absl::StrCat("127.0.0.1", bind.substr(9));
  std::unique_ptr<MetricsExporter> m(new MetricsExporter());
  m->collector_ = std::make_shared<MetricsCollector>(repository, std::move(devices));
  try {
    m->exposer_ = std::make_unique<prometheus::Exposer>(std::vector<std::string>{
        "listening_ports", bind, "num_threads", std::to_string(kExporterThreads),
        "request_timeout_ms", std::to_string(absl::ToInt64Milliseconds(kRequestTimeout)),
        "keep_alive_timeout_ms", std::to_string(absl::ToInt64Milliseconds(kRequestTimeout)),
        "enable_keep_alive", "no"});
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve metrics on ", address, " (address in use?): ", e.what()));
  }
  m->exposer_->RegisterCollectable(m->collector_);
  const std::vector<int> ports = m->exposer_->GetListeningPorts();
  if (ports.empty() || ports[0] == 0) {
    return absl::UnavailableError(absl::StrCat("cannot serve metrics on ", address));
  }
  m->port_ = ports[0];
  m->SetWakeAddress(bind);
  return m;
}

MetricsExporter::~MetricsExporter() {
  // Stops civetweb (joins its threads) before the collector goes. civetweb's listener thread
  // only sees the stop request when its poll() returns, which without traffic takes up to 2 s;
  // connecting to our own port wakes it, so that shutdown does not wait for that.
  std::atomic<bool> stopped{false};
  std::thread waker([this, &stopped] {
    while (!stopped.load()) {
      absl::SleepFor(absl::Milliseconds(10));
      const int fd = socket(wake_address_.ss_family, SOCK_STREAM, 0);
      if (fd < 0) continue;
      connect(fd, reinterpret_cast<const sockaddr*>(&wake_address_), wake_address_len_);
      close(fd);
    }
  });
  exposer_.reset();
  stopped.store(true);
  waker.join();
}

}  // namespace inferd::server

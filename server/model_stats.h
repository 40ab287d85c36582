// Per-model request counters and latency histograms, written on the request path with relaxed
// atomics and read at scrape time (metrics, admin) without stopping anything. Plain atomics and
// fixed buckets, no Prometheus types: the metrics exporter turns a Snapshot into its own format.
// One ModelStats lives per model name for the life of the repository, so counters keep counting
// across unload and reload.
//
// Thread-safe: any thread may Record / Count; reads are per-field consistent (a snapshot taken
// during traffic may show a count one ahead of its sum).
#ifndef INFERD_SERVER_MODEL_STATS_H_
#define INFERD_SERVER_MODEL_STATS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace inferd::server {

class LatencyHistogram {
 public:
  // Upper bounds of the buckets, in seconds (Prometheus `le`); one more bucket counts the rest.
  static constexpr std::array<double, 16> kBoundsSeconds = {
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
      0.05,   0.1,     0.25,   0.5,   1.0,    2.5,   5.0,  10.0};

  struct Snapshot {
    std::vector<uint64_t> buckets;  // per bucket, not cumulative; kBoundsSeconds.size() + 1
    uint64_t count = 0;
    double sum_seconds = 0;
  };

  void Record(absl::Duration d);
  Snapshot Read() const;

 private:
  std::array<std::atomic<uint64_t>, kBoundsSeconds.size() + 1> buckets_{};
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_ns_{0};
};

// A count and the total time it took (Triton's StatisticDuration).
struct DurationStat {
  std::atomic<uint64_t> count{0};
  std::atomic<uint64_t> ns{0};
  void Add(absl::Duration d, uint64_t n = 1);
};

// Model runs by batch size (Triton's InferBatchStatistics), for ModelStatistics and the batch
// size histogram of the metrics. Bounded by max_batch_size distinct sizes.
class BatchStats {
 public:
  struct Entry {
    uint64_t runs = 0;
    uint64_t compute_input_ns = 0;
    uint64_t compute_infer_ns = 0;
    uint64_t compute_output_ns = 0;
  };
  void Record(int batch_size, absl::Duration compute_input, absl::Duration compute_infer,
              absl::Duration compute_output);
  std::map<int, Entry> Read() const;  // by batch size

 private:
  mutable std::mutex mu_;
  std::map<int, Entry> by_size_;  // protected by mu_
};

struct ModelStats {
  static constexpr int kNumCodes = 17;  // gRPC / absl status codes 0 (OK) .. 16

  // ModelInfer requests that named this model, by the status code they were answered with.
  std::array<std::atomic<uint64_t>, kNumCodes> requests_by_code{};
  std::atomic<uint64_t> inferences{0};            // successful model runs
  std::atomic<uint64_t> rejected_queue_full{0};   // answered RESOURCE_EXHAUSTED at once
  std::atomic<uint64_t> dropped_deadline{0};      // deadline passed while queued: not run
  std::atomic<uint64_t> dropped_cancelled{0};     // client cancelled while queued: not run
  std::atomic<uint64_t> input_bytes_borrowed{0};  // raw inputs used in place in gRPC's buffer
  std::atomic<uint64_t> input_bytes_staged{0};    // inputs copied into the IOArena
  std::atomic<uint64_t> output_bytes{0};          // raw_output_contents sent (zero-copy)

  // Load attempts of this model that got as far as its config, by outcome.
  std::atomic<uint64_t> loads_ok{0};
  std::atomic<uint64_t> loads_refused_budget{0};  // RESOURCE_EXHAUSTED: the plan did not fit
  std::atomic<uint64_t> loads_failed{0};          // any other error (bad model, config, opset)

  LatencyHistogram queue;      // enqueue -> a worker takes it
  LatencyHistogram compute;    // Session::Run
  LatencyHistogram serialize;  // response written -> last output lease returned by gRPC
  LatencyHistogram request;    // request received -> response handed to gRPC

  // Triton's ModelStatistics. success / fail: requests that reached the model (a bound request,
  // queued), by outcome, with their whole time; queue and compute_*: successful requests only.
  DurationStat success;
  DurationStat fail;
  DurationStat queue_ok;
  DurationStat compute_input;   // binding / staging the inputs (and a batch's gather)
  DurationStat compute_infer;   // Session::Run (a batch's share: the whole run, per request)
  DurationStat compute_output;  // exporting the outputs as leases (and a batch's split)
  std::atomic<uint64_t> executions{0};         // successful model runs; one may serve a batch
  std::atomic<uint64_t> inference_count{0};    // batch elements run successfully
  std::atomic<uint64_t> last_inference_ms{0};  // ms since the epoch of the last success; 0: none
  BatchStats batches;

  void CountRequest(absl::StatusCode code) {
    const int c = static_cast<int>(code);
    requests_by_code[c >= 0 && c < kNumCodes ? c : static_cast<int>(absl::StatusCode::kUnknown)]
        .fetch_add(1, std::memory_order_relaxed);
  }
  void CountLoad(const absl::Status& status) {
    (status.ok()                         ? loads_ok
     : absl::IsResourceExhausted(status) ? loads_refused_budget
                                         : loads_failed)
        .fetch_add(1, std::memory_order_relaxed);
  }
  uint64_t requests(absl::StatusCode code) const {
    return requests_by_code[static_cast<int>(code)].load(std::memory_order_relaxed);
  }
};

}  // namespace inferd::server

#endif  // INFERD_SERVER_MODEL_STATS_H_

// Prometheus metrics of inferd, read at scrape time: MetricsCollector is a prometheus::Collectable
// whose Collect() walks the repository (model_repository.h's reader contract) and reads each
// arena's Stats(), each model's ModelStats atomics and each session's partition report. Nothing
// is pushed per request. MetricsExporter serves it over HTTP (prometheus-cpp's Exposer,
// civetweb) at http://<config.server.metrics_address>/metrics, on 8 threads; a connection that
// has not sent its request within 2 s is dropped, so idle connections cannot starve scrapes.
//
// Families (all prefixed inferd_; label sets in braces):
//   arena {model, device, arena="execution"|"io"}:
//     gauges   arena_live_bytes, arena_retained_bytes, arena_peak_live_bytes,
//              arena_retention_cap_bytes, arena_live_buffers, arena_retained_buffers
//     counters arena_allocations_total, arena_reuses_total, arena_allocation_failures_total,
//              arena_system_allocations_total, arena_system_frees_total, arena_evictions_total,
//              arena_evicted_bytes_total, arena_trims_total, arena_trimmed_bytes_total
//   io leases {model, device}: gauge io_outstanding_leases
//   model {model}: counters requests_total {+code="OK"|"NOT_FOUND"|...}, inferences_total,
//              queue_rejected_total, queue_dropped_total {+reason="deadline"|"cancelled"},
//              input_bytes_total {+mode="borrowed"|"staged"}, output_bytes_total,
//              model_loads_total {+result="ok"|"refused_budget"|"failed"};
//              histograms queue_duration_seconds, compute_duration_seconds,
//              serialize_duration_seconds (response handed to gRPC -> last output lease back),
//              request_duration_seconds; gauge kernel_persistent_bytes (loaded models)
//   model state {model, state="LOADING"|"READY"|"UNLOADING"|"UNAVAILABLE"}: gauge model_state,
//              1 for the model's current state and 0 for the others (every model the
//              repository knows, loaded or not)
//   partition {model, device}: gauges partition_budget_bytes, partition_assigned_bytes (the
//              partitioner's accounted total: weights + activations + workspace),
//              partition_nodes
//   GPUs {device, state}: gauge device_memory_bytes, state total / used / free, for each device
//              of the runtimes the collector is given (the driver's figures: used counts every
//              process on the GPU, not only inferd)
//
//   Triton's names {model, version} (docs/metrics.md), counters without the _total suffix as
//   Triton has them: nv_inference_request_success, nv_inference_request_failure,
//              nv_inference_count, nv_inference_exec_count, nv_inference_request_duration_us,
//              nv_inference_queue_duration_us, nv_inference_compute_input_duration_us,
//              nv_inference_compute_infer_duration_us, nv_inference_compute_output_duration_us
//              (ModelStats' Triton fields, what ModelStatistics answers)
//   batch size {model}: histogram inferd_batch_size (runs by batch size; buckets 1, 2, 4 ... 1024)
//
// A limit that is not set (an unbounded retention cap, a device without a budget) is exported
// as +Inf rather than left out: the series never disappears when a cap is removed, and
// `used / limit` reads 0. requests_total always has code="OK" and the other codes once seen.
// Request counters and histograms survive unload and reload (one ModelStats per name); arena and
// partition series exist while the model is loaded.
//
// Thread-safe: Collect may run on any number of threads at once.
#ifndef INFERD_SERVER_METRICS_H_
#define INFERD_SERVER_METRICS_H_

#include <memory>
#include <string>
#include <vector>

#include <sys/socket.h>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include "absl/status/statusor.h"
#include "engine/device_runtime.h"
#include "server/model_repository.h"

namespace prometheus {
class Exposer;
}  // namespace prometheus

namespace inferd::server {

class MetricsCollector final : public prometheus::Collectable {
 public:
  // `repository` must outlive the collector. `devices`: the runtimes whose devices get memory
  // gauges (kernels::BuildDeviceRuntimes(): the GPUs of a --config=cuda build; none otherwise).
  explicit MetricsCollector(const ModelRepository& repository,
                            std::vector<std::shared_ptr<const engine::DeviceRuntime>> devices = {})
      : repository_(repository), devices_(std::move(devices)) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const ModelRepository& repository_;
  const std::vector<std::shared_ptr<const engine::DeviceRuntime>> devices_;
};

// The text exposition format (what /metrics answers) of `collectable`.
std::string RenderMetrics(const prometheus::Collectable& collectable);

// The HTTP endpoint. Example:
//   INFERD_ASSIGN_OR_RETURN(std::unique_ptr<MetricsExporter> m,
//                           MetricsExporter::Start("127.0.0.1:0", repository));
//   m->port();   // the port bound
class MetricsExporter {
 public:
  // Binds `address` ("host:port", "[v6]:port"; "localhost" reads as 127.0.0.1; port 0 picks a
  // free one) and serves /metrics. UNAVAILABLE when it cannot bind, INVALID_ARGUMENT for a unix:
  // address. `repository` must outlive the exporter.
  static absl::StatusOr<std::unique_ptr<MetricsExporter>> Start(
      const std::string& address, const ModelRepository& repository,
      std::vector<std::shared_ptr<const engine::DeviceRuntime>> devices = {});
  ~MetricsExporter();  // stops serving; waits for scrapes in progress
  MetricsExporter(const MetricsExporter&) = delete;
  MetricsExporter& operator=(const MetricsExporter&) = delete;

  int port() const { return port_; }

 private:
  MetricsExporter() = default;
  // Where the destructor connects to wake civetweb's listener (see there).
  void SetWakeAddress(const std::string& bind);

  std::shared_ptr<MetricsCollector> collector_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  int port_ = 0;
  sockaddr_storage wake_address_{};
  socklen_t wake_address_len_ = 0;
};

}  // namespace inferd::server

#endif  // INFERD_SERVER_METRICS_H_

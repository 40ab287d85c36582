// LoadDriver: sends ModelInfer calls from prebuilt request templates and measures them.
//
// Closed loop (rate == 0): `concurrency` streams, each with one call outstanding; a stream sends
// its next request when the previous response has been verified. Open loop (rate > 0): a pacer
// sends request i at the INTENDED time start + i / rate, whatever is outstanding (up to
// max_outstanding, beyond which it waits), and latency is measured from that intended time, so
// time spent queued behind a slow server is counted, not hidden (no coordinated omission).
//
// Calls use gRPC's callback API through a generic stub with ByteBuffers: a request is the
// template's wire bytes (slice references, nothing serialized per call) and a response is
// verified in place (verifier.h). Request i uses template (first_index + i) % templates.size(),
// so several templates alternate. A run stops by itself at `requests` calls or `duration`,
// whichever comes first (calls in flight then finish; each has a deadline of `timeout`), or after
// `max_errors` failures.
//
// Example:
//   LoadDriver driver(channels, templates, &verifier, options);
//   PhaseResult warm = driver.Run(100, absl::Seconds(30));
//   PhaseResult r = driver.Run(10000, absl::Seconds(60));
//
// Thread-compatible: one Run at a time; Run is internally multi-threaded.
#ifndef INFERD_LOADTEST_LOAD_DRIVER_H_
#define INFERD_LOADTEST_LOAD_DRIVER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include "absl/time/time.h"
#include "loadtest/latency_stats.h"
#include "loadtest/request_builder.h"
#include "loadtest/verifier.h"

namespace inferd::loadtest {

struct DriverOptions {
  int concurrency = 1;                         // closed loop: streams
  double rate = 0;                             // requests per second; > 0: open loop
  int max_outstanding = 1024;                  // open loop: calls in flight at most
  absl::Duration timeout = absl::Seconds(60);  // per call
  // Slow reader: the completion handler sleeps this long before it looks at the response. It runs
  // on one of gRPC's client threads, so the client also reads its socket later: responses stay
  // in flight on the server longer.
  absl::Duration slow_read = absl::ZeroDuration();
  int64_t max_errors = 1000;  // stop the run after this many failed calls
  std::string method = "/inference.GRPCInferenceService/ModelInfer";
};

struct PhaseResult {
  int64_t sent = 0;
  int64_t ok = 0;                          // status OK and verified
  int64_t failed = 0;                      // not OK, or OK but not verified
  std::map<std::string, int64_t> errors;   // status code name (or VERIFY_FAILED) -> count
  std::vector<std::string> error_samples;  // the first few messages
  LatencySummary latency;                  // of the OK calls
  double wall_s = 0;                       // first send to last completion
  uint64_t request_payload_bytes = 0;      // raw_input_contents sent by OK calls
  uint64_t response_payload_bytes = 0;     // raw_output_contents received by OK calls
  double client_cpu_s = 0;                 // this process, user + system, during the run
  bool stopped_on_errors = false;
  double throughput() const { return wall_s > 0 ? ok / wall_s : 0; }
};

// The gRPC status code's name ("RESOURCE_EXHAUSTED").
std::string StatusCodeName(grpc::StatusCode code);

class LoadDriver {
 public:
  // `channels` are used round-robin by stream (closed) or call (open). `templates` and
  // `verifier` must outlive the driver; verifier may be null (status only).
  LoadDriver(std::vector<std::shared_ptr<grpc::Channel>> channels,
             const std::vector<RequestTemplate>& templates, Verifier* verifier,
             DriverOptions options);
  ~LoadDriver();
  LoadDriver(const LoadDriver&) = delete;
  LoadDriver& operator=(const LoadDriver&) = delete;

  // Runs `requests` calls (or until `duration` has passed); the first call uses template
  // `first_index % templates.size()`.
  PhaseResult Run(int64_t requests, absl::Duration duration, int64_t first_index = 0);

 private:
  class Phase;
  std::vector<std::unique_ptr<grpc::GenericStub>> stubs_;
  const std::vector<RequestTemplate>& templates_;
  Verifier* verifier_;
  const DriverOptions options_;
};

}  // namespace inferd::loadtest

#endif  // INFERD_LOADTEST_LOAD_DRIVER_H_

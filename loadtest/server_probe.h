// What loadtest reads from the server it loads: the admin API's arena counters
// (proto/admin.proto: GetMemoryStats, Trim, SetRetentionCap, ResetPeak) and, for a server
// process on this machine, /proc/<pid>: minor page faults (stat field 10), CPU time (fields 14 and
// 15) and resident memory (status VmRSS).
//
// Example:
//   AdminClient admin(CreateLoopbackChannel("127.0.0.1:8003"), /*token=*/"");
//   absl::StatusOr<ArenaTotals> before = admin.Totals("mlp");
//   absl::StatusOr<ProcSample> p = ReadProc(pid);
//
// AdminClient is thread-safe; Periodic runs its function on a thread of its own.
#ifndef INFERD_LOADTEST_SERVER_PROBE_H_
#define INFERD_LOADTEST_SERVER_PROBE_H_

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "proto/admin.grpc.pb.h"

namespace inferd::loadtest {

namespace adminpb = ::inferd::admin::v1;

// A channel with no message size limits. The caller checks that the address is loopback.
std::shared_ptr<grpc::Channel> CreateLoopbackChannel(const std::string& target,
                                                     int channel_index = 0);

struct ProcSample {
  uint64_t minor_faults = 0;
  uint64_t major_faults = 0;
  double cpu_s = 0;  // user + system
  uint64_t rss_bytes = 0;
};
absl::StatusOr<ProcSample> ReadProc(pid_t pid);

// The sum over the selected arenas (e.g. both arenas of one model).
struct ArenaTotals {
  int arenas = 0;
  uint64_t live_bytes = 0;
  uint64_t retained_bytes = 0;
  uint64_t peak_live_bytes = 0;  // sum of the arenas' peaks
  uint64_t cap_bytes = 0;        // sum of the bounded caps
  bool any_unbounded = false;
  uint64_t system_allocations = 0;
  uint64_t system_frees = 0;
  uint64_t evictions = 0;
  uint64_t trims = 0;
  uint64_t trimmed_bytes = 0;
  uint64_t outstanding_leases = 0;
  uint64_t allocations = 0;
  uint64_t reuses = 0;
  uint64_t allocation_failures = 0;
};
ArenaTotals SumArenas(const adminpb::GetMemoryStatsResponse& stats);

class AdminClient {
 public:
  AdminClient(std::shared_ptr<grpc::Channel> channel, std::string token);

  // `model` empty: every loaded model.
  absl::StatusOr<adminpb::GetMemoryStatsResponse> Stats(const std::string& model) const;
  absl::StatusOr<ArenaTotals> Totals(const std::string& model) const;
  absl::StatusOr<adminpb::TrimResponse> Trim(const std::string& model) const;
  // nullopt: unbounded.
  absl::StatusOr<adminpb::SetRetentionCapResponse> SetCap(const std::string& model,
                                                          std::optional<uint64_t> bytes) const;
  absl::StatusOr<adminpb::ResetPeakResponse> ResetPeak(const std::string& model) const;

 private:
  void Prepare(grpc::ClientContext* context) const;
  std::unique_ptr<adminpb::Admin::Stub> stub_;
  std::string token_;
};

// Calls fn every `interval` (first call at once) until destroyed.
class Periodic {
 public:
  Periodic(absl::Duration interval, std::function<void()> fn);
  ~Periodic();
  Periodic(const Periodic&) = delete;
  Periodic& operator=(const Periodic&) = delete;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // protected by mu_
  std::thread thread_;
};

}  // namespace inferd::loadtest

#endif  // INFERD_LOADTEST_SERVER_PROBE_H_

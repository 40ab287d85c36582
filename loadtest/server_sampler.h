// ServerSampler: samples a server while it is loaded: its resident memory (VmRSS, when the pid is
// known) and the arena totals of the admin API (when an admin address is known), keeping maxima
// and a decimated series for the JSON report.
//
// Example:
//   ServerSampler sampler(&admin, "mlp", pid);
//   { Periodic tick(absl::Milliseconds(250), [&] { sampler.Sample(); }); ... run ... }
//   sampler.WriteJson(json);
//
// Thread-safe (Sample from the ticker thread, the rest from the main thread).
#ifndef INFERD_LOADTEST_SERVER_SAMPLER_H_
#define INFERD_LOADTEST_SERVER_SAMPLER_H_

#include <sys/types.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "loadtest/json_writer.h"
#include "loadtest/server_probe.h"

namespace inferd::loadtest {

class ServerSampler {
 public:
  // `admin` may be null; pid <= 0: no process figures. `model` empty: every model.
  ServerSampler(const AdminClient* admin, std::string model, pid_t pid);

  void Sample();

  struct Maxima {
    int samples = 0;
    uint64_t rss_first = 0, rss_last = 0, rss_max = 0;
    uint64_t live_max = 0, retained_max = 0, live_plus_retained_max = 0;
    uint64_t cap_max = 0;  // largest sum of bounded caps seen
    bool unbounded_seen = false;
    uint64_t leases_max = 0;
    int admin_errors = 0;
  };
  Maxima maxima() const;

  // "samples": {...maxima..., "series": [[t_s, rss, live, retained, cap], ...]}
  void WriteJson(JsonWriter& j) const;

 private:
  struct Point {
    double t_s;
    uint64_t rss, live, retained, cap;
  };
  static constexpr size_t kMaxPoints = 600;

  const AdminClient* const admin_;
  const std::string model_;
  const pid_t pid_;
  const int64_t t0_ns_;

  mutable std::mutex mu_;
  // Protected by mu_.
  Maxima max_;
  std::vector<Point> points_;
  int stride_ = 1;  // keep every stride_-th sample once the series is full
  int skipped_ = 0;
};

}  // namespace inferd::loadtest

#endif  // INFERD_LOADTEST_SERVER_SAMPLER_H_

#include "loadtest/server_sampler.h"

#include <algorithm>
#include <chrono>

namespace inferd::loadtest {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

ServerSampler::ServerSampler(const AdminClient* admin, std::string model, pid_t pid)
    : admin_(admin), model_(std::move(model)), pid_(pid), t0_ns_(NowNs()) {}

void ServerSampler::Sample() {
  Point p{(NowNs() - t0_ns_) / 1e9, 0, 0, 0, 0};
  bool have_proc = false, have_admin = false, unbounded = false;
  uint64_t leases = 0;
  if (pid_ > 0) {
    absl::StatusOr<ProcSample> s = ReadProc(pid_);
    if (s.ok()) {
      p.rss = s->rss_bytes;
      have_proc = true;
    }
  }
  int admin_error = 0;
  if (admin_ != nullptr) {
    absl::StatusOr<ArenaTotals> t = admin_->Totals(model_);
    if (t.ok()) {
      p.live = t->live_bytes;
      p.retained = t->retained_bytes;
      p.cap = t->cap_bytes;
      unbounded = t->any_unbounded;
      leases = t->outstanding_leases;
      have_admin = true;
    } else {
      admin_error = 1;
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  max_.admin_errors += admin_error;
  if (!have_proc && !have_admin) return;
  ++max_.samples;
  if (have_proc) {
    if (max_.rss_first == 0) max_.rss_first = p.rss;
    max_.rss_last = p.rss;
    max_.rss_max = std::max(max_.rss_max, p.rss);
  }
  if (have_admin) {
    max_.live_max = std::max(max_.live_max, p.live);
    max_.retained_max = std::max(max_.retained_max, p.retained);
    max_.live_plus_retained_max = std::max(max_.live_plus_retained_max, p.live + p.retained);
    max_.cap_max = std::max(max_.cap_max, p.cap);
    max_.unbounded_seen = max_.unbounded_seen || unbounded;
    max_.leases_max = std::max(max_.leases_max, leases);
  }
  if (++skipped_ < stride_) return;
  skipped_ = 0;
  points_.push_back(p);
  if (points_.size() >= kMaxPoints) {  // halve the series, double the stride
    std::vector<Point> kept;
    for (size_t i = 0; i < points_.size(); i += 2) kept.push_back(points_[i]);
    points_ = std::move(kept);
    stride_ *= 2;
  }
}

ServerSampler::Maxima ServerSampler::maxima() const {
  std::lock_guard<std::mutex> lock(mu_);
  return max_;
}

void ServerSampler::WriteJson(JsonWriter& j) const {
  std::lock_guard<std::mutex> lock(mu_);
  j.BeginObject();
  j.Key("samples").Int(max_.samples);
  j.Key("admin_errors").Int(max_.admin_errors);
  j.Key("rss_first_bytes").Uint(max_.rss_first);
  j.Key("rss_last_bytes").Uint(max_.rss_last);
  j.Key("rss_max_bytes").Uint(max_.rss_max);
  j.Key("live_max_bytes").Uint(max_.live_max);
  j.Key("retained_max_bytes").Uint(max_.retained_max);
  j.Key("live_plus_retained_max_bytes").Uint(max_.live_plus_retained_max);
  j.Key("cap_max_bytes").Uint(max_.cap_max);
  j.Key("unbounded_seen").Bool(max_.unbounded_seen);
  j.Key("outstanding_leases_max").Uint(max_.leases_max);
  j.Key("series_columns").BeginArray();
  for (const char* c : {"t_s", "rss_bytes", "live_bytes", "retained_bytes", "cap_bytes"}) {
    j.String(c);
  }
  j.EndArray();
  j.Key("series").BeginArray();
  for (const Point& p : points_) {
    j.BeginArray().Number(p.t_s).Uint(p.rss).Uint(p.live).Uint(p.retained).Uint(p.cap).EndArray();
  }
  j.EndArray();
  j.EndObject();
}

}  // namespace inferd::loadtest

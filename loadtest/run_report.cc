#include "loadtest/run_report.h"

#include <cstdio>

#include "absl/strings/str_format.h"
#include "loadtest/json_writer.h"

namespace inferd::loadtest {
namespace {

namespace adminpb = ::inferd::admin::v1;

double Us(int64_t ns) { return ns / 1000.0; }

void WritePhase(JsonWriter& j, const PhaseResult& r) {
  j.BeginObject();
  j.Key("sent").Int(r.sent);
  j.Key("ok").Int(r.ok);
  j.Key("failed").Int(r.failed);
  j.Key("errors").BeginObject();
  for (const auto& [code, n] : r.errors) j.Key(code).Int(n);
  j.EndObject();
  j.Key("error_samples").BeginArray();
  for (const std::string& e : r.error_samples) j.String(e);
  j.EndArray();
  j.Key("stopped_on_errors").Bool(r.stopped_on_errors);
  j.Key("wall_s").Number(r.wall_s);
  j.Key("throughput_rps").Number(r.throughput());
  j.Key("request_payload_bytes").Uint(r.request_payload_bytes);
  j.Key("response_bytes").Uint(r.response_payload_bytes);
  j.Key("request_mib_per_s")
      .Number(r.wall_s > 0 ? r.request_payload_bytes / 1048576.0 / r.wall_s : 0);
  j.Key("response_mib_per_s")
      .Number(r.wall_s > 0 ? r.response_payload_bytes / 1048576.0 / r.wall_s : 0);
  j.Key("latency_us").BeginObject();
  j.Key("count").Int(r.latency.count);
  j.Key("min").Number(Us(r.latency.min_ns));
  j.Key("mean").Number(r.latency.mean_ns / 1000.0);
  j.Key("p50").Number(Us(r.latency.p50_ns));
  j.Key("p90").Number(Us(r.latency.p90_ns));
  j.Key("p99").Number(Us(r.latency.p99_ns));
  j.Key("p99_9").Number(Us(r.latency.p999_ns));
  j.Key("max").Number(Us(r.latency.max_ns));
  j.EndObject();
  j.Key("client_cpu_s").Number(r.client_cpu_s);
  j.Key("client_cpu_cores").Number(r.wall_s > 0 ? r.client_cpu_s / r.wall_s : 0);
  j.EndObject();
}

void WriteTotals(JsonWriter& j, const ArenaTotals& t) {
  j.BeginObject();
  j.Key("arenas").Int(t.arenas);
  j.Key("live_bytes").Uint(t.live_bytes);
  j.Key("retained_bytes").Uint(t.retained_bytes);
  j.Key("peak_live_bytes").Uint(t.peak_live_bytes);
  j.Key("cap_bytes").Uint(t.cap_bytes);
  j.Key("any_unbounded").Bool(t.any_unbounded);
  j.Key("system_allocations").Uint(t.system_allocations);
  j.Key("system_frees").Uint(t.system_frees);
  j.Key("evictions").Uint(t.evictions);
  j.Key("trims").Uint(t.trims);
  j.Key("trimmed_bytes").Uint(t.trimmed_bytes);
  j.Key("outstanding_leases").Uint(t.outstanding_leases);
  j.Key("allocations").Uint(t.allocations);
  j.Key("reuses").Uint(t.reuses);
  j.Key("allocation_failures").Uint(t.allocation_failures);
  j.EndObject();
}

// "arenas_steady": per (model, device, arena), the counters' changes over the measured part and
// the state after it.
void WriteArenaDeltas(JsonWriter& j, const adminpb::GetMemoryStatsResponse& before,
                      const adminpb::GetMemoryStatsResponse& after) {
  j.Key("arenas_steady").BeginArray();
  for (const adminpb::ArenaMemoryStats& a : after.arenas()) {
    const adminpb::ArenaMemoryStats* b = nullptr;
    for (const adminpb::ArenaMemoryStats& x : before.arenas()) {
      if (x.model() == a.model() && x.device() == a.device() && x.arena() == a.arena()) b = &x;
    }
    if (b == nullptr) continue;
    j.BeginObject();
    j.Key("model").String(a.model());
    j.Key("device").String(a.device());
    j.Key("arena").String(a.arena());
    j.Key("system_allocations").Uint(a.system_allocations() - b->system_allocations());
    j.Key("system_frees").Uint(a.system_frees() - b->system_frees());
    j.Key("evictions").Uint(a.evictions() - b->evictions());
    j.Key("allocations").Uint(a.allocations() - b->allocations());
    j.Key("reuses").Uint(a.reuses() - b->reuses());
    j.Key("peak_live_bytes").Uint(a.peak_live_bytes());
    j.Key("retained_bytes").Uint(a.retained_bytes());
    j.Key("retained_buffers").Uint(a.retained_buffers());
    j.EndObject();
  }
  j.EndArray();
}

void WriteProc(JsonWriter& j, const ProcSample& p) {
  j.BeginObject();
  j.Key("minor_faults").Uint(p.minor_faults);
  j.Key("major_faults").Uint(p.major_faults);
  j.Key("cpu_s").Number(p.cpu_s);
  j.Key("rss_bytes").Uint(p.rss_bytes);
  j.EndObject();
}

}  // namespace

std::string Mib(uint64_t bytes) { return absl::StrFormat("%.2f MiB", bytes / 1048576.0); }

void PrintPhase(const char* what, const PhaseResult& r) {
  std::printf(
      "%s: %lld ok, %lld failed in %.3f s: %.1f req/s, %.1f MiB/s sent, %.1f MiB/s "
      "received\n",
      what, static_cast<long long>(r.ok), static_cast<long long>(r.failed), r.wall_s,
      r.throughput(), r.wall_s > 0 ? r.request_payload_bytes / 1048576.0 / r.wall_s : 0,
      r.wall_s > 0 ? r.response_payload_bytes / 1048576.0 / r.wall_s : 0);
  if (r.latency.count > 0) {
    std::printf("  latency (us): p50 %.1f  p90 %.1f  p99 %.1f  p99.9 %.1f  max %.1f  mean %.1f\n",
                Us(r.latency.p50_ns), Us(r.latency.p90_ns), Us(r.latency.p99_ns),
                Us(r.latency.p999_ns), Us(r.latency.max_ns), r.latency.mean_ns / 1000.0);
  }
  std::printf("  client cpu: %.2f s (%.2f cores)\n", r.client_cpu_s,
              r.wall_s > 0 ? r.client_cpu_s / r.wall_s : 0);
  for (const auto& [code, n] : r.errors) {
    std::printf("  errors %s: %lld\n", code.c_str(), static_cast<long long>(n));
  }
  for (const std::string& e : r.error_samples) std::printf("    %s\n", e.c_str());
}

void PrintMeasured(const RunHeader& header, const RunRecord& rec, const ServerSampler& sampler) {
  const PhaseResult& measured = rec.measured;
  PrintPhase("measured", measured);
  if (rec.proc_before && rec.proc_after) {
    const double cpu = rec.proc_after->cpu_s - rec.proc_before->cpu_s;
    const uint64_t faults = rec.proc_after->minor_faults - rec.proc_before->minor_faults;
    std::printf(
        "  server: cpu %.2f s (%.2f cores), minor faults +%llu (%.2f per request), "
        "VmRSS %s (max %s)\n",
        cpu, measured.wall_s > 0 ? cpu / measured.wall_s : 0,
        static_cast<unsigned long long>(faults),
        measured.ok > 0 ? static_cast<double>(faults) / measured.ok : 0.0,
        Mib(rec.proc_after->rss_bytes).c_str(), Mib(sampler.maxima().rss_max).c_str());
  }
  if (rec.before && rec.after) {
    const ArenaTotals& before = *rec.before;
    const ArenaTotals& after = *rec.after;
    std::printf(
        "  arenas (%s): system allocations +%llu, frees +%llu, evictions +%llu; "
        "peak live %s, live %s, retained %s; max leases in flight %llu\n",
        header.admin_model.empty() ? "all models" : header.admin_model.c_str(),
        static_cast<unsigned long long>(after.system_allocations - before.system_allocations),
        static_cast<unsigned long long>(after.system_frees - before.system_frees),
        static_cast<unsigned long long>(after.evictions - before.evictions),
        Mib(after.peak_live_bytes).c_str(), Mib(after.live_bytes).c_str(),
        Mib(after.retained_bytes).c_str(),
        static_cast<unsigned long long>(sampler.maxima().leases_max));
  }
  if (rec.trim && rec.after_trim) {
    std::printf("  trim: released %s; retained now %s\n",
                Mib(rec.trim->total_released_bytes()).c_str(),
                Mib(rec.after_trim->retained_bytes).c_str());
  }
  if (!rec.admin_error.empty()) std::printf("  admin error: %s\n", rec.admin_error.c_str());
}

std::string JsonReport(const RunHeader& header, const RunRecord& rec, const ServerSampler& sampler,
                       bool passed) {
  JsonWriter j;
  j.BeginObject();
  j.Key("target").String(header.target);
  j.Key("model").String(header.model);
  j.Key("loop").String(header.open_loop ? "open" : "closed");
  j.Key("concurrency").Int(header.concurrency);
  j.Key("rate").Number(header.rate);
  j.Key("connections").Int(header.connections);
  j.Key("verify").String(header.verify);
  j.Key("slow_read_ms").Int(header.slow_read_ms);
  j.Key("requests").BeginArray();
  if (header.templates != nullptr) {
    for (const RequestTemplate& t : *header.templates) {
      j.BeginObject();
      j.Key("label").String(t.label);
      j.Key("payload_bytes").Uint(t.payload_bytes);
      j.Key("wire_bytes").Uint(t.wire_bytes);
      j.EndObject();
    }
  }
  j.EndArray();
  j.Key("warmup");
  WritePhase(j, rec.warmup);
  j.Key("measured");
  WritePhase(j, rec.measured);
  j.Key("server").BeginObject();
  j.Key("pid").Int(header.server_pid);
  j.Key("admin_model").String(header.admin_model);
  if (!rec.admin_error.empty()) j.Key("admin_error").String(rec.admin_error);
  if (rec.proc_before && rec.proc_after) {
    j.Key("proc_before");
    WriteProc(j, *rec.proc_before);
    j.Key("proc_after");
    WriteProc(j, *rec.proc_after);
    j.Key("minor_faults_steady").Uint(rec.proc_after->minor_faults - rec.proc_before->minor_faults);
    j.Key("cpu_s_steady").Number(rec.proc_after->cpu_s - rec.proc_before->cpu_s);
  }
  if (rec.before && rec.after) {
    j.Key("arenas_before");
    WriteTotals(j, *rec.before);
    j.Key("arenas_after");
    WriteTotals(j, *rec.after);
    j.Key("system_allocations_steady")
        .Uint(rec.after->system_allocations - rec.before->system_allocations);
    j.Key("system_frees_steady").Uint(rec.after->system_frees - rec.before->system_frees);
    j.Key("evictions_steady").Uint(rec.after->evictions - rec.before->evictions);
  }
  if (rec.stats_before && rec.stats_after) WriteArenaDeltas(j, *rec.stats_before, *rec.stats_after);
  if (rec.trim) j.Key("trim_released_bytes").Uint(rec.trim->total_released_bytes());
  if (rec.after_trim) {
    j.Key("arenas_after_trim");
    WriteTotals(j, *rec.after_trim);
  }
  if (rec.proc_after_trim) {
    j.Key("proc_after_trim");
    WriteProc(j, *rec.proc_after_trim);
  }
  j.Key("sampled");
  sampler.WriteJson(j);
  j.EndObject();
  j.Key("passed").Bool(passed);
  j.EndObject();
  return j.str();
}

}  // namespace inferd::loadtest

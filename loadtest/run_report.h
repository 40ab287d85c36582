// What one loadtest run measured, and its two reports: the summary printed on stdout and the JSON
// document of --json (keys in loadtest/README.md, "The JSON report"). Internal to the loadtest
// binary; loadtest_main.cc fills a RunRecord pass by pass and hands it here.
#ifndef INFERD_LOADTEST_RUN_REPORT_H_
#define INFERD_LOADTEST_RUN_REPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "loadtest/load_driver.h"
#include "loadtest/request_builder.h"
#include "loadtest/server_probe.h"
#include "loadtest/server_sampler.h"
#include "proto/admin.pb.h"

namespace inferd::loadtest {

// The run's settings as the JSON report states them.
struct RunHeader {
  std::string target, model;
  bool open_loop = false;
  int concurrency = 1;
  double rate = 0;
  int connections = 1;
  std::string verify;
  int slow_read_ms = 0;
  int server_pid = 0;
  std::string admin_model;
  const std::vector<RequestTemplate>* templates = nullptr;  // must outlive the report calls
};

// The phases and the server snapshots around the measured part (absent where not taken).
struct RunRecord {
  PhaseResult warmup, measured;
  std::optional<ArenaTotals> before, after, after_trim;
  std::optional<inferd::admin::v1::GetMemoryStatsResponse> stats_before, stats_after;
  std::optional<ProcSample> proc_before, proc_after, proc_after_trim;
  std::optional<inferd::admin::v1::TrimResponse> trim;
  std::string admin_error;  // the first admin call that failed
};

// "12.50 MiB".
std::string Mib(uint64_t bytes);

// One phase's line and latency, CPU and error lines.
void PrintPhase(const char* what, const PhaseResult& r);

// The measured phase and, where taken, the server's CPU, faults, memory and arena figures.
void PrintMeasured(const RunHeader& header, const RunRecord& rec, const ServerSampler& sampler);

// The --json document.
std::string JsonReport(const RunHeader& header, const RunRecord& rec, const ServerSampler& sampler,
                       bool passed);

}  // namespace inferd::loadtest

#endif  // INFERD_LOADTEST_RUN_REPORT_H_

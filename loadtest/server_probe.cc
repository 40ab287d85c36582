#include "loadtest/server_probe.h"

#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace inferd::loadtest {
namespace {

absl::Status FromGrpc(const std::string& what, const grpc::Status& s) {
  if (s.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                      absl::StrCat(what, ": ", s.error_message()));
}

constexpr auto kAdminTimeout = std::chrono::seconds(10);

}  // namespace

std::shared_ptr<grpc::Channel> CreateLoopbackChannel(const std::string& target, int channel_index) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  // A connection of its own per index (channels with equal arguments share subchannels).
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt("inferd.loadtest.channel_index", channel_index);
  return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
}

absl::StatusOr<ProcSample> ReadProc(pid_t pid) {
  ProcSample p;
  std::ifstream stat(absl::StrCat("/proc/", pid, "/stat"));
  std::string line;
  if (!std::getline(stat, line)) {
    return absl::NotFoundError(absl::StrCat("cannot read /proc/", pid, "/stat"));
  }
  // The command name (field 2) is in parentheses and may hold spaces: split after the last ')'.
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return absl::InternalError("malformed /proc/PID/stat");
  std::vector<std::string> f = absl::StrSplit(line.substr(close + 2), ' ');
  // f[0] is field 3 (state), so field N is f[N - 3].
  if (f.size() < 13) return absl::InternalError("short /proc/PID/stat");
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  p.minor_faults = std::stoull(f[10 - 3]);
  p.major_faults = std::stoull(f[12 - 3]);
  p.cpu_s = (std::stoull(f[14 - 3]) + std::stoull(f[15 - 3])) / tick;
  std::ifstream status(absl::StrCat("/proc/", pid, "/status"));
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      std::istringstream in(line.substr(6));
      uint64_t kb = 0;
      in >> kb;
      p.rss_bytes = kb * 1024;
    }
  }
  return p;
}

ArenaTotals SumArenas(const adminpb::GetMemoryStatsResponse& stats) {
  ArenaTotals t;
  for (const adminpb::ArenaMemoryStats& a : stats.arenas()) {
    ++t.arenas;
    t.live_bytes += a.live_bytes();
    t.retained_bytes += a.retained_bytes();
    t.peak_live_bytes += a.peak_live_bytes();
    if (a.unbounded()) {
      t.any_unbounded = true;
    } else {
      t.cap_bytes += a.retention_cap_bytes();
    }
    t.system_allocations += a.system_allocations();
    t.system_frees += a.system_frees();
    t.evictions += a.evictions();
    t.trims += a.trims();
    t.trimmed_bytes += a.trimmed_bytes();
    t.outstanding_leases += a.outstanding_leases();
    t.allocations += a.allocations();
    t.reuses += a.reuses();
    t.allocation_failures += a.allocation_failures();
  }
  return t;
}

AdminClient::AdminClient(std::shared_ptr<grpc::Channel> channel, std::string token)
    : stub_(adminpb::Admin::NewStub(std::move(channel))), token_(std::move(token)) {}

void AdminClient::Prepare(grpc::ClientContext* context) const {
  context->set_deadline(std::chrono::system_clock::now() + kAdminTimeout);
  if (!token_.empty()) context->AddMetadata("authorization", "Bearer " + token_);
}

absl::StatusOr<adminpb::GetMemoryStatsResponse> AdminClient::Stats(const std::string& model) const {
  grpc::ClientContext context;
  Prepare(&context);
  adminpb::GetMemoryStatsRequest request;
  request.set_model(model);
  adminpb::GetMemoryStatsResponse response;
  absl::Status s = FromGrpc("GetMemoryStats", stub_->GetMemoryStats(&context, request, &response));
  if (!s.ok()) return s;
  return response;
}

absl::StatusOr<ArenaTotals> AdminClient::Totals(const std::string& model) const {
  absl::StatusOr<adminpb::GetMemoryStatsResponse> s = Stats(model);
  if (!s.ok()) return s.status();
  return SumArenas(*s);
}

absl::StatusOr<adminpb::TrimResponse> AdminClient::Trim(const std::string& model) const {
  grpc::ClientContext context;
  Prepare(&context);
  adminpb::TrimRequest request;
  request.set_model(model);
  adminpb::TrimResponse response;
  absl::Status s = FromGrpc("Trim", stub_->Trim(&context, request, &response));
  if (!s.ok()) return s;
  return response;
}

absl::StatusOr<adminpb::SetRetentionCapResponse> AdminClient::SetCap(
    const std::string& model, std::optional<uint64_t> bytes) const {
  grpc::ClientContext context;
  Prepare(&context);
  adminpb::SetRetentionCapRequest request;
  request.set_model(model);
  if (bytes.has_value()) {
    request.set_bytes(*bytes);
  } else {
    request.set_unbounded(true);
  }
  adminpb::SetRetentionCapResponse response;
  absl::Status s =
      FromGrpc("SetRetentionCap", stub_->SetRetentionCap(&context, request, &response));
  if (!s.ok()) return s;
  return response;
}

absl::StatusOr<adminpb::ResetPeakResponse> AdminClient::ResetPeak(const std::string& model) const {
  grpc::ClientContext context;
  Prepare(&context);
  adminpb::ResetPeakRequest request;
  request.set_model(model);
  adminpb::ResetPeakResponse response;
  absl::Status s = FromGrpc("ResetPeak", stub_->ResetPeak(&context, request, &response));
  if (!s.ok()) return s;
  return response;
}

Periodic::Periodic(absl::Duration interval, std::function<void()> fn) {
  thread_ = std::thread([this, interval, fn = std::move(fn)] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      lock.unlock();
      fn();
      lock.lock();
      cv_.wait_for(lock, absl::ToChronoNanoseconds(interval), [this] { return stop_; });
    }
  });
}

Periodic::~Periodic() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

}  // namespace inferd::loadtest

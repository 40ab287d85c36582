// End to end, the bounded load/unload soak (the full one is `loadtest/scenarios.sh unload`):
// 20 load/unload cycles of a model with 32 MiB of weights while mlp serves; inferd's VmRSS after
// the cycles is within 8 MiB of what it was after the first (warm-up) cycles, and mlp answered
// every request in between. inferd gives unloaded memory back (compare
// triton-inference-server/server#4966).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"

#include "tests/server/infer_client.h"
#include "tests/server/inferd_process.h"

namespace inferd::testing {
namespace {

constexpr char kToken[] = "soak-secret";
constexpr int64_t kMiB = int64_t{1} << 20;

// VmRSS of `pid` in bytes; -1 when unreadable.
int64_t ResidentBytes(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    long long kib = 0;
    if (std::sscanf(line.c_str(), "VmRSS: %lld kB", &kib) == 1) return kib * 1024;
  }
  return -1;
}

grpc::Status Control(inference::GRPCInferenceService::Stub& stub, bool load,
                     const std::string& name) {
  grpc::ClientContext ctx;
  ctx.AddMetadata("authorization", std::string("Bearer ") + kToken);
  if (load) {
    inference::RepositoryModelLoadRequest req;
    req.set_model_name(name);
    inference::RepositoryModelLoadResponse resp;
    return stub.RepositoryModelLoad(&ctx, req, &resp);
  }
  inference::RepositoryModelUnloadRequest req;
  req.set_model_name(name);
  inference::RepositoryModelUnloadResponse resp;
  return stub.RepositoryModelUnload(&ctx, req, &resp);
}

TEST(UnloadMemoryTest, LoadUnloadCyclesReturnTheirMemory) {
  InferdProcess::Options o;
  o.models = {{"mlp", "tools/models/mlp"}, {"heavy", "tests/server/weights_32m"}};
  o.server_yaml = absl::StrCat("  model_control: explicit\n  admin_token: ", kToken,
                               "\n  load_all_models: false\n");
  o.models_yaml = "  - name: mlp\n";
  o.log_level = "warn";
  auto p = InferdProcess::Start("unload_memory", o);
  ASSERT_TRUE(p.ok()) << p.status();
  InferdProcess& inferd = **p;
  auto stub = inferd.Stub();
  const engine::TestDataSet mlp = LoadDataSet("tools/models/mlp");

  // mlp serves throughout: every answer must be right.
  std::atomic<bool> stop{false};
  std::atomic<int> served{0}, failed{0};
  std::thread client([&] {
    auto s = inferd.Stub();
    const inference::ModelInferRequest req = RawRequest("mlp", mlp);
    while (!stop.load()) {
      grpc::ClientContext ctx;
      inference::ModelInferResponse resp;
      const grpc::Status st = s->ModelInfer(&ctx, req, &resp);
      (st.ok() && CheckOutputs(resp, mlp).ok() ? served : failed).fetch_add(1);
    }
  });
  const int64_t before_any = ResidentBytes(inferd.pid());
  constexpr int kWarmup = 3, kCycles = 20;
  int64_t after_warmup = 0;
  for (int i = 0; i < kCycles; ++i) {
    grpc::Status s = Control(*stub, true, "heavy");
    ASSERT_TRUE(s.ok()) << "cycle " << i << ": " << s.error_message();
    s = Control(*stub, false, "heavy");
    ASSERT_TRUE(s.ok()) << "cycle " << i << ": " << s.error_message();
    if (i + 1 == kWarmup) after_warmup = ResidentBytes(inferd.pid());
  }
  const int64_t after = ResidentBytes(inferd.pid());
  stop = true;
  client.join();
  std::printf(
      "VmRSS: %.1f MiB before any load, %.1f MiB after %d cycles, %.1f MiB after %d; "
      "mlp: %d served, %d failed\n",
      before_any / double(kMiB), after_warmup / double(kMiB), kWarmup, after / double(kMiB),
      kCycles, served.load(), failed.load());
  ASSERT_GT(after_warmup, 0);
  EXPECT_LE(after, after_warmup + 8 * kMiB) << "load/unload cycles grow resident memory";
  EXPECT_LT(after, before_any + 32 * kMiB) << "an unloaded model's weights stayed resident";
  EXPECT_EQ(failed.load(), 0);
  EXPECT_GT(served.load(), 0);
}

}  // namespace
}  // namespace inferd::testing

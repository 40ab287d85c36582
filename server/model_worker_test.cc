// ModelWorker: bounded queue, drops of cancelled and expired items, drain.
#include "server/model_worker.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>
#include <system_error>

namespace inferd::server {
namespace {

// Blocks in Run until the gate opens; records what happened to it.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  int started = 0;
  void Open() {
    std::lock_guard<std::mutex> l(mu);
    open = true;
    cv.notify_all();
  }
  void WaitStarted(int n) {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return started >= n; });
  }
};

struct Outcome {
  std::atomic<int> ran{0};
  std::atomic<int> dropped{0};
  absl::Status last_drop;
};

class TestItem final : public WorkItem {
 public:
  TestItem(Gate* gate, Outcome* out, bool cancelled = false,
           absl::Time deadline = absl::InfiniteFuture())
      : gate_(gate), out_(out), cancelled_(cancelled), deadline_(deadline) {}
  void Run(absl::Duration) override {
    if (gate_ != nullptr) {
      std::unique_lock<std::mutex> l(gate_->mu);
      gate_->started++;
      gate_->cv.notify_all();
      gate_->cv.wait(l, [&] { return gate_->open; });
    }
    out_->ran++;
  }
  void Drop(const absl::Status& why) override {
    out_->last_drop = why;
    out_->dropped++;
  }
  bool Cancelled() const override { return cancelled_; }
  absl::Time deadline() const override { return deadline_; }

 private:
  Gate* gate_;
  Outcome* out_;
  bool cancelled_;
  absl::Time deadline_;
};

absl::Status Submit(ModelWorker& w, std::unique_ptr<WorkItem> item) { return w.Submit(item); }

TEST(ModelWorkerTest, FullQueueIsRejectedAtOnce) {
  ModelStats stats;
  Gate gate;
  Outcome out;
  ModelWorker worker("m", /*threads=*/1, /*queue_length=*/2, &stats);
  ASSERT_TRUE(Submit(worker, std::make_unique<TestItem>(&gate, &out)).ok());
  gate.WaitStarted(1);  // one running
  ASSERT_TRUE(Submit(worker, std::make_unique<TestItem>(&gate, &out)).ok());
  ASSERT_TRUE(Submit(worker, std::make_unique<TestItem>(&gate, &out)).ok());
  auto rejected = std::make_unique<TestItem>(&gate, &out);
  std::unique_ptr<WorkItem> item = std::move(rejected);
  absl::Status s = worker.Submit(item);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_NE(item, nullptr) << "a rejected item stays with the caller";
  EXPECT_EQ(stats.rejected_queue_full.load(), 1u);
  EXPECT_EQ(worker.queued(), 2);
  EXPECT_EQ(worker.running(), 1);
  gate.Open();
  worker.Drain();
  EXPECT_EQ(out.ran.load(), 3);
  EXPECT_EQ(out.dropped.load(), 0);
  EXPECT_EQ(stats.queue.Read().count, 3u);
}

TEST(ModelWorkerTest, ZeroQueueLengthStillFeedsIdleWorkers) {
  ModelStats stats;
  Gate gate;
  Outcome out;
  ModelWorker worker("m", /*threads=*/2, /*queue_length=*/0, &stats);
  ASSERT_TRUE(Submit(worker, std::make_unique<TestItem>(&gate, &out)).ok());
  ASSERT_TRUE(Submit(worker, std::make_unique<TestItem>(&gate, &out)).ok());
  gate.WaitStarted(2);
  EXPECT_EQ(Submit(worker, std::make_unique<TestItem>(&gate, &out)).code(),
            absl::StatusCode::kResourceExhausted);
  gate.Open();
}

TEST(ModelWorkerTest, CancelledAndExpiredItemsAreDroppedWithoutRunning) {
  ModelStats stats;
  Gate gate;
  Outcome out, dropped_cancel, dropped_deadline;
  ModelWorker worker("m", 1, 8, &stats);
  ASSERT_TRUE(Submit(worker, std::make_unique<TestItem>(&gate, &out)).ok());
  gate.WaitStarted(1);
  ASSERT_TRUE(Submit(worker, std::make_unique<TestItem>(nullptr, &dropped_cancel, true)).ok());
  ASSERT_TRUE(Submit(worker, std::make_unique<TestItem>(nullptr, &dropped_deadline, false,
                                                        absl::Now() + absl::Milliseconds(1)))
                  .ok());
  absl::SleepFor(absl::Milliseconds(5));
  gate.Open();
  worker.Drain();
  EXPECT_EQ(out.ran.load(), 1);
  EXPECT_EQ(dropped_cancel.ran.load(), 0);
  EXPECT_EQ(dropped_cancel.dropped.load(), 1);
  EXPECT_EQ(dropped_cancel.last_drop.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(dropped_deadline.ran.load(), 0);
  EXPECT_EQ(dropped_deadline.last_drop.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(stats.dropped_cancelled.load(), 1u);
  EXPECT_EQ(stats.dropped_deadline.load(), 1u);
}

TEST(ModelWorkerTest, DrainFinishesEverythingQueuedThenRefuses) {
  ModelStats stats;
  Outcome out;
  ModelWorker worker("m", 3, 1000, &stats);
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(Submit(worker, std::make_unique<TestItem>(nullptr, &out)).ok());
  }
  worker.Drain();
  EXPECT_EQ(out.ran.load(), 200);
  EXPECT_EQ(Submit(worker, std::make_unique<TestItem>(nullptr, &out)).code(),
            absl::StatusCode::kUnavailable);
  worker.Drain();  // idempotent
}

TEST(ModelWorkerTest, ManySubmittersAcceptedPlusRejectedAddUp) {
  ModelStats stats;
  Outcome out;
  std::atomic<int> accepted{0}, rejected{0};
  {
    ModelWorker worker("m", 2, 4, &stats);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&] {
        for (int i = 0; i < 250; ++i) {
          absl::Status s = Submit(worker, std::make_unique<TestItem>(nullptr, &out));
          (s.ok() ? accepted : rejected)++;
        }
      });
    }
    for (std::thread& t : threads) t.join();
  }
  EXPECT_EQ(accepted.load() + rejected.load(), 1000);
  EXPECT_EQ(out.ran.load(), accepted.load());
  EXPECT_EQ(stats.rejected_queue_full.load(), static_cast<uint64_t>(rejected.load()));
}

TEST(LatencyHistogramTest, BucketsCountAndSum) {
  LatencyHistogram h;
  h.Record(absl::Microseconds(50));
  h.Record(absl::Milliseconds(3));
  h.Record(absl::Seconds(100));
  LatencyHistogram::Snapshot s = h.Read();
  EXPECT_EQ(s.count, 3u);
  EXPECT_EQ(s.buckets[0], 1u);                                        // <= 100us
  EXPECT_EQ(s.buckets[5], 1u);                                        // <= 5ms
  EXPECT_EQ(s.buckets[LatencyHistogram::kBoundsSeconds.size()], 1u);  // +Inf
  EXPECT_NEAR(s.sum_seconds, 100.00305, 1e-6);
}

// In a child process whose address space has room for a few thread stacks only: exits 0 when
// the constructor throws std::system_error (having joined the threads it started; a joinable
// std::thread destroyed would call std::terminate instead).
[[noreturn]] void StartTooManyThreadsInATightAddressSpace() {
  std::ifstream status("/proc/self/status");
  std::string line;
  long long vm_kib = 0;
  while (std::getline(status, line) && std::sscanf(line.c_str(), "VmSize: %lld", &vm_kib) != 1) {
  }
  const rlim_t limit = static_cast<rlim_t>(vm_kib + (64 << 10)) * 1024;  // + 64 MiB
  rlimit rl;
  rl.rlim_cur = limit;
  rl.rlim_max = limit;
  if (vm_kib == 0 || setrlimit(RLIMIT_AS, &rl) != 0) std::_Exit(2);
  ModelStats stats;
  try {
    ModelWorker worker("m", 1000, 1, &stats);  // 1000 x 8 MiB stacks cannot fit
  } catch (const std::system_error&) {
    std::_Exit(0);
  }
  std::_Exit(3);
}

// Issue 12 case 6: a thread the system will not start fails the model's load, not the process.
TEST(ModelWorkerDeathTest, ThreadStartFailureThrowsAfterJoiningTheStartedOnes) {
  EXPECT_EXIT(StartTooManyThreadsInATightAddressSpace(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace inferd::server

// Batcher: how batches form (delay, preferred sizes, max_batch_size, incompatible requests),
// priorities, queue policies (REJECT, DELAY, max_queue_size, timeout override), cancellation,
// too-large requests, preserve_ordering. Items are fakes; the real gather / split over a model
// is tested end to end (tests/server/e2e_batching_test.cc).
#include "server/batcher.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace inferd::server {
namespace {

// What the fake items saw: the batches run (item ids), the drops.
struct Log {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::vector<int>> batches;
  std::vector<int> answered;  // ids in answer order
  std::vector<std::pair<int, absl::Status>> drops;
  bool gate_open = true;
  absl::Duration run_time = absl::ZeroDuration();

  void WaitFor(size_t answers) {
    std::unique_lock<std::mutex> l(mu);
    ASSERT_TRUE(cv.wait_for(l, std::chrono::seconds(10),
                            [&] { return answered.size() + drops.size() >= answers; }));
  }
  void Open() {
    std::lock_guard<std::mutex> l(mu);
    gate_open = true;
    cv.notify_all();
  }
};

class FakeItem final : public WorkItem {
 public:
  FakeItem(Log* log, int id, int64_t size = 1, std::string key = "x", int priority = 0)
      : log_(log), id_(id), size_(size), key_(std::move(key)), priority_(priority) {}
  void Run(absl::Duration) override {
    RunBatch({{this, absl::ZeroDuration()}}, [] {});
  }
  void Drop(const absl::Status& why) override {
    std::lock_guard<std::mutex> l(log_->mu);
    log_->drops.push_back({id_, why});
    log_->cv.notify_all();
  }
  bool Cancelled() const override { return cancelled_->load(); }
  int64_t batch_size() const override { return size_; }
  int priority() const override { return priority_; }
  absl::Duration requested_timeout() const override { return timeout_; }
  bool BatchesWith(const WorkItem& leader) const override {
    return static_cast<const FakeItem&>(leader).key_ == key_;
  }
  void RunBatch(absl::Span<const Queued> batch,
                const std::function<void()>& before_answer) override {
    std::vector<int> ids;
    for (const Queued& q : batch) ids.push_back(static_cast<FakeItem*>(q.item)->id_);
    {
      std::unique_lock<std::mutex> l(log_->mu);
      log_->batches.push_back(ids);
      log_->cv.notify_all();
      log_->cv.wait(l, [&] { return log_->gate_open; });
    }
    absl::SleepFor(log_->run_time);
    before_answer();
    std::lock_guard<std::mutex> l(log_->mu);
    for (int id : ids) log_->answered.push_back(id);
    log_->cv.notify_all();
  }

  std::shared_ptr<std::atomic<bool>> cancelled_ = std::make_shared<std::atomic<bool>>(false);
  absl::Duration timeout_;

 private:
  Log* log_;
  int id_;
  int64_t size_;
  std::string key_;
  int priority_;
};

absl::Status Put(Batcher& b, std::unique_ptr<FakeItem> item) {
  std::unique_ptr<WorkItem> w = std::move(item);
  return b.Submit(w);
}

DynamicBatching Policy(absl::Duration delay, std::vector<int> preferred = {}) {
  DynamicBatching p;
  p.max_queue_delay = delay;
  p.preferred_batch_sizes = std::move(preferred);
  return p;
}

TEST(BatcherTest, GathersUntilTheDelayThenRunsWhatItHas) {
  Log log;
  ModelStats stats;
  Batcher b("m", 8, Policy(absl::Milliseconds(200)), 1, 64, &stats);
  const absl::Time start = absl::Now();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(Put(b, std::make_unique<FakeItem>(&log, i)).ok());
  log.WaitFor(3);
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(190));  // it waited for more
  ASSERT_EQ(log.batches.size(), 1u);
  EXPECT_EQ(log.batches[0], (std::vector<int>{0, 1, 2}));
}

TEST(BatcherTest, MaxBatchSizeRunsAtOnceAndCountsEachRequestsRows) {
  Log log;
  ModelStats stats;
  Batcher b("m", 4, Policy(absl::Seconds(5)), 1, 64, &stats);
  const absl::Time start = absl::Now();
  ASSERT_TRUE(Put(b, std::make_unique<FakeItem>(&log, 0, 3)).ok());
  ASSERT_TRUE(Put(b, std::make_unique<FakeItem>(&log, 1, 1)).ok());
  log.WaitFor(2);
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));  // 3 + 1 = max: no wait for the delay
  EXPECT_EQ(log.batches[0], (std::vector<int>{0, 1}));
}

TEST(BatcherTest, PreferredSizeRunsTheLargestReachedPrefix) {
  Log log;
  log.gate_open = false;
  ModelStats stats;
  Batcher b("m", 8, Policy(absl::Seconds(5), {2, 4}), 1, 64, &stats);
  // A first batch holds the worker while five more queue up.
  ASSERT_TRUE(Put(b, std::make_unique<FakeItem>(&log, 0, 8)).ok());
  {
    std::unique_lock<std::mutex> l(log.mu);
    log.cv.wait(l, [&] { return log.batches.size() == 1; });
  }
  for (int i = 1; i <= 5; ++i) ASSERT_TRUE(Put(b, std::make_unique<FakeItem>(&log, i)).ok());
  const absl::Time start = absl::Now();
  log.Open();
  log.WaitFor(5);  // the batch of 8 and the preferred 4; the fifth waits for the delay
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  ASSERT_GE(log.batches.size(), 2u);
  EXPECT_EQ(log.batches[1], (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(b.queued(), 1);
}

TEST(BatcherTest, AnIncompatibleRequestStartsTheNextBatch) {
  Log log;
  ModelStats stats;
  Batcher b("m", 8, Policy(absl::Milliseconds(100)), 1, 64, &stats);
  log.gate_open = false;
  ASSERT_TRUE(Put(b, std::make_unique<FakeItem>(&log, 0)).ok());
  {
    std::unique_lock<std::mutex> l(log.mu);
    log.cv.wait(l, [&] { return log.batches.size() == 1; });
  }
  ASSERT_TRUE(Put(b, std::make_unique<FakeItem>(&log, 1, 1, "a")).ok());
  ASSERT_TRUE(Put(b, std::make_unique<FakeItem>(&log, 2, 1, "a")).ok());
  ASSERT_TRUE(Put(b, std::make_unique<FakeItem>(&log, 3, 1, "b")).ok());
  ASSERT_TRUE(Put(b, std::make_unique<FakeItem>(&log, 4, 1, "a")).ok());
  log.Open();
  log.WaitFor(5);
  ASSERT_EQ(log.batches.size(), 4u);
  EXPECT_EQ(log.batches[1], (std::vector<int>{1, 2}));
  EXPECT_EQ(log.batches[2], (std::vector<int>{3}));
  EXPECT_EQ(log.batches[3], (std::vector<int>{4}));
}

TEST(BatcherTest, TooLargeRequestsAndUnknownPrioritiesAreRefusedAtSubmit) {
  Log log;
  ModelStats stats;
  DynamicBatching p = Policy(absl::ZeroDuration());
  p.priority_levels = 2;
  p.default_priority_level = 2;
  Batcher b("m", 4, p, 1, 64, &stats);
  std::unique_ptr<WorkItem> big = std::make_unique<FakeItem>(&log, 0, 5);
  absl::Status s = b.Submit(big);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("is 5"), std::string::npos) << s;
  EXPECT_NE(s.message().find("max_batch_size 4"), std::string::npos) << s;
  EXPECT_NE(big, nullptr);  // stays with the caller
  std::unique_ptr<WorkItem> p3 = std::make_unique<FakeItem>(&log, 1, 1, "x", 3);
  EXPECT_EQ(b.Submit(p3).code(), absl::StatusCode::kInvalidArgument);
}

TEST(BatcherTest, HigherPriorityRunsFirst) {
  Log log;
  log.gate_open = false;
  ModelStats stats;
  DynamicBatching p = Policy(absl::ZeroDuration());
  p.priority_levels = 2;
  p.default_priority_level = 2;
  Batcher b("m", 1, p, 1, 64, &stats);
  ASSERT_TRUE(Put(b, std::make_unique<FakeItem>(&log, 0)).ok());
  {
    std::unique_lock<std::mutex> l(log.mu);
    log.cv.wait(l, [&] { return log.batches.size() == 1; });
  }
  ASSERT_TRUE(Put(b, std::make_unique<FakeItem>(&log, 1)).ok());  // default: 2
  ASSERT_TRUE(Put(b, std::make_unique<FakeItem>(&log, 2, 1, "x", 2)).ok());
  ASSERT_TRUE(Put(b, std::make_unique<FakeItem>(&log, 3, 1, "x", 1)).ok());
  log.Open();
  log.WaitFor(4);
  EXPECT_EQ(log.answered, (std::vector<int>{0, 3, 1, 2}));
}

TEST(BatcherTest, QueueTimeoutRejectsOrDelays) {
  Log log;
  log.gate_open = false;
  ModelStats stats;
  DynamicBatching p = Policy(absl::ZeroDuration());
  p.priority_levels = 2;
  p.default_priority_level = 2;
  p.default_queue_policy.default_timeout = absl::Milliseconds(20);  // level 2: REJECT
  QueuePolicy delay;
  delay.default_timeout = absl::Milliseconds(20);
  delay.reject_on_timeout = false;
  p.priority_queue_policy[1] = delay;
  Batcher b("m", 1, p, 1, 64, &stats);
  ASSERT_TRUE(Put(b, std::make_unique<FakeItem>(&log, 0, 1, "x", 1)).ok());
  {
    std::unique_lock<std::mutex> l(log.mu);
    log.cv.wait(l, [&] { return log.batches.size() == 1; });
  }
  ASSERT_TRUE(Put(b, std::make_unique<FakeItem>(&log, 1, 1, "x", 1)).ok());  // will time out
  ASSERT_TRUE(Put(b, std::make_unique<FakeItem>(&log, 2, 1, "x", 2)).ok());  // rejected
  absl::SleepFor(absl::Milliseconds(60));
  ASSERT_TRUE(Put(b, std::make_unique<FakeItem>(&log, 3, 1, "x", 1)).ok());  // in time
  log.Open();
  log.WaitFor(4);
  ASSERT_EQ(log.drops.size(), 1u);
  EXPECT_EQ(log.drops[0].first, 2);
  EXPECT_EQ(log.drops[0].second.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(log.drops[0].second.message().find("timed out in the queue after"), std::string::npos);
  EXPECT_EQ(log.answered, (std::vector<int>{0, 3, 1}));  // the delayed one after the others
}

TEST(BatcherTest, TimeoutOverrideAndMaxQueueSize) {
  Log log;
  log.gate_open = false;
  ModelStats stats;
  DynamicBatching p = Policy(absl::ZeroDuration());
  p.default_queue_policy.allow_timeout_override = true;
  p.default_queue_policy.max_queue_size = 2;
  Batcher b("m", 1, p, 1, 64, &stats);
  ASSERT_TRUE(Put(b, std::make_unique<FakeItem>(&log, 0)).ok());
  {
    std::unique_lock<std::mutex> l(log.mu);
    log.cv.wait(l, [&] { return log.batches.size() == 1; });
  }
  auto short_timeout = std::make_unique<FakeItem>(&log, 1);
  short_timeout->timeout_ = absl::Milliseconds(10);
  ASSERT_TRUE(Put(b, std::move(short_timeout)).ok());
  ASSERT_TRUE(Put(b, std::make_unique<FakeItem>(&log, 2)).ok());
  EXPECT_EQ(Put(b, std::make_unique<FakeItem>(&log, 3)).code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(stats.rejected_queue_full.load(), 1u);
  absl::SleepFor(absl::Milliseconds(40));
  log.Open();
  log.WaitFor(3);
  ASSERT_EQ(log.drops.size(), 1u);
  EXPECT_EQ(log.drops[0].first, 1);
  EXPECT_EQ(log.answered, (std::vector<int>{0, 2}));
}

TEST(BatcherTest, CancelledAndExpiredRequestsLeaveTheBatchBeforeTheRun) {
  Log log;
  ModelStats stats;
  Batcher b("m", 8, Policy(absl::Milliseconds(100)), 1, 64, &stats);
  auto cancelled = std::make_unique<FakeItem>(&log, 1);
  std::shared_ptr<std::atomic<bool>> flag = cancelled->cancelled_;
  ASSERT_TRUE(Put(b, std::make_unique<FakeItem>(&log, 0)).ok());
  ASSERT_TRUE(Put(b, std::move(cancelled)).ok());
  ASSERT_TRUE(Put(b, std::make_unique<FakeItem>(&log, 2)).ok());
  flag->store(true);
  log.WaitFor(3);
  ASSERT_EQ(log.drops.size(), 1u);
  EXPECT_EQ(log.drops[0].first, 1);
  EXPECT_EQ(log.drops[0].second.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(log.batches[0], (std::vector<int>{0, 2}));
  EXPECT_EQ(stats.dropped_cancelled.load(), 1u);
}

TEST(BatcherTest, PreserveOrderingAnswersInFormationOrderAcrossRuns) {
  Log log;
  ModelStats stats;
  DynamicBatching p = Policy(absl::ZeroDuration());
  p.preserve_ordering = true;
  Batcher b("m", 1, p, 4, 64, &stats);  // four runs at once, each of one request
  log.run_time = absl::Milliseconds(5);
  for (int i = 0; i < 16; ++i) ASSERT_TRUE(Put(b, std::make_unique<FakeItem>(&log, i)).ok());
  log.WaitFor(16);
  std::vector<int> expected;
  for (int i = 0; i < 16; ++i) expected.push_back(i);
  EXPECT_EQ(log.answered, expected);
}

TEST(BatcherTest, DrainRunsWhatIsQueuedWithoutWaitingForTheDelay) {
  Log log;
  ModelStats stats;
  auto b = std::make_unique<Batcher>("m", 8, Policy(absl::Seconds(9)), 2, 64, &stats);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(Put(*b, std::make_unique<FakeItem>(&log, i)).ok());
  const absl::Time start = absl::Now();
  b->Drain();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_EQ(log.answered.size(), 3u);
  EXPECT_EQ(Put(*b, std::make_unique<FakeItem>(&log, 9)).code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace inferd::server

#include "engine/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace inferd::engine {
namespace {

TEST(ThreadPool, CoversTheRangeExactlyOnce) {
  ThreadPool pool(4);
  for (int64_t n : {1, 7, 100, 10007}) {
    std::vector<std::atomic<int>> hits(n);
    pool.ParallelFor(n, 3, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[i]++;
    });
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << n << " " << i;
  }
}

TEST(ThreadPool, ConcurrentCallersBothFinish) {
  ThreadPool pool(3);
  std::atomic<int64_t> total{0};
  auto work = [&] {
    for (int k = 0; k < 200; ++k) {
      pool.ParallelFor(1000, 10, [&](int64_t b, int64_t e) { total += e - b; });
    }
  };
  std::thread a(work), b(work);
  a.join();
  b.join();
  EXPECT_EQ(total.load(), 2 * 200 * 1000);
}

TEST(ThreadPool, SingleThreadRunsInline) {
  ThreadPool pool(1);
  const auto me = std::this_thread::get_id();
  pool.ParallelFor(100, 1, [&](int64_t, int64_t) { EXPECT_EQ(std::this_thread::get_id(), me); });
}

}  // namespace
}  // namespace inferd::engine

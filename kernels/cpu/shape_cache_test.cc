// ShapeCache: hits return the same entry, keys separate shapes and thread counts, pinned entries
// survive eviction, the bound holds, failures are not cached, concurrent lookups build once.
#include "kernels/cpu/shape_cache.h"

#include <atomic>
#include <initializer_list>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace inferd::kernels::cpu {
namespace {

using engine::Shape;
using Cache = ShapeCache<int>;

// Shapes and the pointers a lookup takes, alive for the full expression that uses them.
class Refs {
 public:
  Refs(std::initializer_list<Shape> shapes) : shapes_(shapes) {
    for (const Shape& s : shapes_) refs_.push_back(&s);
  }
  operator ShapeRefs() const { return refs_; }

 private:
  std::vector<Shape> shapes_;
  std::vector<const Shape*> refs_;
};

absl::StatusOr<std::shared_ptr<const int>> Make(int v, int* builds) {
  ++*builds;
  return std::make_shared<const int>(v);
}

TEST(ShapeCacheTest, HitsAndKeys) {
  Cache cache;
  int builds = 0;
  auto a = cache.GetOrCreate(Refs({Shape{2, 3}}), 1, [&] { return Make(1, &builds); });
  auto b = cache.GetOrCreate(Refs({Shape{2, 3}}), 1, [&] { return Make(2, &builds); });
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->get(), b->get());
  EXPECT_EQ(builds, 1);
  // Different thread count, different shapes, same dims split differently: distinct keys.
  EXPECT_EQ(**cache.GetOrCreate(Refs({Shape{2, 3}}), 2, [&] { return Make(3, &builds); }), 3);
  EXPECT_EQ(**cache.GetOrCreate(Refs({Shape{2}, Shape{3}}), 1, [&] { return Make(4, &builds); }),
            4);
  EXPECT_EQ(**cache.GetOrCreate(Refs({Shape{2, 3}, Shape{}}), 1, [&] { return Make(5, &builds); }),
            5);
  EXPECT_EQ(builds, 4);
  EXPECT_EQ(cache.size(), 4u);
}

TEST(ShapeCacheTest, BoundedWithPinnedEntriesKept) {
  Cache cache;
  int builds = 0;
  cache.Pin(Refs({Shape{1}}), 1, std::make_shared<const int>(-1));
  auto first = cache.GetOrCreate(Refs({Shape{100}}), 1, [&] { return Make(100, &builds); });
  for (int i = 0; i < 3 * static_cast<int>(Cache::kCapacity); ++i) {
    ASSERT_TRUE(
        cache.GetOrCreate(Refs({Shape{i + 200}}), 1, [&] { return Make(i, &builds); }).ok());
  }
  EXPECT_EQ(cache.size(), Cache::kCapacity + 1);
  EXPECT_EQ(**first, 100);  // an evicted entry stays valid for its holders
  EXPECT_EQ(**cache.GetOrCreate(Refs({Shape{1}}), 1, [&] { return Make(0, &builds); }), -1);
}

TEST(ShapeCacheTest, FailuresAreNotCached) {
  Cache cache;
  int attempts = 0;
  auto fail = [&]() -> absl::StatusOr<std::shared_ptr<const int>> {
    ++attempts;
    return absl::InvalidArgumentError("bad shapes");
  };
  EXPECT_FALSE(cache.GetOrCreate(Refs({Shape{3}}), 1, fail).ok());
  EXPECT_FALSE(cache.GetOrCreate(Refs({Shape{3}}), 1, fail).ok());
  EXPECT_EQ(attempts, 2);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(ShapeCacheTest, ConcurrentLookupsBuildOnce) {
  Cache cache;
  std::atomic<int> builds{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) {
        auto e = cache.GetOrCreate(Refs({Shape{i % 4}}), 1, [&] {
          ++builds;
          return absl::StatusOr<std::shared_ptr<const int>>(std::make_shared<const int>(i % 4));
        });
        EXPECT_TRUE(e.ok());
        EXPECT_EQ(**e, i % 4);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(builds.load(), 4);
}

// The in-place comparison orders exactly as the materialized keys do, so map lookups by view find
// what was inserted by key.
TEST(ShapeCacheTest, ViewComparisonMatchesKeyOrder) {
  const std::vector<std::vector<Shape>> sets = {{},
                                                {Shape{}},
                                                {Shape{2}},
                                                {Shape{2, 3}},
                                                {Shape{2}, Shape{3}},
                                                {Shape{2, 3}, Shape{}},
                                                {Shape{3}},
                                                {Shape{1, 2, 3, 4, 5, 6, 7}},
                                                {Shape{2, 3}, Shape{4}}};
  for (const auto& a : sets) {
    for (const auto& b : sets) {
      for (int ta : {1, 2}) {
        std::vector<const Shape*> ra, rb;
        for (const Shape& s : a) ra.push_back(&s);
        for (const Shape& s : b) rb.push_back(&s);
        const Cache::Key ka = Cache::MakeKey(ra, ta), kb = Cache::MakeKey(rb, 1);
        const int want = ka < kb ? -1 : (kb < ka ? 1 : 0);
        const int got = shape_cache_internal::Compare(ka, {rb, 1});
        EXPECT_EQ((got > 0) - (got < 0), want);
      }
    }
  }
}

TEST(ShapeCacheTest, PinnedEntriesAreFoundFirst) {
  Cache cache;
  int builds = 0;
  cache.Pin(Refs({Shape{4, 4}}), 2, std::make_shared<const int>(7));
  EXPECT_EQ(**cache.GetOrCreate(Refs({Shape{4, 4}}), 2, [&] { return Make(0, &builds); }), 7);
  EXPECT_EQ(**cache.GetOrCreate(Refs({Shape{4, 4}}), 1, [&] { return Make(1, &builds); }), 1);
  EXPECT_EQ(builds, 1);
  // Pinning the same shapes again replaces the entry.
  cache.Pin(Refs({Shape{4, 4}}), 2, std::make_shared<const int>(8));
  EXPECT_EQ(**cache.GetOrCreate(Refs({Shape{4, 4}}), 2, [&] { return Make(0, &builds); }), 8);
  EXPECT_EQ(cache.size(), 2u);
}

}  // namespace
}  // namespace inferd::kernels::cpu

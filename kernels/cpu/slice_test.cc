// Slice against a naive reference written from the spec's index and clamping rules: random
// starts/ends/steps (negative steps, out-of-range and INT64 extremes clamped), omitted and
// negative axes, int32 and int64 index inputs, opset 1 attributes, threads, errors.
#include <limits>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/testing/kernel_tester.h"
#include "gtest/gtest.h"
#include "kernels/cpu/testing/kernel_runner.h"
#include "kernels/cpu/testing/reference.h"

namespace inferd::kernels::cpu {
namespace {

using engine::Shape;
using engine::testing::KernelTester;
using engine::testing::Values;
using testing::CpuRegistry;
using testing::Strides;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// The indices the spec selects: negative values count from the end, then starts clamp to
// [0, dim] ([0, dim-1] for negative steps) and ends to [0, dim] ([-1, dim-1]). (Python differs
// for a start before the beginning with a negative step: it selects nothing, the spec index 0.)
std::vector<int64_t> SpecRange(int64_t start, int64_t end, int64_t step, int64_t dim) {
  auto fix = [&](int64_t v, int64_t lo, int64_t hi) {
    if (v < 0) v += dim;
    return std::min(std::max(v, lo), hi);
  };
  std::vector<int64_t> out;
  if (step > 0) {
    for (int64_t i = fix(start, 0, dim), e = fix(end, 0, dim); i < e; i += step) {
      out.push_back(i);
      if (step >= e - i) break;  // the next index would pass the end (without overflowing)
    }
  } else {
    for (int64_t i = fix(start, 0, dim - 1), e = fix(end, -1, dim - 1); i > e; i += step) {
      out.push_back(i);
      if (step <= e - i) break;
    }
  }
  return out;
}

struct SliceCase {
  Shape shape;
  std::vector<int64_t> starts, ends, axes, steps;  // axes / steps may be empty
};

std::vector<float> RefSlice(const std::vector<float>& x, const SliceCase& c, Shape* out_shape) {
  const size_t rank = c.shape.rank();
  std::vector<std::vector<int64_t>> picks(rank);
  for (size_t d = 0; d < rank; ++d) {
    for (int64_t i = 0; i < c.shape[d]; ++i) picks[d].push_back(i);
  }
  for (size_t i = 0; i < c.starts.size(); ++i) {
    int64_t a = c.axes.empty() ? static_cast<int64_t>(i) : c.axes[i];
    if (a < 0) a += rank;
    picks[a] = SpecRange(c.starts[i], c.ends[i], c.steps.empty() ? 1 : c.steps[i], c.shape[a]);
  }
  *out_shape = Shape{};
  int64_t total = 1;
  for (size_t d = 0; d < rank; ++d) {
    out_shape->push_back(static_cast<int64_t>(picks[d].size()));
    total *= picks[d].size();
  }
  const std::vector<int64_t> st = Strides(c.shape);
  std::vector<float> out;
  for (int64_t i = 0; i < total; ++i) {
    int64_t rest = i, off = 0;
    for (size_t d = rank; d-- > 0;) {
      off += picks[d][rest % picks[d].size()] * st[d];
      rest /= picks[d].size();
    }
    out.push_back(x[off]);
  }
  return out;
}

template <typename Index>
void CheckSlice(const SliceCase& c, int opset = 13, int threads = 1) {
  std::vector<float> x(c.shape.NumElements());
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  KernelTester t("Slice", opset);
  t.Input<float>(c.shape, x).Threads(threads);
  auto vec = [](const std::vector<int64_t>& v) {
    std::vector<Index> r;
    for (int64_t e : v) {
      r.push_back(static_cast<Index>(std::clamp<int64_t>(e, std::numeric_limits<Index>::min(),
                                                         std::numeric_limits<Index>::max())));
    }
    return r;
  };
  const int64_t n = static_cast<int64_t>(c.starts.size());
  if (opset >= 10) {
    t.Input<Index>({n}, vec(c.starts));
    t.Input<Index>({n}, vec(c.ends));
    if (!c.axes.empty() || !c.steps.empty()) {
      std::vector<int64_t> axes = c.axes;
      if (axes.empty()) {
        for (int64_t i = 0; i < n; ++i) axes.push_back(i);
      }
      t.Input<Index>({n}, vec(axes));
    }
    if (!c.steps.empty()) t.Input<Index>({n}, vec(c.steps));
  } else {
    t.Attr("starts", c.starts).Attr("ends", c.ends);
    if (!c.axes.empty()) t.Attr("axes", c.axes);
  }
  SliceCase clamped = c;  // what the kernel sees with int32 indices
  for (auto* v : {&clamped.starts, &clamped.ends, &clamped.steps}) {
    for (int64_t& e : *v) e = static_cast<int64_t>(vec({e})[0]);
  }
  Shape expected_shape;
  const std::vector<float> expected = RefSlice(x, clamped, &expected_shape);
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  const std::string what =
      absl::StrCat(c.shape.ToString(), " starts [", absl::StrJoin(c.starts, ","), "] ends [",
                   absl::StrJoin(c.ends, ","), "] axes [", absl::StrJoin(c.axes, ","), "] steps [",
                   absl::StrJoin(c.steps, ","), "]");
  EXPECT_EQ((*out)[0].shape().ToString(), expected_shape.ToString()) << what;
  EXPECT_EQ(Values<float>((*out)[0]), expected) << what;
}

TEST(SliceTest, Basics) {
  CheckSlice<int64_t>({{20, 10, 5}, {0, 0}, {3, 10}, {0, 1}, {1, 1}});
  CheckSlice<int64_t>({{20, 10, 5}, {0}, {-1}, {1}, {}});
  CheckSlice<int64_t>({{20, 10, 5}, {1}, {1000}, {1}, {}});     // end clamped
  CheckSlice<int64_t>({{20, 10, 5}, {1000}, {1001}, {1}, {}});  // start clamped: empty
  CheckSlice<int64_t>({{20, 10, 5}, {0, 0, 3}, {20, 10, 4}, {}, {}});
  CheckSlice<int64_t>({{20, 10, 5}, {0, 0}, {3, 10}, {0, -2}, {}});  // negative axis
  CheckSlice<int64_t>({{20, 10, 5}, {20, 10, 4}, {0, 0, 1}, {}, {-1, -3, -5}});
  CheckSlice<int64_t>({{3, 4}, {-1, kMax}, {kMin, kMin}, {0, 1}, {-1, -1}});  // full reverse
  CheckSlice<int64_t>({{3, 4}, {0}, {kMax}, {1}, {kMax}});  // a huge step: one element
  CheckSlice<int64_t>({{3, 4}, {kMax}, {0}, {1}, {kMin}});  // a huge negative step
  CheckSlice<int32_t>({{3, 4}, {-1}, {-1000}, {1}, {-2}});
  CheckSlice<int64_t>({{0, 4}, {0}, {3}, {1}, {}});  // empty input
  CheckSlice<int64_t>({{5, 0}, {4}, {0}, {0}, {-1}});
  CheckSlice<int64_t>({{20, 10, 5}, {1, 2}, {-1, 7}, {2, 0}, {}}, 1);  // opset 1 attributes
  CheckSlice<int64_t>({{20, 10, 5}, {1, 2}, {kMax, 7}, {}, {}}, 9);
}

TEST(SliceTest, RandomAgainstReference) {
  std::mt19937 gen(7);
  auto uni = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(gen);
  };
  for (int iter = 0; iter < 300; ++iter) {
    SliceCase c;
    const int rank = static_cast<int>(uni(1, 4));
    for (int d = 0; d < rank; ++d) c.shape.push_back(uni(0, 6));
    std::vector<int64_t> axes(rank);
    for (int d = 0; d < rank; ++d) axes[d] = d;
    std::shuffle(axes.begin(), axes.end(), gen);
    const int n = static_cast<int>(uni(1, rank));
    for (int i = 0; i < n; ++i) {
      auto pick = [&] {
        const int64_t r = uni(0, 20);
        return r == 0 ? kMax : r == 1 ? kMin : uni(-8, 8);
      };
      c.starts.push_back(pick());
      c.ends.push_back(pick());
      c.axes.push_back(uni(0, 1) ? axes[i] : axes[i] - rank);
      int64_t step = uni(-3, 3);
      c.steps.push_back(step == 0 ? 1 : step);
    }
    SCOPED_TRACE("iteration " + std::to_string(iter));
    if (iter % 2) {
      CheckSlice<int64_t>(c);
    } else {
      CheckSlice<int32_t>(c);
    }
  }
}

TEST(SliceTest, LargeAndThreaded) {
  CheckSlice<int64_t>({{64, 512, 3}, {1, 5}, {63, 500}, {0, 1}, {1, 1}}, 13, 2);
  CheckSlice<int64_t>({{64, 512, 3}, {63, -1}, {0, 0}, {0, 2}, {-2, -1}}, 13, 2);
  CheckSlice<int64_t>({{400000}, {3}, {399990}, {}, {}}, 13, 2);
}

TEST(SliceTest, Errors) {
  auto run = [](SliceCase c) {
    KernelTester t("Slice", 13);
    const int64_t n = static_cast<int64_t>(c.starts.size());
    t.Input<float>(c.shape, std::vector<float>(c.shape.NumElements()))
        .Input<int64_t>({n}, c.starts)
        .Input<int64_t>({static_cast<int64_t>(c.ends.size())}, c.ends)
        .Input<int64_t>({static_cast<int64_t>(c.axes.size())}, c.axes)
        .Input<int64_t>({static_cast<int64_t>(c.steps.size())}, c.steps);
    return t.Run(CpuRegistry()).status();
  };
  absl::Status s = run({{3, 4}, {0}, {2}, {1}, {0}});
  EXPECT_EQ(s.message(), "node 'test_Slice' (Slice): step for axis 1 is 0");
  s = run({{3, 4}, {0, 0}, {2, 2}, {1, -1}, {1, 1}});
  EXPECT_EQ(s.message(), "node 'test_Slice' (Slice): axis 1 is repeated");
  s = run({{3, 4}, {0}, {2, 3}, {1}, {1}});
  EXPECT_NE(s.message().find("must have the same length"), std::string::npos);
  s = run({{3, 4}, {0}, {2}, {2}, {1}});
  EXPECT_NE(s.message().find("axes entry 2 is out of range"), std::string::npos);
  KernelTester missing("Slice", 9);
  missing.Input<float>({2}, {1, 2});
  EXPECT_FALSE(missing.Run(CpuRegistry()).ok());
}

}  // namespace
}  // namespace inferd::kernels::cpu

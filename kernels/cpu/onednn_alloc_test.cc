// The oneDNN-backed kernels' Compute (and the recurrent kernels', on both their oneDNN and their
// own code paths) allocates nothing of ours on the steady path: after a warm-up, repeated runs with
// the same shapes (plan pinned at load, or a cache hit for shapes unknown at load), at 1 and 2
// threads, call neither the global operator new nor malloc from our code. Every operator new and
// malloc-family call in the process is counted while the runs go (this binary replaces operator new
// and interposes malloc, as memory/execution_arena_test.cc's
// MetadataIsAllocatedOnGrowthNeverPerAllocation does for operator new), and attributed by its
// return address: inside libdnnl.so it is oneDNN's own (dnnl_primitive_execute still builds a
// small argument map per call), anywhere else it is ours and fails the test. oneDNN's counts are
// printed and recorded as test properties (dnnl_new_per_run, dnnl_malloc_per_run).
#include <dlfcn.h>
#include <link.h>

#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/kernel.h"
#include "engine/tensor.h"
#include "engine/testing/kernel_tester.h"
#include "engine/thread_pool.h"
#include "gtest/gtest.h"
#include "kernels/cpu/testing/bench_support.h"
#include "kernels/cpu/testing/kernel_runner.h"
#include "kernels/cpu/testing/reference.h"

// --- counting allocator
// ---------------------------------------------------------------------------

extern "C" void* __libc_malloc(size_t);
extern "C" void* __libc_calloc(size_t, size_t);
extern "C" void* __libc_realloc(void*, size_t);
extern "C" void* __libc_memalign(size_t, size_t);
extern "C" void __libc_free(void*);

namespace {

std::atomic<bool> g_counting{false};
std::atomic<int64_t> g_ours_new{0}, g_dnnl_new{0}, g_ours_malloc{0}, g_dnnl_malloc{0};
// libdnnl.so's mapped address range, found before counting starts.
uintptr_t g_dnnl_begin = 0, g_dnnl_end = 0;

bool FromDnnl(const void* caller) {
  const auto a = reinterpret_cast<uintptr_t>(caller);
  return a >= g_dnnl_begin && a < g_dnnl_end;
}

// The first callers counted as ours, for the failure message.
std::array<std::atomic<const void*>, 8> g_ours_callers{};
std::atomic<int> g_ours_recorded{0};

void RecordOurs(const void* caller) {
  const int i = g_ours_recorded.fetch_add(1, std::memory_order_relaxed);
  if (i < static_cast<int>(g_ours_callers.size())) g_ours_callers[i] = caller;
}

// "libfoo.so.1(symbol+0x12)" for each recorded caller.
std::string OursCallers() {
  std::string out;
  const int n = std::min<int>(g_ours_recorded.load(), static_cast<int>(g_ours_callers.size()));
  for (int i = 0; i < n; ++i) {
    const void* caller = g_ours_callers[i].load();
    Dl_info info{};
    if (dladdr(caller, &info) != 0) {
      absl::StrAppend(&out, "\n  ", info.dli_fname != nullptr ? info.dli_fname : "?", "(",
                      info.dli_sname != nullptr ? info.dli_sname : "?", "+0x",
                      absl::Hex(reinterpret_cast<uintptr_t>(caller) -
                                reinterpret_cast<uintptr_t>(
                                    info.dli_saddr != nullptr ? info.dli_saddr : info.dli_fbase)),
                      ")");
    } else {
      absl::StrAppend(&out, "\n  ", absl::Hex(reinterpret_cast<uintptr_t>(caller)));
    }
  }
  return out;
}

void CountNew(const void* caller) {
  if (!g_counting.load(std::memory_order_relaxed)) return;
  if (FromDnnl(caller)) {
    g_dnnl_new.fetch_add(1, std::memory_order_relaxed);
  } else {
    g_ours_new.fetch_add(1, std::memory_order_relaxed);
    RecordOurs(caller);
  }
}

void CountMalloc(const void* caller) {
  if (!g_counting.load(std::memory_order_relaxed)) return;
  if (FromDnnl(caller)) {
    g_dnnl_malloc.fetch_add(1, std::memory_order_relaxed);
  } else {
    g_ours_malloc.fetch_add(1, std::memory_order_relaxed);
    RecordOurs(caller);
  }
}

void* NewImpl(size_t n, size_t align, const void* caller) {
  CountNew(caller);
  void* p = align <= alignof(std::max_align_t) ? __libc_malloc(n ? n : 1)
                                               : __libc_memalign(align, n ? n : 1);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

int FindDnnl(dl_phdr_info* info, size_t, void*) {
  if (info->dlpi_name == nullptr || std::strstr(info->dlpi_name, "libdnnl") == nullptr) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    const uintptr_t begin = info->dlpi_addr + ph.p_vaddr, end = begin + ph.p_memsz;
    if (g_dnnl_begin == 0 || begin < g_dnnl_begin) g_dnnl_begin = begin;
    g_dnnl_end = std::max(g_dnnl_end, end);
  }
  return 1;
}

}  // namespace

void* operator new(size_t n) { return NewImpl(n, 0, __builtin_return_address(0)); }
void* operator new[](size_t n) { return NewImpl(n, 0, __builtin_return_address(0)); }
void* operator new(size_t n, std::align_val_t a) {
  return NewImpl(n, static_cast<size_t>(a), __builtin_return_address(0));
}
void* operator new[](size_t n, std::align_val_t a) {
  return NewImpl(n, static_cast<size_t>(a), __builtin_return_address(0));
}
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  CountNew(__builtin_return_address(0));
  return __libc_malloc(n ? n : 1);
}
void* operator new[](size_t n, const std::nothrow_t&) noexcept {
  CountNew(__builtin_return_address(0));
  return __libc_malloc(n ? n : 1);
}
void operator delete(void* p) noexcept { __libc_free(p); }
void operator delete[](void* p) noexcept { __libc_free(p); }
void operator delete(void* p, size_t) noexcept { __libc_free(p); }
void operator delete[](void* p, size_t) noexcept { __libc_free(p); }
void operator delete(void* p, std::align_val_t) noexcept { __libc_free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { __libc_free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { __libc_free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { __libc_free(p); }

extern "C" {
void* malloc(size_t n) {
  CountMalloc(__builtin_return_address(0));
  return __libc_malloc(n);
}
void free(void* p) { __libc_free(p); }
void* calloc(size_t a, size_t b) {
  CountMalloc(__builtin_return_address(0));
  return __libc_calloc(a, b);
}
void* realloc(void* p, size_t n) {
  CountMalloc(__builtin_return_address(0));
  return __libc_realloc(p, n);
}
int posix_memalign(void** p, size_t align, size_t n) {
  CountMalloc(__builtin_return_address(0));
  *p = __libc_memalign(align, n);
  return *p != nullptr ? 0 : ENOMEM;
}
void* aligned_alloc(size_t align, size_t n) {
  CountMalloc(__builtin_return_address(0));
  return __libc_memalign(align, n);
}
void* memalign(size_t align, size_t n) {
  CountMalloc(__builtin_return_address(0));
  return __libc_memalign(align, n);
}
}

// --- the test
// -------------------------------------------------------------------------------------

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::Shape;
using engine::Tensor;
using engine::testing::KernelTester;
using engine::testing::TestTensor;
using testing::BenchContext;
using testing::CpuRegistry;
using testing::RandomFloats;

struct Node {
  std::string name;
  KernelTester spec;
  std::vector<TestTensor> inputs;
};

Node Make(std::string name, KernelTester spec, std::vector<TestTensor> inputs, bool shapes_known,
          bool constant_second) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    spec.Input(inputs[i], /*shape_known=*/shapes_known || i > 0,
               /*constant=*/constant_second && i > 0);
  }
  return Node{std::move(name), std::move(spec), std::move(inputs)};
}

TestTensor Floats(const Shape& s, uint32_t seed) {
  return TestTensor::Of<float>(s, RandomFloats(s.NumElements(), seed));
}

std::vector<Node> Nodes(bool shapes_known) {
  std::vector<Node> nodes;
  const bool k = shapes_known;
  nodes.push_back(Make("MatMul, constant B", KernelTester("MatMul", 13),
                       {Floats({64, 128}, 1), Floats({128, 96}, 2)}, k, true));
  nodes.push_back(Make("MatMul, batched", KernelTester("MatMul", 13),
                       {Floats({4, 16, 32}, 3), Floats({4, 32, 16}, 4)}, k, false));
  nodes.push_back(Make("FusedMatMul", KernelTester("FusedMatMul", 1, "com.inferd"),
                       {Floats({8, 32}, 5), Floats({32, 24}, 6), Floats({24}, 7)}, k, true));
  nodes.push_back(Make("Gemm transB, bias",
                       std::move(KernelTester("Gemm", 13).Attr("transB", int64_t{1})),
                       {Floats({16, 64}, 8), Floats({32, 64}, 9), Floats({32}, 10)}, k, true));
  nodes.push_back(Make("Gemm alpha beta, matrix C",
                       std::move(KernelTester("Gemm", 13).Attr("alpha", 0.5f).Attr("beta", 2.0f)),
                       {Floats({16, 64}, 11), Floats({64, 32}, 12), Floats({16, 32}, 13)}, k,
                       false));
  nodes.push_back(
      Make("Conv 3x3, blocked",
           std::move(KernelTester("Conv", 11).Attr("pads", std::vector<int64_t>{1, 1, 1, 1})),
           {Floats({1, 16, 28, 28}, 14), Floats({32, 16, 3, 3}, 15), Floats({32}, 16)}, k, true));
  nodes.push_back(Make("Conv 1x1, plain, runtime W", KernelTester("Conv", 11),
                       {Floats({1, 64, 14, 14}, 17), Floats({64, 64, 1, 1}, 18)}, k, false));
  nodes.push_back(
      Make("ConvTranspose stride 2",
           std::move(KernelTester("ConvTranspose", 11).Attr("strides", std::vector<int64_t>{2, 2})),
           {Floats({1, 8, 10, 10}, 19), Floats({8, 4, 3, 3}, 20), Floats({4}, 21)}, k, true));
  nodes.push_back(Make("MaxPool",
                       std::move(KernelTester("MaxPool", 12)
                                     .Attr("kernel_shape", std::vector<int64_t>{2, 2})
                                     .Attr("strides", std::vector<int64_t>{2, 2})),
                       {Floats({2, 16, 16, 16}, 22)}, k, false));
  nodes.push_back(Make("AveragePool, ceil, include pad",
                       std::move(KernelTester("AveragePool", 11)
                                     .Attr("kernel_shape", std::vector<int64_t>{3, 3})
                                     .Attr("strides", std::vector<int64_t>{2, 2})
                                     .Attr("ceil_mode", int64_t{1})
                                     .Attr("count_include_pad", int64_t{1})),
                       {Floats({2, 8, 16, 16}, 23)}, k, false));
  nodes.push_back(Make("GlobalAveragePool", KernelTester("GlobalAveragePool", 1),
                       {Floats({2, 32, 7, 7}, 24)}, k, false));
  // Recurrent: oneDNN's primitives (constant weights, default activations), and own code (a named
  // activation; uneven sequence_lens), large enough to run as parts on two threads.
  const int64_t t = 8, n = 8, i = 32, c = 64;
  nodes.push_back(Make("LSTM bidirectional, oneDNN",
                       std::move(KernelTester("LSTM", 14)
                                     .Attr("hidden_size", c)
                                     .Attr("direction", std::string("bidirectional"))),
                       {Floats({t, n, i}, 25), Floats({2, 4 * c, i}, 26), Floats({2, 4 * c, c}, 27),
                        Floats({2, 8 * c}, 28)},
                       k, true));
  nodes.push_back(Make(
      "GRU linear_before_reset, oneDNN",
      std::move(
          KernelTester("GRU", 14).Attr("hidden_size", c).Attr("linear_before_reset", int64_t{1})),
      {Floats({t, n, i}, 29), Floats({1, 3 * c, i}, 30), Floats({1, 3 * c, c}, 31)}, k, true));
  nodes.push_back(Make("RNN LeakyRelu, own code",
                       std::move(KernelTester("RNN", 14)
                                     .Attr("hidden_size", c)
                                     .Attr("activations", std::vector<std::string>{"LeakyRelu"})),
                       {Floats({t, n, i}, 32), Floats({1, c, i}, 33), Floats({1, c, c}, 34)}, k,
                       true));
  nodes.push_back(Make("LSTM sequence_lens, own code",
                       std::move(KernelTester("LSTM", 14).Attr("hidden_size", c)),
                       {Floats({t, n, i}, 35), Floats({1, 4 * c, i}, 36), Floats({1, 4 * c, c}, 37),
                        Floats({1, 8 * c}, 38),
                        TestTensor::Of<int32_t>({n}, std::vector<int32_t>{8, 3, 5, 8, 1, 7, 8, 2})},
                       k, true));
  return nodes;
}

// Makes every thread of `pool` run a chunk that sets its OpenMP team size, as the kernels do on
// whichever thread runs a part: the first call on a thread allocates libgomp's per-thread state
// once. (A warm-up alone may leave a worker idle: the caller takes the chunks a slow-waking worker
// has not claimed yet.)
// Before counting, every pool thread runs the kernel once (all its parts, on a one-thread pool
// of its own): oneDNN and OpenMP make per-thread state (OpenMP's ICVs for ScopedOmpThreads,
// thread_local objects registered with __cxa_thread_atexit) on a thread's first primitive
// execution, once per thread, and an ordinary warm-up run may leave a pool thread without a part
// (the caller takes every part when the worker wakes late, as on a loaded machine).
void WarmEveryPoolThread(engine::ThreadPool& pool, const engine::OpKernel& kernel,
                         const std::vector<const Tensor*>& inputs,
                         const std::vector<Shape>& shapes) {
  std::atomic<bool> ok{true};
  const int n = pool.num_threads();
  // Repeated until every pool thread has taken part: on a loaded machine a worker may wake after
  // the caller has taken every chunk, and its first omp_set_num_threads in a measured run would
  // allocate (libgomp's per-thread ICVs) and count as ours.
  std::mutex mu;
  std::set<std::thread::id> seen;
  for (int attempt = 0; attempt < 50 && static_cast<int>(seen.size()) < n; ++attempt) {
    std::atomic<int> started{0};
    pool.ParallelFor(n, 1, [&](int64_t begin, int64_t end) {
      {
        std::lock_guard<std::mutex> lock(mu);
        seen.insert(std::this_thread::get_id());
      }
      omp_set_num_threads(1);
      started.fetch_add(static_cast<int>(end - begin));
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      while (started.load() < n && std::chrono::steady_clock::now() < deadline) {
      }
      engine::ThreadPool inline_pool(1);
      BenchContext ctx(inputs, /*outputs=*/1, inline_pool);
      ctx.Declare(kernel.DeclareWorkspaceRequirements(shapes));
      for (int64_t i = begin; i < end; ++i) ok = ok && kernel.Compute(ctx).ok();
    });
  }
  ASSERT_EQ(static_cast<int>(seen.size()), n) << "a pool thread never took part in the warm-up";
  ASSERT_TRUE(ok.load()) << "warm-up on a pool thread failed";
}

void CheckSteadyState(bool shapes_known) {
  ASSERT_NE(dl_iterate_phdr(FindDnnl, nullptr), 0) << "libdnnl.so is not loaded";
  constexpr int kRuns = 20;
  for (int threads : {1, 2}) {
    for (Node& node : Nodes(shapes_known)) {
      SCOPED_TRACE(absl::StrCat(node.name, ", threads ", threads,
                                shapes_known ? ", plan pinned at load" : ", shapes cached"));
      node.spec.Threads(threads);
      absl::StatusOr<std::unique_ptr<engine::OpKernel>> kernel = node.spec.Create(CpuRegistry());
      ASSERT_TRUE(kernel.ok()) << kernel.status();
      std::vector<Tensor> views;
      std::vector<const Tensor*> ptrs;
      std::vector<Shape> shapes;
      views.reserve(node.inputs.size());
      for (const TestTensor& t : node.inputs) {
        views.push_back(Tensor::Borrowed(t.type, t.shape, t.bytes.data()));
        ptrs.push_back(&views.back());
        shapes.push_back(t.shape);
      }
      engine::ThreadPool pool(threads);
      WarmEveryPoolThread(pool, **kernel, ptrs, shapes);
      BenchContext ctx(ptrs, /*outputs=*/1, pool);
      ctx.Declare((*kernel)->DeclareWorkspaceRequirements(shapes));
      for (int i = 0; i < 5; ++i) ASSERT_TRUE((*kernel)->Compute(ctx).ok());  // warm-up
      g_ours_new = g_dnnl_new = g_ours_malloc = g_dnnl_malloc = 0;
      g_ours_recorded = 0;
      g_counting = true;
      absl::Status status;
      for (int i = 0; i < kRuns && status.ok(); ++i) status = (*kernel)->Compute(ctx);
      g_counting = false;
      ASSERT_TRUE(status.ok()) << status;
      EXPECT_EQ(g_ours_new.load(), 0) << "operator new calls from our code:" << OursCallers();
      EXPECT_EQ(g_ours_malloc.load(), 0) << "malloc-family calls from our code:" << OursCallers();
      const double dnnl_new = double(g_dnnl_new.load()) / kRuns;
      const double dnnl_malloc = double(g_dnnl_malloc.load()) / kRuns;
      std::printf(
          "%-34s threads %d %-8s: ours %.1f new + %.1f malloc, oneDNN %.1f new + %.1f "
          "malloc per run\n",
          node.name.c_str(), threads, shapes_known ? "pinned" : "cached",
          double(g_ours_new.load()) / kRuns, double(g_ours_malloc.load()) / kRuns, dnnl_new,
          dnnl_malloc);
      ::testing::Test::RecordProperty(
          absl::StrCat(node.name, " t", threads, shapes_known ? " pinned" : " cached"),
          absl::StrCat("dnnl_new_per_run=", dnnl_new, " dnnl_malloc_per_run=", dnnl_malloc));
    }
  }
}

TEST(OneDnnAllocTest, PinnedPlansAllocateNothingOfOursPerRun) { CheckSteadyState(true); }

TEST(OneDnnAllocTest, CachedPlansAllocateNothingOfOursPerRun) { CheckSteadyState(false); }

// The counters see what they should: a vector grown here counts as ours.
TEST(OneDnnAllocTest, CountersSeeOurAllocations) {
  ASSERT_NE(dl_iterate_phdr(FindDnnl, nullptr), 0);
  g_ours_new = 0;
  g_counting = true;
  std::vector<int>* v = new std::vector<int>(100);
  g_counting = false;
  delete v;
  EXPECT_GE(g_ours_new.load(), 2);
}

}  // namespace
}  // namespace inferd::kernels::cpu

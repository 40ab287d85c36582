// arena_bench: the allocation scenarios of docs/arenas.md ("Benchmarks"), arena versus plain malloc
// + first touch. Prints, per scenario, nanoseconds per operation for both, and after one warm-up
// round the number of system allocations, system frees and minor page faults (getrusage) of the
// arena path. Expected: 0 / 0 / 0 for the first three scenarios; resident memory back down after
// the trim.
//
// Usage: arena_bench [--rounds N]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "base/flags.h"
#include "memory/execution_arena.h"
#include "memory/io_arena.h"
#include "memory/process_stats.h"
#include "memory/system_allocator.h"

ABSL_FLAG(int, rounds, 200, "measured rounds per scenario");

namespace inferd::memory {
namespace {

// Writes one byte per page, as a kernel writing its output would materialize every page.
void Touch(void* p, size_t bytes) {
  auto* b = static_cast<volatile char*>(p);
  for (size_t i = 0; i < bytes; i += 4096) b[i] = 1;
  if (bytes > 0) b[bytes - 1] = 1;
}

double NsPerOp(const std::function<void()>& round, int rounds, int ops_per_round) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < rounds; ++r) round();
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / (rounds * ops_per_round);
}

struct Row {
  std::string scenario;
  double arena_ns = 0, malloc_ns = 0;
  uint64_t sys_allocs = 0, sys_frees = 0;
  long minor_faults = 0;
  long malloc_minor_faults = 0;
};

void Print(const Row& r) {
  std::printf("%-30s %11.0f %12.0f %8.2fx %10llu %9llu %8ld %13ld\n", r.scenario.c_str(),
              r.arena_ns, r.malloc_ns, r.malloc_ns / r.arena_ns,
              static_cast<unsigned long long>(r.sys_allocs),
              static_cast<unsigned long long>(r.sys_frees), r.minor_faults, r.malloc_minor_faults);
}

// Runs `arena_round` `warmup` times (until shapes and in-flight counts are stable), then
// `rounds` times while counting system calls of the arenas and minor faults of the process; then
// does the same for `malloc_round`.
Row Measure(const std::string& name, int warmup, int rounds, int ops,
            const std::vector<Arena*>& arenas, const std::function<void()>& arena_round,
            const std::function<void()>& malloc_round) {
  Row row;
  row.scenario = name;
  for (int i = 0; i < warmup; ++i) arena_round();
  uint64_t a0 = 0, f0 = 0;
  for (Arena* a : arenas) a0 += a->Stats().system_allocations, f0 += a->Stats().system_frees;
  const long faults0 = MinorFaults();
  row.arena_ns = NsPerOp(arena_round, rounds, ops);
  row.minor_faults = MinorFaults() - faults0;
  uint64_t a1 = 0, f1 = 0;
  for (Arena* a : arenas) a1 += a->Stats().system_allocations, f1 += a->Stats().system_frees;
  row.sys_allocs = a1 - a0;
  row.sys_frees = f1 - f0;
  for (int i = 0; i < warmup; ++i) malloc_round();
  const long malloc_faults0 = MinorFaults();
  row.malloc_ns = NsPerOp(malloc_round, rounds, ops);
  row.malloc_minor_faults = MinorFaults() - malloc_faults0;
  return row;
}

void* MallocTouch(size_t bytes) {
  void* p = std::malloc(bytes);
  Touch(p, bytes);
  return p;
}

// 1. Steady allocate/free of the same sizes (outputs destroyed before the next run).
void SteadySameSizes(ExecutionArena& exec, int rounds) {
  const std::vector<size_t> sizes = {4 << 10, 64 << 10, 1 << 20, 4 << 20};
  Print(Measure(
      "steady same sizes (4K..4M)", 1, rounds, sizes.size(), {&exec},
      [&] {
        for (size_t s : sizes) {
          AllocationHandle h = *exec.Allocate(s);
          Touch(h.data(), s);
        }
      },
      [&] {
        for (size_t s : sizes) std::free(MallocTouch(s));
      }));
}

// 2. Allocating while earlier outputs stay leased (slow readers keep 8 responses in flight).
void OutputsKeptLeased(IOArena& io, int rounds) {
  std::deque<IOLease> in_flight;
  std::deque<void*> in_flight_malloc;
  constexpr size_t kOut = 1 << 20;
  Print(Measure(
      "outputs kept leased (8 x 1M)", 9, rounds, 1, {&io},
      [&] {
        AllocationHandle h = *io.Allocate(kOut);
        Touch(h.data(), kOut);
        in_flight.push_back(*io.Export(std::move(h)));
        if (in_flight.size() > 8) in_flight.pop_front();
      },
      [&] {
        in_flight_malloc.push_back(MallocTouch(kOut));
        if (in_flight_malloc.size() > 8) {
          std::free(in_flight_malloc.front());
          in_flight_malloc.pop_front();
        }
      }));
  in_flight.clear();
  for (void* p : in_flight_malloc) std::free(p);
}

// 3. Alternating sizes (two input shapes taking turns).
void AlternatingSizes(ExecutionArena& exec, int rounds) {
  int turn = 0, turn_malloc = 0;
  Print(Measure(
      "alternating sizes (3M / 5M)", 2, rounds, 1, {&exec},
      [&] {
        const size_t s = (turn++ % 2) ? (3 << 20) : (5 << 20);
        AllocationHandle h = *exec.Allocate(s);
        Touch(h.data(), s);
      },
      [&] {
        const size_t s = (turn_malloc++ % 2) ? (3 << 20) : (5 << 20);
        std::free(MallocTouch(s));
      }));
}

// 4. Trim after a one-off large allocation.
void TrimAfterOneOff(ExecutionArena& exec, IOArena& io) {
  exec.Trim();
  io.Trim();
  const long rss0 = ResidentBytes();
  constexpr size_t kLarge = 256 << 20;
  {
    AllocationHandle h = *exec.Allocate(kLarge);
    Touch(h.data(), kLarge);
  }
  const long rss_retained = ResidentBytes();
  const auto t0 = std::chrono::steady_clock::now();
  const uint64_t released = exec.Trim();
  const auto t1 = std::chrono::steady_clock::now();
  const long rss_after = ResidentBytes();
  std::printf(
      "trim after one-off 256 MiB: released %llu bytes in %.0f us; resident %.1f MiB "
      "before, %.1f MiB while retained, %.1f MiB after trim\n",
      static_cast<unsigned long long>(released),
      std::chrono::duration<double, std::micro>(t1 - t0).count(), rss0 / 1048576.0,
      rss_retained / 1048576.0, rss_after / 1048576.0);
}

int Main(int argc, char** argv) {
  const std::vector<std::string> args = ParseCommandLine(
      argc, argv,
      "usage: arena_bench [--rounds N]\n\nThe allocation scenarios (docs/arenas.md), arena "
      "versus malloc + first touch.");
  if (!args.empty()) {
    std::fprintf(stderr, "arena_bench: unexpected argument '%s'\n", args[0].c_str());
    return 1;
  }
  const int rounds = absl::GetFlag(FLAGS_rounds);
  auto sys = std::make_shared<CpuSystemAllocator>("cpu:0");
  ExecutionArena exec(sys);
  IOArena io(sys);

  std::printf(
      "arena_bench: %d rounds per scenario; ns per allocate+touch+free; counts after "
      "warm-up\n",
      rounds);
  std::printf("%-30s %11s %12s %9s %10s %9s %8s %13s\n", "scenario", "arena ns/op", "malloc ns/op",
              "speedup", "sys allocs", "sys frees", "minflt", "malloc minflt");
  SteadySameSizes(exec, rounds);
  OutputsKeptLeased(io, rounds);
  AlternatingSizes(exec, rounds);
  TrimAfterOneOff(exec, io);
  std::printf("%s\n%s\n", exec.Stats().ToString().c_str(), io.Stats().ToString().c_str());
  return 0;
}

}  // namespace
}  // namespace inferd::memory

int main(int argc, char** argv) { return inferd::memory::Main(argc, argv); }

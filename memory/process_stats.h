// Figures of the calling process from the kernel, for benchmarks and tests that check what the
// arenas cost in pages: minor page faults so far and resident memory. Header-only; thread-safe
// (each call reads the kernel's counters afresh).
#ifndef INFERD_MEMORY_PROCESS_STATS_H_
#define INFERD_MEMORY_PROCESS_STATS_H_

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>

namespace inferd::memory {

// Minor page faults of the process so far (getrusage ru_minflt).
inline long MinorFaults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// Resident bytes of the process (/proc/self/statm); negative when it cannot be read.
inline long ResidentBytes() {
  long total = 0, resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return -1;
  if (std::fscanf(f, "%ld %ld", &total, &resident) != 2) resident = -1;
  std::fclose(f);
  return resident * sysconf(_SC_PAGESIZE);
}

}  // namespace inferd::memory

#endif  // INFERD_MEMORY_PROCESS_STATS_H_

#include "memory/memory_planner.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "base/checked_math.h"

namespace inferd::memory {

namespace {

constexpr size_t kSaturated = std::numeric_limits<size_t>::max();

}  // namespace

int MemoryPlanner::AddBuffer(size_t bytes, int first_use, int last_use) {
  const size_t rounded = CheckedRoundUp(bytes, kPlanAlignment).value_or(kSaturated);
  buffers_.push_back(Buffer{rounded, first_use, std::max(first_use, last_use)});
  planned_ = false;
  return static_cast<int>(buffers_.size()) - 1;
}

size_t MemoryPlanner::GetOffset(int id) {
  EnsurePlanned();
  return buffers_[id].offset;
}

size_t MemoryPlanner::GetPeakBytes() {
  EnsurePlanned();
  return peak_;
}

void MemoryPlanner::EnsurePlanned() {
  if (planned_) return;
  Plan(buffers_);
  peak_ = 0;
  for (const Buffer& b : buffers_) peak_ = std::max(peak_, SaturatingAdd(b.offset, b.bytes));
  planned_ = true;
}

void GreedyMemoryPlanner::Plan(std::vector<Buffer>& buffers) {
  // pass 1: order by size, largest first (ties: earlier first use, then id).
  std::vector<int> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if (buffers[a].bytes != buffers[b].bytes) return buffers[a].bytes > buffers[b].bytes;
    return buffers[a].first_use < buffers[b].first_use;
  });
  // pass 2: place each at the lowest gap among the placed buffers that are live at the same time.
  std::vector<int> placed;
  std::vector<int> conflicts;
  for (int id : order) {
    Buffer& b = buffers[id];
    conflicts.clear();
    for (int other : placed) {
      const Buffer& o = buffers[other];
      if (o.first_use <= b.last_use && b.first_use <= o.last_use) conflicts.push_back(other);
    }
    std::sort(conflicts.begin(), conflicts.end(),
              [&](int x, int y) { return buffers[x].offset < buffers[y].offset; });
    size_t candidate = 0;
    for (int other : conflicts) {
      const Buffer& o = buffers[other];
      if (o.offset >= SaturatingAdd(candidate, b.bytes)) break;  // the gap before `o` fits
      candidate = std::max(candidate, SaturatingAdd(o.offset, o.bytes));
    }
    b.offset = candidate;
    placed.push_back(id);
  }
}

void LinearMemoryPlanner::Plan(std::vector<Buffer>& buffers) {
  size_t offset = 0;
  for (Buffer& b : buffers) {
    b.offset = offset;
    offset = SaturatingAdd(offset, b.bytes);
  }
}

}  // namespace inferd::memory

// Static memory planners: given buffers with sizes and lifetimes (first and last step that use
// them, inclusive), assign offsets in one block so that buffers whose lifetimes overlap never
// overlap in memory. Planning is separate from allocating: the planner owns no memory.
//
// GreedyMemoryPlanner (the one sessions use): buffers are placed largest first; each goes at the
// lowest offset where it fits between the buffers already placed whose lifetimes intersect its
// own. O(n^2 log n) for n buffers, run once at load.
// LinearMemoryPlanner: each buffer after the previous one: the naive sum, for comparison.
//
// Sizes and offsets saturate at SIZE_MAX instead of wrapping (base/checked_math.h): sizes that
// do not fit (impossible for shapes within engine/shape.h's bounds unless there are about 2^17
// of the largest) give a peak of SIZE_MAX, which no allocator can provide, never a small block
// that buffers then overrun.
//
// Example:
//   GreedyMemoryPlanner planner;
//   int a = planner.AddBuffer(4096, /*first_use=*/0, /*last_use=*/1);
//   int b = planner.AddBuffer(4096, 2, 3);           // may reuse a's bytes
//   size_t peak = planner.GetPeakBytes();            // 4096
//   size_t off_b = planner.GetOffset(b);             // 0
// Thread-compatible.
#ifndef INFERD_MEMORY_MEMORY_PLANNER_H_
#define INFERD_MEMORY_MEMORY_PLANNER_H_

#include <cstddef>
#include <vector>

namespace inferd::memory {

inline constexpr size_t kPlanAlignment = 64;

class MemoryPlanner {
 public:
  virtual ~MemoryPlanner() = default;
  // Returns the buffer's id (0, 1, 2, ... in call order). Sizes are rounded up to 64 bytes
  // (saturating).
  int AddBuffer(size_t bytes, int first_use, int last_use);
  // Offset of buffer `id` in the block (a multiple of 64).
  size_t GetOffset(int id);
  // Size of the block that holds every buffer.
  size_t GetPeakBytes();
  size_t num_buffers() const { return buffers_.size(); }

 protected:
  struct Buffer {
    size_t bytes;
    int first_use;
    int last_use;
    size_t offset = 0;
  };
  virtual void Plan(std::vector<Buffer>& buffers) = 0;

 private:
  void EnsurePlanned();
  std::vector<Buffer> buffers_;
  bool planned_ = false;
  size_t peak_ = 0;
};

class GreedyMemoryPlanner final : public MemoryPlanner {
 protected:
  void Plan(std::vector<Buffer>& buffers) override;
};

class LinearMemoryPlanner final : public MemoryPlanner {
 protected:
  void Plan(std::vector<Buffer>& buffers) override;
};

}  // namespace inferd::memory

#endif  // INFERD_MEMORY_MEMORY_PLANNER_H_

// Geometric size classes for the arenas' retained free lists: four classes per power of two,
// starting at 64 bytes (64, 80, 96, 112, 128, 160, 192, 224, 256, ...). Every buffer an arena
// takes from the system has exactly a class capacity, so a retained buffer of class c fits any
// request whose class is <= c. Pure functions; thread-compatible.
#ifndef INFERD_MEMORY_SIZE_CLASSES_H_
#define INFERD_MEMORY_SIZE_CLASSES_H_

#include <cstddef>
#include <cstdint>

namespace inferd::memory {

inline constexpr size_t kMinClassBytes = 64;
inline constexpr int kClassesPerDoubling = 4;
inline constexpr int kNumSizeClasses = 192;  // up to 2^53 bytes; bitmap of three words
inline constexpr size_t kMaxClassBytes = size_t{1} << (6 + kNumSizeClasses / kClassesPerDoubling);

// A retained buffer serves a request only if its class is within this many classes of the
// request's class (at most ~2x the request), so a tiny tensor never pins a huge buffer.
inline constexpr int kMaxReuseClassDistance = 4;

// Index of the smallest class whose capacity is >= bytes, or -1 if bytes > kMaxClassBytes.
int SizeClassFor(size_t bytes);

// Capacity in bytes of class `index` (0 <= index < kNumSizeClasses).
size_t SizeClassCapacity(int index);

// One bit per class: O(1) search for the smallest non-empty class in a range.
class SizeClassBitmap {
 public:
  void Set(int index) { words_[index >> 6] |= uint64_t{1} << (index & 63); }
  void Clear(int index) { words_[index >> 6] &= ~(uint64_t{1} << (index & 63)); }
  bool Test(int index) const { return (words_[index >> 6] >> (index & 63)) & 1; }
  // Smallest set index in [first, last], or -1. At most three word inspections.
  int FindFirst(int first, int last) const;

 private:
  static constexpr int kWords = kNumSizeClasses / 64;
  uint64_t words_[kWords] = {};
};

}  // namespace inferd::memory

#endif  // INFERD_MEMORY_SIZE_CLASSES_H_

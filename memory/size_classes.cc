#include "memory/size_classes.h"

namespace inferd::memory {

int SizeClassFor(size_t bytes) {
  if (bytes <= kMinClassBytes) return 0;
  if (bytes > kMaxClassBytes) return -1;
  const int p = 63 - __builtin_clzll(static_cast<unsigned long long>(bytes));  // floor(log2)
  const size_t base = size_t{1} << p;
  const size_t step = base / kClassesPerDoubling;
  size_t k = (bytes - base + step - 1) / step;  // ceil; 0..4
  int power = p;
  if (k == kClassesPerDoubling) {
    ++power;
    k = 0;
  }
  const int index = (power - 6) * kClassesPerDoubling + static_cast<int>(k);
  return index < kNumSizeClasses ? index : -1;
}

size_t SizeClassCapacity(int index) {
  const int power = 6 + index / kClassesPerDoubling;
  const size_t k = static_cast<size_t>(index % kClassesPerDoubling);
  const size_t base = size_t{1} << power;
  return base + k * (base / kClassesPerDoubling);
}

int SizeClassBitmap::FindFirst(int first, int last) const {
  if (first < 0) first = 0;
  if (last >= kNumSizeClasses) last = kNumSizeClasses - 1;
  for (int w = first >> 6; w <= (last >> 6); ++w) {
    uint64_t bits = words_[w];
    if (w == (first >> 6)) bits &= ~uint64_t{0} << (first & 63);
    if (bits == 0) continue;
    const int index = (w << 6) + __builtin_ctzll(bits);
    return index <= last ? index : -1;
  }
  return -1;
}

}  // namespace inferd::memory

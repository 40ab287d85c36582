// The pads the Pad tests run (tests only): every mode on every dim, asymmetric and negative pads
// (cropping), reflect and wrap wider than the dimension, unpadded dims between padded ones,
// scalars and empty inputs, and opset 18's axes. pad_index_test runs them through the kernel's
// index arithmetic on the host, pad_test through the kernel on the GPU, both against the CPU.
#ifndef INFERD_KERNELS_CUDA_TESTING_PAD_CASES_H_
#define INFERD_KERNELS_CUDA_TESTING_PAD_CASES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "engine/shape.h"

namespace inferd::kernels::cuda::testing {

struct PadCase {
  engine::Shape x;
  std::vector<int64_t> pads;  // as the node gets them (per axis of `axes` when given)
  std::string mode;
  int opset = 13;
  std::vector<int64_t> axes;  // opset 18+: input 3 when not empty
};

inline std::vector<PadCase> PadCases() {
  std::vector<PadCase> cases;
  for (const char* mode : {"constant", "edge", "reflect"}) {
    cases.push_back({{5}, {2, 3}, mode});
    cases.push_back({{3, 4}, {1, 2, 2, 1}, mode});
    cases.push_back({{2, 3, 4, 5}, {0, 0, 1, 1, 0, 0, 1, 1}, mode});  // NCHW spatial pads
    cases.push_back({{2, 3, 4, 5}, {0, 1, 0, 2, 0, 0, 3, 0}, mode});  // unpadded dims between
    cases.push_back({{4, 6}, {-1, 2, 1, -3}, mode});                  // crop and pad
    cases.push_back({{4, 6}, {-1, -2, -1, -3}, mode});                // crop only
    cases.push_back({{3, 1, 7}, {0, 2, 0, 0, 3, 0}, mode});           // a dim of 1
    cases.push_back({{2, 3, 4, 5}, {0, 0, 0, 0, 0, 0, 0, 0}, mode});  // no padding
    cases.push_back({{}, {}, mode});                                  // a scalar
    // 9 dims, 7 padded: the two unpadded ones merge, 8 remain (kMaxPadRank).
    cases.push_back({{2, 3, 2, 3, 2, 3, 2, 3, 2},
                     {1, 0, 1, 0, 0, 0, 1, 0, 1, 0, 1, 0, 0, 0, 1, 0, 1, 0},
                     mode});
    cases.push_back({{3, 4}, {1, 2, 2, 1}, mode, 2});  // attributes
    cases.push_back({{1, 3, 64, 67}, {0, 0, 3, 3, 0, 0, 3, 3}, mode, 11});
    cases.push_back({{2, 5, 6}, {2, 1, 1, 3}, mode, 18, {-1, 1}});  // axes
  }
  cases.push_back({{3, 4}, {7, 9, 5, 11}, "reflect"});  // reflects again and again
  cases.push_back({{3, 4}, {7, 9, 5, 11}, "edge"});
  cases.push_back({{0, 4}, {1, 1, 2, 0}, "constant"});  // an empty input
  cases.push_back({{2, 0}, {0, 0, 0, 0}, "reflect"});
  for (int opset : {19, 21}) {
    cases.push_back({{5}, {7, 12}, "wrap", opset});
    cases.push_back({{3, 4, 5}, {1, -1, 2, 4, 0, 6}, "wrap", opset});
    cases.push_back({{2, 5, 6}, {2, 9}, "wrap", opset, {2}});
  }
  return cases;
}

}  // namespace inferd::kernels::cuda::testing

#endif  // INFERD_KERNELS_CUDA_TESTING_PAD_CASES_H_

// The windows the pooling tests run (tests only): strides, explicit and automatic pads
// (asymmetric ones included), ceil_mode (windows reaching past the padding), 1-D to 3-D. Both
// pools run each; AveragePool also with count_include_pad = 1.
#ifndef INFERD_KERNELS_CUDA_TESTING_POOL_CASES_H_
#define INFERD_KERNELS_CUDA_TESTING_POOL_CASES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/shape.h"
#include "engine/testing/kernel_tester.h"

namespace inferd::kernels::cuda::testing {

struct PoolCase {
  std::string label;
  engine::Shape x;
  std::function<void(engine::testing::KernelTester&)> attrs;
};

inline const std::vector<PoolCase>& PoolWindows() {
  using engine::testing::KernelTester;
  using V = std::vector<int64_t>;
  static const auto* cases = new std::vector<PoolCase>{
      {"3x3 stride 2 pads 1",
       {2, 3, 11, 11},
       [](KernelTester& t) {
         t.Attr("kernel_shape", V{3, 3}).Attr("strides", V{2, 2}).Attr("pads", V{1, 1, 1, 1});
       }},
      {"ceil_mode",
       {1, 2, 10, 10},
       [](KernelTester& t) {
         t.Attr("kernel_shape", V{3, 3}).Attr("strides", V{2, 2}).Attr("ceil_mode", int64_t{1});
       }},
      {"ceil_mode past the pads",
       {1, 2, 10, 9},
       [](KernelTester& t) {
         t.Attr("kernel_shape", V{3, 3})
             .Attr("strides", V{2, 2})
             .Attr("pads", V{1, 1, 1, 1})
             .Attr("ceil_mode", int64_t{1});
       }},
      {"asymmetric pads",
       {1, 3, 8, 9},
       [](KernelTester& t) {
         t.Attr("kernel_shape", V{3, 2}).Attr("pads", V{2, 0, 0, 1});
       }},
      {"SAME_UPPER",
       {1, 2, 7, 7},
       [](KernelTester& t) {
         t.Attr("kernel_shape", V{2, 2})
             .Attr("strides", V{2, 2})
             .Attr("auto_pad", std::string("SAME_UPPER"));
       }},
      {"SAME_LOWER",
       {1, 2, 7, 8},
       [](KernelTester& t) {
         t.Attr("kernel_shape", V{3, 3})
             .Attr("strides", V{2, 2})
             .Attr("auto_pad", std::string("SAME_LOWER"));
       }},
      {"VALID",
       {2, 2, 9, 9},
       [](KernelTester& t) {
         t.Attr("kernel_shape", V{3, 3})
             .Attr("strides", V{3, 3})
             .Attr("auto_pad", std::string("VALID"));
       }},
      {"1-D",
       {2, 3, 15},
       [](KernelTester& t) {
         t.Attr("kernel_shape", V{4}).Attr("strides", V{3}).Attr("pads", V{1, 2});
       }},
      {"3-D",
       {1, 2, 6, 7, 8},
       [](KernelTester& t) {
         t.Attr("kernel_shape", V{2, 3, 2})
             .Attr("strides", V{2, 2, 2})
             .Attr("pads", V{0, 1, 0, 0, 1, 1});
       }},
      {"large",
       {8, 64, 56, 56},
       [](KernelTester& t) {
         t.Attr("kernel_shape", V{3, 3}).Attr("strides", V{2, 2}).Attr("pads", V{1, 1, 1, 1});
       }},
  };
  return *cases;
}

}  // namespace inferd::kernels::cuda::testing

#endif  // INFERD_KERNELS_CUDA_TESTING_POOL_CASES_H_

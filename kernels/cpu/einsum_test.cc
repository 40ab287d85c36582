// Einsum against a naive reference (a loop over every assignment of the letters): the
// transformer contractions (batched matmuls with transposed operands and outputs), dot and outer
// products, sums over one-operand letters, diagonals, one-operand forms (transpose, diagonal,
// trace, sums), implicit outputs, ellipsis broadcasting (against numpy matmul), float32 and
// float64, 1 vs 2 threads, errors.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
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
using testing::ExpectNear;
using testing::RandomFloats;

// Letters only, explicit "->".
std::vector<double> RefEinsum(const std::string& equation, const std::vector<Shape>& shapes,
                              const std::vector<std::vector<float>>& xs, Shape* out_shape) {
  const std::vector<std::string> sides = absl::StrSplit(equation, "->");
  const std::vector<std::string> terms = absl::StrSplit(sides[0], ',');
  const std::string out = sides[1];
  std::map<char, int64_t> size;
  std::string letters;
  for (size_t t = 0; t < terms.size(); ++t) {
    for (size_t i = 0; i < terms[t].size(); ++i) {
      if (!size.count(terms[t][i])) letters.push_back(terms[t][i]);
      size[terms[t][i]] = shapes[t][i];
    }
  }
  *out_shape = Shape();
  for (char c : out) out_shape->push_back(size[c]);
  std::vector<double> y(out_shape->NumElements(), 0.0);
  int64_t total = 1;
  for (char c : letters) total *= size[c];
  std::map<char, int64_t> at;
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t rest = flat;
    for (size_t i = letters.size(); i-- > 0;) {
      at[letters[i]] = rest % size[letters[i]];
      rest /= size[letters[i]];
    }
    double prod = 1;
    for (size_t t = 0; t < terms.size(); ++t) {
      int64_t off = 0;
      for (size_t i = 0; i < terms[t].size(); ++i) off = off * shapes[t][i] + at[terms[t][i]];
      prod *= xs[t][off];
    }
    int64_t o = 0;
    for (char c : out) o = o * size[c] + at[c];
    y[o] += prod;
  }
  return y;
}

absl::StatusOr<std::vector<engine::Tensor>> RunEinsum(KernelTester& t, const std::string& eq,
                                                      const std::vector<Shape>& shapes,
                                                      const std::vector<std::vector<float>>& xs,
                                                      int threads) {
  t.Attr("equation", eq).Threads(threads);
  for (size_t i = 0; i < shapes.size(); ++i) t.Input<float>(shapes[i], xs[i]);
  return t.Run(CpuRegistry());
}

// Runs `eq` (and `explicit_eq` in the reference) in float32, float64 and with 2 threads.
void Check(const std::string& eq, const std::vector<Shape>& shapes, std::string explicit_eq = "") {
  SCOPED_TRACE(eq);
  if (explicit_eq.empty()) explicit_eq = eq;
  std::vector<std::vector<float>> xs;
  for (size_t i = 0; i < shapes.size(); ++i) {
    xs.push_back(RandomFloats(shapes[i].NumElements(), 100 + i));
  }
  Shape expected_shape;
  const std::vector<double> ref = RefEinsum(explicit_eq, shapes, xs, &expected_shape);
  KernelTester t("Einsum", 12);
  auto out = RunEinsum(t, eq, shapes, xs, 1);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), expected_shape);
  const std::vector<float> y = Values<float>((*out)[0]);
  ExpectNear(y, std::vector<float>(ref.begin(), ref.end()), 1e-4f);
  KernelTester t2("Einsum", 12);
  auto out2 = RunEinsum(t2, eq, shapes, xs, 2);
  ASSERT_TRUE(out2.ok()) << out2.status();
  ExpectNear(Values<float>((*out2)[0]), y, 1e-5f);
  // float64: the plain loops.
  KernelTester d("Einsum", 12);
  d.Attr("equation", eq);
  for (size_t i = 0; i < shapes.size(); ++i) {
    d.Input<double>(shapes[i], std::vector<double>(xs[i].begin(), xs[i].end()));
  }
  auto outd = d.Run(CpuRegistry());
  ASSERT_TRUE(outd.ok()) << outd.status();
  const std::vector<double> yd = Values<double>((*outd)[0]);
  ASSERT_EQ(yd.size(), ref.size());
  for (size_t i = 0; i < yd.size(); ++i) EXPECT_NEAR(yd[i], ref[i], 1e-9) << i;
}

TEST(EinsumTest, TwoOperandContractions) {
  Check("bij,bjk->bik", {{2, 3, 4}, {2, 4, 5}});
  Check("bhqd,bhkd->bhqk", {{2, 3, 4, 8}, {2, 3, 5, 8}});
  Check("bhqk,bhkd->bhqd", {{2, 3, 4, 5}, {2, 3, 5, 8}});
  Check("bid,jd->bij", {{2, 3, 4}, {5, 4}});
  Check("ij,kj->ik", {{3, 4}, {5, 4}});
  Check("ji,jk->ik", {{4, 3}, {4, 5}});  // A transposed
  Check("ji,kj->ik", {{4, 3}, {5, 4}});  // both transposed
  Check("ik,kj->ji", {{3, 4}, {4, 5}});  // output transposed: through scratch
  Check("bij,bkj->kbi", {{2, 3, 4}, {2, 5, 4}});
  Check("abc,cd->abd", {{2, 3, 4}, {4, 5}});  // two m letters collapse
  Check("acb,cd->abd", {{2, 4, 3}, {4, 5}});  // m letters that do not collapse: packed
  Check("i,i->", {{7}, {7}});
  Check("i,j->ij", {{3}, {4}});
  Check("ij,ij->ij", {{3, 4}, {3, 4}});
  Check("ij,jk->", {{3, 4}, {4, 5}});             // letters of one operand only, summed
  Check("bii,bij->bj", {{2, 3, 3}, {2, 3, 4}});   // a diagonal in A
  Check("ij,jk", {{3, 4}, {4, 5}}, "ij,jk->ik");  // implicit output
  Check("ba,ca", {{3, 4}, {5, 4}}, "ba,ca->bc");
}

TEST(EinsumTest, OneOperand) {
  Check("ij->ji", {{3, 4}});
  Check("ij->i", {{3, 4}});
  Check("ij->", {{3, 4}});
  Check("ii->i", {{4, 4}});
  Check("ii->", {{4, 4}});
  Check("bii->bi", {{2, 3, 3}});
  Check("ba", {{3, 4}}, "ba->ab");  // implicit: alphabetical
  Check("ijk->kji", {{2, 3, 4}});
}

TEST(EinsumTest, EllipsisBroadcastsLikeMatMul) {
  const Shape as{2, 1, 3, 4}, bs{5, 4, 6};
  const auto a = RandomFloats(as.NumElements(), 1), b = RandomFloats(bs.NumElements(), 2);
  Shape expected_shape;
  const auto expected = testing::RefMatMul(a, as, b, bs, &expected_shape);
  KernelTester t("Einsum", 12);
  auto out = RunEinsum(t, "...ij,...jk->...ik", {as, bs}, {a, b}, 2);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), expected_shape);
  ExpectNear(Values<float>((*out)[0]), expected, 1e-5f);
  // The test data's batch diagonal: "...ii ->...i" (spaces allowed).
  KernelTester diag("Einsum", 12);
  std::vector<float> x(2 * 3 * 3);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  out = RunEinsum(diag, "...ii ->...i", {{2, 3, 3}}, {x}, 1);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{0, 4, 8, 9, 13, 17}));
}

TEST(EinsumTest, Errors) {
  struct Case {
    std::string eq;
    std::vector<Shape> shapes;
    std::string message;
  };
  const Case cases[] = {
      {"ij,jk->ik", {{2, 3}, {4, 5}}, "dim 0 is 4 where its label is 3 elsewhere"},
      {"ij->ik", {{2, 3}}, "output label 'k' is in no input"},
      {"i$->i", {{2, 3}}, "invalid character '$'"},
      {"ij,jk->ik", {{2, 3}}, "the equation has 2 operands but the node has 1 inputs"},
      {"ijk->i", {{2, 3}}, "its equation term has 3 letters"},
      {"i,i,i->", {{2}, {2}, {2}}, "3 operands (at most 2 are supported)"},
  };
  for (const Case& c : cases) {
    KernelTester t("Einsum", 12);
    std::vector<std::vector<float>> xs;
    for (const Shape& s : c.shapes) xs.push_back(std::vector<float>(s.NumElements()));
    auto out = RunEinsum(t, c.eq, c.shapes, xs, 1);
    ASSERT_FALSE(out.ok()) << c.eq;
    EXPECT_NE(out.status().message().find(c.message), std::string::npos) << out.status();
    EXPECT_NE(out.status().message().find("node 'test_Einsum' (Einsum)"), std::string::npos);
  }
}

}  // namespace
}  // namespace inferd::kernels::cpu

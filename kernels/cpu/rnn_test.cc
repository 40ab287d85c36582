// LSTM, GRU and RNN against a naive double-precision reference written from the ONNX spec: both
// paths (oneDNN's primitives with constant weights, own code with weights as inputs or attributes
// oneDNN lacks), directions, layouts, initial states, sequence_lens, clip, input_forget,
// peepholes, named activations, linear_before_reset, 1 and 2 threads (shapes large enough to be
// cut into parts); which path runs; errors; workspace estimate == declared; concurrent runs.
// (tests/ort_cases/rnn checks the same space against ONNX Runtime.)
#include <cmath>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "engine/testing/kernel_tester.h"
#include "gtest/gtest.h"
#include "kernels/cpu/testing/kernel_runner.h"
#include "kernels/cpu/testing/reference.h"

namespace inferd::kernels::cpu {
namespace {

using engine::Shape;
using engine::testing::KernelTester;
using engine::testing::TestTensor;
using engine::testing::Values;
using testing::CpuRegistry;
using testing::ExpectNear;
using testing::RandomFloats;

struct Act {
  std::string name;
  float alpha = 0, beta = 0;  // as given in the attributes (tests always give them)
};

struct RnnCase {
  std::string op = "LSTM";
  std::string direction = "forward";
  int64_t t = 4, n = 3, i = 5, c = 6;
  int layout = 0;
  bool constant = true;  // W, R, B, P as constants (oneDNN where the attributes allow)
  bool bias = true, init = false, peephole = false;
  std::vector<int32_t> lens;  // empty: no sequence_lens
  std::vector<Act> acts;      // empty: the defaults
  std::optional<float> clip;
  bool input_forget = false, lbr = false;
  int threads = 1;
  int opset = 14;

  int dirs() const { return direction == "bidirectional" ? 2 : 1; }
  int gates() const { return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1; }
  int outputs() const { return op == "LSTM" ? 3 : 2; }
  std::string Describe() const {
    return absl::StrCat(op, " ", direction, " layout ", layout, constant ? " const" : " input",
                        init ? " init" : "", peephole ? " peephole" : "",
                        lens.empty() ? "" : " lens", acts.empty() ? "" : " acts",
                        clip ? " clip" : "", input_forget ? " input_forget" : "", lbr ? " lbr" : "",
                        " threads ", threads, " T", t, " N", n, " C", c);
  }
};

double Apply(const Act& a, double x) {
  const std::string n = absl::AsciiStrToLower(a.name);
  if (n == "relu") return std::max(x, 0.0);
  if (n == "tanh") return std::tanh(x);
  if (n == "sigmoid") return 1 / (1 + std::exp(-x));
  if (n == "affine") return a.alpha * x + a.beta;
  if (n == "leakyrelu") return x >= 0 ? x : a.alpha * x;
  if (n == "thresholdedrelu") return x > a.alpha ? x : 0;
  if (n == "scaledtanh") return a.alpha * std::tanh(a.beta * x);
  if (n == "hardsigmoid") return std::min(std::max(a.alpha * x + a.beta, 0.0), 1.0);
  if (n == "elu") return x >= 0 ? x : a.alpha * (std::exp(x) - 1);
  if (n == "softsign") return x / (1 + std::fabs(x));
  if (n == "softplus") return std::log1p(std::exp(x));
  ADD_FAILURE() << "unknown activation " << a.name;
  return 0;
}

struct Inputs {
  std::vector<float> x, w, r, b, h0, c0, p;  // layout 0
};

// One step of cell k.op for one batch row of direction d: xw = x W^T + Wb and hr = h R^T + Rb
// for every gate (ONNX's order); `cs` (LSTM's cell state) is updated; returns the new h.
std::vector<double> RefCell(const RnnCase& k, const Inputs& in, int64_t d, const Act& fa,
                            const Act& ga, const Act& ha, const std::vector<double>& xw,
                            const std::vector<double>& hr, const std::vector<double>& hs,
                            std::vector<double>& cs) {
  const int64_t C = k.c, G = k.gates();
  const Act *f = &fa, *g = &ga, *h = &ha;
  auto clip = [&](double v) {
    return k.clip ? std::min(std::max(v, -double(*k.clip)), double(*k.clip)) : v;
  };
  std::vector<double> next(C);
  if (k.op == "LSTM") {
    const float* p = in.p.empty() ? nullptr : &in.p[d * 3 * C];
    for (int64_t j = 0; j < C; ++j) {
      const double ig = Apply(*f, clip(xw[j] + hr[j] + (p ? p[j] * cs[j] : 0)));
      const double fg =
          k.input_forget
              ? 1 - ig
              : Apply(*f, clip(xw[2 * C + j] + hr[2 * C + j] + (p ? p[2 * C + j] * cs[j] : 0)));
      const double cg = Apply(*g, clip(xw[3 * C + j] + hr[3 * C + j]));
      cs[j] = fg * cs[j] + ig * cg;
      const double og = Apply(*f, clip(xw[C + j] + hr[C + j] + (p ? p[C + j] * cs[j] : 0)));
      next[j] = og * Apply(*h, cs[j]);
    }
  } else if (k.op == "GRU") {
    std::vector<double> z(C), r(C);
    for (int64_t j = 0; j < C; ++j) {
      z[j] = Apply(*f, clip(xw[j] + hr[j]));
      r[j] = Apply(*f, clip(xw[C + j] + hr[C + j]));
    }
    for (int64_t j = 0; j < C; ++j) {
      double pre;
      if (k.lbr) {
        pre = xw[2 * C + j] + r[j] * hr[2 * C + j];
      } else {
        double rh = 0;
        for (int64_t kk = 0; kk < C; ++kk)
          rh += r[kk] * hs[kk] * in.r[(d * G * C + 2 * C + j) * C + kk];
        pre = xw[2 * C + j] + rh + (in.b.empty() ? 0 : in.b[d * 2 * G * C + G * C + 2 * C + j]);
      }
      const double hh = Apply(*g, clip(pre));
      next[j] = (1 - z[j]) * hh + z[j] * hs[j];
    }
  } else {
    for (int64_t j = 0; j < C; ++j) next[j] = Apply(*f, clip(xw[j] + hr[j]));
  }
  return next;
}

// Y [T, D, N, C], Y_h, Y_c [D, N, C], layout 0, from the spec's equations.
std::vector<std::vector<float>> Reference(const RnnCase& k, const Inputs& in) {
  const int64_t T = k.t, N = k.n, I = k.i, C = k.c, D = k.dirs(), G = k.gates();
  std::vector<Act> acts = k.acts;
  if (acts.empty()) {
    for (int d = 0; d < D; ++d) {
      if (k.op == "LSTM") acts.insert(acts.end(), {{"Sigmoid"}, {"Tanh"}, {"Tanh"}});
      if (k.op == "GRU") acts.insert(acts.end(), {{"Sigmoid"}, {"Tanh"}});
      if (k.op == "RNN") acts.push_back({"Tanh"});
    }
  }
  const int per = static_cast<int>(acts.size()) / D;
  std::vector<float> y(T * D * N * C, 0.0f), yh(D * N * C, 0.0f), yc(D * N * C, 0.0f);
  for (int64_t d = 0; d < D; ++d) {
    const bool rev = k.direction == "reverse" || d == 1;
    for (int64_t n = 0; n < N; ++n) {
      const int64_t len = k.lens.empty() ? T : k.lens[n];
      std::vector<double> hs(C, 0.0), cs(C, 0.0);
      for (int64_t j = 0; j < C; ++j) {
        if (!in.h0.empty()) hs[j] = in.h0[(d * N + n) * C + j];
        if (!in.c0.empty()) cs[j] = in.c0[(d * N + n) * C + j];
      }
      for (int64_t s = 0; s < len; ++s) {
        const int64_t t = rev ? len - 1 - s : s;
        // xw[g*C + j] = x W^T + Wb; hr[...] = h R^T + Rb
        std::vector<double> xw(G * C), hr(G * C);
        for (int64_t q = 0; q < G * C; ++q) {
          double a = 0, b = 0;
          for (int64_t ii = 0; ii < I; ++ii)
            a += in.x[(t * N + n) * I + ii] * double(in.w[(d * G * C + q) * I + ii]);
          for (int64_t kk = 0; kk < C; ++kk) b += hs[kk] * in.r[(d * G * C + q) * C + kk];
          xw[q] = a + (in.b.empty() ? 0 : in.b[d * 2 * G * C + q]);
          hr[q] = b + (in.b.empty() ? 0 : in.b[d * 2 * G * C + G * C + q]);
        }
        hs = RefCell(k, in, d, acts[d * per], per > 1 ? acts[d * per + 1] : Act(),
                     per > 2 ? acts[d * per + 2] : Act(), xw, hr, hs, cs);
        for (int64_t j = 0; j < C; ++j)
          y[((t * D + d) * N + n) * C + j] = static_cast<float>(hs[j]);
      }
      for (int64_t j = 0; j < C && len > 0; ++j) {
        yh[(d * N + n) * C + j] = static_cast<float>(hs[j]);
        yc[(d * N + n) * C + j] = static_cast<float>(cs[j]);
      }
    }
  }
  std::vector<std::vector<float>> out = {y, yh};
  if (k.op == "LSTM") out.push_back(yc);
  return out;
}

// [a, b, c] -> [b, a, c] and Y's [T, D, N, C] -> [N, T, D, C] (layout 0 to 1).
std::vector<float> Swap01(const std::vector<float>& v, int64_t a, int64_t b, int64_t c) {
  std::vector<float> out(v.size());
  for (int64_t i = 0; i < a; ++i)
    for (int64_t j = 0; j < b; ++j)
      for (int64_t k = 0; k < c; ++k) out[(j * a + i) * c + k] = v[(i * b + j) * c + k];
  return out;
}

void AddActs(KernelTester& t, const std::vector<Act>& acts) {
  if (acts.empty()) return;
  std::vector<std::string> names;
  std::vector<float> alphas, betas;
  for (const Act& a : acts) {
    names.push_back(a.name);
    const std::string n = absl::AsciiStrToLower(a.name);
    if (n == "affine" || n == "leakyrelu" || n == "thresholdedrelu" || n == "scaledtanh" ||
        n == "hardsigmoid" || n == "elu") {
      alphas.push_back(a.alpha);
    }
    if (n == "affine" || n == "scaledtanh" || n == "hardsigmoid") betas.push_back(a.beta);
  }
  t.Attr("activations", names);
  if (!alphas.empty()) t.Attr("activation_alpha", alphas);
  if (!betas.empty()) t.Attr("activation_beta", betas);
}

Inputs MakeInputs(const RnnCase& k) {
  const int64_t D = k.dirs(), G = k.gates();
  Inputs in;
  in.x = RandomFloats(k.t * k.n * k.i, 1);
  in.w = RandomFloats(D * G * k.c * k.i, 2, -0.5f, 0.5f);
  in.r = RandomFloats(D * G * k.c * k.c, 3, -0.5f, 0.5f);
  if (k.bias) in.b = RandomFloats(D * 2 * G * k.c, 4, -0.5f, 0.5f);
  if (k.init) in.h0 = RandomFloats(D * k.n * k.c, 5);
  if (k.init && k.op == "LSTM") in.c0 = RandomFloats(D * k.n * k.c, 6);
  if (k.peephole) in.p = RandomFloats(D * 3 * k.c, 7, -0.5f, 0.5f);
  return in;
}

KernelTester MakeTester(const RnnCase& k, const Inputs& in) {
  const int64_t D = k.dirs(), G = k.gates();
  KernelTester t(k.op, k.opset);
  t.Attr("hidden_size", k.c).Attr("direction", k.direction).Threads(k.threads);
  if (k.layout) t.Attr("layout", int64_t{1});
  if (k.clip) t.Attr("clip", *k.clip);
  if (k.input_forget) t.Attr("input_forget", int64_t{1});
  if (k.lbr) t.Attr("linear_before_reset", int64_t{1});
  AddActs(t, k.acts);
  const bool l1 = k.layout == 1;
  t.Input(TestTensor::Of<float>(l1 ? Shape{k.n, k.t, k.i} : Shape{k.t, k.n, k.i},
                                l1 ? Swap01(in.x, k.t, k.n, k.i) : in.x));
  t.Input(TestTensor::Of<float>({D, G * k.c, k.i}, in.w), true, k.constant);
  t.Input(TestTensor::Of<float>({D, G * k.c, k.c}, in.r), true, k.constant);
  auto state = [&](const std::vector<float>& v) {
    return TestTensor::Of<float>(l1 ? Shape{k.n, D, k.c} : Shape{D, k.n, k.c},
                                 l1 ? Swap01(v, D, k.n, k.c) : v);
  };
  const bool need_c = k.op == "LSTM" && (!in.c0.empty() || !in.p.empty());
  const bool need_h = !in.h0.empty() || need_c;
  const bool need_lens = !k.lens.empty() || need_h;
  const bool need_b = !in.b.empty() || need_lens;
  if (!in.b.empty()) {
    t.Input(TestTensor::Of<float>({D, 2 * G * k.c}, in.b), true, k.constant);
  } else if (need_b) {
    t.AbsentInput();
  }
  if (!k.lens.empty()) {
    t.Input(TestTensor::Of<int32_t>({k.n}, k.lens));
  } else if (need_lens) {
    t.AbsentInput();
  }
  if (!in.h0.empty()) {
    t.Input(state(in.h0));
  } else if (need_h) {
    t.AbsentInput();
  }
  if (!in.c0.empty()) {
    t.Input(state(in.c0));
  } else if (need_c) {
    t.AbsentInput();
  }
  if (!in.p.empty()) t.Input(TestTensor::Of<float>({D, 3 * k.c}, in.p), true, k.constant);
  t.Outputs(k.outputs());
  return t;
}

void Check(const RnnCase& k) {
  SCOPED_TRACE(k.Describe());
  const Inputs in = MakeInputs(k);
  std::vector<std::vector<float>> want = Reference(k, in);
  if (k.layout == 1) {
    // Y [T, D, N, C] -> [N, T, D, C]: swap (T*D) with N, then it is [N, T*D, C].
    want[0] = Swap01(want[0], k.t * k.dirs(), k.n, k.c);
    for (size_t o = 1; o < want.size(); ++o) want[o] = Swap01(want[o], k.dirs(), k.n, k.c);
  }
  KernelTester t = MakeTester(k, in);
  absl::StatusOr<std::vector<engine::Tensor>> out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), want.size());
  for (size_t o = 0; o < want.size(); ++o) {
    SCOPED_TRACE(absl::StrCat("output ", o));
    ExpectNear(Values<float>((*out)[o]), want[o], 2e-5f);
  }
}

std::vector<RnnCase> PathCases() {
  std::vector<RnnCase> cases;
  for (const char* op : {"LSTM", "GRU", "RNN"}) {
    for (const char* direction : {"forward", "reverse", "bidirectional"}) {
      for (int layout : {0, 1}) {
        for (bool constant : {true, false}) {
          RnnCase k;
          k.op = op, k.direction = direction, k.layout = layout, k.constant = constant;
          k.init = layout == 1;
          cases.push_back(k);
        }
      }
    }
  }
  return cases;
}

TEST(RnnTest, BothPathsMatchTheReference) {
  for (const RnnCase& k : PathCases()) Check(k);
}

// Every opset form: 1 (LSTM/RNN; GRU's without linear_before_reset), 3 (GRU), 7, 14 and the
// newest, 21 (the same as 14).
TEST(RnnTest, EveryOpsetForm) {
  for (const char* op : {"LSTM", "GRU", "RNN"}) {
    for (int opset : {1, 3, 7, 14, 21}) {
      RnnCase k;
      k.op = op, k.opset = opset, k.direction = "bidirectional", k.init = true;
      k.lens = {4, 2, 3};
      Check(k);
      k.lens.clear();
      Check(k);
    }
  }
}

TEST(RnnTest, PeepholesLinearBeforeResetNoBias) {
  for (bool constant : {true, false}) {
    RnnCase k;
    k.peephole = true, k.init = true, k.constant = constant, k.direction = "bidirectional";
    Check(k);
    RnnCase gru;
    gru.op = "GRU", gru.lbr = true, gru.constant = constant, gru.direction = "reverse";
    Check(gru);
    for (const char* op : {"LSTM", "GRU", "RNN"}) {
      RnnCase nb;
      nb.op = op, nb.bias = false, nb.constant = constant;
      Check(nb);
    }
  }
}

TEST(RnnTest, OwnCodeOptions) {
  RnnCase k;
  k.direction = "bidirectional", k.init = true, k.peephole = true;
  k.lens = {4, 1, 3}, k.clip = 0.7f, k.input_forget = true;
  for (int layout : {0, 1}) {
    k.layout = layout;
    Check(k);
  }
  for (bool lbr : {false, true}) {
    RnnCase g;
    g.op = "GRU", g.lbr = lbr, g.direction = "bidirectional", g.lens = {0, 4, 2}, g.clip = 0.5f;
    g.init = true;
    Check(g);
  }
  RnnCase r;
  r.op = "RNN", r.direction = "reverse", r.lens = {2, 4, 3}, r.acts = {{"Relu"}};
  Check(r);
  RnnCase full;  // sequence_lens all T: the oneDNN path with sequence_lens given
  full.lens = {4, 4, 4};
  Check(full);
}

TEST(RnnTest, NamedActivations) {
  const std::vector<Act> named = {{"Relu"},
                                  {"Tanh"},
                                  {"Sigmoid"},
                                  {"Affine", 0.7f, 0.2f},
                                  {"LeakyRelu", 0.2f},
                                  {"ThresholdedRelu", 0.3f},
                                  {"ScaledTanh", 1.5f, 0.8f},
                                  {"HardSigmoid", 0.3f, 0.4f},
                                  {"Elu", 0.9f},
                                  {"Softsign"},
                                  {"softplus"}};
  for (const Act& a : named) {
    RnnCase lstm;
    lstm.acts = {{"Sigmoid"}, a, {"Tanh"}};
    Check(lstm);
    lstm.acts = {{"Sigmoid"}, {"Tanh"}, a};
    Check(lstm);
    RnnCase gru;
    gru.op = "GRU", gru.acts = {a, {"Tanh"}};
    if (absl::AsciiStrToLower(a.name) != "relu") Check(gru);  // relu z: H grows without bound
    RnnCase rnn;
    rnn.op = "RNN", rnn.acts = {a}, rnn.direction = "bidirectional";
    rnn.acts.push_back(a);
    Check(rnn);
  }
}

// Large enough that directions and batch blocks run as parts on two threads.
TEST(RnnTest, PartsOnTwoThreads) {
  for (const char* op : {"LSTM", "GRU", "RNN"}) {
    for (bool constant : {true, false}) {
      RnnCase k;
      k.op = op, k.t = 12, k.n = 9, k.i = 24, k.c = 48, k.threads = 2;
      k.direction = "bidirectional", k.constant = constant, k.init = true;
      if (!constant) k.lens = {12, 3, 7, 12, 1, 9, 12, 5, 2};
      Check(k);
    }
  }
}

// The path shows in what the kernel holds: oneDNN's prepacked weights (with the biases, so more
// than W and R), own code's transposed copies of constant W and R (exactly their bytes), or
// nothing (own code, weights at run time).
TEST(RnnTest, OneDnnWhereTheSemanticsMatch) {
  auto held = [](const RnnCase& k) -> size_t {
    KernelTester t = MakeTester(k, MakeInputs(k));
    absl::StatusOr<std::unique_ptr<engine::OpKernel>> kernel = t.Create(CpuRegistry());
    EXPECT_TRUE(kernel.ok()) << kernel.status();
    return kernel.ok() ? (*kernel)->PersistentBytes() : 0;
  };
  auto copies = [](const RnnCase& k) -> size_t {
    return static_cast<size_t>(k.dirs() * k.gates() * k.c * (k.i + k.c)) * sizeof(float);
  };
  RnnCase k;
  EXPECT_GT(held(k), copies(k)) << "LSTM with constant weights: oneDNN, weights prepacked";
  k.peephole = true;
  EXPECT_GT(held(k), copies(k));
  k.op = "GRU", k.peephole = false, k.lbr = true;
  EXPECT_GT(held(k), copies(k));
  k.op = "RNN", k.lbr = false, k.acts = {{"Relu"}};
  EXPECT_GT(held(k), copies(k));
  RnnCase own;
  own.constant = false;
  EXPECT_EQ(held(own), 0u) << "weights at run time: own code";
  own.constant = true, own.clip = 1.0f;
  EXPECT_EQ(held(own), copies(own)) << "clip: own code";
  own.clip.reset(), own.input_forget = true;
  EXPECT_EQ(held(own), copies(own));
  own.input_forget = false, own.acts = {{"Sigmoid"}, {"Relu"}, {"Tanh"}};
  EXPECT_EQ(held(own), copies(own));
}

TEST(RnnTest, WorkspaceEstimateIsWhatIsDeclared) {
  for (RnnCase k : PathCases()) {
    SCOPED_TRACE(k.Describe());
    k.lens = {4, 2, 3};
    KernelTester t = MakeTester(k, MakeInputs(k));
    absl::StatusOr<size_t> estimate = t.Estimate(CpuRegistry());
    ASSERT_TRUE(estimate.ok()) << estimate.status();
    ASSERT_TRUE(t.Run(CpuRegistry()).ok());
    EXPECT_EQ(*estimate, t.workspace_bytes_declared());
    EXPECT_GT(*estimate, 0u);
  }
}

TEST(RnnTest, ConcurrentRunsShareOneKernel) {
  for (bool constant : {true, false}) {
    RnnCase k;
    k.constant = constant, k.direction = "bidirectional", k.init = true;
    const Inputs in = MakeInputs(k);
    const std::vector<std::vector<float>> want = Reference(k, in);
    KernelTester t = MakeTester(k, in);
    absl::StatusOr<std::unique_ptr<engine::OpKernel>> kernel = t.Create(CpuRegistry());
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    const TestTensor x = TestTensor::Of<float>({k.t, k.n, k.i}, in.x);
    const TestTensor w = TestTensor::Of<float>({2, 4 * k.c, k.i}, in.w);
    const TestTensor r = TestTensor::Of<float>({2, 4 * k.c, k.c}, in.r);
    const TestTensor b = TestTensor::Of<float>({2, 8 * k.c}, in.b);
    const TestTensor h0 = TestTensor::Of<float>({2, k.n, k.c}, in.h0);
    const TestTensor c0 = TestTensor::Of<float>({2, k.n, k.c}, in.c0);
    std::vector<std::thread> threads;
    std::vector<std::vector<float>> y(4);
    for (int i = 0; i < 4; ++i) {
      threads.emplace_back([&, i] {
        for (int run = 0; run < 5; ++run) {
          auto out = engine::testing::RunKernel(**kernel, {&x, &w, &r, &b, nullptr, &h0, &c0}, 3,
                                                1 + i % 2);
          if (out.ok()) y[i] = (*out)[0].values<float>();
        }
      });
    }
    for (std::thread& th : threads) th.join();
    for (int i = 0; i < 4; ++i) ExpectNear(y[i], want[0], 2e-5f);
  }
}

absl::Status CreateStatus(KernelTester t) { return t.Create(CpuRegistry()).status(); }

TEST(RnnTest, BadAttributesAndShapesAreRefusedAtCreation) {
  RnnCase k;
  const Inputs in = MakeInputs(k);
  auto expect_error = [](KernelTester t, const std::string& words) {
    const absl::Status s = CreateStatus(std::move(t));
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_NE(s.message().find(words), std::string::npos) << s;
  };
  RnnCase sideways = k;
  sideways.direction = "sideways";
  expect_error(MakeTester(sideways, in), "direction 'sideways'");
  expect_error(std::move(MakeTester(k, in).Attr("activations", std::vector<std::string>{"Tanh"})),
               "expected 3 activations");
  expect_error(std::move(MakeTester(k, in).Attr(
                   "activations", std::vector<std::string>{"Sigmoid", "Swish", "Tanh"})),
               "unknown activation 'Swish'");
  expect_error(std::move(MakeTester(k, in).Attr("clip", -1.0f)), "clip must be > 0");
  expect_error(std::move(MakeTester(k, in).Attr("layout", int64_t{2})), "layout must be 0 or 1");
  // hidden_size disagreeing with W and R; and not positive.
  auto with_hidden = [&](int64_t hidden) {
    KernelTester t("LSTM", 14);
    t.Attr("hidden_size", hidden);
    t.Input(TestTensor::Of<float>({k.t, k.n, k.i}, in.x));
    t.Input(TestTensor::Of<float>({1, 4 * k.c, k.i}, in.w), true, true);
    t.Input(TestTensor::Of<float>({1, 4 * k.c, k.c}, in.r), true, true);
    return std::move(t.Outputs(3));
  };
  expect_error(with_hidden(7), "input W has shape [1,24,5], expected [1,28,5]");
  expect_error(with_hidden(0), "hidden_size must be positive");
}

TEST(RnnTest, BadRunInputsGetClearErrors) {
  RnnCase k;
  k.lens = {4, 5, 1};  // 5 > T
  const absl::StatusOr<std::vector<engine::Tensor>> out =
      MakeTester(k, MakeInputs(k)).Run(CpuRegistry());
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("sequence_lens[1] is 5"), std::string::npos)
      << out.status();
  // X's batch disagrees with initial_h's (shapes hidden at load: checked per run).
  KernelTester t("GRU", 14);
  t.Attr("hidden_size", int64_t{2});
  t.Input(TestTensor::Of<float>({3, 2, 4}, RandomFloats(24, 1)), false);
  t.Input(TestTensor::Of<float>({1, 6, 4}, RandomFloats(24, 2)), false);
  t.Input(TestTensor::Of<float>({1, 6, 2}, RandomFloats(12, 3)), false);
  t.AbsentInput().AbsentInput();
  t.Input(TestTensor::Of<float>({1, 3, 2}, RandomFloats(6, 4)), false);
  const absl::StatusOr<std::vector<engine::Tensor>> bad = t.Outputs(2).Run(CpuRegistry());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("initial_h has shape [1,3,2], expected [1,2,2]"),
            std::string::npos)
      << bad.status();
}

}  // namespace
}  // namespace inferd::kernels::cpu

#include "tests/conformance/conformance.h"

#include <dirent.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "engine/domain.h"
#include "engine/session.h"
#include "engine/test_data_set.h"
#include "onnx/onnx_pb.h"

namespace inferd::tests {
namespace {

std::vector<std::string> SortedDirs(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') names.push_back(e->d_name);
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// The model's operators (Constant excluded) as (domain, op), the default domain as "".
std::vector<std::pair<std::string, std::string>> ModelOps(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  onnx::ModelProto m;
  std::set<std::pair<std::string, std::string>> ops;
  if (m.ParseFromString(ss.str())) {
    for (const auto& n : m.graph().node()) {
      if (n.op_type() != "Constant") ops.insert({engine::NormalizeDomain(n.domain()), n.op_type()});
    }
  }
  return {ops.begin(), ops.end()};
}

// A test directory may carry `tolerance.txt` ("rtol atol"), written by generators whose
// references come from another engine (tests/ort_cases); else the backend tests' tolerance.
engine::Tolerance TestTolerance(const std::string& dir) {
  engine::Tolerance tol{1e-3, 1e-5};
  std::ifstream f(dir + "/tolerance.txt");
  double rtol, atol;
  if (f >> rtol >> atol) tol = engine::Tolerance{rtol, atol};
  return tol;
}

// Aborts the process, naming the test, if one test runs past its time (a hang is a failure the
// runner must not hide).
class Watchdog {
 public:
  explicit Watchdog(int seconds) : seconds_(seconds), thread_([this] { Loop(); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> l(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void Start(const std::string& name) {
    std::lock_guard<std::mutex> l(mu_);
    name_ = name;
    deadline_ = std::chrono::steady_clock::now() + std::chrono::seconds(seconds_);
    armed_ = true;
  }
  void Stop() {
    std::lock_guard<std::mutex> l(mu_);
    armed_ = false;
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> l(mu_);
    while (!stop_) {
      cv_.wait_for(l, std::chrono::milliseconds(200));
      if (armed_ && std::chrono::steady_clock::now() > deadline_) {
        std::fprintf(stderr, "conformance: test %s ran past %d s: treating as a hang\n",
                     name_.c_str(), seconds_);
        std::abort();
      }
    }
  }
  const int seconds_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::string name_;
  std::chrono::steady_clock::time_point deadline_;
  bool armed_ = false, stop_ = false;
  std::thread thread_;
};

// A tensor of the test data as a session input (borrows `d`'s bytes or strings).
engine::InputTensor TensorInput(const std::string& name, const engine::NamedData& d,
                                engine::DataType type) {
  if (d.type == engine::DataType::kString) {
    return {name, type, d.shape, d.strings.data(), d.strings.size() * sizeof(std::string)};
  }
  return {name, type, d.shape, d.bytes.data(), d.bytes.size()};
}

// A sequence or optional of the test data as a session input (items borrow `d`'s bytes).
engine::InputTensor ListInput(const engine::NamedData& d, engine::DataType type) {
  engine::InputTensor in;
  in.kind = d.kind;
  in.type = type;
  in.shape = d.shape;
  for (const engine::NamedData& item : d.items) {
    if (item.kind != engine::ValueKind::kTensor) {
      in.items.push_back(ListInput(item, type));
      continue;
    }
    in.items.push_back(TensorInput("", item, item.type));
  }
  return in;
}

// A sequence or optional output's items as test data, to compare with the expected ones.
std::vector<engine::NamedData> ListItems(const engine::OutputTensor& t) {
  std::vector<engine::NamedData> items;
  for (const engine::OutputTensor& o : t.items) {
    engine::NamedData d;
    d.type = o.type;
    d.shape = o.shape;
    d.kind = o.kind;
    if (o.kind == engine::ValueKind::kTensor && o.strings != nullptr) {
      d.strings = *o.strings;
    } else if (o.kind == engine::ValueKind::kTensor) {
      const auto* p = static_cast<const unsigned char*>(o.buffer.data());
      d.bytes.assign(p, p + o.buffer.size());
    } else {
      d.items = ListItems(o);
    }
    items.push_back(std::move(d));
  }
  return items;
}

// Tests whose expected outputs are known to be wrong, by name prefix, with the evidence. Such a
// test still runs; a difference from its expected output is "bad reference", not "failed".
struct BadReference {
  const char* prefix;
  const char* reason;
};
constexpr BadReference kBadReferences[] = {
    // Row 1, column 2 of the int8 case is -235.7 before the cast to int8: the spec (and ONNX
    // Runtime) saturate to -128, the reference implementation's numpy astype wrapped it to 20
    // (3D: 117, 120 where -128 is right). tests/ort_cases/quant checks these against ONNX
    // Runtime.
    {"test_qlinearmatmul_2D_int8_",
     "onnx 1.16's expected output wraps out-of-range int8 instead of saturating (onnx issue "
     "#6169 and #7835, data regenerated by onnx PR #7868)"},
    {"test_qlinearmatmul_3D_int8_",
     "onnx 1.16's expected output wraps out-of-range int8 instead of saturating (onnx issue "
     "#6169 and #7835, data regenerated by onnx PR #7868)"},
    // The generator computes the outputs with epsilon 1e-2 but the node it writes has no
    // epsilon attribute, so the operator's default 1e-6 applies.
    {"test_adam_multiple",
     "the expected outputs use epsilon 1e-2, which the model's Adam node does not set (onnx "
     "issue #7749)"},
};

const char* BadReferenceReason(const std::string& name) {
  for (const BadReference& b : kBadReferences) {
    if (absl::StartsWith(name, b.prefix)) return b.reason;
  }
  return nullptr;
}

// Tests of random operators: the value rules their outputs must follow (the values themselves
// come from numpy's generator). "x" is input 0, "ratio" input 1 (0.5 when absent).
enum class RandomRule { kZeroOrOne, kDropout };
struct RandomTest {
  const char* name;
  RandomRule rule;
};
constexpr RandomTest kRandomTests[] = {
    {"test_bernoulli", RandomRule::kZeroOrOne},
    {"test_bernoulli_double", RandomRule::kZeroOrOne},
    {"test_bernoulli_double_expanded", RandomRule::kZeroOrOne},
    {"test_bernoulli_expanded", RandomRule::kZeroOrOne},
    {"test_bernoulli_seed", RandomRule::kZeroOrOne},
    {"test_bernoulli_seed_expanded", RandomRule::kZeroOrOne},
    {"test_training_dropout", RandomRule::kDropout},
    {"test_training_dropout_default", RandomRule::kDropout},
    {"test_training_dropout_default_mask", RandomRule::kDropout},
    {"test_training_dropout_mask", RandomRule::kDropout},
};

const RandomTest* RandomTestNamed(const std::string& name) {
  for (const RandomTest& t : kRandomTests) {
    if (name == t.name) return &t;
  }
  return nullptr;
}

// Element i of float32 / float64 / bool data as double (0 for another type).
double ValueAt(engine::DataType type, const void* data, size_t i) {
  switch (type) {
    case engine::DataType::kFloat32:
      return static_cast<const float*>(data)[i];
    case engine::DataType::kFloat64:
      return static_cast<const double*>(data)[i];
    case engine::DataType::kBool:
      return static_cast<const unsigned char*>(data)[i] != 0;
    default:
      return 0;
  }
}

bool RandomRuleType(engine::DataType t) {
  return t == engine::DataType::kFloat32 || t == engine::DataType::kFloat64 ||
         t == engine::DataType::kBool;
}

// The outputs of a random test against its rule; the types and shapes against the data's.
absl::Status CheckRandomOutputs(const RandomTest& test, const engine::TestDataSet& set,
                                const std::vector<engine::OutputTensor>& out) {
  for (size_t o = 0; o < out.size(); ++o) {
    const engine::OutputTensor& t = out[o];
    const engine::NamedData& e = set.outputs[o];
    if (t.type != e.type || t.shape != e.shape) {
      return absl::InvalidArgumentError(absl::StrCat(
          "output ", o, ": got ", engine::DataTypeName(t.type), " ", t.shape.ToString(),
          ", expected ", engine::DataTypeName(e.type), " ", e.shape.ToString()));
    }
    if (!RandomRuleType(t.type)) {
      return absl::InvalidArgumentError(
          absl::StrCat("output ", o, ": no rule for ", engine::DataTypeName(t.type)));
    }
  }
  const size_t n = out.empty() ? 0 : out[0].shape.NumElements();
  if (test.rule == RandomRule::kZeroOrOne) {
    for (size_t i = 0; i < n; ++i) {
      const double v = ValueAt(out[0].type, out[0].buffer.data(), i);
      if (v != 0.0 && v != 1.0) {
        return absl::InvalidArgumentError(absl::StrCat("element ", i, " is ", v, ", not 0 or 1"));
      }
    }
    return absl::OkStatus();
  }
  // Dropout: y = mask ? x / (1 - ratio) : 0, with the mask output when there is one.
  const engine::NamedData& x = set.inputs[0];
  double ratio = 0.5;
  if (set.inputs.size() > 1 && RandomRuleType(set.inputs[1].type)) {
    ratio = ValueAt(set.inputs[1].type, set.inputs[1].bytes.data(), 0);
  }
  if (!RandomRuleType(x.type) || x.shape != out[0].shape) {
    return absl::InvalidArgumentError("x and the output differ in type or shape");
  }
  for (size_t i = 0; i < n; ++i) {
    const double xv = ValueAt(x.type, x.bytes.data(), i);
    const double y = ValueAt(out[0].type, out[0].buffer.data(), i);
    const double kept = xv / (1.0 - ratio);
    const bool is_kept = std::fabs(y - kept) <= 1e-5 * std::fabs(kept) + 1e-6;
    const bool is_dropped = y == 0.0;
    if (!is_kept && !is_dropped) {
      return absl::InvalidArgumentError(
          absl::StrCat("element ", i, " is ", y, ": neither 0 nor ", "x / (1 - ratio) = ", kept));
    }
    if (out.size() > 1) {
      const bool mask = ValueAt(out[1].type, out[1].buffer.data(), i) != 0.0;
      if (mask ? !is_kept : !is_dropped) {
        return absl::InvalidArgumentError(
            absl::StrCat("element ", i, ": mask ", mask, " but the output is ", y));
      }
    }
  }
  return absl::OkStatus();
}

engine::SessionOptions SessionOptionsFor(const ConformanceOptions& options) {
  engine::SessionOptions s;
  s.widen_half_precision = options.widen_half_precision;
  return s;
}

TestResult RunOne(const engine::KernelRegistry& registry, const ConformanceOptions& options,
                  const std::string& suite, const std::string& dir, const std::string& name) {
  TestResult r;
  r.suite = suite;
  r.name = name;
  const std::string model_path = dir + "/model.onnx";
  const std::vector<std::pair<std::string, std::string>> ops = ModelOps(model_path);
  r.ops_all_registered = !ops.empty();
  for (const auto& [domain, op] : ops) {
    r.ops.push_back(domain.empty() ? op : absl::StrCat(domain, "::", op));
    r.ops_all_registered = r.ops_all_registered && registry.HasOp(domain, op);
  }
  const engine::Tolerance tolerance = TestTolerance(dir);
  absl::StatusOr<std::unique_ptr<engine::Session>> session =
      engine::Session::Load(model_path, SessionOptionsFor(options), registry);
  if (!session.ok()) {
    r.outcome = session.status().code() == absl::StatusCode::kUnimplemented ? Outcome::kUnsupported
                                                                            : Outcome::kFailed;
    r.message = std::string(session.status().message());
    return r;
  }
  std::vector<engine::ValueKind> input_kinds, output_kinds;
  for (const engine::Value* v : (*session)->inputs()) input_kinds.push_back(v->kind);
  for (const engine::Value* v : (*session)->outputs()) output_kinds.push_back(v->kind);
  absl::StatusOr<std::vector<engine::TestDataSet>> sets =
      engine::ReadTestDataSets(dir, input_kinds, output_kinds);
  if (!sets.ok() || sets->empty()) {
    r.outcome = Outcome::kFailed;
    r.message = sets.ok() ? "no test data sets" : std::string(sets.status().message());
    return r;
  }
  const std::vector<const engine::Value*> inputs = (*session)->inputs();
  for (const engine::TestDataSet& set : *sets) {
    std::vector<engine::InputTensor> feed;
    for (size_t i = 0; i < set.inputs.size() && i < inputs.size(); ++i) {
      const engine::NamedData& d = set.inputs[i];
      // Inputs are matched by name where the data names them, else by position.
      std::string input_name = inputs[i]->name;
      for (const engine::Value* v : inputs) {
        if (!d.name.empty() && v->name == d.name) input_name = v->name;
      }
      // ONNX 1.12's test data stores bfloat16 tensors as uint16 (the same bits).
      engine::DataType type = d.type;
      for (const engine::Value* v : inputs) {
        if (v->name == input_name && v->type == engine::DataType::kBFloat16 &&
            type == engine::DataType::kUint16) {
          type = engine::DataType::kBFloat16;
        }
      }
      engine::InputTensor in = TensorInput(input_name, d, type);
      if (d.kind != engine::ValueKind::kTensor) {
        // A sequence or optional: the element type is the model's (an empty one shows none).
        for (const engine::Value* v : inputs) {
          if (v->name == input_name) in = ListInput(d, v->type);
        }
        in.name = input_name;
      }
      feed.push_back(std::move(in));
    }
    absl::StatusOr<std::vector<engine::OutputTensor>> out = (*session)->Run(feed);
    if (!out.ok()) {
      r.outcome = out.status().code() == absl::StatusCode::kUnimplemented ? Outcome::kUnsupported
                                                                          : Outcome::kFailed;
      r.message = absl::StrCat(set.dir.substr(dir.size() + 1), ": ", out.status().message());
      return r;
    }
    if (out->size() != set.outputs.size()) {
      r.outcome = Outcome::kFailed;
      r.message =
          absl::StrCat("model gave ", out->size(), " outputs, the data has ", set.outputs.size());
      return r;
    }
    if (const RandomTest* random = RandomTestNamed(name)) {
      if (absl::Status st = CheckRandomOutputs(*random, set, *out); !st.ok()) {
        r.outcome = Outcome::kFailed;
        r.message = absl::StrCat(set.dir.substr(dir.size() + 1), ": ", st.message());
        return r;
      }
      r.outcome = Outcome::kRandom;
      continue;
    }
    for (size_t o = 0; o < out->size(); ++o) {
      const engine::OutputTensor& t = (*out)[o];
      engine::NamedData expected = set.outputs[o];
      if (expected.name.empty()) expected.name = t.name;
      if (expected.type == engine::DataType::kUint16 && t.type == engine::DataType::kBFloat16) {
        expected.type = engine::DataType::kBFloat16;  // the same bits, see above
      }
      absl::Status st =
          t.kind == engine::ValueKind::kTensor && expected.kind == engine::ValueKind::kTensor
              ? (t.strings != nullptr
                     ? engine::CompareData(expected, t.type, t.shape, t.strings->data(),
                                           t.strings->size() * sizeof(std::string), tolerance)
                     : engine::CompareData(expected, t.type, t.shape, t.buffer.data(),
                                           t.buffer.size(), tolerance))
              : engine::CompareItems(expected, t.kind, ListItems(t), tolerance);
      if (!st.ok()) {
        r.outcome = Outcome::kFailed;
        r.message = absl::StrCat(set.dir.substr(dir.size() + 1), ": ", st.message());
        if (const char* reason = BadReferenceReason(name)) {
          r.outcome = Outcome::kBadReference;
          absl::StrAppend(&r.message, " [", reason, "]");
        }
        return r;
      }
    }
  }
  if (r.outcome != Outcome::kRandom) r.outcome = Outcome::kPassed;
  return r;
}

std::string JsonEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += absl::StrFormat("\\u%04x", c);
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

const char* OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kPassed:
      return "passed";
    case Outcome::kFailed:
      return "failed";
    case Outcome::kUnsupported:
      return "unsupported";
    case Outcome::kBadReference:
      return "bad-reference";
    case Outcome::kRandom:
      return "random";
  }
  return "?";
}

void SuiteCounts::Add(Outcome o) {
  if (o == Outcome::kPassed) ++passed;
  if (o == Outcome::kFailed) ++failed;
  if (o == Outcome::kUnsupported) ++unsupported;
  if (o == Outcome::kBadReference) ++bad_reference;
  if (o == Outcome::kRandom) ++random;
}

std::vector<TestResult> RunConformance(const engine::KernelRegistry& registry,
                                       const ConformanceOptions& options) {
  std::vector<TestResult> results;
  Watchdog watchdog(options.per_test_timeout_s);
  for (const std::string& suite : options.suites) {
    const std::string suite_dir = options.data_dir + "/" + suite;
    for (const std::string& name : SortedDirs(suite_dir)) {
      if (!options.filter.empty() && !absl::StrContains(name, options.filter)) continue;
      const std::string dir = suite_dir + "/" + name;
      watchdog.Start(suite + "/" + name);
      const auto t0 = std::chrono::steady_clock::now();
      TestResult r = RunOne(registry, options, suite, dir, name);
      r.ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      watchdog.Stop();
      results.push_back(std::move(r));
    }
  }
  return results;
}

std::map<std::string, SuiteCounts> CountBySuite(const std::vector<TestResult>& results) {
  std::map<std::string, SuiteCounts> counts;
  for (const TestResult& r : results) {
    counts[r.suite].Add(r.outcome);
  }
  return counts;
}

std::string FormatTable(const std::vector<TestResult>& results) {
  std::map<std::string, SuiteCounts> by_op;
  for (const TestResult& r : results) {
    if (r.suite != "node") continue;
    for (const std::string& op : r.ops) by_op[op].Add(r.outcome);
  }
  const auto row = [](const std::string& name, const SuiteCounts& c) {
    return absl::StrFormat("%-28s %7d %7d %12d %14d %7d\n", name, c.passed, c.failed, c.unsupported,
                           c.bad_reference, c.random);
  };
  constexpr char kHeader[] = "%-28s %7s %7s %12s %14s %7s\n";
  std::string out = absl::StrFormat(kHeader, "operator (node tests)", "passed", "failed",
                                    "unsupported", "bad-reference", "random");
  for (const auto& [op, c] : by_op) absl::StrAppend(&out, row(op, c));
  absl::StrAppend(&out, "\n",
                  absl::StrFormat(kHeader, "suite", "passed", "failed", "unsupported",
                                  "bad-reference", "random"));
  for (const auto& [suite, c] : CountBySuite(results)) absl::StrAppend(&out, row(suite, c));
  return out;
}

std::string ToJson(const std::vector<TestResult>& results) {
  std::string out = "{\"tests\": [\n";
  for (size_t i = 0; i < results.size(); ++i) {
    const TestResult& r = results[i];
    std::vector<std::string> ops;
    for (const std::string& op : r.ops) ops.push_back(absl::StrCat("\"", JsonEscape(op), "\""));
    absl::StrAppend(&out, "  {\"suite\": \"", r.suite, "\", \"name\": \"", JsonEscape(r.name),
                    "\", \"outcome\": \"", OutcomeName(r.outcome), "\", \"ops\": [",
                    absl::StrJoin(ops, ", "), "], \"ms\": ", absl::StrFormat("%.3f", r.ms),
                    ", \"message\": \"", JsonEscape(r.message), "\"}",
                    i + 1 < results.size() ? ",\n" : "\n");
  }
  absl::StrAppend(&out, "], \"suites\": {");
  bool first = true;
  for (const auto& [suite, c] : CountBySuite(results)) {
    absl::StrAppend(&out, first ? "" : ", ", "\"", suite, "\": {\"passed\": ", c.passed,
                    ", \"failed\": ", c.failed, ", \"unsupported\": ", c.unsupported,
                    ", \"bad_reference\": ", c.bad_reference, ", \"random\": ", c.random, "}");
    first = false;
  }
  absl::StrAppend(&out, "}}\n");
  return out;
}

}  // namespace inferd::tests

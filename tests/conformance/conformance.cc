#include "tests/conformance/conformance.h"

#include <dirent.h>

#include <algorithm>
#include <atomic>
#include <chrono>
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
        return r;
      }
    }
  }
  r.outcome = Outcome::kPassed;
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
  }
  return "?";
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
    SuiteCounts& c = counts[r.suite];
    if (r.outcome == Outcome::kPassed) ++c.passed;
    if (r.outcome == Outcome::kFailed) ++c.failed;
    if (r.outcome == Outcome::kUnsupported) ++c.unsupported;
  }
  return counts;
}

std::string FormatTable(const std::vector<TestResult>& results) {
  std::map<std::string, SuiteCounts> by_op;
  for (const TestResult& r : results) {
    if (r.suite != "node") continue;
    for (const std::string& op : r.ops) {
      SuiteCounts& c = by_op[op];
      if (r.outcome == Outcome::kPassed) ++c.passed;
      if (r.outcome == Outcome::kFailed) ++c.failed;
      if (r.outcome == Outcome::kUnsupported) ++c.unsupported;
    }
  }
  std::string out = absl::StrFormat("%-28s %7s %7s %12s\n", "operator (node tests)", "passed",
                                    "failed", "unsupported");
  for (const auto& [op, c] : by_op) {
    absl::StrAppend(&out,
                    absl::StrFormat("%-28s %7d %7d %12d\n", op, c.passed, c.failed, c.unsupported));
  }
  absl::StrAppend(
      &out, "\n",
      absl::StrFormat("%-28s %7s %7s %12s\n", "suite", "passed", "failed", "unsupported"));
  for (const auto& [suite, c] : CountBySuite(results)) {
    absl::StrAppend(
        &out, absl::StrFormat("%-28s %7d %7d %12d\n", suite, c.passed, c.failed, c.unsupported));
  }
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
                    ", \"failed\": ", c.failed, ", \"unsupported\": ", c.unsupported, "}");
    first = false;
  }
  absl::StrAppend(&out, "}}\n");
  return out;
}

}  // namespace inferd::tests

// The ONNX backend node tests (Debian package libonnx-testdata) for every operator registered
// here: each single-node model is run through its kernel with test_data_set_*'s inputs and
// compared with the expected outputs (rtol 1e-3, atol 1e-5, as onnx's backend test runner does
// for float). Cases our kernels decline with UNIMPLEMENTED (an unsupported element type, the
// MaxPool Indices output) are counted as skipped and listed; any other failure fails the test.
#include <dirent.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/data_type.h"
#include "engine/testing/kernel_tester.h"
#include "gtest/gtest.h"
#include "kernels/cpu/testing/kernel_runner.h"
#include "onnx/onnx_pb.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::Shape;
using engine::testing::KernelTester;
using testing::CpuRegistry;

constexpr char kNodeTestDir[] = "/usr/share/libonnx-testdata/data/node";

std::vector<std::string> ListDir(const std::string& dir) {
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

template <typename Proto>
bool ReadProto(const std::string& path, Proto& proto) {
  std::ifstream in(path, std::ios::binary);
  return in && proto.ParseFromIstream(&in);
}

// A TensorProto's payload as raw bytes of its element type.
std::vector<unsigned char> TensorBytes(const onnx::TensorProto& t) {
  if (t.has_raw_data()) return std::vector<unsigned char>(t.raw_data().begin(), t.raw_data().end());
  const auto type = static_cast<DataType>(t.data_type());
  std::vector<unsigned char> bytes;
  auto append = [&](const void* p, size_t n) {
    const auto* c = static_cast<const unsigned char*>(p);
    bytes.insert(bytes.end(), c, c + n);
  };
  switch (type) {
    case DataType::kFloat32:
      append(t.float_data().data(), t.float_data_size() * sizeof(float));
      break;
    case DataType::kFloat64:
      append(t.double_data().data(), t.double_data_size() * sizeof(double));
      break;
    case DataType::kInt64:
      append(t.int64_data().data(), t.int64_data_size() * sizeof(int64_t));
      break;
    case DataType::kInt32:
      append(t.int32_data().data(), t.int32_data_size() * sizeof(int32_t));
      break;
    default:  // 8- and 16-bit types live in int32_data, one element each
      for (int32_t v : t.int32_data()) append(&v, engine::ElementSize(type));
      break;
  }
  return bytes;
}

Shape TensorShape(const onnx::TensorProto& t) {
  Shape s;
  for (int64_t d : t.dims()) s.push_back(d);
  return s;
}

// "" when the outputs match, else what differs.
std::string Compare(const engine::Tensor& got, const onnx::TensorProto& want) {
  const DataType type = static_cast<DataType>(want.data_type());
  if (got.dtype() != type) return absl::StrCat("type ", engine::DataTypeName(got.dtype()));
  if (got.shape() != TensorShape(want)) {
    return absl::StrCat("shape ", got.shape().ToString(), " vs ", TensorShape(want).ToString());
  }
  const std::vector<unsigned char> bytes = TensorBytes(want);
  if (bytes.size() != got.bytes()) return "byte size";
  if (type != DataType::kFloat32) {
    return std::memcmp(bytes.data(), got.raw_data(), bytes.size()) == 0 ? "" : "values differ";
  }
  const auto* expected = reinterpret_cast<const float*>(bytes.data());
  const float* actual = got.data<float>();
  for (int64_t i = 0; i < got.NumElements(); ++i) {
    if (!(std::abs(actual[i] - expected[i]) <= 1e-5f + 1e-3f * std::abs(expected[i]))) {
      return absl::StrCat("element ", i, ": ", actual[i], " vs ", expected[i]);
    }
  }
  return "";
}

TEST(OnnxNodeTest, BackendTestDataPasses) {
  const std::vector<std::string> tests = ListDir(kNodeTestDir);
  if (tests.empty()) GTEST_SKIP() << kNodeTestDir << " not found (package libonnx-testdata)";
  std::vector<std::string> passed, skipped;
  for (const std::string& name : tests) {
    const std::string dir = absl::StrCat(kNodeTestDir, "/", name);
    onnx::ModelProto model;
    if (!ReadProto(dir + "/model.onnx", model) || model.graph().node_size() != 1) continue;
    const onnx::NodeProto& node = model.graph().node(0);
    const std::string domain = engine::NormalizeDomain(node.domain());
    if (!CpuRegistry().HasOp(domain, node.op_type())) continue;
    int opset = 1;
    for (const auto& imp : model.opset_import()) {
      if (engine::NormalizeDomain(imp.domain()) == domain) opset = imp.version();
    }
    for (const std::string& set : ListDir(dir)) {
      if (!absl::StartsWith(set, "test_data_set_")) continue;
      SCOPED_TRACE(absl::StrCat(name, "/", set, " (", node.op_type(), " opset ", opset, ")"));
      KernelTester t(node.op_type(), opset, domain);
      for (const onnx::AttributeProto& a : node.attribute()) t.Attr(a);
      // Graph inputs feed the node's non-empty inputs in order.
      int next = 0;
      std::vector<std::vector<unsigned char>> keep;
      for (const std::string& in : node.input()) {
        if (in.empty()) {
          t.AbsentInput();
          continue;
        }
        onnx::TensorProto tensor;
        ASSERT_TRUE(ReadProto(absl::StrCat(dir, "/", set, "/input_", next++, ".pb"), tensor));
        keep.push_back(TensorBytes(tensor));
        t.RawInput(static_cast<DataType>(tensor.data_type()), TensorShape(tensor),
                   keep.back().data(), keep.back().size());
      }
      t.Outputs(node.output_size());
      absl::StatusOr<std::vector<engine::Tensor>> out = t.Run(CpuRegistry());
      if (!out.ok() && out.status().code() == absl::StatusCode::kUnimplemented) {
        skipped.push_back(absl::StrCat(name, " (", out.status().message(), ")"));
        continue;
      }
      ASSERT_TRUE(out.ok()) << out.status();
      for (int i = 0; i < node.output_size(); ++i) {
        onnx::TensorProto want;
        ASSERT_TRUE(ReadProto(absl::StrCat(dir, "/", set, "/output_", i, ".pb"), want));
        EXPECT_EQ(Compare((*out)[i], want), "") << "output " << i;
      }
      passed.push_back(name);
    }
  }
  std::cout << passed.size() << " ONNX node test data sets run:\n  " << absl::StrJoin(passed, " ")
            << "\n"
            << skipped.size() << " skipped:\n  " << absl::StrJoin(skipped, "\n  ") << "\n";
  EXPECT_GE(passed.size(), 90u);  // 97 with ONNX 1.12's test data
}

}  // namespace
}  // namespace inferd::kernels::cpu

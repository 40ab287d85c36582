#include "engine/model.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <future>
#include <random>
#include <sstream>

#include "engine/testing/model_builder.h"
#include "engine/testing/runfiles.h"
#include "google/protobuf/unknown_field_set.h"

namespace inferd::engine {
namespace {

using testing::ModelBuilder;
using testing::Runfile;
using testing::TempDir;

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f << bytes;
}

TEST(Model, LoadsAGeneratedTransformerWithShapes) {
  auto m = Model::Load(Runfile("tools/models/transformer/model.onnx"));
  ASSERT_TRUE(m.ok()) << m.status();
  const Graph& g = (*m)->graph();
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.values[g.inputs[0]].name, "input_ids");
  EXPECT_EQ(g.values[g.inputs[0]].type, DataType::kInt64);
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_TRUE(g.values[g.outputs[0]].shape.IsStatic());
  bool found = false;
  for (const Node& n : g.nodes) {
    if (n.name == "/model/layers.1/self_attn/q_proj/MatMul") found = true;
    for (int v : n.outputs) {
      EXPECT_TRUE(g.values[v].shape.IsStatic()) << g.values[v].name;
      EXPECT_NE(g.values[v].type, DataType::kUndefined) << g.values[v].name;
    }
  }
  EXPECT_TRUE(found);
  EXPECT_GT((*m)->weights().total_bytes(), 0u);
  EXPECT_EQ((*m)->opset(""), 17);
  EXPECT_TRUE(g.Validate().ok());
}

TEST(Model, FixedInputShapesMakeADynamicModelStatic) {
  auto dynamic = Model::Load(Runfile("tools/models/transformer_dynamic/model.onnx"));
  ASSERT_TRUE(dynamic.ok()) << dynamic.status();
  const Graph& dg = (*dynamic)->graph();
  EXPECT_FALSE(dg.values[dg.outputs[0]].shape.IsStatic());
  ModelLoadOptions opts;
  opts.fixed_input_shapes["input_ids"] = {2, 5};
  auto fixed = Model::Load(Runfile("tools/models/transformer_dynamic/model.onnx"), opts);
  ASSERT_TRUE(fixed.ok()) << fixed.status();
  const Graph& fg = (*fixed)->graph();
  EXPECT_EQ(fg.values[fg.outputs[0]].shape.ToString(), "[2,5,64]");
  for (const Node& n : fg.nodes) {
    for (int v : n.outputs) EXPECT_TRUE(fg.values[v].shape.IsStatic()) << fg.values[v].name;
  }
  opts.fixed_input_shapes["input_ids"] = {2, 5, 1};
  auto bad = Model::Load(Runfile("tools/models/transformer_dynamic/model.onnx"), opts);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("rank"), std::string::npos) << bad.status();
}

TEST(Model, ExternalDataIsMappedNotCopied) {
  auto m = Model::Load(Runfile("tools/models/transformer_ext/model.onnx"));
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_GT((*m)->weights().mapped_bytes(), 400000u);
  EXPECT_LT((*m)->weights().owned_bytes(), (*m)->weights().total_bytes() / 10);
}

TEST(Model, MalformedFilesGiveClearErrors) {
  EXPECT_EQ(Model::Load("/nonexistent/model.onnx").status().code(), absl::StatusCode::kNotFound);
  const std::string good = ReadFile(Runfile("tools/models/mlp/model.onnx"));
  ASSERT_GT(good.size(), 100u);
  EXPECT_FALSE(Model::Parse(good.substr(0, good.size() / 2), "").ok());
  EXPECT_FALSE(Model::Parse("", "").ok());
  std::mt19937 rng(5);
  for (int i = 0; i < 200; ++i) {
    std::string junk = good;
    for (int k = 0; k < 8; ++k) junk[rng() % junk.size()] = static_cast<char>(rng());
    absl::StatusOr<std::shared_ptr<const Model>> m = Model::Parse(junk, "");
    if (!m.ok()) EXPECT_FALSE(m.status().message().empty());
  }
}

TEST(Model, LoadsOpsetsUpTo22AndRefusesLater) {
  for (int opset : {18, 21, 22}) {
    ModelBuilder b(opset);
    b.Input("x", DataType::kFloat32, {2});
    b.Node("Relu", {"x"}, {"y"}, "r");
    b.Output("y", DataType::kFloat32, {2});
    auto m = Model::Parse(b.Serialize(), "");
    EXPECT_TRUE(m.ok()) << opset << ": " << m.status();
  }
  ModelBuilder b(/*opset=*/23);
  b.Input("x", DataType::kFloat32, {2});
  b.Node("Relu", {"x"}, {"y"}, "r");
  b.Output("y", DataType::kFloat32, {2});
  auto m = Model::Parse(b.Serialize(), "");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("opset 23"), std::string::npos) << m.status();
  EXPECT_NE(m.status().message().find("1 to 22"), std::string::npos) << m.status();
  EXPECT_EQ(m.status().code(), absl::StatusCode::kUnimplemented);
}

TEST(Model, SortsUnsortedGraphsAndNamesAnonymousNodes) {
  ModelBuilder b(13);
  b.Input("x", DataType::kFloat32, {2, 2});
  b.Node("Relu", {"b"}, {"c"}, "third");
  b.Node("Relu", {"a"}, {"b"}, "");
  b.Node("Relu", {"x"}, {"a"}, "first");
  b.Output("c", DataType::kFloat32, {2, 2});
  auto m = Model::Parse(b.Serialize(), "");
  ASSERT_TRUE(m.ok()) << m.status();
  const Graph& g = (*m)->graph();
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[0].name, "first");
  EXPECT_EQ(g.nodes[1].name, "Relu_0");
  EXPECT_EQ(g.nodes[2].name, "third");
}

TEST(Model, FoldsConstantsIntoWeights) {
  ModelBuilder b(13);
  b.Input("x", DataType::kFloat32, {3});
  onnx::NodeProto& c = b.Node("Constant", {}, {"k"}, "const");
  auto* a = c.add_attribute();
  a->set_name("value_floats");
  a->set_type(onnx::AttributeProto::FLOATS);
  for (float f : {1.f, 2.f, 3.f}) a->add_floats(f);
  b.Node("Add", {"x", "k"}, {"y"}, "add");
  b.Output("y", DataType::kFloat32, {3});
  auto m = Model::Parse(b.Serialize(), "");
  ASSERT_TRUE(m.ok()) << m.status();
  const Graph& g = (*m)->graph();
  ASSERT_EQ(g.nodes.size(), 1u);
  const Value& k = g.values[g.FindValue("k")];
  ASSERT_NE(k.initializer, nullptr);
  EXPECT_EQ(k.initializer->data<float>()[2], 3.f);
}

TEST(Model, ReadsNodeMetadataOfNewerIrVersions) {
  ModelBuilder b(17, /*ir_version=*/10);
  b.Input("x", DataType::kFloat32, {2});
  onnx::NodeProto& n = b.Node("Relu", {"x"}, {"y"}, "r");
  onnx::StringStringEntryProto entry;
  entry.set_key("layer_ann");
  entry.set_value("encoder.layer3");
  n.GetReflection()->MutableUnknownFields(&n)->AddLengthDelimited(9, entry.SerializeAsString());
  b.Output("y", DataType::kFloat32, {2});
  auto m = Model::Parse(b.Serialize(), "");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ((*m)->graph().nodes[0].metadata.at("layer_ann"), "encoder.layer3");
  EXPECT_EQ((*m)->ir_version(), 10);
}

TEST(Model, UndefinedInputsAndDuplicateOutputsAreRefused) {
  ModelBuilder b(13);
  b.Input("x", DataType::kFloat32, {2});
  b.Node("Relu", {"nope"}, {"y"}, "r");
  b.Output("y", DataType::kFloat32, {2});
  auto m = Model::Parse(b.Serialize(), "");
  ASSERT_FALSE(m.ok());
}

// External data: a weight file, bounds checks, and a model over 2 GB that loads without reading
// its weights (the weight file is sparse).
class ExternalData : public ::testing::Test {
 protected:
  std::string dir_ = TempDir();
  std::string Build(const std::string& location, int64_t offset, int64_t elements) {
    ModelBuilder b(13);
    b.Input("x", DataType::kInt64, {1});
    onnx::TensorProto* t = b.RawInitializer();
    t->set_name("w");
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(elements);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* e = t->add_external_data();
    e->set_key("location");
    e->set_value(location);
    e = t->add_external_data();
    e->set_key("offset");
    e->set_value(std::to_string(offset));
    e = t->add_external_data();
    e->set_key("length");
    e->set_value(std::to_string(elements * 4));
    b.Node("Gather", {"w", "x"}, {"y"}, "g");
    b.Output("y", DataType::kFloat32, {1});
    const std::string path = dir_ + "/model_" + std::to_string(elements) + ".onnx";
    WriteFile(path, b.Serialize());
    return path;
  }
  void MakeSparse(const std::string& name, off_t bytes) {
    const int fd = ::open((dir_ + "/" + name).c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, bytes), 0);
    ::close(fd);
  }
};

TEST_F(ExternalData, WeightsOver2GBLoadByMapping) {
  constexpr int64_t kElements = 600'000'000;  // 2.4 GB of float32
  MakeSparse("big.bin", kElements * 4);
  auto m = Model::Load(Build("big.bin", 0, kElements));
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ((*m)->weights().total_bytes(), static_cast<uint64_t>(kElements) * 4);
  EXPECT_EQ((*m)->weights().owned_bytes(), 0u);
}

TEST_F(ExternalData, OutOfBoundsAndEscapingLocationsAreRefused) {
  MakeSparse("small.bin", 4096);
  auto beyond = Model::Load(Build("small.bin", 4000, 100));
  ASSERT_FALSE(beyond.ok());
  EXPECT_NE(beyond.status().message().find("outside"), std::string::npos) << beyond.status();
  auto escape = Model::Load(Build("../small.bin", 0, 10));
  ASSERT_FALSE(escape.ok());
  auto absolute = Model::Load(Build("/etc/passwd", 0, 10));
  ASSERT_FALSE(absolute.ok());
  auto missing = Model::Load(Build("missing.bin", 0, 10));
  ASSERT_FALSE(missing.ok());
}

// Issue 12 case 7: a symbolic link inside the model's folder must not hand out a file outside
// it (w.bin -> /etc/passwd loaded, and inference returned the file's bytes).
TEST_F(ExternalData, SymlinksOutOfTheModelFolderAreRefused) {
  MakeSparse("outside.bin", 4096);
  const std::string outside = dir_ + "/outside.bin";
  dir_ += "/linked_model";
  ASSERT_EQ(::mkdir(dir_.c_str(), 0755), 0);
  ASSERT_EQ(::symlink(outside.c_str(), (dir_ + "/w.bin").c_str()), 0);
  ASSERT_EQ(::symlink("/etc/passwd", (dir_ + "/passwd.bin").c_str()), 0);
  auto linked = Model::Load(Build("w.bin", 0, 10));
  ASSERT_FALSE(linked.ok());
  EXPECT_EQ(linked.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(linked.status().message().find("outside the model's directory"), std::string::npos)
      << linked.status();
  auto passwd = Model::Load(Build("passwd.bin", 0, 1));
  ASSERT_FALSE(passwd.ok());
  EXPECT_NE(passwd.status().message().find("resolves to '/etc/passwd'"), std::string::npos)
      << passwd.status();
  // A link that stays inside the folder (a shared weight file under another name) still loads.
  MakeSparse("real.bin", 4096);
  ASSERT_EQ(::symlink("real.bin", (dir_ + "/alias.bin").c_str()), 0);
  ASSERT_EQ(::mkdir((dir_ + "/sub").c_str(), 0755), 0);
  ASSERT_EQ(::symlink("../real.bin", (dir_ + "/sub/up.bin").c_str()), 0);
  auto alias = Model::Load(Build("alias.bin", 0, 10));
  EXPECT_TRUE(alias.ok()) << alias.status();
  auto up = Model::Load(Build("sub/up.bin", 0, 10));
  EXPECT_TRUE(up.ok()) << up.status();
  // A folder reached through a link is fine: the check compares resolved paths.
  const std::string via_link = TempDir() + "/via_link";
  ASSERT_EQ(::symlink(dir_.c_str(), via_link.c_str()), 0);
  auto through = Model::Load(via_link + "/model_10.onnx");
  EXPECT_TRUE(through.ok()) << through.status();
}

// Loads `path` on another thread; fails the test (and unblocks the loader by opening the FIFO
// for writing) if it has not answered within 5 seconds.
absl::Status LoadWithin5Seconds(const std::string& path) {
  auto result = std::async(std::launch::async, [path] { return Model::Load(path).status(); });
  if (result.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
    ADD_FAILURE() << "Model::Load('" << path << "') still blocked after 5 s";
    const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
  }
  return result.get();
}

// Issue 12 case 10: a FIFO as model.onnx (or as its external data) blocked start-up forever.
TEST_F(ExternalData, FifosAreRefusedWithoutBlocking) {
  dir_ += "/fifo_model";
  ASSERT_EQ(::mkdir(dir_.c_str(), 0755), 0);
  const std::string model = dir_ + "/model.onnx";
  ASSERT_EQ(::mkfifo(model.c_str(), 0644), 0);
  absl::Status status = LoadWithin5Seconds(model);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("is not a regular file (a FIFO)"), std::string::npos) << status;

  ASSERT_EQ(::mkfifo((dir_ + "/w.bin").c_str(), 0644), 0);
  status = LoadWithin5Seconds(Build("w.bin", 0, 10));
  EXPECT_NE(status.message().find("is not a regular file (a FIFO)"), std::string::npos) << status;
  auto dir = Model::Load(dir_);
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.status().message().find("(a directory)"), std::string::npos) << dir.status();
}

}  // namespace
}  // namespace inferd::engine

// Generation end to end on tiny Llama- and GPT-2-style Hugging Face exports (hidden 16, two
// layers, seeded random weights): greedy ids equal ONNX Runtime's loop for 40 tokens with the
// in-place KV cache (0 bytes copied), with the copying export, split over two devices, and with
// two sequences interleaved; bad prompts and lengths are refused with clear errors; a copy whose
// inputs and outputs are renamed runs by the names its genai_config.json gives.
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/kv_cache_rewrite.h"
#include "engine/testing/runfiles.h"
#include "genai/generator.h"
#include "gtest/gtest.h"
#include "kernels/cpu/cpu_kernels.h"
#include "onnx/onnx_pb.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace inferd::genai {
namespace {

struct Expected {
  std::string prompt;
  std::vector<int32_t> prompt_ids, greedy_ids;
};

std::string Dir(const std::string& style) {
  return engine::testing::Runfile("genai/testdata/models/" + style);
}

Expected LoadExpected(const std::string& style) {
  std::ifstream f(Dir(style) + "/expected.json");
  std::stringstream ss;
  ss << f.rdbuf();
  rapidjson::Document d;
  d.Parse(ss.str().c_str());
  Expected e;
  e.prompt = d["prompt"].GetString();
  for (const auto& v : d["prompt_ids"].GetArray()) e.prompt_ids.push_back(v.GetInt());
  for (const auto& v : d["greedy_ids"].GetArray()) e.greedy_ids.push_back(v.GetInt());
  return e;
}

// The new name of a decoder input or output in the renamed copy ("" for other values).
std::string Renamed(const std::string& name) {
  static const std::regex cache(R"((past_key_values|present)\.(\d+)\.(key|value))");
  std::smatch m;
  if (std::regex_match(name, m, cache)) {
    return absl::StrCat(m[1] == "present" ? "next_" : "cache_", m[3] == "key" ? "k" : "v", "_",
                        m[2].str());
  }
  if (name == "input_ids") return "tokens";
  if (name == "attention_mask") return "mask";
  if (name == "position_ids") return "positions";
  if (name == "logits") return "scores";
  return "";
}

// A copy of model folder `style` in `dir` whose graph inputs and outputs are renamed (Renamed),
// with a genai_config.json naming them (the folder's own, or a new one) through
// `past_key_template` (the other templates are the renamed ones).
void WriteRenamedCopy(const std::string& style, const std::string& dir,
                      const std::string& past_key_template) {
  namespace fs = std::filesystem;
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(Dir(style))) {
    fs::copy_file(e.path(), fs::path(dir) / e.path().filename());
  }
  onnx::ModelProto model;
  {
    std::ifstream f(dir + "/model.onnx", std::ios::binary);
    ASSERT_TRUE(model.ParseFromIstream(&f));
  }
  auto rename = [](std::string* name) {
    if (const std::string r = Renamed(*name); !r.empty()) *name = r;
  };
  onnx::GraphProto* g = model.mutable_graph();
  for (auto& v : *g->mutable_input()) rename(v.mutable_name());
  for (auto& v : *g->mutable_output()) rename(v.mutable_name());
  for (auto& v : *g->mutable_value_info()) rename(v.mutable_name());
  for (auto& n : *g->mutable_node()) {
    for (auto& v : *n.mutable_input()) rename(&v);
    for (auto& v : *n.mutable_output()) rename(&v);
  }
  {
    std::ofstream f(dir + "/model.onnx", std::ios::binary | std::ios::trunc);
    ASSERT_TRUE(model.SerializeToOstream(&f));
  }
  rapidjson::Document config;
  config.SetObject();
  if (std::ifstream f(dir + "/genai_config.json"); f) {
    std::stringstream ss;
    ss << f.rdbuf();
    config.Parse(ss.str().c_str());
  }
  auto& a = config.GetAllocator();
  auto object = [&](rapidjson::Value& parent, const char* key) -> rapidjson::Value& {
    if (!parent.HasMember(key)) {
      parent.AddMember(rapidjson::Value(key, a), rapidjson::Value(rapidjson::kObjectType), a);
    }
    return parent[key];
  };
  rapidjson::Value& decoder = object(object(config, "model"), "decoder");
  rapidjson::Value& inputs = object(decoder, "inputs");
  rapidjson::Value& outputs = object(decoder, "outputs");
  auto set = [&](rapidjson::Value& group, const char* key, const std::string& value) {
    group.RemoveMember(key);
    group.AddMember(rapidjson::Value(key, a), rapidjson::Value(value.c_str(), a), a);
  };
  set(inputs, "input_ids", "tokens");
  set(inputs, "attention_mask", "mask");
  set(inputs, "position_ids", "positions");
  set(inputs, "past_key_names", past_key_template);
  set(inputs, "past_value_names", "cache_v_%d");
  set(outputs, "logits", "scores");
  set(outputs, "present_key_names", "next_k_%d");
  set(outputs, "present_value_names", "next_v_%d");
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  config.Accept(writer);
  std::ofstream(dir + "/genai_config.json", std::ios::trunc) << buffer.GetString();
}

class GenerationTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(kernels::cpu::RegisterCpuKernels(registry_).ok());
    expected_ = LoadExpected(GetParam());
  }

  std::unique_ptr<GenerativeModel> Load(GeneratorOptions options) {
    auto m = GenerativeModel::Load(Dir(GetParam()), options, registry_);
    EXPECT_TRUE(m.ok()) << m.status();
    return m.ok() ? std::move(*m) : nullptr;
  }

  GenerateResult Greedy(const GenerativeModel& model, std::string* streamed = nullptr) {
    auto seq = Sequence::Start(model);
    EXPECT_TRUE(seq.ok()) << seq.status();
    GenerateParams p;
    p.max_new_tokens = static_cast<int>(expected_.greedy_ids.size());
    auto r = Generate(**seq, expected_.prompt_ids, p, [&](int32_t, absl::string_view text) {
      if (streamed) streamed->append(text.data(), text.size());
      return true;
    });
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : GenerateResult{};
  }

  engine::KernelRegistry registry_;
  Expected expected_;
};

TEST_P(GenerationTest, TokenizerGivesTheReferencePromptIds) {
  auto model = Load(GeneratorOptions{});
  ASSERT_NE(model, nullptr);
  auto ids = model->tokenizer().Encode(expected_.prompt, true);
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(*ids, expected_.prompt_ids);
}

TEST_P(GenerationTest, InPlaceCacheMatchesOnnxRuntimeAndCopiesNothing) {
  auto model = Load(GeneratorOptions{});
  ASSERT_NE(model, nullptr);
  EXPECT_TRUE(model->kv_in_place());
  // The Hugging Face exports are rewritten to append in place; the GenAI export's
  // GroupQueryAttention writes into its shared buffer, bound to the sequence's block.
  EXPECT_EQ(model->kv_form(),
            GetParam() == "llama_genai" ? "GroupQueryAttention" : "KvCacheAppend");
  EXPECT_EQ(model->caches().size(), 4u);  // 2 layers x key, value
  for (const engine::Value* out : model->session().outputs()) {
    EXPECT_EQ(out->name, "logits");  // the presents left the outputs: the blocks hold them
  }
  std::string streamed;
  const GenerateResult r = Greedy(*model, &streamed);
  EXPECT_EQ(r.token_ids, expected_.greedy_ids);
  EXPECT_EQ(r.kv_bytes_copied_per_token, 0u);
  EXPECT_EQ(r.stop_reason, "max_new_tokens");
  EXPECT_EQ(streamed, r.text);
  EXPECT_GT(r.decode_tokens_per_second, 0.0);
  // A second sequence of the same length: the arenas already hold what every step needs.
  const GenerateResult again = Greedy(*model);
  EXPECT_EQ(again.token_ids, expected_.greedy_ids);
  EXPECT_EQ(again.system_allocations_after_first_token, 0u);
}

TEST_P(GenerationTest, CopyingExportGivesTheSameTokensAndCountsItsCopies) {
  GeneratorOptions options;
  options.kv_in_place = false;
  auto model = Load(options);
  ASSERT_NE(model, nullptr);
  EXPECT_FALSE(model->kv_in_place());
  const GenerateResult r = Greedy(*model);
  EXPECT_EQ(r.token_ids, expected_.greedy_ids);
  EXPECT_GT(r.kv_bytes_copied_per_token, 0u);
}

// Layer 0 on cpu:1 (its KV blocks in cpu:1's execution arena), the rest on cpu:0.
TEST_P(GenerationTest, SplitOverTwoDevicesGivesTheSameTokens) {
  GeneratorOptions options;
  options.session.partition.devices = {partition::DeviceSpec{"cpu:1", std::nullopt, true},
                                       partition::DeviceSpec{"cpu:0", std::nullopt, true}};
  options.session.partition.name_rules =
      GetParam() == "gpt2" ? "cpu:1(h.[0-0]/)" : "cpu:1(layers.[0-0]/)";
  auto model = Load(options);
  ASSERT_NE(model, nullptr);
  ASSERT_EQ(model->session().devices().size(), 2u);
  int on_cpu1 = 0;
  for (const GenerativeModel::CacheInput& c : model->caches()) {
    on_cpu1 += model->session().devices()[c.device].device == "cpu:1";
  }
  EXPECT_EQ(on_cpu1, 2);  // layer 0's key and value blocks
  auto seq = Sequence::Start(*model);
  ASSERT_TRUE(seq.ok());
  for (const engine::DeviceArenas& d : model->session().devices()) {
    EXPECT_GE(d.execution->Stats().live_bytes, model->kv_bytes_per_sequence() / 2) << d.device;
  }
  GenerateParams p;
  p.max_new_tokens = static_cast<int>(expected_.greedy_ids.size());
  auto r = Generate(**seq, expected_.prompt_ids, p, nullptr);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->token_ids, expected_.greedy_ids);
}

// Two sequences, each with its own blocks, stepped alternately.
TEST_P(GenerationTest, InterleavedSequencesKeepTheirOwnCaches) {
  auto model = Load(GeneratorOptions{});
  ASSERT_NE(model, nullptr);
  auto a = Sequence::Start(*model), b = Sequence::Start(*model);
  ASSERT_TRUE(a.ok() && b.ok());
  const std::vector<int32_t> other = {expected_.prompt_ids[0], 5, 6, 7};
  ASSERT_TRUE((*a)->Feed(expected_.prompt_ids).ok());
  ASSERT_TRUE((*b)->Feed(other).ok());
  Sampler greedy(SamplingParams{}, model->vocab_size());
  std::vector<int32_t> got;
  for (size_t i = 0; i < expected_.greedy_ids.size(); ++i) {
    const int32_t next = greedy.Sample((*a)->last_logits(), {});
    got.push_back(next);
    const int32_t one[1] = {next};
    ASSERT_TRUE((*a)->Feed(one).ok());
    const int32_t other_next = greedy.Sample((*b)->last_logits(), {});
    const int32_t two[1] = {other_next};
    ASSERT_TRUE((*b)->Feed(two).ok());
  }
  EXPECT_EQ(got, expected_.greedy_ids);
}

TEST_P(GenerationTest, LengthsAreCheckedWithClearErrors) {
  GeneratorOptions options;
  options.max_length = 16;
  auto model = Load(options);
  ASSERT_NE(model, nullptr);
  auto seq = Sequence::Start(*model);
  ASSERT_TRUE(seq.ok());
  std::vector<int32_t> long_prompt(16, expected_.prompt_ids[1]);
  GenerateParams p;
  auto r = Generate(**seq, long_prompt, p, nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("maximum length of 16"), std::string::npos) << r.status();
  auto fits = Generate(**seq, expected_.prompt_ids, p, nullptr);  // 12 + 4 = 16: stops there
  ASSERT_TRUE(fits.ok()) << fits.status();
  EXPECT_EQ(fits->stop_reason, "max_length");
  options.max_length = 1 << 20;
  EXPECT_FALSE(GenerativeModel::Load(Dir(GetParam()), options, registry_).ok());
}

// Inputs and outputs named otherwise, and said so in genai_config.json: the same tokens, in place
// and copying (where the cache pairs come from the templates).
TEST_P(GenerationTest, NamesFromGenaiConfig) {
  const std::string dir = ::testing::TempDir() + "/renamed_" + GetParam();
  WriteRenamedCopy(GetParam(), dir, "cache_k_%d");
  for (bool in_place : {true, false}) {
    SCOPED_TRACE(in_place ? "in place" : "copying");
    GeneratorOptions options;
    options.kv_in_place = in_place;
    auto model = GenerativeModel::Load(dir, options, registry_);
    ASSERT_TRUE(model.ok()) << model.status();
    EXPECT_EQ((*model)->kv_in_place(), in_place);
    EXPECT_EQ((*model)->caches().size(), 4u);
    EXPECT_EQ(Greedy(**model).token_ids, expected_.greedy_ids);
  }
  // A template without its %d is refused, naming the key.
  WriteRenamedCopy(GetParam(), dir, "cache_k");
  auto bad = GenerativeModel::Load(dir, GeneratorOptions{}, registry_);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("model.decoder.inputs.past_key_names is 'cache_k'"),
            std::string::npos)
      << bad.status();
  // Names the graph does not have are refused too.
  WriteRenamedCopy(GetParam(), dir, "kache_%d");
  GeneratorOptions copying;
  copying.kv_in_place = false;
  auto missing = GenerativeModel::Load(dir, copying, registry_);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no input 'kache_0'"), std::string::npos)
      << missing.status();
}

INSTANTIATE_TEST_SUITE_P(Styles, GenerationTest, ::testing::Values("llama", "gpt2", "llama_genai"));

}  // namespace
}  // namespace inferd::genai

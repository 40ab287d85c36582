// Parity of our tokenizers with the reference ones (Hugging Face `tokenizers` 0.23, Python
// `sentencepiece` 0.2) on the corpus of tools/model_zoo/genai/make_tokenizers.py: ids with and
// without special tokens, and decoded text with and without them.
#include "genai/tokenizer.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "genai/hf_tokenizer.h"
#include "genai/sentencepiece_tokenizer.h"
#include "genai/unicode.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"

namespace inferd::genai {
namespace {

std::string Testdata(const std::string& rel) {
  const char* root = std::getenv("TEST_SRCDIR");
  return std::string(root != nullptr ? root : ".") + "/inferd/genai/testdata/tokenizers/" + rel;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string Str(const rapidjson::Value& v) {
  return std::string(v.GetString(), v.GetStringLength());
}

std::vector<int32_t> Ids(const rapidjson::Value& v) {
  std::vector<int32_t> out;
  for (const auto& x : v.GetArray()) out.push_back(x.GetInt());
  return out;
}

class HfParityTest : public ::testing::TestWithParam<std::string> {};

TEST_P(HfParityTest, IdsAndTextMatchTheReference) {
  auto tok = HfTokenizer::Load(Testdata(GetParam() + "/tokenizer.json"));
  ASSERT_TRUE(tok.ok()) << tok.status();
  rapidjson::Document cases;
  cases.Parse(ReadFile(Testdata(GetParam() + "/expected.json")).c_str());
  ASSERT_TRUE(cases.IsArray());
  int checked = 0;
  for (const auto& c : cases.GetArray()) {
    const std::string text = Str(c["text"]);
    const bool add_special = c["add_special_tokens"].GetBool();
    const std::vector<int32_t> want = Ids(c["ids"]);
    auto got = (*tok)->Encode(text, add_special);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, want) << GetParam() << " text: '" << text << "' special " << add_special;
    EXPECT_EQ((*tok)->Decode(want, false), Str(c["decoded"])) << GetParam() << ": " << text;
    EXPECT_EQ((*tok)->Decode(want, true), Str(c["decoded_skip_special"]))
        << GetParam() << ": " << text;
    ++checked;
  }
  EXPECT_GE(checked, 40);
}

INSTANTIATE_TEST_SUITE_P(Styles, HfParityTest,
                         ::testing::Values("gpt2", "llama3", "qwen2", "llama2", "mistral"));

TEST(SentencePieceParityTest, IdsAndTextMatchPythonSentencepiece) {
  auto tok = SentencePieceTokenizer::Load(Testdata("spm_bpe.model"));
  ASSERT_TRUE(tok.ok()) << tok.status();
  rapidjson::Document cases;
  cases.Parse(ReadFile(Testdata("spm_bpe.expected.json")).c_str());
  ASSERT_TRUE(cases.IsArray());
  for (const auto& c : cases.GetArray()) {
    const std::string text = Str(c["text"]);
    auto got = (*tok)->Encode(text, false);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, Ids(c["ids"])) << text;
    EXPECT_EQ((*tok)->Decode(*got, false), Str(c["decoded"])) << text;
  }
}

// Streaming: the pieces released one id at a time add up to the whole decoded text, and no
// piece ends inside a UTF-8 character (emoji and CJK span several byte tokens).
TEST(StreamingDecoderTest, PiecesAddUpToTheWholeText) {
  for (const std::string style : {"gpt2", "llama2", "mistral", "qwen2"}) {
    auto tok = HfTokenizer::Load(Testdata(style + "/tokenizer.json"));
    ASSERT_TRUE(tok.ok()) << tok.status();
    const std::string text =
        "emoji \xF0\x9F\x98\x80 and \xE6\x97\xA5\xE6\x9C\xAC text, numbers 12345 and more words";
    auto ids = (*tok)->Encode(text, false);
    ASSERT_TRUE(ids.ok());
    StreamingDecoder stream(**tok, true);
    std::string joined;
    for (int32_t id : *ids) {
      const std::string piece = stream.Add(id);
      EXPECT_EQ(CompleteUtf8Prefix(piece), piece.size()) << style;
      joined += piece;
    }
    joined += stream.Flush();
    EXPECT_EQ(joined, (*tok)->Decode(*ids, true)) << style;
  }
}

TEST(TokenizerLoadTest, BadFilesGiveClearErrors) {
  EXPECT_EQ(LoadTokenizer("/nonexistent").status().code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(HfTokenizer::Parse("{").ok());
  EXPECT_FALSE(HfTokenizer::Parse(R"({"model": {"type": "WordPiece", "vocab": {}}})").ok());
  auto bad_merge = HfTokenizer::Parse(
      R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [["a", "b"]]}})");
  ASSERT_FALSE(bad_merge.ok());
  EXPECT_NE(bad_merge.status().message().find("merge 0"), std::string::npos);
  auto bad_pre = HfTokenizer::Parse(
      R"({"model": {"type": "BPE", "vocab": {"a": 0}}, "pre_tokenizer": {"type": "Nope"}})");
  ASSERT_FALSE(bad_pre.ok());
  EXPECT_NE(bad_pre.status().message().find("Nope"), std::string::npos);
}

}  // namespace
}  // namespace inferd::genai

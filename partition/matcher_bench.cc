// matcher_bench: how long name-based matching takes for one graph: a SubstringMatcher with 64
// patterns over 1000 Hugging Face-style node names (32 layers of 31 nodes, plus embedding, norm
// and head). Prints microseconds per full graph (best and median of several batches) and the
// time to parse the rules and build the matcher. A program that prints figures, not a test.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "base/flags.h"
#include "partition/rule_parser.h"
#include "partition/substring_matcher.h"

ABSL_FLAG(int, batches, 15, "batches of 200 graphs; best and median over them");

namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> NodeNames() {
  static const char* const kLayerNodes[] = {"input_layernorm/LayerNormalization",
                                            "self_attn/q_proj/MatMul",
                                            "self_attn/q_proj/Add",
                                            "self_attn/k_proj/MatMul",
                                            "self_attn/k_proj/Add",
                                            "self_attn/v_proj/MatMul",
                                            "self_attn/v_proj/Add",
                                            "self_attn/Reshape",
                                            "self_attn/Reshape_1",
                                            "self_attn/Reshape_2",
                                            "self_attn/Transpose",
                                            "self_attn/Transpose_1",
                                            "self_attn/Transpose_2",
                                            "self_attn/MatMul",
                                            "self_attn/Mul",
                                            "self_attn/Softmax",
                                            "self_attn/MatMul_1",
                                            "self_attn/Transpose_3",
                                            "self_attn/Reshape_3",
                                            "self_attn/o_proj/MatMul",
                                            "Add",
                                            "post_attention_layernorm/LayerNormalization",
                                            "mlp/gate_proj/MatMul",
                                            "mlp/up_proj/MatMul",
                                            "mlp/up_proj/MatMul/MatMulAddFusion",
                                            "mlp/act_fn/Sigmoid",
                                            "mlp/act_fn/Mul",
                                            "mlp/Mul",
                                            "mlp/down_proj/MatMul",
                                            "Add_1",
                                            "rotary_emb/Cos"};
  std::vector<std::string> names = {"/model/embed_tokens/Gather", "/model/Shape", "/model/Gather",
                                    "/model/Unsqueeze"};
  for (int layer = 0; layer < 32; ++layer) {
    for (const char* node : kLayerNodes) {
      names.push_back(absl::StrCat("/model/layers.", layer, "/", node));
    }
  }
  for (const char* tail :
       {"/model/norm/LayerNormalization", "/lm_head/MatMul", "/Cast", "Attention"}) {
    names.push_back(tail);
  }
  return names;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args = inferd::ParseCommandLine(
      argc, argv,
      "usage: matcher_bench [--batches N]\n\nTimes name-based matching of a 1000-node graph.");
  const int batches = absl::GetFlag(FLAGS_batches);
  if (!args.empty() || batches < 1) {
    std::fprintf(stderr, "usage: matcher_bench [--batches N] (N >= 1)\n");
    return 1;
  }
  using inferd::partition::LayeringRules;
  using inferd::partition::ParseLayeringRules;
  using inferd::partition::RuleMode;
  using inferd::partition::SubstringMatcher;
  // 64 patterns: 16 + 16 layer prefixes, 4 names, 28 rarely matching ones (the worst case:
  // a node that matches nothing is compared with every pattern).
  const char* kRules =
      "cuda:0(layers.[0-15]/); cpu:1(layers.[16-31]/); "
      "cpu:0(embed_tokens, /model/norm/, lm_head, Attention, fused_block_[0-27]/)";
  const std::vector<std::string> names = NodeNames();

  const auto build_start = Clock::now();
  absl::StatusOr<LayeringRules> rules = ParseLayeringRules(kRules, RuleMode::kName);
  if (!rules.ok()) {
    std::fprintf(stderr, "%s\n", rules.status().ToString().c_str());
    return 1;
  }
  SubstringMatcher matcher(*rules);
  const double build_us =
      std::chrono::duration<double, std::micro>(Clock::now() - build_start).count();

  constexpr int kGraphsPerBatch = 200;
  std::vector<double> per_graph_us;
  size_t matched = 0;
  for (int b = 0; b < batches; ++b) {
    const auto start = Clock::now();
    for (int g = 0; g < kGraphsPerBatch; ++g) {
      for (const std::string& name : names) matched += matcher.Match(name).has_value();
    }
    per_graph_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count() /
                           kGraphsPerBatch);
  }
  std::sort(per_graph_us.begin(), per_graph_us.end());
  std::printf("matcher_bench: %zu node names, %zu patterns, %zu matched per graph\n", names.size(),
              matcher.num_patterns(), matched / (static_cast<size_t>(batches) * kGraphsPerBatch));
  std::printf("  parse rules + build matcher: %.1f us\n", build_us);
  std::printf("  match a full graph: best %.1f us, median %.1f us (%.0f ns per node)\n",
              per_graph_us.front(), per_graph_us[per_graph_us.size() / 2],
              per_graph_us[per_graph_us.size() / 2] * 1000 / names.size());
  return 0;
}

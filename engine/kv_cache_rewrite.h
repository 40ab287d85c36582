// KV-cache rewrite: makes a Concat-based decoder export (Hugging Face / optimum layout:
// present.N.key = Concat(past_key_values.N.key, new_key, axis=-2)) append in place into a
// sequence's KV block and read the valid prefix of it without a copy, so that the present of
// step t is the past of step t+1 with no byte copied (docs/generation.md#the-kv-cache).
//
// For each such Concat:
//   - the past input becomes the sequence's block [batch, kv_heads, capacity, head_dim]
//     (its dim 2 turns symbolic, "kv_capacity"); a new graph input kKvPastLengthInput (int64
//     scalar) says how many positions of it are valid;
//   - Concat -> com.inferd::KvCacheAppend(block, new, past_length): writes the new positions
//     into the block and outputs the present's shape;
//   - the layout ops between the present and the attention MatMuls (repeat_kv's Unsqueeze /
//     Expand / Reshape, Transpose [0,1,3,2], a Mul by a scalar weight) and the MatMuls ->
//     com.inferd::KvCacheMatMul reading the block with strides; Shape nodes on any of those
//     values -> com.inferd::KvCacheShape computing the same shapes without the data;
//   - the present outputs leave the graph's outputs (the block holds them).
// Fused nodes are named after the node they replace ("<original>/KvCacheMatMul"), so name-based
// partition rules still match. All or nothing: when one Concat's readers are anything else,
// FAILED_PRECONDITION names the node and the graph is left unchanged (the caller then runs the
// export as it is, copying past into present each step).
//
// ONNX Runtime GenAI exports (com.microsoft GroupQueryAttention reading past_key / past_value
// graph inputs and writing present_key / present_value graph outputs) need no new nodes: the
// attention kernel appends in place when present has past's shape (the builder's shared
// buffer). For them the rewrite only binds: each past input becomes the block (dim 2 symbolic,
// "kv_capacity"), its present leaves the graph's outputs, so the plan lets present be the block
// itself (GroupQueryAttention's output alias) and each step writes its new positions into it.
// The positions held come from attention_mask (the builder's graph derives seqlens_k and
// total_sequence_length from it), so no past-length input is added.
#ifndef INFERD_ENGINE_KV_CACHE_REWRITE_H_
#define INFERD_ENGINE_KV_CACHE_REWRITE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/graph.h"

namespace inferd::engine {

inline constexpr char kKvPastLengthInput[] = "inferd_kv_past_length";
inline constexpr char kKvCacheAppendSuffix[] = "/KvCacheAppend";
inline constexpr char kKvCacheMatMulSuffix[] = "/KvCacheMatMul";
inline constexpr char kKvCacheShapeSuffix[] = "/KvCacheShape";

struct KvCacheRewrite {
  // Graph inputs now bound to KV blocks, in graph input order, with the present outputs they
  // replaced ("past_key_values.0.key" -> "present.0.key").
  struct Block {
    std::string input;
    std::string present;
    std::string append_node;  // the node writing it (KvCacheAppend or GroupQueryAttention);
                              // its device holds the block
  };
  std::vector<Block> blocks;
  int matmuls = 0;  // attention MatMuls now reading a block
  // Concat form: the graph input kKvPastLengthInput was added and must be fed. GroupQueryAttention
  // form: false.
  bool past_length_input = true;
  // "KvCacheAppend" or "GroupQueryAttention": which form was bound (for reports).
  std::string form;
};

absl::StatusOr<KvCacheRewrite> RewriteKvCacheInPlace(Graph& graph);

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_KV_CACHE_REWRITE_H_

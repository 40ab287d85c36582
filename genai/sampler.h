// Sampler: picks the next token from a row of logits: greedy (argmax, lowest id on ties, as
// numpy and ONNX Runtime), or sampling with temperature, top-k, top-p (nucleus) and a seeded
// generator; a repetition penalty (Hugging Face's: a seen token's positive logit is divided by
// it, a negative one multiplied) applies to both. Scratch buffers are sized to the vocabulary at
// construction, so Sample allocates nothing. One per sequence; not thread-safe.
//
// Example:
//   SamplingParams p;  p.temperature = 0.7f;  p.top_k = 40;  p.seed = 1;
//   Sampler s(p, vocab_size);
//   int32_t next = s.Sample(absl::MakeSpan(logits), history);
#ifndef INFERD_GENAI_SAMPLER_H_
#define INFERD_GENAI_SAMPLER_H_

#include <cstdint>
#include <random>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace inferd::genai {

struct SamplingParams {
  // 0 (or greedy) picks the argmax; otherwise logits are divided by it before sampling.
  float temperature = 0.f;
  int top_k = 0;      // 0: no limit
  float top_p = 1.f;  // 1: no limit
  float repetition_penalty = 1.f;
  uint64_t seed = 0;
  bool greedy() const { return temperature <= 0.f; }
};

// INVALID_ARGUMENT naming the parameter when out of range (negative temperature or top_k,
// top_p outside (0, 1], penalty <= 0).
absl::Status ValidateSamplingParams(const SamplingParams& p);

class Sampler {
 public:
  Sampler(const SamplingParams& params, int vocab_size);

  // `logits` is modified (penalty, temperature). `history`: ids seen so far (prompt and
  // generated), for the repetition penalty.
  int32_t Sample(absl::Span<float> logits, absl::Span<const int32_t> history);

 private:
  SamplingParams params_;
  std::mt19937_64 rng_;
  std::vector<int32_t> order_;  // candidate ids, best first
  std::vector<float> probs_;
  std::vector<uint8_t> seen_;  // repetition penalty: ids already penalized this step
};

}  // namespace inferd::genai

#endif  // INFERD_GENAI_SAMPLER_H_

#include "genai/sampler.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace inferd::genai {

absl::Status ValidateSamplingParams(const SamplingParams& p) {
  if (!(p.temperature >= 0.f) || !std::isfinite(p.temperature)) {
    return absl::InvalidArgumentError(
        absl::StrCat("temperature must be >= 0 (0: greedy), got ", p.temperature));
  }
  if (p.top_k < 0)
    return absl::InvalidArgumentError(absl::StrCat("top_k must be >= 0, got ", p.top_k));
  if (!(p.top_p > 0.f && p.top_p <= 1.f)) {
    return absl::InvalidArgumentError(absl::StrCat("top_p must be in (0, 1], got ", p.top_p));
  }
  if (!(p.repetition_penalty > 0.f) || !std::isfinite(p.repetition_penalty)) {
    return absl::InvalidArgumentError(
        absl::StrCat("repetition_penalty must be > 0, got ", p.repetition_penalty));
  }
  return absl::OkStatus();
}

Sampler::Sampler(const SamplingParams& params, int vocab_size)
    : params_(params),
      rng_(params.seed),
      order_(static_cast<size_t>(std::max(vocab_size, 1))),
      probs_(static_cast<size_t>(std::max(vocab_size, 1))),
      seen_(static_cast<size_t>(std::max(vocab_size, 1)), 0) {}

int32_t Sampler::Sample(absl::Span<float> logits, absl::Span<const int32_t> history) {
  const int32_t n = static_cast<int32_t>(std::min(logits.size(), order_.size()));
  if (n == 0) return 0;
  if (params_.repetition_penalty != 1.f) {
    for (int32_t id : history) {
      if (id < 0 || id >= n || seen_[id]) continue;
      seen_[id] = 1;
      float& l = logits[id];
      l = l > 0.f ? l / params_.repetition_penalty : l * params_.repetition_penalty;
    }
    for (int32_t id : history) {
      if (id >= 0 && id < n) seen_[id] = 0;
    }
  }
  if (params_.greedy()) {
    int32_t best = 0;
    for (int32_t i = 1; i < n; ++i) {
      if (logits[i] > logits[best]) best = i;
    }
    return best;
  }
  // Candidates best first: all of them, or the top k.
  for (int32_t i = 0; i < n; ++i) order_[i] = i;
  const int32_t k = params_.top_k > 0 ? std::min(params_.top_k, n) : n;
  auto better = [&](int32_t a, int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  };
  std::partial_sort(order_.begin(), order_.begin() + k, order_.begin() + n, better);
  // Softmax of logits / temperature over the candidates (max subtracted).
  const float inv_t = 1.f / params_.temperature;
  const float top = logits[order_[0]];
  double sum = 0.0;
  for (int32_t i = 0; i < k; ++i) {
    probs_[i] = std::exp((logits[order_[i]] - top) * inv_t);
    sum += probs_[i];
  }
  // Nucleus: the smallest prefix whose probability reaches top_p (at least one token).
  int32_t keep = k;
  if (params_.top_p < 1.f) {
    double cumulative = 0.0;
    for (int32_t i = 0; i < k; ++i) {
      cumulative += probs_[i] / sum;
      if (cumulative >= params_.top_p) {
        keep = i + 1;
        break;
      }
    }
    sum = 0.0;
    for (int32_t i = 0; i < keep; ++i) sum += probs_[i];
  }
  const double r = std::uniform_real_distribution<double>(0.0, sum)(rng_);
  double acc = 0.0;
  for (int32_t i = 0; i < keep; ++i) {
    acc += probs_[i];
    if (r < acc) return order_[i];
  }
  return order_[keep - 1];
}

}  // namespace inferd::genai

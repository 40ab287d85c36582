// TfIdfVectorizer (opset 9) on integer tokens (int32 / int64 X, pool_int64s): the n-grams of each
// row of X, with up to max_skip_count tokens skipped between the items of a gram, counted against
// the pool, as term frequencies (TF), 0/1 indicators times the weights (IDF) or counts times the
// weights (TFIDF). X [C] -> Y [max(ngram_indexes) + 1]; X [N, C] -> Y [N, ...].
//
// The pool lists its grams by length: ngram_counts[k] is the pool position where the (k + 1)-grams
// start; the i-th gram of the pool (in that order) counts into column ngram_indexes[i]. As ONNX
// Runtime does, the weights apply per column of Y, after the counts of the grams sharing it are
// added: TF is the count, IDF weights[c] where the count is not 0, TFIDF the count times
// weights[c] (weights 1 when absent). A gram of one token is counted once per position (skips do
// not apply); longer grams once per (start, skip). String tokens (string X, pool_strings;
// docs/strings.md): each distinct pool string is numbered at load, X's strings are numbered by
// that table per run (a string the pool lacks gets -1, which no gram holds) and counted as
// integer tokens.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/registration.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

enum class Mode { kTf, kIdf, kTfIdf };

// A hash of n tokens, from the first to the last.
uint64_t HashTokens(const int64_t* tokens, int64_t n, int64_t stride) {
  uint64_t h = 1469598103934665603ull;
  for (int64_t j = 0; j < n; ++j) {
    h ^= static_cast<uint64_t>(tokens[j * stride]);
    h *= 1099511628211ull;
    h ^= h >> 29;
  }
  return h;
}

class TfIdfKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<TfIdfKernel>> Create(const KernelInfo& info) {
    auto k = std::unique_ptr<TfIdfKernel>(new TfIdfKernel(info));
    const std::string mode = info.GetString("mode", "");
    if (mode == "TF") {
      k->mode_ = Mode::kTf;
    } else if (mode == "IDF") {
      k->mode_ = Mode::kIdf;
    } else if (mode == "TFIDF") {
      k->mode_ = Mode::kTfIdf;
    } else {
      return info.Error(absl::StrCat("mode must be TF, IDF or TFIDF, got '", mode, "'"));
    }
    k->min_gram_ = info.GetInt("min_gram_length", 0);
    k->max_gram_ = info.GetInt("max_gram_length", 0);
    k->max_skip_ = info.GetInt("max_skip_count", 0);
    if (k->min_gram_ < 1 || k->max_gram_ < k->min_gram_ || k->max_skip_ < 0) {
      return info.Error(
          absl::StrCat("need 1 <= min_gram_length <= max_gram_length and "
                       "max_skip_count >= 0, got ",
                       k->min_gram_, ", ", k->max_gram_, " and ", k->max_skip_));
    }
    const std::vector<std::string> pool_strings = info.GetStrings("pool_strings");
    if (!pool_strings.empty()) {
      if (!info.GetInts("pool_int64s").empty()) {
        return info.Error("pool_strings and pool_int64s are both set; give one");
      }
      for (const std::string& token : pool_strings) {
        auto [it, added] =
            k->string_ids_.emplace(token, static_cast<int64_t>(k->string_ids_.size()));
        k->pool_.push_back(it->second);
      }
      k->string_pool_ = true;
    } else {
      k->pool_ = info.GetInts("pool_int64s");
    }
    const std::vector<int64_t>& pool = k->pool_;
    const std::vector<int64_t> counts = info.GetInts("ngram_counts");
    const std::vector<int64_t> indexes = info.GetInts("ngram_indexes");
    k->weights_ = info.GetFloats("weights");
    // The grams of each length, in pool order.
    k->grams_.resize(counts.size());
    int64_t ordinal = 0;
    for (size_t g = 0; g < counts.size(); ++g) {
      const int64_t n = static_cast<int64_t>(g) + 1;
      const int64_t start = counts[g];
      const int64_t end = g + 1 < counts.size() ? counts[g + 1] : static_cast<int64_t>(pool.size());
      if (start < 0 || end < start || end > static_cast<int64_t>(pool.size()) ||
          (end - start) % n != 0) {
        return info.Error(absl::StrCat("ngram_counts[", g, "] = ", start,
                                       " does not start a run of ", n, "-grams in a pool of ",
                                       pool.size()));
      }
      for (int64_t p = start; p < end; p += n) {
        k->grams_[g].emplace(HashTokens(pool.data() + p, n, 1), Gram{ordinal++, p});
      }
    }
    if (static_cast<int64_t>(indexes.size()) != ordinal) {
      return info.Error(absl::StrCat("ngram_indexes has ", indexes.size(),
                                     " entries but the pool holds ", ordinal, " n-grams"));
    }
    for (int64_t idx : indexes) {
      if (idx < 0) return info.Error("ngram_indexes must be >= 0");
      k->width_ = std::max(k->width_, idx + 1);
    }
    // One weight per n-gram (as ONNX Runtime checks), read per column: they must cover Y.
    if (!k->weights_.empty() &&
        (static_cast<int64_t>(k->weights_.size()) != ordinal || k->width_ > ordinal)) {
      return info.Error(absl::StrCat("weights has ", k->weights_.size(),
                                     " entries; the pool holds ", ordinal, " n-grams into ",
                                     k->width_, " columns"));
    }
    k->indexes_ = indexes;
    return k;
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    const DataType t = x->dtype();
    if (t != DataType::kInt32 && t != DataType::kInt64 && t != DataType::kString) {
      return node_.InvalidArgument("X must be int32, int64 or string");
    }
    if ((t == DataType::kString) != string_pool_) {
      return node_.InvalidArgument(
          absl::StrCat("X is ", engine::DataTypeName(t), " but the pool holds ",
                       string_pool_ ? "strings (pool_strings)" : "integers (pool_int64s)"));
    }
    const Shape& xs = x->shape();
    if (xs.rank() != 1 && xs.rank() != 2) {
      return node_.InvalidArgument(absl::StrCat("X must be [C] or [N, C], got ", xs.ToString()));
    }
    const int64_t rows = xs.rank() == 1 ? 1 : xs[0], cols = xs[xs.rank() - 1];
    const Shape ys = xs.rank() == 1 ? Shape{width_} : Shape{rows, width_};
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kFloat32, ys));
    float* out = y->mutable_data<float>();
    std::fill(out, out + y->NumElements(), 0.0f);
    // Per run: the counts of a row's columns, and X as int64.
    INFERD_ASSIGN_OR_RETURN(Tensor count_tensor,
                            ctx.MakeTemporaryTensor(DataType::kInt64, Shape{width_}));
    int64_t* counts = count_tensor.mutable_data<int64_t>();
    const int64_t* tokens = nullptr;
    Tensor widened;
    if (t == DataType::kInt64) {
      tokens = x->data<int64_t>();
    } else if (t == DataType::kString) {  // numbered by the pool's table, -1 when absent
      INFERD_ASSIGN_OR_RETURN(widened, ctx.MakeTemporaryTensor(DataType::kInt64, xs));
      int64_t* w = widened.mutable_data<int64_t>();
      const std::string* in = x->data<std::string>();
      for (int64_t i = 0; i < x->NumElements(); ++i) {
        auto it = string_ids_.find(in[i]);
        w[i] = it == string_ids_.end() ? -1 : it->second;
      }
      tokens = w;
    } else {
      INFERD_ASSIGN_OR_RETURN(widened, ctx.MakeTemporaryTensor(DataType::kInt64, xs));
      int64_t* w = widened.mutable_data<int64_t>();
      const int32_t* in = x->data<int32_t>();
      for (int64_t i = 0; i < x->NumElements(); ++i) w[i] = in[i];
      tokens = w;
    }
    for (int64_t r = 0; r < rows; ++r) {
      std::fill(counts, counts + width_, 0);
      const int64_t row = r * cols;
      const int64_t longest = std::min<int64_t>(max_gram_, static_cast<int64_t>(grams_.size()));
      for (int64_t n = min_gram_; n <= longest; ++n) {
        const auto& pool = grams_[n - 1];
        if (pool.empty()) continue;
        for (int64_t skip = 0; skip <= (n == 1 ? 0 : max_skip_); ++skip) {
          const int64_t stride = skip + 1;
          for (int64_t i = 0; i + (n - 1) * stride < cols; ++i) {
            const int64_t* first = tokens + row + i;
            auto [it, end] = pool.equal_range(HashTokens(first, n, stride));
            for (; it != end; ++it) {
              bool same = true;
              for (int64_t j = 0; j < n && same; ++j) {
                same = first[j * stride] == pool_[it->second.offset + j];
              }
              if (same) {
                ++counts[indexes_[it->second.ordinal]];
                break;
              }
            }
          }
        }
      }
      float* yr = out + r * width_;
      for (int64_t col = 0; col < width_; ++col) {
        if (counts[col] == 0) continue;
        const float w = weights_.empty() ? 1.0f : weights_[col];
        const float c = static_cast<float>(counts[col]);
        yr[col] = mode_ == Mode::kTf ? c : mode_ == Mode::kIdf ? w : c * w;
      }
    }
    return absl::OkStatus();
  }

 private:
  explicit TfIdfKernel(const KernelInfo& info) : node_(info) {}

  const NodeLabel node_;
  Mode mode_ = Mode::kTf;
  int64_t min_gram_ = 1, max_gram_ = 1, max_skip_ = 0;
  struct Gram {
    int64_t ordinal;  // in pool order
    int64_t offset;   // of its first token in pool_
  };
  std::vector<int64_t> pool_;  // tokens; for pool_strings, their numbers in string_ids_
  bool string_pool_ = false;
  std::unordered_map<std::string, int64_t> string_ids_;         // distinct pool strings, numbered
  std::vector<std::unordered_multimap<uint64_t, Gram>> grams_;  // per length - 1, by hash
  std::vector<int64_t> indexes_;                                // per ordinal: Y's column
  std::vector<float> weights_;                                  // per column (empty: all 1)
  int64_t width_ = 0;                                           // Y's last dim
};

}  // namespace

std::vector<engine::KernelDef> TfIdfKernelDefs() {
  return {CpuDef(engine::kOnnxDomain, "TfIdfVectorizer", 9, kMaxOpset,
                 {DataType::kInt32, DataType::kInt64, DataType::kString},
                 FactoryOf<TfIdfKernel>())};
}

}  // namespace inferd::kernels::cpu

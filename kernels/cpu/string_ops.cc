// The string operators (docs/strings.md), own code: StringNormalizer (10), StringConcat (20),
// StringSplit (20), RegexFullMatch (20, RE2 syntax through libre2) and Equal on strings (19+).
// Inputs and outputs are string tensors (std::string elements on the heap); case changes use
// ICU's full Unicode case mapping for the node's locale. Immutable after creation: thread-safe
// (RE2 objects are safe to share between threads).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"
#include "engine/domain.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/registration.h"
#include "re2/re2.h"
#include "unicode/locid.h"
#include "unicode/unistr.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

// The index into `in` (broadcast to `out`, which it broadcasts to) of each element of `out`.
std::vector<int64_t> BroadcastIndices(const Shape& in, const Shape& out) {
  const size_t rank = out.rank();
  const size_t lead = rank - in.rank();
  std::vector<int64_t> strides(rank, 0);
  int64_t stride = 1;
  for (size_t d = in.rank(); d-- > 0;) {
    if (in[d] != 1) strides[d + lead] = stride;
    stride *= in[d];
  }
  std::vector<int64_t> index(static_cast<size_t>(out.NumElements()));
  std::vector<int64_t> pos(rank, 0);
  int64_t at = 0;
  for (int64_t& k : index) {
    k = at;
    for (size_t d = rank; d-- > 0;) {  // odometer
      at += strides[d];
      if (++pos[d] < out[d]) break;
      at -= strides[d] * out[d];
      pos[d] = 0;
    }
  }
  return index;
}

absl::StatusOr<const Tensor*> StringInput(const KernelContext& ctx, int i, const NodeLabel& node) {
  INFERD_ASSIGN_OR_RETURN(const Tensor* t, RequiredInput(ctx, i, node));
  INFERD_RETURN_IF_ERROR(CheckType(*t, DataType::kString, i, node));
  return t;
}

// ---- StringNormalizer ----

enum class CaseChange { kNone, kLower, kUpper };

class StringNormalizerKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<StringNormalizerKernel>> Create(const KernelInfo& info) {
    const NodeLabel node(info);
    const std::string action = info.GetString("case_change_action", "NONE");
    CaseChange change;
    if (action == "NONE") {
      change = CaseChange::kNone;
    } else if (action == "LOWER") {
      change = CaseChange::kLower;
    } else if (action == "UPPER") {
      change = CaseChange::kUpper;
    } else {
      return node.InvalidArgument(
          absl::StrCat("case_change_action must be NONE, LOWER or UPPER, got '", action, "'"));
    }
    const std::string locale = info.GetString("locale", "en_US");
    icu::Locale loc(locale.c_str());
    if (loc.isBogus()) return node.InvalidArgument(absl::StrCat("unknown locale '", locale, "'"));
    auto k = std::unique_ptr<StringNormalizerKernel>(new StringNormalizerKernel(info, change, loc));
    k->case_sensitive_ = info.GetInt("is_case_sensitive", 0) != 0;
    for (const std::string& w : info.GetStrings("stopwords")) {
      k->stopwords_.insert(k->case_sensitive_ ? w : k->Map(w, CaseChange::kLower));
    }
    return k;
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, StringInput(ctx, 0, node_));
    const Shape& s = x->shape();
    if (!(s.rank() == 1 || (s.rank() == 2 && s[0] == 1))) {
      return node_.InvalidArgument(absl::StrCat("X must be [C] or [1, C], got ", s.ToString()));
    }
    const std::string* in = x->data<std::string>();
    std::vector<std::string> kept;
    for (int64_t i = 0; i < x->NumElements(); ++i) {
      if (!stopwords_.empty()) {
        const std::string key = case_sensitive_ ? in[i] : Map(in[i], CaseChange::kLower);
        if (stopwords_.count(key) != 0) continue;
      }
      kept.push_back(Map(in[i], change_));
    }
    // Everything removed: one empty string, as the spec says.
    if (kept.empty()) kept.emplace_back();
    const int64_t c = static_cast<int64_t>(kept.size());
    const Shape out_shape = s.rank() == 1 ? Shape{c} : Shape{1, c};
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kString, out_shape));
    std::string* out = y->mutable_data<std::string>();
    for (int64_t i = 0; i < c; ++i) out[i] = std::move(kept[static_cast<size_t>(i)]);
    return absl::OkStatus();
  }

 private:
  StringNormalizerKernel(const KernelInfo& info, CaseChange change, icu::Locale locale)
      : node_(info), change_(change), locale_(std::move(locale)) {}

  // `s` (UTF-8) lowercased / uppercased for the locale; unchanged for kNone.
  std::string Map(const std::string& s, CaseChange change) const {
    if (change == CaseChange::kNone) return s;
    icu::UnicodeString u =
        icu::UnicodeString::fromUTF8(icu::StringPiece(s.data(), static_cast<int32_t>(s.size())));
    if (change == CaseChange::kLower) {
      u.toLower(locale_);
    } else {
      u.toUpper(locale_);
    }
    std::string out;
    u.toUTF8String(out);
    return out;
  }

  const NodeLabel node_;
  const CaseChange change_;
  const icu::Locale locale_;
  bool case_sensitive_ = false;
  std::set<std::string> stopwords_;  // lowercased unless case-sensitive
};

// ---- StringConcat, Equal (strings): binary with broadcasting ----

template <typename Out, typename Op>
absl::Status StringBinary(KernelContext& ctx, const NodeLabel& node, DataType out_type, Op op) {
  INFERD_ASSIGN_OR_RETURN(const Tensor* a, StringInput(ctx, 0, node));
  INFERD_ASSIGN_OR_RETURN(const Tensor* b, StringInput(ctx, 1, node));
  INFERD_ASSIGN_OR_RETURN(Shape shape, BroadcastShapes(a->shape(), b->shape(), node));
  INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, out_type, shape));
  if (y->NumElements() == 0) return absl::OkStatus();
  const std::string* x0 = a->data<std::string>();
  const std::string* x1 = b->data<std::string>();
  Out* out = y->mutable_data<Out>();
  if (a->shape() == shape && b->shape() == shape) {
    for (int64_t i = 0; i < y->NumElements(); ++i) out[i] = op(x0[i], x1[i]);
    return absl::OkStatus();
  }
  const std::vector<int64_t> ia = BroadcastIndices(a->shape(), shape);
  const std::vector<int64_t> ib = BroadcastIndices(b->shape(), shape);
  for (size_t i = 0; i < ia.size(); ++i) out[i] = op(x0[ia[i]], x1[ib[i]]);
  return absl::OkStatus();
}

class StringConcatKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<StringConcatKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<StringConcatKernel>(new StringConcatKernel(info));
  }
  absl::Status Compute(KernelContext& ctx) const override {
    return StringBinary<std::string>(
        ctx, node_, DataType::kString,
        [](const std::string& x, const std::string& y) { return absl::StrCat(x, y); });
  }

 private:
  explicit StringConcatKernel(const KernelInfo& info) : node_(info) {}
  const NodeLabel node_;
};

class StringEqualKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<StringEqualKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<StringEqualKernel>(new StringEqualKernel(info));
  }
  absl::Status Compute(KernelContext& ctx) const override {
    return StringBinary<bool>(ctx, node_, DataType::kBool,
                              [](const std::string& x, const std::string& y) { return x == y; });
  }

 private:
  explicit StringEqualKernel(const KernelInfo& info) : node_(info) {}
  const NodeLabel node_;
};

// ---- StringSplit ----

// Python's str.split(sep, maxsplit) (maxsplit < 0: no limit).
void SplitOn(absl::string_view s, absl::string_view sep, int64_t maxsplit,
             std::vector<absl::string_view>& parts) {
  size_t start = 0;
  int64_t splits = 0;
  while (maxsplit < 0 || splits < maxsplit) {
    const size_t at = s.find(sep, start);
    if (at == absl::string_view::npos) break;
    parts.push_back(s.substr(start, at - start));
    start = at + sep.size();
    ++splits;
  }
  parts.push_back(s.substr(start));
}

// ASCII whitespace and the ASCII separators Python's str.isspace() counts.
bool IsSpace(char c) {
  return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f');
}

// Python's str.split(None, maxsplit): runs of whitespace separate, leading and trailing
// whitespace gives no empty parts; after maxsplit splits the rest (leading whitespace removed)
// is the last part.
void SplitOnWhitespace(absl::string_view s, int64_t maxsplit,
                       std::vector<absl::string_view>& parts) {
  size_t i = 0;
  int64_t splits = 0;
  while (true) {
    while (i < s.size() && IsSpace(s[i])) ++i;
    if (i == s.size()) return;
    if (maxsplit >= 0 && splits == maxsplit) {
      size_t end = s.size();
      while (end > i && IsSpace(s[end - 1])) --end;
      parts.push_back(s.substr(i, end - i));
      return;
    }
    const size_t start = i;
    while (i < s.size() && !IsSpace(s[i])) ++i;
    parts.push_back(s.substr(start, i - start));
    ++splits;
  }
}

class StringSplitKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<StringSplitKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<StringSplitKernel>(new StringSplitKernel(info));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, StringInput(ctx, 0, node_));
    const int64_t n = x->NumElements();
    const std::string* in = x->data<std::string>();
    std::vector<std::vector<absl::string_view>> parts(static_cast<size_t>(n));
    size_t width = 0;
    for (int64_t i = 0; i < n; ++i) {
      std::vector<absl::string_view>& p = parts[static_cast<size_t>(i)];
      if (delimiter_.empty()) {
        SplitOnWhitespace(in[i], maxsplit_, p);
      } else {
        SplitOn(in[i], delimiter_, maxsplit_, p);
      }
      width = std::max(width, p.size());
    }
    std::vector<int64_t> dims(x->shape().dims().begin(), x->shape().dims().end());
    dims.push_back(static_cast<int64_t>(width));
    if (!engine::CheckedNumElements(dims, sizeof(std::string))) {
      return node_.InvalidArgument("the output shape is too large");
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kString, Shape(dims)));
    std::string* out = y->mutable_data<std::string>();
    for (size_t i = 0; i < parts.size(); ++i) {
      for (size_t j = 0; j < parts[i].size(); ++j) {
        out[i * width + j] = std::string(parts[i][j]);
      }  // the rest stays "" (padding)
    }
    dims.pop_back();
    if (ctx.output_wanted(1)) {
      INFERD_ASSIGN_OR_RETURN(Tensor * z, ctx.MakeOutputTensor(1, DataType::kInt64, Shape(dims)));
      int64_t* counts = z->mutable_data<int64_t>();
      for (size_t i = 0; i < parts.size(); ++i) counts[i] = static_cast<int64_t>(parts[i].size());
    }
    return absl::OkStatus();
  }

 private:
  explicit StringSplitKernel(const KernelInfo& info)
      : node_(info),
        delimiter_(info.GetString("delimiter", "")),
        maxsplit_(info.GetInt("maxsplit", -1)) {}

  const NodeLabel node_;
  const std::string delimiter_;  // "": split on whitespace
  const int64_t maxsplit_;       // < 0: no limit
};

// ---- RegexFullMatch ----

class RegexFullMatchKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<RegexFullMatchKernel>> Create(const KernelInfo& info) {
    const NodeLabel node(info);
    if (!info.HasAttribute("pattern"))
      return node.InvalidArgument("attribute 'pattern' is required");
    RE2::Options options;
    options.set_log_errors(false);
    auto re = std::make_unique<RE2>(info.GetString("pattern", ""), options);
    if (!re->ok()) {
      return node.InvalidArgument(
          absl::StrCat("pattern '", re->pattern(), "' is not valid RE2 syntax: ", re->error()));
    }
    return std::unique_ptr<RegexFullMatchKernel>(new RegexFullMatchKernel(info, std::move(re)));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, StringInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kBool, x->shape()));
    const std::string* in = x->data<std::string>();
    bool* out = y->mutable_data<bool>();
    for (int64_t i = 0; i < x->NumElements(); ++i) out[i] = RE2::FullMatch(in[i], *re_);
    return absl::OkStatus();
  }

 private:
  RegexFullMatchKernel(const KernelInfo& info, std::unique_ptr<RE2> re)
      : node_(info), re_(std::move(re)) {}
  const NodeLabel node_;
  const std::unique_ptr<RE2> re_;
};

}  // namespace

std::vector<engine::KernelDef> StringKernelDefs() {
  const std::vector<DataType> strings = {DataType::kString};
  return {
      CpuDef(engine::kOnnxDomain, "StringNormalizer", 10, kMaxOpset, strings,
             FactoryOf<StringNormalizerKernel>()),
      CpuDef(engine::kOnnxDomain, "StringConcat", 20, kMaxOpset, strings,
             FactoryOf<StringConcatKernel>()),
      CpuDef(engine::kOnnxDomain, "StringSplit", 20, kMaxOpset, strings,
             FactoryOf<StringSplitKernel>()),
      CpuDef(engine::kOnnxDomain, "RegexFullMatch", 20, kMaxOpset, strings,
             FactoryOf<RegexFullMatchKernel>()),
      CpuDef(engine::kOnnxDomain, "Equal", 19, kMaxOpset, strings, FactoryOf<StringEqualKernel>()),
  };
}

}  // namespace inferd::kernels::cpu

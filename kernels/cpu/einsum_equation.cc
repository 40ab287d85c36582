#include "kernels/cpu/einsum_equation.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"

namespace inferd::kernels::cpu {

namespace {

int LetterLabel(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -1;
}

char LabelLetter(int label) {
  return static_cast<char>(label < 26 ? 'a' + label : 'A' + (label - 26));
}

bool Contains(const LabelList& list, int label) {
  return std::find(list.begin(), list.end(), label) != list.end();
}

// One term ("bij", "...ii", ""): letters in order, kEllipsisLabel where "..." stands.
absl::StatusOr<LabelList> ParseTerm(absl::string_view term, const NodeLabel& node) {
  LabelList labels;
  bool ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term[i] == '.') {
      if (ellipsis || term.substr(i, 3) != "...") {
        return node.InvalidArgument(
            absl::StrCat("equation term '", term, "' has a malformed or second ellipsis"));
      }
      ellipsis = true;
      labels.push_back(kEllipsisLabel);
      i += 2;
      continue;
    }
    const int label = LetterLabel(term[i]);
    if (label < 0) {
      return node.InvalidArgument(absl::StrCat("equation term '", term,
                                               "' has the invalid character '", term.substr(i, 1),
                                               "' (letters and one '...' only)"));
    }
    labels.push_back(label);
  }
  return labels;
}

// pass 2 of Bind for operand `i` of shape `s` whose dims carry `dim_labels`: its view (label,
// size, stride per dim, a repeated label's strides summed: the diagonal), recording each letter's
// size in `b`; sizes agree or broadcast from 1.
absl::StatusOr<EinsumView> BindOperand(size_t i, const engine::Shape& s,
                                       const LabelList& dim_labels, EinsumBinding& b,
                                       const NodeLabel& node) {
  EinsumView v;
  int64_t stride = 1;
  Dims strides(s.rank());
  for (size_t d = s.rank(); d-- > 0;) {
    strides[d] = stride;
    stride *= s[d];
  }
  for (size_t d = 0; d < s.rank(); ++d) {
    const int l = dim_labels[d];
    const int64_t dim = s[d];
    for (size_t e = 0; e < d; ++e) {
      if (dim_labels[e] == l && s[e] != dim) {
        return node.InvalidArgument(absl::StrCat("input ", i, " has shape ", s.ToString(),
                                                 ": a repeated label needs equal dims"));
      }
    }
    int64_t& size = b.size[l];
    if (size != -1 && size != 1 && dim != 1 && size != dim) {
      return node.InvalidArgument(absl::StrCat("input ", i, " has shape ", s.ToString(), ": dim ",
                                               d, " is ", dim, " where its label is ", size,
                                               " elsewhere"));
    }
    if (size == -1 || size == 1) size = dim;
    if (dim == 1) continue;  // broadcast (or a size-1 letter): no dim in the view
    bool repeated = false;
    for (size_t j = 0; j < v.labels.size(); ++j) {
      if (v.labels[j] == l) {
        v.strides[j] += strides[d];  // the diagonal
        repeated = true;
      }
    }
    if (!repeated) {
      v.labels.push_back(l);
      v.sizes.push_back(dim);
      v.strides.push_back(strides[d]);
    }
  }
  return v;
}

}  // namespace

bool EinsumView::Has(int label) const { return Contains(labels, label); }

int64_t EinsumView::StrideOf(int label) const {
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] == label) return strides[i];
  }
  return 0;
}

LabelList EinsumView::LabelsNotIn(const LabelList& others) const {
  LabelList r;
  for (int l : labels) {
    if (!Contains(others, l)) r.push_back(l);
  }
  return r;
}

bool EinsumView::Empty() const { return std::find(sizes.begin(), sizes.end(), 0) != sizes.end(); }

EinsumView EinsumView::Contiguous(const LabelList& labels, const EinsumBinding& binding) {
  EinsumView v;
  int64_t stride = 1;
  for (size_t i = labels.size(); i-- > 0;) {
    const int64_t size = binding.size[labels[i]];
    if (size == 1) continue;
    v.labels.insert(v.labels.begin(), labels[i]);
    v.sizes.insert(v.sizes.begin(), size);
    v.strides.insert(v.strides.begin(), stride);
    stride *= size;
  }
  return v;
}

Dims EinsumBinding::SizesOf(const LabelList& labels) const {
  Dims d;
  for (int l : labels) d.push_back(size[l]);
  return d;
}

absl::StatusOr<EinsumEquation> EinsumEquation::Parse(absl::string_view equation,
                                                     const NodeLabel& node) {
  std::string eq;
  for (char c : equation) {
    if (c != ' ' && c != '\t') eq.push_back(c);
  }
  if (eq.empty()) return node.InvalidArgument("attribute 'equation' is missing or empty");
  EinsumEquation result;
  absl::string_view lhs = eq, rhs;
  if (const size_t arrow = eq.find("->"); arrow != std::string::npos) {
    lhs = absl::string_view(eq).substr(0, arrow);
    rhs = absl::string_view(eq).substr(arrow + 2);
    result.explicit_output_ = true;
    if (rhs.find("->") != absl::string_view::npos) {
      return node.InvalidArgument(absl::StrCat("equation '", equation, "' has two '->'"));
    }
  }
  bool any_ellipsis = false;
  int uses[kEllipsisLabel] = {};
  for (absl::string_view term : absl::StrSplit(lhs, ',')) {
    absl::StatusOr<LabelList> labels = ParseTerm(term, node);
    if (!labels.ok()) return labels.status();
    for (int l : *labels) {
      if (l == kEllipsisLabel) {
        any_ellipsis = true;
      } else {
        ++uses[l];
      }
    }
    result.inputs_.push_back(*std::move(labels));
  }
  if (result.explicit_output_) {
    absl::StatusOr<LabelList> out = ParseTerm(rhs, node);
    if (!out.ok()) return out.status();
    for (size_t i = 0; i < out->size(); ++i) {
      const int l = (*out)[i];
      if (std::count(out->begin(), out->end(), l) > 1) {
        return node.InvalidArgument(
            absl::StrCat("equation '", equation, "' repeats a label in its output"));
      }
      if (l != kEllipsisLabel && uses[l] == 0) {
        return node.InvalidArgument(absl::StrCat("equation '", equation, "': output label '",
                                                 std::string(1, LabelLetter(l)),
                                                 "' is in no input"));
      }
    }
    result.output_ = *std::move(out);
  } else {
    // Implicit output: the ellipsis dims, then the letters used once, in ASCII order
    // (upper case first, as numpy).
    if (any_ellipsis) result.output_.push_back(kEllipsisLabel);
    for (int l = 26; l < 52; ++l) {
      if (uses[l] == 1) result.output_.push_back(l);
    }
    for (int l = 0; l < 26; ++l) {
      if (uses[l] == 1) result.output_.push_back(l);
    }
  }
  return result;
}

absl::StatusOr<EinsumBinding> EinsumEquation::Bind(absl::Span<const engine::Shape> shapes,
                                                   const NodeLabel& node) const {
  EinsumBinding b;
  b.size.fill(-1);
  // pass 1: the rank each ellipsis stands for; the widest sets the ellipsis labels.
  int ellipsis_rank = 0;
  absl::InlinedVector<int, 4> term_ellipsis(shapes.size(), 0);
  for (size_t i = 0; i < shapes.size(); ++i) {
    const LabelList& term = inputs_[i];
    const bool has_ellipsis = Contains(term, kEllipsisLabel);
    const int letters = static_cast<int>(term.size()) - (has_ellipsis ? 1 : 0);
    const int rank = static_cast<int>(shapes[i].rank());
    if (rank < letters || (!has_ellipsis && rank != letters)) {
      return node.InvalidArgument(absl::StrCat("input ", i, " has shape ", shapes[i].ToString(),
                                               " but its equation term has ", letters, " letters",
                                               has_ellipsis ? " and '...'" : ""));
    }
    term_ellipsis[i] = rank - letters;
    ellipsis_rank = std::max(ellipsis_rank, rank - letters);
  }
  if (ellipsis_rank > kMaxEllipsisRank) {
    return node.Unimplemented(absl::StrCat("an ellipsis of ", ellipsis_rank, " dims (at most ",
                                           kMaxEllipsisRank, " supported)"));
  }
  // pass 2: each operand's dims as (label, size, stride); letter sizes agree or broadcast from 1.
  for (size_t i = 0; i < shapes.size(); ++i) {
    const engine::Shape& s = shapes[i];
    LabelList dim_labels;
    for (int l : inputs_[i]) {
      if (l != kEllipsisLabel) {
        dim_labels.push_back(l);
        continue;
      }
      for (int e = 0; e < term_ellipsis[i]; ++e) {
        dim_labels.push_back(kEllipsisLabel + ellipsis_rank - term_ellipsis[i] + e);
      }
    }
    INFERD_ASSIGN_OR_RETURN(EinsumView v, BindOperand(i, s, dim_labels, b, node));
    b.views.push_back(std::move(v));
  }
  for (int l : output_) {
    if (l != kEllipsisLabel) {
      b.out_labels.push_back(l);
      continue;
    }
    for (int e = 0; e < ellipsis_rank; ++e) b.out_labels.push_back(kEllipsisLabel + e);
  }
  for (int l : b.out_labels) b.out_shape.push_back(b.size[l]);
  return b;
}

}  // namespace inferd::kernels::cpu

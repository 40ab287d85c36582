// ai.onnx.ml LabelEncoder (opsets 1-4), own code: maps each element of X through the table the
// attributes give (docs/strings.md). Opset 1: `classes_strings` numbers its strings (string ->
// int64: the position, int64 -> string: the string at that position), with default_int64 (-1) /
// default_string ("_Unused"). Opsets 2-4: parallel keys_* / values_* lists (strings, int64s,
// floats; opset 4 also keys_tensor / values_tensor / default_tensor, of string, int64, int32,
// int16, float or double), the default_* of the values' type otherwise (-1, "_Unused", -0.0).
// A repeated key: the last one wins; a NaN key matches every NaN. Immutable after creation:
// thread-safe.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "engine/shape.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/registration.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Tensor;

// A list of keys or values of one element type: strings, integers (int64 / int32 / int16) or
// floating point (float / double), each held in the widest C++ type of its kind.
struct Column {
  DataType type = DataType::kUndefined;
  std::vector<std::string> strings;
  std::vector<int64_t> ints;
  std::vector<double> floats;

  size_t size() const {
    return type == DataType::kString ? strings.size() : IsInt(type) ? ints.size() : floats.size();
  }
  static bool IsInt(DataType t) {
    return t == DataType::kInt64 || t == DataType::kInt32 || t == DataType::kInt16;
  }
  static bool IsFloat(DataType t) { return t == DataType::kFloat32 || t == DataType::kFloat64; }
};

// Element i of raw little-endian data of type T, widened to W.
template <typename T, typename W>
W RawAt(const std::string& raw, int64_t i) {
  T v;
  std::memcpy(&v, raw.data() + i * sizeof(T), sizeof(T));
  return static_cast<W>(v);
}

// A TensorProto attribute as a column (keys_tensor, values_tensor, default_tensor): string_data,
// raw_data or the typed field of its type.
absl::StatusOr<Column> FromTensor(const onnx::TensorProto& p, const NodeLabel& node) {
  Column c;
  c.type = static_cast<DataType>(p.data_type());
  int64_t n = 1;
  for (int64_t d : p.dims()) {
    if (d < 0 || !engine::CheckedNumElements({n, d}, 8)) {
      return node.InvalidArgument(absl::StrCat("tensor attribute '", p.name(), "': bad dims"));
    }
    n *= d;
  }
  const bool raw = p.has_raw_data();
  const size_t size = engine::ElementSize(c.type);
  if (raw && p.raw_data().size() != static_cast<size_t>(n) * size) {
    return node.InvalidArgument(
        absl::StrCat("tensor attribute '", p.name(), "': raw data does not match its dims"));
  }
  auto count = [&](int64_t have) -> absl::Status {
    if (have == n) return absl::OkStatus();
    return node.InvalidArgument(absl::StrCat("tensor attribute '", p.name(), "' has ", have,
                                             " values for ", n, " elements"));
  };
  switch (c.type) {
    case DataType::kString:
      INFERD_RETURN_IF_ERROR(count(p.string_data_size()));
      c.strings.assign(p.string_data().begin(), p.string_data().end());
      break;
    case DataType::kInt64:
      if (!raw) INFERD_RETURN_IF_ERROR(count(p.int64_data_size()));
      for (int64_t i = 0; i < n; ++i) {
        c.ints.push_back(raw ? RawAt<int64_t, int64_t>(p.raw_data(), i) : p.int64_data(i));
      }
      break;
    case DataType::kInt32:
    case DataType::kInt16:
      if (!raw) INFERD_RETURN_IF_ERROR(count(p.int32_data_size()));
      for (int64_t i = 0; i < n; ++i) {
        c.ints.push_back(!raw                         ? p.int32_data(i)
                         : c.type == DataType::kInt32 ? RawAt<int32_t, int64_t>(p.raw_data(), i)
                                                      : RawAt<int16_t, int64_t>(p.raw_data(), i));
      }
      break;
    case DataType::kFloat32:
      if (!raw) INFERD_RETURN_IF_ERROR(count(p.float_data_size()));
      for (int64_t i = 0; i < n; ++i) {
        c.floats.push_back(raw ? RawAt<float, double>(p.raw_data(), i) : p.float_data(i));
      }
      break;
    case DataType::kFloat64:
      if (!raw) INFERD_RETURN_IF_ERROR(count(p.double_data_size()));
      for (int64_t i = 0; i < n; ++i) {
        c.floats.push_back(raw ? RawAt<double, double>(p.raw_data(), i) : p.double_data(i));
      }
      break;
    default:
      return node.InvalidArgument(absl::StrCat("tensor attribute '", p.name(), "' of type ",
                                               p.data_type(), " is not supported"));
  }
  return c;
}

// The key of a floating-point value: NaNs all alike.
uint64_t FloatKey(double v) {
  if (std::isnan(v)) return 0x7ff8000000000000ull;
  if (v == 0) v = 0;  // -0.0 and 0.0 alike
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return bits;
}

class LabelEncoderKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<LabelEncoderKernel>> Create(const KernelInfo& info) {
    const NodeLabel node(info);
    auto k = std::unique_ptr<LabelEncoderKernel>(new LabelEncoderKernel(info));
    Column& keys = k->keys_;
    Column& values = k->values_;
    if (info.opset() < 2) {
      // classes_strings numbers its strings; the input's type says which way.
      const std::vector<std::string> classes = info.GetStrings("classes_strings");
      std::vector<int64_t> positions;
      for (size_t i = 0; i < classes.size(); ++i) positions.push_back(static_cast<int64_t>(i));
      if (info.input(0).type == DataType::kInt64) {
        keys = Column{DataType::kInt64, {}, positions, {}};
        values = Column{DataType::kString, classes, {}, {}};
      } else {
        keys = Column{DataType::kString, classes, {}, {}};
        values = Column{DataType::kInt64, {}, positions, {}};
      }
    } else {
      INFERD_ASSIGN_OR_RETURN(keys, ListAttribute(info, "keys", node));
      INFERD_ASSIGN_OR_RETURN(values, ListAttribute(info, "values", node));
    }
    if (keys.size() != values.size()) {
      return node.InvalidArgument(absl::StrCat("there are ", keys.size(), " keys and ",
                                               values.size(), " values; they must pair up"));
    }
    // The default, of the values' type.
    Column& def = k->default_;
    if (const onnx::TensorProto* t = info.GetTensor("default_tensor")) {
      INFERD_ASSIGN_OR_RETURN(def, FromTensor(*t, node));
      if (def.size() != 1 || def.type != values.type) {
        return node.InvalidArgument(
            absl::StrCat("default_tensor must hold one ", engine::DataTypeName(values.type)));
      }
    } else {
      def.type = values.type;
      def.strings = {info.GetString("default_string", "_Unused")};
      def.ints = {info.GetInt("default_int64", -1)};
      def.floats = {info.GetFloat("default_float", -0.0f)};
    }
    for (size_t i = 0; i < keys.size(); ++i) {  // a repeated key: the last wins
      if (keys.type == DataType::kString) {
        k->string_index_[keys.strings[i]] = i;
      } else if (Column::IsInt(keys.type)) {
        k->int_index_[keys.ints[i]] = i;
      } else {
        k->float_index_[FloatKey(keys.floats[i])] = i;
      }
    }
    return k;
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    const DataType t = x->dtype();
    const bool fits = t == keys_.type || (Column::IsInt(t) && Column::IsInt(keys_.type)) ||
                      (Column::IsFloat(t) && Column::IsFloat(keys_.type));
    if (!fits) {
      return node_.InvalidArgument(absl::StrCat("X is ", engine::DataTypeName(t),
                                                " but the keys are ",
                                                engine::DataTypeName(keys_.type)));
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, values_.type, x->shape()));
    const int64_t n = x->NumElements();
    for (int64_t i = 0; i < n; ++i) {
      const size_t found = Find(*x, i);
      const Column& from = found == kNone ? default_ : values_;
      const size_t at = found == kNone ? 0 : found;
      switch (values_.type) {
        case DataType::kString:
          y->mutable_data<std::string>()[i] = from.strings[at];
          break;
        case DataType::kInt64:
          y->mutable_data<int64_t>()[i] = from.ints[at];
          break;
        case DataType::kInt32:
          y->mutable_data<int32_t>()[i] = static_cast<int32_t>(from.ints[at]);
          break;
        case DataType::kInt16:
          y->mutable_data<int16_t>()[i] = static_cast<int16_t>(from.ints[at]);
          break;
        case DataType::kFloat32:
          y->mutable_data<float>()[i] = static_cast<float>(from.floats[at]);
          break;
        default:
          y->mutable_data<double>()[i] = from.floats[at];
          break;
      }
    }
    return absl::OkStatus();
  }

 private:
  static constexpr size_t kNone = static_cast<size_t>(-1);

  explicit LabelEncoderKernel(const KernelInfo& info) : node_(info) {}

  // keys_* / values_* (`prefix` "keys" or "values"): exactly one of the forms.
  static absl::StatusOr<Column> ListAttribute(const KernelInfo& info, const std::string& prefix,
                                              const NodeLabel& node) {
    std::vector<Column> found;
    if (info.HasAttribute(prefix + "_strings")) {
      found.push_back(Column{DataType::kString, info.GetStrings(prefix + "_strings"), {}, {}});
    }
    if (info.HasAttribute(prefix + "_int64s")) {
      found.push_back(Column{DataType::kInt64, {}, info.GetInts(prefix + "_int64s"), {}});
    }
    if (info.HasAttribute(prefix + "_floats")) {
      std::vector<float> f = info.GetFloats(prefix + "_floats");
      found.push_back(Column{DataType::kFloat32, {}, {}, std::vector<double>(f.begin(), f.end())});
    }
    if (const onnx::TensorProto* t = info.GetTensor(prefix + "_tensor")) {
      INFERD_ASSIGN_OR_RETURN(Column c, FromTensor(*t, node));
      found.push_back(std::move(c));
    }
    if (found.size() != 1) {
      return node.InvalidArgument(absl::StrCat("exactly one of ", prefix, "_strings, ", prefix,
                                               "_int64s, ", prefix, "_floats, ", prefix,
                                               "_tensor must be set, found ", found.size()));
    }
    return std::move(found[0]);
  }

  // The position of element i of x among the keys, or kNone.
  size_t Find(const Tensor& x, int64_t i) const {
    switch (x.dtype()) {
      case DataType::kString: {
        auto it = string_index_.find(x.data<std::string>()[i]);
        return it == string_index_.end() ? kNone : it->second;
      }
      case DataType::kInt64:
      case DataType::kInt32:
      case DataType::kInt16: {
        const int64_t v = x.dtype() == DataType::kInt64   ? x.data<int64_t>()[i]
                          : x.dtype() == DataType::kInt32 ? x.data<int32_t>()[i]
                                                          : x.data<int16_t>()[i];
        auto it = int_index_.find(v);
        return it == int_index_.end() ? kNone : it->second;
      }
      default: {
        const double v = x.dtype() == DataType::kFloat32 ? x.data<float>()[i] : x.data<double>()[i];
        auto it = float_index_.find(FloatKey(v));
        return it == float_index_.end() ? kNone : it->second;
      }
    }
  }

  const NodeLabel node_;
  Column keys_, values_, default_;
  std::unordered_map<std::string, size_t> string_index_;
  std::unordered_map<int64_t, size_t> int_index_;
  std::unordered_map<uint64_t, size_t> float_index_;  // by FloatKey
};

}  // namespace

std::vector<engine::KernelDef> LabelEncoderKernelDefs() {
  const std::vector<DataType> types = {DataType::kString, DataType::kInt64,   DataType::kInt32,
                                       DataType::kInt16,  DataType::kFloat32, DataType::kFloat64};
  return {CpuDef("ai.onnx.ml", "LabelEncoder", 1, 4, types, FactoryOf<LabelEncoderKernel>())};
}

}  // namespace inferd::kernels::cpu

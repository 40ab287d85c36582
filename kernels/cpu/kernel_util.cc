#include "kernels/cpu/kernel_util.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace inferd::kernels::cpu {

using engine::DataType;
using engine::Shape;

const std::vector<DataType>& FixedSizeTypes() {
  static const std::vector<DataType> kTypes = {
      DataType::kFloat32, DataType::kFloat64, DataType::kFloat16, DataType::kBFloat16,
      DataType::kInt8,    DataType::kInt16,   DataType::kInt32,   DataType::kInt64,
      DataType::kUint8,   DataType::kUint16,  DataType::kUint32,  DataType::kUint64,
      DataType::kBool};
  return kTypes;
}

NodeLabel::NodeLabel(const engine::KernelInfo& info)
    : NodeLabel(info.node_name(), info.op_type()) {}

NodeLabel::NodeLabel(absl::string_view node_name, absl::string_view op_type)
    : prefix_(absl::StrCat("node '", node_name, "' (", op_type, "): ")) {}

absl::Status NodeLabel::InvalidArgument(absl::string_view message) const {
  return absl::InvalidArgumentError(absl::StrCat(prefix_, message));
}

absl::Status NodeLabel::Unimplemented(absl::string_view message) const {
  return absl::UnimplementedError(absl::StrCat(prefix_, message));
}

absl::Status NodeLabel::Internal(absl::string_view message) const {
  return absl::InternalError(absl::StrCat(prefix_, message));
}

absl::StatusOr<int> NormalizeAxis(int64_t axis, int64_t rank, const NodeLabel& node,
                                  absl::string_view what) {
  if (axis < -rank || axis >= rank) {
    return node.InvalidArgument(absl::StrCat(what, " ", axis, " is out of range for rank ", rank,
                                             " (expected ", -rank, "..", rank - 1, ")"));
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

absl::StatusOr<Shape> BroadcastShapes(const Shape& a, const Shape& b, const NodeLabel& node) {
  const size_t rank = std::max(a.rank(), b.rank());
  Shape out;
  out.resize(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.rank() ? 1 : a[i - (rank - a.rank())];
    const int64_t db = i < rank - b.rank() ? 1 : b[i - (rank - b.rank())];
    if (da != db && da != 1 && db != 1) {
      return node.InvalidArgument(absl::StrCat("shapes ", a.ToString(), " and ", b.ToString(),
                                               " cannot be broadcast (dimension ", i, ": ", da,
                                               " vs ", db, ")"));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::optional<Shape> StaticInputShape(const engine::KernelInfo& info, int i) {
  if (!info.input_present(i)) return std::nullopt;
  if (const engine::Tensor* c = info.input(i).constant) return c->shape();
  return info.input(i).shape.ToShape();
}

absl::StatusOr<const engine::Tensor*> RequiredInput(const engine::KernelContext& ctx, int i,
                                                    const NodeLabel& node) {
  const engine::Tensor* t = ctx.input(i);
  if (t == nullptr) return node.InvalidArgument(absl::StrCat("input ", i, " is required"));
  return t;
}

absl::Status CheckType(const engine::Tensor& t, DataType type, int input_index,
                       const NodeLabel& node) {
  if (t.dtype() == type) return absl::OkStatus();
  return node.InvalidArgument(absl::StrCat("input ", input_index, " has element type ",
                                           engine::DataTypeName(t.dtype()), ", expected ",
                                           engine::DataTypeName(type)));
}

engine::KernelDef CpuDef(absl::string_view domain, absl::string_view op_type, int since_version,
                         int end_version, std::vector<DataType> types, engine::KernelFactory create,
                         engine::WorkspaceEstimateFn estimate) {
  engine::KernelDef def;
  def.domain = std::string(domain);
  def.op_type = std::string(op_type);
  def.since_version = since_version;
  def.end_version = end_version;
  def.device_type = engine::DeviceKind::kCpu;
  def.types = std::move(types);
  def.create = std::move(create);
  def.estimate_workspace = std::move(estimate);
  return def;
}

}  // namespace inferd::kernels::cpu

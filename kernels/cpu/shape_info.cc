// Small generator and metadata kernels; each writes a fresh output through MakeOutputTensor.
// Shape (start/end from opset 15, clamped as the spec says) and Size: int64 metadata of any
// fixed-size input. ConstantOfShape (opset 9+): a tensor of the int64 `shape` input filled with
// the `value` attribute's single element (default float32 0). Range (opset 11+): float32, float64,
// int16, int32, int64; max(ceil((limit - start) / delta), 0) elements start + i * delta.
// NonZero (opset 9+): int64 [rank, nnz] of the coordinates of the non-zero elements in row-major
// order (a scalar counts as one element of a 1-D tensor).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/movement_util.h"
#include "kernels/cpu/registration.h"
#include "onnx/onnx_pb.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

class ShapeKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<ShapeKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<ShapeKernel>(new ShapeKernel(info));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    const Shape& in = x->shape();
    const int64_t rank = static_cast<int64_t>(in.rank());
    if (size_) {
      INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kInt64, Shape{}));
      *y->mutable_data<int64_t>() = x->NumElements();
      return absl::OkStatus();
    }
    int64_t start = start_ < 0 ? start_ + rank : start_;
    int64_t end = end_ < 0 ? end_ + rank : std::min(end_, rank);
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, 0, rank);
    const int64_t n = std::max<int64_t>(end - start, 0);
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kInt64, Shape{n}));
    for (int64_t i = 0; i < n; ++i) y->mutable_data<int64_t>()[i] = in[start + i];
    return absl::OkStatus();
  }

 private:
  explicit ShapeKernel(const KernelInfo& info)
      : node_(info),
        size_(info.op_type() == "Size"),
        start_(info.opset() >= 15 ? info.GetInt("start", 0) : 0),
        end_(info.opset() >= 15 ? info.GetInt("end", INT64_MAX) : INT64_MAX) {}

  const NodeLabel node_;
  const bool size_;
  const int64_t start_, end_;
};

// The single element of a TensorProto (raw or typed field), as little-endian bytes.
absl::Status DecodeScalar(const onnx::TensorProto& t, const KernelInfo& info, DataType* type,
                          unsigned char* value) {
  *type = static_cast<DataType>(t.data_type());
  const size_t elem = engine::ElementSize(*type);
  if (!engine::IsKnownDataType(t.data_type()) || elem == 0 || elem > 8) {
    return info.Error(
        absl::StrCat("the value attribute has unsupported element type ", t.data_type()));
  }
  int64_t count = 1;
  for (int64_t d : t.dims()) count *= d;
  if (count != 1) return info.Error("the value attribute must hold exactly one element");
  if (!t.raw_data().empty()) {
    if (t.raw_data().size() < elem) return info.Error("the value attribute's data is too short");
    std::memcpy(value, t.raw_data().data(), elem);
    return absl::OkStatus();
  }
  switch (*type) {
    case DataType::kFloat32:
      if (t.float_data_size() < 1) break;
      {
        const float v = t.float_data(0);
        std::memcpy(value, &v, 4);
      }
      return absl::OkStatus();
    case DataType::kFloat64:
      if (t.double_data_size() < 1) break;
      {
        const double v = t.double_data(0);
        std::memcpy(value, &v, 8);
      }
      return absl::OkStatus();
    case DataType::kInt64:
      if (t.int64_data_size() < 1) break;
      {
        const int64_t v = t.int64_data(0);
        std::memcpy(value, &v, 8);
      }
      return absl::OkStatus();
    case DataType::kUint32:
    case DataType::kUint64:
      if (t.uint64_data_size() < 1) break;
      {
        const uint64_t v = t.uint64_data(0);
        std::memcpy(value, &v, elem);  // little-endian: the low bytes
      }
      return absl::OkStatus();
    default:  // int32 and narrower types (float16 / bfloat16 as their bits) live in int32_data
      if (t.int32_data_size() < 1) break;
      {
        const int32_t v = t.int32_data(0);
        std::memcpy(value, &v, elem);
      }
      return absl::OkStatus();
  }
  return info.Error("the value attribute holds no data");
}

class ConstantOfShapeKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<ConstantOfShapeKernel>> Create(const KernelInfo& info) {
    auto k = std::unique_ptr<ConstantOfShapeKernel>(new ConstantOfShapeKernel(info));
    if (const onnx::TensorProto* t = info.GetTensor("value")) {
      INFERD_RETURN_IF_ERROR(DecodeScalar(*t, info, &k->type_, k->value_));
    }
    return k;
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* shape, RequiredInput(ctx, 0, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*shape, DataType::kInt64, 0, node_));
    Dims dims;
    INFERD_RETURN_IF_ERROR(ReadIndexVector(*shape, "shape", node_, &dims));
    for (int64_t d : dims) {
      if (d < 0) return node_.InvalidArgument(absl::StrCat("invalid dimension ", d));
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * y,
                            ctx.MakeOutputTensor(0, type_, Shape(absl::MakeConstSpan(dims))));
    const int64_t n = y->NumElements();
    auto fill = [&](auto tag) {
      using T = decltype(tag);
      T v;
      std::memcpy(&v, value_, sizeof(T));
      T* out = y->mutable_data<T>();
      ctx.threads().ParallelFor(n, kMoveGrainBytes / sizeof(T),
                                [&](int64_t b, int64_t e) { FillN(out + b, e - b, v); });
    };
    if (!WithElementSize(engine::ElementSize(type_), fill)) return UnsupportedType(type_, node_);
    return absl::OkStatus();
  }

 private:
  explicit ConstantOfShapeKernel(const KernelInfo& info) : node_(info) {}

  const NodeLabel node_;
  DataType type_ = DataType::kFloat32;  // constant after creation
  unsigned char value_[8] = {};
};

class RangeKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<RangeKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<RangeKernel>(new RangeKernel(info));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    const Tensor* in[3];
    for (int i = 0; i < 3; ++i) {
      INFERD_ASSIGN_OR_RETURN(in[i], RequiredInput(ctx, i, node_));
      INFERD_RETURN_IF_ERROR(CheckType(*in[i], in[0]->dtype(), i, node_));
      if (in[i]->NumElements() != 1) {
        return node_.InvalidArgument(
            absl::StrCat("input ", i, " must be a scalar, got ", in[i]->shape().ToString()));
      }
    }
    absl::Status status = absl::OkStatus();
    const bool ok = Visit(NumericTypes{}, in[0]->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      status = Run<T>(*in[0]->data<T>(), *in[1]->data<T>(), *in[2]->data<T>(), ctx);
    });
    if (!ok) return UnsupportedType(in[0]->dtype(), node_);
    return status;
  }

 private:
  explicit RangeKernel(const KernelInfo& info) : node_(info) {}

  template <typename T>
  absl::Status Run(T start, T limit, T delta, KernelContext& ctx) const {
    if (delta == T(0)) return node_.InvalidArgument("delta is 0");
    int64_t n;
    if constexpr (std::is_floating_point_v<T>) {
      const double c = std::ceil((double(limit) - double(start)) / double(delta));
      if (!(c < 1e15)) return node_.InvalidArgument("the range is too long");
      n = c > 0 ? static_cast<int64_t>(c) : 0;
    } else {  // ceil((limit - start) / delta) in integers
      const int64_t s = static_cast<int64_t>(limit) - static_cast<int64_t>(start);
      const int64_t d = static_cast<int64_t>(delta);
      n = s != 0 && (s > 0) == (d > 0) ? (s + d + (d > 0 ? -1 : 1)) / d : 0;
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * y,
                            ctx.MakeOutputTensor(0, engine::DataTypeOf<T>::value, Shape{n}));
    T* out = y->mutable_data<T>();
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_floating_point_v<T>) {
        out[i] = static_cast<T>(double(start) + double(i) * double(delta));
      } else {
        out[i] = static_cast<T>(start + static_cast<T>(i) * delta);
      }
    }
    return absl::OkStatus();
  }

  const NodeLabel node_;
};

class NonZeroKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<NonZeroKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<NonZeroKernel>(new NonZeroKernel(info));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    absl::Status status = absl::OkStatus();
    if (Visit(FloatTypes{}, x->dtype(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          status = Run<T>(
              *x, [](T v) { return v != T(0); }, ctx);
        })) {
      return status;
    }
    if (x->dtype() == DataType::kFloat16 || x->dtype() == DataType::kBFloat16) {
      // +-0 differ only in the sign bit.
      return Run<uint16_t>(
          *x, [](uint16_t v) { return (v & 0x7fff) != 0; }, ctx);
    }
    // Integers and bool compare their bits with 0: only the element size matters.
    const bool ok = WithElementSize(engine::ElementSize(x->dtype()), [&](auto tag) {
      using T = decltype(tag);
      status = Run<T>(
          *x, [](T v) { return v != 0; }, ctx);
    });
    if (!ok) return UnsupportedType(x->dtype(), node_);
    return status;
  }

 private:
  explicit NonZeroKernel(const KernelInfo& info) : node_(info) {}

  template <typename T, typename IsNonZero>
  absl::Status Run(const Tensor& x, IsNonZero nonzero, KernelContext& ctx) const {
    const T* v = x.data<T>();
    const int64_t n = x.NumElements();
    int64_t nnz = 0;
    for (int64_t i = 0; i < n; ++i) nnz += nonzero(v[i]) ? 1 : 0;
    const Shape in = x.shape().rank() == 0 ? Shape{1} : x.shape();
    const int64_t rank = static_cast<int64_t>(in.rank());
    INFERD_ASSIGN_OR_RETURN(Tensor * y,
                            ctx.MakeOutputTensor(0, DataType::kInt64, Shape{rank, nnz}));
    int64_t* out = y->mutable_data<int64_t>();
    Dims index(rank, 0);
    int64_t col = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (nonzero(v[i])) {
        for (int64_t d = 0; d < rank; ++d) out[d * nnz + col] = index[d];
        ++col;
      }
      for (int64_t d = rank; d-- > 0;) {  // odometer
        if (++index[d] < in[d]) break;
        index[d] = 0;
      }
    }
    return absl::OkStatus();
  }

  const NodeLabel node_;
};

}  // namespace

std::vector<engine::KernelDef> ShapeInfoKernelDefs() {
  const auto& types = FixedSizeTypes();
  engine::KernelDef constant_of_shape = CpuDef(engine::kOnnxDomain, "ConstantOfShape", 9, kMaxOpset,
                                               types, FactoryOf<ConstantOfShapeKernel>());
  constant_of_shape.type_input = -1;  // keyed on the output's type (the value attribute's)
  return {CpuDef(engine::kOnnxDomain, "Shape", 1, 14, types, FactoryOf<ShapeKernel>()),
          CpuDef(engine::kOnnxDomain, "Shape", 15, kMaxOpset, types, FactoryOf<ShapeKernel>()),
          CpuDef(engine::kOnnxDomain, "Size", 1, kMaxOpset, types, FactoryOf<ShapeKernel>()),
          std::move(constant_of_shape),
          CpuDef(engine::kOnnxDomain, "Range", 11, kMaxOpset,
                 {DataType::kFloat32, DataType::kFloat64, DataType::kInt16, DataType::kInt32,
                  DataType::kInt64},
                 FactoryOf<RangeKernel>()),
          CpuDef(engine::kOnnxDomain, "NonZero", 9, kMaxOpset, types, FactoryOf<NonZeroKernel>())};
}

}  // namespace inferd::kernels::cpu

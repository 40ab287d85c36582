#include "engine/kernel_registry.h"

#include <gtest/gtest.h>

namespace inferd::engine {
namespace {

class Nop : public OpKernel {
 public:
  absl::Status Compute(KernelContext&) const override { return absl::OkStatus(); }
};

KernelDef Def(int since, int end, std::vector<DataType> types, int type_input = 0) {
  KernelDef d;
  d.op_type = "Foo";
  d.since_version = since;
  d.end_version = end;
  d.types = std::move(types);
  d.type_input = type_input;
  d.create = [](const KernelInfo&) -> absl::StatusOr<std::unique_ptr<OpKernel>> {
    return std::make_unique<Nop>();
  };
  return d;
}

TEST(KernelRegistry, FindsByOpsetDeviceAndType) {
  KernelRegistry r;
  ASSERT_TRUE(r.Register(Def(7, 12, {DataType::kFloat32})).ok());
  ASSERT_TRUE(r.Register(Def(13, INT_MAX, {DataType::kFloat32, DataType::kInt64})).ok());
  const std::vector<DataType> f32 = {DataType::kFloat32}, i64 = {DataType::kInt64};
  EXPECT_NE(r.Find("", "Foo", 11, "cpu", f32, {}), nullptr);
  EXPECT_EQ(r.Find("", "Foo", 11, "cpu", i64, {}), nullptr);
  EXPECT_NE(r.Find("ai.onnx", "Foo", 17, "cpu", i64, {}), nullptr);
  EXPECT_EQ(r.Find("", "Foo", 6, "cpu", f32, {}), nullptr);
  EXPECT_EQ(r.Find("", "Foo", 13, "cuda", f32, {}), nullptr);
  EXPECT_EQ(r.size(), 2u);
}

TEST(KernelRegistry, KeysOnTheDeclaredTypeInputOrOutput) {
  KernelRegistry r;
  ASSERT_TRUE(r.Register(Def(1, INT_MAX, {DataType::kInt64}, /*type_input=*/-1)).ok());
  EXPECT_NE(r.Find("", "Foo", 13, "cpu", {DataType::kFloat32}, {DataType::kInt64}), nullptr);
  EXPECT_EQ(r.Find("", "Foo", 13, "cpu", {DataType::kInt64}, {DataType::kFloat32}), nullptr);
}

TEST(KernelRegistry, RefusesOverlaps) {
  KernelRegistry r;
  ASSERT_TRUE(r.Register(Def(7, 12, {DataType::kFloat32})).ok());
  EXPECT_EQ(r.Register(Def(11, 13, {DataType::kFloat32})).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(r.Register(Def(11, 13, {DataType::kInt32})).ok());
}

TEST(KernelRegistry, ExplainsWhatIsMissing) {
  KernelRegistry r;
  ASSERT_TRUE(r.Register(Def(13, INT_MAX, {DataType::kFloat32})).ok());
  const std::vector<DataType> f32 = {DataType::kFloat32}, i8 = {DataType::kInt8};
  absl::Status unknown = r.Explain("", "Bar", 13, "cpu", f32, {}, "n1");
  EXPECT_EQ(unknown.code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(unknown.message().find("node 'n1'"), std::string::npos);
  EXPECT_NE(unknown.message().find("ai.onnx::Bar"), std::string::npos);
  absl::Status old = r.Explain("", "Foo", 9, "cpu", f32, {}, "n2");
  EXPECT_NE(old.message().find("opsets 13+"), std::string::npos) << old;
  absl::Status type = r.Explain("", "Foo", 13, "cpu", i8, {}, "n3");
  EXPECT_NE(type.message().find("int8"), std::string::npos) << type;
  EXPECT_NE(type.message().find("float32"), std::string::npos) << type;
}

}  // namespace
}  // namespace inferd::engine

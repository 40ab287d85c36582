#include "engine/kernel_registry.h"

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

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

KernelDef OnDevice(KernelDef d, DeviceKind device) {
  d.device_type = device;
  return d;
}

TEST(KernelRegistry, DeviceIsPartOfTheKey) {
  KernelRegistry r;
  // A fake CUDA sibling: same op, opsets and types as the CPU def, another device.
  ASSERT_TRUE(r.Register(Def(13, INT_MAX, {DataType::kFloat32})).ok());
  ASSERT_TRUE(r.Register(OnDevice(Def(13, INT_MAX, {DataType::kFloat32}), DeviceKind::kCuda)).ok());
  EXPECT_EQ(r.Register(OnDevice(Def(14, 15, {DataType::kFloat32}), DeviceKind::kCuda)).code(),
            absl::StatusCode::kAlreadyExists);
  const std::vector<DataType> f32 = {DataType::kFloat32};
  const KernelDef* cpu = r.Find("", "Foo", 13, "cpu", f32, {});
  const KernelDef* cuda = r.Find("", "Foo", 13, DeviceKind::kCuda, f32, {});
  ASSERT_NE(cpu, nullptr);
  ASSERT_NE(cuda, nullptr);
  EXPECT_NE(cpu, cuda);
  EXPECT_EQ(cpu->device_type, DeviceKind::kCpu);
  EXPECT_EQ(cuda->device_type, "cuda");
  EXPECT_EQ(r.size(), 2u);
  EXPECT_EQ(r.Ops().size(), 1u);  // one op, on two devices
  EXPECT_TRUE(r.HasOp("", "Foo"));
}

TEST(KernelRegistry, ExplainsAMissingDevice) {
  KernelRegistry r;
  ASSERT_TRUE(r.Register(OnDevice(Def(13, INT_MAX, {DataType::kFloat32}), "cuda")).ok());
  EXPECT_TRUE(r.HasOp("", "Foo"));
  EXPECT_EQ(r.Find("", "Foo", 13, "cpu", {DataType::kFloat32}, {}), nullptr);
  absl::Status s = r.Explain("", "Foo", 13, "cpu", {DataType::kFloat32}, {}, "n");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("no kernel for device type 'cpu'"), std::string::npos) << s;
}

TEST(KernelRegistry, DeviceKindIsChecked) {
  EXPECT_EQ(DeviceKind("cpu"), DeviceKind::kCpu);
  EXPECT_EQ(DeviceKind(std::string("cuda")), DeviceKind::kCuda);
  EXPECT_FALSE(DeviceKind("cuda:0").valid());
  EXPECT_EQ(DeviceKind("tpu").name(), "invalid");
  KernelRegistry r;
  EXPECT_EQ(r.Register(OnDevice(Def(1, INT_MAX, {}), "tpu")).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.Find("", "Foo", 1, "tpu", {DataType::kFloat32}, {}), nullptr);
}

KernelDef Named(const char* domain, const char* op, int since, int end,
                std::vector<DataType> types) {
  KernelDef d = Def(since, end, std::move(types));
  d.domain = domain;
  d.op_type = op;
  return d;
}

TEST(KernelRegistry, ListsEveryDefInAStableOrder) {
  KernelRegistry r;
  ASSERT_TRUE(r.Register(Named("", "Mul", 13, INT_MAX, {DataType::kFloat32})).ok());
  ASSERT_TRUE(r.Register(OnDevice(Named("", "Add", 7, 12, {DataType::kFloat32}), "cuda")).ok());
  ASSERT_TRUE(
      r.Register(Named("", "Add", 13, INT_MAX, {DataType::kFloat32, DataType::kInt64})).ok());
  ASSERT_TRUE(r.Register(Named("", "Add", 7, 12, {DataType::kFloat32})).ok());
  KernelDef cast = Named("com.inferd", "FusedCast", 1, 1, {});
  cast.type_input = -1;
  ASSERT_TRUE(r.Register(std::move(cast)).ok());
  std::vector<std::string> order;
  for (const KernelDef* d : r.Defs()) {
    order.push_back(absl::StrCat(d->op_type, "/", d->device_type.name(), "/", d->since_version));
  }
  EXPECT_EQ(order, (std::vector<std::string>{"Add/cpu/7", "Add/cpu/13", "Add/cuda/7", "Mul/cpu/13",
                                             "FusedCast/cpu/1"}));
  EXPECT_EQ(FormatKernelTable(r),
            "DOMAIN      OP         OPSETS  DEVICE  TYPES\n"
            "ai.onnx     Add        7-12    cpu     float32\n"
            "ai.onnx     Add        13+     cpu     float32, int64\n"
            "ai.onnx     Add        7-12    cuda    float32\n"
            "ai.onnx     Mul        13+     cpu     float32\n"
            "com.inferd  FusedCast  1-1     cpu     any (on output 0)\n");
  const std::string json = FormatKernelJson(r);
  EXPECT_NE(json.find("{\"domain\": \"ai.onnx\", \"op\": \"Add\", \"since_version\": 13, "
                      "\"end_version\": null, \"device\": \"cpu\", \"types\": [\"float32\", "
                      "\"int64\"], \"type_input\": 0}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"device\": \"cuda\""), std::string::npos) << json;
  EXPECT_EQ(json.front(), '[');
  EXPECT_EQ(FormatKernelJson(KernelRegistry()), "[]\n");
}

}  // namespace
}  // namespace inferd::engine

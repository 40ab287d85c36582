// InferRequest over handcrafted multi-slice ByteBuffers: borrowed vs staged accounting, typed
// contents, and every validation error.
#include "server/request_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "memory/testing/arena_inspector.h"
#include "server/testing/wire.h"

namespace inferd::server {
namespace {

using engine::DataType;
using engine::DimInfo;
using engine::ShapeInfo;
using testing::Chopped;
using ::testing::HasSubstr;
using testing::RawInputPrefix;
using testing::Serialize;
using testing::SliceMemory;
using testing::ToByteBuffer;

ShapeInfo Dims(std::initializer_list<int64_t> dims) {
  ShapeInfo s;
  s.rank_known = true;
  for (int64_t d : dims) s.dims.push_back(d >= 0 ? DimInfo{d, ""} : DimInfo{-1, "batch"});
  return s;
}

// x FP32 [batch,4], ids INT64 [2], mask BOOL [3], h FP16 [2], small INT8 [2].
ModelSignature Toy() {
  ModelSignature s;
  s.name = "toy";
  s.version = "1";
  s.inputs = {{"x", DataType::kFloat32, Dims({-1, 4})},
              {"ids", DataType::kInt64, Dims({2})},
              {"mask", DataType::kBool, Dims({3})},
              {"h", DataType::kFloat16, Dims({2})},
              {"small", DataType::kInt8, Dims({2})}};
  s.outputs = {{"y", DataType::kFloat32, Dims({-1, 4})}, {"z", DataType::kInt64, Dims({2})}};
  return s;
}

struct Payloads {
  std::string x, ids, mask, h, small;
};

Payloads MakePayloads() {
  Payloads p;
  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  int64_t ids[2] = {7, -9};
  uint8_t mask[3] = {1, 0, 1};
  uint16_t h[2] = {0x3c00, 0x4000};
  int8_t small[2] = {-3, 100};
  p.x.assign(reinterpret_cast<char*>(x), sizeof(x));
  p.ids.assign(reinterpret_cast<char*>(ids), sizeof(ids));
  p.mask.assign(reinterpret_cast<char*>(mask), sizeof(mask));
  p.h.assign(reinterpret_cast<char*>(h), sizeof(h));
  p.small.assign(reinterpret_cast<char*>(small), sizeof(small));
  return p;
}

void AddInput(inference::ModelInferRequest& r, const std::string& name, const std::string& type,
              std::initializer_list<int64_t> shape) {
  auto* in = r.add_inputs();
  in->set_name(name);
  in->set_datatype(type);
  for (int64_t d : shape) in->add_shape(d);
}

// The header of a good request (no raw contents yet).
inference::ModelInferRequest GoodHeader() {
  inference::ModelInferRequest r;
  r.set_model_name("toy");
  r.set_id("req-1");
  AddInput(r, "x", "FP32", {2, 4});
  AddInput(r, "ids", "INT64", {2});
  AddInput(r, "mask", "BOOL", {3});
  AddInput(r, "h", "FP16", {2});
  AddInput(r, "small", "INT8", {2});
  return r;
}

inference::ModelInferRequest GoodRequest() {
  inference::ModelInferRequest r = GoodHeader();
  const Payloads p = MakePayloads();
  for (const std::string* s : {&p.x, &p.ids, &p.mask, &p.h, &p.small}) r.add_raw_input_contents(*s);
  return r;
}

class RequestReaderTest : public ::testing::Test {
 protected:
  void SetUp() override { testing::InitGrpc(); }

  absl::StatusOr<std::unique_ptr<InferRequest>> ParseAndBind(const grpc::ByteBuffer& bb) {
    absl::StatusOr<std::unique_ptr<InferRequest>> req = InferRequest::Parse(bb);
    if (!req.ok()) return req.status();
    absl::Status s = (*req)->Bind(toy_, io_);
    if (!s.ok()) return s;
    return req;
  }
  absl::Status Check(const inference::ModelInferRequest& r) {
    return ParseAndBind(Chopped(Serialize(r), 1 << 20)).status();
  }

  ModelSignature toy_ = Toy();
  memory::IOArena io_{std::make_shared<memory::CpuSystemAllocator>()};
};

TEST_F(RequestReaderTest, BorrowsEntriesThatLieInOneAlignedSlice) {
  SliceMemory mem;
  const Payloads p = MakePayloads();
  std::vector<grpc::Slice> slices = {mem.Make(Serialize(GoodHeader()))};
  std::vector<const void*> payload_ptrs;
  for (const std::string* s : {&p.x, &p.ids, &p.mask, &p.h, &p.small}) {
    slices.push_back(mem.Make(RawInputPrefix(s->size())));
    slices.push_back(mem.Make(*s));
    payload_ptrs.push_back(slices.back().begin());
  }
  auto req = ParseAndBind(ToByteBuffer(slices));
  ASSERT_TRUE(req.ok()) << req.status();
  EXPECT_EQ((*req)->header().model_name(), "toy");
  EXPECT_EQ((*req)->header().id(), "req-1");
  EXPECT_EQ((*req)->header().raw_input_contents_size(), 0);
  ASSERT_EQ((*req)->inputs().size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ((*req)->inputs()[i].data, payload_ptrs[i]) << "input " << i << " was copied";
  }
  EXPECT_EQ((*req)->borrowed_bytes(), 32u + 16 + 3 + 4 + 2);
  EXPECT_EQ((*req)->staged_bytes(), 0u);
  EXPECT_EQ(io_.Stats().live_bytes, 0u);
  EXPECT_EQ((*req)->inputs()[0].shape, (engine::Shape{2, 4}));
  EXPECT_TRUE((*req)->requested_outputs().empty());
}

TEST_F(RequestReaderTest, StagesEntriesSplitAcrossSlicesAndMisalignedOnes) {
  SliceMemory mem;
  const Payloads p = MakePayloads();
  std::vector<grpc::Slice> slices = {mem.Make(Serialize(GoodHeader()))};
  // x: split in the middle, across two slices (staged).
  slices.push_back(mem.Make(RawInputPrefix(p.x.size()) + p.x.substr(0, 10)));
  slices.push_back(mem.Make(p.x.substr(10)));
  // ids: one slice, but at an address that is not 8-byte aligned (staged).
  slices.push_back(mem.Make(RawInputPrefix(p.ids.size())));
  slices.push_back(mem.Make(p.ids, 4));
  // mask, h, small: prefix and payload in one slice; bool and int8 are never misaligned.
  slices.push_back(mem.Make(RawInputPrefix(3) + p.mask + RawInputPrefix(4)));
  slices.push_back(mem.Make(p.h + RawInputPrefix(2) + p.small));
  auto req = ParseAndBind(ToByteBuffer(slices));
  ASSERT_TRUE(req.ok()) << req.status();
  EXPECT_EQ((*req)->staged_bytes(), 32u + 16);
  EXPECT_EQ((*req)->borrowed_bytes(), 3u + 4 + 2);
  EXPECT_EQ(std::memcmp((*req)->inputs()[0].data, p.x.data(), 32), 0);
  EXPECT_EQ(std::memcmp((*req)->inputs()[1].data, p.ids.data(), 16), 0);
  EXPECT_TRUE(memory::testing::HoldsPointer(io_, (*req)->inputs()[0].data));
  EXPECT_TRUE(memory::testing::HoldsPointer(io_, (*req)->inputs()[1].data));
  EXPECT_EQ(reinterpret_cast<uintptr_t>((*req)->inputs()[1].data) % 8, 0u);
  EXPECT_GT(io_.Stats().live_bytes, 0u);
  req->reset();
  EXPECT_EQ(io_.Stats().live_bytes, 0u) << "staging buffers must go back with the request";
}

TEST_F(RequestReaderTest, OneByteSlicesGiveTheSameRequest) {
  const inference::ModelInferRequest good = GoodRequest();
  auto req = ParseAndBind(Chopped(Serialize(good), 1));
  ASSERT_TRUE(req.ok()) << req.status();
  inference::ModelInferRequest expected = good;
  expected.clear_raw_input_contents();
  EXPECT_EQ((*req)->header().SerializeAsString(), expected.SerializeAsString());
  for (size_t i = 0; i < 5; ++i) {
    const engine::InputTensor& t = (*req)->inputs()[i];
    EXPECT_EQ(std::string(static_cast<const char*>(t.data), t.bytes), good.raw_input_contents(i));
  }
  EXPECT_EQ((*req)->borrowed_bytes(), 0u);
  EXPECT_EQ((*req)->staged_bytes(), 57u);
}

TEST_F(RequestReaderTest, TypedContentsAreConvertedIntoStaging) {
  inference::ModelInferRequest r = GoodHeader();
  r.mutable_inputs()->DeleteSubrange(3, 1);  // h: FP16 cannot be typed
  toy_.inputs.erase(toy_.inputs.begin() + 3);
  auto* c = r.mutable_inputs(0)->mutable_contents();
  for (int i = 0; i < 8; ++i) c->add_fp32_contents(0.5f * i);
  r.mutable_inputs(1)->mutable_contents()->add_int64_contents(1LL << 40);
  r.mutable_inputs(1)->mutable_contents()->add_int64_contents(-1);
  for (bool b : {true, false, true}) r.mutable_inputs(2)->mutable_contents()->add_bool_contents(b);
  r.mutable_inputs(3)->mutable_contents()->add_int_contents(-128);
  r.mutable_inputs(3)->mutable_contents()->add_int_contents(127);
  r.add_outputs()->set_name("z");
  auto req = ParseAndBind(Chopped(Serialize(r), 7));
  ASSERT_TRUE(req.ok()) << req.status();
  EXPECT_EQ((*req)->staged_bytes(), 32u + 16 + 3 + 2);
  EXPECT_EQ((*req)->borrowed_bytes(), 0u);
  EXPECT_EQ(static_cast<const float*>((*req)->inputs()[0].data)[7], 3.5f);
  EXPECT_EQ(static_cast<const int64_t*>((*req)->inputs()[1].data)[0], 1LL << 40);
  EXPECT_EQ(static_cast<const uint8_t*>((*req)->inputs()[2].data)[1], 0);
  EXPECT_EQ(static_cast<const int8_t*>((*req)->inputs()[3].data)[0], -128);
  EXPECT_EQ((*req)->requested_outputs(), std::vector<std::string>{"z"});
}

TEST_F(RequestReaderTest, EmptyBufferIsARequestWithoutModel) {
  auto req = InferRequest::Parse(grpc::ByteBuffer());
  ASSERT_TRUE(req.ok()) << req.status();
  EXPECT_EQ((*req)->header().model_name(), "");
}

TEST_F(RequestReaderTest, BindTwiceIsRefused) {
  auto req = ParseAndBind(Chopped(Serialize(GoodRequest()), 64));
  ASSERT_TRUE(req.ok()) << req.status();
  EXPECT_EQ((*req)->Bind(toy_, io_).code(), absl::StatusCode::kFailedPrecondition);
}

struct BadCase {
  const char* name;
  std::function<void(inference::ModelInferRequest&)> mutate;
  const char* message;
};

TEST_F(RequestReaderTest, EveryValidationErrorIsInvalidArgumentWithAMessage) {
  const std::vector<BadCase> cases = {
      {"raw count", [](auto& r) { r.mutable_raw_input_contents()->RemoveLast(); },
       "the request has 4 raw_input_contents for 5 inputs"},
      {"unknown input", [](auto& r) { r.mutable_inputs(1)->set_name("idz"); },
       "unknown input 'idz'; model 'toy' has inputs: x, ids, mask, h, small"},
      {"duplicate input", [](auto& r) { r.mutable_inputs(1)->set_name("x"); },
       "input 'x' is given twice"},
      {"missing input",
       [](auto& r) {
         r.mutable_inputs()->RemoveLast();
         r.mutable_raw_input_contents()->RemoveLast();
       },
       "input 'small' is missing; model 'toy' needs: x, ids, mask, h, small"},
      {"unknown datatype", [](auto& r) { r.mutable_inputs(0)->set_datatype("FLOAT32"); },
       "input 'x': unknown datatype 'FLOAT32'; expected one of BOOL, UINT8"},
      {"datatype mismatch", [](auto& r) { r.mutable_inputs(0)->set_datatype("FP64"); },
       "input 'x': expected datatype FP32, got FP64"},
      {"rank mismatch", [](auto& r) { r.mutable_inputs(0)->mutable_shape()->RemoveLast(); },
       "input 'x': expected shape [batch,4] (FP32), got [2]"},
      {"dim mismatch", [](auto& r) { r.mutable_inputs(0)->set_shape(1, 5); },
       "input 'x': expected shape [batch,4] (FP32), got [2,5]"},
      {"negative dim", [](auto& r) { r.mutable_inputs(0)->set_shape(0, -2); },
       "input 'x': shape [-2,4] has a negative dimension"},
      {"overflowing shape", [](auto& r) { r.mutable_inputs(0)->set_shape(0, 1LL << 62); },
       "input 'x': shape [4611686018427387904,4]: dim 0 is 4611686018427387904, above the limit"},
      {"byte size", [](auto& r) { r.mutable_raw_input_contents(0)->resize(28); },
       "input 'x': expected FP32 [2,4] (32 bytes), got 28 bytes"},
      {"raw and typed",
       [](auto& r) { r.mutable_inputs(1)->mutable_contents()->add_int64_contents(1); },
       "input 'ids' has both raw_input_contents and contents.int64_contents"},
      {"unknown output", [](auto& r) { r.add_outputs()->set_name("w"); },
       "unknown output 'w'; model 'toy' has outputs: y, z"},
      {"duplicate output",
       [](auto& r) {
         r.add_outputs()->set_name("y");
         r.add_outputs()->set_name("y");
       },
       "output 'y' is requested twice"},
  };
  for (const BadCase& c : cases) {
    inference::ModelInferRequest r = GoodRequest();
    c.mutate(r);
    absl::Status s = Check(r);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.name << ": " << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.message)) << c.name;
  }
}

TEST_F(RequestReaderTest, TypedContentsErrors) {
  auto typed = [] {
    inference::ModelInferRequest r = GoodHeader();
    auto* c = r.mutable_inputs(0)->mutable_contents();
    for (int i = 0; i < 8; ++i) c->add_fp32_contents(1);
    r.mutable_inputs(1)->mutable_contents()->add_int64_contents(1);
    r.mutable_inputs(1)->mutable_contents()->add_int64_contents(2);
    for (int i = 0; i < 3; ++i) r.mutable_inputs(2)->mutable_contents()->add_bool_contents(true);
    r.mutable_inputs(4)->mutable_contents()->add_int_contents(1);
    r.mutable_inputs(4)->mutable_contents()->add_int_contents(2);
    return r;
  };
  const std::vector<BadCase> cases = {
      {"fp16 typed", [](auto&) {}, "input 'h': FP16 data can only be sent in raw_input_contents"},
      {"no data", [](auto& r) { r.mutable_inputs(0)->clear_contents(); },
       "input 'x' has no data; send raw_input_contents or contents.fp32_contents"},
      {"wrong field", [](auto& r) { r.mutable_inputs(0)->mutable_contents()->add_int_contents(3); },
       "input 'x': FP32 data goes in contents.fp32_contents, got contents.int_contents"},
      {"count",
       [](auto& r) {
         r.mutable_inputs(0)->mutable_contents()->mutable_fp32_contents()->RemoveLast();
       },
       "input 'x': expected FP32 [2,4] (8 elements) in contents.fp32_contents, got 7 elements"},
      {"range", [](auto& r) { r.mutable_inputs(4)->mutable_contents()->set_int_contents(1, 300); },
       "input 'small': contents.int_contents[1] does not fit in INT8"},
  };
  for (const BadCase& c : cases) {
    inference::ModelInferRequest r = typed();
    c.mutate(r);
    if (std::string(c.name) != "fp16 typed") {
      r.mutable_inputs()->DeleteSubrange(3, 1);
    }
    ModelSignature sig = Toy();
    if (std::string(c.name) != "fp16 typed") sig.inputs.erase(sig.inputs.begin() + 3);
    auto req = InferRequest::Parse(Chopped(Serialize(r), 1 << 20));
    ASSERT_TRUE(req.ok()) << req.status();
    absl::Status s = (*req)->Bind(sig, io_);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.name << ": " << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.message)) << c.name;
  }
  EXPECT_EQ(io_.Stats().live_bytes, 0u) << "a refused request leaks no staging buffer";
}

// BYTES (string tensors, docs/strings.md): the length-prefixed raw form split across slices and
// contents.bytes_contents both become the request's own strings; bad forms are refused.
TEST_F(RequestReaderTest, BytesInputsAreDecodedIntoStrings) {
  ModelSignature sig;
  sig.name = "text";
  sig.inputs = {{"s", DataType::kString, Dims({-1})}};
  sig.outputs = {{"t", DataType::kString, Dims({-1})}};
  auto header = [] {
    inference::ModelInferRequest r;
    r.set_model_name("text");
    AddInput(r, "s", "BYTES", {3});
    return r;
  };
  auto prefixed = [](const std::vector<std::string>& v) {
    std::string out;
    for (const std::string& e : v) {
      const uint32_t n = static_cast<uint32_t>(e.size());
      out.append(reinterpret_cast<const char*>(&n), 4);
      out += e;
    }
    return out;
  };
  const std::vector<std::string> want = {"ab", "", "naïve"};
  {
    inference::ModelInferRequest r = header();
    r.add_raw_input_contents(prefixed(want));
    auto req = InferRequest::Parse(Chopped(Serialize(r), 3));
    ASSERT_TRUE(req.ok()) << req.status();
    ASSERT_TRUE((*req)->Bind(sig, io_).ok());
    const engine::InputTensor& in = (*req)->inputs()[0];
    EXPECT_EQ(in.type, DataType::kString);
    EXPECT_EQ(in.bytes, 3 * sizeof(std::string));
    const auto* got = static_cast<const std::string*>(in.data);
    EXPECT_EQ(std::vector<std::string>(got, got + 3), want);
  }
  {
    inference::ModelInferRequest r = header();
    for (const std::string& e : want)
      r.mutable_inputs(0)->mutable_contents()->add_bytes_contents(e);
    auto req = InferRequest::Parse(Chopped(Serialize(r), 1 << 20));
    ASSERT_TRUE(req.ok()) << req.status();
    ASSERT_TRUE((*req)->Bind(sig, io_).ok());
    const auto* got = static_cast<const std::string*>((*req)->inputs()[0].data);
    EXPECT_EQ(std::vector<std::string>(got, got + 3), want);
  }
  const std::vector<std::pair<std::string, const char*>> bad = {
      {prefixed({"ab", ""}), "expected BYTES [3] (3 length-prefixed elements), got 2"},
      {prefixed({"ab", "", "c", "d"}), "got more"},
      {prefixed(want) + "xy", "ends inside the 4-byte length of element 3"},
      {prefixed({"ab", ""}) + std::string("\x09\0\0\0abc", 7), "says 9 bytes, only 3 follow"},
  };
  for (const auto& [raw, message] : bad) {
    inference::ModelInferRequest r = header();
    r.add_raw_input_contents(raw);
    auto req = InferRequest::Parse(Chopped(Serialize(r), 1 << 20));
    ASSERT_TRUE(req.ok()) << req.status();
    absl::Status s = (*req)->Bind(sig, io_);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << message << ": " << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr(message));
  }
  inference::ModelInferRequest r = header();
  r.mutable_inputs(0)->mutable_contents()->add_bytes_contents("one");
  auto req = InferRequest::Parse(Chopped(Serialize(r), 1 << 20));
  ASSERT_TRUE(req.ok()) << req.status();
  absl::Status s = (*req)->Bind(sig, io_);
  EXPECT_THAT(std::string(s.message()), HasSubstr("in contents.bytes_contents, got 1")) << s;
}

TEST_F(RequestReaderTest, MalformedBytesAreInvalidArgument) {
  const std::string good = Serialize(GoodRequest());
  const std::vector<std::pair<std::string, const char*>> cases = {
      {good.substr(0, good.size() - 1), "raw_input_contents[4] claims 2 bytes, only 1 follow"},
      {std::string("\x0a\x05mlp", 5), "field 1 is truncated"},
      {std::string("\x38\x01", 2), "raw_input_contents is not length-delimited"},
      {std::string("\x00\x01", 2), "invalid field number"},
      {std::string("\x0b\x01", 2), "field 1 has unsupported wire type 3"},
      {std::string("\x80", 1), "truncated field tag"},
      {std::string("\x2a\x02\x0a\x05", 4), "do not parse as inference.ModelInferRequest"},
  };
  for (const auto& [bytes, message] : cases) {
    auto req = InferRequest::Parse(Chopped(bytes, 3));
    ASSERT_FALSE(req.ok()) << message;
    EXPECT_EQ(req.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(req.status().message()), HasSubstr(message));
  }
}

// ---- system shared memory: inputs read in place, outputs written into a region ----

// A shared-memory object under a key unique to this process, registered as `region`.
class ShmRegion {
 public:
  ShmRegion(SharedMemoryRegistry& shm, const std::string& region, size_t size)
      : key_("/inferd_rr_" + region + "_" + std::to_string(getpid())), size_(size) {
    const int fd = shm_open(key_.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0600);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(ftruncate(fd, static_cast<off_t>(size)), 0);
    bytes_ = static_cast<uint8_t*>(mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    close(fd);
    EXPECT_TRUE(shm.Register(region, key_, 0, size).ok());
  }
  ~ShmRegion() {
    munmap(bytes_, size_);
    shm_unlink(key_.c_str());
  }
  uint8_t* bytes() { return bytes_; }

 private:
  std::string key_;
  size_t size_;
  uint8_t* bytes_ = nullptr;
};

void SetShm(google::protobuf::Map<std::string, inference::InferParameter>& p,
            const std::string& region, int64_t byte_size, int64_t offset = -1) {
  p["shared_memory_region"].set_string_param(region);
  p["shared_memory_byte_size"].set_int64_param(byte_size);
  if (offset >= 0) p["shared_memory_offset"].set_int64_param(offset);
}

class RequestReaderShmTest : public RequestReaderTest {
 protected:
  // GoodRequest with x (32 bytes) at `offset` of region "in" instead of raw_input_contents.
  inference::ModelInferRequest WithSharedX(int64_t byte_size, int64_t offset) {
    inference::ModelInferRequest r = GoodHeader();
    SetShm(*r.mutable_inputs(0)->mutable_parameters(), "in", byte_size, offset);
    const Payloads p = MakePayloads();
    for (const std::string* s : {&p.ids, &p.mask, &p.h, &p.small}) r.add_raw_input_contents(*s);
    return r;
  }
  absl::StatusOr<std::unique_ptr<InferRequest>> Bind(const inference::ModelInferRequest& r) {
    absl::StatusOr<std::unique_ptr<InferRequest>> req =
        InferRequest::Parse(Chopped(Serialize(r), 1 << 20));
    if (!req.ok()) return req.status();
    (*req)->set_shared_memory(&shm_);
    if (absl::Status s = (*req)->Bind(toy_, io_); !s.ok()) return s;
    return req;
  }

  SharedMemoryRegistry shm_;
  ShmRegion in_{shm_, "in", 4096};
};

TEST_F(RequestReaderShmTest, InputIsReadInPlace) {
  const Payloads p = MakePayloads();
  std::memcpy(in_.bytes() + 64, p.x.data(), p.x.size());
  absl::StatusOr<std::unique_ptr<InferRequest>> req = Bind(WithSharedX(32, 64));
  ASSERT_TRUE(req.ok()) << req.status();
  const engine::InputTensor& x = (*req)->inputs()[0];
  EXPECT_EQ(std::memcmp(x.data, p.x.data(), 32), 0);
  // In place: a byte the client writes now is what the tensor reads.
  in_.bytes()[64] ^= 0xff;
  EXPECT_EQ(static_cast<const uint8_t*>(x.data)[0], in_.bytes()[64]) << "x was copied";
  in_.bytes()[64] ^= 0xff;
  // The other inputs took the raw entries in order.
  EXPECT_EQ(std::memcmp((*req)->inputs()[1].data, p.ids.data(), p.ids.size()), 0);
  // Unregistered meanwhile: the request keeps the region mapped.
  ASSERT_TRUE(shm_.Unregister("in").ok());
  EXPECT_EQ(std::memcmp(x.data, p.x.data(), 32), 0);
}

TEST_F(RequestReaderShmTest, BadSharedInputs) {
  auto message = [&](const inference::ModelInferRequest& r) {
    absl::StatusOr<std::unique_ptr<InferRequest>> req = Bind(r);
    EXPECT_EQ(req.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(req.status().message());
  };
  EXPECT_THAT(message(WithSharedX(28, 0)), HasSubstr("expected 32 bytes"));
  EXPECT_THAT(message(WithSharedX(32, 4090)), HasSubstr("do not fit"));
  inference::ModelInferRequest unknown = WithSharedX(32, 0);
  SetShm(*unknown.mutable_inputs(0)->mutable_parameters(), "nope", 32);
  EXPECT_THAT(message(unknown), HasSubstr("unknown shared-memory region"));
  inference::ModelInferRequest no_size = WithSharedX(32, 0);
  no_size.mutable_inputs(0)->mutable_parameters()->erase("shared_memory_byte_size");
  EXPECT_THAT(message(no_size), HasSubstr("needs shared_memory_byte_size"));
  inference::ModelInferRequest negative = WithSharedX(32, 0);
  (*negative.mutable_inputs(0)->mutable_parameters())["shared_memory_offset"].set_int64_param(-8);
  EXPECT_THAT(message(negative), HasSubstr("non-negative"));
  inference::ModelInferRequest extra_raw = WithSharedX(32, 0);
  extra_raw.add_raw_input_contents(MakePayloads().x);
  EXPECT_THAT(message(extra_raw), HasSubstr("not in shared memory"));
  // Without a registry (a transport that has none): refused, not read.
  absl::StatusOr<std::unique_ptr<InferRequest>> req =
      InferRequest::Parse(Chopped(Serialize(WithSharedX(32, 0)), 1 << 20));
  ASSERT_TRUE(req.ok());
  EXPECT_THAT((*req)->Bind(toy_, io_).message(), HasSubstr("not available"));
}

TEST_F(RequestReaderShmTest, OutputIsWrittenIntoItsRegion) {
  ShmRegion out(shm_, "out", 4096);
  inference::ModelInferRequest r = GoodRequest();
  auto* y = r.add_outputs();
  y->set_name("y");
  SetShm(*y->mutable_parameters(), "out", 32, 128);
  absl::StatusOr<std::unique_ptr<InferRequest>> req = Bind(r);
  ASSERT_TRUE(req.ok()) << req.status();

  absl::StatusOr<memory::AllocationHandle> h = io_.Allocate(32);
  ASSERT_TRUE(h.ok());
  for (int i = 0; i < 32; ++i) static_cast<uint8_t*>(h->data())[i] = static_cast<uint8_t>(i + 1);
  std::vector<LeasedOutput> outputs;
  outputs.push_back({"y", DataType::kFloat32, engine::Shape{2, 4}, *io_.Export(*std::move(h))});
  absl::Duration spent = absl::ZeroDuration();
  ASSERT_TRUE((*req)->WriteSharedMemoryOutputs(outputs, &spent).ok());
  EXPECT_EQ(out.bytes()[128], 1);
  EXPECT_EQ(out.bytes()[128 + 31], 32);
  ASSERT_TRUE(outputs[0].shared_memory.has_value());
  EXPECT_EQ(outputs[0].shared_memory->region, "out");
  EXPECT_EQ(outputs[0].shared_memory->offset, 128u);
  EXPECT_EQ(outputs[0].shared_memory->byte_size, 32u);
  EXPECT_FALSE(outputs[0].lease.valid()) << "the arena buffer is still pinned";
}

TEST_F(RequestReaderShmTest, OutputLargerThanItsRegionIsAnError) {
  ShmRegion out(shm_, "out2", 4096);
  inference::ModelInferRequest r = GoodRequest();
  auto* y = r.add_outputs();
  y->set_name("y");
  SetShm(*y->mutable_parameters(), "out2", 16);
  absl::StatusOr<std::unique_ptr<InferRequest>> req = Bind(r);
  ASSERT_TRUE(req.ok()) << req.status();
  absl::StatusOr<memory::AllocationHandle> h = io_.Allocate(32);
  ASSERT_TRUE(h.ok());
  std::vector<LeasedOutput> outputs;
  outputs.push_back({"y", DataType::kFloat32, engine::Shape{2, 4}, *io_.Export(*std::move(h))});
  absl::Status s = (*req)->WriteSharedMemoryOutputs(outputs, nullptr);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("too small"));
}

}  // namespace
}  // namespace inferd::server

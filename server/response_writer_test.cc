// WriteInferResponse: the output slices are the arena's buffers, the bytes parse as an ordinary
// ModelInferResponse, and every lease returns when gRPC lets go of the ByteBuffer.
#include "server/response_writer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "server/testing/wire.h"

namespace inferd::server {
namespace {

using engine::DataType;

class ResponseWriterTest : public ::testing::Test {
 protected:
  void SetUp() override { testing::InitGrpc(); }

  // An output of `bytes` filled with a pattern, leased from the arena.
  LeasedOutput Output(const std::string& name, size_t bytes, uint8_t seed) {
    absl::StatusOr<memory::AllocationHandle> h = io_.Allocate(bytes);
    EXPECT_TRUE(h.ok());
    for (size_t i = 0; i < bytes; ++i) static_cast<uint8_t*>(h->data())[i] = seed + i * 7;
    absl::StatusOr<memory::IOLease> lease = io_.Export(*std::move(h));
    EXPECT_TRUE(lease.ok());
    return {name, DataType::kFloat32, engine::Shape{static_cast<int64_t>(bytes / 4)},
            *std::move(lease)};
  }

  inference::ModelInferResponse Header() {
    inference::ModelInferResponse h;
    h.set_model_name("mlp");
    h.set_model_version("1");
    h.set_id("r7");
    return h;
  }

  memory::IOArena io_{std::make_shared<memory::CpuSystemAllocator>()};
};

TEST_F(ResponseWriterTest, SlicesPointIntoTheArenaAndLeasesReturnWhenGrpcIsDone) {
  std::vector<LeasedOutput> outs;
  outs.push_back(Output("probs", 4096, 1));
  outs.push_back(Output("logits", 200 * 1024, 2));  // a buffer from mmap
  const void* probs_data = outs[0].lease.data();
  const void* logits_data = outs[1].lease.data();
  const std::string probs(static_cast<const char*>(probs_data), 4096);
  const std::string logits(static_cast<const char*>(logits_data), 200 * 1024);
  std::atomic<int> released{0};

  auto bb = std::make_unique<grpc::ByteBuffer>(
      WriteInferResponse(Header(), std::move(outs), [&released] { released++; }));
  EXPECT_EQ(io_.Stats().outstanding_leases, 2u);
  EXPECT_EQ(released.load(), 0);

  // header, (prefix, data) x 2
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(bb->Dump(&slices).ok());
  ASSERT_EQ(slices.size(), 5u);
  EXPECT_EQ(slices[1].begin()[0], 0x32);
  EXPECT_EQ(slices[2].begin(), probs_data);
  EXPECT_EQ(slices[2].size(), 4096u);
  EXPECT_EQ(slices[4].begin(), logits_data);
  EXPECT_EQ(slices[4].size(), 200u * 1024);

  inference::ModelInferResponse parsed;
  ASSERT_TRUE(parsed.ParseFromString(testing::Flatten(*bb)));
  EXPECT_EQ(parsed.model_name(), "mlp");
  EXPECT_EQ(parsed.id(), "r7");
  ASSERT_EQ(parsed.outputs_size(), 2);
  EXPECT_EQ(parsed.outputs(0).name(), "probs");
  EXPECT_EQ(parsed.outputs(0).datatype(), "FP32");
  EXPECT_EQ(parsed.outputs(0).shape(0), 1024);
  EXPECT_EQ(parsed.outputs(1).name(), "logits");
  ASSERT_EQ(parsed.raw_output_contents_size(), 2);
  EXPECT_EQ(parsed.raw_output_contents(0), probs);
  EXPECT_EQ(parsed.raw_output_contents(1), logits);

  // gRPC holds slice references as long as it writes; the leases stay until the last goes.
  slices.clear();
  EXPECT_EQ(io_.Stats().outstanding_leases, 2u);
  auto copy = std::make_unique<grpc::ByteBuffer>(*bb);  // what the call keeps while sending
  bb.reset();
  EXPECT_EQ(io_.Stats().outstanding_leases, 2u);
  EXPECT_EQ(released.load(), 0);
  std::thread([&copy] { copy.reset(); }).join();  // gRPC lets go on one of its threads
  EXPECT_EQ(io_.Stats().outstanding_leases, 0u);
  EXPECT_EQ(released.load(), 1);
  EXPECT_EQ(io_.Stats().live_bytes, 0u);
  EXPECT_GE(io_.Stats().retained_bytes, 4096u + 200 * 1024) << "buffers back on the free list";
}

TEST_F(ResponseWriterTest, BuffersSurviveTheArenaObject) {
  auto arena = std::make_unique<memory::IOArena>(std::make_shared<memory::CpuSystemAllocator>());
  absl::StatusOr<memory::AllocationHandle> h = arena->Allocate(1 << 20);
  ASSERT_TRUE(h.ok());
  std::memset(h->data(), 0x5a, 1 << 20);
  absl::StatusOr<memory::IOLease> lease = arena->Export(*std::move(h));
  ASSERT_TRUE(lease.ok());
  std::vector<LeasedOutput> outs;
  outs.push_back({"y", DataType::kUint8, engine::Shape{1 << 20}, *std::move(lease)});
  grpc::ByteBuffer bb = WriteInferResponse(Header(), std::move(outs));
  arena.reset();  // the model is unloaded while the response is still being sent
  inference::ModelInferResponse parsed;
  ASSERT_TRUE(parsed.ParseFromString(testing::Flatten(bb)));
  EXPECT_EQ(parsed.raw_output_contents(0), std::string(1 << 20, '\x5a'));
}

TEST_F(ResponseWriterTest, EmptyOutputsAndNoOutputs) {
  std::vector<LeasedOutput> outs;
  outs.push_back(Output("empty", 0, 0));
  bool released = false;
  grpc::ByteBuffer bb = WriteInferResponse(Header(), std::move(outs), [&] { released = true; });
  EXPECT_TRUE(released) << "no data slice holds the notifier";
  EXPECT_EQ(io_.Stats().outstanding_leases, 0u);
  inference::ModelInferResponse parsed;
  ASSERT_TRUE(parsed.ParseFromString(testing::Flatten(bb)));
  ASSERT_EQ(parsed.raw_output_contents_size(), 1);
  EXPECT_EQ(parsed.raw_output_contents(0), "");

  grpc::ByteBuffer none = WriteInferResponse(Header(), {});
  ASSERT_TRUE(parsed.ParseFromString(testing::Flatten(none)));
  EXPECT_EQ(parsed.outputs_size(), 0);
}

// Outputs in shared memory: named by parameters, no bytes; when some output is not, an empty
// entry keeps raw_output_contents one per output.
TEST_F(ResponseWriterTest, SharedMemoryOutputsCarryParametersAndNoBytes) {
  auto in_shm = [](LeasedOutput o, const std::string& region, uint64_t offset) {
    o.shared_memory = SharedMemoryPlacement{region, offset, o.lease.size()};
    o.lease = memory::IOLease();
    return o;
  };
  std::vector<LeasedOutput> all;
  all.push_back(in_shm(Output("probs", 64, 1), "out", 0));
  inference::ModelInferResponse parsed;
  ASSERT_TRUE(
      parsed.ParseFromString(testing::Flatten(WriteInferResponse(Header(), std::move(all)))));
  ASSERT_EQ(parsed.outputs_size(), 1);
  EXPECT_EQ(parsed.raw_output_contents_size(), 0);
  const auto& p = parsed.outputs(0).parameters();
  EXPECT_EQ(p.at("shared_memory_region").string_param(), "out");
  EXPECT_EQ(p.at("shared_memory_byte_size").int64_param(), 64);
  EXPECT_EQ(p.count("shared_memory_offset"), 0u);
  EXPECT_EQ(parsed.outputs(0).shape(0), 16);

  std::vector<LeasedOutput> mixed;
  mixed.push_back(in_shm(Output("probs", 64, 1), "out", 256));
  mixed.push_back(Output("logits", 32, 2));
  const std::string logits(static_cast<const char*>(mixed[1].lease.data()), 32);
  ASSERT_TRUE(
      parsed.ParseFromString(testing::Flatten(WriteInferResponse(Header(), std::move(mixed)))));
  ASSERT_EQ(parsed.raw_output_contents_size(), 2);
  EXPECT_EQ(parsed.raw_output_contents(0), "");
  EXPECT_EQ(parsed.raw_output_contents(1), logits);
  EXPECT_EQ(parsed.outputs(0).parameters().at("shared_memory_offset").int64_param(), 256);
  EXPECT_EQ(io_.Stats().outstanding_leases, 0u);
}

}  // namespace
}  // namespace inferd::server

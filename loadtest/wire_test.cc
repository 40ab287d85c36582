#include "loadtest/wire.h"

#include <grpc/grpc.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "proto/inference.pb.h"

namespace inferd::loadtest {
namespace {

class WireTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { grpc_init(); }
};

// `bytes` cut into slices of `chunk` bytes.
grpc::ByteBuffer Chop(const std::string& bytes, size_t chunk) {
  std::vector<grpc::Slice> slices;
  for (size_t i = 0; i < bytes.size(); i += chunk) {
    slices.emplace_back(bytes.substr(i, chunk));
  }
  return grpc::ByteBuffer(slices.data(), slices.size());
}

std::string Join(const std::vector<grpc::Slice>& slices) {
  std::string s;
  for (const grpc::Slice& sl : slices)
    s.append(reinterpret_cast<const char*>(sl.begin()), sl.size());
  return s;
}

TEST_F(WireTest, SplitsRawEntriesFromTheHeaderAcrossSlices) {
  inference::ModelInferResponse r;
  r.set_model_name("identity");
  r.set_id("42");
  auto* o = r.add_outputs();
  o->set_name("y");
  o->set_datatype("FP32");
  o->add_shape(300);
  const std::string big(1200, 'a');
  std::string varied;
  for (int i = 0; i < 1000; ++i) varied.push_back(static_cast<char>(i * 7));
  r.add_raw_output_contents(big);
  r.add_raw_output_contents("");
  r.add_raw_output_contents(varied);
  (*r.mutable_parameters())["p"].set_int64_param(-5);
  const std::string wire = r.SerializeAsString();

  for (size_t chunk : {size_t{1}, size_t{7}, size_t{64}, wire.size()}) {
    absl::StatusOr<SplitMessage> m = SplitMessage::Parse(Chop(wire, chunk), 6);
    ASSERT_TRUE(m.ok()) << m.status();
    ASSERT_EQ(m->entry_count(), 3u);
    EXPECT_EQ(m->entry(0).size, big.size());
    EXPECT_EQ(m->entry(1).size, 0u);
    EXPECT_TRUE(m->EntryEquals(0, big.data(), big.size()));
    EXPECT_TRUE(m->EntryEquals(1, "", 0));
    EXPECT_TRUE(m->EntryEquals(2, varied.data(), varied.size()));
    EXPECT_FALSE(m->EntryEquals(2, big.data(), varied.size()));
    std::string copy(varied.size(), '\0');
    m->CopyEntry(2, copy.data());
    EXPECT_EQ(copy, varied);
    std::vector<grpc::Slice> slices;
    m->AppendEntrySlices(2, &slices);
    EXPECT_EQ(Join(slices), varied);

    inference::ModelInferResponse header;
    ASSERT_TRUE(header.ParseFromString(m->other_fields()));
    EXPECT_EQ(header.model_name(), "identity");
    EXPECT_EQ(header.id(), "42");
    EXPECT_EQ(header.outputs(0).shape(0), 300);
    EXPECT_EQ(header.parameters().at("p").int64_param(), -5);
    EXPECT_EQ(header.raw_output_contents_size(), 0);
  }
}

TEST_F(WireTest, PrefixPlusSlicesReparse) {
  const std::string payload(70000, 'z');  // a 3-byte varint length
  inference::ModelInferRequest header;
  header.set_model_name("m");
  std::string wire =
      header.SerializeAsString() + LengthDelimitedPrefix(7, payload.size()) + payload;
  inference::ModelInferRequest parsed;
  ASSERT_TRUE(parsed.ParseFromString(wire));
  EXPECT_EQ(parsed.raw_input_contents(0), payload);
}

TEST_F(WireTest, RefusesTruncatedAndWrongWireType) {
  inference::ModelInferResponse r;
  r.add_raw_output_contents(std::string(100, 'b'));
  std::string wire = r.SerializeAsString();
  EXPECT_FALSE(SplitMessage::Parse(Chop(wire.substr(0, wire.size() - 1), 16), 6).ok());
  // Field 6 as a varint (wire type 0).
  const std::string bad = {static_cast<char>((6 << 3) | 0), 1};
  EXPECT_FALSE(SplitMessage::Parse(Chop(bad, 16), 6).ok());
}

}  // namespace
}  // namespace inferd::loadtest

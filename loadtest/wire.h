// SplitMessage: a protobuf message held in a grpc::ByteBuffer, split into the entries of one
// length-delimited `bytes` field, kept as views of gRPC's slices (no payload copy), and all other
// fields, copied out (they are small) so protobuf can parse them.
//
// loadtest uses it on ModelInfer responses (field 6, raw_output_contents) to verify outputs of
// any size without copying them; echo_server uses it on requests (field 7, raw_input_contents)
// to send the input bytes back as sub-slices of the request's own slices.
//
// Example:
//   absl::StatusOr<SplitMessage> m = SplitMessage::Parse(response_buffer, 6);
//   inference::ModelInferResponse header;
//   header.ParseFromString(m->other_fields());
//   bool same = m->EntryEquals(0, expected.data(), expected.size());
//
// Thread-compatible. The slice references it holds keep the bytes alive.
#ifndef INFERD_LOADTEST_WIRE_H_
#define INFERD_LOADTEST_WIRE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>

#include "absl/status/statusor.h"

namespace inferd::loadtest {

class SplitMessage {
 public:
  // One piece of an entry: `size` bytes at `offset` in slice `slice`.
  struct Piece {
    size_t slice;
    size_t offset;
    size_t size;
  };
  struct Entry {
    size_t size = 0;
    std::vector<Piece> pieces;  // empty when size == 0
  };

  // INVALID_ARGUMENT for bytes that are not a protobuf message (truncated, bad wire type) or a
  // non-length-delimited field `field_number`.
  static absl::StatusOr<SplitMessage> Parse(const grpc::ByteBuffer& buffer, int field_number);

  // The wire bytes of every other field, in order (a valid message of the same type).
  const std::string& other_fields() const { return other_; }
  size_t entry_count() const { return entries_.size(); }
  const Entry& entry(size_t i) const { return entries_[i]; }

  // Whether entry i holds exactly these bytes.
  bool EntryEquals(size_t i, const void* data, size_t size) const;
  // Copies entry i to `out` (entry(i).size bytes).
  void CopyEntry(size_t i, void* out) const;
  // Appends slices that reference entry i's bytes (sub-slices: no copy).
  void AppendEntrySlices(size_t i, std::vector<grpc::Slice>* out) const;
  // Calls fn(data, size) for each contiguous piece of entry i, in order; stops when fn returns
  // false. Returns false if fn did.
  template <typename Fn>
  bool ForEachPiece(size_t i, Fn fn) const {
    for (const Piece& p : entries_[i].pieces) {
      if (!fn(slices_[p.slice].begin() + p.offset, p.size)) return false;
    }
    return true;
  }

 private:
  std::vector<grpc::Slice> slices_;
  std::string other_;
  std::vector<Entry> entries_;
};

// The tag and varint length that precede a length-delimited field's bytes.
std::string LengthDelimitedPrefix(int field_number, uint64_t length);

}  // namespace inferd::loadtest

#endif  // INFERD_LOADTEST_WIRE_H_

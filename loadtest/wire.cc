#include "loadtest/wire.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace inferd::loadtest {
namespace {

// A read position over a list of slices.
class Cursor {
 public:
  explicit Cursor(const std::vector<grpc::Slice>& slices) : slices_(slices) { SkipEmpty(); }

  bool done() const { return slice_ == slices_.size(); }

  bool ReadByte(uint8_t* b) {
    if (done()) return false;
    *b = slices_[slice_].begin()[offset_];
    Advance(1);
    return true;
  }

  bool ReadVarint(uint64_t* v, std::string* copy) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b;
      if (!ReadByte(&b)) return false;
      if (copy != nullptr) copy->push_back(static_cast<char>(b));
      *v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  }

  // Consumes n bytes, appending them to `copy` and/or recording them as pieces.
  bool Take(uint64_t n, std::string* copy, SplitMessage::Entry* entry) {
    while (n > 0) {
      if (done()) return false;
      const size_t avail = slices_[slice_].size() - offset_;
      const size_t k = static_cast<size_t>(std::min<uint64_t>(avail, n));
      if (copy != nullptr) {
        copy->append(reinterpret_cast<const char*>(slices_[slice_].begin()) + offset_, k);
      }
      if (entry != nullptr) entry->pieces.push_back({slice_, offset_, k});
      Advance(k);
      n -= k;
    }
    return true;
  }

 private:
  void Advance(size_t k) {
    offset_ += k;
    if (offset_ == slices_[slice_].size()) {
      ++slice_;
      offset_ = 0;
      SkipEmpty();
    }
  }
  void SkipEmpty() {
    while (slice_ < slices_.size() && slices_[slice_].size() == 0) ++slice_;
  }

  const std::vector<grpc::Slice>& slices_;
  size_t slice_ = 0;
  size_t offset_ = 0;
};

}  // namespace

absl::StatusOr<SplitMessage> SplitMessage::Parse(const grpc::ByteBuffer& buffer, int field_number) {
  SplitMessage m;
  grpc::Status dumped = buffer.Dump(&m.slices_);
  if (!dumped.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read message: ", dumped.error_message()));
  }
  Cursor c(m.slices_);
  while (!c.done()) {
    uint64_t tag = 0;
    std::string tag_bytes;
    if (!c.ReadVarint(&tag, &tag_bytes)) return absl::InvalidArgumentError("truncated tag");
    const int field = static_cast<int>(tag >> 3);
    const int wire_type = static_cast<int>(tag & 7);
    if (field == field_number) {
      if (wire_type != 2) {
        return absl::InvalidArgumentError(
            absl::StrCat("field ", field, " has wire type ", wire_type, ", expected 2"));
      }
      uint64_t len = 0;
      if (!c.ReadVarint(&len, nullptr)) return absl::InvalidArgumentError("truncated length");
      Entry e;
      e.size = len;
      if (!c.Take(len, nullptr, &e)) {
        return absl::InvalidArgumentError(absl::StrCat("field ", field, ": truncated entry"));
      }
      m.entries_.push_back(std::move(e));
      continue;
    }
    m.other_ += tag_bytes;
    bool ok = true;
    switch (wire_type) {
      case 0: {
        uint64_t v;
        ok = c.ReadVarint(&v, &m.other_);
        break;
      }
      case 1:
        ok = c.Take(8, &m.other_, nullptr);
        break;
      case 2: {
        uint64_t len = 0;
        ok = c.ReadVarint(&len, &m.other_) && c.Take(len, &m.other_, nullptr);
        break;
      }
      case 5:
        ok = c.Take(4, &m.other_, nullptr);
        break;
      default:
        return absl::InvalidArgumentError(
            absl::StrCat("field ", field, ": unsupported wire type ", wire_type));
    }
    if (!ok) return absl::InvalidArgumentError(absl::StrCat("field ", field, ": truncated"));
  }
  return m;
}

bool SplitMessage::EntryEquals(size_t i, const void* data, size_t size) const {
  if (entries_[i].size != size) return false;
  const uint8_t* p = static_cast<const uint8_t*>(data);
  return ForEachPiece(i, [&p](const uint8_t* d, size_t n) {
    if (std::memcmp(d, p, n) != 0) return false;
    p += n;
    return true;
  });
}

void SplitMessage::CopyEntry(size_t i, void* out) const {
  uint8_t* p = static_cast<uint8_t*>(out);
  ForEachPiece(i, [&p](const uint8_t* d, size_t n) {
    std::memcpy(p, d, n);
    p += n;
    return true;
  });
}

void SplitMessage::AppendEntrySlices(size_t i, std::vector<grpc::Slice>* out) const {
  for (const Piece& p : entries_[i].pieces) {
    out->push_back(slices_[p.slice].sub(p.offset, p.offset + p.size));
  }
}

std::string LengthDelimitedPrefix(int field_number, uint64_t length) {
  std::string s;
  uint64_t tag = (static_cast<uint64_t>(field_number) << 3) | 2;
  for (uint64_t v : {tag, length}) {
    while (v >= 0x80) {
      s.push_back(static_cast<char>(v | 0x80));
      v >>= 7;
    }
    s.push_back(static_cast<char>(v));
  }
  return s;
}

}  // namespace inferd::loadtest

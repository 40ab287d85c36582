#include "engine/weights.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"

namespace inferd::engine {
namespace {

uint16_t FloatToHalfBits(int32_t v) { return static_cast<uint16_t>(v & 0xFFFF); }

// Copies typed repeated fields into `out` (already sized for `n` elements of `type`).
absl::Status DecodeTyped(const onnx::TensorProto& p, DataType type, int64_t n, unsigned char* out,
                         const std::string& what) {
  if (n == 0) return absl::OkStatus();  // an empty tensor: nothing to copy (data() may be null)
  auto count_error = [&](int64_t got) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": shape needs ", n, " elements but the data holds ", got));
  };
  switch (type) {
    case DataType::kFloat32:
      if (p.float_data_size() != n) return count_error(p.float_data_size());
      std::memcpy(out, p.float_data().data(), n * 4);
      return absl::OkStatus();
    case DataType::kFloat64:
      if (p.double_data_size() != n) return count_error(p.double_data_size());
      std::memcpy(out, p.double_data().data(), n * 8);
      return absl::OkStatus();
    case DataType::kInt64:
      if (p.int64_data_size() != n) return count_error(p.int64_data_size());
      std::memcpy(out, p.int64_data().data(), n * 8);
      return absl::OkStatus();
    case DataType::kUint32:
    case DataType::kUint64:
      if (p.uint64_data_size() != n) return count_error(p.uint64_data_size());
      for (int64_t i = 0; i < n; ++i) {
        if (type == DataType::kUint32) {
          reinterpret_cast<uint32_t*>(out)[i] = static_cast<uint32_t>(p.uint64_data(i));
        } else {
          reinterpret_cast<uint64_t*>(out)[i] = p.uint64_data(i);
        }
      }
      return absl::OkStatus();
    case DataType::kInt32:
    case DataType::kInt16:
    case DataType::kUint16:
    case DataType::kInt8:
    case DataType::kUint8:
    case DataType::kBool:
    case DataType::kFloat16:
    case DataType::kBFloat16:
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
      if (p.int32_data_size() != n) return count_error(p.int32_data_size());
      for (int64_t i = 0; i < n; ++i) {
        const int32_t v = p.int32_data(i);
        switch (type) {
          case DataType::kInt32:
            reinterpret_cast<int32_t*>(out)[i] = v;
            break;
          case DataType::kInt16:
            reinterpret_cast<int16_t*>(out)[i] = static_cast<int16_t>(v);
            break;
          case DataType::kUint16:
          case DataType::kFloat16:
          case DataType::kBFloat16:
            reinterpret_cast<uint16_t*>(out)[i] = FloatToHalfBits(v);
            break;
          case DataType::kInt8:
            reinterpret_cast<int8_t*>(out)[i] = static_cast<int8_t>(v);
            break;
          case DataType::kUint8:
          case DataType::kFloat8E4M3FN:  // the bits
          case DataType::kFloat8E4M3FNUZ:
          case DataType::kFloat8E5M2:
          case DataType::kFloat8E5M2FNUZ:
            out[i] = static_cast<uint8_t>(v);
            break;
          case DataType::kBool:
            out[i] = v != 0;
            break;
          default:
            break;
        }
      }
      return absl::OkStatus();
    default:
      return absl::UnimplementedError(
          absl::StrCat(what, ": element type ", DataTypeName(type), " is not supported"));
  }
}

bool Is4Bit(DataType t) { return t == DataType::kInt4 || t == DataType::kUint4; }

// int4 / uint4 arrive packed two per byte (element 2i in the low nibble); inside inferd each
// takes a byte, int4 sign-extended.
void Unpack4Bit(const unsigned char* packed, int64_t n, bool is_signed, unsigned char* out) {
  for (int64_t i = 0; i < n; ++i) {
    const unsigned nibble = (packed[i / 2] >> (i % 2 == 0 ? 0 : 4)) & 0x0F;
    out[i] = static_cast<unsigned char>(is_signed && nibble >= 8 ? nibble | 0xF0 : nibble);
  }
}

struct Header {
  DataType type;
  Shape shape;
  int64_t elements;
  uint64_t bytes;       // in memory
  uint64_t wire_bytes;  // in raw or external data (int4 / uint4: packed, half of `bytes`)
};

// Fills `out` (h.bytes) from a 4-bit tensor's packed data: `view` (raw or external data), else
// the packed bytes in int32_data.
absl::Status Decode4Bit(const onnx::TensorProto& p, const Header& h, const unsigned char* view,
                        unsigned char* out, const std::string& what) {
  std::vector<unsigned char> packed;
  if (view == nullptr) {
    if (static_cast<uint64_t>(p.int32_data_size()) != h.wire_bytes) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": shape needs ", h.wire_bytes,
                                                     " packed bytes but the data holds ",
                                                     p.int32_data_size()));
    }
    for (int32_t v : p.int32_data()) packed.push_back(static_cast<unsigned char>(v));
    view = packed.data();
  }
  Unpack4Bit(view, h.elements, h.type == DataType::kInt4, out);
  return absl::OkStatus();
}

absl::StatusOr<Header> ReadHeader(const onnx::TensorProto& p, const std::string& what) {
  if (!IsKnownDataType(p.data_type()) || p.data_type() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": unknown element type ", p.data_type()));
  }
  Header h;
  h.type = static_cast<DataType>(p.data_type());
  std::vector<int64_t> dims(p.dims().begin(), p.dims().end());
  std::optional<int64_t> n = CheckedNumElements(dims, ElementSize(h.type));
  if (!n) {
    absl::Status bounds = CheckShapeBounds(dims, ElementSize(h.type));
    return absl::InvalidArgumentError(absl::StrCat(what, ": invalid dims ", ShapeForMessage(dims),
                                                   ": ",
                                                   bounds.ok() ? "negative" : bounds.message()));
  }
  h.shape = Shape(dims);
  h.elements = *n;
  h.bytes = static_cast<uint64_t>(*n) * ElementSize(h.type);
  h.wire_bytes = Is4Bit(h.type) ? (h.bytes + 1) / 2 : h.bytes;
  if (p.has_segment()) {
    return absl::UnimplementedError(absl::StrCat(what, ": segmented tensors are not supported"));
  }
  return h;
}

const char* FileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

// The path the descriptor `fd` was opened at, every link resolved (what the kernel opened, not
// what the name points to now).
absl::StatusOr<std::string> OpenedPath(int fd) {
  char buf[PATH_MAX + 1];
  const std::string proc = absl::StrCat("/proc/self/fd/", fd);
  const ssize_t n = ::readlink(proc.c_str(), buf, PATH_MAX);
  if (n < 0)
    return absl::InternalError(absl::StrCat("readlink ", proc, ": ", std::strerror(errno)));
  return std::string(buf, static_cast<size_t>(n));
}

// OK when the opened `fd` lies inside one of `dirs` once links are resolved.
absl::Status CheckInside(int fd, const std::string& path, const std::vector<std::string>& dirs) {
  INFERD_ASSIGN_OR_RETURN(std::string opened, OpenedPath(fd));
  std::string first;
  for (const std::string& dir : dirs) {
    char real_dir[PATH_MAX];
    if (::realpath(dir.c_str(), real_dir) == nullptr) continue;
    if (first.empty()) first = real_dir;
    const std::string prefix = absl::StrCat(real_dir, std::string(real_dir) == "/" ? "" : "/");
    if (absl::StartsWith(opened, prefix)) return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("'", path, "' resolves to '", opened, "', outside the model's directory '",
                   first, "' (external data must not link out of the model's folder)"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<MappedFile>> MappedFile::Open(
    const std::string& path, const std::vector<std::string>& inside_dirs) {
  // O_NONBLOCK: opening a FIFO for reading blocks until a writer comes; regular files ignore it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    return absl::NotFoundError(absl::StrCat("cannot open '", path, "': ", std::strerror(errno)));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return absl::InternalError(absl::StrCat("cannot stat '", path, "': ", std::strerror(err)));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(
        absl::StrCat("'", path, "' is not a regular file (", FileKind(st.st_mode), ")"));
  }
  if (!inside_dirs.empty()) {
    absl::Status inside = CheckInside(fd, path, inside_dirs);
    if (!inside.ok()) {
      ::close(fd);
      return inside;
    }
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  const unsigned char* data = nullptr;
  if (size > 0) {
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      return absl::ResourceExhaustedError(
          absl::StrCat("cannot map '", path, "' (", size, " bytes): ", std::strerror(errno)));
    }
    data = static_cast<const unsigned char*>(p);
  }
  ::close(fd);
  return std::unique_ptr<MappedFile>(new MappedFile(data, size));
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<unsigned char*>(data_), size_);
}

absl::StatusOr<const unsigned char*> WeightStore::External(const onnx::TensorProto& p,
                                                           uint64_t bytes,
                                                           const std::string& what) {
  std::string location;
  uint64_t offset = 0;
  int64_t length = -1;
  for (const onnx::StringStringEntryProto& e : p.external_data()) {
    if (e.key() == "location") {
      location = e.value();
    } else if (e.key() == "offset") {
      if (!absl::SimpleAtoi(e.value(), &offset)) {
        return absl::InvalidArgumentError(absl::StrCat(what, ": bad external data offset"));
      }
    } else if (e.key() == "length") {
      if (!absl::SimpleAtoi(e.value(), &length) || length < 0) {
        return absl::InvalidArgumentError(absl::StrCat(what, ": bad external data length"));
      }
    }
  }
  if (location.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": external data without a location"));
  }
  if (model_dir_.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": external data needs the model's directory (load the model from a file)"));
  }
  // The location must stay inside the model's directory.
  if (location[0] == '/' || absl::StrContains(location, '\0')) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": external data location '", location, "' must be relative"));
  }
  for (absl::string_view part : absl::StrSplit(location, '/')) {
    if (part == "..") {
      return absl::InvalidArgumentError(absl::StrCat(what, ": external data location '", location,
                                                     "' leaves the model's directory"));
    }
  }
  if (length >= 0 && static_cast<uint64_t>(length) != bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": external data length ", length, " does not match the shape's ", bytes, " bytes"));
  }
  auto it = files_.find(location);
  if (it == files_.end()) {
    INFERD_ASSIGN_OR_RETURN(
        std::unique_ptr<MappedFile> file,
        MappedFile::Open(absl::StrCat(model_dir_, "/", location), {model_dir_, linked_model_dir_}));
    mapped_bytes_ += file->size();
    it = files_.emplace(location, std::move(file)).first;
  }
  const MappedFile& file = *it->second;
  if (offset > file.size() || bytes > file.size() - offset) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": external data [", offset, ", +", bytes,
                                                   ") lies outside '", location, "' (", file.size(),
                                                   " bytes)"));
  }
  return file.data() + offset;
}

absl::StatusOr<const Tensor*> WeightStore::Add(const onnx::TensorProto& p,
                                               const std::string& what) {
  INFERD_ASSIGN_OR_RETURN(Header h, ReadHeader(p, what));
  if (h.type == DataType::kString) {  // string_data, copied into a heap string tensor
    Shape shape;
    INFERD_ASSIGN_OR_RETURN(std::vector<std::string> values, TensorProtoStrings(p, &shape));
    tensors_.push_back(Tensor::Strings(std::move(shape), std::move(values)));
    const uint64_t bytes = tensors_.back().string_bytes();
    owned_bytes_ += bytes;
    total_bytes_ += bytes;
    return &tensors_.back();
  }
  const unsigned char* view = nullptr;
  if (p.data_location() == onnx::TensorProto::EXTERNAL) {
    INFERD_ASSIGN_OR_RETURN(view, External(p, h.wire_bytes, what));
  } else if (p.has_raw_data()) {
    if (p.raw_data().size() != h.wire_bytes) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": raw data has ", p.raw_data().size(),
                                                     " bytes, the shape ", h.shape.ToString(),
                                                     " needs ", h.wire_bytes));
    }
    view = reinterpret_cast<const unsigned char*>(p.raw_data().data());
  }
  const size_t align = std::max<size_t>(1, ElementSize(h.type));
  if (Is4Bit(h.type)) {
    auto buf = std::make_unique<unsigned char[]>(std::max<uint64_t>(h.bytes, 1));
    INFERD_RETURN_IF_ERROR(Decode4Bit(p, h, view, buf.get(), what));
    tensors_.push_back(Tensor::Borrowed(h.type, h.shape, buf.get()));
    owned_bytes_ += h.bytes;
    owned_.push_back(std::move(buf));
  } else if (view != nullptr && reinterpret_cast<uintptr_t>(view) % align == 0) {
    tensors_.push_back(Tensor::Borrowed(h.type, h.shape, view));
  } else {
    // Typed fields, or misaligned raw / external data: an owned, aligned copy.
    auto buf = std::make_unique<unsigned char[]>(std::max<uint64_t>(h.bytes, 1));
    if (view != nullptr) {
      std::memcpy(buf.get(), view, h.bytes);
    } else {
      INFERD_RETURN_IF_ERROR(DecodeTyped(p, h.type, h.elements, buf.get(), what));
    }
    tensors_.push_back(Tensor::Borrowed(h.type, h.shape, buf.get()));
    owned_bytes_ += h.bytes;
    owned_.push_back(std::move(buf));
  }
  total_bytes_ += h.bytes;
  return &tensors_.back();
}

absl::StatusOr<std::vector<unsigned char>> TensorProtoBytes(const onnx::TensorProto& p,
                                                            DataType* type, Shape* shape) {
  const std::string what = absl::StrCat("tensor '", p.name(), "'");
  INFERD_ASSIGN_OR_RETURN(Header h, ReadHeader(p, what));
  if (h.type == DataType::kString) {
    return absl::UnimplementedError(
        absl::StrCat(what, ": a string tensor has no bytes (read it with TensorProtoStrings)"));
  }
  if (p.data_location() == onnx::TensorProto::EXTERNAL) {
    return absl::UnimplementedError(absl::StrCat(what, ": external data is not supported here"));
  }
  std::vector<unsigned char> bytes(h.bytes);
  if (p.has_raw_data()) {
    if (p.raw_data().size() != h.wire_bytes) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": raw data has ", p.raw_data().size(),
                                                     " bytes, expected ", h.wire_bytes));
    }
    if (Is4Bit(h.type)) {
      INFERD_RETURN_IF_ERROR(Decode4Bit(
          p, h, reinterpret_cast<const unsigned char*>(p.raw_data().data()), bytes.data(), what));
    } else if (h.bytes > 0) {
      std::memcpy(bytes.data(), p.raw_data().data(), h.bytes);
    }
  } else if (Is4Bit(h.type)) {
    INFERD_RETURN_IF_ERROR(Decode4Bit(p, h, nullptr, bytes.data(), what));
  } else if (h.bytes > 0) {
    INFERD_RETURN_IF_ERROR(DecodeTyped(p, h.type, h.elements, bytes.data(), what));
  }
  *type = h.type;
  *shape = h.shape;
  return bytes;
}

absl::StatusOr<std::vector<std::string>> TensorProtoStrings(const onnx::TensorProto& p,
                                                            Shape* shape) {
  const std::string what = absl::StrCat("tensor '", p.name(), "'");
  INFERD_ASSIGN_OR_RETURN(Header h, ReadHeader(p, what));
  if (h.type != DataType::kString) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": expected a string tensor, got ", DataTypeName(h.type)));
  }
  if (p.data_location() == onnx::TensorProto::EXTERNAL || p.has_raw_data()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": a string tensor's elements must be in string_data"));
  }
  if (p.string_data_size() != h.elements) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", p.string_data_size(),
                                                   " strings for the shape ", h.shape.ToString(),
                                                   " of ", h.elements, " elements"));
  }
  *shape = h.shape;
  return std::vector<std::string>(p.string_data().begin(), p.string_data().end());
}

}  // namespace inferd::engine

#include "base/npy.h"

#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace inferd {
namespace {

constexpr char kMagic[] = "\x93NUMPY";

// Value of `key` in the header dict: the text between "'key':" and the next top-level ',' or '}'.
absl::StatusOr<std::string> DictValue(absl::string_view header, absl::string_view key) {
  const std::string needle = absl::StrCat("'", key, "'");
  size_t at = header.find(needle);
  if (at == absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(".npy header has no '", key, "'"));
  }
  at = header.find(':', at + needle.size());
  if (at == absl::string_view::npos) return absl::InvalidArgumentError("bad .npy header");
  size_t end = at + 1;
  int depth = 0;
  for (; end < header.size(); ++end) {
    const char c = header[end];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
  }
  std::string v(absl::StripAsciiWhitespace(header.substr(at + 1, end - at - 1)));
  return v;
}

}  // namespace

size_t NpyItemSize(absl::string_view dtype) {
  if (dtype.size() < 3) return 0;
  const char order = dtype[0];
  if (order != '<' && order != '|' && order != '=') return 0;
  const char kind = dtype[1];
  if (kind != 'f' && kind != 'i' && kind != 'u' && kind != 'b') return 0;
  size_t n = 0;
  if (!absl::SimpleAtoi(dtype.substr(2), &n)) return 0;
  return (n == 1 || n == 2 || n == 4 || n == 8) ? n : 0;
}

absl::StatusOr<NpyArray> ParseNpy(absl::string_view bytes) {
  if (bytes.size() < 10 || bytes.substr(0, 6) != absl::string_view(kMagic, 6)) {
    return absl::InvalidArgumentError("not a .npy file (bad magic)");
  }
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return absl::InvalidArgumentError("truncated .npy header");
    uint32_t len = 0;
    std::memcpy(&len, bytes.data() + 8, 4);
    header_len = len;
    offset = 12;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(".npy format version ", major, " is unknown"));
  }
  if (bytes.size() < offset + header_len)
    return absl::InvalidArgumentError("truncated .npy header");
  const absl::string_view header = bytes.substr(offset, header_len);
  NpyArray a;
  absl::StatusOr<std::string> descr = DictValue(header, "descr");
  if (!descr.ok()) return descr.status();
  a.dtype = std::string(absl::StripSuffix(absl::StripPrefix(*descr, "'"), "'"));
  if (a.dtype.size() > 1 && a.dtype[0] == '>' && a.dtype.substr(1) != "f1") {
    return absl::InvalidArgumentError(absl::StrCat(".npy dtype ", a.dtype, " is big-endian"));
  }
  const size_t item = NpyItemSize(a.dtype);
  if (item == 0) {
    return absl::InvalidArgumentError(absl::StrCat(".npy dtype ", a.dtype, " is not supported"));
  }
  absl::StatusOr<std::string> fortran = DictValue(header, "fortran_order");
  if (!fortran.ok()) return fortran.status();
  if (*fortran != "False") {
    return absl::InvalidArgumentError(".npy arrays in Fortran order are not supported");
  }
  absl::StatusOr<std::string> shape = DictValue(header, "shape");
  if (!shape.ok()) return shape.status();
  absl::string_view s = absl::StripSuffix(absl::StripPrefix(*shape, "("), ")");
  uint64_t count = 1;
  for (absl::string_view part : absl::StrSplit(s, ',', absl::SkipWhitespace())) {
    int64_t d = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(part), &d) || d < 0 ||
        (d > 0 && count > (uint64_t{1} << 50) / static_cast<uint64_t>(d))) {
      return absl::InvalidArgumentError(absl::StrCat(".npy shape ", *shape, " is invalid"));
    }
    a.shape.push_back(d);
    count *= static_cast<uint64_t>(d);
  }
  const uint64_t data_bytes = count * item;
  const size_t start = offset + header_len;
  if (bytes.size() - start < data_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(".npy data is truncated: ", bytes.size() - start,
                                                   " of ", data_bytes, " bytes"));
  }
  a.data.assign(bytes.begin() + start, bytes.begin() + start + data_bytes);
  return a;
}

absl::StatusOr<NpyArray> ReadNpy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return absl::NotFoundError(absl::StrCat("cannot open '", path, "'"));
  std::stringstream ss;
  ss << f.rdbuf();
  absl::StatusOr<NpyArray> a = ParseNpy(ss.str());
  if (!a.ok())
    return absl::Status(a.status().code(), absl::StrCat(path, ": ", a.status().message()));
  return a;
}

std::string SerializeNpy(const NpyArray& array) {
  std::string shape;
  if (array.shape.size() == 1) {
    shape = absl::StrCat("(", array.shape[0], ",)");
  } else {
    shape = absl::StrCat("(", absl::StrJoin(array.shape, ", "), ")");
  }
  std::string header = absl::StrCat("{'descr': '", array.dtype,
                                    "', 'fortran_order': False, 'shape': ", shape, ", }");
  // Pad with spaces so that the data starts at a multiple of 64, ending in '\n'.
  const bool v2 = header.size() + 11 > 65535;
  const size_t prefix = v2 ? 12 : 10;
  const size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header.push_back('\n');
  std::string out(kMagic, 6);
  out.push_back(static_cast<char>(v2 ? 2 : 1));
  out.push_back(0);
  const uint32_t len = static_cast<uint32_t>(header.size());
  if (v2) {
    out.append(reinterpret_cast<const char*>(&len), 4);
  } else {
    out.push_back(static_cast<char>(len & 0xFF));
    out.push_back(static_cast<char>(len >> 8));
  }
  out += header;
  out.append(reinterpret_cast<const char*>(array.data.data()), array.data.size());
  return out;
}

absl::Status WriteNpy(const std::string& path, const NpyArray& array) {
  std::ofstream f(path, std::ios::binary);
  if (!f) return absl::PermissionDeniedError(absl::StrCat("cannot write '", path, "'"));
  const std::string bytes = SerializeNpy(array);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return f ? absl::OkStatus() : absl::DataLossError(absl::StrCat("writing '", path, "' failed"));
}

}  // namespace inferd

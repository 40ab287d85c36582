// Reading the config's YAML with errors that name the file and line ("inferd.yaml:14:
// models[1].threads: expected a positive integer, got 'two'"). Internal to server/config*.
// Stateless helpers; thread-compatible.
#ifndef INFERD_SERVER_YAML_READER_H_
#define INFERD_SERVER_YAML_READER_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "yaml-cpp/yaml.h"

namespace inferd::server::config_internal {

class Reader {
 public:
  explicit Reader(absl::string_view file) : file_(file) {}

  const std::string& file() const { return file_; }

  absl::Status Error(int line, absl::string_view path, absl::string_view reason) const {
    return absl::InvalidArgumentError(
        absl::StrCat(file_, ":", line, ": ", path, path.empty() ? "" : ": ", reason));
  }

 private:
  std::string file_;
};

// One key: value of a YAML map. `line` is the key's line: errors about the value point there.
struct Field {
  std::string key;
  YAML::Node value;
  int line = 0;
  std::string path;  // "models[1].threads"
};

// The 1-based line of `node`, or `fallback` when it has none.
int LineOf(const YAML::Node& node, int fallback);
// "'text'", "a list", "a map" or "nothing", for messages.
std::string Got(const YAML::Node& node);
// "a.b" from "a" and "b" ("b" alone when `path` is empty).
std::string Join(absl::string_view path, absl::string_view key);
// The fields of a map node in file order. With `allowed`, any other key is an error (with a
// suggestion when it is a near miss); duplicate keys are always errors. Null reads as empty.
absl::StatusOr<std::vector<Field>> ReadMap(const Reader& r, const YAML::Node& node, int line,
                                           absl::string_view path,
                                           absl::Span<const absl::string_view> allowed = {});
absl::StatusOr<std::string> ReadScalar(const Reader& r, const YAML::Node& node, int line,
                                       absl::string_view path, absl::string_view expected);
absl::StatusOr<std::string> ReadString(const Reader& r, const Field& f);
absl::StatusOr<bool> ReadBool(const Reader& r, const Field& f);
absl::StatusOr<int64_t> ReadInt(const Reader& r, const YAML::Node& node, int line,
                                absl::string_view path, int64_t min, int64_t max);
absl::StatusOr<int> ReadCount(const Reader& r, const Field& f, int64_t min);
absl::StatusOr<uint64_t> ReadBytes(const Reader& r, const YAML::Node& node, int line,
                                   absl::string_view path);
absl::StatusOr<std::string> ReadDevice(const Reader& r, const YAML::Node& node, int line,
                                       absl::string_view path);

template <typename Enum>
absl::StatusOr<Enum> ReadEnum(const Reader& r, const Field& f,
                              std::initializer_list<std::pair<const char*, Enum>> choices) {
  std::vector<std::string> names;
  for (const auto& [name, value] : choices) {
    if (f.value.IsScalar() && f.value.Scalar() == name) return value;
    names.push_back(name);
  }
  return r.Error(
      f.line, f.path,
      absl::StrCat("expected one of ", absl::StrJoin(names, ", "), "; got ", Got(f.value)));
}

// Parses one YAML document (an empty text is a null node); syntax errors and a second document
// are errors with the line.
absl::StatusOr<YAML::Node> LoadDocument(const Reader& r, absl::string_view text);

}  // namespace inferd::server::config_internal

#endif  // INFERD_SERVER_YAML_READER_H_

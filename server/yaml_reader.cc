#include "server/yaml_reader.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "absl/strings/numbers.h"
#include "base/status_macros.h"
#include "server/config_values.h"
#include "yaml-cpp/eventhandler.h"

namespace inferd::server::config_internal {

int LineOf(const YAML::Node& node, int fallback) {
  const YAML::Mark mark = node.Mark();
  return mark.is_null() ? fallback : mark.line + 1;
}

std::string Got(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      if (node.Scalar().size() > 80) return absl::StrCat("'", node.Scalar().substr(0, 77), "...'");
      return absl::StrCat("'", node.Scalar(), "'");
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a map";
    default:
      return "nothing";
  }
}

std::string Join(absl::string_view path, absl::string_view key) {
  return path.empty() ? std::string(key) : absl::StrCat(path, ".", key);
}

size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The fields of a map node in file order. With `allowed`, any other key is an error (with a
// suggestion when it is a near miss); duplicate keys are always errors. Null reads as empty.
absl::StatusOr<std::vector<Field>> ReadMap(const Reader& r, const YAML::Node& node, int line,
                                           absl::string_view path,
                                           absl::Span<const absl::string_view> allowed) {
  std::vector<Field> fields;
  std::map<std::string, int> first_line;  // key -> its line
  if (node.IsNull()) return fields;
  if (!node.IsMap()) return r.Error(line, path, absl::StrCat("expected a map, got ", Got(node)));
  for (auto it = node.begin(); it != node.end(); ++it) {
    const int key_line = LineOf(it->first, line);
    if (!it->first.IsScalar()) {
      return r.Error(key_line, path, absl::StrCat("expected a plain key, got ", Got(it->first)));
    }
    Field f{it->first.Scalar(), it->second, key_line, Join(path, it->first.Scalar())};
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), f.key) == allowed.end()) {
      for (absl::string_view known : allowed) {
        if (EditDistance(f.key, known) <= std::min<size_t>(2, known.size() / 3)) {
          return r.Error(key_line, f.path,
                         absl::StrCat("unknown key; did you mean '", known, "'?"));
        }
      }
      return r.Error(key_line, f.path,
                     absl::StrCat("unknown key (known keys: ", absl::StrJoin(allowed, ", "), ")"));
    }
    const auto [earlier, inserted] = first_line.emplace(f.key, key_line);
    if (!inserted) {
      return r.Error(key_line, f.path,
                     absl::StrCat("duplicate key (first at line ", earlier->second, ")"));
    }
    fields.push_back(std::move(f));
  }
  return fields;
}

absl::StatusOr<std::string> ReadScalar(const Reader& r, const YAML::Node& node, int line,
                                       absl::string_view path, absl::string_view expected) {
  if (!node.IsScalar()) {
    return r.Error(line, path, absl::StrCat("expected ", expected, ", got ", Got(node)));
  }
  return node.Scalar();
}

absl::StatusOr<std::string> ReadString(const Reader& r, const Field& f) {
  return ReadScalar(r, f.value, f.line, f.path, "a string");
}

absl::StatusOr<bool> ReadBool(const Reader& r, const Field& f) {
  if (f.value.IsScalar()) {
    const std::string& s = f.value.Scalar();
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
  }
  return r.Error(f.line, f.path, absl::StrCat("expected true or false, got ", Got(f.value)));
}

absl::StatusOr<int64_t> ReadInt(const Reader& r, const YAML::Node& node, int line,
                                absl::string_view path, int64_t min, int64_t max) {
  const char* expected = min > 0 ? "a positive integer" : "a non-negative integer";
  int64_t v = 0;
  if (!node.IsScalar() || !absl::SimpleAtoi(node.Scalar(), &v) || v < min || v > max) {
    std::string limit =
        max < std::numeric_limits<int64_t>::max() && v > max ? absl::StrCat(" up to ", max) : "";
    return r.Error(line, path, absl::StrCat("expected ", expected, limit, ", got ", Got(node)));
  }
  return v;
}

absl::StatusOr<int> ReadCount(const Reader& r, const Field& f, int64_t min) {
  INFERD_ASSIGN_OR_RETURN(
      int64_t v, ReadInt(r, f.value, f.line, f.path, min, std::numeric_limits<int32_t>::max()));
  return static_cast<int>(v);
}

absl::StatusOr<uint64_t> ReadBytes(const Reader& r, const YAML::Node& node, int line,
                                   absl::string_view path) {
  if (!node.IsScalar()) {
    return r.Error(line, path,
                   absl::StrCat("expected a byte size such as 512MiB, got ", Got(node)));
  }
  absl::StatusOr<uint64_t> bytes = ParseByteSize(node.Scalar());
  if (!bytes.ok()) return r.Error(line, path, bytes.status().message());
  return *bytes;
}

absl::StatusOr<std::string> ReadDevice(const Reader& r, const YAML::Node& node, int line,
                                       absl::string_view path) {
  INFERD_ASSIGN_OR_RETURN(std::string text, ReadScalar(r, node, line, path, "a device"));
  absl::StatusOr<std::string> device = NormalizeDeviceName(text);
  if (!device.ok()) return r.Error(line, path, device.status().message());
  return *device;
}

namespace {

// Counts the documents of a stream, stopping at the second: yaml-cpp 0.7's LoadAll loops forever
// on some invalid input (an empty document reported again and again, each one allocated: the
// config fuzzer's first find, jbeder/yaml-cpp#1319, fixed upstream in 0.8.0), so the stream is
// never handed to LoadAll.
class DocumentCounter : public YAML::EventHandler {
 public:
  int count() const { return count_; }
  // The line of the second document's first node (its "---" line when it is empty).
  int second_line() const { return second_line_; }

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++count_ == 2) second_line_ = LineOfMark(mark);
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { OnNode(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { OnNode(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    OnNode(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    OnNode(mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    OnNode(mark);
  }
  void OnMapEnd() override {}

 private:
  static int LineOfMark(const YAML::Mark& mark) { return mark.is_null() ? 1 : mark.line + 1; }
  void OnNode(const YAML::Mark& mark) {
    if (count_ == 2 && !second_node_seen_) {
      second_node_seen_ = true;
      if (!mark.is_null()) second_line_ = LineOfMark(mark);
    }
  }

  int count_ = 0;
  int second_line_ = 1;
  bool second_node_seen_ = false;
};

}  // namespace

// Parses one YAML document. yaml-cpp reports syntax errors by exception; they stop here.
absl::StatusOr<YAML::Node> LoadDocument(const Reader& r, absl::string_view text) {
  try {
    std::istringstream in{std::string(text)};
    YAML::Parser parser(in);
    DocumentCounter documents;
    while (documents.count() < 2 && parser.HandleNextDocument(documents)) {
    }
    if (documents.count() > 1) {
      return r.Error(documents.second_line(), "", "only one YAML document is allowed per file");
    }
    return documents.count() == 0 ? YAML::Node() : YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return r.Error(e.mark.is_null() ? 1 : e.mark.line + 1, "",
                   absl::StrCat("invalid YAML: ", e.msg));
  }
}

}  // namespace inferd::server::config_internal

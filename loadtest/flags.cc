#include "loadtest/flags.h"

#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace inferd::loadtest {

absl::StatusOr<uint64_t> ParseBytes(absl::string_view text) {
  absl::string_view t = absl::StripAsciiWhitespace(text);
  size_t i = 0;
  while (i < t.size() && (absl::ascii_isdigit(t[i]) || t[i] == '.')) ++i;
  double number;
  if (i == 0 || !absl::SimpleAtod(t.substr(0, i), &number)) {
    return absl::InvalidArgumentError(absl::StrCat("bad byte size '", text, "'"));
  }
  const absl::string_view unit = absl::StripAsciiWhitespace(t.substr(i));
  static const std::pair<const char*, double> kUnits[] = {{"", 1},
                                                          {"B", 1},
                                                          {"KiB", 1024.0},
                                                          {"MiB", 1048576.0},
                                                          {"GiB", 1073741824.0},
                                                          {"KB", 1e3},
                                                          {"MB", 1e6},
                                                          {"GB", 1e9},
                                                          {"K", 1024.0},
                                                          {"M", 1048576.0},
                                                          {"G", 1073741824.0}};
  for (const auto& [name, scale] : kUnits) {
    if (unit == name) {
      const double bytes = number * scale;
      if (bytes != std::floor(bytes) || bytes < 0 || bytes > 1.8e19) {
        return absl::InvalidArgumentError(
            absl::StrCat("byte size '", text, "' is not a whole number of bytes"));
      }
      return static_cast<uint64_t>(bytes);
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("bad unit in '", text, "': expected B, KiB, MiB, GiB, KB, MB or GB"));
}

absl::StatusOr<absl::Duration> ParseSeconds(absl::string_view text) {
  double seconds;
  if (absl::SimpleAtod(text, &seconds)) {
    if (seconds < 0) return absl::InvalidArgumentError(absl::StrCat("negative duration ", text));
    return absl::Seconds(seconds);
  }
  absl::Duration d;
  if (!absl::ParseDuration(text, &d) || d < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad duration '", text, "': expected e.g. 10s, 250ms, 2m or 1.5"));
  }
  return d;
}

absl::StatusOr<Flags> Flags::Parse(int argc, char** argv, int begin,
                                   const std::set<std::string>& value_flags,
                                   const std::set<std::string>& bool_flags) {
  Flags f;
  for (int i = begin; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0 || arg == "--") {
      f.positional_.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2), value;
    const size_t eq = name.find('=');
    const bool inline_value = eq != std::string::npos;
    if (inline_value) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (bool_flags.count(name)) {
      if (inline_value && value != "true" && value != "false") {
        return absl::InvalidArgumentError(absl::StrCat("--", name, " takes true or false"));
      }
      f.values_[name].push_back(inline_value ? value : "true");
      continue;
    }
    if (!value_flags.count(name)) {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name));
    }
    if (!inline_value) {
      if (i + 1 >= argc)
        return absl::InvalidArgumentError(absl::StrCat("--", name, " needs a value"));
      value = argv[++i];
    }
    f.values_[name].push_back(value);
  }
  return f;
}

std::string Flags::Get(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second.back();
}

const std::vector<std::string>& Flags::All(const std::string& name) const {
  static const std::vector<std::string> kNone;
  auto it = values_.find(name);
  return it == values_.end() ? kNone : it->second;
}

absl::StatusOr<int64_t> Flags::Int(const std::string& name, int64_t fallback) const {
  if (!Has(name)) return fallback;
  int64_t v;
  if (!absl::SimpleAtoi(Get(name), &v)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, ": '", Get(name), "' is not an integer"));
  }
  return v;
}

absl::StatusOr<double> Flags::Double(const std::string& name, double fallback) const {
  if (!Has(name)) return fallback;
  double v;
  if (!absl::SimpleAtod(Get(name), &v)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, ": '", Get(name), "' is not a number"));
  }
  return v;
}

absl::StatusOr<uint64_t> Flags::Bytes(const std::string& name, uint64_t fallback) const {
  if (!Has(name)) return fallback;
  absl::StatusOr<uint64_t> v = ParseBytes(Get(name));
  if (!v.ok())
    return absl::InvalidArgumentError(absl::StrCat("--", name, ": ", v.status().message()));
  return v;
}

absl::StatusOr<absl::Duration> Flags::Duration(const std::string& name,
                                               absl::Duration fallback) const {
  if (!Has(name)) return fallback;
  absl::StatusOr<absl::Duration> v = ParseSeconds(Get(name));
  if (!v.ok())
    return absl::InvalidArgumentError(absl::StrCat("--", name, ": ", v.status().message()));
  return v;
}

}  // namespace inferd::loadtest

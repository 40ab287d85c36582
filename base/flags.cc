#include "base/flags.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <utility>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"

namespace inferd {
namespace {

// RepeatedFlag's text form: each value preceded by a NUL, which no argv string can hold, so the
// values come back exactly ("" is no value, "\0" one empty value).
constexpr char kValueMark = '\0';

bool IsHelp(absl::string_view arg) { return arg == "--help" || arg == "-help" || arg == "-h"; }

// Abseil's own flags (--flagfile, --fromenv, ...) are defined in its sources; ours are not.
bool IsOurs(const absl::CommandLineFlag& flag) {
  return !absl::StrContains(flag.Filename(), "absl/");
}

bool IsBool(const absl::CommandLineFlag& flag) { return flag.IsOfType<bool>(); }
bool IsRepeated(const absl::CommandLineFlag& flag) { return flag.IsOfType<RepeatedFlag>(); }

std::string AbseilName(absl::string_view spelled) {
  return absl::StrReplaceAll(spelled, {{"-", "_"}});
}

// A spec entry: "port-file" (ABSL_FLAG port_file) or "version=client_version".
std::pair<std::string, std::string> SpelledAndName(absl::string_view entry) {
  const size_t eq = entry.find('=');
  if (eq == absl::string_view::npos) return {std::string(entry), AbseilName(entry)};
  return {std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1))};
}

// One flag a command takes, with the spelling its users see.
struct Known {
  absl::CommandLineFlag* flag;
  std::string spelled;
};

// The flags of `spec`, by Abseil name; an unknown name in the spec is a programming error.
std::map<std::string, Known> KnownFlags(const CommandLineSpec& spec) {
  std::map<std::string, Known> known;
  if (spec.flags.empty()) {
    for (const auto& [name, flag] : absl::GetAllFlags()) {
      if (IsOurs(*flag)) known[std::string(name)] = {flag, std::string(name)};
    }
    return known;
  }
  for (const std::string& entry : spec.flags) {
    const auto [spelled, name] = SpelledAndName(entry);
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr) {
      std::fprintf(stderr,
                   "internal error: the command line names --%s, which no ABSL_FLAG "
                   "defines\n",
                   spelled.c_str());
      std::abort();
    }
    known[AbseilName(spelled)] = {flag, spelled};
  }
  return known;
}

// `--name` or `--noname` / `--no-name` for a bool: the flag and whether it is negated.
const Known* Resolve(const std::map<std::string, Known>& known, absl::string_view name,
                     bool* negated) {
  *negated = false;
  auto it = known.find(AbseilName(name));
  if (it != known.end()) return &it->second;
  if (absl::StartsWith(name, "no")) {
    absl::string_view rest = name.substr(2);
    if (!rest.empty() && (rest[0] == '-' || rest[0] == '_')) rest.remove_prefix(1);
    it = known.find(AbseilName(rest));
    if (it != known.end() && IsBool(*it->second.flag)) {
      *negated = true;
      return &it->second;
    }
  }
  return nullptr;
}

absl::Status SetFlag(const Known& k, absl::string_view value) {
  std::string error;
  if (!k.flag->ParseFrom(value, &error)) {
    return absl::InvalidArgumentError(absl::StrCat("--", k.spelled, ": ", error));
  }
  return absl::OkStatus();
}

std::string HelpLine(const absl::CommandLineFlag& flag, absl::string_view spelled) {
  std::string def = IsRepeated(flag) ? "" : flag.DefaultValue();
  if (def.empty()) def = "\"\"";
  return absl::StrCat("  --", spelled, "  ", flag.Help(),
                      IsRepeated(flag) ? " (repeatable)" : absl::StrCat(" (default: ", def, ")"),
                      "\n");
}

}  // namespace

bool AbslParseFlag(absl::string_view text, RepeatedFlag* flag, std::string* /*error*/) {
  flag->values.clear();
  if (text.empty()) return true;
  if (text[0] != kValueMark) {  // one value, set from outside ParseArgs
    flag->values.emplace_back(text);
    return true;
  }
  for (absl::string_view v : absl::StrSplit(text.substr(1), kValueMark)) {
    flag->values.emplace_back(v);
  }
  return true;
}

std::string AbslUnparseFlag(const RepeatedFlag& flag) {
  std::string text;
  for (const std::string& v : flag.values) {
    text += kValueMark;
    text += v;
  }
  return text;
}

std::string FlagsHelp(const CommandLineSpec& spec) {
  std::vector<std::pair<const absl::CommandLineFlag*, std::string>> flags;
  if (spec.flags.empty()) {
    for (const auto& [name, k] : KnownFlags(spec)) flags.emplace_back(k.flag, k.spelled);
  } else {
    for (const std::string& entry : spec.flags) {
      const auto [spelled, name] = SpelledAndName(entry);
      flags.emplace_back(absl::FindCommandLineFlag(name), spelled);
    }
  }
  std::string out(spec.usage);
  if (!out.empty() && out.back() != '\n') out += '\n';
  if (!flags.empty()) out += "\nflags:\n";
  for (const auto& [flag, spelled] : flags) {
    if (flag != nullptr) out += HelpLine(*flag, spelled);
  }
  return out;
}

std::string FlagsHelp(absl::string_view usage) { return FlagsHelp({std::string(usage), {}}); }

absl::StatusOr<ParsedArgs> ParseArgs(const std::vector<std::string>& args,
                                     const CommandLineSpec& spec) {
  ParsedArgs parsed;
  for (const std::string& arg : args) {
    if (arg == "--") break;
    if (IsHelp(arg)) {
      parsed.help = true;
      return parsed;
    }
  }
  // Every flag of ours back to its default, not only this command's: what a command reads is then
  // what this command line says, whatever an earlier parse in this process set.
  for (const auto& [name, k] : KnownFlags(CommandLineSpec{})) {
    if (absl::Status st = SetFlag(k, k.flag->DefaultValue()); !st.ok()) return st;
  }
  const std::map<std::string, Known> known = KnownFlags(spec);
  std::map<const Known*, RepeatedFlag> repeated;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      parsed.positional.insert(parsed.positional.end(), args.begin() + i + 1, args.end());
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      parsed.positional.push_back(arg);
      continue;
    }
    absl::string_view body = absl::string_view(arg).substr(arg[1] == '-' ? 2 : 1);
    const size_t eq = body.find('=');
    const bool has_value = eq != absl::string_view::npos;
    const absl::string_view name = body.substr(0, eq);
    bool negated = false;
    const Known* k = Resolve(known, name, &negated);
    if (k == nullptr) return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name));
    std::string value = has_value ? std::string(body.substr(eq + 1)) : std::string();
    if (IsBool(*k->flag)) {
      if (negated && has_value) {
        return absl::InvalidArgumentError(absl::StrCat("--", name, " takes no value"));
      }
      if (!has_value) value = negated ? "false" : "true";
    } else if (!has_value) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(absl::StrCat("--", k->spelled, " needs a value"));
      }
      value = args[++i];
    }
    parsed.given.insert(std::string(k->flag->Name()));
    if (IsRepeated(*k->flag)) {
      repeated[k].values.push_back(std::move(value));
    } else if (absl::Status st = SetFlag(*k, value); !st.ok()) {
      return st;
    }
  }
  for (const auto& [k, values] : repeated) {
    if (absl::Status st = SetFlag(*k, AbslUnparseFlag(values)); !st.ok()) return st;
  }
  return parsed;
}

std::vector<std::string> ParseCommandLine(int argc, char** argv, const CommandLineSpec& spec) {
  std::vector<std::string> args(argv + 1, argv + argc);
  absl::StatusOr<ParsedArgs> parsed = ParseArgs(args, spec);
  if (parsed.ok() && parsed->help) {
    std::fputs(FlagsHelp(spec).c_str(), stdout);
    std::exit(0);
  }
  if (!parsed.ok()) {
    const std::string program = argc > 0 ? std::string(argv[0]) : "";
    const size_t slash = program.rfind('/');
    std::fprintf(stderr, "%s: %s\n%s", program.substr(slash + 1).c_str(),
                 std::string(parsed.status().message()).c_str(), spec.usage.c_str());
    std::exit(spec.error_exit_code);
  }
  return std::move(parsed->positional);
}

std::vector<std::string> ParseCommandLine(int argc, char** argv, absl::string_view usage) {
  return ParseCommandLine(argc, argv, CommandLineSpec{std::string(usage), {}});
}

}  // namespace inferd

#include "loadtest/admin_command.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/byte_size.h"
#include "base/flags.h"
#include "loadtest/json_writer.h"
#include "loadtest/loadtest_flags.h"
#include "loadtest/loopback.h"
#include "loadtest/server_probe.h"
#include "loadtest/server_sampler.h"

namespace inferd::loadtest {
namespace {

constexpr char kUsage[] =
    "usage: loadtest admin stats|trim|reset-peak|cap=BYTES|cap=unbounded|churn "
    "--admin ADDR [--model M] [...]\n";

// The flags of `loadtest admin` (loadtest_flags.h).
const CommandLineSpec& AdminSpec() {
  static const CommandLineSpec* spec =
      new CommandLineSpec{kUsage,
                          {"admin", "admin-token", "model", "duration", "interval", "sample",
                           "caps", "server-pid", "json"}};
  return *spec;
}

int Fail(const absl::Status& s) {
  std::cerr << "loadtest admin: " << s.message() << "\n";
  return 1;
}

template <typename Message>
int PrintJson(const absl::StatusOr<Message>& m) {
  if (!m.ok()) return Fail(m.status());
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  if (!google::protobuf::util::MessageToJsonString(*m, &json, options).ok()) {
    return Fail(absl::InternalError("cannot print the response as JSON"));
  }
  std::cout << json << "\n";
  return 0;
}

// "unbounded" -> nullopt.
absl::StatusOr<std::optional<uint64_t>> ParseCap(const std::string& text) {
  if (text == "unbounded") return std::optional<uint64_t>();
  absl::StatusOr<uint64_t> b = ParseByteSize(text);
  if (!b.ok()) return b.status();
  return std::optional<uint64_t>(*b);
}

// What churn did.
struct ChurnResult {
  int64_t ticks = 0, trims = 0, cap_changes = 0, errors = 0;
  uint64_t trimmed = 0, evicted = 0;
  std::vector<std::string> error_samples;  // the first five
};

// Trim on even ticks, the next cap on odd ones, every `interval`, until `duration` has passed.
ChurnResult ChurnLoop(const AdminClient& admin, const std::string& model,
                      const std::vector<std::optional<uint64_t>>& caps, absl::Duration duration,
                      absl::Duration interval) {
  ChurnResult c;
  const auto end = std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(duration);
  while (std::chrono::steady_clock::now() < end) {
    absl::Status s;
    if (c.ticks % 2 == 0) {
      absl::StatusOr<adminpb::TrimResponse> r = admin.Trim(model);
      s = r.status();
      if (r.ok()) {
        ++c.trims;
        c.trimmed += r->total_released_bytes();
      }
    } else {
      absl::StatusOr<adminpb::SetRetentionCapResponse> r =
          admin.SetCap(model, caps[(c.ticks / 2) % caps.size()]);
      s = r.status();
      if (r.ok()) {
        ++c.cap_changes;
        c.evicted += r->total_evicted_bytes();
      }
    }
    if (!s.ok()) {
      ++c.errors;
      if (c.error_samples.size() < 5) c.error_samples.push_back(std::string(s.message()));
    }
    ++c.ticks;
    const auto next =
        std::min(end, std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(interval));
    std::this_thread::sleep_until(next);
  }
  return c;
}

std::string ChurnJson(const ChurnResult& c, const std::vector<std::optional<uint64_t>>& caps,
                      const ServerSampler& sampler) {
  JsonWriter j;
  j.BeginObject();
  j.Key("ticks").Int(c.ticks);
  j.Key("trims").Int(c.trims);
  j.Key("cap_changes").Int(c.cap_changes);
  j.Key("errors").Int(c.errors);
  j.Key("error_samples").BeginArray();
  for (const std::string& e : c.error_samples) j.String(e);
  j.EndArray();
  j.Key("trimmed_bytes").Uint(c.trimmed);
  j.Key("evicted_bytes").Uint(c.evicted);
  j.Key("caps").BeginArray();
  for (const auto& cap : caps) {
    if (cap.has_value()) {
      j.Uint(*cap);
    } else {
      j.String("unbounded");
    }
  }
  j.EndArray();
  j.Key("server");
  sampler.WriteJson(j);
  j.EndObject();
  return j.str();
}

int Churn(const AdminClient& admin, const std::string& model) {
  std::vector<std::optional<uint64_t>> caps;
  for (absl::string_view c : absl::StrSplit(absl::GetFlag(FLAGS_caps), ',')) {
    absl::StatusOr<std::optional<uint64_t>> cap = ParseCap(std::string(c));
    if (!cap.ok()) return Fail(cap.status());
    caps.push_back(*cap);
  }
  ServerSampler sampler(&admin, model, static_cast<pid_t>(absl::GetFlag(FLAGS_server_pid)));
  ChurnResult c;
  {
    Periodic sampling(absl::GetFlag(FLAGS_sample).value, [&sampler] { sampler.Sample(); });
    c = ChurnLoop(admin, model, caps, absl::GetFlag(FLAGS_duration).value,
                  absl::GetFlag(FLAGS_interval).value);
  }
  const std::string json = absl::GetFlag(FLAGS_json);
  if (!json.empty()) {
    std::ofstream out(json);
    out << ChurnJson(c, caps, sampler) << "\n";
    if (!out) return Fail(absl::InternalError(absl::StrCat("cannot write ", json)));
  }
  const ServerSampler::Maxima m = sampler.maxima();
  std::cout << "churn: " << c.ticks << " ticks, " << c.trims << " trims, " << c.cap_changes
            << " cap changes, " << c.errors << " errors; max VmRSS " << m.rss_max / 1048576.0
            << " MiB, max live+retained " << m.live_plus_retained_max / 1048576.0 << " MiB\n";
  for (const std::string& e : c.error_samples) std::cout << "  " << e << "\n";
  return c.errors == 0 ? 0 : 1;
}

}  // namespace

int AdminMain(int argc, char** argv, int first) {
  absl::StatusOr<ParsedArgs> args =
      ParseArgs(std::vector<std::string>(argv + std::min(first, argc), argv + argc), AdminSpec());
  if (args.ok() && args->help) {
    std::cout << FlagsHelp(AdminSpec());
    return 0;
  }
  if (!args.ok()) return Fail(args.status());
  if (args->positional.empty()) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string verb = args->positional[0];
  if (args->positional.size() > 1) {
    return Fail(absl::InvalidArgumentError(
        absl::StrCat("unexpected argument '", args->positional[1], "'")));
  }
  const std::string address = absl::GetFlag(FLAGS_admin);
  if (address.empty()) return Fail(absl::InvalidArgumentError("--admin ADDR is required"));
  absl::Status loopback = CheckLoopback("--admin", address);
  if (!loopback.ok()) return Fail(loopback);
  AdminClient admin(CreateLoopbackChannel(address), absl::GetFlag(FLAGS_admin_token));
  const std::string model = absl::GetFlag(FLAGS_model);
  if (verb == "stats") return PrintJson(admin.Stats(model));
  if (verb == "trim") return PrintJson(admin.Trim(model));
  if (verb == "reset-peak") return PrintJson(admin.ResetPeak(model));
  if (verb.rfind("cap=", 0) == 0) {
    absl::StatusOr<std::optional<uint64_t>> cap = ParseCap(verb.substr(4));
    if (!cap.ok()) return Fail(cap.status());
    return PrintJson(admin.SetCap(model, *cap));
  }
  if (verb == "churn") return Churn(admin, model);
  return Fail(absl::InvalidArgumentError(absl::StrCat("unknown admin verb '", verb, "'")));
}

}  // namespace inferd::loadtest

#include "loadtest/admin_command.h"

#include <google/protobuf/util/json_util.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "loadtest/flags.h"
#include "loadtest/json_writer.h"
#include "loadtest/loopback.h"
#include "loadtest/server_probe.h"
#include "loadtest/server_sampler.h"

namespace inferd::loadtest {
namespace {

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
  absl::StatusOr<uint64_t> b = ParseBytes(text);
  if (!b.ok()) return b.status();
  return std::optional<uint64_t>(*b);
}

int Churn(const AdminClient& admin, const Flags& flags) {
  absl::StatusOr<absl::Duration> duration = flags.Duration("duration", absl::Seconds(60));
  absl::StatusOr<absl::Duration> interval = flags.Duration("interval", absl::Seconds(2));
  absl::StatusOr<absl::Duration> sample = flags.Duration("sample", absl::Milliseconds(250));
  absl::StatusOr<int64_t> pid = flags.Int("server-pid", 0);
  for (const absl::Status& s :
       {duration.status(), interval.status(), sample.status(), pid.status()}) {
    if (!s.ok()) return Fail(s);
  }
  std::vector<std::optional<uint64_t>> caps;
  for (absl::string_view c : absl::StrSplit(flags.Get("caps", "0,1MiB,16MiB,unbounded"), ',')) {
    absl::StatusOr<std::optional<uint64_t>> cap = ParseCap(std::string(c));
    if (!cap.ok()) return Fail(cap.status());
    caps.push_back(*cap);
  }
  const std::string model = flags.Get("model");
  ServerSampler sampler(&admin, model, static_cast<pid_t>(*pid));
  int64_t ticks = 0, trims = 0, cap_changes = 0, errors = 0;
  uint64_t trimmed = 0, evicted = 0;
  std::vector<std::string> error_samples;
  {
    Periodic sampling(*sample, [&sampler] { sampler.Sample(); });
    const auto end = std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(*duration);
    while (std::chrono::steady_clock::now() < end) {
      absl::Status s;
      if (ticks % 2 == 0) {
        absl::StatusOr<adminpb::TrimResponse> r = admin.Trim(model);
        s = r.status();
        if (r.ok()) {
          ++trims;
          trimmed += r->total_released_bytes();
        }
      } else {
        absl::StatusOr<adminpb::SetRetentionCapResponse> r =
            admin.SetCap(model, caps[(ticks / 2) % caps.size()]);
        s = r.status();
        if (r.ok()) {
          ++cap_changes;
          evicted += r->total_evicted_bytes();
        }
      }
      if (!s.ok()) {
        ++errors;
        if (error_samples.size() < 5) error_samples.push_back(std::string(s.message()));
      }
      ++ticks;
      const auto next =
          std::min(end, std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(*interval));
      std::this_thread::sleep_until(next);
    }
  }
  JsonWriter j;
  j.BeginObject();
  j.Key("ticks").Int(ticks);
  j.Key("trims").Int(trims);
  j.Key("cap_changes").Int(cap_changes);
  j.Key("errors").Int(errors);
  j.Key("error_samples").BeginArray();
  for (const std::string& e : error_samples) j.String(e);
  j.EndArray();
  j.Key("trimmed_bytes").Uint(trimmed);
  j.Key("evicted_bytes").Uint(evicted);
  j.Key("caps").BeginArray();
  for (const auto& c : caps) {
    if (c.has_value()) {
      j.Uint(*c);
    } else {
      j.String("unbounded");
    }
  }
  j.EndArray();
  j.Key("server");
  sampler.WriteJson(j);
  j.EndObject();
  if (flags.Has("json")) {
    std::ofstream out(flags.Get("json"));
    out << j.str() << "\n";
    if (!out) return Fail(absl::InternalError(absl::StrCat("cannot write ", flags.Get("json"))));
  }
  const ServerSampler::Maxima m = sampler.maxima();
  std::cout << "churn: " << ticks << " ticks, " << trims << " trims, " << cap_changes
            << " cap changes, " << errors << " errors; max VmRSS " << m.rss_max / 1048576.0
            << " MiB, max live+retained " << m.live_plus_retained_max / 1048576.0 << " MiB\n";
  for (const std::string& e : error_samples) std::cout << "  " << e << "\n";
  return errors == 0 ? 0 : 1;
}

}  // namespace

int AdminMain(int argc, char** argv, int first) {
  if (first >= argc) {
    std::cerr << "usage: loadtest admin stats|trim|reset-peak|cap=BYTES|cap=unbounded|churn "
                 "--admin ADDR [--model M] [...]\n";
    return 2;
  }
  const std::string verb = argv[first];
  absl::StatusOr<Flags> flags = Flags::Parse(argc, argv, first + 1,
                                             {"admin", "admin-token", "model", "duration",
                                              "interval", "sample", "caps", "server-pid", "json"},
                                             {});
  if (!flags.ok()) return Fail(flags.status());
  if (!flags->positional().empty()) {
    return Fail(absl::InvalidArgumentError(
        absl::StrCat("unexpected argument '", flags->positional()[0], "'")));
  }
  const std::string address = flags->Get("admin");
  if (address.empty()) return Fail(absl::InvalidArgumentError("--admin ADDR is required"));
  absl::Status loopback = CheckLoopback("--admin", address);
  if (!loopback.ok()) return Fail(loopback);
  AdminClient admin(CreateLoopbackChannel(address), flags->Get("admin-token"));
  const std::string model = flags->Get("model");
  if (verb == "stats") return PrintJson(admin.Stats(model));
  if (verb == "trim") return PrintJson(admin.Trim(model));
  if (verb == "reset-peak") return PrintJson(admin.ResetPeak(model));
  if (verb.rfind("cap=", 0) == 0) {
    absl::StatusOr<std::optional<uint64_t>> cap = ParseCap(verb.substr(4));
    if (!cap.ok()) return Fail(cap.status());
    return PrintJson(admin.SetCap(model, *cap));
  }
  if (verb == "churn") return Churn(admin, *flags);
  return Fail(absl::InvalidArgumentError(absl::StrCat("unknown admin verb '", verb, "'")));
}

}  // namespace inferd::loadtest

// loadtest: a gRPC load generator for KServe v2 servers (inferd, echo_server, any Triton-style
// server) on this machine. See loadtest/README.md for every flag and figure.
//
//   loadtest --target 127.0.0.1:8001 --model mlp [--concurrency 16 | --rate 500]
//            [--requests N] [--duration 30s] [--warmup N] [--shape x:8,64 ...]
//            [--input x=random|zeros|const:V|npy:PATH] [--verify first|echo|ref|none]
//            [--admin 127.0.0.1:8002 --server-pid PID] [--json FILE]
//   loadtest admin stats|trim|reset-peak|cap=BYTES|churn --admin ADDR ...
//
// Exit status: 0 when every measured call succeeded and was verified (or --allow-errors), 1
// otherwise, 2 for bad usage.
#include <grpc/grpc.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/npy.h"
#include "loadtest/admin_command.h"
#include "loadtest/flags.h"
#include "loadtest/load_driver.h"
#include "loadtest/loopback.h"
#include "loadtest/request_builder.h"
#include "loadtest/run_report.h"
#include "loadtest/server_probe.h"
#include "loadtest/server_sampler.h"
#include "loadtest/verifier.h"
#include "proto/inference.grpc.pb.h"

namespace inferd::loadtest {
namespace {

constexpr char kUsage[] = R"(usage: loadtest --target ADDR --model NAME [options]
       loadtest admin stats|trim|reset-peak|cap=BYTES|cap=unbounded|churn --admin ADDR [...]

load:    --concurrency C (1)  --rate R (0: closed loop; > 0: open loop, requests/s)
         --max-outstanding N (1024)  --requests N (1000)  --duration D (60s)
         --warmup N (0)  --warmup-duration D (60s)  --timeout D (60s)  --connections K (1)
         --slow-read-ms MS (0)  --max-errors N (1000)
request: --model-version V  --shape NAME:D0,D1,... (repeat a name to alternate shapes)
         --input NAME=random|zeros|const:V|npy:PATH  --datatype NAME:FP32 (with --no-metadata)
         --no-metadata  --output NAME (repeatable)  --seed S  --int-max N (64)
verify:  --verify first|echo|ref|none (first)  --reference NAME=PATH.npy  --rtol X  --atol X
server:  --admin ADDR  --admin-token T  --admin-model M (the model; '*' for all)
         --server-pid PID  --reset-peak  --trim-after  --sample-ms MS (250)
output:  --json FILE  --quiet  --allow-errors  --wait-ready D (10s)
)";

int Usage(const absl::Status& s) {
  std::cerr << "loadtest: " << s.message() << "\n" << kUsage;
  return 2;
}

struct Settings {
  std::string target;
  std::string model;
  std::string version;
  DriverOptions driver;
  int connections = 1;
  int64_t requests = 1000;
  absl::Duration duration = absl::Seconds(60);
  int64_t warmup = 0;
  absl::Duration warmup_duration = absl::Seconds(60);
  std::string admin;
  std::string admin_token;
  std::string admin_model;
  pid_t server_pid = 0;
  absl::Duration sample = absl::Milliseconds(250);
  bool reset_peak = false;
  bool trim_after = false;
  bool quiet = false;
  bool allow_errors = false;
  absl::Duration wait_ready = absl::Seconds(10);
  VerifyMode verify = VerifyMode::kFirst;
  std::string json;
};

// Waits until ServerLive answers true.
absl::Status WaitLive(inference::GRPCInferenceService::Stub& stub, absl::Duration within) {
  const auto end = std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(within);
  grpc::Status last;
  while (true) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
    inference::ServerLiveResponse response;
    last = stub.ServerLive(&context, inference::ServerLiveRequest(), &response);
    if (last.ok() && response.live()) return absl::OkStatus();
    if (std::chrono::steady_clock::now() >= end) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return absl::UnavailableError(absl::StrCat("server not live: ", last.error_message()));
}

// Input specs for one request template (index t) from the metadata and the flags.
struct InputPlan {
  TensorSpec base;                           // from the metadata (or --datatype)
  std::vector<std::vector<int64_t>> shapes;  // --shape values, in order
  InputSource source;
};

absl::StatusOr<std::vector<RequestTemplate>> BuildTemplates(
    const Flags& flags, const Settings& s, const std::vector<InputPlan>& plans,
    const std::vector<std::string>& requested_outputs) {
  size_t count = 1;
  for (const InputPlan& p : plans) count = std::max(count, p.shapes.size());
  for (const InputPlan& p : plans) {
    if (p.shapes.size() > 1 && p.shapes.size() != count) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input '", p.base.name, "' has ", p.shapes.size(), " --shape values, another has ", count,
          ": give each alternating input the same number"));
    }
  }
  absl::StatusOr<int64_t> seed = flags.Int("seed", 1);
  absl::StatusOr<int64_t> int_max = flags.Int("int-max", 64);
  if (!seed.ok()) return seed.status();
  if (!int_max.ok()) return int_max.status();
  std::vector<RequestTemplate> templates;
  for (size_t t = 0; t < count; ++t) {
    std::vector<InputTensor> inputs;
    for (size_t k = 0; k < plans.size(); ++k) {
      const InputPlan& p = plans[k];
      TensorSpec spec = p.base;
      if (!p.shapes.empty()) {
        const std::vector<int64_t>& shape = p.shapes[p.shapes.size() == 1 ? 0 : t];
        if (!spec.shape.empty()) {
          bool fits = spec.shape.size() == shape.size();
          for (size_t d = 0; fits && d < shape.size(); ++d) {
            fits = spec.shape[d] < 0 || spec.shape[d] == shape[d];
          }
          if (!fits) {
            return absl::InvalidArgumentError(
                absl::StrCat("--shape ", p.base.name, ":", ShapeString(shape),
                             " does not fit the model's ", ShapeString(spec.shape)));
          }
        }
        spec.shape = shape;
      } else if (p.source.kind == InputSource::Kind::kNpy) {
        spec.shape.clear();  // the file's
      }
      absl::StatusOr<InputTensor> in =
          MakeInput(spec, p.source, static_cast<uint64_t>(*seed) + 1000 * t + k, *int_max);
      if (!in.ok()) return in.status();
      inputs.push_back(*std::move(in));
    }
    absl::StatusOr<RequestTemplate> r =
        BuildRequest({s.model, s.version, requested_outputs}, std::move(inputs));
    if (!r.ok()) return r.status();
    templates.push_back(*std::move(r));
  }
  return templates;
}

int RunMain(int argc, char** argv) {
  absl::StatusOr<Flags> parsed = Flags::Parse(
      argc, argv, 1,
      {"target",          "model",       "model-version", "concurrency", "rate",
       "max-outstanding", "requests",    "duration",      "warmup",      "warmup-duration",
       "timeout",         "connections", "slow-read-ms",  "max-errors",  "shape",
       "input",           "datatype",    "output",        "seed",        "int-max",
       "verify",          "reference",   "rtol",          "atol",        "admin",
       "admin-token",     "admin-model", "server-pid",    "sample-ms",   "json",
       "wait-ready"},
      {"no-metadata", "reset-peak", "trim-after", "quiet", "allow-errors", "help"});
  if (!parsed.ok()) return Usage(parsed.status());
  const Flags& flags = *parsed;
  if (flags.Has("help")) {
    std::cout << kUsage;
    return 0;
  }
  if (!flags.positional().empty()) {
    return Usage(absl::InvalidArgumentError(
        absl::StrCat("unexpected argument '", flags.positional()[0], "'")));
  }

  // pass 1: settings.
  Settings s;
  s.target = flags.Get("target");
  s.model = flags.Get("model");
  s.version = flags.Get("model-version");
  if (s.target.empty() || s.model.empty()) {
    return Usage(absl::InvalidArgumentError("--target and --model are required"));
  }
  {
    absl::Status st = CheckLoopback("--target", s.target);
    if (st.ok() && flags.Has("admin")) st = CheckLoopback("--admin", flags.Get("admin"));
    if (!st.ok()) return Usage(st);
  }
  auto take = [](auto v, auto* out) -> absl::Status {
    if (!v.ok()) return v.status();
    *out = static_cast<std::remove_pointer_t<decltype(out)>>(*v);
    return absl::OkStatus();
  };
  int64_t slow_read_ms = 0, sample_ms = 250, pid = 0;
  for (const absl::Status& st : {
           take(flags.Int("concurrency", 1), &s.driver.concurrency),
           take(flags.Double("rate", 0), &s.driver.rate),
           take(flags.Int("max-outstanding", 1024), &s.driver.max_outstanding),
           take(flags.Int("requests", 1000), &s.requests),
           take(flags.Duration("duration", absl::Seconds(60)), &s.duration),
           take(flags.Int("warmup", 0), &s.warmup),
           take(flags.Duration("warmup-duration", absl::Seconds(60)), &s.warmup_duration),
           take(flags.Duration("timeout", absl::Seconds(60)), &s.driver.timeout),
           take(flags.Int("connections", 1), &s.connections),
           take(flags.Int("slow-read-ms", 0), &slow_read_ms),
           take(flags.Int("max-errors", 1000), &s.driver.max_errors),
           take(flags.Int("server-pid", 0), &pid),
           take(flags.Int("sample-ms", 250), &sample_ms),
           take(flags.Duration("wait-ready", absl::Seconds(10)), &s.wait_ready),
       }) {
    if (!st.ok()) return Usage(st);
  }
  if (s.driver.concurrency < 1 || s.connections < 1 || s.driver.max_outstanding < 1 ||
      s.requests < 1 || s.driver.rate < 0 || sample_ms < 1) {
    return Usage(absl::InvalidArgumentError(
        "--concurrency, --connections, --max-outstanding, --requests and --sample-ms must be "
        "positive, --rate not negative"));
  }
  s.driver.slow_read = absl::Milliseconds(slow_read_ms);
  s.server_pid = static_cast<pid_t>(pid);
  s.sample = absl::Milliseconds(sample_ms);
  s.admin = flags.Get("admin");
  s.admin_token = flags.Get("admin-token");
  s.admin_model = flags.Get("admin-model", s.model);
  if (s.admin_model == "*") s.admin_model.clear();
  s.reset_peak = flags.Has("reset-peak");
  s.trim_after = flags.Has("trim-after");
  s.quiet = flags.Has("quiet");
  s.allow_errors = flags.Has("allow-errors");
  s.json = flags.Get("json");
  {
    absl::StatusOr<VerifyMode> v = ParseVerifyMode(flags.Get("verify", "first"));
    if (!v.ok()) return Usage(v.status());
    s.verify = *v;
  }
  if ((s.reset_peak || s.trim_after) && s.admin.empty()) {
    return Usage(absl::InvalidArgumentError("--reset-peak and --trim-after need --admin"));
  }

  // pass 2: the server and the model's signature.
  grpc_init();
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  for (int i = 0; i < s.connections; ++i) channels.push_back(CreateLoopbackChannel(s.target, i));
  auto stub = inference::GRPCInferenceService::NewStub(channels[0]);
  if (absl::Status st = WaitLive(*stub, s.wait_ready); !st.ok()) {
    std::cerr << "loadtest: " << s.target << ": " << st.message() << "\n";
    return 1;
  }
  std::vector<TensorSpec> model_inputs, model_outputs;
  const bool use_metadata = !flags.Has("no-metadata");
  if (use_metadata) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    inference::ModelMetadataRequest request;
    request.set_name(s.model);
    request.set_version(s.version);
    inference::ModelMetadataResponse md;
    grpc::Status st = stub->ModelMetadata(&context, request, &md);
    if (!st.ok()) {
      std::cerr << "loadtest: ModelMetadata('" << s.model
                << "'): " << StatusCodeName(st.error_code()) << ": " << st.error_message() << "\n";
      return 1;
    }
    for (const auto& t : md.inputs()) {
      model_inputs.push_back({t.name(), t.datatype(), {t.shape().begin(), t.shape().end()}});
    }
    for (const auto& t : md.outputs()) {
      model_outputs.push_back({t.name(), t.datatype(), {t.shape().begin(), t.shape().end()}});
    }
  }

  // pass 3: inputs, request templates, verifier.
  std::map<std::string, std::vector<std::vector<int64_t>>> shapes;
  std::vector<std::string> shape_order;
  for (const std::string& f : flags.All("shape")) {
    const size_t colon = f.find(':');
    if (colon == std::string::npos) {
      return Usage(absl::InvalidArgumentError(absl::StrCat("--shape '", f, "': want NAME:D0,D1")));
    }
    absl::StatusOr<std::vector<int64_t>> dims = ParseDims(f.substr(colon + 1));
    if (!dims.ok()) return Usage(dims.status());
    const std::string name = f.substr(0, colon);
    if (!shapes.count(name)) shape_order.push_back(name);
    shapes[name].push_back(*dims);
  }
  std::map<std::string, InputSource> sources;
  for (const std::string& f : flags.All("input")) {
    const size_t eq = f.find('=');
    if (eq == std::string::npos) {
      return Usage(absl::InvalidArgumentError(absl::StrCat("--input '", f, "': want NAME=SOURCE")));
    }
    absl::StatusOr<InputSource> src = ParseInputSource(f.substr(eq + 1));
    if (!src.ok()) return Usage(src.status());
    sources[f.substr(0, eq)] = *src;
  }
  std::map<std::string, std::string> datatypes;
  for (const std::string& f : flags.All("datatype")) {
    const size_t colon = f.find(':');
    if (colon == std::string::npos) {
      return Usage(
          absl::InvalidArgumentError(absl::StrCat("--datatype '", f, "': want NAME:TYPE")));
    }
    datatypes[f.substr(0, colon)] = f.substr(colon + 1);
  }
  if (!use_metadata) {
    // The inputs are those named by --shape / --input, in that order.
    for (const auto& [name, src] : sources) {
      if (!shapes.count(name)) shape_order.push_back(name);
    }
    for (const std::string& name : shape_order) {
      model_inputs.push_back({name, datatypes.count(name) ? datatypes[name] : "FP32", {}});
    }
    if (model_inputs.empty()) {
      return Usage(absl::InvalidArgumentError("--no-metadata needs --shape or --input per input"));
    }
  }
  std::vector<InputPlan> plans;
  for (const TensorSpec& in : model_inputs) {
    InputPlan p;
    p.base = in;
    if (shapes.count(in.name)) p.shapes = shapes[in.name];
    if (sources.count(in.name)) p.source = sources[in.name];
    if (!use_metadata && p.shapes.empty() && p.source.kind != InputSource::Kind::kNpy) {
      return Usage(absl::InvalidArgumentError(
          absl::StrCat("input '", in.name, "': give --shape (no metadata)")));
    }
    plans.push_back(std::move(p));
  }
  for (const auto& [name, dims] : shapes) {
    bool known = false;
    for (const TensorSpec& in : model_inputs) known = known || in.name == name;
    if (!known) {
      return Usage(absl::InvalidArgumentError(
          absl::StrCat("--shape ", name, ": the model has no such input")));
    }
  }
  const std::vector<std::string> requested_outputs = flags.All("output");
  absl::StatusOr<std::vector<RequestTemplate>> templates =
      BuildTemplates(flags, s, plans, requested_outputs);
  if (!templates.ok()) return Usage(templates.status());

  VerifierOptions vo;
  vo.mode = s.verify;
  vo.model_outputs = model_outputs;
  vo.requested_outputs = requested_outputs;
  {
    absl::StatusOr<double> rtol = flags.Double("rtol", 0), atol = flags.Double("atol", 0);
    if (!rtol.ok()) return Usage(rtol.status());
    if (!atol.ok()) return Usage(atol.status());
    vo.rtol = *rtol;
    vo.atol = *atol;
  }
  for (const std::string& f : flags.All("reference")) {
    const size_t eq = f.find('=');
    if (eq == std::string::npos) {
      return Usage(
          absl::InvalidArgumentError(absl::StrCat("--reference '", f, "': want OUTPUT=PATH.npy")));
    }
    absl::StatusOr<NpyArray> a = ReadNpy(f.substr(eq + 1));
    if (!a.ok()) return Usage(a.status());
    vo.references[f.substr(0, eq)] = *std::move(a);
  }
  if (s.verify == VerifyMode::kReference) {
    if (vo.references.empty()) {
      return Usage(absl::InvalidArgumentError("--verify ref needs --reference OUTPUT=PATH.npy"));
    }
    if (templates->size() != 1) {
      return Usage(absl::InvalidArgumentError("--verify ref works with one input shape only"));
    }
  }
  Verifier verifier(vo, *templates);
  LoadDriver driver(channels, *templates, &verifier, s.driver);

  std::unique_ptr<AdminClient> admin;
  if (!s.admin.empty()) {
    admin = std::make_unique<AdminClient>(CreateLoopbackChannel(s.admin), s.admin_token);
  }

  if (!s.quiet) {
    std::printf("loadtest: %s model '%s', %s, %d connection(s), verify %s\n", s.target.c_str(),
                s.model.c_str(),
                s.driver.rate > 0
                    ? absl::StrFormat("open loop at %.1f req/s", s.driver.rate).c_str()
                    : absl::StrFormat("closed loop, concurrency %d", s.driver.concurrency).c_str(),
                s.connections, VerifyModeName(s.verify));
    for (const RequestTemplate& t : *templates) {
      std::printf("  request %s: %s payload\n", t.label.c_str(), Mib(t.payload_bytes).c_str());
    }
  }

  // pass 4: warm-up, snapshots, the measured run, snapshots.
  RunRecord rec;
  if (s.warmup > 0) {
    rec.warmup = driver.Run(s.warmup, s.warmup_duration, 0);
    if (!s.quiet) PrintPhase("warm-up", rec.warmup);
  }
  auto note_admin = [&rec](const absl::Status& st) {
    if (!st.ok() && rec.admin_error.empty()) rec.admin_error = std::string(st.message());
  };
  if (s.reset_peak) note_admin(admin->ResetPeak(s.admin_model).status());
  if (admin) {
    absl::StatusOr<adminpb::GetMemoryStatsResponse> t = admin->Stats(s.admin_model);
    note_admin(t.status());
    if (t.ok()) {
      rec.stats_before = *t;
      rec.before = SumArenas(*t);
    }
  }
  if (s.server_pid > 0) {
    absl::StatusOr<ProcSample> p = ReadProc(s.server_pid);
    if (p.ok()) rec.proc_before = *p;
  }
  ServerSampler sampler(admin.get(), s.admin_model, s.server_pid);
  {
    std::unique_ptr<Periodic> sampling;
    if (admin || s.server_pid > 0) {
      sampling = std::make_unique<Periodic>(s.sample, [&sampler] { sampler.Sample(); });
    }
    rec.measured = driver.Run(s.requests, s.duration, s.warmup);
  }
  if (s.server_pid > 0) {
    absl::StatusOr<ProcSample> p = ReadProc(s.server_pid);
    if (p.ok()) rec.proc_after = *p;
  }
  if (admin) {
    absl::StatusOr<adminpb::GetMemoryStatsResponse> t = admin->Stats(s.admin_model);
    note_admin(t.status());
    if (t.ok()) {
      rec.stats_after = *t;
      rec.after = SumArenas(*t);
    }
  }
  if (s.trim_after) {
    absl::StatusOr<adminpb::TrimResponse> r = admin->Trim(s.admin_model);
    note_admin(r.status());
    if (r.ok()) rec.trim = *r;
    absl::StatusOr<ArenaTotals> t = admin->Totals(s.admin_model);
    note_admin(t.status());
    if (t.ok()) rec.after_trim = *t;
    if (s.server_pid > 0) {
      absl::StatusOr<ProcSample> p = ReadProc(s.server_pid);
      if (p.ok()) rec.proc_after_trim = *p;
    }
  }

  // pass 5: report.
  RunHeader header;
  header.target = s.target;
  header.model = s.model;
  header.open_loop = s.driver.rate > 0;
  header.concurrency = s.driver.concurrency;
  header.rate = s.driver.rate;
  header.connections = s.connections;
  header.verify = VerifyModeName(s.verify);
  header.slow_read_ms = slow_read_ms;
  header.server_pid = s.server_pid;
  header.admin_model = s.admin_model;
  header.templates = &*templates;
  if (!s.quiet) PrintMeasured(header, rec, sampler);
  const bool passed = rec.measured.ok > 0 &&
                      (s.allow_errors || (rec.measured.failed == 0 && rec.warmup.failed == 0));
  if (!s.json.empty()) {
    std::ofstream out(s.json);
    out << JsonReport(header, rec, sampler, passed) << "\n";
    if (!out) {
      std::cerr << "loadtest: cannot write " << s.json << "\n";
      return 1;
    }
  }
  return passed ? 0 : 1;
}

}  // namespace
}  // namespace inferd::loadtest

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "admin") {
    return inferd::loadtest::AdminMain(argc, argv, 2);
  }
  return inferd::loadtest::RunMain(argc, argv);
}

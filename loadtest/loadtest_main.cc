// loadtest: a gRPC load generator for KServe v2 servers (inferd, echo_server, any Triton-style
// server) on this machine. See loadtest/README.md for every flag and figure.
//
//   loadtest --target 127.0.0.1:8001 --model mlp [--concurrency 16 | --rate 500]
//            [--requests N] [--duration 30s] [--warmup N] [--shape x:8,64 ...]
//            [--input x=random|zeros|const:V|npy:PATH] [--verify first|echo|ref|none]
//            [--admin 127.0.0.1:8003 --server-pid PID] [--json FILE]
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
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/flags.h"
#include "base/npy.h"
#include "base/status_macros.h"
#include "loadtest/admin_command.h"
#include "loadtest/load_driver.h"
#include "loadtest/loadtest_flags.h"
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

constexpr int kUsageError = 2;

int Usage(const absl::Status& s) {
  std::cerr << "loadtest: " << s.message() << "\n" << kUsage;
  return kUsageError;
}

// The flags of a load run, as spelled on the command line (loadtest_flags.h).
const CommandLineSpec& RunSpec() {
  static const CommandLineSpec* spec = new CommandLineSpec{
      kUsage,
      {"target",          "model",       "model-version", "concurrency", "rate",
       "max-outstanding", "requests",    "duration",      "warmup",      "warmup-duration",
       "timeout",         "connections", "slow-read-ms",  "max-errors",  "shape",
       "input",           "datatype",    "no-metadata",   "output",      "seed",
       "int-max",         "verify",      "reference",     "rtol",        "atol",
       "admin",           "admin-token", "admin-model",   "server-pid",  "reset-peak",
       "trim-after",      "sample-ms",   "json",          "quiet",       "allow-errors",
       "wait-ready"},
      kUsageError};
  return *spec;
}

struct Settings {
  std::string target;
  std::string model;
  std::string version;
  DriverOptions driver;
  int connections = 1;
  int64_t requests = 1000;
  int64_t slow_read_ms = 0;
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
  bool use_metadata = true;
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
    const Settings& s, const std::vector<InputPlan>& plans,
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
  const int64_t seed = absl::GetFlag(FLAGS_seed);
  const int64_t int_max = absl::GetFlag(FLAGS_int_max);
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
          MakeInput(spec, p.source, static_cast<uint64_t>(seed) + 1000 * t + k, int_max);
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

// pass 1 of a run: the settings from the flags; INVALID_ARGUMENT for a usage error.
absl::StatusOr<Settings> ReadSettings(const ParsedArgs& args) {
  if (!args.positional.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("unexpected argument '", args.positional[0], "'"));
  }
  Settings s;
  s.target = absl::GetFlag(FLAGS_target);
  s.model = absl::GetFlag(FLAGS_model);
  s.version = absl::GetFlag(FLAGS_model_version);
  if (s.target.empty() || s.model.empty()) {
    return absl::InvalidArgumentError("--target and --model are required");
  }
  s.admin = absl::GetFlag(FLAGS_admin);
  INFERD_RETURN_IF_ERROR(CheckLoopback("--target", s.target));
  if (args.given.count("admin")) INFERD_RETURN_IF_ERROR(CheckLoopback("--admin", s.admin));
  s.driver.concurrency = absl::GetFlag(FLAGS_concurrency);
  s.driver.rate = absl::GetFlag(FLAGS_rate);
  s.driver.max_outstanding = absl::GetFlag(FLAGS_max_outstanding);
  s.driver.timeout = absl::GetFlag(FLAGS_timeout).value;
  s.driver.max_errors = absl::GetFlag(FLAGS_max_errors);
  s.requests = absl::GetFlag(FLAGS_requests);
  s.duration = absl::GetFlag(FLAGS_duration).value;
  s.warmup = absl::GetFlag(FLAGS_warmup);
  s.warmup_duration = absl::GetFlag(FLAGS_warmup_duration).value;
  s.connections = absl::GetFlag(FLAGS_connections);
  s.slow_read_ms = absl::GetFlag(FLAGS_slow_read_ms);
  s.wait_ready = absl::GetFlag(FLAGS_wait_ready).value;
  const int64_t sample_ms = absl::GetFlag(FLAGS_sample_ms);
  if (s.driver.concurrency < 1 || s.connections < 1 || s.driver.max_outstanding < 1 ||
      s.requests < 1 || s.driver.rate < 0 || sample_ms < 1) {
    return absl::InvalidArgumentError(
        "--concurrency, --connections, --max-outstanding, --requests and --sample-ms must be "
        "positive, --rate not negative");
  }
  s.driver.slow_read = absl::Milliseconds(s.slow_read_ms);
  s.server_pid = static_cast<pid_t>(absl::GetFlag(FLAGS_server_pid));
  s.sample = absl::Milliseconds(sample_ms);
  s.admin_token = absl::GetFlag(FLAGS_admin_token);
  s.admin_model = args.given.count("admin_model") ? absl::GetFlag(FLAGS_admin_model) : s.model;
  if (s.admin_model == "*") s.admin_model.clear();
  s.reset_peak = absl::GetFlag(FLAGS_reset_peak);
  s.trim_after = absl::GetFlag(FLAGS_trim_after);
  s.quiet = absl::GetFlag(FLAGS_quiet);
  s.allow_errors = absl::GetFlag(FLAGS_allow_errors);
  s.use_metadata = !absl::GetFlag(FLAGS_no_metadata);
  s.json = absl::GetFlag(FLAGS_json);
  INFERD_ASSIGN_OR_RETURN(s.verify, ParseVerifyMode(absl::GetFlag(FLAGS_verify)));
  if ((s.reset_peak || s.trim_after) && s.admin.empty()) {
    return absl::InvalidArgumentError("--reset-peak and --trim-after need --admin");
  }
  return s;
}

// pass 2: the model's inputs and outputs, from ModelMetadata.
absl::Status FetchSignature(inference::GRPCInferenceService::Stub& stub, const Settings& s,
                            std::vector<TensorSpec>* inputs, std::vector<TensorSpec>* outputs) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  inference::ModelMetadataRequest request;
  request.set_name(s.model);
  request.set_version(s.version);
  inference::ModelMetadataResponse md;
  grpc::Status st = stub.ModelMetadata(&context, request, &md);
  if (!st.ok()) {
    return absl::UnavailableError(absl::StrCat("ModelMetadata('", s.model,
                                               "'): ", StatusCodeName(st.error_code()), ": ",
                                               st.error_message()));
  }
  for (const auto& t : md.inputs()) {
    inputs->push_back({t.name(), t.datatype(), {t.shape().begin(), t.shape().end()}});
  }
  for (const auto& t : md.outputs()) {
    outputs->push_back({t.name(), t.datatype(), {t.shape().begin(), t.shape().end()}});
  }
  return absl::OkStatus();
}

// --shape, --input and --datatype, by input name.
struct RequestFlags {
  std::map<std::string, std::vector<std::vector<int64_t>>> shapes;
  std::vector<std::string> shape_order;  // input names in the order --shape named them
  std::map<std::string, InputSource> sources;
  std::map<std::string, std::string> datatypes;
};

// "NAME<sep>VALUE" -> {NAME, VALUE}; INVALID_ARGUMENT "--flag 'text': want <form>".
absl::StatusOr<std::pair<std::string, std::string>> SplitNamed(const std::string& text, char sep,
                                                               absl::string_view flag,
                                                               absl::string_view form) {
  const size_t at = text.find(sep);
  if (at == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("--", flag, " '", text, "': want ", form));
  }
  return std::make_pair(text.substr(0, at), text.substr(at + 1));
}

absl::StatusOr<RequestFlags> ReadRequestFlags() {
  RequestFlags r;
  for (const std::string& f : absl::GetFlag(FLAGS_shape).values) {
    INFERD_ASSIGN_OR_RETURN(auto kv, SplitNamed(f, ':', "shape", "NAME:D0,D1"));
    INFERD_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ParseDims(kv.second));
    if (!r.shapes.count(kv.first)) r.shape_order.push_back(kv.first);
    r.shapes[kv.first].push_back(std::move(dims));
  }
  for (const std::string& f : absl::GetFlag(FLAGS_input).values) {
    INFERD_ASSIGN_OR_RETURN(auto kv, SplitNamed(f, '=', "input", "NAME=SOURCE"));
    INFERD_ASSIGN_OR_RETURN(r.sources[kv.first], ParseInputSource(kv.second));
  }
  for (const std::string& f : absl::GetFlag(FLAGS_datatype).values) {
    INFERD_ASSIGN_OR_RETURN(auto kv, SplitNamed(f, ':', "datatype", "NAME:TYPE"));
    r.datatypes[kv.first] = kv.second;
  }
  return r;
}

// pass 3a: one InputPlan per model input. Without metadata the inputs are those named by --shape
// / --input, in that order.
absl::StatusOr<std::vector<InputPlan>> PlanInputs(const Settings& s, RequestFlags& r,
                                                  std::vector<TensorSpec>& model_inputs) {
  if (!s.use_metadata) {
    for (const auto& [name, src] : r.sources) {
      if (!r.shapes.count(name)) r.shape_order.push_back(name);
    }
    for (const std::string& name : r.shape_order) {
      model_inputs.push_back({name, r.datatypes.count(name) ? r.datatypes[name] : "FP32", {}});
    }
    if (model_inputs.empty()) {
      return absl::InvalidArgumentError("--no-metadata needs --shape or --input per input");
    }
  }
  std::vector<InputPlan> plans;
  for (const TensorSpec& in : model_inputs) {
    InputPlan p;
    p.base = in;
    if (r.shapes.count(in.name)) p.shapes = r.shapes[in.name];
    if (r.sources.count(in.name)) p.source = r.sources[in.name];
    if (!s.use_metadata && p.shapes.empty() && p.source.kind != InputSource::Kind::kNpy) {
      return absl::InvalidArgumentError(
          absl::StrCat("input '", in.name, "': give --shape (no metadata)"));
    }
    plans.push_back(std::move(p));
  }
  for (const auto& [name, dims] : r.shapes) {
    bool known = false;
    for (const TensorSpec& in : model_inputs) known = known || in.name == name;
    if (!known) {
      return absl::InvalidArgumentError(
          absl::StrCat("--shape ", name, ": the model has no such input"));
    }
  }
  return plans;
}

// pass 3b: what the verifier checks.
absl::StatusOr<VerifierOptions> ReadVerifierOptions(const Settings& s,
                                                    const std::vector<TensorSpec>& model_outputs,
                                                    const std::vector<std::string>& requested,
                                                    size_t template_count) {
  VerifierOptions vo;
  vo.mode = s.verify;
  vo.model_outputs = model_outputs;
  vo.requested_outputs = requested;
  vo.rtol = absl::GetFlag(FLAGS_rtol);
  vo.atol = absl::GetFlag(FLAGS_atol);
  for (const std::string& f : absl::GetFlag(FLAGS_reference).values) {
    INFERD_ASSIGN_OR_RETURN(auto kv, SplitNamed(f, '=', "reference", "OUTPUT=PATH.npy"));
    INFERD_ASSIGN_OR_RETURN(vo.references[kv.first], ReadNpy(kv.second));
  }
  if (s.verify == VerifyMode::kReference) {
    if (vo.references.empty()) {
      return absl::InvalidArgumentError("--verify ref needs --reference OUTPUT=PATH.npy");
    }
    if (template_count != 1) {
      return absl::InvalidArgumentError("--verify ref works with one input shape only");
    }
  }
  return vo;
}

void PrintPlan(const Settings& s, const std::vector<RequestTemplate>& templates) {
  std::printf("loadtest: %s model '%s', %s, %d connection(s), verify %s\n", s.target.c_str(),
              s.model.c_str(),
              s.driver.rate > 0
                  ? absl::StrFormat("open loop at %.1f req/s", s.driver.rate).c_str()
                  : absl::StrFormat("closed loop, concurrency %d", s.driver.concurrency).c_str(),
              s.connections, VerifyModeName(s.verify));
  for (const RequestTemplate& t : templates) {
    std::printf("  request %s: %s payload\n", t.label.c_str(), Mib(t.payload_bytes).c_str());
  }
}

// The arena stats at one point of the run; the first failed admin call is noted in `rec`.
void AdminSnapshot(const Settings& s, AdminClient* admin, RunRecord& rec,
                   std::optional<adminpb::GetMemoryStatsResponse>* stats,
                   std::optional<ArenaTotals>* totals) {
  if (admin == nullptr) return;
  absl::StatusOr<adminpb::GetMemoryStatsResponse> t = admin->Stats(s.admin_model);
  if (!t.ok() && rec.admin_error.empty()) rec.admin_error = std::string(t.status().message());
  if (t.ok()) {
    *stats = *t;
    *totals = SumArenas(*t);
  }
}

// The server's /proc figures at one point of the run (with --server-pid).
void ProcSnapshot(const Settings& s, std::optional<ProcSample>* proc) {
  if (s.server_pid <= 0) return;
  absl::StatusOr<ProcSample> p = ReadProc(s.server_pid);
  if (p.ok()) *proc = *p;
}

void NoteAdmin(RunRecord& rec, const absl::Status& st) {
  if (!st.ok() && rec.admin_error.empty()) rec.admin_error = std::string(st.message());
}

// pass 4a: the warm-up, ResetPeak, the snapshots before the measured part.
RunRecord WarmUp(const Settings& s, LoadDriver& driver, AdminClient* admin) {
  RunRecord rec;
  if (s.warmup > 0) {
    rec.warmup = driver.Run(s.warmup, s.warmup_duration, 0);
    if (!s.quiet) PrintPhase("warm-up", rec.warmup);
  }
  if (s.reset_peak) NoteAdmin(rec, admin->ResetPeak(s.admin_model).status());
  AdminSnapshot(s, admin, rec, &rec.stats_before, &rec.before);
  ProcSnapshot(s, &rec.proc_before);
  return rec;
}

// pass 4b: the measured part, sampled; the snapshots after it; Trim and its snapshots.
void MeasureAndTrim(const Settings& s, LoadDriver& driver, AdminClient* admin,
                    ServerSampler& sampler, RunRecord& rec) {
  {
    std::unique_ptr<Periodic> sampling;
    if (admin || s.server_pid > 0) {
      sampling = std::make_unique<Periodic>(s.sample, [&sampler] { sampler.Sample(); });
    }
    rec.measured = driver.Run(s.requests, s.duration, s.warmup);
  }
  ProcSnapshot(s, &rec.proc_after);
  AdminSnapshot(s, admin, rec, &rec.stats_after, &rec.after);
  if (!s.trim_after) return;
  absl::StatusOr<adminpb::TrimResponse> r = admin->Trim(s.admin_model);
  NoteAdmin(rec, r.status());
  if (r.ok()) rec.trim = *r;
  absl::StatusOr<ArenaTotals> t = admin->Totals(s.admin_model);
  NoteAdmin(rec, t.status());
  if (t.ok()) rec.after_trim = *t;
  ProcSnapshot(s, &rec.proc_after_trim);
}

// pass 5: the summary, the JSON report; the exit status.
int Report(const Settings& s, const std::vector<RequestTemplate>& templates, const RunRecord& rec,
           const ServerSampler& sampler) {
  RunHeader header;
  header.target = s.target;
  header.model = s.model;
  header.open_loop = s.driver.rate > 0;
  header.concurrency = s.driver.concurrency;
  header.rate = s.driver.rate;
  header.connections = s.connections;
  header.verify = VerifyModeName(s.verify);
  header.slow_read_ms = s.slow_read_ms;
  header.server_pid = s.server_pid;
  header.admin_model = s.admin_model;
  header.templates = &templates;
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

int RunMain(int argc, char** argv) {
  absl::StatusOr<ParsedArgs> args =
      ParseArgs(std::vector<std::string>(argv + 1, argv + argc), RunSpec());
  if (args.ok() && args->help) {
    std::cout << FlagsHelp(RunSpec());
    return 0;
  }
  // pass 1: settings.
  absl::StatusOr<Settings> settings = args.ok() ? ReadSettings(*args) : args.status();
  if (!settings.ok()) return Usage(settings.status());
  const Settings& s = *settings;

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
  if (s.use_metadata) {
    if (absl::Status st = FetchSignature(*stub, s, &model_inputs, &model_outputs); !st.ok()) {
      std::cerr << "loadtest: " << st.message() << "\n";
      return 1;
    }
  }

  // pass 3: inputs, request templates, verifier.
  absl::StatusOr<RequestFlags> request_flags = ReadRequestFlags();
  if (!request_flags.ok()) return Usage(request_flags.status());
  absl::StatusOr<std::vector<InputPlan>> plans = PlanInputs(s, *request_flags, model_inputs);
  if (!plans.ok()) return Usage(plans.status());
  const std::vector<std::string> requested_outputs = absl::GetFlag(FLAGS_output).values;
  absl::StatusOr<std::vector<RequestTemplate>> templates =
      BuildTemplates(s, *plans, requested_outputs);
  if (!templates.ok()) return Usage(templates.status());
  absl::StatusOr<VerifierOptions> vo =
      ReadVerifierOptions(s, model_outputs, requested_outputs, templates->size());
  if (!vo.ok()) return Usage(vo.status());
  Verifier verifier(*vo, *templates);
  LoadDriver driver(channels, *templates, &verifier, s.driver);
  std::unique_ptr<AdminClient> admin;
  if (!s.admin.empty()) {
    admin = std::make_unique<AdminClient>(CreateLoopbackChannel(s.admin), s.admin_token);
  }
  if (!s.quiet) PrintPlan(s, *templates);

  // pass 4: warm-up, snapshots, the measured run, snapshots.
  RunRecord rec = WarmUp(s, driver, admin.get());
  ServerSampler sampler(admin.get(), s.admin_model, s.server_pid);  // its clock starts here
  MeasureAndTrim(s, driver, admin.get(), sampler, rec);

  // pass 5: report.
  return Report(s, *templates, rec, sampler);
}

}  // namespace
}  // namespace inferd::loadtest

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "admin") {
    return inferd::loadtest::AdminMain(argc, argv, 2);
  }
  return inferd::loadtest::RunMain(argc, argv);
}

#include "tools/inferctl/client_commands.h"

#include <grpcpp/grpcpp.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/byte_size.h"
#include "base/duration.h"
#include "base/flags.h"
#include "base/npy.h"
#include "base/status_macros.h"
#include "partition/plan_report.h"
#include "proto/admin.grpc.pb.h"
#include "proto/inference.grpc.pb.h"
#include "server/kserve_types.h"
#include "tools/inferctl/inferctl_flags.h"
#include "tools/inferctl/npy_tensor.h"

namespace inferd::tools {

const char kClientCommandsUsage[] =
    "  infer --model M [--input NAME=FILE.npy]... [--random] [--output-dir DIR] [--version V]\n"
    "                    run a model on a running inferd (--addr HOST:PORT, default "
    "127.0.0.1:8001)\n"
    "  models            list the models and their states\n"
    "  load --model M    load (or reload) a model;  unload --model M: unload it\n"
    "                    (server.model_control: explicit; the admin token when one is set)\n"
    "  stats [--model M] [--device D] [--arena execution|io]\n"
    "                    memory of every arena (admin API: --admin-addr HOST:PORT, default\n"
    "                    127.0.0.1:8003; --token T or $INFERD_ADMIN_TOKEN)\n"
    "  trim [--model M] [--device D] [--arena A]    free the arenas' retained buffers\n"
    "  set-cap --model M --device D --arena A --bytes 512MiB|unbounded    set a retention cap\n"
    "  reset-peak [--model M] [--device D] [--arena A]    reset peak live bytes\n"
    "  report --model M [--version V]    the model's partition report\n"
    "  (every client command: [--ca-cert FILE] for TLS, [--timeout 30s])\n";

namespace {

namespace adminpb = ::inferd::admin::v1;
using engine::DataType;

enum Flag : unsigned {
  kAddr = 1 << 0,
  kAdminAddr = 1 << 1,
  kToken = 1 << 2,
  kModel = 1 << 3,
  kVersion = 1 << 4,
  kDevice = 1 << 5,
  kArena = 1 << 6,
  kInput = 1 << 7,
  kRandom = 1 << 8,
  kOutputDir = 1 << 9,
  kBytes = 1 << 10,
};
constexpr unsigned kFilters = kAdminAddr | kToken | kModel | kDevice | kArena;

struct CommandSpec {
  const char* name;
  unsigned flags;
  unsigned required;
  const char* usage;  // after "usage: inferctl "
};

constexpr CommandSpec kCommands[] = {
    {"infer", kAddr | kModel | kVersion | kInput | kRandom | kOutputDir, kModel,
     "infer --model M [--input NAME=FILE.npy]... [--random] [--output-dir DIR] [--version V]"},
    {"models", kAddr, 0, "models"},
    {"load", kAddr | kToken | kModel, kModel, "load --model M"},
    {"unload", kAddr | kToken | kModel, kModel, "unload --model M"},
    {"stats", kFilters, 0, "stats [--model M] [--device D] [--arena execution|io]"},
    {"trim", kFilters, 0, "trim [--model M] [--device D] [--arena A]"},
    {"set-cap", kFilters | kBytes, kModel | kDevice | kArena | kBytes,
     "set-cap --model M --device D --arena A --bytes 512MiB|unbounded"},
    {"reset-peak", kFilters, 0, "reset-peak [--model M] [--device D] [--arena A]"},
    {"report", kAdminAddr | kToken | kModel | kVersion, kModel, "report --model M [--version V]"},
};

const CommandSpec* FindCommand(const std::string& name) {
  for (const CommandSpec& c : kCommands) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

// Each flag bit: its spelling in a CommandLineSpec (inferctl_flags.h) and its ABSL_FLAG name.
struct FlagName {
  unsigned bit;  // 0: every command's
  const char* spec_entry;
  const char* name;
};

constexpr FlagName kFlagNames[] = {
    {kModel, "model", "model"},    {kVersion, "version=model_version", "model_version"},
    {kDevice, "device", "device"}, {kArena, "arena", "arena"},
    {kBytes, "bytes", "bytes"},    {kInput, "input", "input"},
    {kRandom, "random", "random"}, {kOutputDir, "output-dir", "output_dir"},
    {kAddr, "addr", "addr"},       {kAdminAddr, "admin-addr", "admin_addr"},
    {kToken, "token", "token"},    {0, "ca-cert", "ca_cert"},
    {0, "timeout", "timeout"},
};

// The flags `command` takes, for ParseArgs and --help.
CommandLineSpec SpecOf(const CommandSpec& command) {
  CommandLineSpec spec;
  spec.usage = absl::StrCat("usage: inferctl ", command.usage, "\n");
  for (const FlagName& f : kFlagNames) {
    if (f.bit == 0 || (command.flags & f.bit) != 0) spec.flags.push_back(f.spec_entry);
  }
  return spec;
}

std::string CodeName(grpc::StatusCode code) {
  return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
}

// Columns padded to their widest cell; `align` has one 'l' or 'r' per column.
std::string Table(const std::vector<std::vector<std::string>>& rows, const std::string& align) {
  std::vector<size_t> width(align.size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size() && c < width.size(); ++c) {
      width[c] = std::max(width[c], row[c].size());
    }
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size() && c < width.size(); ++c) {
      const std::string pad(width[c] - row[c].size(), ' ');
      absl::StrAppend(&line, c == 0 ? "" : "  ", align[c] == 'r' ? pad + row[c] : row[c] + pad);
    }
    absl::StrAppend(&out, absl::StripTrailingAsciiWhitespace(line), "\n");
  }
  return out;
}

std::string Bytes(uint64_t b) { return partition::FormatBytes(b); }

std::string Shape(const google::protobuf::RepeatedField<int64_t>& dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(const std::string& address,
                                                           const ClientArgs& a) {
  std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials();
  if (!a.ca_cert.empty()) {
    std::ifstream in(a.ca_cert, std::ios::binary);
    if (!in) return absl::NotFoundError(absl::StrCat("--ca-cert: cannot read ", a.ca_cert));
    std::ostringstream pem;
    pem << in.rdbuf();
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = pem.str();
    creds = grpc::SslCredentials(ssl);
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  return grpc::CreateCustomChannel(address, creds, args);
}

class Client {
 public:
  Client(const ClientArgs& args, std::ostream& out, std::ostream& err)
      : a_(args), out_(out), err_(err) {}

  int Run(const std::string& command);

 private:
  void Prepare(grpc::ClientContext* ctx, bool admin) const {
    ctx->set_deadline(absl::ToChronoTime(absl::Now() + a_.timeout));
    if (admin && !a_.token.empty()) ctx->AddMetadata("authorization", "Bearer " + a_.token);
  }
  int Failed(const std::string& what, const grpc::Status& s) {
    err_ << "inferctl " << what << ": " << CodeName(s.error_code()) << ": " << s.error_message()
         << "\n";
    return 1;
  }
  int Failed(const std::string& what, const absl::Status& s) {
    err_ << "inferctl " << what << ": " << s.message() << "\n";
    return 1;
  }
  template <typename Request>
  Request Filters() const {
    Request r;
    r.set_model(a_.model);
    r.set_device(a_.device);
    r.set_arena(a_.arena);
    return r;
  }

  int Infer();
  // Infer's passes; each returns 0 or the exit code (the error printed).
  int InferMetadata(inference::ModelMetadataResponse* meta);
  int InferRequest(const inference::ModelMetadataResponse& meta, inference::ModelInferRequest* req);
  int InferCall(const inference::ModelInferRequest& req);
  int Models();
  int LoadOrUnload(bool load);
  int Stats();
  int Trim();
  int SetCap();
  int ResetPeak();
  int Report();

  const ClientArgs& a_;
  std::ostream& out_;
  std::ostream& err_;
  std::unique_ptr<inference::GRPCInferenceService::Stub> kserve_;
  std::unique_ptr<adminpb::Admin::Stub> admin_;
};

int Client::Run(const std::string& command) {
  const bool admin = (FindCommand(command)->flags & kAdminAddr) != 0;
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      MakeChannel(admin ? a_.admin_addr : a_.addr, a_);
  if (!channel.ok()) return Failed(command, channel.status());
  if (admin) {
    admin_ = adminpb::Admin::NewStub(*channel);
  } else {
    kserve_ = inference::GRPCInferenceService::NewStub(*channel);
  }
  if (command == "infer") return Infer();
  if (command == "models") return Models();
  if (command == "load") return LoadOrUnload(true);
  if (command == "unload") return LoadOrUnload(false);
  if (command == "stats") return Stats();
  if (command == "trim") return Trim();
  if (command == "set-cap") return SetCap();
  if (command == "reset-peak") return ResetPeak();
  return Report();
}

// Random bytes for `n` elements of `type`, like `inferctl run`; INVALID_ARGUMENT for types it
// cannot make.
absl::StatusOr<std::string> RandomBytes(DataType type, size_t n, std::mt19937& rng) {
  std::string bytes(n * engine::ElementSize(type), '\0');
  auto fill = [&](auto* p, auto make) {
    for (size_t i = 0; i < n; ++i) p[i] = make();
  };
  std::uniform_real_distribution<float> real(-1, 1);
  switch (type) {
    case DataType::kFloat32:
      fill(reinterpret_cast<float*>(bytes.data()), [&] { return real(rng); });
      break;
    case DataType::kFloat64:
      fill(reinterpret_cast<double*>(bytes.data()), [&] { return double{real(rng)}; });
      break;
    case DataType::kInt64:
      fill(reinterpret_cast<int64_t*>(bytes.data()), [&] { return int64_t(rng() % 8); });
      break;
    case DataType::kInt32:
      fill(reinterpret_cast<int32_t*>(bytes.data()), [&] { return int32_t(rng() % 8); });
      break;
    case DataType::kInt8:
    case DataType::kUint8:
    case DataType::kBool:
      fill(reinterpret_cast<uint8_t*>(bytes.data()),
           [&] { return uint8_t(rng() % (type == DataType::kBool ? 2 : 8)); });
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat(server::KServeDataTypeName(type), " inputs cannot be made random"));
  }
  return bytes;
}

int Client::Infer() {
  // pass 1: the model's signature.
  inference::ModelMetadataResponse meta;
  if (int rc = InferMetadata(&meta); rc != 0) return rc;
  // pass 2: the request, every input raw.
  inference::ModelInferRequest req;
  if (int rc = InferRequest(meta, &req); rc != 0) return rc;
  // pass 3: the call, the outputs.
  return InferCall(req);
}

int Client::InferMetadata(inference::ModelMetadataResponse* meta) {
  inference::ModelMetadataRequest meta_req;
  meta_req.set_name(a_.model);
  meta_req.set_version(a_.version);
  {
    grpc::ClientContext ctx;
    Prepare(&ctx, false);
    grpc::Status s = kserve_->ModelMetadata(&ctx, meta_req, meta);
    if (!s.ok()) return Failed("infer", s);
  }
  const std::map<std::string, std::string> files(a_.inputs.begin(), a_.inputs.end());
  for (const auto& [name, file] : files) {  // by name: the first unknown one is reported
    bool known = false;
    for (const auto& in : meta->inputs()) known |= in.name() == name;
    if (!known) {
      std::vector<std::string> names;
      for (const auto& in : meta->inputs()) names.push_back(in.name());
      err_ << "inferctl infer: model '" << a_.model << "' has no input '" << name
           << "'; its inputs: " << absl::StrJoin(names, ", ") << "\n";
      return 2;
    }
  }
  return 0;
}

int Client::InferRequest(const inference::ModelMetadataResponse& meta,
                         inference::ModelInferRequest* req) {
  const std::map<std::string, std::string> files(a_.inputs.begin(), a_.inputs.end());
  req->set_model_name(a_.model);
  req->set_model_version(a_.version);
  std::mt19937 rng(42);
  std::vector<std::string> missing;
  for (const auto& in : meta.inputs()) {
    auto* tensor = req->add_inputs();
    tensor->set_name(in.name());
    auto file = files.find(in.name());
    if (file != files.end()) {
      absl::StatusOr<NpyArray> npy = ReadNpy(file->second);
      absl::StatusOr<DataType> type =
          npy.ok() ? DataTypeOfNpy(npy->dtype) : absl::StatusOr<DataType>(npy.status());
      if (!type.ok()) {
        return Failed(
            "infer", absl::InvalidArgumentError(absl::StrCat(
                         "--input ", in.name(), "=", file->second, ": ", type.status().message())));
      }
      tensor->set_datatype(server::KServeDataTypeName(*type));
      for (int64_t d : npy->shape) tensor->add_shape(d);
      req->add_raw_input_contents(npy->data.data(), npy->data.size());
    } else if (a_.random) {
      const std::optional<DataType> type = server::DataTypeFromKServe(in.datatype());
      size_t n = 1;
      for (int64_t d : in.shape()) {
        tensor->add_shape(d < 0 ? 1 : d);
        n *= static_cast<size_t>(d < 0 ? 1 : d);
      }
      absl::StatusOr<std::string> bytes =
          type ? RandomBytes(*type, n, rng)
               : absl::InvalidArgumentError("unknown datatype " + in.datatype());
      if (!bytes.ok()) {
        return Failed("infer", absl::InvalidArgumentError(absl::StrCat(
                                   "input '", in.name(), "': ", bytes.status().message(),
                                   "; give it with --input")));
      }
      tensor->set_datatype(in.datatype());
      req->add_raw_input_contents(*std::move(bytes));
    } else {
      missing.push_back(in.name());
    }
  }
  if (!missing.empty()) {
    err_ << "inferctl infer: no data for input(s) " << absl::StrJoin(missing, ", ")
         << ": give --input NAME=FILE.npy or --random\n";
    return 2;
  }
  return 0;
}

int Client::InferCall(const inference::ModelInferRequest& req) {
  inference::ModelInferResponse resp;
  grpc::ClientContext ctx;
  Prepare(&ctx, false);
  const absl::Time start = absl::Now();
  grpc::Status s = kserve_->ModelInfer(&ctx, req, &resp);
  if (!s.ok()) return Failed("infer", s);
  out_ << "model " << resp.model_name() << " version " << resp.model_version() << ": "
       << resp.outputs_size() << " output(s) in "
       << absl::FormatDuration(absl::Trunc(absl::Now() - start, absl::Microseconds(1))) << "\n";
  std::vector<std::vector<std::string>> rows = {{"output", "datatype", "shape", "bytes", "file"}};
  for (int i = 0; i < resp.outputs_size(); ++i) {
    const auto& o = resp.outputs(i);
    const std::string& raw =
        i < resp.raw_output_contents_size() ? resp.raw_output_contents(i) : std::string();
    std::string written = "-";
    if (!a_.output_dir.empty()) {
      const std::optional<DataType> type = server::DataTypeFromKServe(o.datatype());
      const std::string dtype = type ? NpyDtype(*type) : "";
      if (dtype.empty()) {
        written = "(no .npy dtype for " + o.datatype() + ")";
      } else {
        std::string file = o.name();
        for (char& c : file) {
          if (!absl::ascii_isalnum(c) && c != '_' && c != '-' && c != '.') c = '_';
        }
        written = (std::filesystem::path(a_.output_dir) / (file + ".npy")).string();
        NpyArray npy{dtype, {o.shape().begin(), o.shape().end()}, {raw.begin(), raw.end()}};
        std::filesystem::create_directories(a_.output_dir);
        if (absl::Status w = WriteNpy(written, npy); !w.ok()) return Failed("infer", w);
      }
    }
    rows.push_back({o.name(), o.datatype(), Shape(o.shape()), absl::StrCat(raw.size()), written});
  }
  out_ << Table(rows, "lllrl");
  return 0;
}

int Client::Models() {
  inference::RepositoryIndexResponse resp;
  grpc::ClientContext ctx;
  Prepare(&ctx, false);
  grpc::Status s = kserve_->RepositoryIndex(&ctx, {}, &resp);
  if (!s.ok()) return Failed("models", s);
  std::vector<std::vector<std::string>> rows = {{"MODEL", "VERSION", "STATE", "REASON"}};
  for (const auto& m : resp.models())
    rows.push_back({m.name(), m.version(), m.state(), m.reason()});
  out_ << Table(rows, "llll");
  return 0;
}

int Client::LoadOrUnload(bool load) {
  grpc::ClientContext ctx;
  // Model control is an operator's action: inferd requires the admin token for it when one is
  // configured (server.model_control: explicit).
  Prepare(&ctx, true);
  grpc::Status s;
  if (load) {
    inference::RepositoryModelLoadRequest req;
    req.set_model_name(a_.model);
    inference::RepositoryModelLoadResponse resp;
    s = kserve_->RepositoryModelLoad(&ctx, req, &resp);
  } else {
    inference::RepositoryModelUnloadRequest req;
    req.set_model_name(a_.model);
    inference::RepositoryModelUnloadResponse resp;
    s = kserve_->RepositoryModelUnload(&ctx, req, &resp);
  }
  if (!s.ok()) return Failed(load ? "load" : "unload", s);
  out_ << (load ? "loaded " : "unloaded ") << a_.model << "\n";
  return 0;
}

int Client::Stats() {
  adminpb::GetMemoryStatsResponse resp;
  grpc::ClientContext ctx;
  Prepare(&ctx, true);
  grpc::Status s = admin_->GetMemoryStats(&ctx, Filters<adminpb::GetMemoryStatsRequest>(), &resp);
  if (!s.ok()) return Failed("stats", s);
  out_ << FormatMemoryStats(resp);
  return 0;
}

int Client::Trim() {
  adminpb::TrimResponse resp;
  grpc::ClientContext ctx;
  Prepare(&ctx, true);
  grpc::Status s = admin_->Trim(&ctx, Filters<adminpb::TrimRequest>(), &resp);
  if (!s.ok()) return Failed("trim", s);
  std::vector<std::vector<std::string>> rows = {
      {"MODEL", "DEVICE", "ARENA", "RELEASED", "BUFFERS"}};
  for (const auto& e : resp.arenas()) {
    rows.push_back({e.model(), e.device(), e.arena(), Bytes(e.released_bytes()),
                    absl::StrCat(e.released_buffers())});
  }
  out_ << Table(rows, "lllrr") << "released " << Bytes(resp.total_released_bytes()) << " in total";
  if (resp.process_resident_bytes_before() > 0) {
    out_ << "; server resident memory " << Bytes(resp.process_resident_bytes_before()) << " -> "
         << Bytes(resp.process_resident_bytes_after());
  }
  out_ << "\n";
  return 0;
}

int Client::SetCap() {
  adminpb::SetRetentionCapRequest req = Filters<adminpb::SetRetentionCapRequest>();
  req.set_unbounded(!a_.cap_bytes.has_value());
  req.set_bytes(a_.cap_bytes.value_or(0));
  adminpb::SetRetentionCapResponse resp;
  grpc::ClientContext ctx;
  Prepare(&ctx, true);
  grpc::Status s = admin_->SetRetentionCap(&ctx, req, &resp);
  if (!s.ok()) return Failed("set-cap", s);
  std::vector<std::vector<std::string>> rows = {
      {"MODEL", "DEVICE", "ARENA", "CAP", "EVICTED", "BUFFERS", "RETAINED"}};
  for (const auto& e : resp.applied()) {
    rows.push_back({e.model(), e.device(), e.arena(),
                    e.unbounded() ? "unbounded" : Bytes(e.retention_cap_bytes()),
                    Bytes(e.evicted_bytes()), absl::StrCat(e.evicted_buffers()),
                    Bytes(e.retained_bytes())});
  }
  out_ << Table(rows, "lllrrrr") << "evicted " << Bytes(resp.total_evicted_bytes())
       << " in total\n";
  return 0;
}

int Client::ResetPeak() {
  adminpb::ResetPeakResponse resp;
  grpc::ClientContext ctx;
  Prepare(&ctx, true);
  grpc::Status s = admin_->ResetPeak(&ctx, Filters<adminpb::ResetPeakRequest>(), &resp);
  if (!s.ok()) return Failed("reset-peak", s);
  std::vector<std::vector<std::string>> rows = {{"MODEL", "DEVICE", "ARENA", "PEAK WAS", "PEAK"}};
  for (const auto& e : resp.arenas()) {
    rows.push_back({e.model(), e.device(), e.arena(), Bytes(e.previous_peak_live_bytes()),
                    Bytes(e.peak_live_bytes())});
  }
  out_ << Table(rows, "lllrr");
  return 0;
}

int Client::Report() {
  adminpb::GetPartitionReportRequest req;
  req.set_model(a_.model);
  req.set_version(a_.version);
  adminpb::GetPartitionReportResponse resp;
  grpc::ClientContext ctx;
  Prepare(&ctx, true);
  grpc::Status s = admin_->GetPartitionReport(&ctx, req, &resp);
  if (!s.ok()) return Failed("report", s);
  out_ << "model " << resp.model() << " version " << resp.version() << "\n" << resp.text();
  return 0;
}

}  // namespace

std::string FormatMemoryStats(const adminpb::GetMemoryStatsResponse& stats) {
  if (stats.arenas_size() == 0) return "no arenas (no model is loaded)\n";
  std::vector<std::vector<std::string>> rows = {
      {"MODEL", "DEVICE", "ARENA", "LIVE", "RETAINED", "PEAK", "CAP", "ALLOCS", "REUSES",
       "SYS ALLOCS", "SYS FREES", "EVICTIONS", "TRIMS", "TRIMMED", "LEASES"}};
  uint64_t live = 0, retained = 0;
  for (const auto& e : stats.arenas()) {
    rows.push_back({e.model(), e.device(), e.arena(), Bytes(e.live_bytes()),
                    Bytes(e.retained_bytes()), Bytes(e.peak_live_bytes()),
                    e.unbounded() ? "unbounded" : Bytes(e.retention_cap_bytes()),
                    absl::StrCat(e.allocations()), absl::StrCat(e.reuses()),
                    absl::StrCat(e.system_allocations()), absl::StrCat(e.system_frees()),
                    absl::StrCat(e.evictions()), absl::StrCat(e.trims()), Bytes(e.trimmed_bytes()),
                    e.arena() == "io" ? absl::StrCat(e.outstanding_leases()) : "-"});
    live += e.live_bytes();
    retained += e.retained_bytes();
  }
  return absl::StrCat(Table(rows, "lllrrrrrrrrrrrr"), "total: live ", Bytes(live), ", retained ",
                      Bytes(retained), " in ", stats.arenas_size(), " arenas\n");
}

absl::StatusOr<std::optional<uint64_t>> ParseCapBytes(absl::string_view text) {
  if (text == "unbounded") return std::optional<uint64_t>();
  absl::StatusOr<uint64_t> bytes = ParseByteSize(text);
  if (!bytes.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--bytes '", text, "': ", bytes.status().message(), " (or 'unbounded')"));
  }
  return std::optional<uint64_t>(*bytes);
}

absl::StatusOr<ClientArgs> ParseClientArgs(const std::string& command,
                                           const std::vector<std::string>& args) {
  const CommandSpec* spec = FindCommand(command);
  if (spec == nullptr) return absl::InvalidArgumentError("unknown command '" + command + "'");
  absl::StatusOr<ParsedArgs> parsed = ParseArgs(args, SpecOf(*spec));
  if (!parsed.ok()) {
    absl::string_view message = parsed.status().message();
    if (absl::ConsumePrefix(&message, "unknown flag ")) {  // or another command's flag
      return absl::InvalidArgumentError(
          absl::StrCat("inferctl ", command, " does not take '", message, "'"));
    }
    return absl::InvalidArgumentError(absl::StrCat("inferctl ", command, ": ", message));
  }
  if (!parsed->positional.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("inferctl ", command, " does not take '", parsed->positional[0], "'"));
  }
  ClientArgs a;
  a.addr = absl::GetFlag(FLAGS_addr);
  a.admin_addr = absl::GetFlag(FLAGS_admin_addr);
  if (const char* env = std::getenv("INFERD_ADMIN_TOKEN")) a.token = env;
  if (parsed->given.count("token")) a.token = absl::GetFlag(FLAGS_token);
  a.ca_cert = absl::GetFlag(FLAGS_ca_cert);
  absl::StatusOr<absl::Duration> timeout = ParseDuration(absl::GetFlag(FLAGS_timeout));
  if (!timeout.ok() || *timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--timeout takes a duration such as 30s or 500ms");
  }
  a.timeout = *timeout;
  a.model = absl::GetFlag(FLAGS_model);
  a.version = absl::GetFlag(FLAGS_model_version);
  a.device = absl::GetFlag(FLAGS_device);
  a.arena = absl::GetFlag(FLAGS_arena);
  for (const std::string& in : absl::GetFlag(FLAGS_input).values) {
    std::vector<std::string> kv = absl::StrSplit(in, absl::MaxSplits('=', 1));
    if (kv.size() != 2 || kv[0].empty() || kv[1].empty()) {
      return absl::InvalidArgumentError("--input takes NAME=FILE.npy");
    }
    a.inputs.emplace_back(kv[0], kv[1]);
  }
  a.random = absl::GetFlag(FLAGS_random);
  a.output_dir = absl::GetFlag(FLAGS_output_dir);
  if (parsed->given.count("bytes")) {
    INFERD_ASSIGN_OR_RETURN(a.cap_bytes, ParseCapBytes(absl::GetFlag(FLAGS_bytes)));
    a.has_bytes = true;
  }
  std::vector<std::string> missing;
  for (const FlagName& f : kFlagNames) {
    if ((spec->required & f.bit) != 0 && !parsed->given.count(f.name)) {
      missing.push_back(absl::StrCat("--", f.spec_entry));
    }
  }
  if (!missing.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("inferctl ", command, " needs ", absl::StrJoin(missing, ", ")));
  }
  return a;
}

bool IsClientCommand(const std::string& command) { return FindCommand(command) != nullptr; }

int RunClientCommand(const std::string& command, const std::vector<std::string>& args,
                     std::ostream& out, std::ostream& err) {
  if (const CommandSpec* spec = FindCommand(command); spec != nullptr) {
    absl::StatusOr<ParsedArgs> parsed = ParseArgs(args, SpecOf(*spec));
    if (parsed.ok() && parsed->help) {
      out << FlagsHelp(SpecOf(*spec));
      return 0;
    }
  }
  absl::StatusOr<ClientArgs> a = ParseClientArgs(command, args);
  if (!a.ok()) {
    err << a.status().message() << "\nclient commands:\n" << kClientCommandsUsage;
    return 2;
  }
  return Client(*a, out, err).Run(command);
}

}  // namespace inferd::tools

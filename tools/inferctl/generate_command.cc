#include "tools/inferctl/generate_command.h"

#include <cstdio>
#include <iostream>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "kernels/build_kernels.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "tools/inferctl/inferctl_flags.h"
#include "tools/inferctl/plan_command.h"

namespace inferd::tools {
namespace {

constexpr char kUsage[] =
    "usage: inferctl generate DIR --prompt TEXT [--max-new-tokens N] [--temperature T]\n"
    "                         [--top-k K] [--top-p P] [--repetition-penalty R] [--seed S]\n"
    "                         [--stop TEXT]... [--max-length L] [--threads N]\n"
    "                         [--devices DEV[=BYTES],...] [--rules RULES] [--warmup N] [--json]\n"
    "Generates from a decoder model folder (model.onnx + tokenizer.json or tokenizer.model +\n"
    "config.json, or an onnxruntime-genai folder with genai_config.json): streams the text to\n"
    "stdout, then prints prefill and decode tokens/s, the KV cache and memory per device; --json\n"
    "prints one JSON object instead, as the last line. --warmup N first runs N throwaway\n"
    "sequences (the prompt and one token), so the figures are a warm process's.\n";

const CommandLineSpec& GenerateSpec() {
  static const CommandLineSpec* spec = new CommandLineSpec{
      kUsage,
      {"prompt", "max-new-tokens", "temperature", "top-k", "top-p", "repetition-penalty", "seed",
       "stop", "max-length", "threads", "devices", "rules", "no-kv-in-place", "warmup", "json"}};
  return *spec;
}

std::string Mib(uint64_t bytes) { return absl::StrFormat("%.2f MiB", bytes / 1048576.0); }

template <typename Writer>
void WriteIds(Writer& w, const char* key, absl::Span<const int32_t> ids) {
  w.Key(key);
  w.StartArray();
  for (int32_t id : ids) w.Int(id);
  w.EndArray();
}

}  // namespace

absl::StatusOr<LoadedGenerator> LoadGeneratorFromFlags(const std::string& dir,
                                                       const ParsedArgs& parsed) {
  LoadedGenerator g;
  g.registry = std::make_unique<engine::KernelRegistry>();
  INFERD_RETURN_IF_ERROR(kernels::RegisterBuildKernels(*g.registry));
  genai::GeneratorOptions options;
  options.session.intra_op_threads = absl::GetFlag(FLAGS_threads);
  options.session.device_runtimes = kernels::BuildDeviceRuntimes();
  if (parsed.given.count("devices")) {
    INFERD_ASSIGN_OR_RETURN(options.session.partition.devices,
                            ParseDeviceList(absl::GetFlag(FLAGS_devices)));
  }
  options.session.partition.name_rules = absl::GetFlag(FLAGS_rules);
  options.max_length = absl::GetFlag(FLAGS_max_length);
  if (options.max_length < 0) return absl::InvalidArgumentError("--max-length must be >= 0");
  options.kv_in_place = !absl::GetFlag(FLAGS_no_kv_in_place);
  absl::StatusOr<std::unique_ptr<genai::GenerativeModel>> model =
      genai::GenerativeModel::Load(dir, options, *g.registry);
  if (!model.ok()) {
    return absl::Status(model.status().code(),
                        absl::StrCat("cannot load '", dir, "': ", model.status().message()));
  }
  g.model = std::move(*model);
  return g;
}

absl::StatusOr<genai::GenerateParams> GenerateParamsFromFlags() {
  genai::GenerateParams p;
  p.max_new_tokens = absl::GetFlag(FLAGS_max_new_tokens);
  p.sampling.temperature = static_cast<float>(absl::GetFlag(FLAGS_temperature));
  p.sampling.top_k = absl::GetFlag(FLAGS_top_k);
  p.sampling.top_p = static_cast<float>(absl::GetFlag(FLAGS_top_p));
  p.sampling.repetition_penalty = static_cast<float>(absl::GetFlag(FLAGS_repetition_penalty));
  p.sampling.seed = absl::GetFlag(FLAGS_seed);
  p.stop_strings = absl::GetFlag(FLAGS_stop).values;
  INFERD_RETURN_IF_ERROR(genai::ValidateSamplingParams(p.sampling));
  if (p.max_new_tokens < 1) return absl::InvalidArgumentError("--max-new-tokens must be >= 1");
  return p;
}

std::string FiguresText(const genai::GenerativeModel& model, const genai::GenerateResult& r) {
  std::string out = absl::StrFormat(
      "prefill: %d tokens in %.2f ms (%.1f tok/s); decode: %d tokens, %.1f tok/s; stop: %s\n",
      r.prompt_tokens, r.prefill_ms,
      r.prefill_ms > 0 ? r.prompt_tokens / (r.prefill_ms / 1000.0) : 0.0, r.token_ids.size(),
      r.decode_tokens_per_second, r.stop_reason);
  absl::StrAppendFormat(&out,
                        "kv cache: %s per sequence (%d positions, %s), %d bytes copied per "
                        "token; system allocations after the first token: %d\n",
                        Mib(model.kv_bytes_per_sequence()), model.max_length(),
                        model.kv_in_place() ? absl::StrCat("in place, ", model.kv_form())
                                            : std::string("copied each step"),
                        r.kv_bytes_copied_per_token, r.system_allocations_after_first_token);
  for (const engine::DeviceArenas& d : model.session().devices()) {
    const memory::ArenaStats e = d.execution->Stats(), io = d.io->Stats();
    absl::StrAppendFormat(&out, "%s: execution live %s peak %s retained %s; io live %s peak %s\n",
                          d.device, Mib(e.live_bytes), Mib(e.peak_live_bytes),
                          Mib(e.retained_bytes), Mib(io.live_bytes), Mib(io.peak_live_bytes));
  }
  return out;
}

std::string DevicesJson(const genai::GenerativeModel& model) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartArray();
  for (const engine::DeviceArenas& d : model.session().devices()) {
    const memory::ArenaStats e = d.execution->Stats(), io = d.io->Stats();
    w.StartObject();
    w.Key("device");
    w.String(d.device.c_str());
    w.Key("execution_live_bytes");
    w.Uint64(e.live_bytes);
    w.Key("execution_peak_bytes");
    w.Uint64(e.peak_live_bytes);
    w.Key("execution_retained_bytes");
    w.Uint64(e.retained_bytes);
    w.Key("io_live_bytes");
    w.Uint64(io.live_bytes);
    w.Key("io_peak_bytes");
    w.Uint64(io.peak_live_bytes);
    w.EndObject();
  }
  w.EndArray();
  return buf.GetString();
}

int GenerateCommand(const std::vector<std::string>& args) {
  absl::StatusOr<ParsedArgs> parsed = ParseArgs(args, GenerateSpec());
  if (!parsed.ok()) {
    std::cerr << "inferctl generate: " << parsed.status().message() << "\n" << kUsage;
    return 1;
  }
  if (parsed->help) {
    std::cout << FlagsHelp(GenerateSpec());
    return 0;
  }
  if (parsed->positional.size() != 1 || !parsed->given.count("prompt")) {
    std::cerr << "inferctl generate: give one model folder and --prompt\n" << kUsage;
    return 1;
  }
  const bool json = absl::GetFlag(FLAGS_json);
  absl::StatusOr<genai::GenerateParams> params = GenerateParamsFromFlags();
  if (!params.ok()) {
    std::cerr << "inferctl generate: " << params.status().message() << "\n";
    return 1;
  }
  absl::StatusOr<LoadedGenerator> g = LoadGeneratorFromFlags(parsed->positional[0], *parsed);
  if (!g.ok()) {
    std::cerr << "inferctl generate: " << g.status().message() << "\n";
    return 1;
  }
  genai::GenerativeModel& model = *g->model;
  if (parsed->given.count("devices") || parsed->given.count("rules")) {
    (json ? std::cerr : std::cout) << model.session().partition_report().ToString() << std::flush;
  }
  absl::StatusOr<std::vector<int32_t>> prompt =
      model.tokenizer().Encode(absl::GetFlag(FLAGS_prompt), /*add_special_tokens=*/true);
  // --warmup N (only when given): N throwaway sequences feed the prompt and one token first, so
  // the figures are a warm process's (what a benchmark against a warm peer compares).
  for (int i = 0; prompt.ok() && parsed->given.count("warmup") && i < absl::GetFlag(FLAGS_warmup);
       ++i) {
    absl::StatusOr<std::unique_ptr<genai::Sequence>> warm = genai::Sequence::Start(model);
    absl::Status fed = warm.ok() ? (*warm)->Feed(*prompt) : warm.status();
    if (fed.ok() && (*warm)->length() < (*warm)->capacity()) {
      const int32_t one[1] = {prompt->back()};
      fed = (*warm)->Feed(one);
    }
    if (!fed.ok()) {
      std::cerr << "inferctl generate: warm-up: " << fed.message() << "\n";
      return 1;
    }
  }
  absl::StatusOr<std::unique_ptr<genai::Sequence>> seq =
      prompt.ok() ? genai::Sequence::Start(model)
                  : absl::StatusOr<std::unique_ptr<genai::Sequence>>(prompt.status());
  absl::StatusOr<genai::GenerateResult> r =
      seq.ok() ? genai::Generate(**seq, *prompt, *params,
                                 [&](int32_t, absl::string_view text) {
                                   if (!json) std::cout << text << std::flush;
                                   return true;
                                 })
               : absl::StatusOr<genai::GenerateResult>(seq.status());
  if (!r.ok()) {
    std::cerr << "inferctl generate: " << r.status().message() << "\n";
    return 1;
  }
  if (!json) {
    std::cout << "\n" << FiguresText(model, *r);
    return 0;
  }
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  WriteIds(w, "prompt_token_ids", *prompt);
  WriteIds(w, "token_ids", r->token_ids);
  w.Key("text");
  w.String(r->text.c_str(), static_cast<rapidjson::SizeType>(r->text.size()));
  w.Key("stop_reason");
  w.String(r->stop_reason.c_str());
  w.Key("tokens_per_second");
  w.Double(r->decode_tokens_per_second);
  w.Key("prefill_ms");
  w.Double(r->prefill_ms);
  w.Key("decode_ms");
  w.Double(r->decode_ms);
  w.Key("kv_cache_bytes_copied_per_token");
  w.Uint64(r->kv_bytes_copied_per_token);
  w.Key("kv_cache_bytes");
  w.Uint64((*seq)->kv_bytes());
  w.Key("kv_cache_in_place");
  w.Bool(model.kv_in_place());
  w.Key("kv_cache_form");
  w.String(model.kv_form().c_str());
  w.Key("max_length");
  w.Int(model.max_length());
  w.Key("system_allocations_after_first_token");
  w.Uint64(r->system_allocations_after_first_token);
  w.Key("devices");
  const std::string devices = DevicesJson(model);
  w.RawValue(devices.c_str(), devices.size(), rapidjson::kArrayType);
  w.EndObject();
  std::cout << buf.GetString() << std::endl;
  return 0;
}

}  // namespace inferd::tools

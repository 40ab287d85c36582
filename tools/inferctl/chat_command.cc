#include "tools/inferctl/chat_command.h"

#include <csignal>
#include <iostream>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "tools/inferctl/generate_command.h"
#include "tools/inferctl/inferctl_flags.h"

namespace inferd::tools {
namespace {

constexpr char kUsage[] =
    "usage: inferctl chat DIR [--max-new-tokens N] [--temperature T] [--top-k K] [--top-p P]\n"
    "                     [--repetition-penalty R] [--seed S] [--stop TEXT]... [--max-length L]\n"
    "                     [--threads N] [--devices DEV[=BYTES],...] [--rules RULES]\n"
    "Chats with a decoder model folder: one turn per line; Ctrl-C stops the answer; an empty\n"
    "line or end of input quits. The KV cache carries the conversation (--max-length tokens).\n";

const CommandLineSpec& ChatSpec() {
  static const CommandLineSpec* spec = new CommandLineSpec{
      kUsage,
      {"max-new-tokens", "temperature", "top-k", "top-p", "repetition-penalty", "seed", "stop",
       "max-length", "threads", "devices", "rules", "no-kv-in-place"}};
  return *spec;
}

volatile std::sig_atomic_t g_interrupted = 0;
void OnInterrupt(int) { g_interrupted = 1; }

}  // namespace

std::string ChatTurnText(genai::ChatTemplate t, const std::string& user, bool first,
                         bool previous_answer_closed) {
  switch (t) {
    case genai::ChatTemplate::kChatMl:
      return absl::StrCat(first || previous_answer_closed ? "" : "<|im_end|>", first ? "" : "\n",
                          "<|im_start|>user\n", user, "<|im_end|>\n<|im_start|>assistant\n");
    case genai::ChatTemplate::kLlama3:
      return absl::StrCat(first ? "<|begin_of_text|>" : "",
                          first || previous_answer_closed ? "" : "<|eot_id|>",
                          "<|start_header_id|>user<|end_header_id|>\n\n", user,
                          "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
    case genai::ChatTemplate::kLlama2:
      return absl::StrCat(first || previous_answer_closed ? "" : " </s>", "<s>[INST] ", user,
                          " [/INST]");
    case genai::ChatTemplate::kPlain:
      break;
  }
  return absl::StrCat(first ? "" : "\n", user, "\n");
}

int ChatCommand(const std::vector<std::string>& args) {
  absl::StatusOr<ParsedArgs> parsed = ParseArgs(args, ChatSpec());
  if (!parsed.ok()) {
    std::cerr << "inferctl chat: " << parsed.status().message() << "\n" << kUsage;
    return 1;
  }
  if (parsed->help) {
    std::cout << FlagsHelp(ChatSpec());
    return 0;
  }
  if (parsed->positional.size() != 1) {
    std::cerr << "inferctl chat: give one model folder\n" << kUsage;
    return 1;
  }
  absl::StatusOr<genai::GenerateParams> params = GenerateParamsFromFlags();
  absl::StatusOr<LoadedGenerator> g = params.ok()
                                          ? LoadGeneratorFromFlags(parsed->positional[0], *parsed)
                                          : absl::StatusOr<LoadedGenerator>(params.status());
  if (!g.ok()) {
    std::cerr << "inferctl chat: " << g.status().message() << "\n";
    return 1;
  }
  genai::GenerativeModel& model = *g->model;
  if (parsed->given.count("devices") || parsed->given.count("rules")) {
    std::cerr << model.session().partition_report().ToString();
  }
  absl::StatusOr<std::unique_ptr<genai::Sequence>> seq = genai::Sequence::Start(model);
  if (!seq.ok()) {
    std::cerr << "inferctl chat: " << seq.status().message() << "\n";
    return 1;
  }
  std::signal(SIGINT, OnInterrupt);
  params->cancelled = [] { return g_interrupted != 0; };
  const genai::ChatTemplate tmpl = model.config().chat_template;
  std::cerr << "chat template: " << genai::ChatTemplateName(tmpl) << "; KV cache for "
            << model.max_length()
            << " tokens. Empty line or Ctrl-D quits; Ctrl-C stops an answer.\n";
  std::optional<int32_t> unfed;  // the last token of the previous answer, not yet in the cache
  bool closed = false;
  for (bool first = true;; first = false) {
    std::cout << "> " << std::flush;
    std::string line;
    if (!std::getline(std::cin, line) || line.empty()) break;
    g_interrupted = 0;
    absl::StatusOr<std::vector<int32_t>> turn = model.tokenizer().Encode(
        ChatTurnText(tmpl, line, first, closed), /*add_special_tokens=*/false);
    if (!turn.ok()) {
      std::cerr << "inferctl chat: " << turn.status().message() << "\n";
      continue;
    }
    if (unfed) turn->insert(turn->begin(), *unfed);
    absl::StatusOr<genai::GenerateResult> r =
        genai::Generate(**seq, *turn, *params, [](int32_t, absl::string_view text) {
          std::cout << text << std::flush;
          return true;
        });
    std::cout << "\n";
    if (!r.ok()) {
      std::cerr << "inferctl chat: " << r.status().message() << "\n";
      if ((*seq)->length() + 2 >= (*seq)->capacity()) break;
      continue;
    }
    unfed = r->unfed_token;
    closed = r->stop_reason == "eos";
    std::cerr << FiguresText(model, *r);
  }
  return 0;
}

}  // namespace inferd::tools

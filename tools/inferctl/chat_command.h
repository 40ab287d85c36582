// `inferctl chat DIR`: the interactive form of generate, llama.cpp style. One turn per line on
// stdin; the answer streams to stdout. The KV cache carries the conversation: each turn feeds
// only its new tokens (the chat template's user turn and the assistant's opening). The template
// is the model's (tokenizer_config.json) when it is ChatML, Llama 3 or Llama 2, else plain text.
// Ctrl-C stops the current answer, not the program; an empty line or end of input ends it.
// Prints the turn's figures (tokens/s, KV cache) to stderr after each answer.
#ifndef INFERD_TOOLS_INFERCTL_CHAT_COMMAND_H_
#define INFERD_TOOLS_INFERCTL_CHAT_COMMAND_H_

#include <istream>
#include <ostream>
#include <string>
#include <vector>

#include "genai/model_config.h"

namespace inferd::tools {

// argv after "chat"; returns the process exit code.
int ChatCommand(const std::vector<std::string>& args);

// The text one user turn adds to the conversation under `t`: the closing of the previous
// answer when there is one, the user's turn, the assistant's opening. `first`: the first turn.
std::string ChatTurnText(genai::ChatTemplate t, const std::string& user, bool first,
                         bool previous_answer_closed);

}  // namespace inferd::tools

#endif  // INFERD_TOOLS_INFERCTL_CHAT_COMMAND_H_

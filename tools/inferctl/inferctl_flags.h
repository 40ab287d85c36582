// Every flag of inferctl, defined once (inferctl_flags.cc) because several subcommands share
// some (--input, --random and --output-dir: run and infer; --no-fusions: run and plan). Each
// subcommand lists the flags it takes in its CommandLineSpec (base/flags.h), so --help shows
// those and any other flag is refused; each parse starts from the defaults.
#ifndef INFERD_TOOLS_INFERCTL_INFERCTL_FLAGS_H_
#define INFERD_TOOLS_INFERCTL_INFERCTL_FLAGS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/status/statusor.h"
#include "base/flags.h"

// Shared.
ABSL_DECLARE_FLAG(inferd::RepeatedFlag, input);
ABSL_DECLARE_FLAG(bool, random);
ABSL_DECLARE_FLAG(std::string, output_dir);
ABSL_DECLARE_FLAG(bool, no_fusions);
ABSL_DECLARE_FLAG(bool, convert_half_weights);
// run.
ABSL_DECLARE_FLAG(int, runs);
ABSL_DECLARE_FLAG(int, warmup);
ABSL_DECLARE_FLAG(int, threads);
ABSL_DECLARE_FLAG(bool, pre_allocate);
ABSL_DECLARE_FLAG(inferd::RepeatedFlag, fixed_shape);
ABSL_DECLARE_FLAG(bool, profile);
// plan.
ABSL_DECLARE_FLAG(std::string, devices);
ABSL_DECLARE_FLAG(std::string, rules);
ABSL_DECLARE_FLAG(std::string, annotation_rules);
ABSL_DECLARE_FLAG(inferd::RepeatedFlag, input_shape);
ABSL_DECLARE_FLAG(std::string, fallback);
ABSL_DECLARE_FLAG(bool, fallback_on_missing_device);
ABSL_DECLARE_FLAG(bool, nodes);
// ops.
ABSL_DECLARE_FLAG(bool, json);
// Client commands. --version is spelled so by the specs ("version=model_version"): Abseil's
// usage library defines a flag named version.
ABSL_DECLARE_FLAG(std::string, addr);
ABSL_DECLARE_FLAG(std::string, admin_addr);
ABSL_DECLARE_FLAG(std::string, token);
ABSL_DECLARE_FLAG(std::string, ca_cert);
ABSL_DECLARE_FLAG(std::string, timeout);
ABSL_DECLARE_FLAG(std::string, model);
ABSL_DECLARE_FLAG(std::string, model_version);
ABSL_DECLARE_FLAG(std::string, device);
ABSL_DECLARE_FLAG(std::string, arena);
ABSL_DECLARE_FLAG(std::string, bytes);
// generate and chat (also --threads, --devices, --rules, --json).
ABSL_DECLARE_FLAG(std::string, prompt);
ABSL_DECLARE_FLAG(int, max_new_tokens);
ABSL_DECLARE_FLAG(double, temperature);
ABSL_DECLARE_FLAG(int, top_k);
ABSL_DECLARE_FLAG(double, top_p);
ABSL_DECLARE_FLAG(double, repetition_penalty);
ABSL_DECLARE_FLAG(uint64_t, seed);
ABSL_DECLARE_FLAG(int, max_length);
ABSL_DECLARE_FLAG(inferd::RepeatedFlag, stop);
ABSL_DECLARE_FLAG(bool, no_kv_in_place);

namespace inferd::tools {

// The values of a repeated NAME=2x3x4 flag (--fixed-shape, --input-shape) as shapes by name;
// INVALID_ARGUMENT naming `flag` and the bad value.
absl::StatusOr<std::map<std::string, std::vector<int64_t>>> ParseNamedShapes(
    const std::vector<std::string>& values, const std::string& flag);

}  // namespace inferd::tools

#endif  // INFERD_TOOLS_INFERCTL_INFERCTL_FLAGS_H_

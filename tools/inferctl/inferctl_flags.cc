#include "tools/inferctl/inferctl_flags.h"

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

using inferd::RepeatedFlag;

ABSL_FLAG(RepeatedFlag, input, {}, "NAME=FILE.npy: that input's data");
ABSL_FLAG(bool, random, false,
          "random data for the inputs without --input (floats in [-1, 1), integers in [0, 8))");
ABSL_FLAG(std::string, output_dir, "", "write each output to DIR/<output>.npy");
ABSL_FLAG(bool, no_fusions, false, "do not apply the graph fusions");
ABSL_FLAG(bool, convert_half_weights, false,
          "give float16 / bfloat16 MatMul and Gemm weights a float32 copy instead of reading "
          "them as they are");

ABSL_FLAG(int, runs, 10, "measured runs");
ABSL_FLAG(int, warmup, 1, "runs before the measured ones");
ABSL_FLAG(int, threads, 1, "intra-op threads");
ABSL_FLAG(bool, pre_allocate, false, "allocate the static plan's blocks at load");
ABSL_FLAG(RepeatedFlag, fixed_shape, {}, "NAME=1x128: the shape of a dynamic input");
ABSL_FLAG(bool, profile, false, "print the time per operator and the slowest steps");

ABSL_FLAG(std::string, devices, "", "devices and budgets, e.g. cuda:0=6GiB,cpu (default: cpu)");
ABSL_FLAG(std::string, rules, "",
          "name rules, e.g. \"cuda:0(layers.[0-15]/); cpu(layers.[16-31]/)\"");
ABSL_FLAG(std::string, annotation_rules, "", "annotation rules (layer_ann metadata)");
ABSL_FLAG(RepeatedFlag, input_shape, {}, "NAME=1x128: the largest shape of a dynamic input");
ABSL_FLAG(std::string, fallback, "cpu:0", "the device of nodes no rule or budget places");
ABSL_FLAG(bool, fallback_on_missing_device, false,
          "place a rule's nodes on the fallback when its device is absent");
ABSL_FLAG(bool, nodes, false, "also print one line per node");

ABSL_FLAG(bool, json, false, "print JSON instead of a table");
ABSL_FLAG(std::string, addr, "127.0.0.1:8001", "inferd's KServe v2 gRPC address (HOST:PORT)");
ABSL_FLAG(std::string, admin_addr, "127.0.0.1:8003", "inferd's admin API address (HOST:PORT)");
ABSL_FLAG(std::string, token, "", "the admin API's bearer token; without it, $INFERD_ADMIN_TOKEN");
ABSL_FLAG(std::string, ca_cert, "", "use TLS, trusting the CA certificate in FILE");
ABSL_FLAG(std::string, timeout, "30s", "the call's deadline");
ABSL_FLAG(std::string, model, "", "the model");
ABSL_FLAG(std::string, model_version, "", "the model version (default: the server's choice)");
ABSL_FLAG(std::string, device, "", "only this device's arenas, e.g. cpu:0");
ABSL_FLAG(std::string, arena, "", "only this arena: execution or io");
ABSL_FLAG(std::string, bytes, "", "the retention cap: 512MiB, 1GB, 4096 or unbounded");
// generate and chat.
ABSL_FLAG(std::string, prompt, "", "the prompt text");
ABSL_FLAG(int, max_new_tokens, 128, "the most tokens to generate");
ABSL_FLAG(double, temperature, 0.0, "sampling temperature; 0 is greedy");
ABSL_FLAG(int, top_k, 0, "sample among the K most likely tokens (0: all)");
ABSL_FLAG(double, top_p, 1.0, "sample among the most likely tokens of this total probability");
ABSL_FLAG(double, repetition_penalty, 1.0, "divide the logits of tokens already seen by this");
ABSL_FLAG(uint64_t, seed, 0, "the sampler's random seed");
ABSL_FLAG(int, max_length, 0,
          "positions of each sequence's KV cache (0: the model's maximum, at most 2048)");
ABSL_FLAG(RepeatedFlag, stop, {}, "stop when the answer contains this text (repeatable)");
ABSL_FLAG(bool, no_kv_in_place, false,
          "run the export as it is: each step copies the whole past (for comparison)");

namespace inferd::tools {

absl::StatusOr<std::map<std::string, std::vector<int64_t>>> ParseNamedShapes(
    const std::vector<std::string>& values, const std::string& flag) {
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const std::string& v : values) {
    std::vector<std::string> kv = absl::StrSplit(v, absl::MaxSplits('=', 1));
    if (kv.size() != 2 || kv[0].empty()) {
      return absl::InvalidArgumentError(absl::StrCat(flag, " takes NAME=1x128, got '", v, "'"));
    }
    std::vector<int64_t>& dims = shapes[kv[0]];
    dims.clear();
    for (absl::string_view d : absl::StrSplit(kv[1], 'x')) {
      int64_t dim = 0;
      if (!absl::SimpleAtoi(d, &dim) || dim < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(flag, ": bad dim '", d, "' in '", v, "' (expected NAME=1x128)"));
      }
      dims.push_back(dim);
    }
  }
  return shapes;
}

}  // namespace inferd::tools

#include "tools/inferctl/check_command.h"

#include <map>
#include <memory>

#include "absl/flags/flag.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/domain.h"
#include "engine/session.h"
#include "kernels/build_kernels.h"
#include "tools/inferctl/inferctl_flags.h"
#include "tools/inferctl/plan_command.h"

namespace inferd::tools {
namespace {

constexpr char kUsage[] =
    "usage: inferctl check MODEL [--fixed-shape NAME=1x128]... [--devices DEV[=BYTES],...]\n"
    "                            [--rules RULES] [--no-fusions]\n"
    "Says whether MODEL can run in inferd: its operators, devices and memory plan, or every\n"
    "reason it cannot (operator, opset, element type), each with its nodes. Runs nothing.\n";

const CommandLineSpec& CheckSpec() {
  static const CommandLineSpec* spec =
      new CommandLineSpec{kUsage, {"fixed-shape", "devices", "rules", "no-fusions"}};
  return *spec;
}

absl::StatusOr<engine::SessionOptions> ReadOptions(const ParsedArgs& parsed) {
  engine::SessionOptions opts;
  opts.device_runtimes = kernels::BuildDeviceRuntimes();
  auto shapes = ParseNamedShapes(absl::GetFlag(FLAGS_fixed_shape).values, "--fixed-shape");
  if (!shapes.ok()) return shapes.status();
  opts.fixed_input_shapes = *std::move(shapes);
  if (parsed.given.count("devices")) {
    auto devices = ParseDeviceList(absl::GetFlag(FLAGS_devices));
    if (!devices.ok()) return devices.status();
    opts.partition.devices = *std::move(devices);
  }
  opts.partition.name_rules = absl::GetFlag(FLAGS_rules);
  opts.enable_fusions = !absl::GetFlag(FLAGS_no_fusions);
  return opts;
}

// "Conv x12, Relu x12, ..." in operator order.
std::string OperatorCounts(const engine::Graph& graph) {
  std::map<std::string, int> counts;
  for (const engine::Node& n : graph.nodes) {
    counts[n.domain.empty() ? n.op_type : absl::StrCat(n.domain, "::", n.op_type)]++;
  }
  std::vector<std::string> parts;
  for (const auto& [op, k] : counts) parts.push_back(absl::StrCat(op, " x", k));
  return absl::StrJoin(parts, ", ");
}

void PrintModel(const engine::Model& m, std::ostream& out) {
  std::vector<std::string> opsets;
  for (const auto& [domain, version] : m.opsets()) {
    opsets.push_back(absl::StrCat(domain.empty() ? "ai.onnx" : domain, " ", version));
  }
  out << "model: " << m.path() << " (IR " << m.ir_version() << "; opsets "
      << absl::StrJoin(opsets, ", ") << "; producer '" << m.producer_name() << "')\n"
      << "nodes: " << m.graph().nodes.size() << ": " << OperatorCounts(m.graph()) << "\n";
}

void PrintSession(const engine::Session& s, std::ostream& out) {
  out << "can run: yes\n";
  if (s.fused_nodes() > 0) {
    out << "after fusions: " << s.graph().nodes.size() << " nodes (" << s.fused_nodes()
        << " fused): " << OperatorCounts(s.graph()) << "\n";
  }
  // Which path the model's float16 / bfloat16 compute took (docs/half-precision.md).
  const engine::WideningReport& half = s.half_precision();
  if (half.any_half()) {
    out << "half precision: "
        << (half.widened_nodes > 0 ? "widening path (float32 compute): " : "native: ")
        << half.Summary() << "\n";
  }
  const engine::ExecutionPlan& plan = s.plan();
  for (const engine::DevicePlan& d : plan.devices()) {
    out << "device " << d.name << ": " << d.nodes << " nodes";
    if (plan.is_static()) {
      out << "; static plan: " << d.block_bytes << " bytes per run for intermediates and "
          << "workspaces, " << d.output_bytes << " bytes of outputs";
    }
    out << "\n";
  }
  if (!plan.is_static()) {
    out << "memory plan: dynamic (" << plan.not_fully_static_reason()
        << "); --fixed-shape makes it static\n";
  }
  const engine::SessionStats stats = s.stats();
  if (stats.kernel_persistent_bytes > 0) {
    out << "kernels' own memory (prepacked weights): " << stats.kernel_persistent_bytes
        << " bytes\n";
  }
}

}  // namespace

int CheckCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<ParsedArgs> parsed = ParseArgs(args, CheckSpec());
  if (!parsed.ok()) {
    err << "inferctl check: " << parsed.status().message() << "\n" << kUsage;
    return 2;
  }
  if (parsed->help) {
    out << FlagsHelp(CheckSpec());
    return 0;
  }
  if (parsed->positional.size() != 1) {
    err << "inferctl check: give exactly one MODEL\n" << kUsage;
    return 2;
  }
  absl::StatusOr<engine::SessionOptions> opts = ReadOptions(*parsed);
  if (!opts.ok()) {
    err << "inferctl check: " << opts.status().message() << "\n";
    return 2;
  }
  engine::KernelRegistry registry;
  if (absl::Status st = kernels::RegisterBuildKernels(registry); !st.ok()) {
    err << "inferctl check: " << st << "\n";
    return 1;
  }
  engine::ModelLoadOptions load;
  load.fixed_input_shapes = opts->fixed_input_shapes;
  absl::StatusOr<std::shared_ptr<const engine::Model>> model =
      engine::Model::Load(parsed->positional[0], load);
  if (!model.ok()) {
    out << "model: " << parsed->positional[0]
        << "\ncan run: no: it does not load: " << model.status().message() << "\n";
    return 1;
  }
  PrintModel(**model, out);
  absl::StatusOr<std::unique_ptr<engine::Session>> session =
      engine::Session::Create(*model, *opts, registry);
  if (!session.ok()) {
    out << "can run: no: " << session.status().message() << "\n";
    return 1;
  }
  PrintSession(**session, out);
  return 0;
}

}  // namespace inferd::tools

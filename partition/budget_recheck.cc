#include "partition/budget_recheck.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/graph.h"

namespace inferd::partition {
namespace {

constexpr size_t kMaxGrownListed = 5;

// Report node index of each declared node (-1: none), by name, then by the name it derives from.
std::vector<int> MatchOrigins(const PlanReport& report,
                              absl::Span<const DeclaredWorkspace> declared) {
  std::unordered_map<std::string, int> by_name;
  for (size_t i = 0; i < report.nodes.size(); ++i) {
    by_name.emplace(report.nodes[i].name, static_cast<int>(i));
  }
  std::vector<int> origin(declared.size(), -1);
  std::vector<bool> used(report.nodes.size(), false);
  // pass 1: the same name.
  for (size_t k = 0; k < declared.size(); ++k) {
    auto it = by_name.find(declared[k].node);
    if (it == by_name.end() || used[it->second]) continue;
    origin[k] = it->second;
    used[it->second] = true;
  }
  // pass 2: the node the name derives from, when no other node took it.
  for (size_t k = 0; k < declared.size(); ++k) {
    if (origin[k] >= 0) continue;
    const absl::string_view original = engine::OriginalNodeName(declared[k].node);
    if (original.empty()) continue;
    auto it = by_name.find(std::string(original));
    if (it == by_name.end() || used[it->second]) continue;
    origin[k] = it->second;
    used[it->second] = true;
  }
  return origin;
}

std::string OverBudgetWarning(const DeviceRecheck& d,
                              std::vector<std::pair<uint64_t, std::string>> grown) {
  std::stable_sort(grown.begin(), grown.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> names;
  for (size_t k = 0; k < grown.size() && k < kMaxGrownListed; ++k) {
    names.push_back(absl::StrCat("'", grown[k].second, "' (+", FormatBytes(grown[k].first), ")"));
  }
  if (grown.size() > kMaxGrownListed) {
    names.push_back(absl::StrCat("and ", grown.size() - kMaxGrownListed, " more"));
  }
  return absl::StrCat(d.device, ": with its kernels made, the device needs ", FormatBytes(d.after),
                      " (", d.after, " bytes), over its budget of ", FormatBytes(*d.budget_bytes),
                      " by ", FormatBytes(d.after - *d.budget_bytes), " (", FormatBytes(d.before),
                      " at partitioning); workspaces that grew: ",
                      names.empty() ? "none" : absl::StrJoin(names, ", "),
                      ". Runs may run out of memory on this device.");
}

}  // namespace

RecheckResult RecheckBudgets(const PlanReport& report,
                             absl::Span<const DeclaredWorkspace> declared) {
  RecheckResult result;
  const std::vector<int> origin = MatchOrigins(report, declared);
  for (const DeviceReport& d : report.devices) {
    DeviceRecheck r{d.device, d.budget_bytes, d.accounted.total(), 0};
    int64_t total = static_cast<int64_t>(r.before);
    std::vector<std::pair<uint64_t, std::string>> grown;  // (growth, node)
    for (size_t k = 0; k < declared.size(); ++k) {
      if (declared[k].device != d.device) continue;
      const uint64_t counted = origin[k] < 0 ? 0 : report.nodes[origin[k]].cost.cost.workspace;
      total += static_cast<int64_t>(declared[k].bytes) - static_cast<int64_t>(counted);
      if (declared[k].bytes > counted) {
        grown.emplace_back(declared[k].bytes - counted, declared[k].node);
      }
    }
    // The engine's own figure where it planned the device; else the counted workspaces replaced.
    r.after =
        d.measured_bytes ? *d.measured_bytes : static_cast<uint64_t>(std::max<int64_t>(total, 0));
    if (r.budget_bytes && r.after > *r.budget_bytes) {
      result.warnings.push_back(OverBudgetWarning(r, std::move(grown)));
    }
    result.devices.push_back(std::move(r));
  }
  return result;
}

}  // namespace inferd::partition

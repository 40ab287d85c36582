// The `models:` section of inferd's config and a model directory's config.yaml (config.h's
// ParseModelConfig, MergeModelConfig): each model's keys, shapes, partition and retention caps,
// with file:line errors (yaml_reader.h).
#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/duration.h"
#include "base/status_macros.h"
#include "server/config.h"
#include "server/model_config_reader.h"
#include "server/yaml_reader.h"
#include "yaml-cpp/yaml.h"

namespace inferd::server {
namespace config_internal {
namespace {

constexpr absl::string_view kModelKeys[] = {"name",
                                            "path",
                                            "version",
                                            "threads",
                                            "max_concurrent_runs",
                                            "queue_length",
                                            "when_busy",
                                            "pre_allocate",
                                            "fixed_input_shapes",
                                            "max_input_shapes",
                                            "partition",
                                            "retention_caps",
                                            "enable_fusions",
                                            "max_batch_size",
                                            "dynamic_batching",
                                            "generation"};
constexpr absl::string_view kGenerationKeys[] = {"max_length", "max_sequences", "kv_cache_budget",
                                                 "default_max_tokens"};
constexpr absl::string_view kBatchingKeys[] = {"preferred_batch_sizes",  "max_queue_delay",
                                               "preserve_ordering",      "priority_levels",
                                               "default_priority_level", "default_queue_timeout",
                                               "default_queue_policy",   "priority_queue_policy"};
constexpr absl::string_view kQueuePolicyKeys[] = {"timeout", "timeout_action",
                                                  "allow_timeout_override", "max_queue_size"};
constexpr absl::string_view kPartitionKeys[] = {"devices", "name_rules", "annotation_rules",
                                                "fallback_device", "fallback_on_missing_device"};
constexpr absl::string_view kArenaKeys[] = {"execution", "io"};

// Where a model's settings come from, which decides a few keys.
enum class ModelSource { kListEntry, kMapEntry, kModelDir };

bool IsModelName(absl::string_view s) { return ValidateModelName(s).ok(); }

// A count in [min, max]; the error names the bound.
absl::StatusOr<int> ReadBoundedCount(const Reader& r, const Field& f, int min, int max) {
  INFERD_ASSIGN_OR_RETURN(int v, ReadCount(r, f, min));
  if (v > max) return r.Error(f.line, f.path, absl::StrCat("at most ", max, ", got ", v));
  return v;
}

// The threads a model starts (its workers, each with an intra-op pool) are bounded as a whole:
// "" when within the bound, else why not.
std::string ThreadProductError(const ModelConfig& m) {
  const int64_t product = int64_t{m.threads} * m.max_concurrent_runs;
  if (product <= kMaxThreadsPerModel) return "";
  return absl::StrCat("threads x max_concurrent_runs at most ", kMaxThreadsPerModel, ", got ",
                      m.threads, " x ", m.max_concurrent_runs, " = ", product);
}

// input name -> shape; dims >= min_dim. `lines` receives each input's line.
absl::Status ReadShapes(const Reader& r, const Field& f, int64_t min_dim,
                        std::map<std::string, std::vector<int64_t>>* out,
                        std::map<std::string, int>* lines) {
  INFERD_ASSIGN_OR_RETURN(std::vector<Field> inputs, ReadMap(r, f.value, f.line, f.path));
  if (inputs.size() > static_cast<size_t>(kMaxShapeInputs)) {
    return r.Error(f.line, f.path,
                   absl::StrCat("at most ", kMaxShapeInputs, " inputs, got ", inputs.size()));
  }
  for (const Field& input : inputs) {
    if (input.value.IsSequence() && input.value.size() > static_cast<size_t>(kMaxShapeRank)) {
      return r.Error(input.line, input.path,
                     absl::StrCat("rank at most ", kMaxShapeRank, ", got ", input.value.size()));
    }
    if (!input.value.IsSequence()) {
      return r.Error(
          input.line, input.path,
          absl::StrCat("expected a shape such as [1, 3, 224, 224], got ", Got(input.value)));
    }
    std::vector<int64_t> shape;
    int64_t elements = 1;  // stays <= kMaxShapeElements, so the product cannot overflow
    for (size_t i = 0; i < input.value.size(); ++i) {
      const YAML::Node dim = input.value[i];
      INFERD_ASSIGN_OR_RETURN(
          int64_t d, ReadInt(r, dim, LineOf(dim, input.line), absl::StrCat(input.path, "[", i, "]"),
                             min_dim, kMaxShapeDim));
      shape.push_back(d);
      if (elements != 0 && d > kMaxShapeElements / elements) {
        return r.Error(input.line, input.path,
                       absl::StrCat("at most 2^40 elements (", kMaxShapeElements,
                                    "); the dims up to [", i, "] already pass it"));
      }
      elements *= d;
    }
    (*out)[input.key] = std::move(shape);
    (*lines)[input.key] = input.line;
  }
  return absl::OkStatus();
}

// The batching settings against each other and max_batch_size: "" when consistent, else why
// not (checked once the model's settings are complete: one file, or both merged).
std::string BatchingError(const ModelConfig& m) {
  if (!m.dynamic_batching.has_value()) return "";
  const DynamicBatching& b = *m.dynamic_batching;
  if (m.max_batch_size <= 0) {
    return "dynamic_batching needs max_batch_size > 0 (the model's batch dimension)";
  }
  if (!b.preferred_batch_sizes.empty() && b.preferred_batch_sizes.back() > m.max_batch_size) {
    return absl::StrCat("dynamic_batching.preferred_batch_sizes: at most max_batch_size (",
                        m.max_batch_size, "), got ", b.preferred_batch_sizes.back());
  }
  const int levels = std::max(1, b.priority_levels);
  if (b.default_priority_level > levels ||
      (b.priority_levels > 0 && b.default_priority_level < 1)) {
    return absl::StrCat("dynamic_batching.default_priority_level: expected 1..", levels, ", got ",
                        b.default_priority_level);
  }
  for (const auto& [level, policy] : b.priority_queue_policy) {
    if (level > levels) {
      return absl::StrCat("dynamic_batching.priority_queue_policy: level ", level,
                          " is past priority_levels (", levels, ")");
    }
  }
  return "";
}

// A duration in [0, max]; the error names the bound.
absl::StatusOr<absl::Duration> ReadBoundedDuration(const Reader& r, const Field& f,
                                                   absl::Duration max) {
  INFERD_ASSIGN_OR_RETURN(std::string text,
                          ReadScalar(r, f.value, f.line, f.path, "a duration such as 500us"));
  absl::StatusOr<absl::Duration> d = ParseDuration(text);
  if (!d.ok()) return r.Error(f.line, f.path, d.status().message());
  if (*d < absl::ZeroDuration() || *d > max) {
    return r.Error(
        f.line, f.path,
        absl::StrCat("at most ", absl::FormatDuration(max), ", got ", absl::FormatDuration(*d)));
  }
  return *d;
}

absl::StatusOr<QueuePolicy> ParseQueuePolicy(const Reader& r, const Field& f) {
  INFERD_ASSIGN_OR_RETURN(std::vector<Field> fields,
                          ReadMap(r, f.value, f.line, f.path, kQueuePolicyKeys));
  QueuePolicy q;
  for (const Field& g : fields) {
    if (g.key == "timeout") {
      INFERD_ASSIGN_OR_RETURN(q.default_timeout, ReadBoundedDuration(r, g, kMaxQueueTimeout));
    } else if (g.key == "timeout_action") {
      INFERD_ASSIGN_OR_RETURN(q.reject_on_timeout,
                              ReadEnum<bool>(r, g, {{"reject", true}, {"delay", false}}));
    } else if (g.key == "allow_timeout_override") {
      INFERD_ASSIGN_OR_RETURN(q.allow_timeout_override, ReadBool(r, g));
    } else if (g.key == "max_queue_size") {
      INFERD_ASSIGN_OR_RETURN(q.max_queue_size, ReadBoundedCount(r, g, 0, kMaxQueueLength));
    }
  }
  return q;
}

absl::Status ParsePreferredSizes(const Reader& r, const Field& f, std::vector<int>* out) {
  if (!f.value.IsSequence()) {
    return r.Error(f.line, f.path,
                   absl::StrCat("expected a list such as [4, 8], got ", Got(f.value)));
  }
  if (f.value.size() > static_cast<size_t>(kMaxPreferredBatchSizes)) {
    return r.Error(
        f.line, f.path,
        absl::StrCat("at most ", kMaxPreferredBatchSizes, " sizes, got ", f.value.size()));
  }
  for (size_t i = 0; i < f.value.size(); ++i) {
    const YAML::Node n = f.value[i];
    INFERD_ASSIGN_OR_RETURN(
        int64_t v,
        ReadInt(r, n, LineOf(n, f.line), absl::StrCat(f.path, "[", i, "]"), 1, kMaxBatchSize));
    if (!out->empty() && v <= out->back()) {
      return r.Error(f.line, f.path,
                     absl::StrCat("sizes must be ascending, got ", v, " after ", out->back()));
    }
    out->push_back(static_cast<int>(v));
  }
  return absl::OkStatus();
}

absl::Status ParseDynamicBatching(const Reader& r, const Field& f, ModelConfig* m) {
  INFERD_ASSIGN_OR_RETURN(std::vector<Field> fields,
                          ReadMap(r, f.value, f.line, f.path, kBatchingKeys));
  DynamicBatching b;
  bool timeout_shorthand = false, policy_given = false;
  for (const Field& g : fields) {
    if (g.key == "preferred_batch_sizes") {
      INFERD_RETURN_IF_ERROR(ParsePreferredSizes(r, g, &b.preferred_batch_sizes));
    } else if (g.key == "max_queue_delay") {
      INFERD_ASSIGN_OR_RETURN(b.max_queue_delay, ReadBoundedDuration(r, g, kMaxQueueDelay));
    } else if (g.key == "preserve_ordering") {
      INFERD_ASSIGN_OR_RETURN(b.preserve_ordering, ReadBool(r, g));
    } else if (g.key == "priority_levels") {
      INFERD_ASSIGN_OR_RETURN(b.priority_levels, ReadBoundedCount(r, g, 0, kMaxPriorityLevels));
    } else if (g.key == "default_priority_level") {
      INFERD_ASSIGN_OR_RETURN(b.default_priority_level,
                              ReadBoundedCount(r, g, 0, kMaxPriorityLevels));
    } else if (g.key == "default_queue_timeout") {
      timeout_shorthand = true;
      INFERD_ASSIGN_OR_RETURN(b.default_queue_policy.default_timeout,
                              ReadBoundedDuration(r, g, kMaxQueueTimeout));
    } else if (g.key == "default_queue_policy") {
      policy_given = true;
      INFERD_ASSIGN_OR_RETURN(b.default_queue_policy, ParseQueuePolicy(r, g));
    } else if (g.key == "priority_queue_policy") {
      INFERD_ASSIGN_OR_RETURN(std::vector<Field> levels, ReadMap(r, g.value, g.line, g.path));
      for (const Field& l : levels) {
        INFERD_ASSIGN_OR_RETURN(
            int64_t level, ReadInt(r, YAML::Node(l.key), l.line, l.path, 1, kMaxPriorityLevels));
        INFERD_ASSIGN_OR_RETURN(b.priority_queue_policy[static_cast<int>(level)],
                                ParseQueuePolicy(r, l));
      }
    }
  }
  if (timeout_shorthand && policy_given) {
    return r.Error(f.line, f.path,
                   "default_queue_timeout and default_queue_policy are both set: put the "
                   "timeout in default_queue_policy.timeout");
  }
  m->dynamic_batching = std::move(b);
  return absl::OkStatus();
}

absl::Status ParseGeneration(const Reader& r, const Field& f, ModelConfig* m) {
  GenerationSettings g;
  if (!f.value.IsNull()) {
    INFERD_ASSIGN_OR_RETURN(std::vector<Field> fields,
                            ReadMap(r, f.value, f.line, f.path, kGenerationKeys));
    for (const Field& k : fields) {
      if (k.key == "max_length") {
        INFERD_ASSIGN_OR_RETURN(g.max_length, ReadBoundedCount(r, k, 0, 1 << 20));
      } else if (k.key == "max_sequences") {
        INFERD_ASSIGN_OR_RETURN(g.max_sequences, ReadBoundedCount(r, k, 1, kMaxConcurrentRuns));
      } else if (k.key == "kv_cache_budget") {
        INFERD_ASSIGN_OR_RETURN(g.kv_cache_budget, ReadBytes(r, k.value, k.line, k.path));
      } else if (k.key == "default_max_tokens") {
        INFERD_ASSIGN_OR_RETURN(g.default_max_tokens, ReadBoundedCount(r, k, 1, 1 << 20));
      }
    }
  }
  m->generation = g;
  return absl::OkStatus();
}

absl::Status ParsePartition(const Reader& r, const Field& f, ModelConfig* m) {
  INFERD_ASSIGN_OR_RETURN(std::vector<Field> fields,
                          ReadMap(r, f.value, f.line, f.path, kPartitionKeys));
  PartitionConfig& p = m->partition;
  int name_rules_line = 0, annotation_rules_line = 0;
  for (const Field& g : fields) {
    if (g.key == "devices") {
      m->keys_set.insert("partition.devices");
      INFERD_ASSIGN_OR_RETURN(std::vector<Field> devices, ReadMap(r, g.value, g.line, g.path));
      if (devices.size() > static_cast<size_t>(kMaxDevices)) {
        return r.Error(g.line, g.path,
                       absl::StrCat("at most ", kMaxDevices, " devices, got ", devices.size()));
      }
      for (const Field& d : devices) {
        INFERD_ASSIGN_OR_RETURN(std::string device,
                                ReadDevice(r, YAML::Node(d.key), d.line, d.path));
        for (const DeviceBudget& earlier : p.devices) {
          if (earlier.device == device) {
            return r.Error(d.line, d.path, absl::StrCat("device ", device, " is listed twice"));
          }
        }
        DeviceBudget budget{device, std::nullopt};
        if (!d.value.IsNull() && !(d.value.IsScalar() && d.value.Scalar() == "none")) {
          INFERD_ASSIGN_OR_RETURN(budget.budget_bytes, ReadBytes(r, d.value, d.line, d.path));
        }
        p.devices.push_back(std::move(budget));
      }
    } else if (g.key == "name_rules" || g.key == "annotation_rules") {
      m->keys_set.insert("partition.rules");
      INFERD_ASSIGN_OR_RETURN(std::string rules, ReadString(r, g));
      if (rules.size() > static_cast<size_t>(kMaxRulesBytes)) {
        return r.Error(g.line, g.path,
                       absl::StrCat("at most ", kMaxRulesBytes, " bytes, got ", rules.size()));
      }
      const bool by_name = g.key == "name_rules";
      (by_name ? p.name_rules : p.annotation_rules) = rules;
      (by_name ? name_rules_line : annotation_rules_line) = rules.empty() ? 0 : g.line;
    } else if (g.key == "fallback_device") {
      m->keys_set.insert("partition.fallback_device");
      INFERD_ASSIGN_OR_RETURN(p.fallback_device, ReadDevice(r, g.value, g.line, g.path));
    } else if (g.key == "fallback_on_missing_device") {
      m->keys_set.insert("partition.fallback_on_missing_device");
      INFERD_ASSIGN_OR_RETURN(p.fallback_on_missing_device, ReadBool(r, g));
    }
  }
  if (name_rules_line != 0 && annotation_rules_line != 0) {
    return r.Error(std::max(name_rules_line, annotation_rules_line), f.path,
                   "name_rules and annotation_rules are both set: choose one");
  }
  return absl::OkStatus();
}

absl::Status ParseRetentionCaps(const Reader& r, const Field& f, ModelConfig* m) {
  INFERD_ASSIGN_OR_RETURN(std::vector<Field> devices, ReadMap(r, f.value, f.line, f.path));
  if (devices.size() > static_cast<size_t>(kMaxDevices)) {
    return r.Error(f.line, f.path,
                   absl::StrCat("at most ", kMaxDevices, " devices, got ", devices.size()));
  }
  for (const Field& d : devices) {
    INFERD_ASSIGN_OR_RETURN(std::string device, ReadDevice(r, YAML::Node(d.key), d.line, d.path));
    if (m->retention_caps.count(device) != 0) {
      return r.Error(d.line, d.path, absl::StrCat("device ", device, " is listed twice"));
    }
    RetentionCaps caps;
    INFERD_ASSIGN_OR_RETURN(std::vector<Field> arenas,
                            ReadMap(r, d.value, d.line, d.path, kArenaKeys));
    for (const Field& a : arenas) {
      std::optional<uint64_t> cap;
      if (!(a.value.IsScalar() && a.value.Scalar() == "unbounded")) {
        INFERD_ASSIGN_OR_RETURN(cap, ReadBytes(r, a.value, a.line, a.path));
      }
      (a.key == "execution" ? caps.execution_bytes : caps.io_bytes) = cap;
    }
    m->retention_caps[device] = caps;
  }
  return absl::OkStatus();
}

// An input is in fixed_input_shapes or max_input_shapes, not both (the maps: input -> line).
absl::Status CheckShapeKinds(const Reader& r, absl::string_view path,
                             const std::map<std::string, int>& fixed_lines,
                             const std::map<std::string, int>& max_lines) {
  for (const auto& [input, max_line] : max_lines) {
    if (auto fixed = fixed_lines.find(input); fixed != fixed_lines.end()) {
      return r.Error(
          std::max(max_line, fixed->second), path,
          absl::StrCat("input '", input,
                       "' is in both fixed_input_shapes and max_input_shapes; keep one"));
    }
  }
  return absl::OkStatus();
}

// The per-model keys of `fields` into `m` (whose name is already set). `line` is the model's.
absl::Status ParseModelFields(const Reader& r, const std::vector<Field>& fields, int line,
                              absl::string_view path, ModelSource source, ModelConfig* m) {
  std::map<std::string, int> fixed_lines, max_lines;
  for (const Field& f : fields) {
    if (f.key != "name" && f.key != "partition") m->keys_set.insert(f.key);
    if (f.key == "name") {
      if (source == ModelSource::kModelDir) {
        return r.Error(f.line, f.path,
                       absl::StrCat("not allowed in a model directory's config.yaml (the "
                                    "directory's name, '",
                                    m->name, "', is the model's name)"));
      }
      if (source == ModelSource::kMapEntry) {
        return r.Error(f.line, f.path, "not allowed here: the map key names the model");
      }
    } else if (f.key == "path") {
      INFERD_ASSIGN_OR_RETURN(std::string p, ReadString(r, f));
      if (p.empty()) return r.Error(f.line, f.path, "expected a file path, got ''");
      if (source == ModelSource::kModelDir) {
        const std::vector<absl::string_view> parts = absl::StrSplit(p, '/');
        if (p[0] == '/' || std::find(parts.begin(), parts.end(), "..") != parts.end()) {
          return r.Error(
              f.line, f.path,
              absl::StrCat("'", p, "' leaves the model directory (use a path inside it)"));
        }
        p = absl::StrCat(m->name, "/", absl::StripPrefix(p, "./"));
      }
      m->path = p;
    } else if (f.key == "version") {
      INFERD_ASSIGN_OR_RETURN(m->version, ReadString(r, f));
      if (!IsModelName(m->version)) {
        return r.Error(f.line, f.path,
                       absl::StrCat("expected a version (letters, digits, '_', '-', '.'), got ",
                                    Got(f.value)));
      }
    } else if (f.key == "threads") {
      INFERD_ASSIGN_OR_RETURN(m->threads, ReadBoundedCount(r, f, 1, kMaxThreads));
    } else if (f.key == "max_concurrent_runs") {
      INFERD_ASSIGN_OR_RETURN(m->max_concurrent_runs,
                              ReadBoundedCount(r, f, 1, kMaxConcurrentRuns));
    } else if (f.key == "queue_length") {
      INFERD_ASSIGN_OR_RETURN(m->queue_length, ReadBoundedCount(r, f, 0, kMaxQueueLength));
    } else if (f.key == "when_busy") {
      INFERD_ASSIGN_OR_RETURN(
          m->when_busy, ReadEnum<WhenBusy>(
                            r, f, {{"wait", WhenBusy::kWait}, {"fail_fast", WhenBusy::kFailFast}}));
    } else if (f.key == "pre_allocate") {
      INFERD_ASSIGN_OR_RETURN(m->pre_allocate, ReadBool(r, f));
    } else if (f.key == "fixed_input_shapes") {
      INFERD_RETURN_IF_ERROR(ReadShapes(r, f, 0, &m->fixed_input_shapes, &fixed_lines));
    } else if (f.key == "max_input_shapes") {
      INFERD_RETURN_IF_ERROR(ReadShapes(r, f, 1, &m->max_input_shapes, &max_lines));
    } else if (f.key == "partition") {
      INFERD_RETURN_IF_ERROR(ParsePartition(r, f, m));
    } else if (f.key == "retention_caps") {
      INFERD_RETURN_IF_ERROR(ParseRetentionCaps(r, f, m));
    } else if (f.key == "enable_fusions") {
      INFERD_ASSIGN_OR_RETURN(m->enable_fusions, ReadBool(r, f));
    } else if (f.key == "max_batch_size") {
      INFERD_ASSIGN_OR_RETURN(m->max_batch_size, ReadBoundedCount(r, f, 0, kMaxBatchSize));
    } else if (f.key == "dynamic_batching") {
      INFERD_RETURN_IF_ERROR(ParseDynamicBatching(r, f, m));
    } else if (f.key == "generation") {
      INFERD_RETURN_IF_ERROR(ParseGeneration(r, f, m));
    }
  }
  INFERD_RETURN_IF_ERROR(CheckShapeKinds(r, path, fixed_lines, max_lines));
  if (const std::string e = ThreadProductError(*m); !e.empty()) return r.Error(line, path, e);
  // A config.yaml may set dynamic_batching and leave max_batch_size to the main file (or the
  // other way round): the pair is checked where the model's settings are complete.
  if (source != ModelSource::kModelDir) {
    if (const std::string e = BatchingError(*m); !e.empty()) return r.Error(line, path, e);
  }
  m->source = absl::StrCat(r.file(), ":", line);
  return absl::OkStatus();
}

}  // namespace

absl::Status ParseModels(const Reader& r, const YAML::Node& node, int line,
                         std::vector<ModelConfig>* out) {
  std::map<std::string, int> first_line;  // model name -> line of its definition
  const auto add = [&](ModelConfig m, int name_line, absl::string_view name_path) -> absl::Status {
    const auto [it, inserted] = first_line.emplace(m.name, name_line);
    if (!inserted) {
      return r.Error(name_line, name_path,
                     absl::StrCat("duplicate model name '", m.name, "' (first defined at line ",
                                  it->second, ")"));
    }
    if (out->size() >= static_cast<size_t>(kMaxModels)) {
      return r.Error(name_line, name_path,
                     absl::StrCat("at most ", kMaxModels, " models, got more"));
    }
    out->push_back(std::move(m));
    return absl::OkStatus();
  };
  const auto check_name = [&](const std::string& name, const YAML::Node& at, int name_line,
                              absl::string_view name_path) -> absl::Status {
    if (IsModelName(name)) return absl::OkStatus();
    return r.Error(
        name_line, name_path,
        absl::StrCat("expected a model name (1 to ", kMaxModelNameLength,
                     " letters, digits, '_', '-', '.'; not starting with '.'), got ", Got(at)));
  };

  if (node.IsNull()) return absl::OkStatus();
  if (node.IsSequence()) {
    for (size_t i = 0; i < node.size(); ++i) {
      const YAML::Node entry = node[i];
      const int entry_line = LineOf(entry, line);
      const std::string path = absl::StrCat("models[", i, "]");
      if (!entry.IsMap()) {
        return r.Error(entry_line, path,
                       absl::StrCat("expected a map with a name, got ", Got(entry)));
      }
      INFERD_ASSIGN_OR_RETURN(std::vector<Field> fields,
                              ReadMap(r, entry, entry_line, path, kModelKeys));
      const auto name = std::find_if(fields.begin(), fields.end(),
                                     [](const Field& f) { return f.key == "name"; });
      if (name == fields.end()) return r.Error(entry_line, path, "missing required key 'name'");
      INFERD_ASSIGN_OR_RETURN(std::string model_name, ReadString(r, *name));
      INFERD_RETURN_IF_ERROR(check_name(model_name, name->value, name->line, name->path));
      ModelConfig m = DefaultModelConfig(model_name);
      INFERD_RETURN_IF_ERROR(
          ParseModelFields(r, fields, entry_line, path, ModelSource::kListEntry, &m));
      INFERD_RETURN_IF_ERROR(add(std::move(m), name->line, name->path));
    }
    return absl::OkStatus();
  }
  if (node.IsMap()) {
    INFERD_ASSIGN_OR_RETURN(std::vector<Field> entries, ReadMap(r, node, line, "models"));
    for (const Field& e : entries) {
      INFERD_RETURN_IF_ERROR(check_name(e.key, YAML::Node(e.key), e.line, e.path));
      INFERD_ASSIGN_OR_RETURN(std::vector<Field> fields,
                              ReadMap(r, e.value, e.line, e.path, kModelKeys));
      ModelConfig m = DefaultModelConfig(e.key);
      INFERD_RETURN_IF_ERROR(
          ParseModelFields(r, fields, e.line, e.path, ModelSource::kMapEntry, &m));
      INFERD_RETURN_IF_ERROR(add(std::move(m), e.line, e.path));
    }
    return absl::OkStatus();
  }
  return r.Error(line, "models",
                 absl::StrCat("expected a list of models (or a map by name), got ", Got(node)));
}

}  // namespace config_internal

using namespace config_internal;  // NOLINT: the YAML reading helpers, internal to config

absl::StatusOr<ModelConfig> ParseModelConfig(absl::string_view yaml_text,
                                             absl::string_view file_name,
                                             absl::string_view default_name) {
  const Reader r(file_name);
  if (!IsModelName(default_name)) {
    return r.Error(1, "",
                   absl::StrCat("the model directory's name is not a model name: ",
                                ValidateModelName(default_name).message()));
  }
  INFERD_ASSIGN_OR_RETURN(YAML::Node root, LoadDocument(r, yaml_text));
  ModelConfig m = DefaultModelConfig(default_name);
  try {
    INFERD_ASSIGN_OR_RETURN(std::vector<Field> fields, ReadMap(r, root, 1, "", kModelKeys));
    INFERD_RETURN_IF_ERROR(ParseModelFields(r, fields, 1, "", ModelSource::kModelDir, &m));
  } catch (const YAML::Exception& e) {
    return r.Error(e.mark.is_null() ? 1 : e.mark.line + 1, "", e.msg);
  }
  m.source = std::string(file_name);
  return m;
}

absl::StatusOr<ModelConfig> MergeModelConfig(const ModelConfig& main, const ModelConfig& dir) {
  ModelConfig out = dir;
  out.name = main.name;
  const auto wins = [&](const char* key) { return main.keys_set.count(key) != 0; };
  if (wins("path")) out.path = main.path;
  if (wins("version")) out.version = main.version;
  if (wins("threads")) out.threads = main.threads;
  if (wins("max_concurrent_runs")) out.max_concurrent_runs = main.max_concurrent_runs;
  if (wins("queue_length")) out.queue_length = main.queue_length;
  if (wins("when_busy")) out.when_busy = main.when_busy;
  if (wins("pre_allocate")) out.pre_allocate = main.pre_allocate;
  if (wins("fixed_input_shapes")) out.fixed_input_shapes = main.fixed_input_shapes;
  if (wins("max_input_shapes")) out.max_input_shapes = main.max_input_shapes;
  if (wins("partition.devices")) out.partition.devices = main.partition.devices;
  if (wins("partition.rules")) {
    out.partition.name_rules = main.partition.name_rules;
    out.partition.annotation_rules = main.partition.annotation_rules;
  }
  if (wins("partition.fallback_device")) {
    out.partition.fallback_device = main.partition.fallback_device;
  }
  if (wins("partition.fallback_on_missing_device")) {
    out.partition.fallback_on_missing_device = main.partition.fallback_on_missing_device;
  }
  if (wins("retention_caps")) out.retention_caps = main.retention_caps;
  if (wins("enable_fusions")) out.enable_fusions = main.enable_fusions;
  if (wins("max_batch_size")) out.max_batch_size = main.max_batch_size;
  if (wins("dynamic_batching")) out.dynamic_batching = main.dynamic_batching;
  if (wins("generation")) out.generation = main.generation;
  out.keys_set.insert(main.keys_set.begin(), main.keys_set.end());
  out.source = main.source.empty() ? dir.source : absl::StrCat(main.source, " + ", dir.source);
  if (const std::string e = ThreadProductError(out); !e.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("model '", out.name, "' (", out.source, "): ", e));
  }
  if (const std::string e = BatchingError(out); !e.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("model '", out.name, "' (", out.source, "): ", e));
  }

  for (const auto& [input, shape] : out.max_input_shapes) {
    if (out.fixed_input_shapes.count(input) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("model '", out.name, "' (", out.source, "): input '", input,
                       "' has a fixed shape in one file and a max shape in the other; keep one"));
    }
  }
  return out;
}

}  // namespace inferd::server

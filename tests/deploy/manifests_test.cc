// Structural checks of the deployment files in deploy/: every Kubernetes / KServe manifest is
// valid YAML with a kind and a name; the inferd configs they carry (ConfigMaps, the systemd and
// Docker configs) pass inferd's own config parser; and the facts that must agree across files do:
// ports (config <-> container ports <-> probes <-> Services), mount paths, the termination grace
// period vs drain_timeout, memory limits vs retention caps, CPU requests vs compute threads,
// selectors and references (Service, HPA, PDB, PodMonitor, KServe runtime <-> InferenceService).
//
// yaml-cpp (libyaml-cpp-dev, already a dependency of the server) parses the manifests, so the
// test needs no Python YAML module.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "engine/testing/runfiles.h"
#include "gtest/gtest.h"
#include "server/config.h"
#include "server/config_values.h"

namespace inferd::deploy {
namespace {

namespace fs = std::filesystem;
using engine::testing::Runfile;
using server::Config;

constexpr uint64_t kMiB = uint64_t{1} << 20;
// What inferd needs besides its arenas and requests: threads, gRPC, oneDNN, code (~150 MiB seen
// with the example models), rounded up.
constexpr uint64_t kRuntimeOverheadBytes = 256 * kMiB;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<YAML::Node> LoadDocs(const std::string& workspace_path) {
  std::vector<YAML::Node> docs;
  try {
    for (const YAML::Node& d : YAML::LoadAll(ReadFile(Runfile(workspace_path)))) {
      if (d.IsDefined() && !d.IsNull()) docs.push_back(d);
    }
  } catch (const YAML::Exception& e) {
    ADD_FAILURE() << workspace_path << ": " << e.what();
  }
  return docs;
}

// The one document of `kind` (and `name`, when given) in a file.
YAML::Node Find(const std::string& file, const std::string& kind, const std::string& name = "") {
  for (const YAML::Node& d : LoadDocs(file)) {
    if (d["kind"].as<std::string>("") == kind &&
        (name.empty() || d["metadata"]["name"].as<std::string>("") == name)) {
      return d;
    }
  }
  ADD_FAILURE() << file << ": no " << kind << (name.empty() ? "" : " named " + name);
  return YAML::Node();
}

// inferd's config from a ConfigMap's data key, through inferd's parser.
std::shared_ptr<const Config> ConfigFromConfigMap(const YAML::Node& cm, const std::string& key) {
  const YAML::Node text = cm["data"][key];
  if (!text.IsScalar()) {
    ADD_FAILURE() << "ConfigMap has no data." << key;
    return nullptr;
  }
  absl::StatusOr<std::shared_ptr<const Config>> c =
      server::ParseConfig(text.as<std::string>(), key);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *c : nullptr;
}

std::shared_ptr<const Config> ConfigFromFile(const std::string& workspace_path) {
  absl::StatusOr<std::shared_ptr<const Config>> c =
      server::ParseConfig(ReadFile(Runfile(workspace_path)), workspace_path);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *c : nullptr;
}

int Port(const std::string& address) {
  absl::StatusOr<server::Address> a = server::ParseAddress(address, /*allow_unix=*/false);
  EXPECT_TRUE(a.ok()) << a.status();
  return a.ok() ? a->port : -1;
}

bool Loopback(const std::string& address) {
  absl::StatusOr<server::Address> a = server::ParseAddress(address, /*allow_unix=*/true);
  return a.ok() && server::IsLoopback(*a);
}

// Kubernetes quantities: "1536Mi", "1Gi", "512M", "1000000".
uint64_t K8sBytes(const std::string& q) {
  static const std::vector<std::pair<std::string, uint64_t>> kUnits = {{"Ki", uint64_t{1} << 10},
                                                                       {"Mi", uint64_t{1} << 20},
                                                                       {"Gi", uint64_t{1} << 30},
                                                                       {"Ti", uint64_t{1} << 40},
                                                                       {"k", 1000},
                                                                       {"M", 1000000},
                                                                       {"G", 1000000000},
                                                                       {"T", 1000000000000}};
  for (const auto& [suffix, scale] : kUnits) {
    if (absl::EndsWith(q, suffix)) {
      double v = 0;
      EXPECT_TRUE(absl::SimpleAtod(q.substr(0, q.size() - suffix.size()), &v)) << q;
      return static_cast<uint64_t>(v * scale);
    }
  }
  uint64_t v = 0;
  EXPECT_TRUE(absl::SimpleAtoi(q, &v)) << "memory quantity " << q;
  return v;
}

// CPU quantities: "4", "0.5", "500m".
double K8sCpu(const std::string& q) {
  double v = 0;
  if (absl::EndsWith(q, "m")) {
    EXPECT_TRUE(absl::SimpleAtod(q.substr(0, q.size() - 1), &v)) << q;
    return v / 1000;
  }
  EXPECT_TRUE(absl::SimpleAtod(q, &v)) << "cpu quantity " << q;
  return v;
}

// Sum of the retention caps of every model, device and arena; fails for an arena without one
// (its retained bytes would be bounded only by its peak working set).
uint64_t CapsOrFail(const Config& config, const std::string& where) {
  uint64_t total = 0;
  for (const server::ModelConfig& m : config.models) {
    EXPECT_FALSE(m.retention_caps.empty()) << where << ": model " << m.name << " has no caps";
    for (const auto& [device, caps] : m.retention_caps) {
      EXPECT_TRUE(caps.execution_bytes.has_value())
          << where << ": " << m.name << " " << device << " execution arena uncapped";
      EXPECT_TRUE(caps.io_bytes.has_value())
          << where << ": " << m.name << " " << device << " io arena uncapped";
      total += caps.execution_bytes.value_or(0) + caps.io_bytes.value_or(0);
    }
  }
  return total;
}

// The container's port number by name; -1 when absent.
int ContainerPort(const YAML::Node& container, const std::string& name) {
  for (const YAML::Node& p : container["ports"]) {
    if (p["name"].as<std::string>("") == name) return p["containerPort"].as<int>();
  }
  return -1;
}

// "--config /etc/inferd/inferd.yaml" or "--config=/etc/...": the path.
std::string ConfigArg(const YAML::Node& container) {
  std::vector<std::string> args;
  for (const YAML::Node& a : container["args"]) args.push_back(a.as<std::string>());
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--config" && i + 1 < args.size()) return args[i + 1];
    if (absl::StartsWith(args[i], "--config=")) return args[i].substr(9);
  }
  ADD_FAILURE() << "no --config in the container's args";
  return "";
}

std::string MountPath(const YAML::Node& container, const std::string& volume) {
  for (const YAML::Node& m : container["volumeMounts"]) {
    if (m["name"].as<std::string>("") == volume) return m["mountPath"].as<std::string>();
  }
  ADD_FAILURE() << "no volumeMount for volume " << volume;
  return "";
}

YAML::Node Volume(const YAML::Node& pod_spec, const std::string& name) {
  for (const YAML::Node& v : pod_spec["volumes"]) {
    if (v["name"].as<std::string>("") == name) return v;
  }
  ADD_FAILURE() << "no volume " << name;
  return YAML::Node();
}

// Every probe of the container calls the gRPC health service on `port`.
void ExpectGrpcProbes(const YAML::Node& container, int port, const std::string& where) {
  for (const char* probe : {"startupProbe", "readinessProbe", "livenessProbe"}) {
    const YAML::Node p = container[probe];
    ASSERT_TRUE(p.IsMap()) << where << ": no " << probe;
    ASSERT_TRUE(p["grpc"].IsMap()) << where << ": " << probe << " is not a grpc probe";
    EXPECT_EQ(p["grpc"]["port"].as<int>(), port) << where << ": " << probe;
    // "" (the whole server) or a model name.
    EXPECT_TRUE(!p["grpc"]["service"].IsDefined() || p["grpc"]["service"].IsScalar());
  }
}

// Selector labels all present, with the same values, in `labels`.
void ExpectSelects(const YAML::Node& selector, const YAML::Node& labels, const std::string& what) {
  ASSERT_TRUE(selector.IsMap() && selector.size() > 0) << what << ": empty selector";
  for (const auto& kv : selector) {
    const std::string key = kv.first.as<std::string>();
    EXPECT_EQ(labels[key].as<std::string>(""), kv.second.as<std::string>())
        << what << ": selector " << key << " does not match the pod labels";
  }
}

// ---------------------------------------------------------------- Kubernetes

const std::map<std::string, std::set<std::string>> kExpectedKinds = {
    {"deploy/k8s/configmap.yaml", {"ConfigMap"}},
    {"deploy/k8s/deployment.yaml", {"Deployment"}},
    {"deploy/k8s/pvc.yaml", {"PersistentVolumeClaim"}},
    {"deploy/k8s/service.yaml", {"Service"}},
    {"deploy/k8s/hpa.yaml", {"HorizontalPodAutoscaler"}},
    {"deploy/k8s/pdb.yaml", {"PodDisruptionBudget"}},
    {"deploy/k8s/podmonitor.yaml", {"PodMonitor"}},
    {"deploy/k8s/kustomization.yaml", {"Kustomization"}},
    {"deploy/k8s/kserve/configmap.yaml", {"ConfigMap"}},
    {"deploy/k8s/kserve/servingruntime.yaml", {"ServingRuntime"}},
    {"deploy/k8s/kserve/inferenceservice.yaml", {"InferenceService"}},
};

TEST(K8sManifests, EveryFileParsesAndHasApiVersionKindAndName) {
  std::set<std::string> seen;
  const fs::path root = fs::path(Runfile("deploy")).parent_path();
  for (const auto& entry : fs::recursive_directory_iterator(Runfile("deploy/k8s"))) {
    if (entry.path().extension() != ".yaml") continue;
    const std::string rel = entry.path().lexically_relative(root).string();
    seen.insert(rel);
    const std::vector<YAML::Node> docs = LoadDocs(rel);
    ASSERT_FALSE(docs.empty()) << rel << ": no documents";
    std::set<std::string> kinds;
    for (const YAML::Node& d : docs) {
      ASSERT_TRUE(d.IsMap()) << rel;
      EXPECT_TRUE(d["apiVersion"].IsScalar()) << rel << ": no apiVersion";
      const std::string kind = d["kind"].as<std::string>("");
      EXPECT_FALSE(kind.empty()) << rel << ": no kind";
      kinds.insert(kind);
      if (kind != "Kustomization") {
        EXPECT_FALSE(d["metadata"]["name"].as<std::string>("").empty()) << rel << ": no name";
        EXPECT_EQ(d["metadata"]["labels"]["app.kubernetes.io/name"].as<std::string>(""), "inferd")
            << rel << ": " << kind << " without the label app.kubernetes.io/name: inferd";
      }
    }
    auto expected = kExpectedKinds.find(rel);
    ASSERT_NE(expected, kExpectedKinds.end()) << rel << ": a new manifest; add it to this test";
    EXPECT_EQ(kinds, expected->second) << rel;
  }
  for (const auto& [file, kinds] : kExpectedKinds) {
    EXPECT_TRUE(seen.count(file)) << file << " is missing";
  }
}

TEST(K8sManifests, KustomizationListsTheBaseManifests) {
  const YAML::Node k = Find("deploy/k8s/kustomization.yaml", "Kustomization");
  std::set<std::string> listed;
  for (const YAML::Node& r : k["resources"]) listed.insert(r.as<std::string>());
  // Everything in deploy/k8s/ except the CRD-dependent ones (applied where the CRDs exist).
  const std::set<std::string> expected = {"configmap.yaml", "pvc.yaml", "deployment.yaml",
                                          "service.yaml",   "hpa.yaml", "pdb.yaml"};
  EXPECT_EQ(listed, expected);
}

class DeploymentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    deployment_ = Find("deploy/k8s/deployment.yaml", "Deployment", "inferd");
    pod_ = deployment_["spec"]["template"]["spec"];
    ASSERT_TRUE(pod_["containers"].IsSequence());
    container_ = pod_["containers"][0];
    config_map_ = Find("deploy/k8s/configmap.yaml", "ConfigMap");
    config_ = ConfigFromConfigMap(config_map_, "inferd.yaml");
    ASSERT_NE(config_, nullptr);
  }

  YAML::Node deployment_, pod_, container_, config_map_;
  std::shared_ptr<const Config> config_;
};

TEST_F(DeploymentTest, ContainerPortsAreTheConfigsPorts) {
  const int grpc = Port(config_->server.grpc_address);
  const int metrics = Port(config_->server.metrics_address);
  EXPECT_EQ(ContainerPort(container_, "grpc"), grpc);
  EXPECT_EQ(ContainerPort(container_, "inferd-metrics"), metrics);
  EXPECT_EQ(deployment_["spec"]["template"]["metadata"]["annotations"]["prometheus.io/port"]
                .as<std::string>(""),
            std::to_string(metrics));
  // The admin API stays on the pod's loopback, and is no container port.
  EXPECT_TRUE(Loopback(config_->server.admin_address)) << config_->server.admin_address;
  for (const YAML::Node& p : container_["ports"]) {
    EXPECT_NE(p["containerPort"].as<int>(), Port(config_->server.admin_address));
  }
  // Reachable from outside the pod: not bound to loopback.
  EXPECT_FALSE(Loopback(config_->server.grpc_address));
  EXPECT_FALSE(Loopback(config_->server.metrics_address));
}

TEST_F(DeploymentTest, ProbesUseTheGrpcHealthService) {
  ExpectGrpcProbes(container_, Port(config_->server.grpc_address), "deployment");
}

TEST_F(DeploymentTest, ConfigAndModelsAreMounted) {
  const std::string config_path = ConfigArg(container_);
  const fs::path p(config_path);
  EXPECT_EQ(MountPath(container_, "config"), p.parent_path().string());
  EXPECT_EQ(Volume(pod_, "config")["configMap"]["name"].as<std::string>(""),
            config_map_["metadata"]["name"].as<std::string>());
  EXPECT_TRUE(config_map_["data"][p.filename().string()].IsScalar())
      << "the ConfigMap has no key " << p.filename();
  EXPECT_EQ(MountPath(container_, "models"), config_->server.model_repository);
  const std::string claim =
      Volume(pod_, "models")["persistentVolumeClaim"]["claimName"].as<std::string>("");
  EXPECT_EQ(
      Find("deploy/k8s/pvc.yaml", "PersistentVolumeClaim")["metadata"]["name"].as<std::string>(""),
      claim);
}

TEST_F(DeploymentTest, GracePeriodCoversPreStopAndDrain) {
  const int grace = pod_["terminationGracePeriodSeconds"].as<int>();
  int pre_stop = 0;
  const YAML::Node cmd = container_["lifecycle"]["preStop"]["exec"]["command"];
  if (cmd.IsSequence() && cmd.size() == 2 && cmd[0].as<std::string>() == "sleep") {
    pre_stop = cmd[1].as<int>();
  }
  const int64_t drain = absl::ToInt64Seconds(config_->server.drain_timeout);
  EXPECT_GT(grace, pre_stop + drain)
      << "terminationGracePeriodSeconds " << grace << " must exceed preStop " << pre_stop
      << " s + drain_timeout " << drain << " s";
}

TEST_F(DeploymentTest, MemoryLimitCoversRetentionCaps) {
  const uint64_t caps = CapsOrFail(*config_, "deploy/k8s/configmap.yaml");
  const uint64_t limit = K8sBytes(container_["resources"]["limits"]["memory"].as<std::string>());
  const uint64_t request =
      K8sBytes(container_["resources"]["requests"]["memory"].as<std::string>());
  const uint64_t need = caps + config_->server.max_message_bytes + kRuntimeOverheadBytes;
  EXPECT_GE(limit, need) << "memory limit " << limit / kMiB << " MiB < caps " << caps / kMiB
                         << " MiB + one max message + " << kRuntimeOverheadBytes / kMiB
                         << " MiB of runtime";
  EXPECT_LE(request, limit);
}

TEST_F(DeploymentTest, CpuRequestCoversComputeThreads) {
  int threads = 0;
  for (const server::ModelConfig& m : config_->models) threads += m.threads * m.max_concurrent_runs;
  const double cpu = K8sCpu(container_["resources"]["requests"]["cpu"].as<std::string>());
  EXPECT_GE(cpu, threads) << "models run up to " << threads << " compute threads at once";
}

TEST_F(DeploymentTest, SelectorsAndReferencesAgree) {
  const YAML::Node pod_labels = deployment_["spec"]["template"]["metadata"]["labels"];
  ExpectSelects(deployment_["spec"]["selector"]["matchLabels"], pod_labels, "Deployment");

  int services = 0;
  for (const YAML::Node& svc : LoadDocs("deploy/k8s/service.yaml")) {
    ++services;
    const std::string name = svc["metadata"]["name"].as<std::string>();
    ExpectSelects(svc["spec"]["selector"], pod_labels, "Service " + name);
    for (const YAML::Node& p : svc["spec"]["ports"]) {
      const std::string target = p["targetPort"].as<std::string>();
      EXPECT_GT(ContainerPort(container_, target), 0)
          << "Service " << name << " targets port '" << target << "', not a container port name";
      EXPECT_NE(p["port"].as<int>(), Port(config_->server.admin_address))
          << "Service " << name << " exposes the admin port";
    }
  }
  EXPECT_EQ(services, 2);

  const YAML::Node hpa = Find("deploy/k8s/hpa.yaml", "HorizontalPodAutoscaler");
  EXPECT_EQ(hpa["spec"]["scaleTargetRef"]["kind"].as<std::string>(), "Deployment");
  EXPECT_EQ(hpa["spec"]["scaleTargetRef"]["name"].as<std::string>(),
            deployment_["metadata"]["name"].as<std::string>());
  EXPECT_LE(hpa["spec"]["minReplicas"].as<int>(), hpa["spec"]["maxReplicas"].as<int>());
  bool cpu_metric = false;
  for (const YAML::Node& m : hpa["spec"]["metrics"]) {
    cpu_metric |= m["type"].as<std::string>() == "Resource" &&
                  m["resource"]["name"].as<std::string>() == "cpu";
  }
  EXPECT_TRUE(cpu_metric) << "the HPA scales on CPU";
  EXPECT_TRUE(container_["resources"]["requests"]["cpu"].IsScalar())
      << "CPU utilization needs a CPU request";

  const YAML::Node pdb = Find("deploy/k8s/pdb.yaml", "PodDisruptionBudget");
  ExpectSelects(pdb["spec"]["selector"]["matchLabels"], pod_labels, "PodDisruptionBudget");

  const YAML::Node monitor = Find("deploy/k8s/podmonitor.yaml", "PodMonitor");
  ExpectSelects(monitor["spec"]["selector"]["matchLabels"], pod_labels, "PodMonitor");
  for (const YAML::Node& e : monitor["spec"]["podMetricsEndpoints"]) {
    EXPECT_GT(ContainerPort(container_, e["port"].as<std::string>()), 0);
  }
}

// ---------------------------------------------------------------- KServe

TEST(KServeManifests, ServingRuntimeServesOnnxOverV2Grpc) {
  const YAML::Node rt = Find("deploy/k8s/kserve/servingruntime.yaml", "ServingRuntime");
  EXPECT_EQ(rt["apiVersion"].as<std::string>(), "serving.kserve.io/v1alpha1");
  const YAML::Node spec = rt["spec"];
  std::set<std::string> protocols, formats;
  for (const YAML::Node& p : spec["protocolVersions"]) protocols.insert(p.as<std::string>());
  for (const YAML::Node& f : spec["supportedModelFormats"]) {
    formats.insert(f["name"].as<std::string>());
  }
  EXPECT_TRUE(protocols.count("v2"));
  EXPECT_TRUE(protocols.count("grpc-v2"));
  EXPECT_FALSE(protocols.count("v1"));
  EXPECT_TRUE(formats.count("onnx"));

  ASSERT_EQ(spec["containers"].size(), 1u);
  const YAML::Node c = spec["containers"][0];
  EXPECT_EQ(c["name"].as<std::string>(), "kserve-container");
  const std::string config_path = ConfigArg(c);
  EXPECT_EQ(MountPath(c, "inferd-config"), fs::path(config_path).parent_path().string());
  const std::string cm_name =
      Volume(spec, "inferd-config")["configMap"]["name"].as<std::string>("");
  const YAML::Node cm = Find("deploy/k8s/kserve/configmap.yaml", "ConfigMap", cm_name);
  std::shared_ptr<const Config> config =
      ConfigFromConfigMap(cm, fs::path(config_path).filename().string());
  ASSERT_NE(config, nullptr);
  // KServe's storage initializer writes the InferenceService's storageUri here.
  EXPECT_EQ(config->server.model_repository, "/mnt/models");
  // KServe routes gRPC to the container port named h2c.
  const int grpc = Port(config->server.grpc_address);
  EXPECT_EQ(c["ports"][0]["name"].as<std::string>(), "h2c") << "h2c must be the first port";
  EXPECT_EQ(ContainerPort(c, "h2c"), grpc);
  EXPECT_FALSE(Loopback(config->server.grpc_address));
  EXPECT_TRUE(Loopback(config->server.admin_address));
  ExpectGrpcProbes(c, grpc, "ServingRuntime");
  EXPECT_EQ(spec["annotations"]["prometheus.kserve.io/port"].as<std::string>(""),
            std::to_string(Port(config->server.metrics_address)));
  EXPECT_TRUE(c["securityContext"]["runAsNonRoot"].as<bool>(false));
}

TEST(KServeManifests, InferenceServiceUsesTheRuntime) {
  const YAML::Node rt = Find("deploy/k8s/kserve/servingruntime.yaml", "ServingRuntime");
  const YAML::Node isvc = Find("deploy/k8s/kserve/inferenceservice.yaml", "InferenceService");
  EXPECT_EQ(isvc["apiVersion"].as<std::string>(), "serving.kserve.io/v1beta1");
  const YAML::Node model = isvc["spec"]["predictor"]["model"];
  EXPECT_EQ(model["runtime"].as<std::string>(), rt["metadata"]["name"].as<std::string>());
  EXPECT_EQ(model["modelFormat"]["name"].as<std::string>(), "onnx");
  std::set<std::string> protocols;
  for (const YAML::Node& p : rt["spec"]["protocolVersions"]) protocols.insert(p.as<std::string>());
  EXPECT_TRUE(protocols.count(model["protocolVersion"].as<std::string>()))
      << "the runtime does not list the InferenceService's protocolVersion";
  EXPECT_FALSE(model["storageUri"].as<std::string>("").empty());
}

// ---------------------------------------------------------------- systemd, Docker, Prometheus

// "30s", "1min", "2min 30s", "90" (seconds) as systemd reads them: enough for this unit.
absl::Duration SystemdSeconds(const std::string& v) {
  absl::Duration total;
  for (absl::string_view part : absl::StrSplit(v, ' ', absl::SkipEmpty())) {
    int64_t n = 0;
    if (absl::ConsumeSuffix(&part, "min")) {
      EXPECT_TRUE(absl::SimpleAtoi(part, &n)) << v;
      total += absl::Minutes(n);
    } else {
      absl::ConsumeSuffix(&part, "s");
      EXPECT_TRUE(absl::SimpleAtoi(part, &n)) << v;
      total += absl::Seconds(n);
    }
  }
  return total;
}

// "4G", "512M", "1073741824": systemd's suffixes are 1024-based.
uint64_t SystemdBytes(std::string v) {
  uint64_t scale = 1;
  const std::string units = "KMGT";
  if (!v.empty() && units.find(v.back()) != std::string::npos) {
    scale = uint64_t{1} << (10 * (units.find(v.back()) + 1));
    v.pop_back();
  }
  uint64_t n = 0;
  EXPECT_TRUE(absl::SimpleAtoi(v, &n)) << v;
  return n * scale;
}

std::map<std::string, std::string> UnitSettings(const std::string& text) {
  std::map<std::string, std::string> out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (line.empty() || line[0] == '#' || line[0] == '[') continue;
    const size_t eq = line.find('=');
    if (eq == absl::string_view::npos) continue;
    out[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
  }
  return out;
}

TEST(SystemdUnit, AgreesWithItsConfig) {
  std::shared_ptr<const Config> config = ConfigFromFile("deploy/systemd/inferd.yaml");
  ASSERT_NE(config, nullptr);
  std::map<std::string, std::string> unit =
      UnitSettings(ReadFile(Runfile("deploy/systemd/inferd.service")));

  EXPECT_GT(SystemdSeconds(unit["TimeoutStopSec"]), config->server.drain_timeout)
      << "TimeoutStopSec must exceed drain_timeout, or systemd kills a drain in progress";
  EXPECT_EQ(unit["KillSignal"], "SIGTERM");
  EXPECT_EQ(unit["Restart"], "on-failure");
  EXPECT_EQ(unit["User"], "inferd");
  EXPECT_EQ(unit["NoNewPrivileges"], "yes");
  EXPECT_EQ(unit["ProtectSystem"], "strict");
  EXPECT_EQ(unit.count("MemoryDenyWriteExecute"), 0u) << "oneDNN's JIT needs W+X pages";
  uint64_t nofile = 0;
  EXPECT_TRUE(absl::SimpleAtoi(unit["LimitNOFILE"], &nofile));
  EXPECT_GE(nofile, 4096u);

  const uint64_t caps = CapsOrFail(*config, "deploy/systemd/inferd.yaml");
  const uint64_t need = caps + config->server.max_message_bytes + kRuntimeOverheadBytes;
  EXPECT_GE(SystemdBytes(unit["MemoryHigh"]), need);
  EXPECT_GE(SystemdBytes(unit["MemoryMax"]), SystemdBytes(unit["MemoryHigh"]));

  EXPECT_TRUE(absl::StrContains(unit["ExecStart"], " --config /etc/inferd/inferd.yaml"));
  EXPECT_TRUE(absl::StartsWith(config->server.model_repository, "/var/lib/inferd"))
      << "StateDirectory=inferd: the repository under /var/lib/inferd";
  EXPECT_TRUE(Loopback(config->server.admin_address)) << "no token configured";
  const std::string sysusers = ReadFile(Runfile("deploy/systemd/inferd.sysusers"));
  EXPECT_TRUE(absl::StrContains(sysusers, "\nu inferd ")) << "sysusers.d creates the user";
}

TEST(DockerImage, DefaultConfigParsesAndDrainsWithinDockerStop) {
  std::shared_ptr<const Config> config = ConfigFromFile("deploy/docker/inferd.yaml");
  ASSERT_NE(config, nullptr);
  // `docker stop` sends SIGKILL 10 s after SIGTERM by default.
  EXPECT_LT(config->server.drain_timeout, absl::Seconds(10));
  EXPECT_EQ(config->server.model_repository, "/models");
  EXPECT_FALSE(Loopback(config->server.grpc_address));
  EXPECT_FALSE(Loopback(config->server.metrics_address));
  EXPECT_TRUE(Loopback(config->server.admin_address)) << "no token configured";
}

TEST(PrometheusConfig, StaticTargetIsTheMetricsPort) {
  std::shared_ptr<const Config> config = ConfigFromFile("deploy/systemd/inferd.yaml");
  ASSERT_NE(config, nullptr);
  const YAML::Node prom = LoadDocs("deploy/prometheus/prometheus.yml").at(0);
  bool found = false;
  for (const YAML::Node& job : prom["scrape_configs"]) {
    if (job["job_name"].as<std::string>() != "inferd") continue;
    const std::string target = job["static_configs"][0]["targets"][0].as<std::string>();
    EXPECT_EQ(Port(target), Port(config->server.metrics_address));
    found = true;
  }
  EXPECT_TRUE(found) << "no job inferd";
}

}  // namespace
}  // namespace inferd::deploy

#include "server/command_line_config.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "server/config_values.h"
#include "yaml-cpp/yaml.h"

namespace inferd::server {
namespace {
namespace fs = std::filesystem;

bool AnyOverride(const CommandLineOverrides& o) {
  return !o.model_repository.empty() || o.http_port || o.grpc_port || o.metrics_port ||
         o.admin_port || !o.http_host.empty() || !o.grpc_host.empty() || !o.metrics_host.empty() ||
         !o.model_control_mode.empty() || !o.load_models.empty() || o.repository_poll_secs ||
         o.exit_timeout_secs || o.log_verbose > 0 || !o.allow_http;
}

// `current` (the config's address, or its default) with the flags' host and port; `flag` names
// the port flag in errors.
absl::StatusOr<std::string> Overlay(const std::string& current, const std::string& host_flag,
                                    std::optional<int> port, const char* flag) {
  if (port && (*port < 0 || *port > 65535)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, ": expected a port from 0 to 65535, got ", *port));
  }
  Address a;
  a.host = "127.0.0.1";
  if (!current.empty()) {
    absl::StatusOr<Address> parsed = ParseAddress(current, /*allow_unix=*/true);
    if (parsed.ok()) a = *parsed;
  }
  if (a.is_unix && port) {
    return absl::InvalidArgumentError(absl::StrCat("--", flag, ": the config's address ", current,
                                                   " is a unix socket, which has no port"));
  }
  if (!host_flag.empty()) a.host = host_flag;
  if (port) a.port = *port;
  if (a.is_unix) return current;
  const bool v6 = a.host.find(':') != std::string::npos;
  return absl::StrCat(v6 ? "[" : "", a.host, v6 ? "]" : "", ":", a.port);
}

absl::Status OverlayAddresses(const CommandLineOverrides& o, const ServerConfig& current,
                              YAML::Node server) {
  if (o.grpc_port || !o.grpc_host.empty()) {
    INFERD_ASSIGN_OR_RETURN(std::string a,
                            Overlay(current.grpc_address, o.grpc_host, o.grpc_port, "grpc-port"));
    server["grpc_address"] = a;
  }
  if (o.metrics_port || !o.metrics_host.empty()) {
    INFERD_ASSIGN_OR_RETURN(std::string a, Overlay(current.metrics_address, o.metrics_host,
                                                   o.metrics_port, "metrics-port"));
    server["metrics_address"] = a;
  }
  if (o.admin_port) {
    INFERD_ASSIGN_OR_RETURN(std::string a,
                            Overlay(current.admin_address, "", o.admin_port, "admin-port"));
    server["admin_address"] = a;
  }
  if (!o.allow_http) {
    server["http_address"] = "none";
  } else if (o.http_port || !o.http_host.empty()) {
    const std::string base = current.http_address.empty() ? "127.0.0.1:8000" : current.http_address;
    INFERD_ASSIGN_OR_RETURN(std::string a, Overlay(base, o.http_host, o.http_port, "http-port"));
    server["http_address"] = a;
  }
  return absl::OkStatus();
}

// --load-model NAME: the model joins the config's models (a list or a map by name).
void AddModel(YAML::Node root, const std::string& name) {
  YAML::Node models = root["models"];
  if (models.IsMap()) {
    if (!models[name]) models[name] = YAML::Node(YAML::NodeType::Map);
    return;
  }
  if (!models.IsSequence()) {
    root["models"] = YAML::Node(YAML::NodeType::Sequence);
    models = root["models"];
  }
  for (const YAML::Node& m : models) {
    if (m.IsMap() && m["name"] && m["name"].IsScalar() && m["name"].Scalar() == name) return;
  }
  YAML::Node entry(YAML::NodeType::Map);
  entry["name"] = name;
  models.push_back(entry);
}

absl::Status OverlayModelControl(const CommandLineOverrides& o, const ServerConfig& current,
                                 YAML::Node root) {
  YAML::Node server = root["server"];
  ModelControl mode = current.model_control;
  if (!o.model_control_mode.empty()) {
    if (o.model_control_mode == "none") {
      mode = ModelControl::kNone;
    } else if (o.model_control_mode == "poll") {
      mode = ModelControl::kPoll;
    } else if (o.model_control_mode == "explicit") {
      mode = ModelControl::kExplicit;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("--model-control-mode: expected none, poll or explicit, got '",
                       o.model_control_mode, "'"));
    }
    server["model_control"] = ModelControlName(mode);
  }
  if (!o.load_models.empty()) {
    if (mode != ModelControl::kExplicit) {
      return absl::InvalidArgumentError(
          "--load-model needs --model-control-mode=explicit (as in Triton: in the other modes "
          "every model of the repository loads)");
    }
    const bool all =
        std::find(o.load_models.begin(), o.load_models.end(), "*") != o.load_models.end();
    server["load_all_models"] = all;
    if (!all) {
      for (const std::string& name : o.load_models) {
        INFERD_RETURN_IF_ERROR(ValidateModelName(name));
        AddModel(root, name);
      }
    }
  } else if (o.model_control_mode == "explicit") {
    // Triton's explicit mode loads nothing at start-up unless --load-model says so.
    server["load_all_models"] = false;
  }
  if (o.repository_poll_secs) {
    if (*o.repository_poll_secs < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--repository-poll-secs: expected 1 or more, got ", *o.repository_poll_secs));
    }
    server["repository_poll_interval"] = absl::StrCat(*o.repository_poll_secs, "s");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in)
    return absl::FailedPreconditionError(absl::StrCat("cannot read config file '", path, "'"));
  return text.str();
}

}  // namespace

absl::StatusOr<std::shared_ptr<const Config>> BuildConfig(const CommandLineOverrides& o) {
  std::shared_ptr<const Config> file_config;
  std::string text;
  std::error_code ec;
  std::string base_dir = fs::current_path(ec).string();
  std::string name = "the command line";
  if (!o.config_path.empty()) {
    // The file alone first: its errors name its own lines.
    INFERD_ASSIGN_OR_RETURN(file_config, LoadConfig(o.config_path));
    if (!AnyOverride(o)) return file_config;
    INFERD_ASSIGN_OR_RETURN(text, ReadText(o.config_path));
    base_dir = fs::absolute(o.config_path, ec).parent_path().string();
    name = absl::StrCat(o.config_path, " with the command line's flags");
  } else if (o.model_repository.empty()) {
    return absl::InvalidArgumentError("give --model-repository DIR or --config FILE");
  }
  if (o.exit_timeout_secs && *o.exit_timeout_secs < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--exit-timeout-secs: expected 0 or more, got ", *o.exit_timeout_secs));
  }
  const ServerConfig current = file_config != nullptr ? file_config->server : ServerConfig();
  YAML::Node root;
  try {
    root = text.empty() ? YAML::Node(YAML::NodeType::Map) : YAML::Load(text);
    if (!root.IsMap()) root = YAML::Node(YAML::NodeType::Map);
    if (!root["server"].IsMap()) root["server"] = YAML::Node(YAML::NodeType::Map);
    YAML::Node server = root["server"];
    if (!o.model_repository.empty()) {
      server["model_repository"] = fs::absolute(o.model_repository, ec).string();
    }
    INFERD_RETURN_IF_ERROR(OverlayAddresses(o, current, server));
    INFERD_RETURN_IF_ERROR(OverlayModelControl(o, current, root));
    if (o.exit_timeout_secs) server["drain_timeout"] = absl::StrCat(*o.exit_timeout_secs, "s");
    if (o.log_verbose > 0) server["log_level"] = "debug";
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", e.what()));
  }
  YAML::Emitter out;
  out << root;
  return LoadConfigText(out.c_str(), name, base_dir);
}

}  // namespace inferd::server

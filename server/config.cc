#include "server/config.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/message_text.h"
#include "base/status_macros.h"
#include "server/model_config_reader.h"
#include "server/yaml_reader.h"
#include "yaml-cpp/yaml.h"

namespace inferd::server {

const char* LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kTrace:
      return "trace";
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
  }
  return "?";
}

const char* WhenBusyName(WhenBusy when) { return when == WhenBusy::kWait ? "wait" : "fail_fast"; }

const char* ModelControlName(ModelControl control) {
  switch (control) {
    case ModelControl::kExplicit:
      return "explicit";
    case ModelControl::kPoll:
      return "poll";
    case ModelControl::kNone:
      break;
  }
  return "none";
}

std::optional<uint64_t> ResourceLimits::DefaultHostMemory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return std::nullopt;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
}

absl::Status ValidateModelName(absl::string_view name) {
  const bool ok = !name.empty() && name.size() <= static_cast<size_t>(kMaxModelNameLength) &&
                  name[0] != '.' && std::all_of(name.begin(), name.end(), [](char c) {
                    return absl::ascii_isalnum(c) || c == '_' || c == '-' || c == '.';
                  });
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "invalid model name ", QuoteForMessage(name), ": a model name is 1 to ", kMaxModelNameLength,
      " letters, digits, '_', '-' or '.', not starting with '.'"));
}

absl::Status ValidateAdminToken(absl::string_view token) {
  if (token.empty()) return absl::InvalidArgumentError("the admin token is empty");
  if (token.size() > static_cast<size_t>(kMaxAdminTokenBytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the admin token is ", token.size(), " bytes; at most ", kMaxAdminTokenBytes));
  }
  // Visible ASCII only: what an HTTP/2 header value carries unchanged; a token of (or with)
  // spaces is trimmed or mangled on the way and a spaces-only one is no secret.
  for (size_t i = 0; i < token.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(token[i]);
    if (c <= 0x20 || c >= 0x7f) {
      return absl::InvalidArgumentError(
          absl::StrCat("the admin token has a ", c == ' ' ? "space" : "control or non-ASCII byte",
                       " at offset ", i, "; use visible ASCII characters only (no whitespace)"));
    }
  }
  return absl::OkStatus();
}

const ModelConfig* Config::FindModel(absl::string_view name) const {
  for (const ModelConfig& m : models) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

ModelConfig DefaultModelConfig(absl::string_view name) {
  ModelConfig m;
  m.name = std::string(name);
  m.path = absl::StrCat(name, "/model.onnx");
  return m;
}

namespace {

using namespace config_internal;  // NOLINT: the YAML reading helpers, internal to config

// The environment LoadConfig resolves; ParseConfig passes none.
struct Environment {
  std::string base_dir;  // the config file's directory
};

// ---------------------------------------------------------------------------------------------
// server:

constexpr absl::string_view kServerKeys[] = {"http_address",
                                             "grpc_address",
                                             "admin_address",
                                             "metrics_address",
                                             "tls",
                                             "max_message_bytes",
                                             "admin_token",
                                             "admin_token_env",
                                             "model_repository",
                                             "drain_timeout",
                                             "log_level",
                                             "log_json",
                                             "load_all_models",
                                             "model_control",
                                             "repository_poll_interval",
                                             "limits"};
constexpr absl::string_view kTlsKeys[] = {"cert_file", "key_file"};
constexpr absl::string_view kLimitsKeys[] = {"max_loaded_models", "host_memory"};

bool IsEnvName(absl::string_view s) {
  if (s.empty() || absl::ascii_isdigit(s[0])) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return absl::ascii_isalnum(c) || c == '_'; });
}

std::string Resolve(const Environment& env, const std::string& path) {
  if (path.empty() || path[0] == '/' || env.base_dir.empty()) return path;
  return absl::StrCat(absl::StripSuffix(env.base_dir, "/"), "/", path);
}

// The lines of the server keys that checks across keys point at; 0: not written.
struct ServerLines {
  int server = 1;  // the `server:` key (line 1 when absent)
  int http = 0, grpc = 0, admin = 0, metrics = 0, tls = 0, token = 0, token_env = 0;
  int repository = 0;
  int model_control = 0;
};

// server.limits.
absl::Status ReadLimits(const Reader& r, const Field& f, ResourceLimits* out) {
  INFERD_ASSIGN_OR_RETURN(std::vector<Field> fields,
                          ReadMap(r, f.value, f.line, f.path, kLimitsKeys));
  for (const Field& g : fields) {
    if (g.key == "max_loaded_models") {
      INFERD_ASSIGN_OR_RETURN(out->max_loaded_models, ReadCount(r, g, 1));
      if (out->max_loaded_models > kMaxLoadedModelsBound) {
        return r.Error(g.line, g.path,
                       absl::StrCat("at most ", kMaxLoadedModelsBound, ", got ", Got(g.value)));
      }
    } else if (g.value.IsScalar() && g.value.Scalar() == "unbounded") {
      out->host_memory_bytes = std::nullopt;
    } else {
      INFERD_ASSIGN_OR_RETURN(uint64_t bytes, ReadBytes(r, g.value, g.line, g.path));
      if (bytes == 0) return r.Error(g.line, g.path, "expected a size above 0 or 'unbounded'");
      out->host_memory_bytes = bytes;
    }
  }
  return absl::OkStatus();
}

// server.http_address, grpc_address, admin_address or metrics_address.
absl::Status ReadAddress(const Reader& r, const Field& f, ServerLines* lines, ServerConfig* out) {
  INFERD_ASSIGN_OR_RETURN(
      std::string address,
      ReadScalar(r, f.value, f.line, f.path, "host:port (quote an IPv6 address: \"[::]:8001\")"));
  if (f.key == "http_address" && address == "none") {
    out->http_address.clear();
    lines->http = f.line;
    return absl::OkStatus();
  }
  absl::StatusOr<Address> parsed =
      ParseAddress(address, f.key == "grpc_address" || f.key == "admin_address");
  if (!parsed.ok()) return r.Error(f.line, f.path, parsed.status().message());
  if (f.key == "http_address") {
    out->http_address = address;
    lines->http = f.line;
  } else if (f.key == "grpc_address") {
    out->grpc_address = address;
    lines->grpc = f.line;
  } else if (f.key == "admin_address") {
    out->admin_address = address;
    lines->admin = f.line;
  } else {
    out->metrics_address = address;
    lines->metrics = f.line;
  }
  return absl::OkStatus();
}

// server.tls: both files or neither.
absl::Status ReadTls(const Reader& r, const Field& f, ServerConfig* out) {
  INFERD_ASSIGN_OR_RETURN(std::vector<Field> tls, ReadMap(r, f.value, f.line, f.path, kTlsKeys));
  TlsConfig t;
  for (const Field& g : tls) {
    INFERD_ASSIGN_OR_RETURN(std::string file, ReadString(r, g));
    if (file.empty()) return r.Error(g.line, g.path, "expected a file name, got ''");
    (g.key == "cert_file" ? t.cert_file : t.key_file) = file;
  }
  if (t.cert_file.empty() != t.key_file.empty()) {
    return r.Error(f.line, f.path, "set both cert_file and key_file (or neither)");
  }
  if (!t.cert_file.empty()) out->tls = t;
  return absl::OkStatus();
}

// pass 1: each key's value.
absl::Status ReadServer(const Reader& r, const YAML::Node& node, ServerLines* lines,
                        ServerConfig* out) {
  INFERD_ASSIGN_OR_RETURN(std::vector<Field> fields,
                          ReadMap(r, node, lines->server, "server", kServerKeys));
  for (const Field& f : fields) {
    if (f.key == "http_address" || f.key == "grpc_address" || f.key == "admin_address" ||
        f.key == "metrics_address") {
      INFERD_RETURN_IF_ERROR(ReadAddress(r, f, lines, out));
    } else if (f.key == "tls") {
      lines->tls = f.line;
      INFERD_RETURN_IF_ERROR(ReadTls(r, f, out));
    } else if (f.key == "max_message_bytes") {
      INFERD_ASSIGN_OR_RETURN(out->max_message_bytes, ReadBytes(r, f.value, f.line, f.path));
      if (out->max_message_bytes == 0 ||
          out->max_message_bytes > uint64_t{std::numeric_limits<int32_t>::max()}) {
        return r.Error(f.line, f.path,
                       absl::StrCat("must be between 1 and 2147483647 bytes (gRPC's limit), got ",
                                    Got(f.value)));
      }
    } else if (f.key == "admin_token") {
      lines->token = f.line;
      INFERD_ASSIGN_OR_RETURN(out->admin_token, ReadString(r, f));
      if (absl::Status s = ValidateAdminToken(out->admin_token); !s.ok()) {
        return r.Error(f.line, f.path, s.message());
      }
    } else if (f.key == "admin_token_env") {
      lines->token_env = f.line;
      INFERD_ASSIGN_OR_RETURN(out->admin_token_env, ReadString(r, f));
      if (!IsEnvName(out->admin_token_env)) {
        return r.Error(f.line, f.path,
                       absl::StrCat("expected an environment variable name, got ", Got(f.value)));
      }
    } else if (f.key == "model_repository") {
      lines->repository = f.line;
      INFERD_ASSIGN_OR_RETURN(out->model_repository, ReadString(r, f));
      if (out->model_repository.empty()) {
        return r.Error(f.line, f.path, "expected a directory, got ''");
      }
    } else if (f.key == "drain_timeout") {
      INFERD_ASSIGN_OR_RETURN(std::string text,
                              ReadScalar(r, f.value, f.line, f.path, "a duration such as 10s"));
      absl::StatusOr<absl::Duration> d = ParseDuration(text);
      if (!d.ok()) return r.Error(f.line, f.path, d.status().message());
      out->drain_timeout = *d;
    } else if (f.key == "log_level") {
      INFERD_ASSIGN_OR_RETURN(out->log_level, ReadEnum<LogLevel>(r, f,
                                                                 {{"trace", LogLevel::kTrace},
                                                                  {"debug", LogLevel::kDebug},
                                                                  {"info", LogLevel::kInfo},
                                                                  {"warn", LogLevel::kWarn},
                                                                  {"error", LogLevel::kError}}));
    } else if (f.key == "log_json") {
      INFERD_ASSIGN_OR_RETURN(out->log_json, ReadBool(r, f));
    } else if (f.key == "load_all_models") {
      INFERD_ASSIGN_OR_RETURN(out->load_all_models, ReadBool(r, f));
    } else if (f.key == "model_control") {
      lines->model_control = f.line;
      INFERD_ASSIGN_OR_RETURN(out->model_control,
                              ReadEnum<ModelControl>(r, f,
                                                     {{"none", ModelControl::kNone},
                                                      {"explicit", ModelControl::kExplicit},
                                                      {"poll", ModelControl::kPoll}}));
    } else if (f.key == "repository_poll_interval") {
      INFERD_ASSIGN_OR_RETURN(std::string text,
                              ReadScalar(r, f.value, f.line, f.path, "a duration such as 15s"));
      absl::StatusOr<absl::Duration> d = ParseDuration(text);
      if (!d.ok()) return r.Error(f.line, f.path, d.status().message());
      if (*d < absl::Milliseconds(100)) {
        return r.Error(f.line, f.path, absl::StrCat("at least 100ms, got ", Got(f.value)));
      }
      out->repository_poll_interval = *d;
    } else if (f.key == "limits") {
      INFERD_RETURN_IF_ERROR(ReadLimits(r, f, &out->limits));
    }
  }
  return absl::OkStatus();
}

// pass 2: rules across keys.
absl::Status CheckServer(const Reader& r, const ServerLines& lines, const ServerConfig& server) {
  if (lines.repository == 0) {
    return r.Error(lines.server, "server.model_repository",
                   "required (the directory holding <name>/model.onnx)");
  }
  if (lines.token != 0 && lines.token_env != 0) {
    return r.Error(std::max(lines.token, lines.token_env), "server",
                   "set admin_token or admin_token_env, not both");
  }
  const absl::StatusOr<Address> admin = ParseAddress(server.admin_address, true);
  if (!IsLoopback(*admin) && lines.token == 0 && lines.token_env == 0) {
    return r.Error(lines.admin != 0 ? lines.admin : lines.server, "server.admin_address",
                   absl::StrCat("'", server.admin_address,
                                "' is not a loopback address, so the admin API requires a bearer "
                                "token: set server.admin_token or server.admin_token_env (or bind "
                                "it to 127.0.0.1)"));
  }
  // Loading a model reads files and takes memory: over the network, only with a token.
  for (const auto& [key, address] :
       {std::pair<const char*, const std::string*>{"grpc_address", &server.grpc_address},
        {"http_address", &server.http_address}}) {
    if (address->empty()) continue;
    const absl::StatusOr<Address> parsed = ParseAddress(*address, true);
    if (server.model_control == ModelControl::kExplicit && !IsLoopback(*parsed) &&
        lines.token == 0 && lines.token_env == 0) {
      return r.Error(
          lines.model_control, "server.model_control",
          absl::StrCat("explicit model control on the non-loopback ", key, " '", *address,
                       "' requires a bearer token: set server.admin_token or "
                       "server.admin_token_env (model load/unload calls must then "
                       "carry it), or bind ",
                       key, " to 127.0.0.1"));
    }
  }
  // The listeners must not collide (port 0, "pick a free port", excepted).
  struct Listener {
    const char* key;
    const std::string* address;
    int line;
  };
  const Listener listeners[] = {{"http_address", &server.http_address, lines.http},
                                {"grpc_address", &server.grpc_address, lines.grpc},
                                {"metrics_address", &server.metrics_address, lines.metrics},
                                {"admin_address", &server.admin_address, lines.admin}};
  for (int i = 0; i < 4; ++i) {
    if (listeners[i].address->empty()) continue;  // http_address: none
    for (int j = 0; j < i; ++j) {
      if (listeners[j].address->empty()) continue;
      const Address a = *ParseAddress(*listeners[i].address, true);
      const Address b = *ParseAddress(*listeners[j].address, true);
      const bool clash = a.is_unix ? *listeners[i].address == *listeners[j].address
                                   : !b.is_unix && a.port != 0 && a.port == b.port &&
                                         (a.host == b.host || IsWildcard(a) || IsWildcard(b));
      if (clash) {
        return r.Error(listeners[i].line != 0 ? listeners[i].line : lines.server,
                       Join("server", listeners[i].key),
                       absl::StrCat("'", *listeners[i].address, "' collides with server.",
                                    listeners[j].key, " ('", *listeners[j].address, "')"));
      }
    }
  }
  return absl::OkStatus();
}

// pass 3 (LoadConfig only): paths against the config file's directory, the token variable.
absl::Status ResolveServer(const Reader& r, const ServerLines& lines, const Environment& env,
                           ServerConfig* out) {
  out->model_repository = Resolve(env, out->model_repository);
  struct stat st;
  const int stat_result = stat(out->model_repository.c_str(), &st);
  const int stat_errno = errno;
  if (stat_result != 0 || !S_ISDIR(st.st_mode)) {
    return r.Error(
        lines.repository, "server.model_repository",
        absl::StrCat("'", out->model_repository, "' is not a directory",
                     stat_result != 0 ? absl::StrCat(" (", std::strerror(stat_errno), ")") : ""));
  }
  if (out->tls) {
    for (std::string* file : {&out->tls->cert_file, &out->tls->key_file}) {
      *file = Resolve(env, *file);
      if (access(file->c_str(), R_OK) != 0) {
        return r.Error(lines.tls, "server.tls",
                       absl::StrCat("cannot read '", *file, "': ", std::strerror(errno)));
      }
    }
  }
  if (lines.token_env != 0) {
    const char* value = std::getenv(out->admin_token_env.c_str());
    if (value == nullptr || *value == '\0') {
      return r.Error(lines.token_env, "server.admin_token_env",
                     absl::StrCat("environment variable ", out->admin_token_env, " is ",
                                  value == nullptr ? "not set" : "empty"));
    }
    if (absl::Status s = ValidateAdminToken(value); !s.ok()) {
      return r.Error(
          lines.token_env, "server.admin_token_env",
          absl::StrCat("environment variable ", out->admin_token_env, ": ", s.message()));
    }
    out->admin_token = value;
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------
// The document

constexpr absl::string_view kTopKeys[] = {"server", "models"};

absl::StatusOr<std::shared_ptr<const Config>> Parse(absl::string_view text, absl::string_view file,
                                                    const Environment* env) {
  const Reader r(file);
  INFERD_ASSIGN_OR_RETURN(YAML::Node root, LoadDocument(r, text));
  auto config = std::make_shared<Config>();
  config->file = std::string(file);
  try {
    if (!root.IsNull() && !root.IsMap()) {
      return r.Error(LineOf(root, 1), "",
                     absl::StrCat("expected a map with keys server and models, got ", Got(root)));
    }
    INFERD_ASSIGN_OR_RETURN(std::vector<Field> fields, ReadMap(r, root, 1, "", kTopKeys));
    YAML::Node server;  // null unless present: its checks still run (model_repository)
    ServerLines lines;
    for (const Field& f : fields) {
      if (f.key == "server") {
        server = f.value;
        lines.server = f.line;
      } else {
        INFERD_RETURN_IF_ERROR(ParseModels(r, f.value, f.line, &config->models));
      }
    }
    INFERD_RETURN_IF_ERROR(ReadServer(r, server, &lines, &config->server));
    INFERD_RETURN_IF_ERROR(CheckServer(r, lines, config->server));
    if (env != nullptr) INFERD_RETURN_IF_ERROR(ResolveServer(r, lines, *env, &config->server));
  } catch (const YAML::Exception& e) {
    // Not expected (every access checks the node's type first); a bad file must not crash.
    return r.Error(e.mark.is_null() ? 1 : e.mark.line + 1, "", e.msg);
  }
  return std::shared_ptr<const Config>(std::move(config));
}

}  // namespace

absl::StatusOr<std::shared_ptr<const Config>> ParseConfig(
    absl::string_view yaml_text, absl::string_view file_name_for_messages) {
  return Parse(yaml_text, file_name_for_messages, nullptr);
}

absl::StatusOr<std::shared_ptr<const Config>> LoadConfig(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    const int err = errno;
    const std::string message =
        absl::StrCat("cannot read config file '", path, "': ", std::strerror(err));
    return err == ENOENT ? absl::NotFoundError(message) : absl::FailedPreconditionError(message);
  }
  std::string text;
  char buffer[1 << 14];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), f)) > 0) text.append(buffer, n);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) {
    return absl::FailedPreconditionError(absl::StrCat("cannot read config file '", path, "'"));
  }
  Environment env;
  const size_t slash = path.rfind('/');
  if (slash != std::string::npos) env.base_dir = path.substr(0, slash == 0 ? 1 : slash);
  return Parse(text, path, &env);
}

absl::StatusOr<std::shared_ptr<const Config>> LoadConfigText(absl::string_view yaml_text,
                                                             absl::string_view file_name,
                                                             const std::string& base_dir) {
  Environment env;
  env.base_dir = base_dir;
  return Parse(yaml_text, file_name, &env);
}

}  // namespace inferd::server

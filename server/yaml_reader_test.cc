// The YAML reading rules (yaml_reader.cc), through ParseConfig: every error names the file, the
// line and the key path; types, unknown and duplicate keys, byte sizes and devices, one document.
#include "server/config.h"

#include <string>

#include "gtest/gtest.h"
#include "server/config_testing.h"

namespace inferd::server {
namespace {

using config_testing::ErrorOf;

TEST(YamlReaderTest, BadValueWithLine) {
  EXPECT_EQ(ErrorOf(R"y(server:
  model_repository: m
models:
  - name: a
  - name: b
    threads: two
)y"),
            "inferd.yaml:6: models[1].threads: expected a positive integer, got 'two'");
  EXPECT_EQ(ErrorOf("server: {model_repository: m}\nmodels: [{name: a, threads: 0}]\n"),
            "inferd.yaml:2: models[0].threads: expected a positive integer, got '0'");
  EXPECT_EQ(ErrorOf("server: {model_repository: m}\nmodels: [{name: a, queue_length: -1}]\n"),
            "inferd.yaml:2: models[0].queue_length: expected a non-negative integer, got '-1'");
  EXPECT_EQ(ErrorOf("server: {model_repository: m}\nmodels: [{name: a, max_concurrent_runs: "
                    "99999999999}]\n"),
            "inferd.yaml:2: models[0].max_concurrent_runs: expected a positive integer up to "
            "2147483647, got '99999999999'");
  EXPECT_EQ(ErrorOf("server: {model_repository: m}\nmodels: [{name: a, threads: [1]}]\n"),
            "inferd.yaml:2: models[0].threads: expected a positive integer, got a list");
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  log_json: yes\n"),
            "inferd.yaml:3: server.log_json: expected true or false, got 'yes'");
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  log_level: verbose\n"),
            "inferd.yaml:3: server.log_level: expected one of trace, debug, info, warn, error; "
            "got 'verbose'");
  EXPECT_EQ(ErrorOf("server: {model_repository: m}\nmodels: [{name: a, when_busy: drop}]\n"),
            "inferd.yaml:2: models[0].when_busy: expected one of wait, fail_fast; got 'drop'");
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  tls: yes\n"),
            "inferd.yaml:3: server.tls: expected a map, got 'yes'");
  EXPECT_EQ(ErrorOf("server:\n  model_repository:\n"),
            "inferd.yaml:2: server.model_repository: expected a string, got nothing");
}

TEST(YamlReaderTest, BadByteSizeDurationDevice) {
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  max_message_bytes: 6gib\n"),
            "inferd.yaml:3: server.max_message_bytes: unknown unit 'gib' in '6gib' (units, "
            "case-sensitive: B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)");
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  max_message_bytes: 4GiB\n"),
            "inferd.yaml:3: server.max_message_bytes: must be between 1 and 2147483647 bytes "
            "(gRPC's limit), got '4GiB'");
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  drain_timeout: 10\n"),
            "inferd.yaml:3: server.drain_timeout: expected a duration such as 250ms, 10s or 2m, "
            "got '10'");
  EXPECT_EQ(ErrorOf(R"y(server: {model_repository: m}
models:
  - name: a
    partition:
      devices:
        cpu:0: 1GiB
        gpu:0: 1GiB
)y"),
            "inferd.yaml:7: models[0].partition.devices.gpu:0: unknown device 'gpu:0': expected "
            "cpu, cpu:N or cuda:N");
  EXPECT_EQ(ErrorOf(R"y(server: {model_repository: m}
models:
  - name: a
    partition:
      devices: {cpu: 1GiB, cpu:0: 2GiB}
)y"),
            "inferd.yaml:5: models[0].partition.devices.cpu:0: device cpu:0 is listed twice");
  EXPECT_EQ(ErrorOf(R"y(server: {model_repository: m}
models:
  - name: a
    partition: {fallback_device: cuda}
)y"),
            "inferd.yaml:4: models[0].partition.fallback_device: unknown device 'cuda': expected "
            "cpu, cpu:N or cuda:N");
  EXPECT_EQ(ErrorOf(R"y(server: {model_repository: m}
models:
  - name: a
    retention_caps:
      cpu:0: {execution: lots}
)y"),
            "inferd.yaml:5: models[0].retention_caps.cpu:0.execution: expected a byte size such "
            "as 512MiB, 6GiB or 1048576, got 'lots'");
  EXPECT_EQ(ErrorOf(R"y(server: {model_repository: m}
models:
  - name: a
    retention_caps:
      cpu:0: {exec: 1MiB}
)y"),
            "inferd.yaml:5: models[0].retention_caps.cpu:0.exec: unknown key (known keys: "
            "execution, io)");
}

TEST(YamlReaderTest, UnknownKeys) {
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  grcp_address: 0.0.0.0:1\n"),
            "inferd.yaml:3: server.grcp_address: unknown key; did you mean 'grpc_address'?");
  EXPECT_EQ(ErrorOf("server: {model_repository: m}\nmodles: []\n"),
            "inferd.yaml:2: modles: unknown key; did you mean 'models'?");
  EXPECT_EQ(ErrorOf("server: {model_repository: m}\nmodels:\n  - name: a\n    gpu: true\n"),
            "inferd.yaml:4: models[0].gpu: unknown key (known keys: name, path, version, "
            "threads, max_concurrent_runs, queue_length, when_busy, pre_allocate, "
            "fixed_input_shapes, max_input_shapes, partition, retention_caps, enable_fusions, "
            "max_batch_size, dynamic_batching, generation)");
  EXPECT_EQ(ErrorOf(R"y(server: {model_repository: m}
models:
  - name: a
    partition:
      device: {cpu: 1GiB}
)y"),
            "inferd.yaml:5: models[0].partition.device: unknown key; did you mean 'devices'?");
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  tls: {cert_file: a, key: b}\n"),
            "inferd.yaml:3: server.tls.key: unknown key (known keys: cert_file, key_file)");
}

TEST(YamlReaderTest, DuplicateKeys) {
  EXPECT_EQ(ErrorOf("server:\n  model_repository: m\n  log_json: true\n  log_json: false\n"),
            "inferd.yaml:4: server.log_json: duplicate key (first at line 3)");
}

TEST(YamlReaderTest, OneValidDocument) {
  EXPECT_EQ(ErrorOf("server: {model_repository: m}\n---\nserver: {}\n"),
            "inferd.yaml:3: only one YAML document is allowed per file");
  EXPECT_EQ(ErrorOf("server:\n  model_repository: [m\n  log_json: true\n"),
            "inferd.yaml:3: invalid YAML: end of sequence flow not found");
}

// Found by //tests/fuzz:config_fuzz_test: yaml-cpp 0.7's LoadAll never returns on this input
// (it keeps reporting empty documents, allocating each; jbeder/yaml-cpp#1319).
TEST(YamlReaderTest, InputThatLoopsYamlCppsLoadAllIsRefused) {
  EXPECT_NE(ErrorOf(",\n"), "");
  EXPECT_NE(ErrorOf("server:\n  model_repository: m\n    max# a comment\n: 0\n"), "");
}

}  // namespace
}  // namespace inferd::server

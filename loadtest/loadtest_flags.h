// Every flag of the loadtest binary, defined once (loadtest_flags.cc) for its two commands: the
// load run (loadtest_main.cc) and `loadtest admin VERB` (admin_command.cc), which share --model,
// --admin, --admin-token, --server-pid, --json and --duration. Each command lists the flags it
// takes in its CommandLineSpec (base/flags.h); README.md describes them all.
#ifndef INFERD_LOADTEST_LOADTEST_FLAGS_H_
#define INFERD_LOADTEST_LOADTEST_FLAGS_H_

#include <cstdint>
#include <string>

#include "absl/flags/declare.h"
#include "base/flags.h"
#include "loadtest/flags.h"

// The server and the model.
ABSL_DECLARE_FLAG(std::string, target);
ABSL_DECLARE_FLAG(std::string, model);
ABSL_DECLARE_FLAG(std::string, model_version);
// Load.
ABSL_DECLARE_FLAG(int, concurrency);
ABSL_DECLARE_FLAG(double, rate);
ABSL_DECLARE_FLAG(int, max_outstanding);
ABSL_DECLARE_FLAG(int64_t, requests);
ABSL_DECLARE_FLAG(inferd::loadtest::Seconds, duration);
ABSL_DECLARE_FLAG(int64_t, warmup);
ABSL_DECLARE_FLAG(inferd::loadtest::Seconds, warmup_duration);
ABSL_DECLARE_FLAG(inferd::loadtest::Seconds, timeout);
ABSL_DECLARE_FLAG(int, connections);
ABSL_DECLARE_FLAG(int64_t, slow_read_ms);
ABSL_DECLARE_FLAG(int64_t, max_errors);
// Requests.
ABSL_DECLARE_FLAG(inferd::RepeatedFlag, shape);
ABSL_DECLARE_FLAG(inferd::RepeatedFlag, input);
ABSL_DECLARE_FLAG(inferd::RepeatedFlag, datatype);
ABSL_DECLARE_FLAG(bool, no_metadata);
ABSL_DECLARE_FLAG(inferd::RepeatedFlag, output);
ABSL_DECLARE_FLAG(int64_t, seed);
ABSL_DECLARE_FLAG(int64_t, int_max);
// Verification.
ABSL_DECLARE_FLAG(std::string, verify);
ABSL_DECLARE_FLAG(inferd::RepeatedFlag, reference);
ABSL_DECLARE_FLAG(double, rtol);
ABSL_DECLARE_FLAG(double, atol);
// The server's side.
ABSL_DECLARE_FLAG(std::string, admin);
ABSL_DECLARE_FLAG(std::string, admin_token);
ABSL_DECLARE_FLAG(std::string, admin_model);
ABSL_DECLARE_FLAG(int64_t, server_pid);
ABSL_DECLARE_FLAG(bool, reset_peak);
ABSL_DECLARE_FLAG(bool, trim_after);
ABSL_DECLARE_FLAG(int64_t, sample_ms);
// Output.
ABSL_DECLARE_FLAG(std::string, json);
ABSL_DECLARE_FLAG(bool, quiet);
ABSL_DECLARE_FLAG(bool, allow_errors);
ABSL_DECLARE_FLAG(inferd::loadtest::Seconds, wait_ready);
// `loadtest admin churn` only.
ABSL_DECLARE_FLAG(inferd::loadtest::Seconds, interval);
ABSL_DECLARE_FLAG(inferd::loadtest::Seconds, sample);
ABSL_DECLARE_FLAG(std::string, caps);

#endif  // INFERD_LOADTEST_LOADTEST_FLAGS_H_

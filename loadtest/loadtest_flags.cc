#include "loadtest/loadtest_flags.h"

#include "absl/flags/flag.h"

using inferd::RepeatedFlag;
using inferd::loadtest::Seconds;

ABSL_FLAG(std::string, target, "",
          "the server's gRPC address, host:port on this machine (required)");
ABSL_FLAG(std::string, model, "", "the model to call (required); admin: the model's arenas only");
ABSL_FLAG(std::string, model_version, "", "the model version (default: the server's choice)");

ABSL_FLAG(int, concurrency, 1, "closed loop: calls in flight, one stream each");
ABSL_FLAG(double, rate, 0, "open loop at R requests/s (0: closed loop)");
ABSL_FLAG(int, max_outstanding, 1024, "open loop: calls in flight at most");
ABSL_FLAG(int64_t, requests, 1000, "measured requests");
ABSL_FLAG(Seconds, duration, Seconds(absl::Seconds(60)),
          "stop the measured part after D (admin churn: run for D)");
ABSL_FLAG(int64_t, warmup, 0, "warm-up requests before the measured part");
ABSL_FLAG(Seconds, warmup_duration, Seconds(absl::Seconds(60)), "stop the warm-up after D");
ABSL_FLAG(Seconds, timeout, Seconds(absl::Seconds(60)), "deadline of each call");
ABSL_FLAG(int, connections, 1, "gRPC channels (TCP connections), streams spread over them");
ABSL_FLAG(int64_t, slow_read_ms, 0, "sleep MS in each completion before reading the response");
ABSL_FLAG(int64_t, max_errors, 1000, "stop the run after N failed calls");

ABSL_FLAG(RepeatedFlag, shape, {}, "NAME:D0,D1,... (repeat a name to alternate shapes)");
ABSL_FLAG(RepeatedFlag, input, {}, "NAME=random|zeros|const:V|npy:PATH");
ABSL_FLAG(RepeatedFlag, datatype, {}, "NAME:FP32 (with --no-metadata)");
ABSL_FLAG(bool, no_metadata, false, "do not ask ModelMetadata: inputs from --shape / --input");
ABSL_FLAG(RepeatedFlag, output, {}, "request only this output");
ABSL_FLAG(int64_t, seed, 1, "seed of the random inputs");
ABSL_FLAG(int64_t, int_max, 64, "random integer inputs are in [0, N)");

ABSL_FLAG(std::string, verify, "first", "first|echo|ref|none");
ABSL_FLAG(RepeatedFlag, reference, {}, "OUTPUT=PATH.npy (with --verify ref)");
ABSL_FLAG(double, rtol, 0, "relative tolerance of --verify ref");
ABSL_FLAG(double, atol, 0, "absolute tolerance of --verify ref");

ABSL_FLAG(std::string, admin, "", "the server's admin address (loopback)");
ABSL_FLAG(std::string, admin_token, "", "sends 'authorization: Bearer T' to the admin API");
ABSL_FLAG(std::string, admin_model, "",
          "the model whose arenas are sampled (default: --model; '*' for all)");
ABSL_FLAG(int64_t, server_pid, 0, "the server's pid, to sample its VmRSS and page faults");
ABSL_FLAG(bool, reset_peak, false, "ResetPeak before the measured part (needs --admin)");
ABSL_FLAG(bool, trim_after, false, "Trim after the measured part (needs --admin)");
ABSL_FLAG(int64_t, sample_ms, 250, "sample the server every MS");

ABSL_FLAG(std::string, json, "", "write the report as JSON to FILE");
ABSL_FLAG(bool, quiet, false, "print nothing but errors");
ABSL_FLAG(bool, allow_errors, false, "exit 0 even when calls failed");
ABSL_FLAG(Seconds, wait_ready, Seconds(absl::Seconds(10)), "wait at most D for ServerLive");

ABSL_FLAG(Seconds, interval, Seconds(absl::Seconds(2)), "churn: one Trim or cap change every I");
ABSL_FLAG(Seconds, sample, Seconds(absl::Milliseconds(250)), "churn: sample the server every S");
ABSL_FLAG(std::string, caps, "0,1MiB,16MiB,unbounded", "churn: the caps to cycle through");

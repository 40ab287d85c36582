// `loadtest admin VERB`: the admin API from the command line, for the scenario scripts.
//
//   loadtest admin stats        --admin ADDR [--model M]       GetMemoryStats, as JSON
//   loadtest admin trim         --admin ADDR [--model M]       Trim, as JSON
//   loadtest admin reset-peak   --admin ADDR [--model M]       ResetPeak, as JSON
//   loadtest admin cap=4MiB     --admin ADDR [--model M]       SetRetentionCap (cap=unbounded)
//   loadtest admin churn        --admin ADDR --duration 180s --interval 2s
//                               --caps 0,1MiB,16MiB,unbounded [--server-pid PID] [--json FILE]
//
// churn alternates Trim and SetRetentionCap (cycling through --caps) on every arena every
// interval, for the duration, while sampling the server (server_sampler.h); it stops by itself.
// Every command refuses non-loopback addresses. --admin-token T sends "authorization: Bearer T".
#ifndef INFERD_LOADTEST_ADMIN_COMMAND_H_
#define INFERD_LOADTEST_ADMIN_COMMAND_H_

namespace inferd::loadtest {

// argv[first] is the verb. Returns the process exit status.
int AdminMain(int argc, char** argv, int first);

}  // namespace inferd::loadtest

#endif  // INFERD_LOADTEST_ADMIN_COMMAND_H_

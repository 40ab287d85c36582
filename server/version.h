// inferd's version, reported by ServerMetadata and the start-up log.
#ifndef INFERD_SERVER_VERSION_H_
#define INFERD_SERVER_VERSION_H_

namespace inferd::server {

inline constexpr char kInferdName[] = "inferd";
inline constexpr char kInferdVersion[] = "0.1.0";

}  // namespace inferd::server

#endif  // INFERD_SERVER_VERSION_H_

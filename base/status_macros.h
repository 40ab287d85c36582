// Small helpers for propagating absl::Status / absl::StatusOr through functions that return
// them. No exceptions anywhere on the request path: errors travel as values.
//
// Example:
//   absl::StatusOr<Plan> MakePlan(const Graph& g) {
//     INFERD_RETURN_IF_ERROR(Validate(g));
//     INFERD_ASSIGN_OR_RETURN(std::vector<int> order, TopologicalOrder(g));
//     ...
//   }
#ifndef INFERD_BASE_STATUS_MACROS_H_
#define INFERD_BASE_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define INFERD_STATUS_CONCAT_INNER_(a, b) a##b
#define INFERD_STATUS_CONCAT_(a, b) INFERD_STATUS_CONCAT_INNER_(a, b)

#define INFERD_RETURN_IF_ERROR(expr)                 \
  do {                                               \
    ::absl::Status inferd_status_ = (expr);          \
    if (!inferd_status_.ok()) return inferd_status_; \
  } while (0)

#define INFERD_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return std::move(tmp).status();      \
  lhs = std::move(tmp).value()

#define INFERD_ASSIGN_OR_RETURN(lhs, expr) \
  INFERD_ASSIGN_OR_RETURN_IMPL_(INFERD_STATUS_CONCAT_(inferd_statusor_, __LINE__), lhs, expr)

#endif  // INFERD_BASE_STATUS_MACROS_H_

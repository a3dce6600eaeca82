#pragma once

// The status-log row a claim's end writes, decided here only (finish_jobs passes it to both statements).
//
// Decisions:
//   - delivered -> pos_accepted (source pos, actor: the POS order id); rejected -> pos_rejected (pos);
//     auth_failed -> forward_auth_failed, dead -> forward_dead, cancelled -> forward_cancelled (hub). Each but
//     delivered carries the error as its detail (cut to 500 characters by PostgreSQL).
//   - pending (a retry) and any other state write no row.

#include <optional>
#include <string>
#include <string_view>

namespace hub::forward {

struct JobResult;

/// One hub.order_status_log row of a claim's end.
struct StatusLogRow {
    std::string_view status;
    std::string_view source;
    std::string actor;   ///< empty: none
    std::string detail;  ///< empty: none
};

/// The row `result` writes, or nullopt.
std::optional<StatusLogRow> status_log_row(const JobResult& result);

}  // namespace hub::forward

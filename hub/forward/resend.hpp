#pragma once

#include <optional>
#include <string>

#include "hub/forward/job_state.hpp"

namespace pqxx {
class transaction_base;
}

namespace hub::forward {

/// What a resend request came to.
struct ResendOutcome {
    enum class Kind { requeued, not_found, cancelled, already_queued, staff_decides };
    Kind kind = Kind::not_found;
    JobState previous_state = JobState::pending;  ///< the forwarding job's state before (requeued, already_queued)
    std::string branch_id;                        ///< the order's branch (when found)
    /// A one-line explanation for the operator.
    std::string message() const;
};

/// The rule of `orderhub order resend` and of the dashboard's resend: an order whose job is rejected, dead,
/// auth_failed or delivered goes back to pending, due now, with its attempts reset, and a `forward_requeued` row
/// (source `operator`) is appended to the status log with `actor` (nullopt: the database user). A cancelled
/// order or one already queued (pending, in flight) is left alone, and so is one of a manual-accept branch that
/// waits for, or was refused by, the branch's staff (awaiting_acceptance, merchant_rejected, timed_out). Runs inside
/// the caller's transaction, which the caller commits; locks the job row.
ResendOutcome resend_order(pqxx::transaction_base& tx, const std::string& order_id,
                           const std::optional<std::string>& actor);

}  // namespace hub::forward

#pragma once

// A forwarding job's state (hub.forward_jobs.state, whose CHECK lists the same words) and an attempt's outcome. The
// code carries the enums; the text exists only at the edge (SQL parameters and rows, log fields, metric labels),
// through one table each.

#include <array>
#include <optional>
#include <string_view>

#include "common/text/names.hpp"

namespace hub::forward {

enum class JobState {
    pending,      ///< waiting for its due time (a first send or a retry)
    in_flight,    ///< claimed by a forwarder
    delivered,    ///< the POS took it
    rejected,     ///< the POS refused it for good
    auth_failed,  ///< no token the POS accepts
    dead,         ///< given up after kMaxAttempts or the give-up time
    cancelled,    ///< cancelled before it was sent
    // Manual accept (sql/hub/0017_manual_accept.sql): never sent unless the branch's staff accept it.
    awaiting_acceptance,  ///< held for the branch's staff until its accept deadline
    merchant_rejected,    ///< a user of the branch rejected it
    timed_out,            ///< no decision before the accept deadline
};

/// The words of hub.forward_jobs.state, in the order of JobState.
inline constexpr std::array<std::string_view, 10> kJobStateNames = {
    "pending", "in_flight", "delivered",           "rejected",          "auth_failed",
    "dead",    "cancelled", "awaiting_acceptance", "merchant_rejected", "timed_out"};

/// The state's word in hub.forward_jobs.state.
constexpr std::string_view to_text(JobState state) { return common::text::name_of(kJobStateNames, state); }

/// The state of a word from hub.forward_jobs.state, or nullopt for any other text (e.g. "" for no job).
constexpr std::optional<JobState> job_state_from_text(std::string_view text) {
    return common::text::value_named<JobState>(kJobStateNames, text);
}

/// Whether a job in `state` still waits to be sent (pending or in flight).
constexpr bool is_queued(JobState state) { return state == JobState::pending || state == JobState::in_flight; }

/// Whether a job in `state` is the branch staff's to decide, or was decided by them or their deadline: held,
/// rejected by the merchant, or timed out (never sent by the hub on its own).
constexpr bool is_held_for_staff(JobState state) {
    return state == JobState::awaiting_acceptance || state == JobState::merchant_rejected ||
           state == JobState::timed_out;
}

/// How one HTTP exchange with the POS ended (hub.pos_delivery_attempts.outcome): an order's verdict, or a login's.
enum class AttemptOutcome { delivered, rejected, unauthorized, retry, logged_in, login_failed };

/// The words of hub.pos_delivery_attempts.outcome, in the order of AttemptOutcome.
inline constexpr std::array<std::string_view, 6> kAttemptOutcomeNames = {"delivered", "rejected",  "unauthorized",
                                                                         "retry",     "logged_in", "login_failed"};

/// The outcome's word in hub.pos_delivery_attempts.outcome (and the attempt log and metric).
constexpr std::string_view to_text(AttemptOutcome outcome) {
    return common::text::name_of(kAttemptOutcomeNames, outcome);
}

/// Whether the exchange was a login (`POST /api/login`) rather than an order.
constexpr bool is_login(AttemptOutcome outcome) {
    return outcome == AttemptOutcome::logged_in || outcome == AttemptOutcome::login_failed;
}

}  // namespace hub::forward

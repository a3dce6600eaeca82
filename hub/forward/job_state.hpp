#pragma once

// A forwarding job's state (hub.forward_jobs.state, whose CHECK lists the same words) and an attempt's outcome. The
// code carries the enums; the text exists only at the edge (SQL parameters and rows, log fields, metric labels),
// through one table each.

#include <optional>
#include <string_view>

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

struct JobStateText {
    JobState state;
    std::string_view text;
};

inline constexpr JobStateText kJobStateTexts[] = {
    {JobState::pending, "pending"},
    {JobState::in_flight, "in_flight"},
    {JobState::delivered, "delivered"},
    {JobState::rejected, "rejected"},
    {JobState::auth_failed, "auth_failed"},
    {JobState::dead, "dead"},
    {JobState::cancelled, "cancelled"},
    {JobState::awaiting_acceptance, "awaiting_acceptance"},
    {JobState::merchant_rejected, "merchant_rejected"},
    {JobState::timed_out, "timed_out"},
};

/// The state's word in hub.forward_jobs.state.
constexpr std::string_view to_text(JobState state) {
    for (const auto& e : kJobStateTexts)
        if (e.state == state) return e.text;
    return {};
}

/// The state of a word from hub.forward_jobs.state, or nullopt for any other text (e.g. "" for no job).
constexpr std::optional<JobState> job_state_from_text(std::string_view text) {
    for (const auto& e : kJobStateTexts)
        if (e.text == text) return e.state;
    return std::nullopt;
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

struct AttemptOutcomeText {
    AttemptOutcome outcome;
    std::string_view text;
};

inline constexpr AttemptOutcomeText kAttemptOutcomeTexts[] = {
    {AttemptOutcome::delivered, "delivered"},       {AttemptOutcome::rejected, "rejected"},
    {AttemptOutcome::unauthorized, "unauthorized"}, {AttemptOutcome::retry, "retry"},
    {AttemptOutcome::logged_in, "logged_in"},       {AttemptOutcome::login_failed, "login_failed"},
};

/// The outcome's word in hub.pos_delivery_attempts.outcome (and the attempt log and metric).
constexpr std::string_view to_text(AttemptOutcome outcome) {
    for (const auto& e : kAttemptOutcomeTexts)
        if (e.outcome == outcome) return e.text;
    return {};
}

/// Whether the exchange was a login (`POST /api/login`) rather than an order.
constexpr bool is_login(AttemptOutcome outcome) {
    return outcome == AttemptOutcome::logged_in || outcome == AttemptOutcome::login_failed;
}

}  // namespace hub::forward

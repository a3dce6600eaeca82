#pragma once

#include <chrono>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "hub/forward/bulkhead.hpp"
#include "hub/forward/job_state.hpp"
#include "hub/forward/mapping.hpp"

namespace pqxx {
class connection_base;
}

namespace hub::forward {

/// A brand's POS connection as stored (secrets still sealed).
struct PosConnection {
    std::string brand_id;
    std::string environment;
    std::string base_url;
    std::string token_sealed;     ///< empty when none
    std::string email;            ///< empty when no credentials
    std::string password_sealed;  ///< empty when no credentials
    std::string ca_file;
};

/// A job this forwarder holds, with everything needed to send it.
struct ClaimedJob {
    std::string order_id;
    int attempt = 0;  ///< this attempt's number (1 for the first)
    std::string delivery_status;
    double stored_at = 0;    ///< the order's storage, Unix seconds (forwarding latency)
    bool scheduled = false;  ///< a scheduled order (its wait is on purpose)
    std::string request_id;  ///< the platform request's id that created the order (sent to the POS), or empty
    PosSource source;
    std::optional<PosConnection> connection;
};

/// One HTTP exchange with the POS, for hub.pos_delivery_attempts.
struct AttemptRecord {
    std::string url;
    unsigned http_status = 0;  ///< 0: no HTTP answer
    std::int64_t latency_ms = 0;
    AttemptOutcome outcome = AttemptOutcome::retry;
    std::string error;
    std::string response_excerpt;
    std::int64_t started_us = 0;  ///< when the exchange began, Unix µs (hub.pos_delivery_attempts.attempted_at)
};

/// How a claim ends.
struct JobResult {
    std::string order_id;
    JobState state = JobState::pending;  ///< delivered, pending (retry), rejected, auth_failed, dead, cancelled
    std::chrono::milliseconds delay{0};
    std::string pos_order_id;
    std::string error;
    std::vector<AttemptRecord> attempts;
    int first_attempt = 1;
    std::optional<std::string> new_token_sealed;  ///< a token from a fresh login, stored for the brand
};

/// Claims due jobs for `forwarder` by `plan` (FOR UPDATE SKIP LOCKED, lease `lease`; jobs due longer than
/// `give_up` are left to give_up_jobs) and loads them.
std::vector<ClaimedJob> claim_jobs(pqxx::connection_base& conn, const std::string& forwarder, const ClaimPlan& plan,
                                   std::chrono::seconds lease, const std::string& environment,
                                   std::chrono::seconds give_up);
/// Claims up to `limit` due jobs, at most `limit` of any brand, with the default give-up time of 30 minutes.
std::vector<ClaimedJob> claim_jobs(pqxx::connection_base& conn, const std::string& forwarder, int limit,
                                   std::chrono::seconds lease, const std::string& environment);

/// Ends a claim in one transaction: the job's new state, the attempts, a status-log row for outcomes an
/// auditor cares about, and a refreshed token. Returns false when the claim had been lost; the attempts are then
/// still recorded, unless `retrying` (an earlier try may have committed them already).
bool finish_job(pqxx::connection_base& conn, const std::string& forwarder, const JobResult& result,
                const ClaimedJob& job, bool retrying = false);

/// One claim's end, as handed to finish_jobs.
struct FinishRequest {
    std::string forwarder;
    JobResult result;
    std::optional<std::pair<std::string, std::string>> token_owner;  ///< brand, environment of new_token_sealed
    bool retrying = false;
};

/// Whether a claim was still this forwarder's when it ended.
struct FinishOutcome {
    bool owned = false;
};

/// Ends many claims in one transaction, each as finish_job would (a savepoint each, so one failing claim does
/// not take the others with it): sets `owned[i]`, or `errors[i]` for a claim that failed on its own. Throws
/// when the transaction as a whole failed (nothing was recorded). Group commit for the forwarder's answers.
void finish_jobs(pqxx::connection_base& conn, std::span<FinishRequest> requests, std::span<FinishOutcome> owned,
                 std::span<std::exception_ptr> errors);

/// Gives back every job `forwarder` still holds (graceful stop).
void release_jobs(pqxx::connection_base& conn, const std::string& forwarder);

/// Gives back claims that were not sent (their claim is not counted as an attempt).
void give_back_jobs(pqxx::connection_base& conn, const std::string& forwarder, const std::vector<std::string>& orders);

/// Extends the lease of every job `forwarder` holds to `lease` from now.
void renew_leases(pqxx::connection_base& conn, const std::string& forwarder, std::chrono::seconds lease);

/// Ends as dead the pending jobs due longer than `give_up` (with a forward_dead status row): how many.
std::int64_t give_up_jobs(pqxx::connection_base& conn, std::chrono::seconds give_up);

/// Ends as timed_out the jobs held for acceptance past their deadline (with a time_out status row, once each
/// however many hubs sweep): how many.
std::int64_t time_out_held_jobs(pqxx::connection_base& conn);

/// One POS connection of an environment: its brand, base URL and CA file, and its due jobs waiting.
struct PosHostRow {
    std::string brand_id;
    std::string base_url;
    std::string ca_file;
    std::int64_t due = 0;
};
std::vector<PosHostRow> pos_hosts(pqxx::connection_base& conn, const std::string& environment);

/// Records that the breaker of `host` opened (`open`, with `error`) or closed, for each of `brands` in
/// `environment` (hub.pos_connection_health, read by the dashboard).
void write_pos_health(pqxx::connection_base& conn, const std::string& environment, const std::string& host, bool open,
                      const std::string& error, const std::vector<std::string>& brands, const std::string& forwarder);

}  // namespace hub::forward

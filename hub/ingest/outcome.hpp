#pragma once

#include "common/http/error.hpp"

// The outcomes of a webhook request, and what each one means everywhere it shows (product.md section 4).
//
// Decisions:
//   - One row per kind in kOutcomes: the HTTP status and error code of the answer, the inbox row's outcome and
//     error code, and the word of the access log and of orderhub_webhook_requests_total. The endpoint renders
//     from it (hub/ingest/webhook.cpp), the storage path writes inbox rows from it (hub/ingest/store.cpp), and the
//     group-commit statement takes its inbox values and kind numbers from it (hub/db/insert_orders.cpp).
//   - Refusals whose error code is the validator's or the signature check's (unknown_event, validation_failed,
//     signature_*) carry that code in the result; the table gives the rest.
//   - An order_updated that is appended records `applied` or `logged` in the inbox: the row's `inbox_outcome`
//     and `inbox_outcome_unapplied`.
//   - unknown_key, rate_limited and method_not_allowed are answered before anything is recorded: no inbox row.
//   - replayed answers what a request with the same webhook-id got (hub/ingest/webhook_ids.hpp).

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "hub/ingest/validate.hpp"

namespace hub::ingest {

/// What became of one webhook request.
enum class Kind : std::uint8_t {
    created,             ///< order_created stored
    duplicate,           ///< order_created: an exact repeat
    conflict,            ///< order_created: payload.id used for another order
    unknown_branch,      ///< order_created: no such branch
    appended,            ///< order_updated: a new status-log row (applied or not)
    repeated,            ///< order_updated: an exact retry, nothing new
    order_not_found,     ///< order_updated: no such order for this partner
    branch_mismatch,     ///< order_updated: branch_id differs from the order's
    invalid_json,        ///< the body is not JSON
    not_an_object,       ///< the body is JSON but not an object
    unknown_event,       ///< event missing or not a known event
    validation_failed,   ///< the body breaks the interface's rules
    unauthorized,        ///< a signing partner's request without a valid signature
    unknown_key,         ///< no enabled partner has this key
    rate_limited,        ///< the partner sent more than its rate
    method_not_allowed,  ///< not a POST
    unavailable,         ///< the store is unavailable
    error,               ///< a bug: the request was not stored
    replayed,            ///< a signed request whose webhook-id was answered before: that answer again
};

/// One kind's meaning at the edge, in the inbox and in the metrics.
struct OutcomeRow {
    Kind kind;
    unsigned http_status;
    bool answers_order_id;         ///< a success whose answer carries the hub order id
    unsigned retry_after;          ///< seconds for Retry-After (0: none; rate_limited: the result's own)
    std::string_view error_code;   ///< the answer's error.code; empty for a success
    std::string_view message;      ///< the answer's error.message
    std::string_view detail_path;  ///< the answer's one detail, when it has one
    std::string_view detail_message;
    std::string_view inbox_outcome;                 ///< empty: no inbox row
    std::string_view inbox_error;                   ///< the inbox row's error_code (empty: none, or the result's own)
    std::string_view metric;                        ///< the access-log outcome (HubMetrics::kOutcomes)
    std::string_view inbox_outcome_unapplied = {};  ///< appended only: an update that did not become current
};

inline constexpr std::string_view kRulesBroken = "the webhook breaks the interface's rules: see details";

// clang-format off
inline constexpr std::array<OutcomeRow, 19> kOutcomes{{
    {Kind::created, 200, true, 0, "", "", "", "", "stored", "", "created"},
    {Kind::duplicate, 200, true, 0, "", "", "", "", "duplicate", "", "duplicate"},
    {Kind::conflict, 409, false, 0, "order_id_conflict", "payload.id was already used by this partner for a different order",
     "/payload/id", "already used for a different order", "conflict", "order_id_conflict", "conflict"},
    {Kind::unknown_branch, 422, false, 0, kErrorValidationFailed, kRulesBroken, "/branch_id", "unknown branch", "rejected",
     "unknown_branch", "unknown_branch"},
    {Kind::appended, 200, false, 0, "", "", "", "", "applied", "", "appended", "logged"},
    {Kind::repeated, 200, false, 0, "", "", "", "", "duplicate", "", "repeated"},
    {Kind::order_not_found, 404, false, 0, "order_not_found", "no order of this partner has this id; send order_created first",
     "/payload/order_id", "no such order", "rejected", "order_not_found", "order_not_found"},
    {Kind::branch_mismatch, 422, false, 0, kErrorValidationFailed, kRulesBroken, "/branch_id",
     "differs from the order's branch", "rejected", "branch_mismatch", "branch_mismatch"},
    {Kind::invalid_json, 400, false, 0, "invalid_json", "the body is not valid JSON", "", "", "rejected", "invalid_json",
     "invalid"},
    {Kind::not_an_object, 400, false, 0, "invalid_json", "the body must be a JSON object", "", "", "rejected",
     kErrorNotAnObject, "invalid"},
    {Kind::unknown_event, 422, false, 0, kErrorUnknownEvent, "event must be order_created or order_updated", "", "",
     "rejected", kErrorUnknownEvent, "invalid"},
    {Kind::validation_failed, 422, false, 0, kErrorValidationFailed, kRulesBroken, "", "", "rejected", kErrorValidationFailed,
     "invalid"},
    {Kind::unauthorized, 401, false, 0, "invalid_signature",
     "this webhook URL requires a valid Standard Webhooks signature (webhook-id, webhook-timestamp, "
     "webhook-signature)", "", "", "rejected", "", "unauthorized"},
    {Kind::unknown_key, 404, false, 0, "unknown_key", "unknown or disabled webhook URL", "", "", "", "", "unknown_key"},
    {Kind::rate_limited, 429, false, 0, "rate_limited", "too many requests for this partner; retry later", "", "", "", "",
     "rate_limited"},
    {Kind::method_not_allowed, 405, false, 0, "method_not_allowed", "webhooks are delivered with POST", "", "", "", "",
     "method_not_allowed"},
    {Kind::unavailable, 503, false, static_cast<unsigned>(common::http::kUnavailableRetryAfter.count()), "store_unavailable", "the order store is unavailable; retry later", "", "", "", "",
     "unavailable"},
    {Kind::error, 500, false, 0, "internal_error", "internal error; the request was not stored", "", "", "", "", "error"},
    // Status and body are the remembered answer's (IngestResult::replayed_*); the inbox row is WebhookIds's.
    {Kind::replayed, 200, false, 0, "", "", "", "", "replay", "", "replayed"},
}};
// clang-format on

/// The row of `kind`.
constexpr const OutcomeRow& outcome_row(Kind kind) { return kOutcomes[static_cast<std::size_t>(kind)]; }

/// The table is indexed by kind: each row sits at its kind's number.
consteval bool outcomes_in_order() {
    for (std::size_t k = 0; k < kOutcomes.size(); ++k)
        if (static_cast<std::size_t>(kOutcomes[k].kind) != k) return false;
    return true;
}
static_assert(outcomes_in_order());

/// The inbox row's outcome of `kind`; `applied` tells an appended update that became current from one that did not.
constexpr std::string_view inbox_outcome(Kind kind, bool applied = true) {
    const OutcomeRow& r = outcome_row(kind);
    return applied || r.inbox_outcome_unapplied.empty() ? r.inbox_outcome : r.inbox_outcome_unapplied;
}

/// The kind of a validator's refusal (validate.hpp's kError* codes).
Kind refusal_kind(std::string_view validation_error_code);

/// The typed result of one webhook request: what IngestService decided, before any HTTP rendering.
struct IngestResult {
    Kind kind = Kind::error;
    std::string partner_id;          ///< when the key was known
    std::string event;               ///< kEventOrderCreated or kEventOrderUpdated when the body names one, else empty
    std::string external_id;         ///< the platform's order id, when known
    std::string order_id;            ///< the hub order id (created, duplicate, appended)
    std::string inbox_error;         ///< the inbox error code when not the table's (signature_*)
    std::string message;             ///< the answer's message when not the table's (a JSON parse error)
    std::vector<FieldError> errors;  ///< the validator's problems (unknown_event, validation_failed)
    bool applied = false;            ///< appended: the update became the order's current status
    std::chrono::milliseconds retry_after{0};  ///< rate_limited: until a request is allowed again
    unsigned replayed_status = 0;              ///< replayed: the remembered answer's status
    std::string replayed_answer;               ///< replayed: the remembered answer's body (JSON)

    const OutcomeRow& row() const { return outcome_row(kind); }
    /// The answer's HTTP status (the table's, or the remembered one of a replay).
    unsigned http_status() const { return kind == Kind::replayed ? replayed_status : row().http_status; }
    /// The inbox row's outcome for this result.
    std::string_view inbox_outcome() const { return ingest::inbox_outcome(kind, applied); }
    /// The inbox row's error code for this result (empty: none).
    std::string_view inbox_error_code() const;
};

/// The failure of a result whose kind is not a success (status, code, message, details, Retry-After).
common::http::HttpError error_of(const IngestResult& result);

/// The answer's JSON body: `{"order_id", "status": "success"}` (or without order_id), or
/// `{"status": "failed", "error": {code, message, details}}` plus `"order_id": ""` unless the event is known to be
/// order_updated. Rendered by the endpoint and printed by `events replay`.
boost::json::object answer_body(const IngestResult& result);

/// answer_body(result) as JSON text (what boost::json::serialize() gives): a success's written directly, as every
/// stored order's answer is rendered and remembered (for its webhook-id) without building the object.
std::string answer_text(const IngestResult& result);

}  // namespace hub::ingest

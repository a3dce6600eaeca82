#include "hub/ingest/webhook.hpp"

#include <boost/json.hpp>
#include <chrono>

#include "common/db/pool.hpp"
#include "common/json/parse.hpp"
#include "common/log/log.hpp"
#include "common/text/excerpt.hpp"
#include "hub/ingest/signature.hpp"
#include "hub/ingest/store.hpp"
#include "hub/ingest/validate.hpp"

namespace hub::ingest {
namespace {

using common::http::Annotations;
using common::http::Request;
using common::http::Response;

constexpr std::string_view kRulesBroken = "the webhook breaks the interface's rules: see details";

// Headers worth keeping with the raw body: enough to replay and to trace, never credentials.
constexpr std::string_view kKeptHeaders[] = {"content-type",      "user-agent",   "webhook-id",
                                             "webhook-timestamp", "x-request-id", "x-forwarded-for"};

std::string kept_headers(const Request& req) {
    boost::json::object o;
    for (auto name : kKeptHeaders)
        // HTTP allows any byte above 0x7F in a header value: Latin-1 in a User-Agent made the inbox row, and with
        // it the order, unstorable (PostgreSQL refused the JSON), so the platform's every retry failed too.
        if (auto v = req.header(name)) o[name] = common::text::excerpt(*v, 256);
    if (!req.remote.empty()) o["remote_addr"] = req.remote;
    return boost::json::serialize(o);
}

Response unavailable(bool order_updated = false) {
    auto r =
        webhook_failure(503, "store_unavailable", "the order store is unavailable; retry later", {}, order_updated);
    r.headers.emplace_back("Retry-After", "5");
    return r;
}

/// The body's `event` when it is one of the two known events, else empty.
std::string known_event(const boost::json::value& body) {
    const auto* o = body.if_object();
    if (o == nullptr) return {};
    auto it = o->find("event");
    if (it == o->end() || !it->value().is_string()) return {};
    std::string_view e = it->value().get_string();
    return e == kEventOrderCreated || e == kEventOrderUpdated ? std::string(e) : std::string();
}

boost::json::array one_detail(std::string_view path, std::string_view message) {
    return boost::json::array{boost::json::object{{"path", path}, {"message", message}}};
}

/// Marks an answer for the access log and the metrics.
void mark(Response& r, std::string_view outcome, const std::string& partner = {}) {
    r.note.outcome = outcome;
    r.note.partner = partner;
}

/// The outcome word of a storage result (HubMetrics::kOutcomes).
std::string_view outcome_word(StoreOutcome::Kind kind) {
    using Kind = StoreOutcome::Kind;
    switch (kind) {
        case Kind::created: return "created";
        case Kind::duplicate: return "duplicate";
        case Kind::conflict: return "conflict";
        case Kind::unknown_branch: return "unknown_branch";
        case Kind::appended: return "appended";
        case Kind::repeated: return "repeated";
        case Kind::order_not_found: return "order_not_found";
        case Kind::branch_mismatch: return "branch_mismatch";
    }
    return "error";
}

/// The answer to a stored (or refused at storage) webhook.
Response answer(const StoreOutcome& o) {
    using Kind = StoreOutcome::Kind;
    switch (o.kind) {
        case Kind::created:
        case Kind::duplicate:
            return common::http::json_response(200, {{"order_id", o.order_id}, {"status", "success"}});
        case Kind::appended:
        case Kind::repeated: return common::http::json_response(200, {{"status", "success"}});
        case Kind::conflict:
            return webhook_failure(409, "order_id_conflict",
                                   "payload.id was already used by this partner for a different order",
                                   one_detail("/payload/id", "already used for a different order"));
        case Kind::unknown_branch:
            return webhook_failure(422, kErrorValidationFailed, kRulesBroken,
                                   one_detail("/branch_id", "unknown branch"));
        case Kind::order_not_found:
            return webhook_failure(404, "order_not_found",
                                   "no order of this partner has this id; send order_created first",
                                   one_detail("/payload/order_id", "no such order"), true);
        case Kind::branch_mismatch:
            return webhook_failure(422, kErrorValidationFailed, kRulesBroken,
                                   one_detail("/branch_id", "differs from the order's branch"), true);
    }
    return webhook_failure(500, "internal_error", "internal error");
}

/// One answer for every signature refusal, so that it tells an attacker nothing; the inbox keeps the reason.
Response signature_refused() {
    return webhook_failure(401, "invalid_signature",
                           "this webhook URL requires a valid Standard Webhooks signature (webhook-id, "
                           "webhook-timestamp, webhook-signature)");
}

/// The inbox error code of a signing partner's request, or empty when it may go on.
std::string_view signature_problem(const Partner& partner, const Request& req, std::int64_t now) {
    // Secrets that cannot be opened are a configuration fault (logged by the directory): refuse, never skip.
    if (partner.signing_keys_unreadable) return "signature_secret_unreadable";
    SignatureHeaders headers;
    headers.id = req.header("webhook-id").value_or("");
    headers.timestamp = req.header("webhook-timestamp").value_or("");
    headers.signature = req.header("webhook-signature").value_or("");
    return signature_error_code(verify_signature(headers, req.body, partner.signing_keys, now));
}

}  // namespace

std::int64_t WebhookHandler::system_clock_seconds() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

Response webhook_failure(unsigned status, std::string_view code, std::string_view message, boost::json::array details,
                         bool order_updated) {
    boost::json::object body{{"status", "failed"},
                             {"error", {{"code", code}, {"message", message}, {"details", std::move(details)}}}};
    if (!order_updated) body["order_id"] = "";
    return common::http::json_response(status, body);
}

boost::asio::awaitable<Response> WebhookHandler::handle(Request req, std::string key) {
    if (req.method != "POST") {
        auto not_post = webhook_failure(405, "method_not_allowed", "webhooks are delivered with POST");
        not_post.headers.emplace_back("Allow", "POST");
        mark(not_post, "method_not_allowed");
        co_return not_post;
    }
    std::optional<Partner> partner;
    bool lookup_failed = false;
    try {
        partner = co_await partners_.find(std::move(key));
    } catch (const std::exception&) {
        if (!common::db::is_unavailable(std::current_exception())) throw;
        lookup_failed = true;
    }
    if (!partner && lookup_failed) {
        auto lookup_down = unavailable();
        mark(lookup_down, "unavailable");
        co_return lookup_down;
    }
    if (!partner) {
        auto unknown = webhook_failure(404, "unknown_key", "unknown or disabled webhook URL");
        mark(unknown, "unknown_key");
        co_return unknown;
    }
    if (limiting_) {
        // Before any work and any write: a flood costs a hash lookup, not a database row (so 429s are not in the
        // inbox; the platform sends the request again).
        const RateLimit limit{partner->rate_per_second.value_or(rate_defaults_.per_second),
                              partner->rate_burst.value_or(rate_defaults_.burst)};
        if (auto wait = limiter_.take(partner->id, limit)) {
            auto limited = webhook_failure(429, "rate_limited", "too many requests for this partner; retry later");
            limited.headers.emplace_back("Retry-After",
                                         std::to_string(std::max<long long>(1, (wait->count() + 999) / 1000)));
            mark(limited, "rate_limited", partner->id);
            co_return limited;
        }
    }
    std::string headers = kept_headers(req);
    if (partner->signing) {
        const std::string_view problem = signature_problem(*partner, req, clock_());
        if (!problem.empty()) {
            // Refused before the body is parsed, and recorded: the request reached a known key.
            InboxRecord inbox;
            inbox.partner_id = partner->id;
            inbox.request_id = req.request_id;
            inbox.headers_json = std::move(headers);
            inbox.body = std::move(req.body);
            inbox.http_status = 401;
            inbox.outcome = "rejected";
            inbox.error_code = std::string(problem);
            try {
                co_await store_.record(std::move(inbox));
            } catch (const std::exception& e) {
                const bool down = common::db::is_unavailable(std::current_exception());
                if (!down) common::log::error("webhook failed", {{"request_id", req.request_id}, {"error", e.what()}});
                auto record_failed =
                    down ? unavailable()
                         : webhook_failure(500, "internal_error", "internal error; the request was not stored");
                mark(record_failed, down ? "unavailable" : "error", partner->id);
                co_return record_failed;
            }
            auto unsigned_answer = signature_refused();
            mark(unsigned_answer, "unauthorized", partner->id);
            co_return unsigned_answer;
        }
    }
    co_return co_await process(std::move(*partner), std::move(req.body), std::move(req.request_id), std::move(headers),
                               "");
}

boost::asio::awaitable<Response> WebhookHandler::process(Partner partner, std::string body, std::string request_id,
                                                         std::string headers_json, std::string replay_of) {
    InboxRecord inbox;
    inbox.partner_id = partner.id;
    inbox.request_id = request_id;
    inbox.headers_json = std::move(headers_json);
    inbox.replay_of = std::move(replay_of);
    inbox.body = std::move(body);

    std::optional<Response> refusal;
    std::optional<Validated> validated;
    bool updated = false;
    auto refuse = [&](Response r, std::string_view code) {
        inbox.http_status = r.status;
        inbox.outcome = "rejected";
        inbox.error_code = std::string(code);
        refusal = std::move(r);
    };
    auto parsed = common::json::parse_strict(inbox.body);
    if (!parsed.value) {
        refuse(webhook_failure(400, "invalid_json", "the body is not valid JSON: " + parsed.error), "invalid_json");
    } else {
        inbox.event = known_event(*parsed.value);
        updated = inbox.event == kEventOrderUpdated;
        auto result = validate_webhook(*parsed.value);
        if (result.value) {
            validated = std::move(result.value);
            inbox.external_id = validated->envelope.event == kEventOrderCreated
                                    ? std::get<OrderCreated>(validated->payload).external_id
                                    : std::get<OrderUpdated>(validated->payload).order_id;
        } else if (result.error_code == kErrorNotAnObject) {
            refuse(webhook_failure(400, "invalid_json", "the body must be a JSON object"), kErrorNotAnObject);
        } else {
            const std::string_view message =
                result.error_code == kErrorUnknownEvent ? "event must be order_created or order_updated" : kRulesBroken;
            refuse(webhook_failure(422, result.error_code, message, errors_to_json(result.errors), updated),
                   result.error_code);
        }
    }

    // Who and what, for the access log and the metrics (the inbox row is moved into the store below).
    Annotations note;
    note.partner = partner.id;
    note.event = updated                             ? kEventOrderUpdated
                 : inbox.event == kEventOrderCreated ? kEventOrderCreated
                                                     : std::string_view();
    note.external_id = inbox.external_id;
    bool down = false;
    try {
        if (refusal) {
            co_await store_.record(std::move(inbox));
            Response refused = std::move(*refusal);
            refused.note = std::move(note);
            refused.note.outcome = "invalid";
            co_return refused;
        }
        auto outcome = co_await store_.store(partner.id, std::move(*validated), std::move(inbox));
        Response stored = answer(outcome);
        stored.note = std::move(note);
        stored.note.outcome = outcome_word(outcome.kind);
        stored.note.order_id = outcome.order_id;
        co_return stored;
    } catch (const std::exception& e) {
        if (!common::db::is_unavailable(std::current_exception()))
            common::log::error("webhook failed", {{"request_id", request_id}, {"error", e.what()}});
        else
            down = true;
    }
    Response failed =
        down ? unavailable(updated)
             : webhook_failure(500, "internal_error", "internal error; the request was not stored", {}, updated);
    failed.note = std::move(note);
    failed.note.outcome = down ? "unavailable" : "error";
    co_return failed;
}

}  // namespace hub::ingest

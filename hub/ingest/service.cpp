#include "hub/ingest/service.hpp"

#include <array>
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>

#include "common/db/pool.hpp"
#include "common/json/parse.hpp"
#include "common/log/log.hpp"
#include "hub/ingest/inbox_keys.hpp"
#include "hub/ingest/plain_webhook.hpp"
#include "hub/ingest/signature.hpp"
#include "hub/ingest/store.hpp"
#include "hub/ingest/validate.hpp"
#include "hub/ingest/webhook_ids.hpp"

namespace hub::ingest {
namespace {

/// The part of a webhook document's arena on the network thread's stack: a document takes about three times its text
/// (common/json/parse.cpp), so this holds an order of up to about 2.5 kB; a larger one continues on the heap.
constexpr std::size_t kDocumentStackBytes = 8192;

/// The inbox error code of a signing partner's request, or empty when it may go on.
std::string_view signature_problem(const Partner& partner, const WebhookRequest& req, std::int64_t now) {
    // Secrets that cannot be opened are a configuration fault (logged by the directory): refuse, never skip.
    if (partner.signing_keys_unreadable) return "signature_secret_unreadable";
    const SignatureHeaders headers{req.webhook_id, req.webhook_timestamp, req.webhook_signature};
    return signature_error_code(verify_signature(headers, req.body, partner.signing_keys, now));
}

/// Makes `result` the failure to reach or use the store (the current exception, `e`): unavailable, or an error
/// that is logged.
void failed(IngestResult& result, const std::exception& e, const std::string& request_id) {
    const bool down = common::db::is_unavailable(std::current_exception());
    if (!down) common::log::error("webhook failed", {{"request_id", request_id}, {"error", e.what()}});
    result.kind = down ? Kind::unavailable : Kind::error;
    result.message.clear();
    result.errors.clear();
}

/// Fills the inbox row's answer from `result`.
void set_inbox(InboxRecord& inbox, const IngestResult& result) {
    inbox.http_status = result.row().http_status;
    inbox.outcome = result.inbox_outcome();
    inbox.error_code = result.inbox_error_code();
}

/// Parses `inbox.body` as a document and validates it into `checked` (empty): the webhook in its `value`, or none
/// with `result` saying why it was refused (and the inbox row the keys read from the document).
void read_document(InboxRecord& inbox, IngestResult& result, ValidationResult& checked) {
    // The document lives only here (what is kept is copied out of it): its values come from this arena, released
    // with it at once.
    std::array<unsigned char, kDocumentStackBytes> first;
    boost::json::monotonic_resource arena(first.data(), first.size());
    auto parsed = common::json::parse_strict(inbox.body, arena);
    if (!parsed.value) {
        result.kind = Kind::invalid_json;
        result.message = std::string(result.row().message) + ": " + parsed.error;
        return;
    }
    validate_webhook(*parsed.value, checked);
    if (!checked.value) {
        // Kept for a refused request too: it is found by its order id.
        auto keys = inbox_keys(*parsed.value);
        inbox.event = std::move(keys.event);
        inbox.external_id = std::move(keys.external_id);
        inbox.branch_id = std::move(keys.branch_id);
        result.event = inbox.event;
        result.kind = refusal_kind(checked.error_code);
        result.errors = std::move(checked.errors);
    }
}

/// Parses and validates `inbox.body` into `checked` (empty): the webhook in its `value`, or none with `result` saying
/// why it was refused.
void check(InboxRecord& inbox, IngestResult& result, ValidationResult& checked) {
    // A valid body of the plain shape is read straight into its order; any other is read again as a document,
    // which names every problem (hub/ingest/plain_webhook.hpp).
    if (!read_plain_webhook(inbox.body, checked.value.emplace())) {
        checked.value.reset();
        read_document(inbox, result, checked);
        if (!checked.value) return;
    }
    // A valid body's keys are its validated values (what inbox_keys() reads from the document, without reading it
    // again); its order id is kept whatever its bytes, as it is stored with the order.
    const Envelope& envelope = checked.value->envelope;
    inbox.event = envelope.event;
    inbox.branch_id = inbox_id(envelope.branch_id);
    inbox.external_id = envelope.event == kEventOrderCreated
                            ? std::get<OrderCreated>(checked.value->payload).external_id
                            : std::get<OrderUpdated>(checked.value->payload).order_id;
    result.event = inbox.event;
    result.external_id = inbox.external_id;
}

/// The inbox row of a request that did not come over HTTP (`events replay`, `order create`): what it carried.
InboxRecord inbox_of(const Partner& partner, std::string request_id, std::string headers_json, std::string body) {
    InboxRecord inbox;
    inbox.partner_id = partner.id;
    inbox.request_id = std::move(request_id);
    inbox.headers_json = std::move(headers_json);
    inbox.body = std::move(body);
    return inbox;
}

}  // namespace

std::int64_t IngestService::system_clock_seconds() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// receive() and admit() are not coroutines: a webhook of a partner looked up lately, admitted, goes straight to the
// coroutine that stores it (ingest(), which owns its inbox row), one frame and one handing over of its result fewer
// per stored order than when receive() awaited it (docs/performance.md).
boost::asio::awaitable<IngestResult> IngestService::receive(WebhookRequest&& req) {
    // A key seen lately is answered at once, its partner shared; others wait for the directory.
    if (auto now = partners_.find_now(req.key)) return admit(std::move(*now), req);
    return look_up(req);
}

boost::asio::awaitable<IngestResult> IngestService::look_up(WebhookRequest& req) {
    std::shared_ptr<const Partner> partner;
    try {
        std::string key(req.key);  // named: GCC 12 destroys temporaries of a co_await full-expression twice
        if (auto found = co_await partners_.find(std::move(key)))
            partner = std::make_shared<const Partner>(std::move(*found));
    } catch (const std::exception&) {
        if (!common::db::is_unavailable(std::current_exception())) throw;
        IngestResult result;
        result.kind = Kind::unavailable;
        co_return result;
    }
    // Named first: GCC 12 destroys temporaries of a co_await full-expression twice.
    auto admitted = admit(std::move(partner), req);
    co_return co_await std::move(admitted);
}

boost::asio::awaitable<IngestResult> IngestService::admit(std::shared_ptr<const Partner> partner, WebhookRequest& req) {
    IngestResult result;
    if (!partner) {
        result.kind = Kind::unknown_key;
        return answered(std::move(result));
    }
    if (limiting_) {
        const RateLimit limit{partner->rate_per_second.value_or(rate_defaults_.per_second),
                              partner->rate_burst.value_or(rate_defaults_.burst)};
        if (auto wait = limiter_.take(partner->id, limit)) {
            result.partner_id = partner->id;  // only here: the other answers are ingest()'s or the refusals'
            result.kind = Kind::rate_limited;
            result.retry_after = *wait;
            return answered(std::move(result));
        }
    }
    if (partner->signing) {
        const std::string_view problem = signature_problem(*partner, req, clock_());
        if (!problem.empty()) return refuse_signature(partner->id, std::move(req), problem);
        if (ids_ != nullptr) return process_once(std::move(partner), std::move(req));
    }
    return ingest(inbox_of(*partner, std::move(req.request_id), std::move(req.headers_json), std::move(req.body)),
                  true);
}

boost::asio::awaitable<IngestResult> IngestService::answered(IngestResult result) { co_return result; }

boost::asio::awaitable<IngestResult> IngestService::refuse_signature(std::string partner_id, WebhookRequest req,
                                                                     std::string_view problem) {
    IngestResult result;
    result.kind = Kind::unauthorized;
    result.partner_id = partner_id;
    result.inbox_error = std::string(problem);
    InboxRecord inbox;
    inbox.partner_id = std::move(partner_id);
    inbox.request_id = req.request_id;
    inbox.headers_json = std::move(req.headers_json);
    // Anyone who knows the URL can send these, up to the body limit each: a prefix is enough to see what it was.
    if (req.body.size() > kRefusedBodyPrefix) {
        inbox.body_size = req.body.size();
        req.body.resize(kRefusedBodyPrefix);
    }
    inbox.body = std::move(req.body);
    set_inbox(inbox, result);
    try {
        co_await store_.record(std::move(inbox));
    } catch (const std::exception& e) {
        failed(result, e, req.request_id);
    }
    co_return result;
}

boost::asio::awaitable<IngestResult> IngestService::process_once(std::shared_ptr<const Partner> partner,
                                                                 WebhookRequest req) {
    IngestResult result;
    result.partner_id = partner->id;
    try {
        InboxRecord inbox;
        inbox.partner_id = partner->id;
        inbox.request_id = req.request_id;
        inbox.headers_json = req.headers_json;
        inbox.body = req.body;
        if (auto seen = co_await ids_->replayed(req.webhook_id, std::move(inbox))) {
            result.kind = Kind::replayed;
            result.replayed_status = seen->http_status;
            result.replayed_answer = std::move(seen->answer);
            co_return result;
        }
    } catch (const std::exception& e) {
        failed(result, e, req.request_id);
        co_return result;
    }
    result = co_await process(*partner, std::move(req.body), req.request_id, std::move(req.headers_json), "");
    // A final answer is remembered; after a 503 (or a 500) the platform's retry must run again.
    const unsigned status = result.http_status();
    if (status >= 500 || status == 429) co_return result;
    // Named first: GCC 12 destroys temporaries of a co_await full-expression twice.
    RememberedAnswer answer{status, answer_text(result)};
    std::string partner_id = result.partner_id;
    try {
        co_await ids_->remember(std::move(partner_id), req.webhook_id, std::move(answer));
    } catch (const std::exception& e) {
        // Stored and answered; only this id's replay protection is missing.
        common::log::warn("webhook id not remembered", {{"request_id", req.request_id}, {"error", e.what()}});
    }
    co_return result;
}

// process() and create() hand their request to the coroutine that stores it (ingest(), which owns its inbox row)
// without a coroutine of their own: its frame takes its arguments before they return, and keeps nothing of
// `partner`.
boost::asio::awaitable<IngestResult> IngestService::process(const Partner& partner, std::string body,
                                                            std::string request_id, std::string headers_json,
                                                            std::string replay_of) {
    InboxRecord inbox = inbox_of(partner, std::move(request_id), std::move(headers_json), std::move(body));
    inbox.replay_of = std::move(replay_of);
    return ingest(std::move(inbox), true);
}

boost::asio::awaitable<IngestResult> IngestService::create(const Partner& partner, std::string body,
                                                           std::string request_id, std::string headers_json,
                                                           Origin origin) {
    InboxRecord inbox = inbox_of(partner, std::move(request_id), std::move(headers_json), std::move(body));
    inbox.origin = std::move(origin);
    return ingest(std::move(inbox), false);
}

boost::asio::awaitable<IngestResult> IngestService::ingest(InboxRecord inbox, bool record_refusals) {
    IngestResult result;
    result.partner_id = inbox.partner_id;  // for the answer's log line: the inbox row goes to the store
    const std::string request_id = inbox.request_id;
    ValidationResult checked;
    check(inbox, result, checked);
    try {
        if (!checked.value) {
            if (!record_refusals) co_return result;
            set_inbox(inbox, result);
            co_await store_.record(std::move(inbox));
            co_return result;
        }
        // The store has taken what it needs of the order when store() returns (an order_created's entry is
        // written, an order_updated is moved into its job): its validated form is freed here and now, while its
        // memory is in this thread's cache and the next request can reuse it, not after the commit.
        auto storing = store_.store(std::move(*checked.value), std::move(inbox));
        checked = ValidationResult();
        auto stored = co_await std::move(storing);
        if (stored_) stored_();
        result.kind = stored.kind;
        result.order_id = std::move(stored.order_id);
        result.applied = stored.applied;
    } catch (const std::exception& e) {
        failed(result, e, request_id);
    }
    co_return result;
}

}  // namespace hub::ingest

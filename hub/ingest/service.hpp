#pragma once

// The webhook path between the HTTP endpoint and storage: partner, rate, signature, body, storage.
//
// Decisions (each answer's status, codes and inbox values: hub/ingest/outcome.hpp):
//   - An unknown or disabled key is unknown_key; a partner lookup the store cannot answer is unavailable.
//   - The rate limit is checked before any work and any write: a flood costs a hash lookup, not a database row
//     (so rate_limited requests are not in the inbox; the platform sends them again).
//   - A signing partner's request is checked on the raw body before it is parsed; a refusal is recorded in the
//     inbox with the reason (signature_*) and the first kRefusedBodyPrefix bytes of its body (with the whole
//     body's size), and answered unauthorized whatever the reason.
//   - Every request that reaches a known key past the limiter is recorded in the inbox: refused ones (bad JSON,
//     validation) alone, stored ones with their order.
//   - A store that is unavailable gives unavailable; any other failure gives error (logged with the request id).

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "hub/ingest/outcome.hpp"
#include "hub/ingest/partners.hpp"
#include "hub/ingest/rate_limit.hpp"
#include "hub/ingest/store.hpp"

namespace hub::ingest {

class WebhookIdLog;

/// What the inbox keeps of the body of a request refused for its signature (anyone may send those).
inline constexpr std::size_t kRefusedBodyPrefix = 4096;

/// One webhook request as the service needs it, free of HTTP.
struct WebhookRequest {
    std::string_view key;  ///< the URL's webhook key: a view (of the lent request's path), valid while it lives
    std::string body;      ///< raw bytes as received
    std::string request_id;
    std::string headers_json;  ///< the headers kept with the inbox row, a JSON object
    /// The Standard Webhooks headers (hub/ingest/signature.hpp); empty when absent.
    std::string webhook_id, webhook_timestamp, webhook_signature;
};

/// Decides and stores webhooks; returns typed results for the endpoint (hub/ingest/webhook.hpp) and `events
/// replay` to render. Holds references only; thread-safe.
class IngestService {
public:
    /// Unix time in seconds; injectable for tests.
    using Clock = std::function<std::int64_t()>;

    /// The system clock.
    static std::int64_t system_clock_seconds();

    IngestService(PartnerLookup& partners, OrderSink& store, Clock clock = system_clock_seconds)
        : partners_(partners), store_(store), clock_(std::move(clock)) {}

    /// Turns per-partner rate limiting on, with `defaults` for partners without a limit of their own.
    void limit_rate(RateLimit defaults) {
        rate_defaults_ = defaults;
        limiting_ = true;
    }

    /// The per-partner limiter (its refusal counts feed /metrics).
    const RateLimiter& limiter() const { return limiter_; }

    /// Answers a signed request whose webhook-id was answered before with that answer (hub/ingest/webhook_ids.hpp);
    /// `ids` must outlive the service.
    void guard_replays(WebhookIdLog& ids) { ids_ = &ids; }

    /// Called (on the storing request's thread) after each webhook the store committed, stored or found a
    /// duplicate: the merchant board's feed polls at once (hub/dashboard/feed.hpp). Set before the first request.
    void on_stored(std::function<void()> stored) { stored_ = std::move(stored); }

    /// Finds the partner, applies its rate and signature (and webhook-id), then stores as process() does. Not a
    /// coroutine itself. `req` is lent: it must outlive the returned coroutine, which takes its parts.
    boost::asio::awaitable<IngestResult> receive(WebhookRequest&& req);

    /// Validates and stores one request body of `partner` with today's rules and records it in the inbox (with
    /// `replay_of` for `events replay`). Used by receive() and by the replay command. Not a coroutine itself: it
    /// builds the inbox row and returns the coroutine that stores it, which keeps nothing of `partner`.
    boost::asio::awaitable<IngestResult> process(const Partner& partner, std::string body, std::string request_id,
                                                 std::string headers_json, std::string replay_of);

    /// Validates and stores one order_created body that an operator built (hub/admin/order_create_rules.hpp) for
    /// the operator partner `partner`, with the same rules and storage as process(). A refused body is answered
    /// and stored nowhere (its sender reads the answer; there is nothing to replay). Not a coroutine either.
    boost::asio::awaitable<IngestResult> create(const Partner& partner, std::string body, std::string request_id,
                                                std::string headers_json, Origin origin);

private:
    /// Validates `inbox.body` and stores it for `inbox.partner_id`; a refused one is recorded in the inbox when
    /// `record_refusals`.
    boost::asio::awaitable<IngestResult> ingest(InboxRecord inbox, bool record_refusals);
    /// receive() of a key find_now() did not know: awaits the directory, then admit(). `req` is lent.
    boost::asio::awaitable<IngestResult> look_up(WebhookRequest& req);
    /// receive() once the key's partner is known (null: none): its rate, its signature (and webhook-id), then
    /// ingest(). Not a coroutine: it returns the one that answers. `req` is lent; its parts are taken.
    boost::asio::awaitable<IngestResult> admit(std::shared_ptr<const Partner> partner, WebhookRequest& req);
    /// A coroutine that answers `result` (a refusal decided without waiting).
    static boost::asio::awaitable<IngestResult> answered(IngestResult result);
    boost::asio::awaitable<IngestResult> refuse_signature(std::string partner_id, WebhookRequest req,
                                                          std::string_view problem);
    /// process() for a request with a valid signature, once per webhook-id.
    boost::asio::awaitable<IngestResult> process_once(std::shared_ptr<const Partner> partner, WebhookRequest req);

    PartnerLookup& partners_;
    OrderSink& store_;
    Clock clock_;
    RateLimiter limiter_;
    RateLimit rate_defaults_;
    bool limiting_ = false;
    WebhookIdLog* ids_ = nullptr;
    std::function<void()> stored_;  // on_stored
};

}  // namespace hub::ingest

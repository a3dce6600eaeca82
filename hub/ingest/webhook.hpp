#pragma once

#include <boost/asio/awaitable.hpp>
#include <string>
#include <string_view>

#include "common/http/message.hpp"
#include "hub/ingest/service.hpp"

namespace hub::ingest {

class OrderSink;

/// `POST /webhooks/{key}`: turns the request into a WebhookRequest, lets IngestService decide and store it
/// (hub/ingest/service.hpp) and renders the result (hub/ingest/outcome.hpp). Holds references only; thread-safe.
class WebhookHandler {
public:
    using Clock = IngestService::Clock;

    WebhookHandler(PartnerLookup& partners, OrderSink& store, Clock clock = IngestService::system_clock_seconds)
        : service_(partners, store, std::move(clock)) {}

    /// Turns per-partner rate limiting on, with `defaults` for partners without a limit of their own.
    void limit_rate(RateLimit defaults) { service_.limit_rate(defaults); }

    /// The per-partner limiter (its refusal counts feed /metrics).
    const RateLimiter& limiter() const { return service_.limiter(); }

    /// Answers replayed webhook-ids from `ids` (IngestService::guard_replays).
    void guard_replays(WebhookIdLog& ids) { service_.guard_replays(ids); }

    /// The ingest service behind the endpoint (the operator API replays inbox entries through it).
    IngestService& service() { return service_; }

    /// Answers one webhook request; the answer's `note` says partner, event, outcome and order ids for the
    /// access log and the metrics. `req` is lent (common::http::Handler): it must outlive the returned coroutine,
    /// which takes its body; `key` (the URL's webhook key) views its path.
    boost::asio::awaitable<common::http::Response> handle(common::http::Request&& req, std::string_view key);

private:
    IngestService service_;
};

/// The HTTP answer of `result`: its status and body (answer_body), Retry-After and Allow where they apply, and
/// the note for the access log and the metrics.
common::http::Response render(IngestResult result);

}  // namespace hub::ingest

#pragma once

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <functional>
#include <string>

#include "hub/ingest/partners.hpp"
#include "hub/ingest/rate_limit.hpp"

#include <boost/json/array.hpp>

#include "common/http/message.hpp"

namespace hub::ingest {

class PartnerDirectory;
class OrderStore;

/// `POST /webhooks/{key}`: finds the partner, parses and validates the body, stores the order (or the update)
/// and answers with the status table of product.md section 4. Every request that reaches a known key is
/// recorded in the inbox. A partner created with `--signing` must sign with Standard Webhooks headers, checked on
/// the raw body before anything else (hub/ingest/signature.hpp). Holds references only; thread-safe.
class WebhookHandler {
public:
    /// Unix time in seconds; injectable for tests.
    using Clock = std::function<std::int64_t()>;

    /// The system clock.
    static std::int64_t system_clock_seconds();

    WebhookHandler(PartnerDirectory& partners, OrderStore& store, Clock clock = system_clock_seconds)
        : partners_(partners), store_(store), clock_(std::move(clock)) {}

    /// Turns per-partner rate limiting on, with `defaults` for partners without a limit of their own.
    void limit_rate(RateLimit defaults) {
        rate_defaults_ = defaults;
        limiting_ = true;
    }

    /// The per-partner limiter (its refusal counts feed /metrics).
    const RateLimiter& limiter() const { return limiter_; }

    /// Answers one webhook request; the answer's `note` says partner, event, outcome and order ids for the
    /// access log and the metrics.
    boost::asio::awaitable<common::http::Response> handle(common::http::Request req, std::string key);

    /// Validates and stores one request body of `partner` with today's rules, records it in the inbox (with
    /// `replay_of` for `events replay`) and returns the answer. Used by handle() and by the replay command.
    boost::asio::awaitable<common::http::Response> process(Partner partner, std::string body, std::string request_id,
                                                           std::string headers_json, std::string replay_of);

private:
    PartnerDirectory& partners_;
    OrderStore& store_;
    Clock clock_;
    RateLimiter limiter_;
    RateLimit rate_defaults_;
    bool limiting_ = false;
};

/// The failure body: `{"status":"failed","error":{code,message,details}}` plus `"order_id": ""` unless the
/// event is known to be order_updated.
common::http::Response webhook_failure(unsigned status, std::string_view code, std::string_view message,
                                       boost::json::array details = {}, bool order_updated = false);

}  // namespace hub::ingest

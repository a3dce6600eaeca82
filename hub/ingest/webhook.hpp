#pragma once

#include <boost/asio/awaitable.hpp>
#include <string>

#include "hub/ingest/partners.hpp"

#include <boost/json/array.hpp>

#include "common/http/message.hpp"

namespace hub::ingest {

class PartnerDirectory;
class OrderStore;

/// `POST /webhooks/{key}`: finds the partner, parses and validates the body, stores the order (or the update)
/// and answers with the status table of product.md section 4. Every request that reaches a known key is
/// recorded in the inbox. Holds references only; thread-safe.
class WebhookHandler {
public:
    WebhookHandler(PartnerDirectory& partners, OrderStore& store) : partners_(partners), store_(store) {}

    boost::asio::awaitable<common::http::Response> handle(common::http::Request req, std::string key);

    /// Validates and stores one request body of `partner` with today's rules, records it in the inbox (with
    /// `replay_of` for `events replay`) and returns the answer. Used by handle() and by the replay command.
    boost::asio::awaitable<common::http::Response> process(Partner partner, std::string body, std::string request_id,
                                                           std::string headers_json, std::string replay_of);

private:
    PartnerDirectory& partners_;
    OrderStore& store_;
};

/// The failure body: `{"status":"failed","error":{code,message,details}}` plus `"order_id": ""` unless the
/// event is known to be order_updated.
common::http::Response webhook_failure(unsigned status, std::string_view code, std::string_view message,
                                       boost::json::array details = {}, bool order_updated = false);

}  // namespace hub::ingest

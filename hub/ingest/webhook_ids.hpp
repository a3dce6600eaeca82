#pragma once

// Replays of signed webhooks (Standard Webhooks `webhook-id`).
//
// Decisions:
//   - Only a signing partner's requests with a valid signature are remembered: their id is authenticated.
//   - A request whose (partner, webhook-id) was answered within the window (10 minutes: the signature's 5 minutes
//     either way) gets that answer again, status and body, and nothing is stored; the first such replay is
//     recorded in the inbox (outcome `replay`), later ones are only counted.
//   - Only final answers are remembered (2xx, and 4xx but 429): a platform's retry after a 503 or a 429 runs again.
//   - In the database, so that every hub instance on it sees the same ids; each partner's expired ids are purged
//     as new ones are remembered.

#include <boost/asio/awaitable.hpp>
#include <optional>
#include <string>

#include "hub/ingest/store.hpp"

namespace common::db {
class Pool;
}

namespace hub::ingest {

/// The answer a webhook id got the first time.
struct RememberedAnswer {
    unsigned http_status = 0;
    std::string answer;  ///< the JSON body
};

/// Where webhook ids are remembered: WebhookIds, or a fake in unit tests.
class WebhookIdLog {
public:
    virtual ~WebhookIdLog() = default;
    /// The answer remembered for (`inbox.partner_id`, `webhook_id`), counting this request as a replay (recorded
    /// as `inbox` with outcome `replay` when it is the first one); nullopt when the id is new. Throws when the
    /// store is unavailable.
    virtual boost::asio::awaitable<std::optional<RememberedAnswer>> replayed(std::string webhook_id,
                                                                             InboxRecord inbox) = 0;
    /// Remembers `answer` for (`partner_id`, `webhook_id`) unless an answer is remembered already.
    virtual boost::asio::awaitable<void> remember(std::string partner_id, std::string webhook_id,
                                                  RememberedAnswer answer) = 0;
};

/// The ids in hub.webhook_ids. Holds a reference to the pool; thread-safe.
class WebhookIds final : public WebhookIdLog {
public:
    explicit WebhookIds(common::db::Pool& pool) : pool_(pool) {}
    boost::asio::awaitable<std::optional<RememberedAnswer>> replayed(std::string webhook_id,
                                                                     InboxRecord inbox) override;
    boost::asio::awaitable<void> remember(std::string partner_id, std::string webhook_id,
                                          RememberedAnswer answer) override;

private:
    common::db::Pool& pool_;
};

}  // namespace hub::ingest

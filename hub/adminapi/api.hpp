#pragma once

// The operator HTTP API (product.md section 9) under /api/admin/v1/ on the hub's public listener.
//
// `GET /api/admin/v1/openapi.json` needs no token: it is the description of every HTTP surface of the hub and of
// the reference POS (schemas/openapi.yaml, bundled with the JSON Schemas it references at build time).
//
// Every other call goes through these steps, in order, each answering in the webhook surface's failure shape
// ({"status":"failed","error":{"code","message","details"}}, common/http/error.hpp):
//   1. auth: `Authorization: Bearer <admin token>` naming a live token (hub/admin/admin_token_rules.hpp), else 401
//      unauthenticated (with `WWW-Authenticate: Bearer`). Lookups are cached for kTokenCacheTime, so a revoked
//      token is refused within that time. Tokens not in the cache are looked up at most kMaxTokenLookups at a time
//      (more: 503 busy with Retry-After), and guessed tokens never evict live ones from the cache, so anonymous
//      requests cannot tie up the database's workers;
//   2. rate: each token has a token bucket (`serve --admin-api-per-second/--admin-api-burst`;
//      hub/ingest/rate_limit.hpp), else 429 rate_limited with Retry-After;
//   3. route: 404 not_found for no route, 405 method_not_allowed (with Allow) for a route's path with another method;
//   4. a read-only token may only GET: 403 read_only_token;
//   5. the handler; a rule's Refusal is 400 invalid_request (a value breaks a rule: the dashboard's and the CLI's
//      usage class; 422 stays the webhook surface's word for an order document it cannot take), 404 not_found or
//      409 conflict; PostgreSQL away is 503 database_unavailable with Retry-After.
// Successful changes are recorded in hub.admin_changes with the token's name as actor, in their own transaction.

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "common/http/message.hpp"
#include "hub/adminapi/context.hpp"
#include "hub/ingest/rate_limit.hpp"

namespace hub::adminapi {

inline constexpr std::string_view kPrefix = "/api/admin/v1/";
inline constexpr std::chrono::seconds kTokenCacheTime{2};
inline constexpr int kMaxTokenLookups = 4;
inline constexpr std::size_t kMaxCachedTokens = 10'000;

/// Holds references to the pool, the box and the ingest service, which must outlive it. Thread-safe.
class AdminApi {
public:
    AdminApi(common::db::Pool& pool, const common::crypto::SecretBox* box, ingest::IngestService* ingest,
             std::string public_url, ingest::RateLimit rate);

    /// The answer to a request whose path starts with kPrefix.
    boost::asio::awaitable<common::http::Response> handle(const common::http::Request& req);

private:
    boost::asio::awaitable<common::http::Response> dispatch(const common::http::Request& req);
    /// The token a request names; `busy` when it is not cached and kMaxTokenLookups lookups are under way.
    struct Auth {
        std::optional<admin::AdminToken> token;
        bool busy = false;
    };
    boost::asio::awaitable<Auth> authenticate(const common::http::Request& req);
    /// Room for one more entry: expired and refused entries go first, live tokens only when nothing else is left.
    void make_room();

    struct Cached {
        std::optional<admin::AdminToken> token;
        std::chrono::steady_clock::time_point until;
    };
    Context ctx_;
    std::mutex mutex_;
    std::unordered_map<std::string, Cached> cache_;  ///< by token hash
    int lookups_ = 0;                                ///< lookups of uncached tokens under way
    ingest::RateLimit rate_;
    ingest::RateLimiter limiter_;
};

}  // namespace hub::adminapi

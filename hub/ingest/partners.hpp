#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/crypto/secret_box.hpp"

namespace common::db {
class Pool;
}

namespace hub::ingest {

/// A partner as the webhook path needs it.
struct Partner {
    std::string id;
    std::string label;
    std::string time_zone;
    bool signing = false;
    /// HMAC keys (raw bytes) of the currently valid signing secrets, newest first; empty unless `signing`.
    std::vector<std::string> signing_keys = {};
    /// A signing partner whose secrets could not be opened (no or another ORDERHUB_SECRET_KEY): refuse it.
    bool signing_keys_unreadable = false;
    /// The partner's own rate limit (`partner limit`), when set.
    std::optional<double> rate_per_second = std::nullopt;
    std::optional<double> rate_burst = std::nullopt;
};

/// Finds the partner of a webhook key: PartnerDirectory, or a fake in unit tests.
class PartnerLookup {
public:
    virtual ~PartnerLookup() = default;
    /// The enabled partner of `key`, or nullopt for an unknown or disabled key. Throws when the store is
    /// unavailable (common::db::is_unavailable).
    virtual boost::asio::awaitable<std::optional<Partner>> find(std::string key) = 0;
};

/// How PartnerDirectory bounds what unknown keys cost.
struct DirectoryLimits {
    /// An unknown key is answered from memory this long: a partner created after its key was tried works
    /// within this time.
    std::chrono::milliseconds miss_ttl{5000};
    /// Unknown keys remembered at most; past it the oldest are forgotten (never a known partner).
    std::size_t max_misses = 100'000;
    /// Lookups of keys never seen before running at once, all keys together; past it a new key is answered
    /// unavailable (503, retry later) instead of taking another database worker.
    std::size_t max_new_key_lookups = 2;
};

/// Finds the partner of a webhook key (by SHA-256 of the key), with a cache so that the request path does not
/// query the database for every request:
///   - a known partner is kept `ttl` (disabling or rotating takes effect within it), in its own map that unknown
///     keys never evict;
///   - an unknown key is kept `limits.miss_ttl`, at most `limits.max_misses` of them (oldest forgotten first);
///   - concurrent lookups of one key share one query, and at most `limits.max_new_key_lookups` keys never seen
///     before are looked up at once (more: Unavailable), so random keys take a bounded share of the pool.
/// A signing partner comes with the keys of its valid secrets, opened with `box` (without a box they are
/// unreadable). Thread-safe; must outlive the lookups in flight.
class PartnerDirectory final : public PartnerLookup {
public:
    PartnerDirectory(common::db::Pool& pool, std::chrono::milliseconds ttl,
                     std::optional<common::crypto::SecretBox> box = std::nullopt, DirectoryLimits limits = {})
        : pool_(pool), ttl_(ttl), box_(std::move(box)), limits_(limits) {}

    boost::asio::awaitable<std::optional<Partner>> find(std::string key) override;

private:
    struct Flight;
    struct Known {
        Partner partner;
        std::chrono::steady_clock::time_point expires;
    };
    /// The cached answer for `hash`, when fresh (under mutex_).
    std::optional<std::optional<Partner>> cached(const std::string& hash, std::chrono::steady_clock::time_point now);
    /// Remembers the database's answer for `hash` (under mutex_).
    void remember(const std::string& hash, const std::optional<Partner>& partner);
    boost::asio::awaitable<std::optional<Partner>> query(std::string hash);
    static boost::asio::awaitable<std::optional<Partner>> await_flight(std::shared_ptr<Flight> flight);

    common::db::Pool& pool_;
    std::chrono::milliseconds ttl_;
    std::optional<common::crypto::SecretBox> box_;
    DirectoryLimits limits_;
    std::mutex mutex_;
    std::unordered_map<std::string, Known> known_;
    std::unordered_map<std::string, std::chrono::steady_clock::time_point> misses_;
    std::deque<std::pair<std::string, std::chrono::steady_clock::time_point>> miss_order_;  // oldest first
    std::unordered_map<std::string, std::shared_ptr<Flight>> flights_;
    std::size_t new_key_flights_ = 0;
};

/// A new webhook key: 32 random bytes, URL-safe base64 (256 bits).
std::string new_webhook_key();

/// What is stored of a key: its SHA-256 in hex.
std::string webhook_key_hash(std::string_view key);

/// Associated data binding a sealed signing secret to its partner (`signing_secret:<partner id>`).
std::string signing_secret_aad(std::string_view partner_id);

}  // namespace hub::ingest

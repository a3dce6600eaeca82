#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
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

/// Finds the partner of a webhook key (by SHA-256 of the key), with a short-lived cache so that the request path
/// does not query the database for every request. Disabling or rotating a partner takes effect within `ttl`.
/// Unknown keys are cached too, so random keys cannot hammer the database. A signing partner comes with the keys of
/// its valid secrets, opened with `box` (without a box they are unreadable). Thread-safe.
class PartnerDirectory final : public PartnerLookup {
public:
    PartnerDirectory(common::db::Pool& pool, std::chrono::milliseconds ttl,
                     std::optional<common::crypto::SecretBox> box = std::nullopt)
        : pool_(pool), ttl_(ttl), box_(std::move(box)) {}

    boost::asio::awaitable<std::optional<Partner>> find(std::string key) override;

private:
    struct Entry {
        std::optional<Partner> partner;
        std::chrono::steady_clock::time_point expires;
    };
    common::db::Pool& pool_;
    std::chrono::milliseconds ttl_;
    std::optional<common::crypto::SecretBox> box_;
    std::mutex mutex_;
    std::unordered_map<std::string, Entry> cache_;
};

/// A new webhook key: 32 random bytes, URL-safe base64 (256 bits).
std::string new_webhook_key();

/// What is stored of a key: its SHA-256 in hex.
std::string webhook_key_hash(std::string_view key);

/// Associated data binding a sealed signing secret to its partner (`signing_secret:<partner id>`).
std::string signing_secret_aad(std::string_view partner_id);

}  // namespace hub::ingest

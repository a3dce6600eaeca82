#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
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
    /// find()'s answer when it needs no wait (the key was looked up lately): the partner, shared rather than copied,
    /// or null for a key find() would refuse; nullopt when find() is to be awaited. Every webhook asks this first.
    virtual std::optional<std::shared_ptr<const Partner>> find_now(std::string_view /*key*/) { return std::nullopt; }
};

/// How PartnerDirectory bounds what unknown keys cost.
struct DirectoryLimits {
    /// The set of every partner's key hash is loaded at most this often. A key outside the set waits for the
    /// next load that starts after it arrived (at most about this long plus the load), so a partner created a
    /// moment ago works on its first request, and any flood of unknown keys costs at most one small query per
    /// interval, whatever its rate.
    std::chrono::milliseconds key_set_interval{100};
    /// Requests waiting at once for the next load of the key set; past it a request with an unknown key is
    /// answered unavailable (503, retry later).
    std::size_t max_key_set_waiters = 4096;
};

/// Finds the partner of a webhook key (by SHA-256 of the key) so that the request path does not query the
/// database for every request, and so that unknown keys cost the database nothing per request:
///   - the hashes of all partners' keys are held in memory (DirectoryLimits): a key outside that set is
///     answered "unknown" without a lookup of its own, once a load of the set that began after the request
///     arrived has not found it (concurrent requests share one load; loads are paced by key_set_interval);
///   - a key of the set is looked up once and kept `ttl` (disabling or rotating takes effect within it);
///     entries exist only for keys of the set, so their number is bounded by the partners;
///   - concurrent lookups of one key share one query.
/// A signing partner comes with the keys of its valid secrets, opened with `box` (without a box they are
/// unreadable). Thread-safe; must outlive the lookups in flight.
class PartnerDirectory final : public PartnerLookup {
public:
    PartnerDirectory(common::db::Pool& pool, std::chrono::milliseconds ttl,
                     std::optional<common::crypto::SecretBox> box = std::nullopt, DirectoryLimits limits = {})
        : pool_(pool), ttl_(ttl), box_(std::move(box)), limits_(limits) {}

    boost::asio::awaitable<std::optional<Partner>> find(std::string key) override;
    std::optional<std::shared_ptr<const Partner>> find_now(std::string_view key) override;

private:
    struct Signal;
    struct Flight;
    struct Known {
        std::shared_ptr<const Partner> partner;  ///< null: the key's partner is disabled or gone
        std::chrono::steady_clock::time_point expires;
    };
    /// The cached answer for `hash`, when fresh (under mutex_).
    std::optional<std::shared_ptr<const Partner>> cached(const std::string& hash,
                                                         std::chrono::steady_clock::time_point now);
    /// Whether `hash` belongs to a partner according to a load of the key set begun at or after `arrival`.
    boost::asio::awaitable<bool> in_key_set(const std::string& hash, std::chrono::steady_clock::time_point arrival);
    /// Loads the key set (paced by key_set_interval) and fires `done`; rethrows a failure after firing.
    boost::asio::awaitable<void> load_key_set(std::shared_ptr<Signal> done,
                                              std::chrono::steady_clock::time_point not_before);
    boost::asio::awaitable<std::optional<Partner>> lookup(const std::string& hash);
    boost::asio::awaitable<std::optional<Partner>> query(std::string hash);
    /// Waits for `signal`; false when it did not fire within its bound (kSharedWait from its start).
    static boost::asio::awaitable<bool> wait(std::shared_ptr<Signal> signal);

    common::db::Pool& pool_;
    std::chrono::milliseconds ttl_;
    std::optional<common::crypto::SecretBox> box_;
    DirectoryLimits limits_;
    std::mutex mutex_;
    std::unordered_map<std::string, Known> known_;
    std::unordered_map<std::string, std::shared_ptr<Flight>> flights_;
    std::shared_ptr<const std::unordered_set<std::string>> key_set_;  ///< null until the first load
    std::chrono::steady_clock::time_point key_set_loaded_{};          ///< when the load of key_set_ began
    std::chrono::steady_clock::time_point last_load_{};               ///< when the last load (if any) began
    std::shared_ptr<Signal> loading_;                                 ///< the load running now, if any
    std::size_t key_set_waiters_ = 0;

    /// Hashes std::string and std::string_view alike (lookups by a request's key without a copy).
    struct TextHash {
        using is_transparent = void;
        std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
    };
    /// webhook_key_hash() of the keys find_now() found an enabled partner for, so that a known partner's request
    /// costs no SHA-256 (1.7 % of the network thread's time per stored order, docs/performance.md). A key's hash
    /// never changes, so this only saves work: each answer still comes from known_. Only keys of enabled
    /// partners enter (a flood of unknown keys adds nothing), at most kRememberedKeys, all forgotten when full.
    /// It holds partners' keys as the partners held here hold their signing secrets: in memory, never logged.
    std::unordered_map<std::string, std::string, TextHash, std::equal_to<>> key_hashes_;
    static constexpr std::size_t kRememberedKeys = 4096;
};

/// A new webhook key: 32 random bytes, URL-safe base64 (256 bits).
std::string new_webhook_key();

/// What is stored of a key: its SHA-256 in hex.
std::string webhook_key_hash(std::string_view key);

/// Associated data binding a sealed signing secret to its partner (`signing_secret:<partner id>`).
std::string signing_secret_aad(std::string_view partner_id);

}  // namespace hub::ingest

#include "hub/ingest/partners.hpp"

#include <pqxx/pqxx>

#include "common/crypto/digest.hpp"
#include "common/crypto/random.hpp"
#include "common/db/pool.hpp"
#include "hub/db/queries.hpp"

namespace hub::ingest {

std::string new_webhook_key() { return common::crypto::random_token(32); }

std::string webhook_key_hash(std::string_view key) { return common::crypto::sha256_hex(key); }

boost::asio::awaitable<std::optional<Partner>> PartnerDirectory::find(std::string key) {
    // Keys are 43 URL-safe characters; anything else cannot be one and needs no lookup.
    if (key.empty() || key.size() > 128) co_return std::nullopt;
    const std::string hash = webhook_key_hash(key);
    const auto now = std::chrono::steady_clock::now();
    {
        std::lock_guard lock(mutex_);
        if (auto it = cache_.find(hash); it != cache_.end() && it->second.expires > now) co_return it->second.partner;
        if (cache_.size() > 10'000) cache_.clear();  // bound the memory random keys can take
    }
    auto job = [hash](pqxx::connection& c) {
        pqxx::read_transaction tx(c);
        auto rows = tx.exec_prepared(db::kPartnerByKeyHash, hash);
        std::optional<Partner> p;
        if (!rows.empty() && !rows[0][4].as<bool>())
            p = Partner{rows[0][0].as<std::string>(), rows[0][1].as<std::string>(), rows[0][2].as<std::string>(),
                        rows[0][3].as<bool>()};
        return p;
    };
    auto partner = co_await pool_.run(std::move(job));
    std::lock_guard lock(mutex_);
    cache_[hash] = Entry{partner, std::chrono::steady_clock::now() + ttl_};
    co_return partner;
}

}  // namespace hub::ingest

#include "hub/ingest/partners.hpp"

#include <pqxx/pqxx>

#include "common/crypto/digest.hpp"
#include "common/crypto/random.hpp"
#include "common/db/pool.hpp"
#include "common/log/log.hpp"
#include "hub/db/queries.hpp"
#include "hub/ingest/signature.hpp"

namespace hub::ingest {

std::string new_webhook_key() { return common::crypto::random_token(32); }

std::string webhook_key_hash(std::string_view key) { return common::crypto::sha256_hex(key); }

std::string signing_secret_aad(std::string_view partner_id) { return "signing_secret:" + std::string(partner_id); }

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
    const common::crypto::SecretBox* box = box_ ? &*box_ : nullptr;
    auto job = [hash, box](pqxx::connection& c) {
        pqxx::read_transaction tx(c);
        auto rows = tx.exec_prepared(db::kPartnerByKeyHash, hash);
        std::optional<Partner> p;
        if (rows.empty() || rows[0][4].as<bool>()) return p;
        p.emplace();
        p->id = rows[0][0].as<std::string>();
        p->label = rows[0][1].as<std::string>();
        p->time_zone = rows[0][2].as<std::string>();
        p->signing = rows[0][3].as<bool>();
        if (!rows[0][5].is_null()) p->rate_per_second = rows[0][5].as<double>();
        if (!rows[0][6].is_null()) p->rate_burst = rows[0][6].as<double>();
        if (p->signing) {
            for (const auto& row : tx.exec_prepared(db::kSigningSecretsByPartner, p->id)) {
                auto secret = box ? box->open(row[0].c_str(), signing_secret_aad(p->id)) : std::nullopt;
                auto key = secret ? signing_key_from_secret(*secret) : std::nullopt;
                if (!key) {
                    p->signing_keys_unreadable = true;
                    continue;
                }
                p->signing_keys.push_back(std::move(*key));
            }
        }
        return p;
    };
    auto partner = co_await pool_.run(std::move(job));
    if (partner && partner->signing_keys_unreadable)
        common::log::error(
            "a signing secret of a partner cannot be opened with ORDERHUB_SECRET_KEY; its webhooks "
            "are refused until the hub runs with the key that sealed it",
            {{"partner_id", partner->id}});
    std::lock_guard lock(mutex_);
    cache_[hash] = Entry{partner, std::chrono::steady_clock::now() + ttl_};
    co_return partner;
}

}  // namespace hub::ingest

#include "hub/ingest/partners.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <functional>
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

/// One database lookup of a key, shared by the requests that asked for it while it ran.
struct PartnerDirectory::Flight {
    bool new_key = false;  ///< the key was not known: counts against max_new_key_lookups
    std::mutex mutex;
    bool done = false;
    std::optional<Partner> partner;
    std::exception_ptr error;
    std::vector<std::function<void()>> wake;  ///< one per waiting request
};

namespace {

/// A request waits this long at most for another request's lookup of the same key (the statement time-out of
/// the pool bounds the lookup itself).
constexpr std::chrono::seconds kFlightWait{30};

}  // namespace

std::optional<std::optional<Partner>> PartnerDirectory::cached(const std::string& hash,
                                                               std::chrono::steady_clock::time_point now) {
    if (auto it = known_.find(hash); it != known_.end() && it->second.expires > now)
        return std::make_optional(std::make_optional(it->second.partner));
    if (auto it = misses_.find(hash); it != misses_.end() && it->second > now)
        return std::make_optional(std::optional<Partner>());
    return std::nullopt;
}

void PartnerDirectory::remember(const std::string& hash, const std::optional<Partner>& partner) {
    const auto now = std::chrono::steady_clock::now();
    if (partner) {
        misses_.erase(hash);
        known_.insert_or_assign(hash, Known{*partner, now + ttl_});
        return;
    }
    known_.erase(hash);  // disabled or deleted
    // Forget expired misses, and the oldest ones past the bound; an entry of the queue whose key was missed again
    // later is stale and only dropped.
    while (!miss_order_.empty() && (misses_.size() >= limits_.max_misses || miss_order_.front().second <= now)) {
        const auto& [old, expires] = miss_order_.front();
        if (auto it = misses_.find(old); it != misses_.end() && it->second == expires) misses_.erase(it);
        miss_order_.pop_front();
    }
    if (limits_.max_misses == 0) return;
    const auto expires = now + limits_.miss_ttl;
    misses_.insert_or_assign(hash, expires);
    miss_order_.emplace_back(hash, expires);
}

boost::asio::awaitable<std::optional<Partner>> PartnerDirectory::find(std::string key) {
    // Keys are 43 URL-safe characters; anything else cannot be one and needs no lookup.
    if (key.empty() || key.size() > 128) co_return std::nullopt;
    const std::string hash = webhook_key_hash(key);
    std::shared_ptr<Flight> flight;
    bool leads = false;
    {
        std::lock_guard lock(mutex_);
        if (auto hit = cached(hash, std::chrono::steady_clock::now())) co_return *hit;
        if (auto it = flights_.find(hash); it != flights_.end()) {
            flight = it->second;
        } else {
            // A key seen as a partner before is refreshed whatever the flood; a new one waits its turn.
            const bool new_key = !known_.contains(hash);
            if (new_key && new_key_flights_ >= limits_.max_new_key_lookups)
                throw common::db::Unavailable("too many lookups of unknown webhook keys at once");
            flight = std::make_shared<Flight>();
            flight->new_key = new_key;
            new_key_flights_ += new_key ? 1 : 0;
            flights_.emplace(hash, flight);
            leads = true;
        }
    }
    if (!leads) co_return co_await await_flight(std::move(flight));
    std::optional<Partner> partner;
    std::exception_ptr error;
    try {
        partner = co_await query(hash);
    } catch (...) {
        error = std::current_exception();
    }
    {
        std::lock_guard lock(mutex_);
        if (!error) remember(hash, partner);
        flights_.erase(hash);
        new_key_flights_ -= flight->new_key ? 1 : 0;
    }
    std::vector<std::function<void()>> wake;
    {
        std::lock_guard lock(flight->mutex);
        flight->done = true;
        flight->partner = partner;
        flight->error = error;
        wake.swap(flight->wake);
    }
    for (auto& w : wake) w();
    if (error) std::rethrow_exception(error);
    co_return partner;
}

boost::asio::awaitable<std::optional<Partner>> PartnerDirectory::await_flight(std::shared_ptr<Flight> flight) {
    auto ex = co_await boost::asio::this_coro::executor;
    auto timer = std::make_shared<boost::asio::steady_timer>(ex, kFlightWait);
    bool done = false;
    {
        std::lock_guard lock(flight->mutex);
        done = flight->done;
        // Posted to this request's executor (a connection's strand): it runs once the wait below has begun.
        if (!done) flight->wake.emplace_back([ex, timer] { boost::asio::post(ex, [timer] { timer->cancel(); }); });
    }
    if (!done) co_await timer->async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    std::lock_guard lock(flight->mutex);
    if (!flight->done) throw common::db::Unavailable("a partner lookup did not finish in time");
    if (flight->error) std::rethrow_exception(flight->error);
    co_return flight->partner;
}

boost::asio::awaitable<std::optional<Partner>> PartnerDirectory::query(std::string hash) {
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
    co_return partner;
}

}  // namespace hub::ingest

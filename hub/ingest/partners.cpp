#include "hub/ingest/partners.hpp"

#include <algorithm>
#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
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

namespace {

/// A request waits this long at most for work another request started for it (the statement time-out of the
/// pool bounds each query itself).
constexpr std::chrono::seconds kSharedWait{30};
/// Waiters woken at once when an awaited load finishes; the next slice runs after the work queued meanwhile.
constexpr std::size_t kWakeSlice = 32;

}  // namespace

/// A one-shot event that requests on any executor wait for. A waiting request costs one stored completion
/// handler (allocated with the coroutine's recycling allocator): no timer or callback of its own. The wait is
/// bounded by one timer per event (arm_bound), and the waiters are woken in slices (wake_slices) so that a
/// thousand requests waiting for one load do not hold the network thread from everything else at once.
struct PartnerDirectory::Signal {
    /// A waiting request: its coroutine's executor (a connection's strand) and its completion handler.
    struct Waiter {
        boost::asio::any_io_executor executor;
        boost::asio::any_completion_handler<void()> handler;

        void wake() && {
            boost::asio::post(executor, [h = std::move(handler)]() mutable { std::move(h)(); });
        }
    };

    std::mutex mutex;
    bool done = false;                               ///< fired, or its bound passed: no more waiters join
    bool fired = false;                              ///< the awaited work finished (successfully or not)
    std::exception_ptr error;                        ///< what the awaited work failed with, if it did
    std::vector<Waiter> waiting;                     ///< one per waiting request
    std::optional<boost::asio::steady_timer> bound;  ///< touched on the leader's executor only

    /// Bounds the wait of every waiter to `limit` from now (the leader calls it on its executor).
    void arm_bound(const boost::asio::any_io_executor& ex, std::chrono::steady_clock::duration limit,
                   const std::shared_ptr<Signal>& self) {
        bound.emplace(ex, limit);
        bound->async_wait([weak = std::weak_ptr<Signal>(self), ex](boost::system::error_code ec) {
            if (auto s = weak.lock(); s && !ec) s->release(false, nullptr, ex);
        });
    }

    /// The awaited work finished (on the leader's executor): wakes every waiter.
    void fire(std::exception_ptr failure, const boost::asio::any_io_executor& ex) {
        if (bound) bound->cancel();
        release(true, std::move(failure), ex);
    }

    void release(bool finished, std::exception_ptr failure, const boost::asio::any_io_executor& ex) {
        auto woken = std::make_shared<std::vector<Waiter>>();
        {
            std::lock_guard lock(mutex);
            done = true;
            if (finished) {
                fired = true;
                error = std::move(failure);
            }
            woken->swap(waiting);
        }
        wake_slices(std::move(woken), 0, ex);
    }

    /// Wakes kWakeSlice waiters, then queues the next slice behind whatever else is ready to run.
    static void wake_slices(std::shared_ptr<std::vector<Waiter>> woken, std::size_t from,
                            const boost::asio::any_io_executor& ex) {
        const std::size_t end = std::min(woken->size(), from + kWakeSlice);
        for (std::size_t i = from; i < end; ++i) std::move((*woken)[i]).wake();
        if (end < woken->size())
            boost::asio::post(ex, [woken = std::move(woken), end, ex] { wake_slices(woken, end, ex); });
    }
};

/// One database lookup of a key, shared by the requests that asked for it while it ran.
struct PartnerDirectory::Flight {
    std::shared_ptr<Signal> done = std::make_shared<Signal>();
    std::optional<Partner> partner;  ///< written before `done` fires
};

std::optional<std::shared_ptr<const Partner>> PartnerDirectory::cached(const std::string& hash,
                                                                       std::chrono::steady_clock::time_point now) {
    if (auto it = known_.find(hash); it != known_.end() && it->second.expires > now) return it->second.partner;
    return std::nullopt;
}

namespace {

/// Keys are 43 URL-safe characters; anything else cannot be one and needs no lookup.
bool could_be_key(std::string_view key) { return !key.empty() && key.size() <= 128; }

}  // namespace

std::optional<std::shared_ptr<const Partner>> PartnerDirectory::find_now(std::string_view key) {
    if (!could_be_key(key)) return std::shared_ptr<const Partner>();
    const auto now = std::chrono::steady_clock::now();
    {
        std::lock_guard lock(mutex_);
        if (auto it = key_hashes_.find(key); it != key_hashes_.end()) return cached(it->second, now);
    }
    std::string hash = webhook_key_hash(key);
    std::lock_guard lock(mutex_);
    auto found = cached(hash, now);
    if (found && *found) {
        if (key_hashes_.size() >= kRememberedKeys) key_hashes_.clear();
        key_hashes_.emplace(std::string(key), std::move(hash));
    }
    return found;
}

boost::asio::awaitable<std::optional<Partner>> PartnerDirectory::find(std::string key) {
    if (!could_be_key(key)) co_return std::nullopt;
    const std::string hash = webhook_key_hash(key);
    const auto arrival = std::chrono::steady_clock::now();
    {
        std::lock_guard lock(mutex_);
        if (auto hit = cached(hash, arrival)) co_return *hit ? std::optional<Partner>(**hit) : std::nullopt;
    }
    if (!co_await in_key_set(hash, arrival)) co_return std::nullopt;
    co_return co_await lookup(hash);
}

boost::asio::awaitable<bool> PartnerDirectory::in_key_set(const std::string& hash,
                                                          std::chrono::steady_clock::time_point arrival) {
    for (;;) {
        std::shared_ptr<Signal> load;
        bool leads = false;
        std::chrono::steady_clock::time_point not_before;
        {
            std::lock_guard lock(mutex_);
            if (known_.contains(hash) || (key_set_ && key_set_->contains(hash))) co_return true;
            if (key_set_ && key_set_loaded_ >= arrival) co_return false;
            if (!loading_) {
                loading_ = std::make_shared<Signal>();
                leads = true;
                not_before = last_load_ + limits_.key_set_interval;
            } else if (key_set_waiters_ >= limits_.max_key_set_waiters) {
                throw common::db::Unavailable("too many requests with unknown webhook keys at once");
            } else {
                ++key_set_waiters_;
            }
            load = loading_;
        }
        if (leads) {
            co_await load_key_set(load, not_before);
            continue;
        }
        const bool fired = co_await wait(load);
        {
            std::lock_guard lock(mutex_);
            --key_set_waiters_;
        }
        if (!fired) throw common::db::Unavailable("the webhook keys did not load in time");
        // A load that failed fails the requests that waited for it; one that began before this request arrived
        // is followed by another (the loop).
        if (load->error) std::rethrow_exception(load->error);
    }
}

boost::asio::awaitable<void> PartnerDirectory::load_key_set(std::shared_ptr<Signal> done,
                                                            std::chrono::steady_clock::time_point not_before) {
    std::exception_ptr error;
    auto start = std::chrono::steady_clock::now();
    const auto ex = co_await boost::asio::this_coro::executor;
    done->arm_bound(ex, kSharedWait, done);
    try {
        if (not_before > start) {
            boost::asio::steady_timer pace(ex, not_before);
            co_await pace.async_wait(boost::asio::use_awaitable);
            start = std::chrono::steady_clock::now();
        }
        auto hashes = co_await pool_.run([](pqxx::connection& c) {
            pqxx::read_transaction tx(c);
            auto set = std::make_shared<std::unordered_set<std::string>>();
            for (const auto& row : tx.exec_prepared(db::kPartnerKeyHashes)) set->insert(row[0].c_str());
            return set;
        });
        std::lock_guard lock(mutex_);
        key_set_ = std::move(hashes);
        key_set_loaded_ = start;
        // Keys no longer in the set (their partner deleted) are forgotten, so known_ stays within the partners.
        std::erase_if(known_, [&](const auto& entry) { return !key_set_->contains(entry.first); });
    } catch (...) {
        error = std::current_exception();
    }
    {
        std::lock_guard lock(mutex_);
        loading_.reset();
        last_load_ = start;
    }
    done->fire(error, ex);
    if (error) std::rethrow_exception(error);
}

boost::asio::awaitable<std::optional<Partner>> PartnerDirectory::lookup(const std::string& hash) {
    std::shared_ptr<Flight> flight;
    bool leads = false;
    {
        std::lock_guard lock(mutex_);
        if (auto it = flights_.find(hash); it != flights_.end()) {
            flight = it->second;
        } else {
            flight = std::make_shared<Flight>();
            flights_.emplace(hash, flight);
            leads = true;
        }
    }
    if (!leads) {
        if (!co_await wait(flight->done)) throw common::db::Unavailable("a partner lookup did not finish in time");
        if (flight->done->error) std::rethrow_exception(flight->done->error);
        co_return flight->partner;
    }
    std::exception_ptr error;
    const auto ex = co_await boost::asio::this_coro::executor;
    flight->done->arm_bound(ex, kSharedWait, flight->done);
    try {
        flight->partner = co_await query(hash);
    } catch (...) {
        error = std::current_exception();
    }
    {
        std::lock_guard lock(mutex_);
        if (!error)
            known_.insert_or_assign(hash,
                                    Known{flight->partner ? std::make_shared<const Partner>(*flight->partner) : nullptr,
                                          std::chrono::steady_clock::now() + ttl_});
        flights_.erase(hash);
    }
    flight->done->fire(error, ex);
    if (error) std::rethrow_exception(error);
    co_return flight->partner;
}

boost::asio::awaitable<bool> PartnerDirectory::wait(std::shared_ptr<Signal> signal) {
    // The waiter's completion handler is kept by the signal, which posts it to this coroutine's executor (a
    // connection's strand) when the awaited work finishes or its bound passes.
    co_await boost::asio::async_initiate<decltype(boost::asio::use_awaitable), void()>(
        [&signal](auto handler) {
            Signal::Waiter waiter{boost::asio::get_associated_executor(handler), std::move(handler)};
            std::unique_lock lock(signal->mutex);
            if (!signal->done) {
                signal->waiting.push_back(std::move(waiter));
                return;
            }
            lock.unlock();
            std::move(waiter).wake();
        },
        boost::asio::use_awaitable);
    std::lock_guard lock(signal->mutex);
    co_return signal->fired;
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

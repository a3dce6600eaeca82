#include "common/http/client/host_pool.hpp"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <optional>

#include "common/http/client/connection.hpp"
#include "common/log/log.hpp"

namespace common::http::detail {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

HostPool::HostPool(std::size_t ceiling) : limit(ceiling) {}
HostPool::~HostPool() = default;

/// Unregisters a waiter that gives up (timed out, cancelled or destroyed); a grant that raced with giving up is
/// passed on to the next waiter.
class HostPools::WaiterGuard {
public:
    WaiterGuard(HostPools& hosts, HostPool& pool, std::shared_ptr<Waiter> w)
        : hosts_(hosts), pool_(pool), w_(std::move(w)) {}
    ~WaiterGuard() {
        if (!w_) return;
        bool pass_on = false;
        {
            std::lock_guard lock(hosts_.mutex_);
            if (w_->granted) {
                pass_on = true;
            } else {
                auto& q = pool_.waiters;
                if (auto it = std::find(q.begin(), q.end(), w_); it != q.end()) q.erase(it);
            }
        }
        if (pass_on) hosts_.release(pool_);
    }
    WaiterGuard(const WaiterGuard&) = delete;
    WaiterGuard& operator=(const WaiterGuard&) = delete;
    void dismiss() { w_.reset(); }

private:
    HostPools& hosts_;
    HostPool& pool_;
    std::shared_ptr<Waiter> w_;
};

HostPools::HostPools(const asio::any_io_executor& ex, const ClientOptions& options)
    : ceiling_(std::max<std::size_t>(1, options.max_connections_per_host)),
      idle_keepalive_(options.idle_keepalive),
      queue_timeout_(options.queue_timeout),
      sweep_strand_(asio::make_strand(ex)),
      sweep_timer_(sweep_strand_) {}

std::shared_ptr<HostPool> HostPools::pool_for(const std::string& key) {
    std::lock_guard lock(mutex_);
    auto& p = pools_[key];
    if (!p) p = std::make_shared<HostPool>(ceiling_);
    return p;
}

std::size_t HostPools::in_flight_limit(const std::string& key) const {
    std::lock_guard lock(mutex_);
    auto it = pools_.find(key);
    return it == pools_.end() ? ceiling_ : it->second->limit.allowed();
}

asio::awaitable<HostPools::Wait> HostPools::acquire(HostPool& pool, std::uint64_t& epoch) {
    auto ex = co_await asio::this_coro::executor;
    std::shared_ptr<Waiter> w;
    {
        std::lock_guard lock(mutex_);
        epoch = pool.limit.epoch;
        if (pool.in_flight < pool.limit.allowed() && pool.waiters.empty()) {
            ++pool.in_flight;
        } else {
            w = std::make_shared<Waiter>(ex);
            pool.waiters.push_back(w);
        }
    }
    if (!w) co_return Wait::granted;
    WaiterGuard guard(*this, pool, w);
    // A grant cancels this timer through a post to our strand, so it cannot run before the wait has begun.
    w->timer.expires_after(queue_timeout_);
    auto [ec] = co_await w->timer.async_wait(asio::as_tuple(asio::use_awaitable));
    std::lock_guard lock(mutex_);
    // A grant that arrived with the time-out or the cancellation is taken; otherwise the guard unregisters us
    // (after this lock is released) and passes on a grant that comes in between.
    if (!w->granted) co_return ec ? Wait::cancelled : Wait::timed_out;
    guard.dismiss();
    epoch = pool.limit.epoch;
    co_return Wait::granted;
}

void HostPools::grant_locked(HostPool& pool, std::vector<std::shared_ptr<Waiter>>& granted) {
    while (!pool.waiters.empty() && pool.in_flight < pool.limit.allowed()) {
        ++pool.in_flight;
        granted.push_back(std::move(pool.waiters.front()));
        pool.waiters.pop_front();
        granted.back()->granted = true;
    }
}

void HostPools::wake(const std::vector<std::shared_ptr<Waiter>>& granted) {
    for (const auto& w : granted) asio::post(w->timer.get_executor(), [w] { w->timer.cancel(); });
}

void HostPools::release(HostPool& pool) {
    std::vector<std::shared_ptr<Waiter>> granted;
    {
        std::lock_guard lock(mutex_);
        --pool.in_flight;
        grant_locked(pool, granted);
    }
    wake(granted);
}

void HostPools::feedback(HostPool& pool, std::uint64_t epoch, bool overloaded, const std::string& host,
                         std::string_view why) {
    std::vector<std::shared_ptr<Waiter>> granted;
    auto change = AdaptiveLimit::Change::none;
    std::size_t allowed = 0;
    {
        std::lock_guard lock(mutex_);
        change = pool.limit.on_answer(epoch, overloaded);
        allowed = pool.limit.allowed();
        grant_locked(pool, granted);
    }
    wake(granted);
    if (change == AdaptiveLimit::Change::reduced)
        common::log::warn("fewer requests at once to an overloaded host",
                          {{"host", host}, {"answer", std::string(why)}, {"in_flight_limit", allowed}});
    if (change == AdaptiveLimit::Change::recovered)
        common::log::info("host back to its full number of requests at once",
                          {{"host", host}, {"in_flight_limit", allowed}});
}

std::unique_ptr<Connection> HostPools::take_idle(HostPool& pool) {
    std::vector<std::unique_ptr<Connection>> stale;  // closed after the lock is released
    std::unique_ptr<Connection> found;
    const auto now = Clock::now();
    std::lock_guard lock(mutex_);
    while (!pool.idle.empty() && !found) {
        auto c = std::move(pool.idle.back());
        pool.idle.pop_back();
        if (now - c->idle_since < idle_keepalive_ && c->quiet())
            found = std::move(c);
        else
            stale.push_back(std::move(c));
    }
    return found;
}

void HostPools::put_idle(HostPool& pool, std::unique_ptr<Connection> c) {
    {
        std::lock_guard lock(mutex_);
        if (closed_ || pool.idle.size() >= ceiling_) return;  // c closes
        c->idle_since = Clock::now();
        pool.idle.push_back(std::move(c));
    }
    asio::post(sweep_strand_, [w = weak_from_this()] {
        if (auto self = w.lock()) self->schedule_sweep();
    });
}

/// On the sweep strand: wakes up when the oldest idle connection expires.
void HostPools::schedule_sweep() {
    if (sweep_armed_) return;
    std::optional<Clock::time_point> first;
    {
        std::lock_guard lock(mutex_);
        for (auto& [key, pool] : pools_)
            for (auto& c : pool->idle)
                if (!first || c->idle_since < *first) first = c->idle_since;
    }
    if (!first) return;
    sweep_armed_ = true;
    sweep_timer_.expires_at(*first + idle_keepalive_);
    sweep_timer_.async_wait([w = weak_from_this()](boost::system::error_code ec) {
        auto self = w.lock();
        if (!self) return;
        self->sweep_armed_ = false;
        if (ec) return;
        self->sweep();
        self->schedule_sweep();
    });
}

void HostPools::sweep() {
    std::vector<std::unique_ptr<Connection>> expired;  // closed after the lock is released
    const auto now = Clock::now();
    std::lock_guard lock(mutex_);
    for (auto& [key, pool] : pools_) {
        auto& idle = pool->idle;
        for (auto it = idle.begin(); it != idle.end();) {
            if (now - (*it)->idle_since >= idle_keepalive_) {
                expired.push_back(std::move(*it));
                it = idle.erase(it);
            } else {
                ++it;
            }
        }
    }
}

void HostPools::shutdown() {
    std::vector<std::unique_ptr<Connection>> idle;  // closed after the lock is released
    {
        std::lock_guard lock(mutex_);
        closed_ = true;
        for (auto& [key, pool] : pools_)
            for (auto& c : pool->idle) idle.push_back(std::move(c));
        for (auto& [key, pool] : pools_) pool->idle.clear();
    }
    // The sweep timer goes with this object; its handler holds only a weak reference.
}

}  // namespace common::http::detail

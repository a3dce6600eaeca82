#pragma once
// The hosts of one Client: for each (scheme, host, port, ca_file) the slots of requests in flight, the requests
// waiting for one (in order, each until ClientOptions::queue_timeout), how many the host is allowed at once
// (adaptive_limit.hpp), and its idle keep-alive connections (closed after ClientOptions::idle_keepalive).

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/http/client.hpp"
#include "common/http/client/adaptive_limit.hpp"

namespace common::http::detail {

struct Connection;

/// Someone waiting for a slot of a host. The timer lives on the waiter's strand and runs until the queue time-out;
/// a grant marks the waiter under HostPools' mutex and then cancels the timer from that strand.
struct Waiter {
    explicit Waiter(const boost::asio::any_io_executor& ex) : timer(ex) {}
    boost::asio::steady_timer timer;
    bool granted = false;  // under HostPools' mutex
};

/// The state of one (scheme, host, port, ca_file); every member is guarded by HostPools' mutex.
struct HostPool {
    explicit HostPool(std::size_t ceiling);  // out of line, like the destructor: Connection is incomplete here
    ~HostPool();
    std::size_t in_flight = 0;
    AdaptiveLimit limit;
    std::deque<std::shared_ptr<Waiter>> waiters;
    std::vector<std::unique_ptr<Connection>> idle;  // most recently used last
};

/// The HostPool of every host a Client has used, their slots and idle connections. Thread-safe; made with
/// std::make_shared (the idle sweep holds a weak reference). shutdown() closes the idle connections and keeps any
/// connection given back later from being pooled.
class HostPools : public std::enable_shared_from_this<HostPools> {
public:
    /// How waiting for a slot ended.
    enum class Wait { granted, cancelled, timed_out };

    /// `ex` (the io_context's) runs the idle sweep; `options` gives the ceiling, idle_keepalive and queue_timeout.
    HostPools(const boost::asio::any_io_executor& ex, const ClientOptions& options);
    HostPools(const HostPools&) = delete;
    HostPools& operator=(const HostPools&) = delete;

    /// The pool of `key` (pool_key()), made on first use and kept.
    std::shared_ptr<HostPool> pool_for(const std::string& key);
    /// Requests allowed in flight now for `key`; the ceiling for a host not used yet.
    std::size_t in_flight_limit(const std::string& key) const;

    /// Takes a slot of `pool`, waiting in order behind earlier requests until the queue time-out. On `granted` the
    /// caller owns the slot (see Slot) and `epoch` is the pool's limit epoch at that moment. Run on a strand.
    boost::asio::awaitable<Wait> acquire(HostPool& pool, std::uint64_t& epoch);
    /// Gives a slot back: to the first waiter if the host's limit allows it.
    void release(HostPool& pool);
    /// Feeds the answer of a request sent at `epoch` to the host's limit (see AdaptiveLimit); logs changes with
    /// `host` and `why` (the answer).
    void feedback(HostPool& pool, std::uint64_t epoch, bool overloaded, const std::string& host, std::string_view why);

    /// The most recently used idle connection that is still fresh and quiet; stale ones are closed.
    std::unique_ptr<Connection> take_idle(HostPool& pool);
    /// Keeps `c` for reuse (or closes it after shutdown or when the host has enough idle ones).
    void put_idle(HostPool& pool, std::unique_ptr<Connection> c);
    /// Closes the idle connections; later put_idle() calls close theirs.
    void shutdown();

private:
    class WaiterGuard;

    static void grant_locked(HostPool& pool, std::vector<std::shared_ptr<Waiter>>& granted);
    static void wake(const std::vector<std::shared_ptr<Waiter>>& granted);
    void schedule_sweep();
    void sweep();

    const std::size_t ceiling_;
    const std::chrono::milliseconds idle_keepalive_;
    const std::chrono::milliseconds queue_timeout_;

    mutable std::mutex mutex_;  // guards everything below except the sweep members
    bool closed_ = false;
    std::map<std::string, std::shared_ptr<HostPool>> pools_;

    boost::asio::strand<boost::asio::any_io_executor> sweep_strand_;  // the sweep members are touched only there
    boost::asio::steady_timer sweep_timer_;
    bool sweep_armed_ = false;
};

/// A slot of a host taken by HostPools::acquire, given back when destroyed (also when the request's coroutine is
/// destroyed unfinished).
class Slot {
public:
    Slot(std::shared_ptr<HostPools> hosts, std::shared_ptr<HostPool> pool)
        : hosts_(std::move(hosts)), pool_(std::move(pool)) {}
    ~Slot() {
        if (pool_) hosts_->release(*pool_);
    }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;

private:
    std::shared_ptr<HostPools> hosts_;
    std::shared_ptr<HostPool> pool_;
};

}  // namespace common::http::detail

#pragma once

#include <atomic>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <pqxx/connection>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

namespace common::metrics {
class Histogram;
}

namespace common::db {

/// The database could not be reached (connect failed or the connection broke): answer 503, retry later.
struct Unavailable : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// True when `e` means the store is unavailable rather than a bug or a constraint.
bool is_unavailable(const std::exception_ptr& e);

/// True when an error's SQLSTATE means the store is unavailable (the server going away, too busy, too slow) rather
/// than a bug or a constraint; empty counts (libpq leaves it so when the connection died under the statement).
bool is_unavailable_state(std::string_view sqlstate);

/// Pool statistics for /metrics and tests.
struct PoolStats {
    std::size_t workers = 0;
    std::size_t busy = 0;
    std::size_t queued = 0;
    std::uint64_t jobs = 0;
    std::uint64_t reconnects = 0;
};

/// A fixed set of worker threads, each owning one libpqxx connection (libpqxx connections belong to one
/// thread). Coroutines hand work to it with `co_await pool.run(f)`: `f(pqxx::connection&)` runs on a worker,
/// and the coroutine resumes on its own executor, so no I/O thread ever blocks on the database. A connection
/// that breaks is dropped and every worker reconnects before its next job, which recovers from a server
/// restart without restarting the process. Thread-safe; the destructor finishes queued jobs and joins.
///
/// Declare the io_context before the Pool (so the Pool is destroyed, and its workers joined, first): a worker
/// that has just posted a completion still holds a copy of the coroutine's executor for a moment, and the last
/// copy of a strand must not outlive its io_context (AddressSanitizer caught exactly that in the tests).
class Pool {
public:
    struct Options {
        std::string url;
        std::size_t workers = 4;
        /// Runs on each new connection (prepare statements, set session parameters).
        std::function<void(pqxx::connection&)> on_connect;
        /// When set, each job's wait in the queue (seconds) is observed here (lock-free).
        metrics::Histogram* queue_wait = nullptr;
        /// PostgreSQL's statement_timeout on every connection (0: none): a statement running longer is cancelled
        /// and its job fails as Unavailable, so no request holds a worker for long.
        std::chrono::milliseconds statement_timeout{0};
        /// A job that waited longer than this in the queue fails as Unavailable without running (0: no limit),
        /// so an overloaded pool answers "retry later" instead of letting requests queue without bound.
        std::chrono::milliseconds queue_timeout{0};
    };

    explicit Pool(Options options);
    ~Pool();
    Pool(const Pool&) = delete;
    Pool& operator=(const Pool&) = delete;

    /// Runs `f(pqxx::connection&)` on a worker; returns its result or rethrows its exception. A connect failure
    /// or broken connection surfaces as `Unavailable`.
    /// GCC 12: a lambda temporary written inside the `co_await` expression is relocated bitwise, so one that
    /// captures a std::string (or anything not trivially copyable) breaks. Name it first:
    /// `auto job = [s = str](pqxx::connection& c) {...}; co_await pool.run(std::move(job));`
    template <class F>
    auto run(F f) -> boost::asio::awaitable<std::invoke_result_t<F&, pqxx::connection&>>;

    /// Runs `f` on a worker and blocks the calling thread (CLI commands and tests only, never an I/O thread).
    template <class F>
    auto run_sync(F f) -> std::invoke_result_t<F&, pqxx::connection&>;

    PoolStats stats() const;

    /// A raw job: called on a worker with its connection, or with nullptr and the connect error.
    using Job = std::function<void(pqxx::connection*, std::exception_ptr)>;
    /// Queues a raw job (Batcher and run() build on this).
    void enqueue(Job job);
    /// From inside a job, while no other job waits in the queue: `job` runs next on this worker, with this worker's
    /// connection (checked and replaced if needed, as between any two jobs), once the running job has returned,
    /// without waking another worker whose connection's backend would have to wake too. Otherwise (jobs are
    /// waiting, so it takes its turn behind them; not on a worker; a second time in one job) the same as enqueue().
    void enqueue_here(Job job);

private:
    void worker_loop();

    Options options_;
    mutable std::mutex mutex_;
    std::condition_variable cv_;
    struct Queued {
        Job job;
        std::chrono::steady_clock::time_point since;
    };
    std::deque<Queued> queue_;
    bool stopping_ = false;
    std::size_t busy_ = 0;
    std::uint64_t jobs_ = 0;
    std::atomic<std::uint64_t> epoch_{0};
    std::atomic<std::uint64_t> reconnects_{0};
    std::vector<std::thread> threads_;
};

template <class F>
auto Pool::run(F f) -> boost::asio::awaitable<std::invoke_result_t<F&, pqxx::connection&>> {
    // Not a coroutine itself: it returns the awaitable of async_initiate, so no coroutine frame copies `f`
    // (GCC 12 mishandles by-value lambda parameters of coroutines).
    using R = std::invoke_result_t<F&, pqxx::connection&>;
    namespace asio = boost::asio;
    if constexpr (std::is_void_v<R>) {
        return asio::async_initiate<const asio::use_awaitable_t<>, void(std::exception_ptr)>(
            [this, f = std::move(f)](auto handler) mutable {
                auto work = asio::make_work_guard(asio::get_associated_executor(handler));
                auto h = std::make_shared<decltype(handler)>(std::move(handler));
                enqueue([f = std::move(f), h, work](pqxx::connection* c, std::exception_ptr ep) mutable {
                    if (!ep) {
                        try {
                            f(*c);
                        } catch (...) {
                            ep = std::current_exception();
                        }
                    }
                    // Move the handler out: it must be destroyed on its own executor, never on this worker.
                    auto ex = work.get_executor();
                    asio::post(ex, [h = std::move(h), w = std::move(work), ep]() mutable { (*h)(ep); });
                });
            },
            asio::use_awaitable);
    } else {
        static_assert(std::is_default_constructible_v<R>, "Pool::run needs a default-constructible result");
        return asio::async_initiate<const asio::use_awaitable_t<>, void(std::exception_ptr, R)>(
            [this, f = std::move(f)](auto handler) mutable {
                auto work = asio::make_work_guard(asio::get_associated_executor(handler));
                auto h = std::make_shared<decltype(handler)>(std::move(handler));
                enqueue([f = std::move(f), h, work](pqxx::connection* c, std::exception_ptr ep) mutable {
                    R r{};
                    if (!ep) {
                        try {
                            r = f(*c);
                        } catch (...) {
                            ep = std::current_exception();
                        }
                    }
                    // Move the handler out: it must be destroyed on its own executor, never on this worker.
                    auto ex = work.get_executor();
                    asio::post(ex, [h = std::move(h), w = std::move(work), ep, r = std::move(r)]() mutable {
                        (*h)(ep, std::move(r));
                    });
                });
            },
            asio::use_awaitable);
    }
}

template <class F>
auto Pool::run_sync(F f) -> std::invoke_result_t<F&, pqxx::connection&> {
    using R = std::invoke_result_t<F&, pqxx::connection&>;
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    std::exception_ptr error;
    std::optional<std::conditional_t<std::is_void_v<R>, int, R>> result;
    enqueue([&](pqxx::connection* c, std::exception_ptr ep) {
        if (!ep) {
            try {
                if constexpr (std::is_void_v<R>) {
                    f(*c);
                    result.emplace(0);
                } else {
                    result.emplace(f(*c));
                }
            } catch (...) {
                ep = std::current_exception();
            }
        }
        std::lock_guard lock(m);
        error = ep;
        done = true;
        cv.notify_one();
    });
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return done; });
    if (error) std::rethrow_exception(error);
    if constexpr (!std::is_void_v<R>) return std::move(*result);
}

}  // namespace common::db

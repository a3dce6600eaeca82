#include "common/db/pool.hpp"

#include <pqxx/except>

#include "common/log/log.hpp"
#include "common/metrics/metrics.hpp"

namespace common::db {

bool is_unavailable_state(std::string_view state) {
    // Class 08 (connection exception), 57P01..57P03 (shutdown, crash recovery, cannot connect now), 53300 (too many
    // connections), 57014 (statement time-out: the database is too slow now). libpqxx 6.4 leaves the SQLSTATE empty
    // when the connection died under the statement: that is the server going away too.
    return state.empty() || state.starts_with("08") || state == "57P01" || state == "57P02" || state == "57P03" ||
           state == "53300" || state == "57014";
}

bool is_unavailable(const std::exception_ptr& e) {
    if (!e) return false;
    try {
        std::rethrow_exception(e);
    } catch (const Unavailable&) {
        return true;
    } catch (const pqxx::broken_connection&) {
        return true;
    } catch (const pqxx::sql_error& err) {
        return is_unavailable_state(err.sqlstate());
    } catch (const pqxx::failure&) {
        // Not an SQL error: a connection-level failure ("not connected", commit outcome unknown). The request
        // may be retried safely: every write of the hub is idempotent.
        return true;
    } catch (...) {
        return false;
    }
}

namespace {
// The worker thread's pool and its slot for the job to run next (enqueue_here); null on other threads.
thread_local const Pool* tl_pool = nullptr;
thread_local Pool::Job* tl_next = nullptr;
}  // namespace

Pool::Pool(Options options) : options_(std::move(options)) {
    if (options_.workers == 0) options_.workers = 1;
    threads_.reserve(options_.workers);
    for (std::size_t i = 0; i < options_.workers; ++i) threads_.emplace_back([this] { worker_loop(); });
}

Pool::~Pool() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
}

void Pool::enqueue(Job job) {
    const auto now = options_.queue_wait || options_.queue_timeout.count() > 0
                         ? std::chrono::steady_clock::now()
                         : std::chrono::steady_clock::time_point{};
    {
        std::lock_guard lock(mutex_);
        queue_.push_back(Queued{std::move(job), now});
    }
    cv_.notify_one();
}

void Pool::enqueue_here(Job job) {
    if (tl_pool == this && tl_next != nullptr && !*tl_next) {
        std::lock_guard lock(mutex_);
        if (queue_.empty()) {
            *tl_next = std::move(job);
            return;
        }
    }
    enqueue(std::move(job));
}

PoolStats Pool::stats() const {
    std::lock_guard lock(mutex_);
    return {threads_.size(), busy_, queue_.size(), jobs_, reconnects_.load()};
}

void Pool::worker_loop() {
    std::unique_ptr<pqxx::connection> conn;
    std::uint64_t conn_epoch = 0;
    Job next;  // set by enqueue_here() from inside the job just run
    tl_pool = this;
    tl_next = &next;
    for (;;) {
        Job job;
        std::chrono::steady_clock::time_point since;
        bool continued = false;  // a job of enqueue_here(): it did not wait in the queue
        {
            std::unique_lock lock(mutex_);
            if (next) {
                job = std::move(next);
                next = nullptr;
                continued = true;
            } else {
                cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
                if (queue_.empty()) return;  // stopping and drained
                job = std::move(queue_.front().job);
                since = queue_.front().since;
                queue_.pop_front();
            }
            ++busy_;
            ++jobs_;
        }
        const auto waited = since == std::chrono::steady_clock::time_point{} ? std::chrono::steady_clock::duration{}
                                                                             : std::chrono::steady_clock::now() - since;
        if (options_.queue_wait && !continued)
            options_.queue_wait->observe(std::chrono::duration<double>(waited).count());
        if (options_.queue_timeout.count() > 0 && waited > options_.queue_timeout) {
            job(nullptr, std::make_exception_ptr(Unavailable("database busy: the job waited too long for a worker")));
            std::lock_guard lock(mutex_);
            --busy_;
            continue;
        }
        // Another worker saw the server go away: this connection is very likely dead too.
        if (conn && conn_epoch != epoch_.load()) conn.reset();
        std::exception_ptr setup_error;
        if (!conn) {
            try {
                conn_epoch = epoch_.load();
                auto c = std::make_unique<pqxx::connection>(options_.url);
                // No JIT compilation: the services run short statements, many over JSON arrays that the planner
                // takes for 100 rows, so a table not analyzed yet (a fresh database) pushes their estimated cost
                // past jit_above_cost and each execution compiles for 10 to 15 ms (the POS's batch lookups did).
                c->set_variable("jit", "off");
                if (options_.statement_timeout.count() > 0)
                    c->set_variable("statement_timeout", std::to_string(options_.statement_timeout.count()));
                if (options_.on_connect) options_.on_connect(*c);
                conn = std::move(c);
                reconnects_.fetch_add(1);
            } catch (const std::exception& e) {
                // libpq's message names host and port but never the password.
                setup_error = std::make_exception_ptr(Unavailable(std::string("database unavailable: ") + e.what()));
            }
        }
        job(conn.get(), setup_error);
        if (conn && !conn->is_open()) {
            conn.reset();
            epoch_.fetch_add(1);
        }
        std::lock_guard lock(mutex_);
        --busy_;
    }
}

}  // namespace common::db

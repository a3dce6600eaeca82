#pragma once

#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "common/db/pool.hpp"

namespace common::db {

/// Group commit: coroutines submit jobs one at a time; the batcher hands whatever has queued up (at most
/// `max_batch`) to one pool worker, whose batch function handles them all in one transaction. Each submitter
/// resumes only after that transaction's fate is known. Under light load a batch holds one job, so latency stays
/// that of a single transaction; under load many commits collapse into one. At most `max_concurrent` batches run
/// at once, which leaves pool workers free for other queries. Thread-safe.
template <class Job, class Result>
class Batcher {
public:
    /// Handles `jobs` in one transaction on `conn`: sets `results[i]`, or `errors[i]` for a job that failed on
    /// its own. Throwing fails every job of the batch (e.g. the commit failed: nothing was stored).
    using BatchFn = std::function<void(pqxx::connection& conn, std::span<Job> jobs, std::span<Result> results,
                                       std::span<std::exception_ptr> errors)>;

    Batcher(Pool& pool, BatchFn fn, std::size_t max_batch, std::size_t max_concurrent)
        : state_(std::make_shared<State>(pool, std::move(fn), max_batch, max_concurrent)) {}

    /// Queues `job` and returns its result once its batch committed (or rethrows its error).
    boost::asio::awaitable<Result> submit(Job job) {
        namespace asio = boost::asio;
        return asio::async_initiate<const asio::use_awaitable_t<>, void(std::exception_ptr, Result)>(
            [state = state_, job = std::move(job)](auto handler) mutable {
                auto work = asio::make_work_guard(asio::get_associated_executor(handler));
                auto h = std::make_shared<decltype(handler)>(std::move(handler));
                Entry e{std::move(job), [h, work](std::exception_ptr ep, Result r) mutable {
                            auto ex = work.get_executor();
                            asio::post(ex, [h = std::move(h), w = std::move(work), ep, r = std::move(r)]() mutable {
                                (*h)(ep, std::move(r));
                            });
                        }};
                State::push(state, std::move(e));
            },
            asio::use_awaitable);
    }

private:
    struct Entry {
        Job job;
        std::function<void(std::exception_ptr, Result)> complete;
    };

    struct State {
        State(Pool& p, BatchFn f, std::size_t mb, std::size_t mc)
            : pool(p), fn(std::move(f)), max_batch(mb == 0 ? 1 : mb), max_concurrent(mc == 0 ? 1 : mc) {}

        static void push(const std::shared_ptr<State>& s, Entry e) {
            bool start = false;
            {
                std::lock_guard lock(s->mutex);
                s->queue.push_back(std::move(e));
                if (s->active < s->max_concurrent) {
                    ++s->active;
                    start = true;
                }
            }
            if (start) schedule(s);
        }

        static void schedule(const std::shared_ptr<State>& s) {
            s->pool.enqueue([s](pqxx::connection* c, std::exception_ptr setup) { run_one(s, c, setup); });
        }

        // One batch per pool job, so a broken connection is replaced by the pool before the next batch.
        static void run_one(const std::shared_ptr<State>& s, pqxx::connection* c, std::exception_ptr setup) {
            std::vector<Entry> batch;
            {
                std::lock_guard lock(s->mutex);
                while (!s->queue.empty() && batch.size() < s->max_batch) {
                    batch.push_back(std::move(s->queue.front()));
                    s->queue.pop_front();
                }
                if (batch.empty()) {
                    --s->active;
                    return;
                }
            }
            std::vector<Job> jobs;
            jobs.reserve(batch.size());
            for (auto& e : batch) jobs.push_back(std::move(e.job));
            std::vector<Result> results(batch.size());
            std::vector<std::exception_ptr> errors(batch.size(), setup);
            if (!setup) {
                try {
                    s->fn(*c, jobs, results, errors);
                } catch (...) {
                    std::fill(errors.begin(), errors.end(), std::current_exception());
                }
            }
            for (std::size_t i = 0; i < batch.size(); ++i) batch[i].complete(errors[i], std::move(results[i]));
            bool more = false;
            {
                std::lock_guard lock(s->mutex);
                if (s->queue.empty()) --s->active;
                else more = true;
            }
            if (more) schedule(s);
        }

        Pool& pool;
        BatchFn fn;
        std::size_t max_batch;
        std::size_t max_concurrent;
        std::mutex mutex;
        std::deque<Entry> queue;
        std::size_t active = 0;
    };

    std::shared_ptr<State> state_;
};

}  // namespace common::db

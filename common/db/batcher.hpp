#pragma once

#include <algorithm>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/db/completion.hpp"
#include "common/db/pool.hpp"

namespace common::db {

/// Whether a job that finds the group commit idle should wait for company: only while recent gathers caught some.
/// Each gather's catch (the jobs that joined the one that waited) feeds a moving average; below kWorthwhile, idle
/// jobs start at once, and one idle start in kProbeEvery still gathers to notice company that returned. A probe
/// that catches any brings gathering back. Pure; not thread-safe (the batcher calls it under its lock).
class GatherPolicy {
public:
    /// Average catch below which gathering stops: at a steady 300 jobs/s a 2 ms gather catches 0.6 on average.
    static constexpr double kWorthwhile = 0.25;
    /// While gathering does not pay, one idle start in this many gathers anyway: under 1 % of the jobs wait.
    static constexpr unsigned kProbeEvery = 128;

    /// Called when a job finds the batcher idle: true when it is to wait for company.
    bool gather_now() {
        if (pays()) return true;
        probing_ = ++skipped_ % kProbeEvery == 0;
        return probing_;
    }
    /// The batch that started after a gather held `batch_size` jobs.
    void caught(std::size_t batch_size) {
        const double company = batch_size > 0 ? static_cast<double>(batch_size - 1) : 0.0;
        average_ = probing_ && company > 0 ? 1.0 : average_ * (1 - kWeight) + company * kWeight;
        probing_ = false;
    }
    /// True while recent gathers caught enough company to be worth their wait.
    bool pays() const { return average_ >= kWorthwhile; }

private:
    static constexpr double kWeight = 0.125;  // about the last eight gathers
    double average_ = 1.0;                    // optimistic at first: a new batcher gathers until shown otherwise
    unsigned skipped_ = 0;
    bool probing_ = false;
};

/// An awaitable of `Result` whose work another thread finishes: `start(complete, executor)` runs at once with
/// `complete`, a Completion<Result>, which resumes the awaiting coroutine on its own executor (`executor`). Not a
/// coroutine itself: GCC 12 relocates a lambda written inside a `co_await` expression bitwise, which breaks one that
/// captures a std::string (common/db/pool.hpp). `start` goes boxed: Asio moves the initiation several times on its
/// way, a pointer cheaply, a job of many strings (an order's inbox row) not.
template <class Result, class Start>
boost::asio::awaitable<Result> await_completion(Start&& start) {
    namespace asio = boost::asio;
    return asio::async_initiate<const asio::use_awaitable_t<>, void(std::exception_ptr, Result)>(
        [start = std::make_unique<std::decay_t<Start>>(std::forward<Start>(start))](auto handler) mutable {
            auto work = asio::make_work_guard(asio::get_associated_executor(handler));
            asio::any_io_executor executor = work.get_executor();
            // The work guard goes with the handler: the coroutine's executor has work until it is resumed. Named
            // before the call: built among its arguments, it could get the executor after the other argument took
            // it (their order is unspecified; GCC's is right to left), and resume the coroutine on the thread that
            // completed it.
            Completion<Result> complete(
                [h = std::move(handler), work = std::move(work)](std::exception_ptr ep, Result r) mutable {
                    std::move(h)(ep, std::move(r));
                },
                executor);
            (*start)(std::move(complete), std::move(executor));
        },
        asio::use_awaitable);
}

/// Group commit: coroutines submit jobs one at a time; the batcher hands whatever has queued up (at most
/// `max_batch`) to one pool worker, whose batch function handles them all in one transaction. Each submitter
/// resumes only after that transaction's fate is known. At most `max_concurrent` batches run at once, which
/// leaves pool workers free for other queries.
///
/// Batch size adapts to load. Under light load (recent batches of fewer than 4) a batch holds one job and starts
/// at once, so latency stays that of a single transaction; unless the batcher was given a `gather` time: then a
/// job that finds the batcher idle waits that long (on a timer of its submitter's executor, not on a pool worker)
/// for others to share its statement and commit; so does a job that came while a batch ran and would go next
/// alone, from when it came. That trades latency for PostgreSQL's CPU at low rates, where
/// every statement would otherwise carry one job and pay its fixed costs alone, but only while gathers catch
/// company (GatherPolicy): a client that sends its next job only after the answer to the last one is never joined
/// by anybody, and waiting for it only made each of its jobs slower and dearer. Under load (recent batches of 4
/// or more, and the last one ended less than 5 ms ago) no job gathers (between batches at 64 connections that
/// cost 8 % of the orders/s); a batcher idle for longer had a burst, not load (the deliveries of one claim end
/// within a millisecond of each other, and the next claim comes tens of milliseconds later). Instead a worker
/// that finds fewer than half the recent typical size waiting lingers up to `max_linger` for more: otherwise the
/// first request that follows a batch's answers takes a statement and a commit of its own while the rest of the
/// wave queues behind it.
///
/// A batch takes at most its fair share of the jobs in the system, queued and running, over `max_concurrent`
/// batches; what it leaves goes to a free batch slot at once, or to the next batch. Without that, batches
/// bunch like buses: a large batch answers its submitters together, they come back together and board the
/// next batch as one, while the other batch runs nearly empty; and since a batch's time grows with its size,
/// the largest batches made the tail (at 64 connections, sizes from a few to all 64, and the slowest batches
/// two to three times the median). Thread-safe.
template <class Job, class Result>
class Batcher {
public:
    /// Handles `jobs` in one transaction on `conn`: sets `results[i]`, or `errors[i]` for a job that failed on
    /// its own. Throwing fails every job of the batch (e.g. the commit failed: nothing was stored).
    using BatchFn = std::function<void(pqxx::connection& conn, std::span<Job> jobs, std::span<Result> results,
                                       std::span<std::exception_ptr> errors)>;

    Batcher(Pool& pool, BatchFn fn, std::size_t max_batch, std::size_t max_concurrent,
            std::chrono::microseconds max_linger = std::chrono::microseconds(1000),
            std::chrono::microseconds gather = std::chrono::microseconds(0))
        : state_(std::make_shared<State>(pool, std::move(fn), max_batch, max_concurrent, max_linger, gather)) {}

    /// True while a job that finds the batcher idle waits `gather` for company (GatherPolicy); false without one.
    bool gathers() const {
        std::lock_guard lock(state_->mutex);
        return state_->gather.count() > 0 && state_->policy.pays();
    }

    /// Queues `job` and returns its result once its batch committed (or rethrows its error).
    boost::asio::awaitable<Result> submit(Job job) {
        return await_completion<Result>([state = state_, job = std::move(job)](auto complete, auto executor) mutable {
            State::push(state, Entry{std::move(job), std::move(complete), std::move(executor),
                                     std::chrono::steady_clock::now()});
        });
    }

    /// Queues `job` whose completion the caller has already arranged (`complete` resumes its submitter on the
    /// submitter's own executor, `executor`, as submit's does): a job handed over from another way to the database.
    void submit_then(Job job, Completion<Result> complete, boost::asio::any_io_executor executor) {
        State::push(state_,
                    Entry{std::move(job), std::move(complete), std::move(executor), std::chrono::steady_clock::now()});
    }

    /// True while a batch runs (or is about to) and recent batches held `size` jobs or more on average: load.
    bool busy_with(double size) const {
        std::lock_guard lock(state_->mutex);
        return state_->active > 0 && state_->typical >= size;
    }

private:
    /// Idle this long, a batcher whose recent batches were large had a burst, not load: under load (64 connections)
    /// the next request follows a batch's answers within a millisecond.
    static constexpr std::chrono::milliseconds kBurstGap{5};

    struct Entry {
        Job job;
        Completion<Result> complete;
        boost::asio::any_io_executor executor;          // its submitter's: where a gather's timer runs
        std::chrono::steady_clock::time_point arrived;  // when it was submitted
    };

    struct State {
        State(Pool& p, BatchFn f, std::size_t mb, std::size_t mc, std::chrono::microseconds linger,
              std::chrono::microseconds g)
            : pool(p),
              fn(std::move(f)),
              max_batch(mb == 0 ? 1 : mb),
              max_concurrent(mc == 0 ? 1 : mc),
              max_linger(linger),
              gather(g) {}

        // Queues `e` and starts a batch if a slot is free: at once, or after `e`'s gather when the batcher was idle.
        static void push(const std::shared_ptr<State>& s, Entry e) {
            bool start = false;
            bool wake = false;
            bool delay = false;
            boost::asio::any_io_executor gather_on;
            std::chrono::steady_clock::time_point gather_until;
            {
                std::lock_guard lock(s->mutex);
                s->queue.push_back(std::move(e));
                if (s->active < s->max_concurrent) {
                    // Light load only: where recent batches held 4 or more, the linger below gathers instead,
                    // on the worker, and only while the wave it waits for is still coming. Large batches that
                    // came in bursts (a claim's deliveries, all the answers of one claim at once) are not load:
                    // a batcher idle for kBurstGap (or its gather, if shorter) gathers again.
                    delay =
                        s->active == 0 && s->gather.count() > 0 &&
                        (s->typical < 4.0 || std::chrono::steady_clock::now() - s->idle_since >=
                                                 std::min<std::chrono::steady_clock::duration>(s->gather, kBurstGap)) &&
                        s->policy.gather_now();
                    if (delay) {
                        s->gathered = true;
                        gather_on = s->queue.back().executor;
                        gather_until = s->queue.back().arrived + s->gather;
                    }
                    ++s->active;
                    start = true;
                }
                wake = s->lingering > 0 && s->queue.size() == s->wanted;
            }
            if (wake) s->arrived.notify_all();
            if (start && delay)
                schedule_at(s, gather_on, gather_until);
            else if (start)
                schedule(s);
        }

        // Starts a batch at `when` (the end of a gather), on a timer of a submitter's executor: no pool worker waits.
        static void schedule_at(const std::shared_ptr<State>& s, const boost::asio::any_io_executor& executor,
                                std::chrono::steady_clock::time_point when) {
            auto timer = std::make_shared<boost::asio::steady_timer>(executor, when);
            timer->async_wait([s, timer](const boost::system::error_code&) { schedule(s); });
        }

        static void schedule(const std::shared_ptr<State>& s) {
            s->pool.enqueue([s](pqxx::connection* c, std::exception_ptr setup) { run_one(s, c, setup); });
        }

        // From a batch that just ended, with jobs queued: the next batch runs on the same worker and connection,
        // unless other jobs wait for the pool (Pool::enqueue_here). Always handed to the pool's queue, it woke
        // another worker, and that worker's backend, while this one went idle: at 64 connections about 0.9 x the
        // orders/s, and more PostgreSQL CPU per order (tests/load/results/worker-continuation-2026-11-27-vm.md).
        static void schedule_here(const std::shared_ptr<State>& s) {
            s->pool.enqueue_here([s](pqxx::connection* c, std::exception_ptr setup) { run_one(s, c, setup); });
        }

        // One batch per pool job, so a broken connection is replaced by the pool before the next batch.
        static void run_one(const std::shared_ptr<State>& s, pqxx::connection* c, std::exception_ptr setup) {
            std::vector<Entry> batch;
            bool spawn = false;  // jobs are left and a batch slot is free: start another batch now
            {
                std::unique_lock lock(s->mutex);
                // Half the recent typical batch: 0 or 1 under light load, so a lone job never waits.
                const auto wanted = std::min(s->max_batch, static_cast<std::size_t>(s->typical / 2));
                if (!setup && wanted >= 2 && s->queue.size() < wanted && s->max_linger.count() > 0) {
                    ++s->lingering;
                    s->wanted = std::max(s->wanted, wanted);
                    s->arrived.wait_for(lock, s->max_linger, [&] { return s->queue.size() >= wanted; });
                    if (--s->lingering == 0) s->wanted = 0;
                }
                const std::size_t share = (s->queue.size() + s->running + s->max_concurrent - 1) / s->max_concurrent;
                const std::size_t take = std::min({s->queue.size(), s->max_batch, std::max<std::size_t>(share, 1)});
                batch.reserve(take);
                while (batch.size() < take) {
                    batch.push_back(std::move(s->queue.front()));
                    s->queue.pop_front();
                }
                if (batch.empty()) {
                    if (--s->active == 0) s->idle_since = std::chrono::steady_clock::now();
                    return;
                }
                if (s->gathered) {
                    s->gathered = false;
                    s->policy.caught(batch.size());
                }
                s->running += batch.size();
                s->typical = s->typical * 0.75 + static_cast<double>(batch.size()) * 0.25;
                if (!s->queue.empty() && s->active < s->max_concurrent) {
                    ++s->active;
                    spawn = true;
                }
            }
            if (spawn) schedule(s);
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
            {
                // Before the answers: a submitter may queue its next job at once, and must not count twice.
                std::lock_guard lock(s->mutex);
                s->running -= batch.size();
            }
            for (std::size_t i = 0; i < batch.size(); ++i) batch[i].complete(errors[i], std::move(results[i]));
            bool more = false;
            bool gather = false;
            boost::asio::any_io_executor gather_on;
            std::chrono::steady_clock::time_point gather_until;
            {
                std::lock_guard lock(s->mutex);
                const auto now = std::chrono::steady_clock::now();
                if (!s->queue.empty()) {
                    more = true;
                    // Light load: a job that came while this batch ran would go next, alone. It waits out its
                    // gather from when it came, as it would have had it found the batcher idle (at a steady
                    // 300 orders/s, statements of 2, 1, 2, 1 orders become statements of 2).
                    const auto& first = s->queue.front();
                    if (s->gather.count() > 0 && s->queue.size() == 1 && s->typical < 4.0 &&
                        first.arrived + s->gather > now && s->policy.gather_now()) {
                        s->gathered = true;
                        gather = true;
                        gather_on = first.executor;
                        gather_until = first.arrived + s->gather;
                    }
                } else if (--s->active == 0) {
                    s->idle_since = now;
                }
            }
            if (gather)
                schedule_at(s, gather_on, gather_until);
            else if (more)
                schedule_here(s);
        }

        Pool& pool;
        BatchFn fn;
        std::size_t max_batch;
        std::size_t max_concurrent;
        std::chrono::microseconds max_linger;
        std::chrono::microseconds gather;  // how long a job that finds the batcher idle waits for company
        std::mutex mutex;
        std::condition_variable arrived;  // a lingering worker's wanted size was reached
        std::deque<Entry> queue;
        std::size_t active = 0;     // batches started (a pool job queued or running), at most max_concurrent
        std::size_t running = 0;    // jobs in batches that have been taken from the queue and not yet answered
        std::size_t lingering = 0;  // workers waiting for company
        std::size_t wanted = 0;     // the queue size they wait for (the largest, when several wait)
        double typical = 1;         // moving average of recent batch sizes
        std::chrono::steady_clock::time_point idle_since{};  // when the last batch ended with nothing queued
        GatherPolicy policy;                                 // whether idle jobs gather
        bool gathered = false;  // the next batch to start follows a gather: its size is the gather's catch
    };

    std::shared_ptr<State> state_;
};

}  // namespace common::db

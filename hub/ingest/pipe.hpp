#pragma once

// The order store's way to PostgreSQL under load: insert_orders batches on one connection in libpq's pipeline
// mode, the next batch sent shortly before the running one is expected to end, so that its backend finds the next
// statement waiting instead of waiting for it (docs/performance.md, "The next statement waiting in the pipeline").
// Internal to hub/ingest: OrderStore decides which jobs come here (store.cpp).

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/db/completion.hpp"
#include "hub/ingest/store_job.hpp"

namespace hub::ingest {

/// One thread and one libpq connection in pipeline mode running insert_orders: at most one statement executing and
/// one sent behind it. Each statement is its own transaction (a Sync after it), answered when its commit is
/// known, as the group commit of common::db::Batcher answers. What it cannot answer it hands back (`handback`): the
/// entries of a statement that failed on an error of the statement (nothing of it was committed), or whose arguments
/// could not be built (nothing was sent), and the pending ones (a concurrent transaction inserted their payload.id),
/// which the one-by-one path answers; and every queued entry while it has no connection. The entries of a statement
/// whose connection broke before its answer fail as common::db::Unavailable (503, retry: the retry finds what was
/// committed). Thread-safe.
class IngestPipe {
public:
    using Completion = common::db::Completion<StoreOutcome>;
    struct Entry {
        /// Boxed: an entry is moved from the submitter's coroutine to the queue to its statement, and a job is an
        /// inbox row of fourteen strings and an entry.
        std::unique_ptr<detail::Job> job = std::make_unique<detail::Job>();
        Completion complete;                    ///< resumes the submitter on its own executor
        boost::asio::any_io_executor executor;  ///< the submitter's (the batcher's gather timer runs there)
        std::uint64_t seq = 0;                  ///< set by push()
    };
    using Handback = std::function<void(Entry)>;

    IngestPipe(const PipeSettings& settings, std::size_t max_batch, Handback handback);
    ~IngestPipe();
    IngestPipe(const IngestPipe&) = delete;
    IngestPipe& operator=(const IngestPipe&) = delete;

    /// True while connected, with the statement prepared: pushed entries are sent, not handed back.
    bool ready() const { return ready_.load(std::memory_order_relaxed); }
    /// Queues `e` for the next statement; hands it back at once when not ready.
    void push(Entry e);
    /// Calls `then` (on the pipe's thread, or on this one when nothing is pending) once every entry pushed before
    /// this call has been answered or handed back: an order_updated goes after the order_created pushed before it.
    void after_pending(std::function<void()> then);
    /// What /metrics shows of the pipe.
    PipeStats stats() const;

    /// True while entries pushed are neither answered nor handed back yet.
    bool pending() const;
    /// True while its recent statements carried `size` entries or more on average and it is in use: entries pending,
    /// or the last statement answered less than `gap` ago (load, not a burst).
    bool carries(double size, std::chrono::steady_clock::duration gap) const;

private:
    struct Batch;
    void run();
    void wake();
    /// Hands `e` back to the batcher (counted).
    void give_back(Entry e);
    /// Hands back every queued entry (no connection).
    void hand_back_queued();
    /// Marks the entries up to `seq` as answered and calls the waiters that were waiting for them.
    void answered_up_to(std::uint64_t seq);

    std::string url_;
    std::chrono::milliseconds statement_timeout_;
    std::size_t max_batch_;
    Handback handback_;
    int wake_fd_ = -1;

    mutable std::mutex mutex_;
    std::deque<Entry> queue_;
    bool stopping_ = false;
    bool sleeping_ = false;  // the thread waits for a push to send at once: wake it
    std::uint64_t pushed_ = 0;
    std::uint64_t answered_ = 0;
    std::vector<std::pair<std::uint64_t, std::function<void()>>> waiters_;
    std::atomic<bool> ready_{false};
    std::atomic<std::uint64_t> statements_{0};
    std::atomic<std::uint64_t> requests_{0};
    std::atomic<std::uint64_t> handed_back_{0};
    std::atomic<std::uint64_t> connections_lost_{0};
    std::atomic<std::chrono::steady_clock::rep> last_answer_{0};  // when the last statement was answered
    std::atomic<double> typical_{0};                              // recent statements' entries, on average
    std::thread thread_;
};

}  // namespace hub::ingest

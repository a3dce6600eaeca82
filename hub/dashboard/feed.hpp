#pragma once

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <pqxx/connection>
#include <set>
#include <string>
#include <vector>

#include "common/http/message.hpp"

namespace common::db {
class Pool;
}

namespace hub::dashboard {

/// One change a board shows: `data` is the JSON of the event (kind, detail and the order's summary).
struct Event {
    std::int64_t id = 0;
    std::string branch_id;
    std::string data;
};

/// Which event ids were delivered. Ids come from a sequence, but transactions commit out of order, so an id can
/// become visible after higher ones: the cursor keeps a low-water mark below which everything was seen, plus
/// the ids seen above it, and gives up on a missing id (a rolled-back transaction) after a grace period. Pure;
/// not thread-safe.
class Cursor {
public:
    explicit Cursor(std::int64_t low = 0) : low_(low) {}
    /// Everything at or below this id was seen or given up on; poll for ids above it.
    std::int64_t low() const { return low_; }
    /// True when `id` was not seen before (deliver it).
    bool accept(std::int64_t id);
    /// Every id up to `last` was seen (read as a span without a gap, not one by one).
    void seen_through(std::int64_t last);
    /// Moves the low-water mark over seen ids, and over a gap that has been open for `grace`.
    void advance(std::chrono::steady_clock::time_point now, std::chrono::milliseconds grace);

private:
    std::int64_t low_;
    std::set<std::int64_t> above_;
    std::optional<std::chrono::steady_clock::time_point> gap_since_;
};

/// The events of one open stream: filled by the feed, drained by the stream's coroutine. Thread-safe.
class Subscription {
public:
    Subscription(std::set<std::string> branches, const std::shared_ptr<common::http::StreamWriter>& writer)
        : branches_(std::move(branches)), writer_(writer) {}
    /// Queues `e` when its branch is one of the subscription's, and wakes the stream.
    void offer(const Event& e);
    /// The branches from now on (the user's scope changed); queued events of other branches are dropped.
    void set_branches(std::set<std::string> branches);
    /// The queued events, oldest first; `overflowed` when too many piled up (the stream should end, and the
    /// client resume with Last-Event-ID).
    std::vector<Event> take(bool& overflowed);

private:
    static constexpr std::size_t kMaxQueued = 10'000;
    std::set<std::string> branches_;  // guarded by mutex_
    const std::weak_ptr<common::http::StreamWriter> writer_;
    std::mutex mutex_;
    std::deque<Event> queue_;
    bool overflowed_ = false;
};

/// One per process: polls hub.dashboard_events on the database pool every `interval` and hands new events to
/// the subscriptions whose branches they concern; a change this process committed (nudge()) brings the next poll
/// forward while a board is open here. Every minute (and at start) it also deletes events older than two
/// days and expired sessions, in batches of 10,000 one after the other until none is left, beside the polling: the
/// cleanup keeps up with any rate the hub can store at. Several hub processes each run their own; the table is the
/// shared source. start() once; stop() before the io_context stops.
class EventFeed {
public:
    EventFeed(boost::asio::io_context& ioc, common::db::Pool& pool,
              std::chrono::milliseconds interval = std::chrono::milliseconds(250));
    void start();
    void stop();

    /// This process committed a change a board shows (an order stored, a decision, a resend): while a board is open
    /// on this process, the next poll comes at once rather than at the next tick, yet no sooner than kNudgeGap
    /// after the last one. Thread-safe; with no board open it costs an atomic load. Changes other processes
    /// commit are seen at the next tick.
    void nudge();

    std::shared_ptr<Subscription> subscribe(std::set<std::string> branches,
                                            const std::shared_ptr<common::http::StreamWriter>& writer);
    void unsubscribe(const std::shared_ptr<Subscription>& s);

    /// The events after `after` in the branches user `user_id` may see (at most `limit`), for Last-Event-ID.
    /// Runs on a database worker: call it from a Pool job.
    static std::vector<Event> replay(pqxx::connection& conn, std::int64_t after, const std::string& user_id,
                                     std::size_t limit);

    /// The least time between two polls that nudges bring forward (a burst of orders is one poll per gap).
    static constexpr std::chrono::milliseconds kNudgeGap{20};

private:
    boost::asio::awaitable<void> loop();
    /// On the strand: moves the waiting poll to kNudgeGap after the last one, or to now, when that is sooner.
    void bring_forward();
    boost::asio::awaitable<void> clean_up_loop();

    boost::asio::io_context& ioc_;
    common::db::Pool& pool_;
    std::chrono::milliseconds interval_;
    boost::asio::steady_timer timer_;
    boost::asio::steady_timer cleanup_timer_;  // on timer_'s strand
    std::mutex mutex_;
    std::vector<std::shared_ptr<Subscription>> subs_;
    std::atomic<bool> stopped_{false};
    std::atomic<std::size_t> listeners_{0};  // subs_.size(), read without the mutex by nudge()
    std::atomic<bool> nudged_{false};        // a nudge is on its way to the strand: later ones add nothing
    // On the strand (timer_'s executor):
    bool waiting_ = false;        // the loop waits on timer_ for its next poll
    bool nudge_pending_ = false;  // a nudge came during a poll: the wait after it is brought forward
    std::chrono::steady_clock::time_point last_poll_{};
};

}  // namespace hub::dashboard

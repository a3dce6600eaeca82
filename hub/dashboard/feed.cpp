#include "hub/dashboard/feed.hpp"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>
#include <pqxx/pqxx>
#include <utility>

#include "common/db/pool.hpp"
#include "common/log/log.hpp"
#include "common/log/spawned.hpp"
#include "hub/dashboard/orders.hpp"
#include "hub/dashboard/queries.hpp"

namespace hub::dashboard {
namespace {

namespace asio = boost::asio;

// A missing id is given up on after this long: a transaction that took an id and then took longer than this
// to commit would be missed by open boards (they still see it on their next reload or resume).
constexpr std::chrono::milliseconds kGapGrace{10'000};
constexpr std::size_t kBatch = 500;
// Events are kept two days (a board away for longer reloads its list), and cleaned up this often, in batches of
// kCleanupBatch (each one short transaction) until a batch comes back short.
constexpr std::chrono::minutes kCleanupEvery{1};
constexpr long long kCleanupBatch = 10'000;

/// One batch of the cleanup: deletes up to kCleanupBatch events older than two days and as many expired sessions;
/// true when either batch was full (more is waiting).
bool clean_up_batch(pqxx::connection& c) {
    pqxx::work tx(c);
    const auto events = exec(tx, sql::kDeleteOldEvents, kCleanupBatch).affected_rows();
    const auto sessions = exec(tx, sql::kDeleteExpiredSessions, kCleanupBatch).affected_rows();
    tx.commit();
    return events >= kCleanupBatch || sessions >= kCleanupBatch;
}

/// What a poll read: the events (only their ids while no board listens), or, while no board listens and the ids
/// after the cursor follow it without a gap, the last of them (`through`; the ids not read one by one).
struct Polled {
    std::vector<Event> events;
    std::int64_t through = 0;
    std::size_t read = 0;  // ids the poll covered: kBatch when more may wait
};

std::vector<Event> ids_of(const pqxx::result& rows) {
    std::vector<Event> out(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i)
        out[i].id = rows[static_cast<pqxx::result::size_type>(i)][0].as<std::int64_t>();
    return out;
}

std::vector<Event> events_of(const pqxx::result& rows) {
    std::vector<Event> out;
    out.reserve(rows.size());
    for (const auto& r : rows) {
        Event e;
        e.id = r["event_id"].as<std::int64_t>();
        auto order = summary_json(r);
        e.branch_id = order["branch_id"].as_string().c_str();
        e.data = boost::json::serialize(boost::json::object{{"id", e.id},
                                                            {"kind", r["event_kind"].c_str()},
                                                            {"detail", r["event_detail"].c_str()},
                                                            {"order", std::move(order)}});
        out.push_back(std::move(e));
    }
    return out;
}

}  // namespace

bool Cursor::accept(std::int64_t id) {
    if (id <= low_) return false;
    if (id == low_ + 1 && above_.empty()) {
        low_ = id;  // the next id in order (most are): the mark moves over it at once, as advance() would
        return true;
    }
    return above_.insert(id).second;
}

void Cursor::seen_through(std::int64_t last) {
    if (last <= low_) return;
    low_ = last;
    above_.erase(above_.begin(), above_.upper_bound(low_));
    gap_since_.reset();  // as advance() does when the mark moves: a gap above it is waited for from now
}

void Cursor::advance(std::chrono::steady_clock::time_point now, std::chrono::milliseconds grace) {
    for (;;) {
        if (!above_.empty() && *above_.begin() == low_ + 1) {
            ++low_;
            above_.erase(above_.begin());
            gap_since_.reset();
            continue;
        }
        if (above_.empty()) {
            gap_since_.reset();
            return;
        }
        if (!gap_since_) {
            gap_since_ = now;
            return;
        }
        if (now - *gap_since_ < grace) return;
        low_ = *above_.begin() - 1;  // the ids below the first seen one are given up on
        gap_since_.reset();
    }
}

void Subscription::offer(const Event& e) {
    {
        std::lock_guard lock(mutex_);
        if (overflowed_ || !branches_.contains(e.branch_id)) return;
        if (queue_.size() >= kMaxQueued) {
            overflowed_ = true;
            queue_.clear();
        } else {
            queue_.push_back(e);
        }
    }
    if (auto w = writer_.lock()) w->wake();
}

void Subscription::set_branches(std::set<std::string> branches) {
    std::lock_guard lock(mutex_);
    branches_ = std::move(branches);
    std::erase_if(queue_, [&](const Event& e) { return !branches_.contains(e.branch_id); });
}

std::vector<Event> Subscription::take(bool& overflowed) {
    std::lock_guard lock(mutex_);
    overflowed = overflowed_;
    std::vector<Event> out(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.end()));
    queue_.clear();
    return out;
}

EventFeed::EventFeed(asio::io_context& ioc, common::db::Pool& pool, std::chrono::milliseconds interval)
    : ioc_(ioc),
      pool_(pool),
      interval_(interval),
      timer_(asio::make_strand(ioc)),  // loops and wake-ups serialized
      cleanup_timer_(timer_.get_executor()) {}

void EventFeed::start() {
    asio::co_spawn(timer_.get_executor(), loop(), common::log::on_failure("dashboard feed stopped"));
    asio::co_spawn(timer_.get_executor(), clean_up_loop(), common::log::on_failure("dashboard cleanup stopped"));
}

void EventFeed::stop() {
    stopped_.store(true);
    asio::post(timer_.get_executor(), [this] {
        timer_.cancel();
        cleanup_timer_.cancel();
    });
}

void EventFeed::nudge() {
    if (listeners_.load(std::memory_order_relaxed) == 0 || stopped_.load(std::memory_order_relaxed)) return;
    if (nudged_.exchange(true, std::memory_order_acq_rel)) return;
    asio::post(timer_.get_executor(), [this] {
        nudged_.store(false, std::memory_order_release);
        if (waiting_)
            bring_forward();
        else
            nudge_pending_ = true;
    });
}

void EventFeed::bring_forward() {
    const auto due = std::max(last_poll_ + kNudgeGap, std::chrono::steady_clock::now());
    // A new expiry cancels the pending wait, which the loop then repeats until the new time.
    if (due < timer_.expiry()) timer_.expires_at(due);
}

std::shared_ptr<Subscription> EventFeed::subscribe(std::set<std::string> branches,
                                                   const std::shared_ptr<common::http::StreamWriter>& writer) {
    auto s = std::make_shared<Subscription>(std::move(branches), writer);
    std::lock_guard lock(mutex_);
    subs_.push_back(s);
    listeners_.store(subs_.size(), std::memory_order_relaxed);
    return s;
}

void EventFeed::unsubscribe(const std::shared_ptr<Subscription>& s) {
    std::lock_guard lock(mutex_);
    std::erase(subs_, s);
    listeners_.store(subs_.size(), std::memory_order_relaxed);
}

std::vector<Event> EventFeed::replay(pqxx::connection& conn, std::int64_t after, const std::string& user_id,
                                     std::size_t limit) {
    pqxx::read_transaction tx(conn);
    return events_of(exec(tx, sql::kReplayEvents, after, static_cast<long long>(limit), user_id));
}

asio::awaitable<void> EventFeed::clean_up_loop() {
    bool failing = false;
    while (!stopped_.load()) {
        try {
            // Batch after batch until caught up: each is short, and the polling goes on between them.
            while (!stopped_.load() && co_await pool_.run(&clean_up_batch)) {
            }
            failing = false;
        } catch (const std::exception& e) {
            if (!failing) common::log::warn("dashboard cleanup failed", {{"error", e.what()}});
            failing = true;
        }
        cleanup_timer_.expires_after(kCleanupEvery);
        co_await cleanup_timer_.async_wait(asio::as_tuple(asio::use_awaitable));
    }
}

asio::awaitable<void> EventFeed::loop() {
    std::optional<Cursor> cursor;
    bool failing = false;
    while (!stopped_.load()) {
        try {
            if (!cursor) {
                // Start at the newest event: boards that were open before catch up through Last-Event-ID.
                auto newest = [](pqxx::connection& c) {
                    pqxx::read_transaction tx(c);
                    return exec(tx, sql::kNewestEventId)[0][0].as<std::int64_t>();
                };
                cursor.emplace(co_await pool_.run(std::move(newest)));
            }
            const std::int64_t low = cursor->low();
            bool listening = false;
            {
                std::lock_guard lock(mutex_);
                listening = !subs_.empty();
            }
            auto fetch = [low, listening](pqxx::connection& c) {
                pqxx::read_transaction tx(c);
                const auto limit = static_cast<long long>(kBatch);
                Polled polled;
                if (listening) {
                    polled.events = events_of(exec(tx, sql::kEventsAfter, low, limit));
                    polled.read = polled.events.size();
                    return polled;
                }
                // With no board open only the ids matter (the cursor must stay current): reading each event's order
                // summary cost PostgreSQL about a tenth of what storing the orders did while a burst came in. Ids
                // that follow the cursor without a gap (most, one after another as orders commit) need not be read
                // either: their count and the last of them say so (read one by one, they were about 1 % of the
                // hub's instructions per stored order).
                const auto span = exec(tx, sql::kEventIdSpanAfter, low, limit)[0];
                polled.read = static_cast<std::size_t>(span[0].as<long long>());
                const auto last = span[1].as<std::int64_t>();
                if (polled.read == 0) return polled;  // nothing new: no second read
                if (last - low == static_cast<std::int64_t>(polled.read)) {
                    polled.through = last;
                    return polled;
                }
                polled.events = ids_of(exec(tx, sql::kEventIdsAfter, low, limit));
                polled.read = polled.events.size();
                return polled;
            };
            last_poll_ = std::chrono::steady_clock::now();
            auto polled = co_await pool_.run(std::move(fetch));
            const auto& events = polled.events;
            std::vector<std::shared_ptr<Subscription>> subs;
            {
                std::lock_guard lock(mutex_);
                subs = subs_;
            }
            // A board opened while only ids were read: read these events whole for it, at once.
            if (!listening && !subs.empty()) continue;
            cursor->seen_through(polled.through);
            for (const auto& e : events) {
                if (!cursor->accept(e.id)) continue;
                for (const auto& s : subs) s->offer(e);
            }
            cursor->advance(std::chrono::steady_clock::now(), kGapGrace);
            if (failing) common::log::info("dashboard feed polls again");
            failing = false;
            if (polled.read == kBatch && cursor->low() != low) continue;  // more waiting: no pause
        } catch (const std::exception& e) {
            // The database is away: try again on the next tick (logged once, not four times a second).
            if (!failing) common::log::warn("dashboard feed poll failed", {{"error", e.what()}});
            failing = true;
        }
        // Also with no board open: the cursor must stay current, so that a board that opens gets what follows
        // its opening and nothing older (a slower idle pace delivered seconds-old events as new ones).
        timer_.expires_after(interval_);
        if (std::exchange(nudge_pending_, false)) bring_forward();
        waiting_ = true;
        for (;;) {
            // Cancelled by stop(), or by a nudge that moved the expiry: then wait again, for the new time.
            auto [ec] = co_await timer_.async_wait(asio::as_tuple(asio::use_awaitable));
            if (!ec || stopped_.load()) break;
        }
        waiting_ = false;
    }
}

}  // namespace hub::dashboard

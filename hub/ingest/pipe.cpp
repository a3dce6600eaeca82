#include "hub/ingest/pipe.hpp"

#include <boost/asio/post.hpp>

#include <libpq-fe.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/db/pool.hpp"
#include "common/log/log.hpp"
#include "hub/db/queries.hpp"
#include "hub/db/roles.hpp"

namespace hub::ingest {
namespace {

using Clock = std::chrono::steady_clock;
using Unavailable = common::db::Unavailable;

/// The prepared statement's name on the pipe's connection.
constexpr const char* kStatement = "insert_orders";
/// The pipe's connection in pg_stat_activity (when the URL does not name the application).
const std::string kApplicationName = "orderhub ingest pipeline";
/// Between two attempts to connect while the database cannot be reached (entries go through the pool meanwhile):
/// the first wait, doubled after each failure up to the last (a database not migrated yet fails every attempt).
constexpr auto kReconnectFirst = std::chrono::seconds(1);
constexpr auto kReconnectMost = std::chrono::seconds(30);
/// The oldest statement's answer not come this long after its statement_timeout (or after kNoTimeoutWait without
/// one) since it began executing: the connection is taken for lost, and its entries fail as Unavailable.
constexpr auto kAnswerGrace = std::chrono::seconds(5);
constexpr auto kNoTimeoutWait = std::chrono::minutes(10);
/// How long before the running statement's expected end the next one is sent: early enough that the backend finds
/// it waiting when it ends, late enough that it carries what arrived meanwhile. At 64 connections on 2 cores,
/// 1.5 ms gave 1.07 x the orders/s of one statement at a time; 0.4 ms left the next statement late four times in
/// five, and sending it at once halved the statements (20 orders instead of 30) and gave nothing
/// (docs/performance.md, "The next statement waiting in the pipeline").
constexpr auto kLead = std::chrono::microseconds(1500);
/// What a statement is assumed to take per entry before the first has been timed.
constexpr double kFirstGuessUs = 50;

struct ConnClose {
    void operator()(PGconn* c) const { PQfinish(c); }
};
using Conn = std::unique_ptr<PGconn, ConnClose>;
struct ResultClear {
    void operator()(PGresult* r) const { PQclear(r); }
};
using Result = std::unique_ptr<PGresult, ResultClear>;

/// libpq's last error on `c`, on one line.
std::string error_of(PGconn* c) {
    std::string text;
    for (const char* p = PQerrorMessage(c); *p != '\0'; ++p) {
        const bool space = *p == '\n' || *p == '\t' || *p == ' ';
        if (!space)
            text += *p;
        else if (!text.empty() && text.back() != ' ')
            text += ' ';
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    return text;
}

/// Runs `sql` with at most one text parameter, outside pipeline mode; throws Unavailable on failure.
Result exec(PGconn* c, const char* sql, const std::string* param = nullptr) {
    const char* value = param ? param->c_str() : nullptr;
    Result r(PQexecParams(c, sql, param ? 1 : 0, nullptr, param ? &value : nullptr, nullptr, nullptr, 0));
    const auto status = PQresultStatus(r.get());
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) throw Unavailable(error_of(c));
    return r;
}

/// A connection set up as a pool worker's of `serve` (hub::db::prepare_serving): the hub's app role when the login
/// is a member of it, the statement timeout, insert_orders prepared; then pipeline mode.
Conn open(const std::string& url, std::chrono::milliseconds statement_timeout) {
    Conn c(PQconnectdb(url.c_str()));
    if (!c) throw Unavailable("out of memory");
    if (PQstatus(c.get()) != CONNECTION_OK) throw Unavailable(error_of(c.get()));
    const auto owner = exec(c.get(), db::kSchemaOwnerSql);
    const std::string app = db::hub_roles_for_owner(PQgetvalue(owner.get(), 0, 0)).app;
    const auto may = exec(c.get(), db::kMayBecomeSql, &app);
    if (PQgetvalue(may.get(), 0, 0)[0] == 't') {
        std::unique_ptr<char, decltype(&PQfreemem)> quoted(PQescapeIdentifier(c.get(), app.c_str(), app.size()),
                                                           &PQfreemem);
        if (!quoted) throw Unavailable(error_of(c.get()));
        exec(c.get(), ("SET ROLE " + std::string(quoted.get())).c_str());
    }
    // Named in pg_stat_activity, unless the URL names the application already.
    exec(c.get(), "SELECT set_config('application_name', $1, false) WHERE current_setting('application_name') = ''",
         &kApplicationName);
    if (statement_timeout.count() > 0) {
        const std::string ms = std::to_string(statement_timeout.count());
        exec(c.get(), "SELECT set_config('statement_timeout', $1, false)", &ms);
    }
    Result prepared(PQprepare(c.get(), kStatement, db::insert_orders_sql(), 0, nullptr));
    if (PQresultStatus(prepared.get()) != PGRES_COMMAND_OK) throw Unavailable(error_of(c.get()));
    // Non-blocking: a statement that does not fit the socket's buffer while the backend still runs the one before is
    // sent as the socket drains, and no wait escapes the answer's deadline.
    if (PQsetnonblocking(c.get(), 1) != 0 || PQenterPipelineMode(c.get()) != 1) throw Unavailable(error_of(c.get()));
    return c;
}

/// Destroys a statement's entries on the network thread that made them (their submitter's executor), not on the
/// pipe's: tcmalloc keeps a cache of free memory per thread, and an entry's strings (its inbox row, its columns)
/// freed here went from this thread's cache to the central lists, from which the network thread then fetched the
/// memory for the next orders, both sides paying for the transfer (docs/performance.md). One post per statement.
void free_where_allocated(std::vector<IngestPipe::Entry>&& entries) {
    if (entries.empty()) return;
    const boost::asio::any_io_executor executor = entries.front().executor;
    if (executor == nullptr) return;  // no submitter to go back to: destroyed here
    boost::asio::post(executor, [doomed = std::move(entries)] {});
}

/// Answers a committed statement's entries (those with an answer; the rest were given back, moved from) on their
/// submitters' executor with one post for them all, not one each: the network thread then resumes them one after
/// another, and frees them (free_where_allocated's reason). Entries of several executors (a server with several
/// network threads) are each answered on their own, with a post each.
void answer_where_submitted(std::vector<IngestPipe::Entry>&& entries,
                            std::vector<std::optional<StoreOutcome>>&& answers) {
    // Judged by the answers: an entry without one was given back, and what a move left of it is not looked at.
    std::size_t first = 0;
    while (first < entries.size() && !answers[first]) ++first;
    if (first == entries.size()) return;  // every one given back
    const boost::asio::any_io_executor executor = entries[first].complete.executor();
    bool one_executor = executor != nullptr;
    for (std::size_t k = first; one_executor && k < entries.size(); ++k)
        one_executor = !answers[k] || entries[k].complete.executor() == executor;
    if (!one_executor) {
        for (std::size_t k = 0; k < entries.size(); ++k)
            if (answers[k]) entries[k].complete(nullptr, std::move(*answers[k]));
        free_where_allocated(std::move(entries));
        return;
    }
    boost::asio::post(executor, [entries = std::move(entries), answers = std::move(answers)]() mutable {
        for (std::size_t k = 0; k < entries.size(); ++k)
            if (answers[k]) entries[k].complete.resume(nullptr, std::move(*answers[k]));
    });
}

}  // namespace

struct IngestPipe::Batch {
    std::vector<Entry> entries;
    std::vector<std::optional<StoreOutcome>> answers;  // by entry; none: pending
    Clock::time_point sent;
    std::string error;  // the statement's error, when it failed: nothing of it was committed
    std::string state;  // its SQLSTATE

    /// Reads insert_orders' rows: one per entry it answered (`pending` ones are not answered).
    void read(const PGresult* r) {
        const int col_i = PQfnumber(r, "i");
        const int col_pending = PQfnumber(r, "pending");
        const int col_kind = PQfnumber(r, "kind");
        const int col_order = PQfnumber(r, "order_id");
        const int col_inbox = PQfnumber(r, "inbox_id");
        if (col_i < 0 || col_pending < 0 || col_kind < 0 || col_order < 0 || col_inbox < 0) {
            error = "insert_orders answered without its columns";
            return;
        }
        for (int row = 0; row < PQntuples(r); ++row) {
            const auto n = std::strtoul(PQgetvalue(r, row, col_i), nullptr, 10);
            if (n >= entries.size() || PQgetvalue(r, row, col_pending)[0] == 't') continue;
            answers[n] = detail::answered_outcome(
                PQgetisnull(r, row, col_kind)
                    ? std::nullopt
                    : std::optional<int>(static_cast<int>(std::strtol(PQgetvalue(r, row, col_kind), nullptr, 10))),
                PQgetisnull(r, row, col_order) ? nullptr : PQgetvalue(r, row, col_order),
                PQgetvalue(r, row, col_inbox));
        }
    }
};

IngestPipe::IngestPipe(const PipeSettings& settings, std::size_t max_batch, Handback handback)
    : url_(settings.url),
      statement_timeout_(settings.statement_timeout),
      max_batch_(std::max<std::size_t>(max_batch, 1)),
      handback_(std::move(handback)),
      wake_fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
    if (wake_fd_ < 0) throw std::runtime_error("ingest pipeline: eventfd failed");
    thread_ = std::thread([this] { run(); });
}

IngestPipe::~IngestPipe() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake();
    thread_.join();
    ::close(wake_fd_);
}

void IngestPipe::wake() {
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto written = ::write(wake_fd_, &one, sizeof one);
}

void IngestPipe::push(Entry e) {
    bool queued = false;
    bool wake_it = false;
    {
        std::lock_guard lock(mutex_);
        if (ready_.load(std::memory_order_relaxed) && !stopping_) {
            e.seq = ++pushed_;
            queue_.push_back(std::move(e));
            queued = true;
            wake_it = sleeping_;
            sleeping_ = false;
        }
    }
    if (!queued)
        give_back(std::move(e));  // NOLINT(bugprone-use-after-move): moved only when queued
    else if (wake_it)
        wake();
}

void IngestPipe::after_pending(std::function<void()> then) {
    {
        std::lock_guard lock(mutex_);
        if (answered_ < pushed_) {
            waiters_.emplace_back(pushed_, std::move(then));
            return;
        }
    }
    then();
}

bool IngestPipe::pending() const {
    std::lock_guard lock(mutex_);
    return answered_ < pushed_;
}

bool IngestPipe::carries(double size, Clock::duration gap) const {
    if (typical_.load(std::memory_order_relaxed) < size) return false;
    const Clock::time_point last{Clock::duration(last_answer_.load(std::memory_order_relaxed))};
    return Clock::now() - last < gap || pending();
}

void IngestPipe::answered_up_to(std::uint64_t seq) {
    std::vector<std::function<void()>> due;
    {
        std::lock_guard lock(mutex_);
        answered_ = std::max(answered_, seq);
        auto keep =
            std::stable_partition(waiters_.begin(), waiters_.end(), [&](const auto& w) { return w.first > answered_; });
        for (auto it = keep; it != waiters_.end(); ++it) due.push_back(std::move(it->second));
        waiters_.erase(keep, waiters_.end());
    }
    for (auto& f : due) f();
}

void IngestPipe::give_back(Entry e) {
    handed_back_.fetch_add(1, std::memory_order_relaxed);
    handback_(std::move(e));
}

PipeStats IngestPipe::stats() const {
    return {ready(), statements_.load(std::memory_order_relaxed), requests_.load(std::memory_order_relaxed),
            handed_back_.load(std::memory_order_relaxed), connections_lost_.load(std::memory_order_relaxed)};
}

void IngestPipe::hand_back_queued() {
    std::deque<Entry> queued;
    {
        std::lock_guard lock(mutex_);
        queued.swap(queue_);
    }
    if (queued.empty()) return;
    const std::uint64_t last = queued.back().seq;
    for (auto& e : queued) give_back(std::move(e));
    answered_up_to(last);
}

void IngestPipe::run() {
    Conn conn;
    std::deque<Batch> inflight;                        // sent, in order; at most two
    Clock::time_point busy_since{};                    // when the oldest in flight began executing
    Clock::time_point reconnect_at{};                  // the next attempt to connect
    Clock::duration reconnect_wait = kReconnectFirst;  // the next wait after a failed attempt
    double per_entry = kFirstGuessUs;                  // µs a statement took per entry, recently
    bool down = false;                                 // told the log the pipe has no connection
    bool flushing = false;                             // libpq holds bytes of a statement the socket did not take yet
    const auto answer_wait = statement_timeout_.count() > 0
                                 ? std::chrono::duration_cast<Clock::duration>(statement_timeout_ + kAnswerGrace)
                                 : std::chrono::duration_cast<Clock::duration>(kNoTimeoutWait);

    // The connection broke, or its answer is overdue: whether the statements in flight committed is unknown, so
    // their entries fail as Unavailable (the platform's retry is answered from what was stored).
    const auto lose = [&](const std::string& why) {
        ready_.store(false);
        conn.reset();
        flushing = false;
        connections_lost_.fetch_add(1, std::memory_order_relaxed);
        const auto error = std::make_exception_ptr(Unavailable("ingest pipeline: " + why));
        for (auto& b : inflight) {
            for (auto& e : b.entries) e.complete(error, {});
            answered_up_to(b.entries.back().seq);
        }
        inflight.clear();
        hand_back_queued();
        reconnect_at = Clock::now() + kReconnectFirst;
        if (!down)
            common::log::warn("ingest pipeline lost its connection; orders go through the pool", {{"error", why}});
        down = true;
    };

    // The statement at the front answered in full (its Sync came): each entry gets its answer, or goes back.
    const auto finish = [&](Batch& b) {
        const auto now = Clock::now();
        const double took = std::chrono::duration<double, std::micro>(now - std::max(b.sent, busy_since)).count();
        per_entry = per_entry * 0.75 + 0.25 * took / static_cast<double>(b.entries.size());
        last_answer_.store(now.time_since_epoch().count(), std::memory_order_relaxed);
        busy_since = now;
        const std::uint64_t last = b.entries.back().seq;
        if (b.error.empty()) {
            for (std::size_t k = 0; k < b.entries.size(); ++k)
                if (!b.answers[k]) give_back(std::move(b.entries[k]));  // pending: the one-by-one path answers it
            answer_where_submitted(std::move(b.entries), std::move(b.answers));
        } else if (common::db::is_unavailable_state(b.state)) {
            const auto error = std::make_exception_ptr(Unavailable("ingest pipeline: " + b.error));
            for (auto& e : b.entries) e.complete(error, {});
        } else {
            // Nothing of the statement was committed: the one-by-one path stores each entry as if alone, so one bad
            // entry fails alone.
            for (auto& e : b.entries) give_back(std::move(e));
        }
        answered_up_to(last);
    };

    for (;;) {
        bool stopping = false;
        {
            std::lock_guard lock(mutex_);
            stopping = stopping_;
        }
        if (stopping) ready_.store(false);
        if (stopping && inflight.empty()) break;

        if (!conn) {
            if (Clock::now() >= reconnect_at) {
                try {
                    conn = open(url_, statement_timeout_);
                    ready_.store(true);
                    reconnect_wait = kReconnectFirst;
                    if (down) common::log::info("ingest pipeline connected again");
                    down = false;
                } catch (const std::exception& e) {
                    reconnect_at = Clock::now() + reconnect_wait;
                    reconnect_wait = std::min<Clock::duration>(reconnect_wait * 2, kReconnectMost);
                    if (!down)
                        common::log::warn("ingest pipeline cannot connect; orders go through the pool",
                                          {{"error", e.what()}});
                    down = true;
                }
            }
            if (!conn) {
                hand_back_queued();
                const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(reconnect_at - Clock::now());
                pollfd fd{wake_fd_, POLLIN, 0};
                ::poll(&fd, 1, static_cast<int>(std::max<std::int64_t>(wait.count() + 1, 0)));
                std::uint64_t drained = 0;
                [[maybe_unused]] const auto got = ::read(wake_fd_, &drained, sizeof drained);
                continue;
            }
        }
        PGconn* c = conn.get();

        // The next statement: at once when none runs; shortly before the running one's expected end when one does.
        const auto now = Clock::now();
        auto due = Clock::time_point::max();
        if (inflight.empty())
            due = now;
        else if (inflight.size() == 1)
            due = busy_since +
                  std::chrono::microseconds(
                      static_cast<std::int64_t>(per_entry * static_cast<double>(inflight.front().entries.size()))) -
                  kLead;
        std::vector<Entry> take;
        {
            std::lock_guard lock(mutex_);
            if (!stopping_ && now >= due && !queue_.empty()) {
                std::size_t bytes = 0;
                while (!queue_.empty() && take.size() < max_batch_) {
                    const auto size = queue_.front().job->entry.size() + queue_.front().job->inbox.body.size();
                    if (!take.empty() && bytes + size > detail::kMaxStatementBytes) break;
                    bytes += size;
                    take.push_back(std::move(queue_.front()));
                    queue_.pop_front();
                }
            }
            sleeping_ = !stopping_ && now >= due && take.empty();  // a push wakes the thread to send at once
        }
        if (!take.empty()) {
            typical_.store(typical_.load(std::memory_order_relaxed) * 0.75 + static_cast<double>(take.size()) * 0.25,
                           std::memory_order_relaxed);  // written by this thread only
            Batch b;
            b.entries = std::move(take);
            b.answers.resize(b.entries.size());
            std::vector<const detail::Job*> jobs(b.entries.size());
            for (std::size_t k = 0; k < b.entries.size(); ++k) jobs[k] = b.entries[k].job.get();
            std::vector<std::string> args;
            try {
                args = detail::insert_orders_args(jobs);
            } catch (const std::exception& e) {
                // An entry the statement cannot take (make_entry writes exactly its values, so not expected): nothing
                // is sent, and the one-by-one path stores each entry as if alone, where such an entry fails alone. This
                // thread goes on.
                common::log::error("ingest pipeline: a statement's arguments could not be built",
                                   {{"error", e.what()}});
                const std::uint64_t last = b.entries.back().seq;
                for (auto& entry : b.entries) give_back(std::move(entry));
                answered_up_to(last);
                continue;
            }
            statements_.fetch_add(1, std::memory_order_relaxed);
            requests_.fetch_add(b.entries.size(), std::memory_order_relaxed);
            std::vector<const char*> values(args.size());
            std::vector<int> lengths(args.size());
            const std::vector<int> formats(args.size(), 1);  // all in binary: the columns' arrays, the bodies
            for (std::size_t k = 0; k < args.size(); ++k) {
                values[k] = args[k].data();
                lengths[k] = static_cast<int>(args[k].size());
            }
            b.sent = Clock::now();
            if (inflight.empty()) busy_since = b.sent;
            inflight.push_back(std::move(b));
            const int flushed = PQsendQueryPrepared(c, kStatement, static_cast<int>(args.size()), values.data(),
                                                    lengths.data(), formats.data(), 0) == 1 &&
                                        PQpipelineSync(c) == 1
                                    ? PQflush(c)
                                    : -1;
            if (flushed < 0) lose(error_of(c));
            flushing = flushed == 1;
            continue;
        }

        // Wait for an answer, the due time, or a push (when one would be sent at once); idle, for the server's goodbye.
        auto until = due > now ? due : Clock::time_point::max();
        if (!inflight.empty()) until = std::min(until, busy_since + answer_wait);
        pollfd fds[2] = {{wake_fd_, POLLIN, 0},
                         {PQsocket(c), static_cast<short>(flushing ? POLLIN | POLLOUT : POLLIN), 0}};
        timespec wait{};
        timespec* timeout = nullptr;
        if (until != Clock::time_point::max()) {
            const auto left = std::max(until - Clock::now(), Clock::duration::zero());
            const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
            wait.tv_sec = static_cast<std::time_t>(ns / 1'000'000'000);
            wait.tv_nsec = static_cast<long>(ns % 1'000'000'000);
            timeout = &wait;
        }
        if (::ppoll(fds, 2, timeout, nullptr) < 0 && errno != EINTR) {
            lose("poll failed");
            continue;
        }
        if (fds[0].revents & POLLIN) {
            std::uint64_t drained = 0;
            [[maybe_unused]] const auto got = ::read(wake_fd_, &drained, sizeof drained);
        }
        if (flushing && (fds[1].revents & (POLLIN | POLLOUT | POLLERR | POLLHUP))) {
            const int flushed = PQflush(c);
            if (flushed < 0) {
                lose(error_of(c));
                continue;
            }
            flushing = flushed == 1;
        }
        if (inflight.empty() && (fds[1].revents & (POLLIN | POLLERR | POLLHUP))) {
            // Idle, and the server speaks: its goodbye (a terminated backend, a shutdown). Let go of the connection
            // now, costing no request; the next statement goes on a new one, or through the pool meanwhile.
            if (PQconsumeInput(c) != 1 || PQstatus(c) == CONNECTION_BAD) lose(error_of(c));
            continue;
        }
        if (fds[1].revents & (POLLIN | POLLERR | POLLHUP)) {
            if (PQconsumeInput(c) != 1) {
                lose(error_of(c));
                continue;
            }
            int ends = 0;  // a statement's results end with a null; two in a row: libpq has nothing more
            while (!inflight.empty() && PQisBusy(c) == 0) {
                Result r(PQgetResult(c));
                if (!r) {
                    if (++ends == 2) break;
                    continue;
                }
                ends = 0;
                Batch& b = inflight.front();
                switch (PQresultStatus(r.get())) {
                    case PGRES_TUPLES_OK:
                        if (b.error.empty()) b.read(r.get());
                        break;
                    case PGRES_PIPELINE_SYNC:
                        finish(b);
                        free_where_allocated(std::move(b.entries));
                        inflight.pop_front();
                        break;
                    default:
                        if (b.error.empty()) {
                            const char* state = PQresultErrorField(r.get(), PG_DIAG_SQLSTATE);
                            b.error = PQresultErrorMessage(r.get());
                            b.state = state ? state : "";
                            if (b.error.empty()) b.error = "insert_orders failed";
                        }
                        break;
                }
            }
            if (PQstatus(c) == CONNECTION_BAD) {
                lose(error_of(c));
                continue;
            }
        }
        if (!inflight.empty() && Clock::now() >= busy_since + answer_wait) lose("no answer in time");
    }
    hand_back_queued();
}

}  // namespace hub::ingest

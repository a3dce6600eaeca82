// GET events: the Server-Sent Events stream of a board.
#include <boost/json.hpp>
#include <pqxx/pqxx>
#include <set>

#include "common/db/pool.hpp"
#include "common/log/log.hpp"
#include "hub/dashboard/feed.hpp"
#include "hub/dashboard/handlers.hpp"

namespace hub::dashboard {
namespace {

using common::http::Response;
namespace json = boost::json;

constexpr std::size_t kReplayLimit = 2000;
constexpr std::chrono::seconds kKeepAlive{15};

/// The event-stream framing of one event.
std::string sse(const Event& e) { return "id: " + std::to_string(e.id) + "\nevent: order\ndata: " + e.data + "\n\n"; }

std::optional<std::int64_t> parse_event_id(std::string_view s) {
    if (s.empty() || s.size() > 18) return std::nullopt;
    std::int64_t v = 0;
    for (char ch : s) {
        if (ch < '0' || ch > '9') return std::nullopt;
        v = v * 10 + (ch - '0');
    }
    return v;
}

/// Writes the events after `last_id` in `branches` that the feed no longer holds; returns their ids, or nullopt when
/// the stream must end (the database is away: the browser comes back with the same Last-Event-ID; or the client went).
boost::asio::awaitable<std::optional<std::set<std::int64_t>>> replay(common::db::Pool& pool, std::string user_id,
                                                                     const std::set<std::string>& branches,
                                                                     std::int64_t last_id,
                                                                     common::http::StreamWriter& w) {
    auto job = [last_id, user_id](pqxx::connection& c) { return EventFeed::replay(c, last_id, user_id, kReplayLimit); };
    std::vector<Event> missed;
    try {
        missed = co_await pool.run(std::move(job));
    } catch (const std::exception& e) {
        common::log::warn("dashboard replay failed", {{"error", e.what()}});
        co_return std::nullopt;
    }
    std::set<std::int64_t> replayed;
    for (const auto& e : missed) {
        if (!branches.contains(e.branch_id)) continue;
        replayed.insert(e.id);
        if (!co_await w.write(sse(e))) co_return std::nullopt;
    }
    co_return replayed;
}

/// The branches a stream of `branch` ("" for all the user's) follows for `user`: empty when `branch` is not theirs.
std::set<std::string> stream_branches(const User& user, const std::string& branch) {
    std::set<std::string> out;
    for (const auto& [b, name] : user.branches)
        if (branch.empty() || b == branch) out.insert(b);
    return out;
}

/// What a stream is about: fixed when it opens, but for `branches`, which follows the user's scope.
struct StreamSpec {
    std::string user_id;
    std::string token_hash;
    std::string branch;  ///< the `branch` parameter; "" for every branch of the user
    std::set<std::string> branches;
    std::optional<std::int64_t> last_id;
    std::chrono::milliseconds session_check;
};

/// What a check of the session found: it ended, or its user's branches for the stream (nullopt while the database
/// is away: the next check decides).
struct Recheck {
    bool ended = false;
    std::optional<std::set<std::string>> branches;
};

boost::asio::awaitable<Recheck> recheck(common::db::Pool& pool, std::string token_hash, std::string branch) {
    std::optional<User> user;
    try {
        user = co_await find_user(pool, std::move(token_hash));
    } catch (const std::exception&) {
        co_return Recheck{};
    }
    if (!user) co_return Recheck{true, std::nullopt};
    co_return Recheck{false, stream_branches(*user, branch)};
}

/// The body of GET events: replays what came after `last_id` (when given), then forwards the feed's events until
/// the client goes, the session ends, the stream's branch leaves the user's scope or the server stops. The session
/// and the scope are checked again every `session_check` however busy the stream is. Parameters by value (GCC 12).
boost::asio::awaitable<void> run_stream(EventFeed* feed, common::db::Pool* pool, StreamSpec spec,
                                        std::shared_ptr<common::http::StreamWriter> w) {
    using Clock = std::chrono::steady_clock;
    // Subscribe before replaying, so nothing falls between the two; the replayed ids are not sent twice.
    auto sub = feed->subscribe(spec.branches, w);
    struct Unsubscribe {
        EventFeed* feed;
        std::shared_ptr<Subscription> sub;
        ~Unsubscribe() { feed->unsubscribe(sub); }
    } unsubscribe{feed, sub};
    if (!co_await w->write("retry: 1000\n: connected\n\n")) co_return;
    std::set<std::int64_t> replayed;
    if (spec.last_id) {
        auto ids = co_await replay(*pool, spec.user_id, spec.branches, *spec.last_id, *w);
        if (!ids) co_return;
        replayed = std::move(*ids);
    }
    auto last_write = Clock::now();
    auto next_check = Clock::now() + spec.session_check;
    for (;;) {
        bool overflowed = false;
        for (const auto& e : sub->take(overflowed)) {
            if (replayed.contains(e.id)) continue;
            if (!co_await w->write(sse(e))) co_return;
            last_write = Clock::now();
        }
        if (overflowed) co_return;  // the client reconnects and resumes with Last-Event-ID
        if (Clock::now() >= next_check) {
            // Whatever was written meanwhile: a logout, a disable or an expiry ends the stream within one interval.
            auto found = co_await recheck(*pool, spec.token_hash, spec.branch);
            if (found.ended) {
                co_await w->write("event: session_ended\ndata: {}\n\n");
                co_return;
            }
            if (found.branches && !spec.branch.empty() && found.branches->empty()) co_return;  // out of scope now
            if (found.branches && *found.branches != spec.branches) {
                spec.branches = std::move(*found.branches);
                sub->set_branches(spec.branches);
            }
            next_check = Clock::now() + spec.session_check;
        }
        if (Clock::now() - last_write >= kKeepAlive) {
            // Quiet for a while: a comment keeps proxies from closing the stream.
            if (!co_await w->write(": keep-alive\n\n")) co_return;
            last_write = Clock::now();
        }
        const auto until = std::min(next_check, last_write + kKeepAlive);
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - Clock::now());
        if (!co_await w->wait(std::max(left, std::chrono::milliseconds(1)))) co_return;
    }
}

}  // namespace

boost::asio::awaitable<Response> events(Context& ctx, const Call& call) {
    const auto& req = call.req;
    const std::string branch = query_param(req.target, "branch").value_or("");
    std::optional<std::int64_t> last_id;
    const auto header = req.header("Last-Event-ID");
    const auto param = query_param(req.target, "last_event_id");
    if (header || param) {
        last_id = parse_event_id(header ? *header : *param);
        if (!last_id)
            co_return invalid_request("Last-Event-ID must be an event id",
                                      json::array{json::object{{"path", "Last-Event-ID"}, {"message", "digits"}}});
    }
    auto user = co_await find_user(ctx.pool, call.session.hash);
    if (!user) co_return unauthenticated();
    if (auto refused = refuse_branch(*user, branch)) co_return std::move(*refused);
    StreamSpec spec{user->id, call.session.hash,        branch, stream_branches(*user, branch),
                    last_id,  ctx.options.session_check};
    // One line per stream (its end is the access-log line): who follows what, and where it resumed.
    common::log::info("dashboard stream", {{"request_id", req.request_id},
                                           {"user_id", user->id},
                                           {"branches", static_cast<std::int64_t>(spec.branches.size())},
                                           {"resume_after", last_id ? json::value(*last_id) : json::value(nullptr)}});
    Response r;
    r.content_type = "text/event-stream";
    r.headers.emplace_back("Cache-Control", "no-store");
    r.headers.emplace_back("X-Accel-Buffering", "no");
    r.stream = [feed = &ctx.feed, pool = &ctx.pool,
                spec = std::move(spec)](std::shared_ptr<common::http::StreamWriter> w) {
        return run_stream(feed, pool, spec, std::move(w));
    };
    co_return r;
}

}  // namespace hub::dashboard

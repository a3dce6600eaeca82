#include "hub/dashboard/api.hpp"

#include <boost/json.hpp>
#include <pqxx/pqxx>
#include <regex>

#include "common/crypto/password.hpp"
#include "common/crypto/random.hpp"
#include "common/db/pool.hpp"
#include "common/json/parse.hpp"
#include "common/log/log.hpp"
#include "hub/dashboard/auth.hpp"
#include "hub/dashboard/branches.hpp"
#include "hub/dashboard/feed.hpp"
#include "hub/dashboard/orders.hpp"
#include "hub/dashboard/web.hpp"
#include "hub/forward/resend.hpp"

namespace hub::dashboard {
namespace {

using common::http::Request;
using common::http::Response;
namespace json = boost::json;

constexpr std::string_view kApi = "/api/dashboard/";
constexpr std::size_t kListLimit = 200;
constexpr std::size_t kReplayLimit = 2000;
constexpr std::chrono::seconds kKeepAlive{15};
constexpr int kMaxLoginsAtOnce = 2;

Response with_no_store(Response r) {
    r.headers.emplace_back("Cache-Control", "no-store");
    return r;
}

Response failed(unsigned status, std::string_view code, std::string_view message, json::array details = {}) {
    return with_no_store(common::http::json_response(
        status, json::object{{"status", "failed"},
                             {"error", {{"code", code}, {"message", message}, {"details", std::move(details)}}}}));
}

Response ok(json::object body) {
    body["status"] = "success";
    return with_no_store(common::http::json_response(200, body));
}

Response unauthenticated() { return failed(401, "unauthenticated", "log in first (no session, or it expired)"); }

Response forbidden_branch(const std::string& branch) {
    return failed(403, "forbidden_branch", "this user may not see branch '" + branch + "'");
}

struct User {
    std::string id;
    std::string email;
    std::string brand;
    std::vector<std::pair<std::string, std::string>> branches;  // id, name

    bool sees(const std::string& branch) const {
        return std::any_of(branches.begin(), branches.end(), [&](const auto& b) { return b.first == branch; });
    }
    json::object to_json() const {
        json::array bs;
        for (const auto& [id, name] : branches) bs.push_back({{"id", id}, {"name", name}});
        return {{"id", id}, {"email", email}, {"brand", brand}, {"branches", std::move(bs)}};
    }
};

/// The user of a live session (not expired, user not disabled), with the branches they may see.
std::optional<User> load_user(pqxx::transaction_base& tx, const std::string& token_hash) {
    auto r = tx.exec_params(
        "SELECT u.id, u.email, u.brand_id FROM hub.dashboard_sessions s JOIN hub.dashboard_users u "
        "ON u.id = s.user_id WHERE s.token_hash = $1 AND s.expires_at > now() AND "
        "u.disabled_at IS NULL",
        token_hash);
    if (r.empty()) return std::nullopt;
    User u{r[0][0].c_str(), r[0][1].c_str(), r[0][2].c_str(), {}};
    for (const auto& b : tx.exec_params(
             "SELECT b.id, b.name FROM hub.branches b WHERE " + in_scope("b.id", "$1") + " ORDER BY b.id", u.id))
        u.branches.emplace_back(b[0].c_str(), b[1].c_str());
    return u;
}

/// The event-stream framing of one event.
std::string sse(const Event& e) { return "id: " + std::to_string(e.id) + "\nevent: order\ndata: " + e.data + "\n\n"; }

/// The body of GET /api/dashboard/events: replays what came after `last_id` (when given), then forwards the
/// feed's events until the client goes, the session ends or the server stops. Parameters by value (GCC 12).
boost::asio::awaitable<void> run_stream(EventFeed* feed, common::db::Pool* pool, std::string user_id,
                                        std::string token_hash, std::set<std::string> branches,
                                        std::optional<std::int64_t> last_id,
                                        std::shared_ptr<common::http::StreamWriter> w) {
    // Subscribe before replaying, so nothing falls between the two; the replayed ids are not sent twice.
    auto sub = feed->subscribe(branches, w);
    struct Unsubscribe {
        EventFeed* feed;
        std::shared_ptr<Subscription> sub;
        ~Unsubscribe() { feed->unsubscribe(sub); }
    } unsubscribe{feed, sub};
    std::set<std::int64_t> replayed;
    bool open = co_await w->write("retry: 1000\n: connected\n\n");
    if (open && last_id) {
        auto job = [after = *last_id, user_id](pqxx::connection& c) {
            return EventFeed::replay(c, after, user_id, kReplayLimit);
        };
        std::vector<Event> missed;
        try {
            missed = co_await pool->run(std::move(job));
        } catch (const std::exception& e) {
            // The database is away: end the stream; the browser comes back with the same Last-Event-ID.
            common::log::warn("dashboard replay failed", {{"error", e.what()}});
            co_return;
        }
        for (const auto& e : missed) {
            if (!branches.contains(e.branch_id)) continue;
            replayed.insert(e.id);
            if (!(open = co_await w->write(sse(e)))) break;
        }
    }
    auto last_write = std::chrono::steady_clock::now();
    while (open) {
        bool overflowed = false;
        for (const auto& e : sub->take(overflowed)) {
            if (replayed.contains(e.id)) continue;
            if (!(open = co_await w->write(sse(e)))) break;
            last_write = std::chrono::steady_clock::now();
        }
        if (!open || overflowed) break;  // overflow: the client reconnects and resumes with Last-Event-ID
        if (!co_await w->wait(kKeepAlive)) break;
        if (std::chrono::steady_clock::now() - last_write >= kKeepAlive) {
            // Quiet for a while: a comment keeps proxies from closing the stream, and the session is checked
            // again so that a logout or an expiry ends it.
            auto check = [token_hash](pqxx::connection& c) {
                pqxx::read_transaction tx(c);
                return load_user(tx, token_hash).has_value();
            };
            bool live = true;
            try {
                live = co_await pool->run(std::move(check));
            } catch (const std::exception&) {
                // The database is away: keep the stream; the next check decides.
            }
            if (!live) {
                co_await w->write("event: session_ended\ndata: {}\n\n");
                break;
            }
            open = co_await w->write(": keep-alive\n\n");
            last_write = std::chrono::steady_clock::now();
        }
    }
}

bool valid_since(const std::string& s) {
    static const std::regex re(R"(\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d{1,6})?)?(Z|[+-]\d\d:\d\d))");
    return s.size() <= 40 && std::regex_match(s, re);
}

std::optional<std::int64_t> parse_event_id(std::string_view s) {
    if (s.empty() || s.size() > 18) return std::nullopt;
    std::int64_t v = 0;
    for (char ch : s) {
        if (ch < '0' || ch > '9') return std::nullopt;
        v = v * 10 + (ch - '0');
    }
    return v;
}

}  // namespace

Dashboard::Dashboard(common::db::Pool& pool, EventFeed& feed, bool tls, std::string pos_environment)
    : pool_(pool), feed_(feed), tls_(tls), pos_environment_(std::move(pos_environment)) {}

boost::asio::awaitable<std::optional<Response>> Dashboard::handle(const Request& req) {
    if (req.path.rfind(kApi, 0) == 0) {
        try {
            co_return co_await api(req, req.path.substr(kApi.size()));
        } catch (const std::exception&) {
            // While PostgreSQL is away the board gets a 503 to retry, like the webhooks; anything else is a bug.
            if (!common::db::is_unavailable(std::current_exception())) throw;
        }
        auto r = failed(503, "database_unavailable", "the database is not reachable; try again shortly");
        r.headers.emplace_back("Retry-After", "5");
        co_return r;
    }
    if (req.path == "/dashboard") {
        Response r;
        r.status = 308;
        r.content_type = "text/plain; charset=utf-8";
        r.body = "see /dashboard/\n";
        r.headers.emplace_back("Location", "/dashboard/");
        co_return r;
    }
    if (req.path.rfind("/dashboard/", 0) == 0) {
        if (req.method != "GET" && req.method != "HEAD") {
            auto r = failed(405, "method_not_allowed", "use GET");
            r.headers.emplace_back("Allow", "GET, HEAD");
            co_return r;
        }
        if (auto r = web_response(req.path.substr(std::string_view("/dashboard").size()))) co_return std::move(*r);
        co_return failed(404, "not_found", "no such file");
    }
    co_return std::nullopt;
}

boost::asio::awaitable<Response> Dashboard::api(const Request& req, std::string path) {
    const bool post = req.method == "POST";
    if (!post && req.method != "GET") {
        auto r = failed(405, "method_not_allowed", "use GET or POST");
        r.headers.emplace_back("Allow", "GET, POST");
        co_return r;
    }

    if (path == "login") {
        if (!post) co_return failed(405, "method_not_allowed", "use POST");
        if (!same_origin(req)) co_return failed(403, "cross_origin", "cross-site requests are refused");
        auto parsed = common::json::parse_strict(req.body);
        const json::object* o = parsed.value && parsed.value->is_object() ? &parsed.value->as_object() : nullptr;
        json::array details;
        for (const char* field : {"email", "password"}) {
            const json::value* v = o ? o->if_contains(field) : nullptr;
            if (!v || !v->is_string() || v->as_string().empty() || v->as_string().size() > 1024)
                details.push_back({{"path", std::string("/") + field}, {"message", "a non-empty string"}});
        }
        if (!o || !details.empty())
            co_return failed(400, "invalid_request",
                             o ? "email and password are required" : "the body is not a JSON object",
                             std::move(details));
        const std::string email = normalize_email(o->at("email").as_string());
        if (auto wait = throttle_.blocked(email, LoginThrottle::Clock::now())) {
            auto r = failed(429, "too_many_attempts", "too many failed logins for this e-mail; try again later");
            r.headers.emplace_back("Retry-After", std::to_string(wait->count()));
            co_return r;
        }
        auto job = [email, password = std::string(o->at("password").as_string()), tls = tls_](pqxx::connection& c) {
            pqxx::work tx(c);
            auto r = tx.exec_params(
                "SELECT id, password_hash FROM hub.dashboard_users WHERE email = $1 AND "
                "disabled_at IS NULL",
                email);
            // An unknown e-mail costs as much time as a wrong password, and gets the same answer.
            const bool good = r.empty() ? common::crypto::dummy_verify(password)
                                        : common::crypto::verify_password(password, r[0][1].c_str());
            if (!good) return failed(401, "invalid_credentials", "the e-mail or the password does not match");
            const std::string user_id = r[0][0].c_str();
            const std::string token = common::crypto::random_token();
            tx.exec_params("DELETE FROM hub.dashboard_sessions WHERE user_id = $1 AND expires_at <= now()", user_id);
            tx.exec_params(
                "INSERT INTO hub.dashboard_sessions (token_hash, user_id, expires_at) VALUES ($1, $2, "
                "now() + make_interval(secs => $3))",
                token_hash(token), user_id, static_cast<long long>(std::chrono::seconds(kSessionLifetime).count()));
            auto user = load_user(tx, token_hash(token));
            tx.commit();
            auto res = ok({{"user", user->to_json()}, {"csrf_token", csrf_token(token)}});
            res.headers.emplace_back("Set-Cookie", session_cookie(token, kSessionLifetime, tls));
            return res;
        };
        // A password check costs a database worker about 0.3 s: a burst of logins must not starve the webhooks.
        struct Slot {
            std::atomic<int>& n;
            ~Slot() { n.fetch_sub(1); }
        } slot{logins_};
        if (logins_.fetch_add(1) >= kMaxLoginsAtOnce) {
            auto busy = failed(503, "busy", "too many logins at once; try again in a second");
            busy.headers.emplace_back("Retry-After", "1");
            co_return busy;
        }
        auto res = co_await pool_.run(std::move(job));
        if (res.status == 200) {
            throttle_.succeeded(email);
            common::log::info("dashboard login", {{"request_id", req.request_id}});
        } else {
            if (res.status == 401) throttle_.failed(email, LoginThrottle::Clock::now());
            common::log::info("dashboard login refused", {{"request_id", req.request_id}, {"remote", req.remote}});
        }
        co_return res;
    }

    const auto token = session_token(req);
    if (!token) co_return unauthenticated();
    if (post) {
        if (!same_origin(req)) co_return failed(403, "cross_origin", "cross-site requests are refused");
        const auto header = req.header(kCsrfHeader);
        if (!header || !csrf_matches(*token, *header))
            co_return failed(403, "csrf_failed", "missing or wrong X-CSRF-Token header");
    }
    const std::string hash = token_hash(*token);

    if (path == "session") {
        if (post) co_return failed(405, "method_not_allowed", "use GET");
        auto job = [hash, csrf = csrf_token(*token)](pqxx::connection& c) {
            pqxx::read_transaction tx(c);
            auto user = load_user(tx, hash);
            if (!user) return unauthenticated();
            return ok({{"user", user->to_json()}, {"csrf_token", csrf}});
        };
        co_return co_await pool_.run(std::move(job));
    }

    if (path == "logout") {
        if (!post) co_return failed(405, "method_not_allowed", "use POST");
        auto job = [hash](pqxx::connection& c) {
            pqxx::work tx(c);
            tx.exec_params("DELETE FROM hub.dashboard_sessions WHERE token_hash = $1", hash);
            tx.commit();
        };
        co_await pool_.run(std::move(job));
        auto res = ok({});
        res.headers.emplace_back("Set-Cookie", cleared_cookie(tls_));
        co_return res;
    }

    if (path == "orders") {
        if (post) co_return failed(405, "method_not_allowed", "use GET");
        const std::string branch = query_param(req.target, "branch").value_or("");
        const auto filter_text = query_param(req.target, "filter").value_or("all");
        const auto filter = parse_filter(filter_text);
        const std::string since = query_param(req.target, "since").value_or("");
        json::array details;
        if (branch.empty()) details.push_back({{"path", "branch"}, {"message", "required"}});
        if (!filter) details.push_back({{"path", "filter"}, {"message", "all, today, active or problems"}});
        if (!since.empty() && !valid_since(since))
            details.push_back({{"path", "since"}, {"message", "an ISO 8601 time with an offset"}});
        if (!details.empty()) co_return failed(400, "invalid_request", "bad query parameters", std::move(details));
        auto job = [hash, branch, filter = filter_text == "" ? std::string("all") : filter_text,
                    since](pqxx::connection& c) {
            pqxx::read_transaction tx(c);
            auto user = load_user(tx, hash);
            if (!user) return unauthenticated();
            if (!user->sees(branch)) return forbidden_branch(branch);
            // "today" starts at the given time (the browser's local midnight) or else at UTC midnight.
            json::array orders;
            for (const auto& r : tx.exec_params(
                     "SELECT " + kSummaryColumns + kSummaryFrom +
                         " CROSS JOIN (SELECT coalesce(NULLIF($3, '')::timestamptz, date_trunc('day', now() AT TIME "
                         "ZONE 'UTC') AT TIME ZONE 'UTC')) AS d (start) WHERE o.branch_id = $1 AND ($2 = 'all' OR "
                         "($2 = 'today' AND ((o.created_at >= d.start AND o.created_at < d.start + interval '1 day') "
                         "OR (o.schedule_date >= d.start AND o.schedule_date < d.start + interval '1 day'))) OR "
                         "($2 = 'active' AND o.delivery_status NOT IN ('delivered', 'cancelled')) OR "
                         "($2 = 'problems' AND (j.state IN ('rejected', 'auth_failed', 'dead') OR "
                         "(j.state IN ('pending', 'in_flight') AND j.attempts > 0 AND j.last_error IS NOT NULL)))) "
                         "ORDER BY o.id DESC LIMIT $4",
                     branch, filter, since, static_cast<long long>(kListLimit)))
                orders.push_back(summary_json(r, 0));
            return ok({{"branch", branch}, {"filter", filter}, {"orders", std::move(orders)}});
        };
        co_return co_await pool_.run(std::move(job));
    }

    if (path == "branches") {
        if (post) co_return failed(405, "method_not_allowed", "use GET");
        const std::string branch = query_param(req.target, "branch").value_or("");
        auto job = [hash, branch, environment = pos_environment_](pqxx::connection& c) {
            pqxx::read_transaction tx(c);
            auto user = load_user(tx, hash);
            if (!user) return unauthenticated();
            if (!branch.empty() && !user->sees(branch)) return forbidden_branch(branch);
            return ok({{"branches", branch_states(tx, user->id, environment, branch)}});
        };
        co_return co_await pool_.run(std::move(job));
    }

    constexpr std::string_view kOrders = "orders/";
    if (path.rfind(kOrders, 0) == 0) {
        std::string rest = path.substr(kOrders.size());
        const auto slash = rest.find('/');
        const std::string id = rest.substr(0, slash);
        const std::string action = slash == std::string::npos ? "" : rest.substr(slash + 1);
        if (id.empty() || id.size() > 64) co_return failed(404, "not_found", "no such order");
        if (action.empty()) {
            if (post) co_return failed(405, "method_not_allowed", "use GET");
            auto job = [hash, id](pqxx::connection& c) {
                pqxx::read_transaction tx(c);
                auto user = load_user(tx, hash);
                if (!user) return unauthenticated();
                auto order = order_detail(tx, id, user->id, false);
                if (!order) return failed(404, "not_found", "no such order");
                return ok({{"order", std::move(*order)}});
            };
            co_return co_await pool_.run(std::move(job));
        }
        if (action == "phone") {
            if (!post) co_return failed(405, "method_not_allowed", "use POST");
            auto job = [hash, id, request_id = req.request_id](pqxx::connection& c) {
                pqxx::read_transaction tx(c);
                auto user = load_user(tx, hash);
                if (!user) return unauthenticated();
                auto order = order_detail(tx, id, user->id, true);
                if (!order) return failed(404, "not_found", "no such order");
                const auto& customer = order->at("customer");
                if (customer.is_null()) return failed(404, "no_customer", "the order has no customer data");
                // Who opened which phone number is recorded; the number itself is never logged.
                common::log::info("customer phone opened",
                                  {{"request_id", request_id}, {"user_id", user->id}, {"order_id", id}});
                return ok({{"order_id", id}, {"phone", customer.at("phone")}});
            };
            co_return co_await pool_.run(std::move(job));
        }
        if (action == "resend") {
            if (!post) co_return failed(405, "method_not_allowed", "use POST");
            auto job = [hash, id](pqxx::connection& c) {
                pqxx::work tx(c);
                auto user = load_user(tx, hash);
                if (!user) return unauthenticated();
                if (tx.exec_params("SELECT 1 FROM hub.orders WHERE id = $1 AND " + in_scope("branch_id", "$2"), id,
                                   user->id)
                        .empty())
                    return failed(404, "not_found", "no such order");
                const auto outcome = forward::resend_order(tx, id, user->id);
                if (outcome.kind != forward::ResendOutcome::Kind::requeued)
                    return failed(409, "not_resendable", outcome.message());
                tx.commit();
                return ok({{"order_id", id}, {"previous_state", outcome.previous_state}, {"state", "pending"}});
            };
            auto res = co_await pool_.run(std::move(job));
            if (res.status == 200)
                common::log::info("dashboard resend", {{"request_id", req.request_id}, {"order_id", id}});
            co_return res;
        }
        co_return failed(404, "not_found", "no such endpoint");
    }

    if (path == "events") {
        if (post) co_return failed(405, "method_not_allowed", "use GET");
        const std::string branch = query_param(req.target, "branch").value_or("");
        std::optional<std::int64_t> last_id;
        const auto header = req.header("Last-Event-ID");
        const auto param = query_param(req.target, "last_event_id");
        if (header || param) {
            last_id = parse_event_id(header ? *header : *param);
            if (!last_id)
                co_return failed(400, "invalid_request", "Last-Event-ID must be an event id",
                                 json::array{json::object{{"path", "Last-Event-ID"}, {"message", "digits"}}});
        }
        auto job = [hash](pqxx::connection& c) {
            pqxx::read_transaction tx(c);
            return load_user(tx, hash);
        };
        auto user = co_await pool_.run(std::move(job));
        if (!user) co_return unauthenticated();
        if (!branch.empty() && !user->sees(branch)) co_return forbidden_branch(branch);
        std::set<std::string> branches;
        for (const auto& [b, name] : user->branches)
            if (branch.empty() || b == branch) branches.insert(b);
        // One line per stream (its end is the access-log line): who follows what, and where it resumed.
        common::log::info("dashboard stream",
                          {{"request_id", req.request_id},
                           {"user_id", user->id},
                           {"branches", static_cast<std::int64_t>(branches.size())},
                           {"resume_after", last_id ? json::value(*last_id) : json::value(nullptr)}});
        Response r;
        r.content_type = "text/event-stream";
        r.headers.emplace_back("Cache-Control", "no-store");
        r.headers.emplace_back("X-Accel-Buffering", "no");
        r.stream = [feed = &feed_, pool = &pool_, user_id = user->id, hash, branches,
                    last_id](std::shared_ptr<common::http::StreamWriter> w) {
            return run_stream(feed, pool, user_id, hash, branches, last_id, std::move(w));
        };
        co_return r;
    }

    co_return failed(404, "not_found", "no such endpoint");
}

}  // namespace hub::dashboard

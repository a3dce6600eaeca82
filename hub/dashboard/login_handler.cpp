// POST login, POST logout, GET session.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>
#include <pqxx/pqxx>

#include "common/crypto/password.hpp"
#include "common/crypto/random.hpp"
#include "common/db/pool.hpp"
#include "common/json/parse.hpp"
#include "common/log/log.hpp"
#include "hub/dashboard/handlers.hpp"
#include "hub/dashboard/queries.hpp"

namespace hub::dashboard {
namespace {

using common::http::Response;
namespace json = boost::json;

// A login waits this long at most for its turn at a password check, looking every kLoginPoll whether it came.
constexpr std::chrono::seconds kLoginWait{5};
constexpr std::chrono::milliseconds kLoginPoll{50};

struct Credentials {
    std::string email;  ///< normalized
    std::string password;
};

/// The e-mail and password of a login body; sets `refusal` to a 400 and returns nullopt when either is missing, or
/// when the e-mail is not text that may reach a query or a log (text_problem).
std::optional<Credentials> parse_credentials(std::string_view body, Response& refusal) {
    auto parsed = common::json::parse_strict(body);
    const json::object* o = parsed.value && parsed.value->is_object() ? &parsed.value->as_object() : nullptr;
    json::array details;
    for (const char* field : {"email", "password"}) {
        const json::value* v = o ? o->if_contains(field) : nullptr;
        if (!v || !v->is_string() || v->as_string().empty() || v->as_string().size() > 1024)
            details.push_back({{"path", std::string("/") + field}, {"message", "a non-empty string"}});
    }
    if (!o || !details.empty()) {
        refusal = invalid_request(o ? "email and password are required" : "the body is not a JSON object",
                                  std::move(details));
        return std::nullopt;
    }
    const std::string_view email = o->at("email").as_string();
    if (auto problem = text_problem(email)) {
        refusal = invalid_request("the e-mail is not valid text",
                                  json::array{json::object{{"path", "/email"}, {"message", "the e-mail " + *problem}}});
        return std::nullopt;
    }
    return Credentials{normalize_email(email), std::string(o->at("password").as_string())};
}

/// On a database worker: checks the password and opens a session (200 with its cookie), or 401.
Response open_session(pqxx::connection& c, const Credentials& credentials, bool tls) {
    pqxx::work tx(c);
    auto r = exec(tx, sql::kLoginUser, credentials.email);
    // An unknown e-mail costs as much time as a wrong password, and gets the same answer.
    const bool good = r.empty() ? common::crypto::dummy_verify(credentials.password)
                                : common::crypto::verify_password(credentials.password, r[0]["password_hash"].c_str());
    if (!good) return failed(401, "invalid_credentials", "the e-mail or the password does not match");
    const std::string user_id = r[0]["id"].c_str();
    const std::string token = common::crypto::random_token();
    exec(tx, sql::kDeleteExpiredUserSessions, user_id);
    exec(tx, sql::kInsertSession, token_hash(token), user_id,
         static_cast<long long>(std::chrono::seconds(kSessionLifetime).count()));
    auto user = load_user(tx, token_hash(token));
    tx.commit();
    auto res = ok({{"user", user->to_json()}, {"csrf_token", csrf_token(token)}});
    res.headers.emplace_back("Set-Cookie", session_cookie(token, kSessionLifetime, tls));
    return res;
}

/// Waits for the turn of a login from `remote` at a password check (LoginGate); false when it is not coming (busy).
boost::asio::awaitable<bool> take_turn(LoginGate& gate, const std::string& remote) {
    const auto entry = gate.arrive(remote);
    if (entry.admission != LoginGate::Admission::wait) co_return entry.admission == LoginGate::Admission::run;
    boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
    const auto deadline = std::chrono::steady_clock::now() + kLoginWait;
    while (std::chrono::steady_clock::now() < deadline) {
        timer.expires_after(kLoginPoll);
        auto [ec] = co_await timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
        if (gate.granted(entry.ticket)) co_return true;
        if (ec) break;  // the server stops
    }
    co_return gate.abandon(entry.ticket);
}

}  // namespace

boost::asio::awaitable<Response> login(Context& ctx, const Call& call) {
    const auto& req = call.req;
    // The body first: a control character in the e-mail is refused before anything looks at it.
    Response refusal;
    auto credentials = parse_credentials(req.body, refusal);
    if (!credentials) co_return refusal;
    if (!same_origin(req)) co_return cross_origin();
    const std::string email = credentials->email;
    if (auto wait = ctx.throttle.blocked(email, LoginThrottle::Clock::now())) {
        co_return failed({429,
                          "too_many_attempts",
                          "too many failed logins for this e-mail; try again later",
                          {},
                          std::chrono::duration_cast<std::chrono::seconds>(*wait)});
    }
    // A password check costs a database worker about 0.3 s: a burst of logins must not starve the webhooks, and one
    // client's burst must not keep the others out (each address gets its turn).
    if (!co_await take_turn(ctx.gate, req.remote))
        co_return failed({503, "busy", "too many logins at once; try again in a second", {}, std::chrono::seconds(1)});
    struct Slot {
        LoginGate& gate;
        ~Slot() { gate.release(); }
    } slot{ctx.gate};
    auto job = [credentials = std::move(*credentials), tls = ctx.options.secure_cookies](pqxx::connection& c) {
        return open_session(c, credentials, tls);
    };
    auto res = co_await ctx.pool.run(std::move(job));
    if (res.status == 200) {
        ctx.throttle.succeeded(email);
        common::log::info("dashboard login", {{"request_id", req.request_id}});
    } else {
        if (res.status == 401) ctx.throttle.failed(email, LoginThrottle::Clock::now());
        common::log::info("dashboard login refused", {{"request_id", req.request_id}, {"remote", req.remote}});
    }
    co_return res;
}

boost::asio::awaitable<Response> logout(Context& ctx, const Call& call) {
    auto job = [hash = call.session.hash](pqxx::connection& c) {
        pqxx::work tx(c);
        exec(tx, sql::kDeleteSession, hash);
        tx.commit();
    };
    co_await ctx.pool.run(std::move(job));
    auto res = ok({});
    res.headers.emplace_back("Set-Cookie", cleared_cookie(ctx.options.secure_cookies));
    co_return res;
}

boost::asio::awaitable<Response> session_info(Context& ctx, const Call& call) {
    auto body = [csrf = csrf_token(call.session.token)](pqxx::transaction_base&, const User& user) {
        return ok({{"user", user.to_json()}, {"csrf_token", csrf}});
    };
    co_return co_await in_session<pqxx::read_transaction>(ctx.pool, call.session.hash, std::move(body));
}

}  // namespace hub::dashboard

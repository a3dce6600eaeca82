#include "pos/http/login_handler.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>
#include <chrono>

#include "common/crypto/digest.hpp"
#include "common/crypto/random.hpp"
#include "common/log/log.hpp"
#include "pos/http/responses.hpp"
#include "pos/logic/credentials.hpp"
#include "pos/store/users.hpp"

namespace pos::http {

using common::http::Response;

namespace {

// A throttled attempt checks no password but waits about as long as a check takes, so that every 401 looks
// alike; waiting on a timer costs no CPU.
constexpr std::chrono::milliseconds kThrottledDelay{250};

}  // namespace

boost::asio::awaitable<Response> handle_login(common::http::Request req, common::db::Pool& pool,
                                              PasswordWorker& passwords, std::chrono::seconds token_lifetime) {
    // A place first: when the password checks are full, refuse before any database or hashing work.
    auto place = passwords.try_acquire();
    if (!place) {
        common::log::warn("login refused: password checks busy", {{"request_id", req.request_id}});
        co_return render_error(req.target, 503, "busy", "Too many logins at once; retry later.");
    }
    Response refusal;
    const auto body = parse_json_body(req, refusal);
    if (!body) co_return refusal;
    ParsedLoginRequest parsed = parse_login_request(*body);
    if (!parsed.request) co_return validation_failed(parsed.errors);
    LoginRequest login = std::move(*parsed.request);

    // Count the attempt and read the user (one short transaction), check the password on the hash threads,
    // then store the token. The same 401 for a throttled email, an unknown email and a wrong password.
    auto begin = [email = login.email](pqxx::connection& c) { return store::begin_login(c, email); };
    store::LoginCandidate candidate = co_await pool.run(std::move(begin));
    if (!candidate.allowed) {
        place.reset();  // the throttled wait checks no password: it holds no place
        common::log::warn("login throttled", {{"request_id", req.request_id}});
        boost::asio::steady_timer delay(co_await boost::asio::this_coro::executor, kThrottledDelay);
        co_await delay.async_wait(boost::asio::use_awaitable);
        co_return bad_credentials();
    }
    const bool good = co_await passwords.verify(std::move(login.password), candidate.password_hash);
    if (!good || !candidate.user_found) co_return bad_credentials();

    std::string token = common::crypto::random_token();
    auto finish = [email = login.email, user = candidate.user_id, brand = candidate.brand_id,
                   hash = common::crypto::sha256_hex(token), token_lifetime](pqxx::connection& c) {
        store::finish_login(c, email, user, brand, hash, token_lifetime);
    };
    co_await pool.run(std::move(finish));
    co_return common::http::json_response(200, {{"access_token", token}});
}

}  // namespace pos::http

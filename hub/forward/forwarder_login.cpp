// The forwarder's POS logins: one login at a time per POS connection, and the tokens it obtained (product.md
// section 6: a 401 with stored credentials means one login through /api/login, the new token stored, one retry).
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include "hub/forward/forwarder.hpp"
#include "hub/forward/forwarder_detail.hpp"
#include "hub/forward/secrets.hpp"

namespace hub::forward {

namespace asio = boost::asio;
using common::http::join_url;
using detail::add_trace_headers;
using detail::unix_us;

const Forwarder::CachedToken* Forwarder::cached_token(const PosConnection& c) const {
    auto it = tokens_.find(c.brand_id + ":" + c.environment);
    if (it == tokens_.end()) return nullptr;
    const auto& t = it->second;
    return c.token_sealed == t.sealed || c.token_sealed == t.replaced ? &t : nullptr;
}

std::optional<std::string> Forwarder::current_token(const PosConnection& c) {
    if (const auto* t = cached_token(c)) return t->token;
    if (c.token_sealed.empty()) return std::nullopt;
    return box_.open(c.token_sealed, token_aad(c.brand_id, c.environment));
}

std::optional<std::string> Forwarder::newer_token(const PosConnection& c, const std::string& failed) {
    const auto* t = cached_token(c);
    if (t == nullptr || t->token == failed) return std::nullopt;
    return t->token;
}

asio::awaitable<LoginAnswer> Forwarder::login(Delivery& d, JobResult& r) {
    const PosConnection& c = *d.job.connection;
    const std::string key = c.brand_id + ":" + c.environment;
    if (auto it = logins_.find(key); it != logins_.end()) {
        // Someone is logging in to this POS already: wait for that login instead of starting another.
        auto flight = it->second;
        while (!flight->finished) co_await flight->done.async_wait(asio::as_tuple(asio::use_awaitable));
        co_return flight->result;
    }
    auto flight = std::make_shared<LoginFlight>(strand_);
    logins_[key] = flight;
    auto password = box_.open(c.password_sealed, password_aad(c.brand_id, c.environment));
    AttemptRecord a;
    a.url = join_url(c.base_url, "/api/login");
    a.started_us = unix_us();
    LoginAnswer result;
    if (!password) {
        result.reason = a.error = "the stored password cannot be opened with this ORDERHUB_SECRET_KEY";
    } else {
        common::http::ClientRequest req;
        req.url = a.url;
        req.headers = {{"Content-Type", "application/json"}, {"Accept", "application/json"}};
        add_trace_headers(req, d.job.request_id);
        req.body = boost::json::serialize(boost::json::object{{"email", c.email}, {"password", *password}});
        req.ca_file = c.ca_file;
        auto res = co_await client_.send(std::move(req));
        a.latency_ms = std::chrono::duration_cast<std::chrono::milliseconds>(res.latency).count();
        if (res.failure == common::http::ClientFailure::queue_timeout) d.unsent = true;  // not an exchange
        if (res.response) a.http_status = res.response->status;
        const std::string failure = std::string(common::http::to_string(res.failure)) + ": " + res.error;
        result = classify_login(a.http_status, res.response ? std::string_view(res.response->body) : std::string_view(),
                                res.failure == common::http::ClientFailure::bad_url, failure);
        if (!result.token) a.error = result.reason;
        if (!d.unsent) note_exchange(d, res, result.reason);
    }
    a.outcome = result.token ? AttemptOutcome::logged_in : AttemptOutcome::login_failed;  // never the token itself
    if (!d.unsent) r.attempts.push_back(std::move(a));
    if (result.token) {
        r.new_token_sealed = box_.seal(*result.token, token_aad(c.brand_id, c.environment));
        tokens_[key] = CachedToken{*r.new_token_sealed, c.token_sealed, *result.token};
    }
    flight->result = result;
    flight->finished = true;
    flight->done.cancel();
    logins_.erase(key);
    co_return result;
}

}  // namespace hub::forward

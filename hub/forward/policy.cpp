#include "hub/forward/policy.hpp"

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <charconv>
#include <cmath>

#include "common/text/excerpt.hpp"

namespace hub::forward {
namespace {

/// A reason quotes the start of the POS's answer as text PostgreSQL and the logs accept, whatever its bytes.
std::string excerpt(std::string_view body) { return common::text::excerpt(body, 300); }

std::optional<std::chrono::seconds> parse_retry_after(std::optional<std::string_view> v) {
    if (!v) return std::nullopt;
    long long secs = 0;
    auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), secs);
    if (ec != std::errc() || p != v->data() + v->size() || secs < 0) return std::nullopt;  // HTTP-dates: ignored
    return std::chrono::seconds(std::min<long long>(secs, 3600));
}

}  // namespace

Classified classify_response(unsigned status, std::string_view body, std::optional<std::string_view> retry_after) {
    Classified c;
    c.retry_after = parse_retry_after(retry_after);
    if (status >= 200 && status < 300) {
        boost::system::error_code ec;
        auto v = boost::json::parse(body, ec);
        const auto* o = ec ? nullptr : v.if_object();
        const auto* success = o ? o->if_contains("success") : nullptr;
        const auto* id = o ? o->if_contains("order_id") : nullptr;
        if (success && success->is_bool() && success->get_bool() && id && (id->is_string() || id->is_int64())) {
            c.verdict = Verdict::delivered;
            c.pos_order_id =
                id->is_string() ? common::text::printable(id->get_string()) : std::to_string(id->get_int64());
            return c;
        }
        c.verdict = Verdict::rejected;
        c.reason = "POS answered " + std::to_string(status) + " without success and order_id: " + excerpt(body);
        return c;
    }
    if (status == 401) {
        c.verdict = Verdict::unauthorized;
        c.reason = "POS answered 401: the token was refused";
        return c;
    }
    if (status == 408 || status == 429 || status >= 500) {
        c.verdict = Verdict::retry;
        c.reason = "POS answered " + std::to_string(status) + ": " + excerpt(body);
        return c;
    }
    // 400, 403, 404, 409, 422, any other 4xx, and redirects (a misconfigured base URL): retrying cannot help.
    c.verdict = Verdict::rejected;
    c.reason = "POS answered " + std::to_string(status) + ": " + excerpt(body);
    return c;
}

Classified classify_failure(bool bad_url, std::string_view error) {
    Classified c;
    c.verdict = bad_url ? Verdict::rejected : Verdict::retry;
    c.reason = std::string(error);
    return c;
}

std::chrono::milliseconds backoff(int failed_attempts, double jitter, std::optional<std::chrono::seconds> retry_after) {
    const int n = std::clamp(failed_attempts, 1, 30);
    const double base = std::min(1000.0 * std::pow(2.0, n - 1), 300'000.0);
    const double j = std::clamp(jitter, -1.0, 1.0);
    auto wait = std::chrono::milliseconds(static_cast<long long>(std::llround(base * (1.0 + 0.2 * j))));
    if (retry_after) wait = std::max<std::chrono::milliseconds>(wait, *retry_after);
    return wait;
}

LoginAnswer classify_login(unsigned status, std::string_view body, bool bad_url, std::string_view failure) {
    LoginAnswer a;
    if (status == 0) {
        a.retry = !bad_url;
        a.reason = std::string(failure);
        return a;
    }
    if (status == 200) {
        boost::system::error_code ec;
        auto v = boost::json::parse(body, ec);
        const auto* o = ec ? nullptr : v.if_object();
        const auto* t = o ? o->if_contains("access_token") : nullptr;
        if (t && t->is_string() && !t->get_string().empty()) {
            a.token = std::string(t->get_string());
            return a;
        }
    }
    a.retry = status == 408 || status == 429 || status >= 500;
    a.reason = "login refused: HTTP " + std::to_string(status);
    return a;
}

Decision decide(const Classified& outcome, int attempt, double jitter) {
    switch (outcome.verdict) {
        case Verdict::delivered: return {JobState::delivered, {}, {}, outcome.pos_order_id};
        case Verdict::rejected: return {JobState::rejected, {}, outcome.reason, {}};
        case Verdict::unauthorized: return {JobState::auth_failed, {}, outcome.reason, {}};
        case Verdict::retry: break;
    }
    if (attempt >= kMaxAttempts)
        return {JobState::dead, {}, "gave up after " + std::to_string(attempt) + " attempts: " + outcome.reason, {}};
    return {JobState::pending, backoff(attempt, jitter, outcome.retry_after), outcome.reason, {}};
}

}  // namespace hub::forward

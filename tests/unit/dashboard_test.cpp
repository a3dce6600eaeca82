#include <catch2/catch.hpp>

#include "hub/dashboard/auth.hpp"
#include "hub/dashboard/feed.hpp"
#include "hub/dashboard/orders.hpp"
#include "hub/dashboard/web.hpp"

using namespace hub::dashboard;
using namespace std::chrono_literals;

namespace {

common::http::Request request(std::vector<std::pair<std::string, std::string>> headers) {
    common::http::Request r;
    r.method = "POST";
    r.headers = std::move(headers);
    return r;
}

std::optional<std::string> header(const common::http::Response& r, const std::string& name) {
    for (const auto& [k, v] : r.headers)
        if (k == name) return v;
    return std::nullopt;
}

}  // namespace

TEST_CASE("dashboard cursor delivers each id once and waits for late commits") {
    Cursor c(10);
    const auto t0 = std::chrono::steady_clock::now();
    CHECK_FALSE(c.accept(9));
    CHECK_FALSE(c.accept(10));
    CHECK(c.accept(11));
    CHECK_FALSE(c.accept(11));
    CHECK(c.accept(13));  // 12 not visible yet: an earlier transaction still open
    c.advance(t0, 10s);
    CHECK(c.low() == 11);
    c.advance(t0 + 5s, 10s);
    CHECK(c.low() == 11);  // still within the grace period
    CHECK(c.accept(12));   // 12 commits late: delivered, once
    CHECK_FALSE(c.accept(12));
    c.advance(t0 + 6s, 10s);
    CHECK(c.low() == 13);
}

TEST_CASE("dashboard cursor gives up on a rolled-back id after the grace period") {
    Cursor c(0);
    const auto t0 = std::chrono::steady_clock::now();
    CHECK(c.accept(3));
    c.advance(t0, 10s);
    CHECK(c.low() == 0);
    c.advance(t0 + 9s, 10s);
    CHECK(c.low() == 0);
    c.advance(t0 + 10s, 10s);
    CHECK(c.low() == 3);
    CHECK_FALSE(c.accept(1));  // too late: given up on
}

TEST_CASE("dashboard session cookie is HttpOnly, SameSite=Strict, and Secure only with TLS") {
    const auto plain = session_cookie("tok", 3600s, false);
    CHECK(plain == "orderhub_session=tok; Path=/; HttpOnly; SameSite=Strict; Max-Age=3600");
    CHECK(session_cookie("tok", 3600s, true).ends_with("; Secure"));
    CHECK(cleared_cookie(false).find("Max-Age=0") != std::string::npos);
}

TEST_CASE("dashboard session token is read from the Cookie header") {
    CHECK(session_token(request({{"Cookie", "a=1; orderhub_session=xyz; b=2"}})) == "xyz");
    CHECK(session_token(request({{"cookie", "orderhub_session=abc"}})) == "abc");
    CHECK_FALSE(session_token(request({{"Cookie", "orderhub_sessionx=1; other=2"}})).has_value());
    CHECK_FALSE(session_token(request({{"Cookie", "orderhub_session="}})).has_value());
    CHECK_FALSE(session_token(request({})).has_value());
}

TEST_CASE("dashboard CSRF token is bound to the session") {
    const auto t = csrf_token("session-a");
    CHECK(t.size() == 64);
    CHECK(csrf_matches("session-a", t));
    CHECK_FALSE(csrf_matches("session-b", t));
    CHECK_FALSE(csrf_matches("session-a", ""));
    CHECK(token_hash("session-a") != t);
}

TEST_CASE("dashboard refuses cross-site origins") {
    CHECK(same_origin(request({{"Host", "127.0.0.1:8080"}})));
    CHECK(same_origin(request({{"Host", "127.0.0.1:8080"}, {"Origin", "http://127.0.0.1:8080"}})));
    CHECK_FALSE(same_origin(request({{"Host", "127.0.0.1:8080"}, {"Origin", "http://evil.example"}})));
    CHECK_FALSE(same_origin(request({{"Host", "127.0.0.1:8080"}, {"Referer", "http://evil.example/x"}})));
    CHECK_FALSE(same_origin(request({{"Host", "127.0.0.1:8080"}, {"Origin", "null"}})));
}

TEST_CASE("dashboard masks phones, checks e-mails and passwords") {
    CHECK(mask_phone("+966500000001") == "+966*******01");
    CHECK(mask_phone("12") == "12");
    CHECK(mask_phone("+1 (555) 123-4567") == "+1 (***) ***-**67");
    CHECK(normalize_email("  Ops@Example.COM ") == "ops@example.com");
    CHECK(plausible_email("a@b"));
    CHECK_FALSE(plausible_email("a@@b"));
    CHECK_FALSE(plausible_email("a b@c"));
    CHECK_FALSE(plausible_email("@b"));
    CHECK(password_problem("short").has_value());
    CHECK_FALSE(password_problem("long enough pass").has_value());
}

TEST_CASE("dashboard query parameters are decoded") {
    CHECK(query_param("/x?branch=DEMO-1&filter=today", "filter") == "today");
    CHECK(query_param("/x?since=2024-05-01T00%3A00%3A00%2B03%3A00", "since") == "2024-05-01T00:00:00+03:00");
    CHECK(query_param("/x?a=b+c", "a") == "b c");
    CHECK_FALSE(query_param("/x", "a").has_value());
    CHECK_FALSE(query_param("/x?ab=1", "a").has_value());
}

TEST_CASE("dashboard problems and filters") {
    CHECK(problem_of("rejected", 1, "bad item") == "rejected");
    CHECK(problem_of("dead", 12, "refused") == "unreachable");
    CHECK(problem_of("pending", 2, "connection refused") == "unreachable");
    CHECK(problem_of("pending", 0, "") == "");
    CHECK(problem_of("delivered", 1, "") == "");
    CHECK(problem_of("auth_failed", 1, "401") == "auth_failed");
    CHECK(parse_filter("today") == Filter::today);
    CHECK(parse_filter("") == Filter::all);
    CHECK_FALSE(parse_filter("yesterday").has_value());
}

TEST_CASE("dashboard page is embedded and served with a strict CSP") {
    auto index = web_response("/");
    REQUIRE(index.has_value());
    CHECK(index->content_type == "text/html; charset=utf-8");
    CHECK(header(*index, "Content-Security-Policy").value_or("").starts_with("default-src 'self'"));
    CHECK(index->body.find("<script type=\"module\" src=\"app.js\">") != std::string::npos);
    auto js = web_response("/app.js");
    REQUIRE(js.has_value());
    CHECK(js->content_type == "text/javascript; charset=utf-8");
    CHECK_FALSE(web_response("/../CMakeLists.txt").has_value());
    CHECK_FALSE(web_response("/missing.js").has_value());
    // No inline script anywhere: the CSP would block it.
    for (const auto& f : web_files()) {
        if (!std::string_view(f.name).ends_with(".html")) continue;
        CHECK(std::string_view(f.content).find("<script>") == std::string_view::npos);
        CHECK(std::string_view(f.content).find("onclick=") == std::string_view::npos);
        CHECK(std::string_view(f.content).find("onsubmit=") == std::string_view::npos);
    }
}

TEST_CASE("dashboard login throttle: five failures in the window block the e-mail until it ends") {
    LoginThrottle t(5, 900s, 3);
    const auto t0 = LoginThrottle::Clock::now();
    for (int i = 0; i < 4; ++i) t.failed("a@x", t0);
    CHECK_FALSE(t.blocked("a@x", t0).has_value());
    t.failed("a@x", t0);
    REQUIRE(t.blocked("a@x", t0 + 100s).has_value());
    CHECK(*t.blocked("a@x", t0 + 100s) == 800s);
    CHECK_FALSE(t.blocked("b@x", t0).has_value());  // per e-mail
    CHECK_FALSE(t.blocked("a@x", t0 + 900s).has_value());
    for (int i = 0; i < 5; ++i) t.failed("c@x", t0);
    t.succeeded("c@x");
    CHECK_FALSE(t.blocked("c@x", t0).has_value());
    // Bounded: a fourth e-mail drops the oldest entry.
    for (int i = 0; i < 5; ++i) t.failed("d@x", t0 + 1s);
    for (int i = 0; i < 5; ++i) t.failed("e@x", t0 + 2s);
    for (int i = 0; i < 5; ++i) t.failed("f@x", t0 + 3s);
    for (int i = 0; i < 5; ++i) t.failed("g@x", t0 + 4s);
    CHECK_FALSE(t.blocked("d@x", t0 + 5s).has_value());
    CHECK(t.blocked("g@x", t0 + 5s).has_value());
}

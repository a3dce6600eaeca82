#include <boost/json/parse.hpp>
#include <catch2/catch.hpp>
#include <set>
#include <string_view>

#include "hub/dashboard/auth.hpp"
#include "hub/dashboard/feed.hpp"
#include "hub/dashboard/orders.hpp"
#include "hub/dashboard/queries.hpp"
#include "hub/dashboard/routes.hpp"
#include "hub/dashboard/session.hpp"
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

TEST_CASE("dashboard cursor delivers each id once and waits for late commits", "[dashboard]") {
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

TEST_CASE("dashboard cursor gives up on a rolled-back id after the grace period", "[dashboard]") {
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

TEST_CASE("dashboard cursor: the next id in order moves the mark at once, a later one waits for the gap",
          "[dashboard]") {
    Cursor c(10);
    const auto t0 = std::chrono::steady_clock::now();
    CHECK(c.accept(11));
    CHECK(c.low() == 11);  // in order: the mark is past it already
    CHECK_FALSE(c.accept(11));
    CHECK(c.accept(13));
    CHECK(c.low() == 11);  // 12 missing: 13 waits above the mark
    CHECK(c.accept(12));
    CHECK(c.low() == 11);  // the mark moves over 12 and 13 together, in advance()
    c.advance(t0, 10s);
    CHECK(c.low() == 13);
    CHECK_FALSE(c.accept(13));
    CHECK(c.accept(14));
    CHECK(c.low() == 14);
}

TEST_CASE("dashboard cursor: a span seen without a gap moves the mark over it and over what it covered",
          "[dashboard]") {
    Cursor c(10);
    const auto t0 = std::chrono::steady_clock::now();
    CHECK(c.accept(12));  // out of order: 11 still open
    CHECK(c.accept(20));
    c.advance(t0, 10s);
    CHECK(c.low() == 10);
    c.seen_through(15);  // 11 to 15 read as a span: 12 is behind the mark now, 20 still above it
    CHECK(c.low() == 15);
    CHECK_FALSE(c.accept(12));
    CHECK_FALSE(c.accept(14));
    c.seen_through(9);  // behind the mark: nothing moves
    CHECK(c.low() == 15);
    // The gap below 20 (16 to 19) is a new one: waited for from now, not from the first gap's time.
    c.advance(t0 + 9s, 10s);
    CHECK(c.low() == 15);
    c.advance(t0 + 12s, 10s);
    CHECK(c.low() == 15);
    c.advance(t0 + 19s, 10s);
    CHECK(c.low() == 20);
    c.seen_through(25);
    CHECK(c.low() == 25);
    CHECK(c.accept(26));
    CHECK(c.low() == 26);
}

TEST_CASE("dashboard session cookie is HttpOnly, SameSite=Strict, and Secure only with TLS", "[dashboard]") {
    const auto plain = session_cookie("tok", 3600s, false);
    CHECK(plain == "orderhub_session=tok; Path=/; HttpOnly; SameSite=Strict; Max-Age=3600");
    CHECK(session_cookie("tok", 3600s, true).ends_with("; Secure"));
    CHECK(cleared_cookie(false).find("Max-Age=0") != std::string::npos);
}

TEST_CASE("dashboard session token is read from the Cookie header", "[dashboard]") {
    CHECK(session_token(request({{"Cookie", "a=1; orderhub_session=xyz; b=2"}})) == "xyz");
    CHECK(session_token(request({{"cookie", "orderhub_session=abc"}})) == "abc");
    CHECK_FALSE(session_token(request({{"Cookie", "orderhub_sessionx=1; other=2"}})).has_value());
    CHECK_FALSE(session_token(request({{"Cookie", "orderhub_session="}})).has_value());
    CHECK_FALSE(session_token(request({})).has_value());
}

TEST_CASE("dashboard CSRF token is bound to the session", "[dashboard]") {
    const auto t = csrf_token("session-a");
    CHECK(t.size() == 64);
    CHECK(csrf_matches("session-a", t));
    CHECK_FALSE(csrf_matches("session-b", t));
    CHECK_FALSE(csrf_matches("session-a", ""));
    CHECK(token_hash("session-a") != t);
}

TEST_CASE("dashboard refuses cross-site origins", "[dashboard]") {
    CHECK(same_origin(request({{"Host", "127.0.0.1:8080"}})));
    CHECK(same_origin(request({{"Host", "127.0.0.1:8080"}, {"Origin", "http://127.0.0.1:8080"}})));
    CHECK_FALSE(same_origin(request({{"Host", "127.0.0.1:8080"}, {"Origin", "http://evil.example"}})));
    CHECK_FALSE(same_origin(request({{"Host", "127.0.0.1:8080"}, {"Referer", "http://evil.example/x"}})));
    CHECK_FALSE(same_origin(request({{"Host", "127.0.0.1:8080"}, {"Origin", "null"}})));
}

TEST_CASE("dashboard masks phones, checks e-mails and passwords", "[dashboard]") {
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

TEST_CASE("dashboard query parameters are decoded", "[dashboard]") {
    CHECK(query_param("/x?branch=DEMO-1&filter=today", "filter") == "today");
    CHECK(query_param("/x?since=2024-05-01T00%3A00%3A00%2B03%3A00", "since") == "2024-05-01T00:00:00+03:00");
    CHECK(query_param("/x?a=b+c", "a") == "b c");
    CHECK_FALSE(query_param("/x", "a").has_value());
    CHECK_FALSE(query_param("/x?ab=1", "a").has_value());
}

TEST_CASE("dashboard problems and filters", "[dashboard]") {
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

TEST_CASE("dashboard page is embedded and served with a strict CSP", "[dashboard]") {
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

TEST_CASE("dashboard login throttle: five failures in the window block the e-mail until it ends", "[dashboard]") {
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

TEST_CASE("dashboard routes: order paths become patterns, with the id checked", "[dashboard]") {
    CHECK(target_of("orders").pattern == "orders");
    CHECK(target_of("session").pattern == "session");
    const auto detail = target_of("orders/HUB-1");
    CHECK((detail.pattern == "orders/{id}" && detail.order_id == "HUB-1" && !detail.bad_order_id));
    CHECK(target_of("orders/HUB-1/").pattern == "orders/{id}");
    const auto resend = target_of("orders/HUB-1/resend");
    CHECK((resend.pattern == "orders/{id}/resend" && resend.order_id == "HUB-1"));
    CHECK(target_of("orders/HUB-1/resend/x").pattern == "orders/{id}/resend/x");
    CHECK(target_of("orders/").bad_order_id);
    CHECK(target_of("orders//phone").bad_order_id);
    CHECK(target_of("orders/" + std::string(65, 'x')).bad_order_id);
    CHECK_FALSE(target_of("orders/" + std::string(64, 'x')).bad_order_id);

    REQUIRE(find_route("orders/{id}/phone") != nullptr);
    CHECK(find_route("orders/{id}/phone")->method == "POST");
    CHECK(find_route("orders/{id}")->method == "GET");
    CHECK_FALSE(find_route("login")->needs_session);
    CHECK(find_route("orders/{id}/resend/x") == nullptr);
    CHECK(find_route("nope") == nullptr);
    std::set<std::string_view> patterns;
    for (const auto& r : kRoutes) {
        CHECK((r.method == "GET" || r.method == "POST"));
        CHECK(patterns.insert(r.pattern).second);  // one method per path
        CHECK(r.needs_session == (r.pattern != "login"));
    }
}

TEST_CASE("dashboard session step: cookie, then origin and CSRF for POST", "[dashboard]") {
    const std::string cookie = "orderhub_session=tok";
    auto call = [](std::string method, std::vector<std::pair<std::string, std::string>> headers) {
        auto r = request(std::move(headers));
        r.method = std::move(method);
        common::http::Response refusal;
        auto session = check_session(r, refusal);
        return std::pair{session, refusal};
    };
    auto code = [](const common::http::Response& r) {
        return std::string(boost::json::parse(r.body).at("error").at("code").as_string());
    };

    auto [none, unauth] = call("GET", {{"Host", "h"}});
    CHECK_FALSE(none.has_value());
    CHECK((unauth.status == 401 && code(unauth) == "unauthenticated"));

    auto [get, unused] = call("GET", {{"Host", "h"}, {"Cookie", cookie}, {"Origin", "http://evil.example"}});
    REQUIRE(get.has_value());  // a GET changes nothing: neither origin nor CSRF token is asked for
    CHECK((get->token == "tok" && get->hash == token_hash("tok")));

    auto [no_csrf, csrf_refusal] = call("POST", {{"Host", "h"}, {"Cookie", cookie}});
    CHECK((!no_csrf && csrf_refusal.status == 403 && code(csrf_refusal) == "csrf_failed"));
    auto [wrong, wrong_refusal] =
        call("POST", {{"Host", "h"}, {"Cookie", cookie}, {"X-CSRF-Token", csrf_token("other")}});
    CHECK((!wrong && code(wrong_refusal) == "csrf_failed"));
    auto [cross, cross_refusal] = call(
        "POST",
        {{"Host", "h"}, {"Cookie", cookie}, {"X-CSRF-Token", csrf_token("tok")}, {"Origin", "http://evil.example"}});
    CHECK((!cross && cross_refusal.status == 403 && code(cross_refusal) == "cross_origin"));
    auto [post, none_refused] = call("POST", {{"Host", "h"}, {"Cookie", cookie}, {"X-CSRF-Token", csrf_token("tok")}});
    CHECK(post.has_value());
}

TEST_CASE("dashboard branch scope: only a named branch outside the user's is refused", "[dashboard]") {
    User u{"u1", "a@x", "DEMO", {{"DEMO-1", "One"}}};
    CHECK_FALSE(refuse_branch(u, "").has_value());
    CHECK_FALSE(refuse_branch(u, "DEMO-1").has_value());
    const auto refused = refuse_branch(u, "DEMO-2");
    REQUIRE(refused.has_value());
    CHECK(refused->status == 403);
    CHECK(boost::json::parse(refused->body).at("error").at("code").as_string() == "forbidden_branch");
}

TEST_CASE("dashboard statements: unique names, whole SQL", "[dashboard]") {
    std::set<std::string_view> names;
    for (const Statement* s : kAllStatements) {
        CHECK(names.insert(s->name).second);
        CHECK(std::string_view(s->name).starts_with("dashboard_"));
        const std::string_view text = s->sql;
        CHECK((text.find("$1") != std::string_view::npos || text.find('$') == std::string_view::npos));
    }
    CHECK(std::string_view(sql::kOrderInScope.sql).ends_with("AND ub.branch_id = b.id)))"));
    CHECK(std::string_view(sql::iso("x").c_str()) ==
          "to_char(x AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')");
}

TEST_CASE("dashboard text fields: control characters and bytes that are not UTF-8 are refused", "[dashboard]") {
    CHECK_FALSE(text_problem("cfo@x.com"));
    CHECK_FALSE(text_problem("مطعم@مثال.com"));            // UTF-8 is fine
    CHECK_FALSE(text_problem("\xF0\x9F\x8D\x94 burger"));  // four bytes
    CHECK_FALSE(text_problem(""));
    using namespace std::string_view_literals;
    for (auto bad :
         {"cfo@x.com\0001"sv, "a\nb"sv, "a\rb"sv, "a\tb"sv, "\x1b[2J"sv, "a\x7f"sv, "a\xC2\x85"sv, "a\xC2\x9F"sv}) {
        INFO(std::string(bad));
        CHECK(text_problem(bad) == "must not contain control characters");
    }
    for (auto bad :
         {"\xFF"sv, "a\xC3"sv, "\xC0\x80"sv, "\xE0\x80\x80"sv, "\xED\xA0\x80"sv, "\xF4\x90\x80\x80"sv, "\x80"sv}) {
        CHECK(text_problem(bad) == "must be UTF-8");
    }
}

TEST_CASE("dashboard login gate: free slots run at once and a full gate queues or refuses beyond its bounds",
          "[dashboard]") {
    LoginGate gate(2, 2, 2);
    CHECK(gate.arrive("10.0.0.1").admission == LoginGate::Admission::run);
    CHECK(gate.arrive("10.0.0.1").admission == LoginGate::Admission::run);
    const auto w1 = gate.arrive("10.0.0.1");
    const auto w2 = gate.arrive("10.0.0.1");
    CHECK(w1.admission == LoginGate::Admission::wait);
    CHECK(w2.admission == LoginGate::Admission::wait);
    CHECK(gate.arrive("10.0.0.1").admission == LoginGate::Admission::busy);  // two of this address wait already
    CHECK(gate.arrive("10.0.0.2").admission == LoginGate::Admission::wait);
    CHECK(gate.arrive("10.0.0.3").admission == LoginGate::Admission::busy);  // two addresses wait already
    CHECK_FALSE(gate.granted(w1.ticket));
    CHECK_FALSE(gate.abandon(w2.ticket));  // gave up while waiting: nothing held
    gate.release();
    CHECK(gate.granted(w1.ticket));
    CHECK_FALSE(gate.granted(w1.ticket));  // told once
}

TEST_CASE("dashboard login gate: a freed slot goes to the next address in turn and not to the flooding one",
          "[dashboard]") {
    LoginGate gate(1, 4, 100);
    CHECK(gate.arrive("192.0.2.66").admission == LoginGate::Admission::run);
    std::vector<LoginGate::Ticket> flood;
    for (int i = 0; i < 4; ++i) flood.push_back(gate.arrive("192.0.2.66").ticket);
    const auto real = gate.arrive("192.0.2.7");
    REQUIRE(real.admission == LoginGate::Admission::wait);
    gate.release();
    CHECK(gate.granted(flood[0]));  // the flooder's line was first
    gate.release();
    CHECK(gate.granted(real.ticket));  // then the other address, ahead of the flooder's three others
    CHECK_FALSE(gate.granted(flood[1]));
    gate.release();
    CHECK(gate.granted(flood[1]));
    // A ticket granted just as its deadline passed runs (abandon says so), and must be released like any other.
    gate.release();
    CHECK(gate.abandon(flood[2]));
    gate.release();
    CHECK(gate.granted(flood[3]));
    gate.release();
    CHECK(gate.arrive("192.0.2.9").admission == LoginGate::Admission::run);  // nothing left waiting
}

TEST_CASE("dashboard login gate: IPv6 clients count by their /64", "[dashboard]") {
    CHECK(LoginGate::client_key("2001:db8:1:2:aaaa::1") == LoginGate::client_key("2001:db8:1:2:bbbb::9"));
    CHECK(LoginGate::client_key("2001:db8:1:2::1") != LoginGate::client_key("2001:db8:1:3::1"));
    CHECK(LoginGate::client_key("::ffff:192.0.2.1") == "192.0.2.1");
    CHECK(LoginGate::client_key("192.0.2.1") == "192.0.2.1");
    CHECK(LoginGate::client_key("") == "");
}

TEST_CASE("dashboard since: a real time with an offset and nothing impossible", "[dashboard]") {
    for (const char* good : {"2026-02-28T00:00Z", "2024-02-29T23:59:59Z", "2026-03-01T00:00:00.123456+03:00",
                             "2026-12-31T10:00-15:59", "0001-01-01T00:00Z"}) {
        INFO(good);
        CHECK(valid_since(good));
    }
    for (const char* bad : {"2026-02-30T00:00Z", "2025-02-29T00:00Z", "2026-04-31T00:00Z", "2026-13-01T00:00Z",
                            "2026-00-10T00:00Z", "2026-01-00T00:00Z", "2026-01-01T24:00Z", "2026-01-01T10:60Z",
                            "2026-01-01T10:00:60Z", "2026-01-01T10:00+16:00", "2026-01-01T10:00+01:60",
                            "0000-01-01T00:00Z", "yesterday", "2026-01-01T10:00", "2026-01-01 10:00Z"}) {
        INFO(bad);
        CHECK_FALSE(valid_since(bad));
    }
}

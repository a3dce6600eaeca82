// The decisions of isolation between POS hosts, without sockets or a database: the circuit breaker's state machine,
// the claim plan and admission of the bulkheads, and the verdict -> next state decision of a delivery.
#include <catch2/catch.hpp>

#include "hub/forward/breaker.hpp"
#include "hub/forward/bulkhead.hpp"
#include "hub/forward/policy.hpp"

using namespace hub::forward;
using namespace std::chrono_literals;

namespace {

BreakerSettings settings() { return {3, 5000ms, 60000ms}; }

Breaker::Clock::time_point t0() { return Breaker::Clock::time_point{} + 1000s; }

/// Opens `b` at `now` with `settings()`' three failures (jitter 0).
void open(Breaker& b, Breaker::Clock::time_point now) {
    for (int i = 0; i < 3; ++i) b.record(HostSignal::failed, false, now, 0);
}

}  // namespace

TEST_CASE("breaker: consecutive failures open it, an answer in between resets the count", "[forward][breaker]") {
    Breaker b(settings());
    const auto now = t0();
    CHECK(b.state(now) == BreakerState::closed);
    CHECK(b.room(now) == Breaker::kUnlimited);
    CHECK(b.record(HostSignal::failed, false, now, 0) == BreakerChange::none);
    CHECK(b.record(HostSignal::failed, false, now, 0) == BreakerChange::none);
    CHECK(b.record(HostSignal::answered, false, now, 0) == BreakerChange::none);  // a 4xx or 2xx: the host is up
    CHECK(b.consecutive_failures() == 0);
    CHECK(b.record(HostSignal::failed, false, now, 0) == BreakerChange::none);
    CHECK(b.record(HostSignal::failed, false, now, 0) == BreakerChange::none);
    CHECK(b.state(now) == BreakerState::closed);
    CHECK(b.record(HostSignal::failed, false, now, 0) == BreakerChange::opened);
    CHECK(b.state(now) == BreakerState::open);
    CHECK(b.room(now) == 0);
    CHECK(b.next_probe() == now + 5000ms);
}

TEST_CASE("breaker: open, one probe at its time, a successful probe closes it", "[forward][breaker]") {
    Breaker b(settings());
    open(b, t0());
    CHECK(b.room(t0() + 4999ms) == 0);
    CHECK(b.state(t0() + 4999ms) == BreakerState::open);
    const auto probe_time = t0() + 5000ms;
    CHECK(b.state(probe_time) == BreakerState::half_open);
    REQUIRE(b.room(probe_time) == 1);
    CHECK(b.admit());                // the probe
    CHECK(b.room(probe_time) == 0);  // one probe at a time
    CHECK(b.room(probe_time + 30s) == 0);
    CHECK(b.state(probe_time + 30s) == BreakerState::half_open);
    CHECK(b.record(HostSignal::answered, true, probe_time + 1s, 0) == BreakerChange::closed);
    CHECK(b.state(probe_time + 1s) == BreakerState::closed);
    CHECK(b.room(probe_time + 1s) == Breaker::kUnlimited);
    CHECK_FALSE(b.admit());  // closed: an ordinary delivery, not a probe
}

TEST_CASE("breaker: each failed probe doubles the interval up to the maximum", "[forward][breaker]") {
    Breaker b(settings());
    auto now = t0();
    open(b, now);
    std::vector<long long> intervals;
    for (int i = 0; i < 6; ++i) {
        now = b.next_probe();
        REQUIRE(b.room(now) == 1);
        REQUIRE(b.admit());
        CHECK(b.record(HostSignal::failed, true, now, 0) == BreakerChange::probe_failed);
        CHECK(b.state(now) == BreakerState::open);
        intervals.push_back(std::chrono::duration_cast<std::chrono::milliseconds>(b.next_probe() - now).count());
    }
    CHECK(intervals == std::vector<long long>{10000, 20000, 40000, 60000, 60000, 60000});
    // Closing starts the next opening from the first interval again.
    now = b.next_probe();
    REQUIRE(b.admit());
    CHECK(b.record(HostSignal::answered, true, now, 0) == BreakerChange::closed);
    open(b, now);
    CHECK(b.next_probe() == now + 5000ms);
}

TEST_CASE("breaker: the probe time has plus or minus 20 percent jitter", "[forward][breaker]") {
    Breaker low(settings());
    for (int i = 0; i < 3; ++i) low.record(HostSignal::failed, false, t0(), -1);
    CHECK(low.next_probe() == t0() + 4000ms);
    Breaker high(settings());
    for (int i = 0; i < 3; ++i) high.record(HostSignal::failed, false, t0(), 1);
    CHECK(high.next_probe() == t0() + 6000ms);
    Breaker wild(settings());
    for (int i = 0; i < 3; ++i) wild.record(HostSignal::failed, false, t0(), 7);  // clamped to [-1, 1]
    CHECK(wild.next_probe() == t0() + 6000ms);
}

TEST_CASE("breaker: late failures of deliveries sent before it opened change nothing, a late answer closes it",
          "[forward][breaker]") {
    Breaker b(settings());
    open(b, t0());
    const auto probe = b.next_probe();
    CHECK(b.record(HostSignal::failed, false, t0() + 1s, 0) == BreakerChange::none);
    CHECK(b.next_probe() == probe);
    CHECK(b.record(HostSignal::answered, false, t0() + 2s, 0) == BreakerChange::closed);
    CHECK(b.state(t0() + 2s) == BreakerState::closed);
}

TEST_CASE("breaker: a probe given up without an exchange frees the probe at once", "[forward][breaker]") {
    Breaker b(settings());
    open(b, t0());
    const auto now = b.next_probe();
    REQUIRE(b.admit());
    CHECK(b.room(now) == 0);
    b.probe_abandoned();
    CHECK(b.room(now) == 1);
    CHECK(b.state(now) == BreakerState::half_open);
}

TEST_CASE("breaker: which exchanges count against a host", "[forward][breaker]") {
    struct Case {
        unsigned status;
        bool bad_url;
        HostSignal signal;
    };
    const Case cases[] = {
        {0, false, HostSignal::failed},  // refused, time-out, reset, TLS failure
        {502, false, HostSignal::failed},   {503, false, HostSignal::failed},   {504, false, HostSignal::failed},
        {500, false, HostSignal::answered}, {429, false, HostSignal::answered}, {408, false, HostSignal::answered},
        {401, false, HostSignal::answered}, {422, false, HostSignal::answered}, {200, false, HostSignal::answered},
        {0, true, HostSignal::answered},  // our URL, not the host
    };
    for (const auto& c : cases) {
        INFO("status " << c.status << " bad_url " << c.bad_url);
        CHECK(host_signal(c.status, c.bad_url) == c.signal);
    }
}

TEST_CASE("bulkhead: a healthy host has its limit again claimed ahead, a busy host's room counts in batches",
          "[forward][bulkhead]") {
    constexpr int kClosed = Breaker::kUnlimited;     // what a closed breaker allows
    CHECK(host_room(64, 0, kClosed, true) == 128);   // idle: its slots and as many waiting for them
    CHECK(host_room(64, 10, kClosed, true) == 118);  // lightly loaded: all of it
    CHECK(host_room(64, 112, kClosed, true) == 16);  // a quarter of its limit free: claim them together
    CHECK(host_room(64, 113, kClosed, true) == 0);   // 15 free while 113 are out: wait for a batch
    CHECK(host_room(64, 128, kClosed, true) == 0);
    CHECK(host_room(64, 0, kClosed, false) == 64);  // nothing ahead (after an unsent job, failures, a full forwarder)
    CHECK(host_room(64, 48, kClosed, false) == 16);
    CHECK(host_room(64, 49, kClosed, false) == 0);
    CHECK(host_room(64, 70, kClosed, false) == 0);  // the client lowered the limit below what is in flight
    CHECK(host_room(64, 0, 1, false) == 1);         // a half-open breaker's probe
    CHECK(host_room(64, 0, 0, false) == 0);         // an open breaker
    CHECK(host_room(3, 5, kClosed, true) == 1);     // a small limit: a batch is one delivery
    CHECK(host_room(1, 0, kClosed, true) == 2);
    CHECK(host_room(1, 2, kClosed, true) == 0);
    CHECK(host_room(1, 1, kClosed, false) == 0);
}

TEST_CASE("bulkhead: after a delivery's end a claim looks only at brands whose last claim took all it could",
          "[forward][bulkhead]") {
    std::set<std::string> backlog;
    ClaimPlan full{.limit = 100, .default_quota = 64, .quotas = {{"BUSY", 16}, {"QUIET", 64}, {"BLOCKED", 0}}};
    // A full look: BUSY got its quota (more may be due), QUIET less (none left), BLOCKED was not read, NEW (not
    // mapped yet) got the default quota.
    note_claimed(full, {{"BUSY", 16}, {"QUIET", 3}, {"NEW", 64}}, true, backlog);
    CHECK(backlog == std::set<std::string>{"BLOCKED", "BUSY", "NEW"});

    ClaimPlan after_end{.limit = 100, .default_quota = 64, .quotas = {{"BUSY", 16}, {"QUIET", 64}, {"BLOCKED", 0}}};
    narrow_to_backlog(after_end, backlog);
    CHECK(after_end.default_quota == 0);
    const std::vector<std::pair<std::string, int>> expected = {{"BUSY", 16}, {"QUIET", 0}, {"BLOCKED", 0}};
    CHECK(after_end.quotas == expected);
    CHECK(claims_anything(after_end));
    // BUSY's backlog is gone; BLOCKED, still without room, keeps its place.
    note_claimed(after_end, {{"BUSY", 5}}, false, backlog);
    CHECK(backlog == std::set<std::string>{"BLOCKED", "NEW"});

    ClaimPlan nothing{.limit = 100, .default_quota = 64, .quotas = {{"BUSY", 16}, {"QUIET", 64}}};
    narrow_to_backlog(nothing, backlog);
    CHECK_FALSE(claims_anything(nothing));  // no claim at all: nothing can be waiting for the freed room
    CHECK_FALSE(claims_anything(ClaimPlan{.limit = 0, .default_quota = 64, .quotas = {}}));
}

TEST_CASE("bulkhead: a claim takes per brand its host's room, nothing of a blocked host", "[forward][bulkhead]") {
    const std::map<std::string, std::string> brands = {
        {"GOOD", "http://good:80"}, {"DEAD", "http://dead:80"}, {"FULL", "http://full:80"}, {"NOPOS", ""}};
    const std::map<std::string, int> room = {{"http://good:80", 64}, {"http://dead:80", 0}, {"http://full:80", 0}};
    const ClaimPlan plan = plan_claim(brands, room, 100, 64);
    CHECK(plan.limit == 100);
    CHECK(plan.default_quota == 64);  // a brand not mapped yet, or without a POS connection
    const std::vector<std::pair<std::string, int>> expected = {{"DEAD", 0}, {"FULL", 0}, {"GOOD", 64}};
    CHECK(plan.quotas == expected);
}

TEST_CASE("bulkhead: no brand takes more than the free global slots, a host not seen yet gets a full bulkhead",
          "[forward][bulkhead]") {
    const std::map<std::string, std::string> brands = {{"A", "http://a:80"}, {"NEW", "http://new:80"}};
    const ClaimPlan plan = plan_claim(brands, {{"http://a:80", 64}}, 10, 64);
    CHECK(plan.limit == 10);
    CHECK(plan.default_quota == 10);
    const std::vector<std::pair<std::string, int>> expected = {{"A", 10}, {"NEW", 10}};
    CHECK(plan.quotas == expected);
    CHECK(plan_claim(brands, {}, 0, 64).limit == 0);
}

TEST_CASE("bulkhead: claimed jobs beyond their host's room are given back, jobs without a host always go",
          "[forward][bulkhead]") {
    // Two brands on one host with room 2 were each offered 2: the third and fourth job of that host go back.
    std::map<std::string, int> room = {{"http://shared:80", 2}, {"http://other:80", 1}};
    const std::vector<std::string> hosts = {
        "http://shared:80", "", "http://shared:80", "http://other:80", "http://shared:80", "http://shared:80",
        "http://unknown:80"};
    const std::vector<bool> expected = {true, true, true, true, false, false, false};
    CHECK(admit_claimed(hosts, room) == expected);
    CHECK(room.at("http://shared:80") == 0);
    CHECK(room.at("http://other:80") == 0);
}

TEST_CASE("policy: the verdict decides the job's next state", "[forward]") {
    Classified delivered{Verdict::delivered, "", "POS-7", std::nullopt};
    Classified rejected{Verdict::rejected, "POS answered 422: unknown item", "", std::nullopt};
    Classified unauthorized{Verdict::unauthorized, "POS answered 401: the token was refused", "", std::nullopt};
    Classified retry{Verdict::retry, "read_timeout: no answer", "", std::nullopt};
    Classified slow_down{Verdict::retry, "POS answered 429: slow down", "", std::chrono::seconds(90)};

    auto d = decide(delivered, 1, 0);
    CHECK(d.state == JobState::delivered);
    CHECK(d.pos_order_id == "POS-7");
    CHECK(d.error.empty());
    d = decide(rejected, 1, 0);
    CHECK(d.state == JobState::rejected);
    CHECK(d.error == "POS answered 422: unknown item");
    CHECK(decide(unauthorized, 3, 0).state == JobState::auth_failed);
    d = decide(retry, 1, 0);
    CHECK(d.state == JobState::pending);
    CHECK(d.delay == 1000ms);
    CHECK(d.error == "read_timeout: no answer");
    CHECK(decide(retry, 4, 0).delay == 8000ms);
    CHECK(decide(slow_down, 1, 0).delay == 90000ms);  // Retry-After beyond the back-off
    CHECK(decide(retry, kMaxAttempts - 1, 0).state == JobState::pending);
    d = decide(retry, kMaxAttempts, 0);
    CHECK(d.state == JobState::dead);
    CHECK(d.error == "gave up after 12 attempts: read_timeout: no answer");
    CHECK(decide(delivered, kMaxAttempts, 0).state == JobState::delivered);  // the last attempt may still succeed
}

TEST_CASE("policy: a login that got no answer is retried later, a refused one is not", "[forward]") {
    auto ok = classify_login(200, R"({"access_token":"tok-1","token_type":"bearer"})", false, "");
    CHECK(ok.token == std::optional<std::string>("tok-1"));
    auto timed_out = classify_login(0, "", false, "read_timeout: no answer within 2000 ms");
    CHECK_FALSE(timed_out.token);
    CHECK(timed_out.retry);
    CHECK(timed_out.reason == "read_timeout: no answer within 2000 ms");
    CHECK(classify_login(503, "busy", false, "").retry);
    CHECK(classify_login(429, "", false, "").retry);
    auto refused = classify_login(401, R"({"error":"bad password"})", false, "");
    CHECK_FALSE(refused.retry);
    CHECK(refused.reason == "login refused: HTTP 401");
    CHECK_FALSE(classify_login(200, R"({"access_token":""})", false, "").token);
    CHECK_FALSE(classify_login(200, "not json", false, "").retry);
    CHECK_FALSE(classify_login(0, "", true, "bad_url: no host").retry);
}

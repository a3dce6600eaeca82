#include <catch2/catch.hpp>

#include "hub/ingest/rate_limit.hpp"

using hub::ingest::RateLimit;
using hub::ingest::RateLimiter;
using namespace std::chrono_literals;

TEST_CASE("rate limit: a burst, then the refill rate", "[ratelimit]") {
    RateLimiter limiter;
    const RateLimit limit{.per_second = 10, .burst = 5};
    const auto t0 = RateLimiter::Clock::time_point{} + 1h;
    for (int i = 0; i < 5; ++i) CHECK_FALSE(limiter.take("p", limit, t0));
    auto wait = limiter.take("p", limit, t0);
    REQUIRE(wait);
    CHECK(*wait == 100ms);                              // one token every 100 ms
    CHECK_FALSE(limiter.take("p", limit, t0 + 100ms));  // refilled one
    CHECK(limiter.take("p", limit, t0 + 100ms));
    CHECK_FALSE(limiter.take("p", limit, t0 + 10s));  // refills up to the burst, not beyond
    for (int i = 0; i < 4; ++i) CHECK_FALSE(limiter.take("p", limit, t0 + 10s));
    CHECK(limiter.take("p", limit, t0 + 10s));
}

TEST_CASE("rate limit: partners have buckets of their own", "[ratelimit]") {
    RateLimiter limiter;
    const RateLimit limit{.per_second = 1, .burst = 1};
    const auto t0 = RateLimiter::Clock::time_point{} + 1h;
    CHECK_FALSE(limiter.take("a", limit, t0));
    CHECK(limiter.take("a", limit, t0));
    CHECK_FALSE(limiter.take("b", limit, t0));
    auto wait = limiter.take("a", limit, t0);
    REQUIRE(wait);
    CHECK(*wait == 1000ms);
}

TEST_CASE("rate limit: refusals are counted per partner", "[ratelimit]") {
    RateLimiter limiter;
    const RateLimit limit{.per_second = 1, .burst = 1};
    const auto t0 = RateLimiter::Clock::time_point{} + 1h;
    CHECK(limiter.refusals().empty());
    CHECK_FALSE(limiter.take("a", limit, t0));
    CHECK(limiter.take("a", limit, t0));
    CHECK(limiter.take("a", limit, t0));
    CHECK_FALSE(limiter.take("b", limit, t0));
    auto r = limiter.refusals();
    REQUIRE(r.size() == 1);
    CHECK(r[0].first == "a");
    CHECK(r[0].second == 2);
}

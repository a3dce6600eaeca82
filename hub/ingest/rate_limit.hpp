#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace hub::ingest {

/// A token bucket's settings: `per_second` tokens refill each second, up to `burst`.
struct RateLimit {
    double per_second = 200;
    double burst = 400;
};

/// Per-partner token buckets, in this process's memory (each hub instance limits on its own; with N instances
/// behind a balancer a partner gets up to N times the rate). Thread-safe.
class RateLimiter {
public:
    using Clock = std::chrono::steady_clock;

    /// Takes one token of `partner`'s bucket; nullopt when allowed, else how long until a token is there.
    std::optional<std::chrono::milliseconds> take(const std::string& partner, const RateLimit& limit,
                                                  Clock::time_point now = Clock::now());

    /// Refusals so far per partner id (partners never refused are left out); for /metrics.
    std::vector<std::pair<std::string, std::uint64_t>> refusals() const;

private:
    struct Bucket {
        double tokens = 0;
        Clock::time_point updated;
        std::uint64_t refused = 0;
    };
    mutable std::mutex mutex_;
    std::unordered_map<std::string, Bucket> buckets_;
};

}  // namespace hub::ingest

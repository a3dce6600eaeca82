#include "hub/ingest/rate_limit.hpp"

#include <algorithm>
#include <cmath>

namespace hub::ingest {

std::optional<std::chrono::milliseconds> RateLimiter::take(const std::string& partner, const RateLimit& limit,
                                                           Clock::time_point now) {
    const double rate = std::max(limit.per_second, 0.001);
    const double burst = std::max(limit.burst, 1.0);
    std::lock_guard lock(mutex_);
    auto [it, fresh] = buckets_.try_emplace(partner, Bucket{burst, now});
    Bucket& b = it->second;
    if (!fresh) {
        const double elapsed = std::chrono::duration<double>(now - b.updated).count();
        b.tokens = std::min(burst, b.tokens + std::max(elapsed, 0.0) * rate);
        b.updated = now;
    }
    if (b.tokens >= 1.0) {
        b.tokens -= 1.0;
        return std::nullopt;
    }
    ++b.refused;
    return std::chrono::milliseconds(static_cast<long long>(std::ceil((1.0 - b.tokens) / rate * 1000.0)));
}

std::vector<std::pair<std::string, std::uint64_t>> RateLimiter::refusals() const {
    std::vector<std::pair<std::string, std::uint64_t>> out;
    std::lock_guard lock(mutex_);
    for (const auto& [partner, b] : buckets_)
        if (b.refused > 0) out.emplace_back(partner, b.refused);
    return out;
}

}  // namespace hub::ingest

#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string_view>

#include "common/http/message.hpp"
#include "common/metrics/metrics.hpp"

namespace hub::metrics {

/// The hub's metrics (product.md section 8). Recording is lock-free and allocation-free (relaxed atomics in
/// arrays sized at construction); labels come from fixed sets, so cardinality is bounded. Families whose values
/// live elsewhere (database pool, outbox, rate limiter, connections) are added by their owners with
/// `registry.collector`. Thread-safe; one per process.
class HubMetrics {
public:
    HubMetrics();
    HubMetrics(const HubMetrics&) = delete;
    HubMetrics& operator=(const HubMetrics&) = delete;

    /// One answered HTTP request (the server's access-log hook).
    void request(std::string_view path, const common::http::LogFields& fields, unsigned status,
                 std::chrono::microseconds latency) noexcept;
    /// One HTTP exchange of a forwarder with a POS (`outcome` as in hub.pos_delivery_attempts).
    void forward_attempt(std::string_view outcome, std::int64_t latency_ms) noexcept;
    /// A claim ended in `state` (delivered, pending, rejected, auth_failed, dead, cancelled).
    void forward_finished(std::string_view state) noexcept;
    /// From the order's storage to the POS's acceptance (orders due at once; scheduled orders wait on purpose).
    void forward_latency(double seconds) noexcept { forward_latency_->observe(seconds); }
    /// The database pool's queue-wait histogram (Pool::Options::queue_wait).
    common::metrics::Histogram& pool_wait() { return *pool_wait_; }

    common::metrics::Registry registry;

    /// The fixed label sets (exposed for tests).
    static constexpr std::array<std::string_view, 3> kEvents = {"order_created", "order_updated", "other"};
    static constexpr std::array<std::string_view, 17> kOutcomes = {
        "created",     "duplicate",       "conflict",           "unknown_branch", "appended",
        "repeated",    "order_not_found", "branch_mismatch",    "invalid",        "unauthorized",
        "unknown_key", "rate_limited",    "method_not_allowed", "unavailable",    "error",
        "refused",     "replayed"};
    static constexpr std::array<std::string_view, 5> kRoutes = {"webhooks", "healthz", "readyz", "metrics", "other"};
    static constexpr std::array<std::string_view, 7> kAttemptResults = {
        "delivered", "rejected", "unauthorized", "retry", "logged_in", "login_failed", "other"};
    static constexpr std::array<std::string_view, 7> kJobStates = {"delivered", "pending",   "rejected", "auth_failed",
                                                                   "dead",      "cancelled", "other"};

private:
    common::metrics::StatusCounters webhook_requests_;  // (event x outcome) x status
    common::metrics::StatusCounters http_requests_;     // route x status
    std::array<common::metrics::Histogram*, kEvents.size()> webhook_latency_{};
    std::array<common::metrics::Counter*, kAttemptResults.size()> attempts_{};
    std::array<common::metrics::Counter*, kJobStates.size()> finished_{};
    common::metrics::Histogram* attempt_latency_ = nullptr;
    common::metrics::Histogram* forward_latency_ = nullptr;
    common::metrics::Histogram* pool_wait_ = nullptr;
};

/// The index of `value` in `set`, or the last index when absent (the catch-all entry).
template <std::size_t N>
constexpr std::size_t index_of(const std::array<std::string_view, N>& set, std::string_view value) {
    for (std::size_t i = 0; i < N; ++i)
        if (set[i] == value) return i;
    return N - 1;
}

}  // namespace hub::metrics

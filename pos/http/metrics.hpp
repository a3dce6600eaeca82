#pragma once

#include <array>
#include <chrono>
#include <memory>
#include <string_view>

#include "common/http/server.hpp"
#include "common/metrics/metrics.hpp"

namespace pos::http {

/// The reference POS's request metrics: answers by route and status, and latency by route. Recording is
/// lock-free and allocation-free. Thread-safe.
class PosMetrics {
public:
    PosMetrics();

    void request(std::string_view path, unsigned status, std::chrono::microseconds latency) noexcept;
    /// `GET /metrics` (405 for other methods).
    common::http::Response render(const common::http::Request& req) const;
    /// The POS's access log followed by request().
    common::http::AccessLog access_log();

    common::metrics::Registry registry;
    static constexpr std::array<std::string_view, 6> kRoutes = {"login",  "orders",  "healthz",
                                                                "readyz", "metrics", "other"};

private:
    common::metrics::StatusCounters requests_;  // route x status
    std::array<common::metrics::Histogram*, kRoutes.size()> latency_{};
};

}  // namespace pos::http

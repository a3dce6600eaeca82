#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "common/db/migrate.hpp"
#include "common/http/server.hpp"
#include "hub/metrics/hub_metrics.hpp"

namespace common::db {
class Pool;
}

namespace hub::ingest {
class OrderStore;
class RateLimiter;
}  // namespace hub::ingest

namespace hub::http {

/// `GET /metrics`: the Prometheus text exposition of `metrics`, plus what is read at scrape time: the database
/// pool's use, and the outbox depth by state, the oldest job's age and readiness, read from the database
/// through the pool (never on an I/O thread) at most once per `refresh` however often it is scraped; a scrape
/// meanwhile gets the previous values. Holds references only; thread-safe.
class MetricsEndpoint {
public:
    MetricsEndpoint(common::db::Pool& pool, metrics::HubMetrics& metrics,
                    const std::vector<common::db::MigrationFile>& migrations,
                    std::chrono::milliseconds refresh = std::chrono::milliseconds(1000));

    /// Adds the per-partner rate-limit refusals (label `partner`: the partner id, never its key).
    void watch(const ingest::RateLimiter& limiter);
    /// Adds the listener's open connections.
    void watch(const common::http::Server& server);
    /// Adds the ingest pipeline's connection and counts (nothing when `store` has no pipeline).
    void watch(const ingest::OrderStore& store);

    boost::asio::awaitable<common::http::Response> handle(const common::http::Request& req);

private:
    struct OutboxState {
        std::string state;
        double jobs = 0;
        double oldest_seconds = 0;
    };
    struct Snapshot {
        bool database_up = false;
        bool ready = false;
        std::vector<OutboxState> outbox;
    };
    boost::asio::awaitable<void> refresh();

    common::db::Pool& pool_;
    metrics::HubMetrics& metrics_;
    const std::vector<common::db::MigrationFile>& migrations_;
    std::chrono::milliseconds refresh_interval_;
    std::mutex mutex_;  // scrapes only, never the request path
    Snapshot snapshot_;
    std::chrono::steady_clock::time_point refreshed_{};
    bool refreshing_ = false;
    bool refreshed_once_ = false;
    std::uint64_t reads_ = 0;  // under mutex_: database reads for /metrics so far
};

class UnknownKeyLog;

/// The hub's access log (one line per request; with `unknown_keys`, unknown-key webhook refusals summed up there)
/// followed by the request metrics (every request).
common::http::AccessLog observed_access_log(metrics::HubMetrics& metrics, UnknownKeyLog* unknown_keys = nullptr);

}  // namespace hub::http

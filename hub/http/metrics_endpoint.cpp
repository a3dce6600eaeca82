#include "hub/http/metrics_endpoint.hpp"

#include <algorithm>
#include <pqxx/pqxx>

#include "common/app/health.hpp"
#include "common/db/pool.hpp"
#include "common/log/log.hpp"
#include "hub/db/queries.hpp"
#include "hub/http/routes.hpp"
#include "hub/ingest/rate_limit.hpp"
#include "hub/ingest/store.hpp"

namespace hub::http {
namespace {

using common::metrics::Type;
using common::metrics::Writer;

// The states an operator watches, always written (0 when none) so that alert rules see a series.
constexpr std::string_view kOpenStates[] = {"pending", "in_flight", "rejected", "auth_failed", "dead"};

}  // namespace

MetricsEndpoint::MetricsEndpoint(common::db::Pool& pool, metrics::HubMetrics& metrics,
                                 const std::vector<common::db::MigrationFile>& migrations,
                                 std::chrono::milliseconds refresh)
    : pool_(pool), metrics_(metrics), migrations_(migrations), refresh_interval_(refresh) {
    auto& r = metrics_.registry;
    auto pool_gauge = [this](const char* name, std::size_t common::db::PoolStats::*field) {
        return [this, name, field](Writer& w) { w.sample(name, static_cast<double>(pool_.stats().*field)); };
    };
    r.collector("orderhub_db_pool_workers", "Database worker threads (one connection each).", Type::gauge,
                pool_gauge("orderhub_db_pool_workers", &common::db::PoolStats::workers));
    r.collector("orderhub_db_pool_busy", "Database workers running a job now.", Type::gauge,
                pool_gauge("orderhub_db_pool_busy", &common::db::PoolStats::busy));
    r.collector("orderhub_db_pool_queued", "Database jobs waiting for a worker.", Type::gauge,
                pool_gauge("orderhub_db_pool_queued", &common::db::PoolStats::queued));
    r.collector("orderhub_db_pool_jobs_total", "Database jobs run.", Type::counter, [this](Writer& w) {
        w.sample("orderhub_db_pool_jobs_total", static_cast<double>(pool_.stats().jobs));
    });
    r.collector("orderhub_db_pool_connects_total", "Database connections opened (reconnects included).", Type::counter,
                [this](Writer& w) {
                    w.sample("orderhub_db_pool_connects_total", static_cast<double>(pool_.stats().reconnects));
                });
    r.collector("orderhub_outbox_jobs",
                "Forwarding jobs not delivered nor cancelled, by state (database-wide; read at most once a second).",
                Type::gauge, [this](Writer& w) {
                    std::lock_guard lock(mutex_);
                    for (const auto& s : snapshot_.outbox)
                        w.sample("orderhub_outbox_jobs", {{"state", s.state}}, s.jobs);
                });
    r.collector("orderhub_outbox_oldest_job_age_seconds",
                "Age of the oldest job in each open state: since it became due, or since its order was stored once "
                "it was tried (0 when none).",
                Type::gauge, [this](Writer& w) {
                    std::lock_guard lock(mutex_);
                    for (const auto& s : snapshot_.outbox)
                        w.sample("orderhub_outbox_oldest_job_age_seconds", {{"state", s.state}}, s.oldest_seconds);
                });
    r.collector("orderhub_database_up", "1 when the last read of the database for /metrics succeeded.", Type::gauge,
                [this](Writer& w) {
                    std::lock_guard lock(mutex_);
                    w.sample("orderhub_database_up", snapshot_.database_up ? 1 : 0);
                });
    r.collector("orderhub_metrics_database_reads_total",
                "Reads of the database made for /metrics (at most one per second however often it is scraped).",
                Type::counter, [this](Writer& w) {
                    std::lock_guard lock(mutex_);
                    w.sample("orderhub_metrics_database_reads_total", static_cast<double>(reads_));
                });
    r.collector("orderhub_log_lines_dropped_total",
                "Log lines dropped because stderr did not take them in time (its reader stalled or went away).",
                Type::counter, [](Writer& w) {
                    w.sample("orderhub_log_lines_dropped_total", static_cast<double>(common::log::dropped_lines()));
                });
    r.collector("orderhub_ready", "1 when /readyz would answer 200: database reachable, migrations current.",
                Type::gauge, [this](Writer& w) {
                    std::lock_guard lock(mutex_);
                    w.sample("orderhub_ready", snapshot_.ready ? 1 : 0);
                });
}

void MetricsEndpoint::watch(const ingest::RateLimiter& limiter) {
    // Two families, so that sum() over the per-partner one never double-counts a total. One series per partner
    // that was ever refused (partners are few; the label is the partner's id, never its key).
    metrics_.registry.collector("orderhub_rate_limited_total",
                                "Webhook requests refused by the per-partner rate limit (429), all partners.",
                                Type::counter, [&limiter](Writer& w) {
                                    std::uint64_t total = 0;
                                    for (const auto& refused : limiter.refusals()) total += refused.second;
                                    w.sample("orderhub_rate_limited_total", static_cast<double>(total));
                                });
    metrics_.registry.collector(
        "orderhub_rate_limited_by_partner_total",
        "Webhook requests refused by the per-partner rate limit (429), by partner id.", Type::counter,
        [&limiter](Writer& w) {
            for (const auto& [partner, n] : limiter.refusals())
                w.sample("orderhub_rate_limited_by_partner_total", {{"partner", partner}}, static_cast<double>(n));
        });
}

void MetricsEndpoint::watch(const common::http::Server& server) {
    metrics_.registry.collector(
        "orderhub_http_connections", "Open HTTP connections of the listener.", Type::gauge,
        [&server](Writer& w) { w.sample("orderhub_http_connections", static_cast<double>(server.connections())); });
    metrics_.registry.collector(
        "orderhub_http_io_uring",
        "1 when the listener sends the answers and makes the reads of a burst with one io_uring system call, else 0.",
        Type::gauge,
        [&server](Writer& w) { w.sample("orderhub_http_io_uring", server.bursts_through_io_uring() ? 1.0 : 0.0); });
}

void MetricsEndpoint::watch(const ingest::OrderStore& store) {
    if (!store.pipe_stats()) return;
    auto& r = metrics_.registry;
    r.collector(
        "orderhub_ingest_pipeline_up", "1 while the ingest pipeline has its database connection, else 0.", Type::gauge,
        [&store](Writer& w) { w.sample("orderhub_ingest_pipeline_up", store.pipe_stats()->ready ? 1.0 : 0.0); });
    const auto counter = [&r, &store](const char* name, const char* help, std::uint64_t ingest::PipeStats::*field) {
        r.collector(name, help, Type::counter, [&store, name, field](Writer& w) {
            const auto stats = store.pipe_stats();
            w.sample(name, static_cast<double>((*stats).*field));
        });
    };
    counter("orderhub_ingest_pipeline_statements_total", "insert_orders statements the ingest pipeline sent.",
            &ingest::PipeStats::statements);
    counter("orderhub_ingest_pipeline_requests_total", "Webhook requests in the ingest pipeline's statements.",
            &ingest::PipeStats::requests);
    counter("orderhub_ingest_pipeline_handed_back_total",
            "Webhook requests the ingest pipeline handed to the pool's group commit (pending, a failed statement, no "
            "connection).",
            &ingest::PipeStats::handed_back);
    counter("orderhub_ingest_pipeline_connections_lost_total", "Connections the ingest pipeline lost.",
            &ingest::PipeStats::connections_lost);
}

boost::asio::awaitable<void> MetricsEndpoint::refresh() {
    const auto now = std::chrono::steady_clock::now();
    {
        std::lock_guard lock(mutex_);
        // One read at a time, and at most one per interval: concurrent scrapes get the previous values.
        if (refreshing_ || (refreshed_once_ && now - refreshed_ < refresh_interval_)) co_return;
        refreshing_ = true;
        ++reads_;
    }
    Snapshot s;
    auto job = [files = &migrations_](pqxx::connection& c) {
        Snapshot out;
        out.ready = common::db::migration_problem(c, "hub", *files).empty();
        out.database_up = true;
        if (!out.ready) return out;  // before `orderhub migrate` the tables may not exist
        pqxx::read_transaction tx(c);
        for (const auto& row : tx.exec_prepared(db::kOutboxDepth))
            out.outbox.push_back({row[0].as<std::string>(), row[1].as<double>(),
                                  std::max(0.0, row[2].is_null() ? 0.0 : row[2].as<double>())});
        return out;
    };
    try {
        s = co_await pool_.run(std::move(job));
    } catch (const std::exception&) {
        s = Snapshot{};  // unreachable or failing: not ready, and no outbox figures rather than stale ones
    }
    if (s.database_up && s.ready)
        for (auto state : kOpenStates)
            if (std::none_of(s.outbox.begin(), s.outbox.end(), [&](const OutboxState& o) { return o.state == state; }))
                s.outbox.push_back({std::string(state), 0, 0});
    std::sort(s.outbox.begin(), s.outbox.end(),
              [](const OutboxState& a, const OutboxState& b) { return a.state < b.state; });
    std::lock_guard lock(mutex_);
    snapshot_ = std::move(s);
    refreshed_ = std::chrono::steady_clock::now();
    refreshed_once_ = true;
    refreshing_ = false;
}

boost::asio::awaitable<common::http::Response> MetricsEndpoint::handle(const common::http::Request& req) {
    if (req.method != "GET" && req.method != "HEAD")
        co_return common::app::method_not_allowed(render_error, req.target, "GET");
    co_await refresh();
    common::http::Response r;
    r.status = 200;
    r.content_type = common::metrics::kContentType;
    r.body = metrics_.registry.expose();
    co_return r;
}

common::http::AccessLog observed_access_log(metrics::HubMetrics& metrics, UnknownKeyLog* unknown_keys) {
    return [&metrics, unknown_keys](const common::http::Request& req, const common::http::Response& res,
                                    std::chrono::microseconds latency) {
        access_log(req, res, latency, unknown_keys);
        metrics.request(req.path, res.log, res.status, latency);
    };
}

}  // namespace hub::http

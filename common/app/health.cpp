#include "common/app/health.hpp"

#include <boost/json/value.hpp>
#include <pqxx/pqxx>

#include "common/db/pool.hpp"
#include "common/log/log.hpp"

namespace common::app {

http::Response method_not_allowed(const http::ErrorRenderer& errors, std::string_view target, std::string_view allow) {
    auto r = errors(target, 405, "method_not_allowed", "this endpoint accepts " + std::string(allow) + " only");
    r.headers.emplace_back("Allow", std::string(allow));
    return r;
}

namespace {

/// The readiness problem (empty: ready), from the cache when fresh or while another check runs.
boost::asio::awaitable<std::string> readiness_problem(const HealthTarget& t) {
    ReadinessCache& cache = *t.readiness;
    {
        std::lock_guard lock(cache.mutex);
        const auto now = std::chrono::steady_clock::now();
        if (cache.checked && (cache.checking || now - cache.at < cache.interval)) co_return cache.problem;
        if (cache.checking) co_return "readiness is being checked";  // the very first check is still running
        cache.checking = true;
        ++cache.reads;
    }
    std::string problem;
    try {
        auto job = [schema = t.schema, files = &t.migrations](pqxx::connection& c) {
            return db::migration_problem(c, schema, *files);
        };
        problem = co_await t.pool.run(std::move(job));
    } catch (const std::exception& e) {
        const bool down = db::is_unavailable(std::current_exception());
        if (!down) log::error("readiness check failed", {{"error", e.what()}});
        problem = down ? "database unreachable" : "the readiness check failed (see the log)";
    }
    std::lock_guard lock(cache.mutex);
    cache.problem = problem;
    cache.at = std::chrono::steady_clock::now();
    cache.checked = true;
    cache.checking = false;
    co_return problem;
}

}  // namespace

boost::asio::awaitable<std::optional<http::Response>> health_routes(const http::Request& req, const HealthTarget& t) {
    if (req.path != "/healthz" && req.path != "/readyz") co_return std::nullopt;
    if (req.method != "GET" && req.method != "HEAD") co_return method_not_allowed(t.errors, req.target, "GET");
    if (req.path == "/healthz") co_return http::json_response(200, {{"status", "ok"}});
    const std::string problem = co_await readiness_problem(t);
    if (!problem.empty()) co_return t.errors(req.target, 503, "not_ready", t.details ? problem : "not ready");
    co_return http::json_response(200, {{"status", "ready"}});
}

}  // namespace common::app

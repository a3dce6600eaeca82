#include "common/app/health.hpp"

#include <boost/json/value.hpp>
#include <pqxx/pqxx>

#include "common/db/pool.hpp"

namespace common::app {

http::Response method_not_allowed(const http::ErrorRenderer& errors, std::string_view target, std::string_view allow) {
    auto r = errors(target, 405, "method_not_allowed", "this endpoint accepts " + std::string(allow) + " only");
    r.headers.emplace_back("Allow", std::string(allow));
    return r;
}

boost::asio::awaitable<std::optional<http::Response>> health_routes(const http::Request& req, const HealthTarget& t) {
    if (req.path != "/healthz" && req.path != "/readyz") co_return std::nullopt;
    if (req.method != "GET" && req.method != "HEAD") co_return method_not_allowed(t.errors, req.target, "GET");
    if (req.path == "/healthz") co_return http::json_response(200, {{"status", "ok"}});
    std::string problem;
    try {
        auto job = [schema = t.schema, files = &t.migrations](pqxx::connection& c) {
            return db::migration_problem(c, schema, *files);
        };
        problem = co_await t.pool.run(std::move(job));
    } catch (const std::exception& e) {
        problem = db::is_unavailable(std::current_exception()) ? "database unreachable" : e.what();
    }
    if (!problem.empty()) {
        auto r = t.errors(req.target, 503, "not_ready", problem);
        co_return r;
    }
    co_return http::json_response(200, {{"status", "ready"}});
}

}  // namespace common::app

#include "pos/http/metrics.hpp"

#include <string>

#include "common/app/health.hpp"
#include "common/log/log.hpp"
#include "pos/http/responses.hpp"
#include "pos/http/routes.hpp"

namespace pos::http {
namespace {

std::size_t route_of(std::string_view path) {
    if (path == "/api/login") return 0;
    if (path == "/api/orders") return 1;
    if (path == "/healthz") return 2;
    if (path == "/readyz") return 3;
    if (path == "/metrics") return 4;
    return 5;
}

}  // namespace

PosMetrics::PosMetrics() : requests_(kRoutes.size()) {
    registry.collector("orderpos_http_requests_total", "HTTP requests answered, by route and status.",
                       common::metrics::Type::counter, [this](common::metrics::Writer& w) {
                           requests_.for_each([&w](std::size_t r, const std::string& status, double v) {
                               w.sample("orderpos_http_requests_total", {{"route", kRoutes[r]}, {"status", status}}, v);
                           });
                       });
    registry.collector("orderpos_log_lines_dropped_total",
                       "Log lines dropped because stderr did not take them in time (its reader stalled or went away).",
                       common::metrics::Type::counter, [](common::metrics::Writer& w) {
                           w.sample("orderpos_log_lines_dropped_total",
                                    static_cast<double>(common::log::dropped_lines()));
                       });
    for (std::size_t r = 0; r < kRoutes.size(); ++r)
        latency_[r] = &registry.histogram("orderpos_http_request_duration_seconds",
                                          "Time from a request's last byte to its answer, by route.",
                                          common::metrics::latency_buckets(), {{"route", std::string(kRoutes[r])}});
}

void PosMetrics::request(std::string_view path, unsigned status, std::chrono::microseconds latency) noexcept {
    const std::size_t r = route_of(path);
    requests_.inc(r, status);
    latency_[r]->observe(std::chrono::duration<double>(latency).count());
}

common::http::Response PosMetrics::render(const common::http::Request& req) const {
    if (req.method != "GET" && req.method != "HEAD")
        return common::app::method_not_allowed(render_error, req.target, "GET");
    common::http::Response r;
    r.content_type = common::metrics::kContentType;
    r.body = registry.expose();
    return r;
}

common::http::AccessLog PosMetrics::access_log() {
    return
        [this](const common::http::Request& req, const common::http::Response& res, std::chrono::microseconds latency) {
            pos::http::access_log(req, res, latency);
            request(req.path, res.status, latency);
        };
}

}  // namespace pos::http

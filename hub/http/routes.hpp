#pragma once

#include <chrono>
#include <string_view>

#include "common/app/health.hpp"
#include "common/http/server.hpp"

namespace common::db {
class Pool;
}

namespace hub::ingest {
class WebhookHandler;
}

namespace hub::dashboard {
class Dashboard;
}

namespace hub::http {

class MetricsEndpoint;

/// The hub's HTTP surface: health, readiness, metrics, webhooks and the merchant dashboard. Holds references only.
class Routes {
public:
    /// `webhooks` and `dashboard` may be null (the forwarder role): their URLs then answer 404.
    Routes(common::db::Pool& pool, ingest::WebhookHandler* webhooks, dashboard::Dashboard* dashboard = nullptr);
    /// The request handler for common::http::Server.
    common::http::Handler handler();
    /// Serves `GET /metrics` from `metrics` (which must outlive the routes); without it /metrics is 404.
    void serve_metrics(MetricsEndpoint* metrics) { metrics_ = metrics; }

private:
    boost::asio::awaitable<common::http::Response> handle(common::http::Request req);
    common::app::HealthTarget health_;
    ingest::WebhookHandler* webhooks_;
    MetricsEndpoint* metrics_ = nullptr;
    dashboard::Dashboard* dashboard_;
};

/// The hub's failure body: `{"status":"failed","error":{...}}`, plus `"order_id": ""` on webhook paths.
common::http::Response render_error(std::string_view target, unsigned status, std::string_view code,
                                    std::string_view message);

/// One JSON log line per request.
void access_log(const common::http::Request& req, const common::http::Response& res, std::chrono::microseconds latency);

}  // namespace hub::http

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

namespace hub::adminapi {
class AdminApi;
}

namespace hub::http {

class MetricsEndpoint;

/// The hub's HTTP surface: health, readiness, metrics, webhooks, the merchant dashboard and the operator HTTP API.
/// Holds references only.
class Routes {
public:
    /// `webhooks` and `dashboard` may be null (the forwarder role): their URLs then answer 404.
    Routes(common::db::Pool& pool, ingest::WebhookHandler* webhooks, dashboard::Dashboard* dashboard = nullptr);
    /// The request handler for common::http::Server.
    common::http::Handler handler();
    /// Serves `GET /metrics` from `metrics` (which must outlive the routes) on handler(); without it /metrics is
    /// 404 there (it is on the admin listener then).
    void serve_metrics(MetricsEndpoint* metrics) { metrics_ = metrics; }
    /// Serves the operator HTTP API under /api/admin/v1/ from `api` (which must outlive the routes); without it
    /// those URLs are 404.
    void serve_admin_api(adminapi::AdminApi* api) { admin_api_ = api; }
    /// The request handler of the admin listener (`--admin-listen`): `/metrics` from `metrics` (which must
    /// outlive the routes), `/healthz` and a `/readyz` that says why it is not ready; 404 for anything else.
    common::http::Handler admin_handler(MetricsEndpoint& metrics);

private:
    /// Not a coroutine: a webhook's request goes to the webhook handler's coroutine as it is (a frame and a move of
    /// the request fewer per order), anything else to route().
    boost::asio::awaitable<common::http::Response> handle(common::http::Request&& req);
    boost::asio::awaitable<common::http::Response> route(common::http::Request req);
    boost::asio::awaitable<common::http::Response> handle_admin(common::http::Request req, MetricsEndpoint& metrics);
    common::app::HealthTarget health_;
    common::app::HealthTarget admin_health_;  ///< health_ with details; shares its readiness cache
    ingest::WebhookHandler* webhooks_;
    MetricsEndpoint* metrics_ = nullptr;
    dashboard::Dashboard* dashboard_;
    adminapi::AdminApi* admin_api_ = nullptr;
};

/// The hub's failure body: `{"status":"failed","error":{...}}`, plus `"order_id": ""` on webhook paths.
common::http::Response render_error(std::string_view target, unsigned status, std::string_view code,
                                    std::string_view message);

class UnknownKeyLog;

/// One JSON log line per request; with `unknown_keys`, webhooks refused for an unknown key are counted there
/// instead (one summary line a second).
void access_log(const common::http::Request& req, const common::http::Response& res, std::chrono::microseconds latency,
                UnknownKeyLog* unknown_keys = nullptr);

}  // namespace hub::http

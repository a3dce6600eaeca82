#include "hub/http/routes.hpp"

#include "common/http/error.hpp"

#include <boost/json.hpp>
#include <pqxx/pqxx>

#include "common/app/health.hpp"
#include "common/db/migrate.hpp"
#include "common/db/pool.hpp"
#include "common/log/log.hpp"
#include "hub/adminapi/api.hpp"
#include "hub/dashboard/api.hpp"
#include "hub/http/metrics_endpoint.hpp"
#include "hub/http/refusal_log.hpp"
#include "hub/ingest/webhook.hpp"

namespace hub::http {

using common::http::Request;
using common::http::Response;

Response render_error(std::string_view target, unsigned status, std::string_view code, std::string_view message) {
    const common::http::HttpError e{status,
                                    std::string(code),
                                    std::string(message),
                                    {},
                                    status == 503 ? common::http::kUnavailableRetryAfter : std::chrono::seconds(0)};
    boost::json::object body = common::http::failure_body(e);
    if (target.rfind("/webhooks/", 0) == 0) body["order_id"] = "";
    return common::http::render(e, &body);
}

void access_log(const Request& req, const Response& res, std::chrono::microseconds latency,
                UnknownKeyLog* unknown_keys) {
    // The path of a webhook carries the partner's key: log only its route, never the key.
    // 5xx answers are the hub's failures: logged as errors so that they stand out.
    const auto level = res.status >= 500 ? common::log::Level::error : common::log::Level::info;
    if (req.path.rfind("/webhooks/", 0) != 0) {
        common::log::write(level, "request",
                           {{"request_id", req.request_id},
                            {"method", req.method},
                            {"route", req.path},
                            {"status", res.status},
                            {"latency_us", latency.count()}});
        return;
    }
    // Who and what: the fields the webhook handler set; none when the server refused the request before it.
    if (res.log.get("outcome").empty()) {
        common::log::write(level, "request",
                           {{"request_id", req.request_id},
                            {"method", req.method},
                            {"route", "/webhooks/{key}"},
                            {"status", res.status},
                            {"latency_us", latency.count()},
                            {"outcome", "refused"}});
        return;
    }
    // Unknown keys are what a flood of random keys produces: counted, one summary line a second.
    if (unknown_keys != nullptr && res.log.get("outcome") == "unknown_key") {
        unknown_keys->count(req.request_id);
        return;
    }
    common::log::write(level, "request",
                       {{"request_id", req.request_id},
                        {"method", req.method},
                        {"route", "/webhooks/{key}"},
                        {"status", res.status},
                        {"latency_us", latency.count()}},
                       res.log.items());
}

Routes::Routes(common::db::Pool& pool, ingest::WebhookHandler* webhooks, dashboard::Dashboard* dashboard)
    : health_{pool, "hub", common::db::migrations_hub(), render_error},
      admin_health_(health_),
      webhooks_(webhooks),
      dashboard_(dashboard) {
    admin_health_.details = true;
}

common::http::Handler Routes::handler() {
    return [this](Request&& req) { return handle(std::move(req)); };
}

common::http::Handler Routes::admin_handler(MetricsEndpoint& metrics) {
    return [this, &metrics](Request&& req) { return handle_admin(std::move(req), metrics); };
}

boost::asio::awaitable<Response> Routes::handle_admin(Request req, MetricsEndpoint& metrics) {
    if (req.path == "/metrics") co_return co_await metrics.handle(req);
    if (auto r = co_await common::app::health_routes(req, admin_health_)) co_return std::move(*r);
    co_return render_error(req.target, 404, "not_found", "no such endpoint");
}

namespace {

constexpr std::string_view kWebhooks = "/webhooks/";

}  // namespace

boost::asio::awaitable<Response> Routes::handle(Request&& req) {
    if (webhooks_ != nullptr && req.path.starts_with(kWebhooks)) {
        // A view of the path: the request is lent to the handler and outlives it (common::http::Handler).
        const std::string_view key = std::string_view(req.path).substr(kWebhooks.size());
        if (!key.empty() && key.find('/') == std::string_view::npos) return webhooks_->handle(std::move(req), key);
    }
    return route(std::move(req));
}

boost::asio::awaitable<Response> Routes::route(Request req) {
    if (req.path.starts_with(kWebhooks)) {
        const auto& unknown = ingest::outcome_row(ingest::Kind::unknown_key);
        co_return render_error(req.target, unknown.http_status, unknown.error_code, unknown.message);
    }
    if (req.path == "/metrics" && metrics_ != nullptr) co_return co_await metrics_->handle(req);
    if (auto r = co_await common::app::health_routes(req, health_)) co_return std::move(*r);
    if (admin_api_ != nullptr && req.path.starts_with(adminapi::kPrefix)) co_return co_await admin_api_->handle(req);
    if (dashboard_ != nullptr) {
        if (auto r = co_await dashboard_->handle(req)) co_return std::move(*r);
    }
    co_return render_error(req.target, 404, "not_found", "no such endpoint");
}

}  // namespace hub::http

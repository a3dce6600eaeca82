#include "hub/http/routes.hpp"

#include <boost/json.hpp>
#include <pqxx/pqxx>

#include "common/app/health.hpp"
#include "common/db/migrate.hpp"
#include "common/db/pool.hpp"
#include "common/log/log.hpp"
#include "hub/dashboard/api.hpp"
#include "hub/ingest/webhook.hpp"

namespace hub::http {

using common::http::Request;
using common::http::Response;

Response render_error(std::string_view target, unsigned status, std::string_view code, std::string_view message) {
    boost::json::object body{{"status", "failed"},
                             {"error", {{"code", code}, {"message", message}, {"details", boost::json::array()}}}};
    if (target.rfind("/webhooks/", 0) == 0) body["order_id"] = "";
    auto r = common::http::json_response(status, body);
    if (status == 503) r.headers.emplace_back("Retry-After", "5");
    return r;
}

void access_log(const Request& req, const Response& res, std::chrono::microseconds latency) {
    // The path of a webhook carries the partner's key: log only its route, never the key.
    std::string_view route = req.path;
    if (route.rfind("/webhooks/", 0) == 0) route = "/webhooks/{key}";
    common::log::info("request", {{"request_id", req.request_id},
                                  {"method", req.method},
                                  {"route", route},
                                  {"status", res.status},
                                  {"latency_us", latency.count()}});
}

Routes::Routes(common::db::Pool& pool, ingest::WebhookHandler* webhooks, dashboard::Dashboard* dashboard)
    : health_{pool, "hub", common::db::migrations_hub(), render_error}, webhooks_(webhooks), dashboard_(dashboard) {}

common::http::Handler Routes::handler() {
    return [this](Request req) { return handle(std::move(req)); };
}

boost::asio::awaitable<Response> Routes::handle(Request req) {
    constexpr std::string_view kWebhooks = "/webhooks/";
    if (req.path.rfind(kWebhooks, 0) == 0) {
        std::string key = req.path.substr(kWebhooks.size());
        if (webhooks_ != nullptr && !key.empty() && key.find('/') == std::string::npos)
            co_return co_await webhooks_->handle(std::move(req), std::move(key));
        co_return render_error(req.target, 404, "unknown_key", "unknown or disabled webhook URL");
    }
    if (auto r = co_await common::app::health_routes(req, health_)) co_return std::move(*r);
    if (dashboard_ != nullptr) {
        if (auto r = co_await dashboard_->handle(req)) co_return std::move(*r);
    }
    co_return render_error(req.target, 404, "not_found", "no such endpoint");
}

}  // namespace hub::http

#include "pos/http/routes.hpp"

#include <boost/json.hpp>

#include "common/db/pool.hpp"
#include "common/log/log.hpp"

namespace pos::http {

using common::http::Request;
using common::http::Response;

Response render_error(std::string_view, unsigned status, std::string_view code, std::string_view message) {
    auto r = common::http::json_response(status, {{"success", false}, {"message", message}, {"code", code}});
    if (status == 503) r.headers.emplace_back("Retry-After", "5");
    return r;
}

void access_log(const Request& req, const Response& res, std::chrono::microseconds latency) {
    common::log::info("request", {{"request_id", req.request_id},
                                  {"method", req.method},
                                  {"route", req.path},
                                  {"status", res.status},
                                  {"latency_us", latency.count()}});
}

Routes::Routes(common::db::Pool& pool)
    : pool_(pool), health_{pool, "pos", common::db::migrations_pos(), render_error} {}

common::http::Handler Routes::handler() {
    return [this](Request req) { return handle(std::move(req)); };
}

boost::asio::awaitable<Response> Routes::handle(Request req) {
    if (auto r = co_await common::app::health_routes(req, health_)) co_return std::move(*r);
    co_return render_error(req.target, 404, "not_found", "no such endpoint");
}

}  // namespace pos::http

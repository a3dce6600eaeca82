#include "pos/http/routes.hpp"

#include <exception>

#include "common/db/pool.hpp"
#include "common/log/log.hpp"
#include "pos/http/login_handler.hpp"
#include "pos/http/metrics.hpp"
#include "pos/http/orders_handler.hpp"

namespace pos::http {

using common::http::Request;
using common::http::Response;

void access_log(const Request& req, const Response& res, std::chrono::microseconds latency) {
    // The caller's trace (a valid traceparent's trace-id, "" without one) beside its request id: the hub sends both.
    common::log::info("request", {{"request_id", req.request_id},
                                  {"trace_id", req.trace_id},
                                  {"method", req.method},
                                  {"route", req.path},
                                  {"status", res.status},
                                  {"latency_us", latency.count()}});
}

Routes::Routes(common::db::Pool& pool, PasswordWorker& passwords, std::chrono::seconds token_lifetime)
    : pool_(pool),
      passwords_(passwords),
      token_lifetime_(token_lifetime),
      // One batch of orders at a time, on one worker: logins and token checks keep the others, and the orders that
      // arrive while a batch runs share the next statement and commit rather than start one of their own (the
      // drain of tests/load/forward-bench.sh: 0.88 x the PostgreSQL CPU per order against two at once). At low
      // rates an order that finds the intake idle waits 5 ms for the others of its forwarder's claim.
      intake_(pool, 64, 1, std::chrono::milliseconds(5)),
      health_{pool, "pos", common::db::migrations_pos(), render_error} {}

common::http::Handler Routes::handler() {
    return [this](Request req) { return handle(std::move(req)); };
}

boost::asio::awaitable<Response> Routes::handle(Request req) {
    if (req.path == "/metrics" && metrics_ != nullptr) co_return metrics_->render(req);
    if (auto r = co_await common::app::health_routes(req, health_)) co_return std::move(*r);
    const bool login = req.path == "/api/login";
    if (!login && req.path != "/api/orders") co_return render_error(req.target, 404, "not_found", "no such endpoint");
    if (req.method != "POST") co_return common::app::method_not_allowed(render_error, req.target, "POST");
    const std::string target = req.target;
    std::exception_ptr failure;
    try {
        if (login) co_return co_await handle_login(std::move(req), pool_, passwords_, token_lifetime_);
        co_return co_await handle_orders(std::move(req), pool_, intake_);
    } catch (...) {
        failure = std::current_exception();
    }
    // The server renders anything else as a logged 500; an unreachable database is a 503 with Retry-After.
    if (common::db::is_unavailable(failure)) co_return store_unavailable(target);
    std::rethrow_exception(failure);
}

}  // namespace pos::http

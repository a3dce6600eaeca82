#include "hub/dashboard/api.hpp"

#include <boost/url/parse_query.hpp>

#include "common/db/pool.hpp"
#include "hub/dashboard/auth.hpp"
#include "hub/dashboard/responses.hpp"
#include "hub/dashboard/routes.hpp"
#include "hub/dashboard/session.hpp"
#include "hub/dashboard/web.hpp"

namespace hub::dashboard {
namespace {

using common::http::Request;
using common::http::Response;

constexpr std::string_view kApi = "/api/dashboard/";
constexpr std::string_view kPage = "/dashboard";

Response redirect_to_page() {
    Response r;
    r.status = 308;
    r.content_type = "text/plain; charset=utf-8";
    r.body = "see /dashboard/\n";
    r.headers.emplace_back("Location", "/dashboard/");
    return r;
}

/// 400 when a query parameter (decoded) or the path is text that must not reach a query or a log (text_problem);
/// nullopt when every one is fine.
std::optional<Response> refuse_bad_text(const Request& req) {
    boost::json::array details;
    if (auto problem = text_problem(req.path))
        details.push_back({{"path", "path"}, {"message", "the path " + *problem}});
    const auto q = req.target.find('?');
    if (q != std::string::npos) {
        auto params = boost::urls::parse_query(std::string_view(req.target).substr(q + 1));
        if (!params) {
            details.push_back({{"path", "query"}, {"message", "not a query string"}});
        } else {
            boost::urls::encoding_opts opts;
            opts.space_as_plus = true;
            for (const auto& p : *params) {
                const std::string key = p.key.decode(opts);
                auto problem = text_problem(key);
                if (!problem && p.has_value) problem = text_problem(p.value.decode(opts));
                if (problem) details.push_back({{"path", text_problem(key) ? "query" : key}, {"message", *problem}});
            }
        }
    }
    if (details.empty()) return std::nullopt;
    return invalid_request("a query parameter or the path is not valid text", std::move(details));
}

}  // namespace

Dashboard::Dashboard(common::db::Pool& pool, EventFeed& feed, DashboardOptions options)
    : context_(pool, feed, std::move(options)) {}

boost::asio::awaitable<std::optional<Response>> Dashboard::handle(const Request& req) {
    if (req.path.starts_with(kApi)) {
        try {
            co_return co_await api(req, std::string_view(req.path).substr(kApi.size()));
        } catch (const std::exception&) {
            // While PostgreSQL is away the board gets a 503 to retry, like the webhooks; anything else is a bug.
            if (!common::db::is_unavailable(std::current_exception())) throw;
        }
        co_return failed(
            common::http::unavailable("database_unavailable", "the database is not reachable; try again shortly"));
    }
    if (req.path == kPage) co_return redirect_to_page();
    if (req.path.starts_with("/dashboard/")) {
        if (req.method != "GET" && req.method != "HEAD") co_return method_not_allowed("GET", "GET, HEAD");
        if (auto r = web_response(std::string_view(req.path).substr(kPage.size()))) co_return std::move(*r);
        co_return not_found("no such file");
    }
    co_return std::nullopt;
}

// The refusals come in the order that hub/dashboard/routes.hpp describes.
boost::asio::awaitable<Response> Dashboard::api(const Request& req, std::string_view path) {
    // Before any other step: nothing with a NUL (which libpq would cut), a line break or an escape goes further.
    if (auto refused = refuse_bad_text(req)) co_return std::move(*refused);
    if (req.method != "GET" && req.method != "POST") co_return method_not_allowed("GET or POST", "GET, POST");
    const Target target = target_of(path);
    const Route* route = find_route(target.pattern);
    Call call{req, target.order_id, {}};
    if (route == nullptr || route->needs_session) {
        Response refusal;
        auto session = check_session(req, refusal);
        if (!session) co_return refusal;
        call.session = std::move(*session);
        if (target.bad_order_id) co_return no_such_order();
        if (route == nullptr) co_return not_found("no such endpoint");
    }
    if (req.method != route->method) co_return method_not_allowed(route->method);
    co_return co_await route->handler(context_, call);
}

}  // namespace hub::dashboard

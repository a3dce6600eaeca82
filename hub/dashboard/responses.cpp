#include "hub/dashboard/responses.hpp"

#include <boost/json.hpp>

namespace hub::dashboard {

namespace json = boost::json;
using common::http::Response;

namespace {

Response with_no_store(Response r) {
    r.headers.emplace_back("Cache-Control", "no-store");
    return r;
}

}  // namespace

Response failed(const common::http::HttpError& e) { return with_no_store(common::http::render(e)); }

Response failed(unsigned status, std::string_view code, std::string_view message, json::array details) {
    return failed({status, std::string(code), std::string(message), std::move(details), {}});
}

Response ok(json::object body) {
    body["status"] = "success";
    return with_no_store(common::http::json_response(200, body));
}

Response method_not_allowed(std::string_view use, std::string_view allow) {
    auto r = failed(405, "method_not_allowed", "use " + std::string(use));
    if (!allow.empty()) r.headers.emplace_back("Allow", std::string(allow));
    return r;
}

Response invalid_request(std::string_view message, json::array details) {
    return failed(400, "invalid_request", message, std::move(details));
}

Response unauthenticated() { return failed(401, "unauthenticated", "log in first (no session, or it expired)"); }

Response cross_origin() { return failed(403, "cross_origin", "cross-site requests are refused"); }

Response forbidden_branch(const std::string& branch) {
    return failed(403, "forbidden_branch", "this user may not see branch '" + branch + "'");
}

Response no_such_order() { return not_found("no such order"); }

Response not_found(std::string_view message) { return failed(404, "not_found", message); }

}  // namespace hub::dashboard

#include "common/http/error.hpp"

namespace common::http {

boost::json::object failure_body(const HttpError& e) {
    return {{"status", "failed"}, {"error", {{"code", e.code}, {"message", e.message}, {"details", e.details}}}};
}

Response render(const HttpError& e, const boost::json::object* body) {
    Response r = body != nullptr ? json_response(e.status, *body) : json_response(e.status, failure_body(e));
    if (e.retry_after.count() > 0) r.headers.emplace_back("Retry-After", std::to_string(e.retry_after.count()));
    return r;
}

HttpError unavailable(std::string code, std::string message) {
    return {503, std::move(code), std::move(message), {}, kUnavailableRetryAfter};
}

}  // namespace common::http

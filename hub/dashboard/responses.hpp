#pragma once

// Every answer of the dashboard in one shape: `{"status": "success", ...}` or
// `{"status": "failed", "error": {"code", "message", "details"}}`, never cached. The failures that several routes
// give are named here once.

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <string>
#include <string_view>

#include "common/http/error.hpp"
#include "common/http/message.hpp"

namespace hub::dashboard {

/// `e` rendered (common/http/error.hpp), with `Cache-Control: no-store`.
common::http::Response failed(const common::http::HttpError& e);
/// failed() of an error without Retry-After.
common::http::Response failed(unsigned status, std::string_view code, std::string_view message,
                              boost::json::array details = {});

/// 200 `body` with `"status": "success"`, `Cache-Control: no-store`.
common::http::Response ok(boost::json::object body);

/// 405 "use <use>", with an `Allow` header when `allow` is not empty.
common::http::Response method_not_allowed(std::string_view use, std::string_view allow = {});

/// 400 invalid_request.
common::http::Response invalid_request(std::string_view message, boost::json::array details);

/// 401: no session, or it ended.
common::http::Response unauthenticated();

/// 403: the request comes from another site (Origin or Referer).
common::http::Response cross_origin();

/// 403: the user may not see `branch`.
common::http::Response forbidden_branch(const std::string& branch);

/// 404 not_found "no such order" (also for an order outside the user's scope).
common::http::Response no_such_order();

/// 404 not_found with `message`.
common::http::Response not_found(std::string_view message);

}  // namespace hub::dashboard

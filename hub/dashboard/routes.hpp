#pragma once

// The routes of the dashboard's JSON API under /api/dashboard/: (method, path pattern) -> handler. How a call finds
// its route, and in which order it is refused (Dashboard::api):
//   0. a path or a query parameter (decoded) with a control character or bytes that are not UTF-8: 400
//      invalid_request (text_problem), before anything looks at it;
//   1. a method other than GET or POST: 405 with `Allow: GET, POST`;
//   2. `login` needs no session; every other path, known or not, goes through the session step (check_session):
//      401 without a session cookie, 403 for a state-changing call from another site or without the CSRF token;
//   3. `orders/<id>` with an empty id or one longer than 64 bytes: 404 no such order;
//   4. a path of no route: 404 no such endpoint; a route's path with the other method: 405 "use <method>".

#include <array>
#include <boost/asio/awaitable.hpp>
#include <string>
#include <string_view>

#include "hub/dashboard/handlers.hpp"

namespace hub::dashboard {

using Handler = boost::asio::awaitable<common::http::Response> (*)(Context&, const Call&);

struct Route {
    std::string_view method;   ///< "GET" or "POST"
    std::string_view pattern;  ///< below /api/dashboard/; `{id}` stands for an order id
    bool needs_session;
    Handler handler;
};

/// Every route of the API.
inline constexpr std::array<Route, 11> kRoutes{{
    {"POST", "login", false, &login},
    {"POST", "logout", true, &logout},
    {"GET", "session", true, &session_info},
    {"GET", "orders", true, &list_orders},
    {"GET", "orders/{id}", true, &order},
    {"POST", "orders/{id}/phone", true, &order_phone},
    {"POST", "orders/{id}/resend", true, &resend},
    {"POST", "orders/{id}/accept", true, &accept},
    {"POST", "orders/{id}/reject", true, &reject},
    {"GET", "branches", true, &branches},
    {"GET", "events", true, &events},
}};

/// A path below /api/dashboard/ as a route pattern: `orders/<id>[/<rest>]` becomes `orders/{id}[/<rest>]` (a
/// trailing slash after the id is dropped) with `order_id` set; another path stays as it is.
struct Target {
    std::string pattern;
    std::string order_id;
    bool bad_order_id = false;  ///< the id is empty or longer than 64 bytes
};
Target target_of(std::string_view path);

/// The route of `pattern`, whatever its method; nullptr when there is none.
const Route* find_route(std::string_view pattern);

}  // namespace hub::dashboard

#pragma once

// The handlers of the dashboard's JSON API, one per route of hub/dashboard/routes.hpp. Each parses its request,
// calls the database through one pool job (in_session: the user and their scope first) and renders.

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <string>
#include <utility>

#include "common/http/message.hpp"
#include "hub/dashboard/auth.hpp"
#include "hub/dashboard/session.hpp"

namespace common::db {
class Pool;
}

namespace hub::dashboard {

class EventFeed;

/// How a Dashboard is set up.
struct DashboardOptions {
    /// Session cookies get `Secure`: the listener speaks TLS, or the public URL is https:// (a proxy ends TLS).
    bool secure_cookies = false;
    /// The POS connections this hub delivers to (`orderhub serve --pos-environment`), whose health the board shows.
    std::string pos_environment = "production";
    /// How often an open event stream checks its session (logout, disable, expiry) and its user's scope again,
    /// however busy it is (`orderhub serve --dashboard-session-check`).
    std::chrono::milliseconds session_check{15'000};
};

/// What the handlers share; owned by the Dashboard, which outlives every call.
struct Context {
    Context(common::db::Pool& pool, EventFeed& feed, DashboardOptions options)
        : pool(pool), feed(feed), options(std::move(options)) {}

    common::db::Pool& pool;
    EventFeed& feed;
    const DashboardOptions options;
    LoginGate gate;  ///< password checks at once (each holds a database worker ~0.3 s), shared fairly
    LoginThrottle throttle;
};

/// One call of a route.
struct Call {
    const common::http::Request& req;
    std::string order_id;  ///< the {id} of an `orders/{id}` route
    Session session;       ///< the checked session cookie (empty for `login`)
};

/// POST login: e-mail and password -> session cookie, CSRF token and the user.
boost::asio::awaitable<common::http::Response> login(Context& ctx, const Call& call);
/// POST logout: ends the session and clears its cookie.
boost::asio::awaitable<common::http::Response> logout(Context& ctx, const Call& call);
/// GET session: the user and the CSRF token of the session.
boost::asio::awaitable<common::http::Response> session_info(Context& ctx, const Call& call);

/// GET orders?branch=&filter=&since=: the newest orders of one branch.
boost::asio::awaitable<common::http::Response> list_orders(Context& ctx, const Call& call);
/// GET orders/{id}: every detail of an order (phone masked).
boost::asio::awaitable<common::http::Response> order(Context& ctx, const Call& call);
/// POST orders/{id}/phone: the customer's full phone number (recorded in the log, the number itself never).
boost::asio::awaitable<common::http::Response> order_phone(Context& ctx, const Call& call);
/// POST orders/{id}/resend: forwards an order to the POS again, as `orderhub order resend` does.
boost::asio::awaitable<common::http::Response> resend(Context& ctx, const Call& call);
/// POST orders/{id}/accept: a manual-accept branch's held order is sent to the POS with status ACCEPTED (409 when it
/// does not wait for a decision).
boost::asio::awaitable<common::http::Response> accept(Context& ctx, const Call& call);
/// POST orders/{id}/reject {"reason"}: a held order is never sent; the status log gets merchant_rejected (422 for
/// a bad reason, 409 when it does not wait for a decision).
boost::asio::awaitable<common::http::Response> reject(Context& ctx, const Call& call);
/// GET branches[?branch=]: whether each branch's POS is reachable.
boost::asio::awaitable<common::http::Response> branches(Context& ctx, const Call& call);

/// GET events[?branch=][&last_event_id=]: the event stream of the user's branches (Last-Event-ID resumes).
boost::asio::awaitable<common::http::Response> events(Context& ctx, const Call& call);

}  // namespace hub::dashboard

#pragma once

#include <boost/asio/awaitable.hpp>
#include <optional>
#include <string>

#include "common/http/message.hpp"
#include "hub/dashboard/handlers.hpp"

namespace common::db {
class Pool;
}

namespace hub::dashboard {

class EventFeed;

/// The merchant dashboard's HTTP surface: the page under /dashboard/ (embedded files) and the JSON API and event
/// stream under /api/dashboard/ (hub/dashboard/routes.hpp). Every API call but login needs a session cookie; every
/// POST needs the CSRF token; every answer is limited to the branches the user may see. Holds references to the
/// pool and the feed.
class Dashboard {
public:
    Dashboard(common::db::Pool& pool, EventFeed& feed, DashboardOptions options);

    /// The answer when `req` is for the dashboard, else nullopt.
    boost::asio::awaitable<std::optional<common::http::Response>> handle(const common::http::Request& req);

private:
    boost::asio::awaitable<common::http::Response> api(const common::http::Request& req, std::string_view path);

    Context context_;
};

}  // namespace hub::dashboard

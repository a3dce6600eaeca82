#pragma once

#include <chrono>
#include <string_view>

#include "common/app/health.hpp"
#include "common/http/server.hpp"

namespace pos::http {

/// The POS's HTTP surface. Holds references only.
class Routes {
public:
    explicit Routes(common::db::Pool& pool);
    /// The request handler for common::http::Server.
    common::http::Handler handler();

private:
    boost::asio::awaitable<common::http::Response> handle(common::http::Request req);
    common::db::Pool& pool_;
    common::app::HealthTarget health_;
};

/// The POS's failure body, Laravel-style: `{"success": false, "message": "…"}`.
common::http::Response render_error(std::string_view target, unsigned status, std::string_view code,
                                    std::string_view message);

/// One JSON log line per request.
void access_log(const common::http::Request& req, const common::http::Response& res, std::chrono::microseconds latency);

}  // namespace pos::http

#pragma once

#include <chrono>
#include <string_view>

#include "common/app/health.hpp"
#include "common/http/server.hpp"
#include "pos/http/password_worker.hpp"
#include "pos/http/responses.hpp"
#include "pos/store/intake.hpp"

namespace pos::http {

class PosMetrics;

/// The POS's HTTP surface: `POST /api/login`, `POST /api/orders`, `GET /healthz`, `GET /readyz`; 405 with
/// `Allow` for another method, 404 for another path. `pool` and `passwords` must outlive it. Orders are stored
/// by its own group commit (store::OrderIntake) over `pool`. Tokens issued by /api/login live `token_lifetime`.
class Routes {
public:
    Routes(common::db::Pool& pool, PasswordWorker& passwords, std::chrono::seconds token_lifetime);
    /// The request handler for common::http::Server.
    common::http::Handler handler();
    /// Serves `GET /metrics` from `metrics` (which must outlive the routes); without it /metrics is 404.
    void serve_metrics(const PosMetrics* metrics) { metrics_ = metrics; }

private:
    boost::asio::awaitable<common::http::Response> handle(common::http::Request req);
    common::db::Pool& pool_;
    PasswordWorker& passwords_;
    std::chrono::seconds token_lifetime_;
    store::OrderIntake intake_;
    common::app::HealthTarget health_;
    const PosMetrics* metrics_ = nullptr;
};

/// One JSON log line per request.
void access_log(const common::http::Request& req, const common::http::Response& res, std::chrono::microseconds latency);

}  // namespace pos::http

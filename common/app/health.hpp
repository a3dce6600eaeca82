#pragma once

#include <boost/asio/awaitable.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/db/migrate.hpp"
#include "common/http/server.hpp"

namespace common::db {
class Pool;
}

namespace common::app {

/// What health and readiness need to know about a service.
struct HealthTarget {
    db::Pool& pool;
    std::string schema;
    const std::vector<db::MigrationFile>& migrations;
    http::ErrorRenderer errors;
};

/// Answers `GET /healthz` (process alive) and `GET /readyz` (database reachable, migrations current, else 503);
/// nullopt for any other path.
boost::asio::awaitable<std::optional<http::Response>> health_routes(const http::Request& req, const HealthTarget& t);

/// A 405 with `Allow`, in the service's error shape.
http::Response method_not_allowed(const http::ErrorRenderer& errors, std::string_view target, std::string_view allow);

}  // namespace common::app

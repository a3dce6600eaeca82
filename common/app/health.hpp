#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/db/migrate.hpp"
#include "common/http/server.hpp"

namespace common::db {
class Pool;
}

namespace common::app {

/// The last readiness check of a service, shared by its listeners: /readyz reads the database at most once per
/// `interval` however often it is asked (a probe meanwhile gets the previous answer). Thread-safe.
struct ReadinessCache {
    std::chrono::milliseconds interval{1000};
    std::mutex mutex;
    bool checked = false;   ///< a check has finished
    bool checking = false;  ///< a check is running
    std::string problem;    ///< the last check's reason for not being ready; empty: ready
    std::chrono::steady_clock::time_point at{};
    std::uint64_t reads = 0;  ///< database reads made for /readyz (tests)
};

/// What health and readiness need to know about a service.
struct HealthTarget {
    db::Pool& pool;
    std::string schema;
    const std::vector<db::MigrationFile>& migrations;
    http::ErrorRenderer errors;
    /// Shared by copies of the target (the public and the admin listener).
    std::shared_ptr<ReadinessCache> readiness = std::make_shared<ReadinessCache>();
    /// A 503 from /readyz says why (the admin listener); otherwise only "not ready", since the reason (a
    /// migration state, a database error's text) is nothing an anonymous client should read.
    bool details = false;
};

/// Answers `GET /healthz` (process alive) and `GET /readyz` (database reachable, migrations current, else 503,
/// from the target's ReadinessCache); nullopt for any other path.
boost::asio::awaitable<std::optional<http::Response>> health_routes(const http::Request& req, const HealthTarget& t);

/// A 405 with `Allow`, in the service's error shape.
http::Response method_not_allowed(const http::ErrorRenderer& errors, std::string_view target, std::string_view allow);

}  // namespace common::app

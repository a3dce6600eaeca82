#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <string>
#include <vector>

#include "common/config/options.hpp"
#include "common/http/server.hpp"

namespace common::app {

/// Settings every HTTP service shares (listen address, limits, database, log format, threads).
struct ServiceConfig {
    config::HostPort listen;
    std::string database_url;
    http::Limits limits;
    std::size_t io_threads = 1;
    std::size_t db_workers = 4;
};

/// The options behind ServiceConfig; `prefix` is "ORDERHUB" or "ORDERPOS" for the environment names.
std::vector<config::OptionSpec> service_options(const std::string& prefix, const std::string& default_listen);

/// The database option alone (for CLI commands that only need the database).
config::OptionSpec database_option(const std::string& prefix);

/// Builds a ServiceConfig; throws cli::UserError with a one-line message for a missing or bad value.
ServiceConfig service_config(const config::ParsedArgs& args, const std::string& prefix);

/// The database URL option's value or a clear UserError naming the variable.
std::string require_database_url(const config::ParsedArgs& args, const std::string& prefix);

/// Applies --log-format / *_LOG_FORMAT.
void apply_log_format(const config::ParsedArgs& args);

/// Runs `ioc` on `threads` threads until SIGINT or SIGTERM; then stops `server` from accepting, runs `on_stop`,
/// lets requests in flight finish (up to `grace`) and returns 0.
int run_until_signal(boost::asio::io_context& ioc, http::Server& server, std::size_t threads,
                     std::function<void()> on_stop = {},
                     std::chrono::milliseconds grace = std::chrono::milliseconds(10'000));

}  // namespace common::app

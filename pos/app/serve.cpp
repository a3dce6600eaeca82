#include "pos/app/serve.hpp"

#include <array>
#include <boost/asio/io_context.hpp>

#include "common/app/service.hpp"
#include "common/db/pool.hpp"
#include "common/log/log.hpp"
#include "pos/http/metrics.hpp"
#include "pos/http/password_worker.hpp"
#include "pos/http/routes.hpp"
#include "pos/store/queries.hpp"

namespace pos::app {
namespace {

int serve(const common::config::ParsedArgs& args) {
    auto cfg = common::app::service_config(args, "ORDERPOS");
    const auto hash_threads = common::app::number_setting(args, "hash-threads", 1, 64);
    const auto pending_logins = common::app::number_setting(args, "max-pending-logins", 1, 100000);
    const auto token_lifetime = common::app::duration_setting(args, "token-lifetime", std::chrono::seconds(1),
                                                              std::chrono::seconds(30 * 24 * 3600));
    common::app::keep_freed_memory(common::config::process_env());  // before the threads that allocate start
    common::app::bound_thread_caches(common::config::process_env());
    // Log lines go through a bounded buffer written by a thread of its own: a reader of stderr that stalls never
    // stalls a request (docs/operations.md, "Logs"). Declared before everything that logs, so destroyed after it.
    common::log::BackgroundStderr background_log;
    // Declared after the io_context, so destroyed before it: finished database jobs and password checks can
    // still post their completions to it.
    boost::asio::io_context ioc(static_cast<int>(cfg.io_threads));
    common::db::Pool pool(
        {.url = cfg.database_url, .workers = cfg.db_workers, .on_connect = store::prepare_statements});
    pos::http::PasswordWorker passwords(hash_threads, pending_logins);
    pos::http::PosMetrics metrics;
    pos::http::Routes routes(pool, passwords, token_lifetime);
    routes.serve_metrics(&metrics);
    common::http::Server server(ioc, cfg.listen, cfg.limits, routes.handler(), pos::http::render_error,
                                metrics.access_log(), cfg.tls, cfg.io_threads);
    server.start();
    common::log::info("listening",
                      {{"service", "orderpos"}, {"address", cfg.listen.host + ":" + std::to_string(server.port())}});
    return common::app::run_until_signal(ioc, server, cfg.io_threads,
                                         {.on_reload = common::app::reload_tls_on_hup(server)});
}

// name, env after ORDERPOS_, placeholder, default, help: the flags of orderpos serve after the service's own.
constexpr std::array<common::config::OptionRow, 3> kPosServeOptions{{
    {"hash-threads", "HASH_THREADS", "N", "2", "threads that check login passwords (PBKDF2)"},
    {"max-pending-logins", "MAX_PENDING_LOGINS", "N", "32",
     "logins checked or waiting for a hash thread at once; more get 503 busy"},
    {"token-lifetime", "TOKEN_LIFETIME", "DURATION", "12h",
     "how long a token from /api/login is accepted (90s, 30m, 12h; at most 30 days)"},
}};

}  // namespace

common::cli::Command serve_command() {
    auto options = common::app::service_options("ORDERPOS", "127.0.0.1:9090");
    for (auto& spec : common::config::option_specs(kPosServeOptions, "ORDERPOS")) options.push_back(std::move(spec));
    return {{"serve"},
            "serve POST /api/login, POST /api/orders, /healthz and /readyz",
            "[--listen ADDR]",
            std::move(options),
            serve};
}

}  // namespace pos::app

#include "pos/app/serve.hpp"

#include <boost/asio/io_context.hpp>

#include "common/app/service.hpp"
#include "common/db/pool.hpp"
#include "common/log/log.hpp"
#include "pos/http/routes.hpp"

namespace pos::app {
namespace {

int serve(const common::config::ParsedArgs& args) {
    auto cfg = common::app::service_config(args, "ORDERPOS");
    common::db::Pool pool({.url = cfg.database_url, .workers = cfg.db_workers, .on_connect = {}});
    boost::asio::io_context ioc(static_cast<int>(cfg.io_threads));
    pos::http::Routes routes(pool);
    common::http::Server server(ioc, cfg.listen, cfg.limits, routes.handler(), pos::http::render_error,
                                pos::http::access_log);
    server.start();
    common::log::info("listening",
                      {{"service", "orderpos"}, {"address", cfg.listen.host + ":" + std::to_string(server.port())}});
    return common::app::run_until_signal(ioc, server, cfg.io_threads);
}

}  // namespace

common::cli::Command serve_command() {
    return {{"serve"}, "serve POST /api/login, POST /api/orders, /healthz and /readyz", "[--listen ADDR]",
            common::app::service_options("ORDERPOS", "127.0.0.1:9090"), serve};
}

}  // namespace pos::app

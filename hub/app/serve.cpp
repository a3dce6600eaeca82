#include "hub/app/serve.hpp"

#include <boost/asio/io_context.hpp>

#include "common/app/service.hpp"
#include "common/db/pool.hpp"
#include "common/log/log.hpp"
#include "hub/db/queries.hpp"
#include "hub/http/routes.hpp"
#include "hub/ingest/partners.hpp"
#include "hub/ingest/store.hpp"
#include "hub/ingest/webhook.hpp"

namespace hub::app {
namespace {

int serve(const common::config::ParsedArgs& args) {
    auto cfg = common::app::service_config(args, "ORDERHUB");
    const std::string role = args.get("role").value_or("all");
    if (role != "all" && role != "api" && role != "forwarder")
        throw common::cli::UsageError("--role must be all, api or forwarder");

    common::db::Pool pool({.url = cfg.database_url, .workers = cfg.db_workers, .on_connect = hub::db::prepare_serving});
    boost::asio::io_context ioc(static_cast<int>(cfg.io_threads));
    // Group commit: up to 256 requests per transaction, leaving one worker free for lookups and readiness.
    ingest::PartnerDirectory partners(pool, std::chrono::seconds(2));
    ingest::OrderStore store(pool, 256, cfg.db_workers > 1 ? cfg.db_workers - 1 : 1);
    ingest::WebhookHandler webhooks(partners, store);
    hub::http::Routes routes(pool, webhooks);
    common::http::Server server(ioc, cfg.listen, cfg.limits, routes.handler(), hub::http::render_error,
                                hub::http::access_log);
    server.start();
    common::log::info("listening", {{"service", "orderhub"},
                                    {"address", cfg.listen.host + ":" + std::to_string(server.port())},
                                    {"role", role}});
    return common::app::run_until_signal(ioc, server, cfg.io_threads);
}

}  // namespace

common::cli::Command serve_command() {
    auto options = common::app::service_options("ORDERHUB", "127.0.0.1:8080");
    options.push_back({.name = "role", .help = "all, api or forwarder", .placeholder = "ROLE", .default_value = "all"});
    options.push_back({.name = "public-url", .env = "ORDERHUB_PUBLIC_URL",
                       .help = "base of the webhook URLs (default http:// + listen address)", .placeholder = "URL"});
    return {{"serve"}, "run the webhook listener and the forwarder", "[--listen ADDR] [--role all|api|forwarder]",
            options, serve};
}

}  // namespace hub::app

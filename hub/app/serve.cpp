#include "hub/app/serve.hpp"

#include <boost/asio/io_context.hpp>

#include "common/app/service.hpp"
#include "common/db/migrate.hpp"
#include "common/db/pool.hpp"
#include "common/log/log.hpp"
#include "hub/adminapi/api.hpp"
#include "hub/app/serve_options.hpp"
#include "hub/dashboard/api.hpp"
#include "hub/dashboard/feed.hpp"
#include "hub/dashboard/queries.hpp"
#include "hub/db/queries.hpp"
#include "hub/forward/forwarder.hpp"
#include "hub/forward/secrets.hpp"
#include "hub/http/metrics_endpoint.hpp"
#include "hub/http/refusal_log.hpp"
#include "hub/http/routes.hpp"
#include "hub/http/transport_security.hpp"
#include "hub/ingest/partners.hpp"
#include "hub/ingest/store.hpp"
#include "hub/ingest/webhook.hpp"
#include "hub/ingest/webhook_ids.hpp"
#include "hub/metrics/hub_metrics.hpp"

namespace hub::app {
namespace {

/// The dashboard's options from the command line; `https`: the hub is reached over HTTPS.
dashboard::DashboardOptions dashboard_options(const common::config::ParsedArgs& args, bool https) {
    return {.secure_cookies = https,
            .pos_environment = args.get("pos-environment").value_or("production"),
            .session_check = common::app::duration_setting(args, "dashboard-session-check", std::chrono::seconds(1),
                                                           std::chrono::seconds(15))};
}

/// --admin-listen, when given; throws a UserError for a bad address.
std::optional<common::config::HostPort> admin_address(const common::config::ParsedArgs& args) {
    const auto text = args.get("admin-listen").value_or("");
    if (text.empty()) return std::nullopt;
    std::string error;
    auto address = common::config::parse_host_port(text, error);
    if (!address) throw common::cli::UserError("--admin-listen: " + error);
    return address;
}

int serve(const common::config::ParsedArgs& args) {
    auto cfg = common::app::service_config(args, "ORDERHUB");
    const std::string role = args.get("role").value_or("all");
    if (role != "all" && role != "api" && role != "forwarder")
        throw common::cli::UsageError("--role must be all, api or forwarder");
    const bool api = role != "forwarder";
    const bool forwarding = role != "api";
    const std::size_t batches = ingest_batches(args, cfg.db_workers);
    const auto gather = ingest_gather(args);
    const auto admin_listen = admin_address(args);
    common::app::keep_freed_memory(common::config::process_env());  // before the threads that allocate start
    common::app::bound_thread_caches(common::config::process_env());
    // Log lines go through a bounded buffer written by a thread of its own: a reader of stderr that stalls never
    // stalls a request (docs/operations.md, "Logs"). Declared before everything that logs, so destroyed after it.
    common::log::BackgroundStderr background_log;
    // Signing secrets (api) and POS credentials (forwarder) are sealed: a clear error now rather than refusals later.
    std::optional<common::crypto::SecretBox> box = forward::secret_box(args);
    forward::ForwarderOptions fopts;
    if (forwarding) fopts = forwarder_options(args, cfg.database_url);

    metrics::HubMetrics hub_metrics;
    boost::asio::io_context ioc(static_cast<int>(cfg.io_threads));
    const auto db_options = pool_options(args, cfg.database_url, cfg.db_workers, hub_metrics.pool_wait());
    common::db::Pool pool(db_options);
    // Group commit: up to 256 requests per statement, --ingest-batches (default 1) statements at once, leaving the
    // other workers free for lookups, readiness and the forwarder. One batch at a time gathers twice the orders
    // per statement of two (31 against 17 at 64 connections), and its fixed costs (plan, triggers, commit) fall
    // on twice as many: on 2 cores, PostgreSQL 0.72 x and the hub 0.88 x the CPU per order, 1.10 x the orders/s
    // (docs/performance.md, "One group commit at a time"). At low rates, where each statement would carry one
    // order, a webhook that finds the group commit idle waits --ingest-gather-ms (default 10) for company, while
    // such waits catch some (docs/performance.md, "Gathering at low rates").
    ingest::PartnerDirectory partners(pool, std::chrono::seconds(2), box);
    // One group commit at a time (the default) sends its next statement while the last one runs, on a connection of
    // its own in libpq's pipeline mode, once the load calls for it (docs/performance.md, "The next statement waiting
    // in the pipeline").
    std::optional<ingest::PipeSettings> pipe;
    if (api && batches == 1) pipe = ingest::PipeSettings{cfg.database_url, db_options.statement_timeout};
    ingest::OrderStore store(pool, 256, batches, gather, pipe);
    ingest::WebhookHandler webhooks(partners, store);
    ingest::WebhookIds webhook_ids(pool);
    webhooks.guard_replays(webhook_ids);
    webhooks.limit_rate(rate_flags(args, "rate-limit-per-second", "rate-limit-burst"));
    dashboard::EventFeed feed(ioc, pool);
    webhooks.service().on_stored([&feed] { feed.nudge(); });  // a board open on this process sees its orders at once
    // Reached over HTTPS (own TLS, or a proxy's: an https:// public URL): Secure cookies and HSTS.
    const bool https = cfg.tls.has_value() || hub::http::https_url(args.get("public-url").value_or(""));
    dashboard::Dashboard board(pool, feed, dashboard_options(args, https));
    hub::http::Routes routes(pool, api ? &webhooks : nullptr, api ? &board : nullptr);
    // The operator HTTP API (product.md section 9) with the listener of the webhooks and the dashboard.
    adminapi::AdminApi admin_api(pool, box ? &*box : nullptr, &webhooks.service(), public_base_url(args),
                                 rate_flags(args, "admin-api-per-second", "admin-api-burst"));
    if (api) routes.serve_admin_api(&admin_api);
    hub::http::MetricsEndpoint metrics_endpoint(pool, hub_metrics, common::db::migrations_hub());
    // /metrics names partners and a detailed /readyz names what is wrong: with an admin listener they are
    // served there only.
    std::unique_ptr<common::http::Server> admin;
    if (admin_listen)
        admin = std::make_unique<common::http::Server>(
            ioc, *admin_listen, cfg.limits, routes.admin_handler(metrics_endpoint), hub::http::render_error,
            hub::http::observed_access_log(hub_metrics), std::nullopt, cfg.io_threads);
    else
        routes.serve_metrics(&metrics_endpoint);
    metrics_endpoint.watch(webhooks.limiter());
    metrics_endpoint.watch(store);
    common::http::Handler handler = routes.handler();
    common::http::ErrorRenderer errors = hub::http::render_error;
    if (https) {
        handler = hub::http::with_hsts(std::move(handler));
        errors = hub::http::with_hsts(std::move(errors));
    }
    // Unknown-key refusals (a flood of random keys) are summed up in one access-log line a second.
    hub::http::UnknownKeyLog unknown_keys;
    common::http::Server server(ioc, cfg.listen, cfg.limits, std::move(handler), std::move(errors),
                                hub::http::observed_access_log(hub_metrics, &unknown_keys), cfg.tls, cfg.io_threads);
    metrics_endpoint.watch(server);
    if (admin) {
        admin->start();
        common::log::info("admin listening", {{"address", admin_listen->host + ":" + std::to_string(admin->port())}});
    }
    server.start();
    unknown_keys.start(ioc);
    if (api) feed.start();
    std::unique_ptr<forward::Forwarder> forwarder;
    if (forwarding) {
        fopts.metrics = &hub_metrics;
        forwarder = std::make_unique<forward::Forwarder>(ioc, pool, *box, fopts);
        forwarder->start();
    }
    common::log::info(
        "listening",
        {{"service", "orderhub"}, {"address", cfg.listen.host + ":" + std::to_string(server.port())}, {"role", role}});
    const int status = common::app::run_until_signal(ioc, server, cfg.io_threads,
                                                     {.on_stop =
                                                          [&] {
                                                              feed.stop();
                                                              if (admin) admin->stop();
                                                              if (forwarder) forwarder->stop();
                                                              unknown_keys.flush();
                                                          },
                                                      .busy = [&] { return forwarder && forwarder->busy(); },
                                                      .on_reload = common::app::reload_tls_on_hup(server)});
    unknown_keys.flush();  // refusals answered while the server drained
    return status;
}

}  // namespace

common::cli::Command serve_command() {
    auto options = common::app::service_options("ORDERHUB", "127.0.0.1:8080");
    for (auto& spec : serve_option_specs()) options.push_back(std::move(spec));
    options.push_back(forward::secret_key_option());
    return {{"serve"},
            "run the webhook listener and the forwarder",
            "[--listen ADDR] [--role all|api|forwarder]",
            options,
            serve};
}

}  // namespace hub::app

#include "hub/app/serve_options.hpp"

#include <array>

#include "common/app/service.hpp"
#include "common/cli/cli.hpp"
#include "hub/dashboard/queries.hpp"
#include "hub/db/queries.hpp"

namespace hub::app {

using common::app::number_setting;

ingest::RateLimit rate_flags(const common::config::ParsedArgs& args, const char* per_second, const char* burst) {
    return {static_cast<double>(number_setting(args, per_second, 1, 1'000'000)),
            static_cast<double>(number_setting(args, burst, 1, 1'000'000))};
}

std::string public_base_url(const common::config::ParsedArgs& args) {
    const std::string public_url = args.get("public-url").value_or("");
    return public_url.empty() ? "http://" + args.get("listen").value_or("127.0.0.1:8080") : public_url;
}

common::db::Pool::Options pool_options(const common::config::ParsedArgs& args, const std::string& database_url,
                                       std::size_t workers, common::metrics::Histogram& queue_wait) {
    return {
        .url = database_url,
        .workers = workers,
        .on_connect =
            [](pqxx::connection_base& c) {
                db::prepare_serving(c);
                dashboard::prepare_dashboard(c);
            },
        .queue_wait = &queue_wait,
        .statement_timeout = std::chrono::milliseconds(number_setting(args, "db-statement-timeout-ms", 100, 3'600'000)),
        .queue_timeout = std::chrono::milliseconds(number_setting(args, "db-queue-timeout-ms", 100, 600'000))};
}

namespace {

// name, env after ORDERHUB_, placeholder, default, help: the flags of orderhub serve after the service's own.
constexpr std::array<common::config::OptionRow, 22> kHubServeOptions{{
    {"admin-listen", "ADMIN_LISTEN", "ADDR", std::nullopt,
     "a separate plain-HTTP listener for /metrics and a detailed /readyz (keep it private); when set, the main "
     "listener no longer serves /metrics"},
    {"role", "", "ROLE", "all", "all, api (webhooks only) or forwarder (delivery to POS only)"},
    {"public-url", "PUBLIC_URL", "URL", std::nullopt,
     "base of the webhook URLs (default http:// + listen address); https:// makes the dashboard's cookie Secure and "
     "adds HSTS (TLS ended by a proxy)"},
    {"dashboard-session-check", "DASHBOARD_SESSION_CHECK", "DURATION", "15s",
     "how often an open dashboard event stream checks its session and scope again, however busy (1s to 15s)"},
    {"pos-environment", "POS_ENVIRONMENT", "ENV", "production",
     "which POS connections (`pos set --environment`) this hub delivers to"},
    {"rate-limit-per-second", "RATE_LIMIT_PER_SECOND", "N", "1000",
     "webhook requests per second per partner (default for `partner limit`)"},
    {"rate-limit-burst", "RATE_LIMIT_BURST", "N", "2000", "requests a partner may send at once above the rate"},
    {"admin-api-per-second", "ADMIN_API_PER_SECOND", "N", "20",
     "requests per second an admin token may make (operator HTTP API)"},
    {"admin-api-burst", "ADMIN_API_BURST", "N", "40", "requests an admin token may make at once above the rate"},
    {"forward-concurrency", "FORWARD_CONCURRENCY", "N", "512", "deliveries to POS systems at once, all hosts together"},
    {"forward-per-host", "FORWARD_PER_HOST", "N", "64",
     "deliveries at once to one POS host (scheme, host, port) at most, its bulkhead; halved while it answers 429 or "
     "503 or times out, then raised again"},
    {"forward-timeout-ms", "FORWARD_TIMEOUT_MS", "MS", "15000", "how long to wait for a POS answer"},
    {"forward-connect-timeout-ms", "FORWARD_CONNECT_TIMEOUT_MS", "MS", "5000",
     "how long to wait for a POS connection (name resolution and TCP connect)"},
    {"forward-breaker-failures", "FORWARD_BREAKER_FAILURES", "N", "5",
     "consecutive failures (refused, time-out, 502, 503, 504) that open a POS host's circuit breaker: nothing more "
     "is sent there but one probe at a time"},
    {"forward-breaker-probe-ms", "FORWARD_BREAKER_PROBE_MS", "MS", "5000",
     "from a breaker's opening to its first probe delivery; doubles after each failed probe"},
    {"forward-breaker-probe-max-ms", "FORWARD_BREAKER_PROBE_MAX_MS", "MS", "60000",
     "the longest wait between two probes of an open breaker"},
    {"forward-give-up-after", "FORWARD_GIVE_UP_AFTER", "DURATION", "30m",
     "a job still undelivered this long after it was due becomes dead, breaker or not (90s, 30m, 2h)"},
    {"forward-lease-seconds", "FORWARD_LEASE_SECONDS", "S", "120",
     "how long a claimed job stays with this forwarder; a forwarder that dies loses its jobs after this (keep it "
     "above the POS time-outs)"},
    {"db-statement-timeout-ms", "DB_STATEMENT_TIMEOUT_MS", "MS", "30000",
     "PostgreSQL statement_timeout of the service's connections: a longer statement is cancelled and its request "
     "answered 503"},
    {"db-queue-timeout-ms", "DB_QUEUE_TIMEOUT_MS", "MS", "10000",
     "how long a request may wait for a database worker before it is answered 503"},
    {"ingest-batches", "INGEST_BATCHES", "N", "1",
     "group commits of webhooks at once, each on a database worker of its own (below --db-workers, or 1); raise it "
     "only when PostgreSQL has cores to spare"},
    {"ingest-gather-ms", "INGEST_GATHER_MS", "MS", "10",
     "at light load, how long a webhook that would go alone into a group commit waits for others to share its "
     "statement (0 to 100), while such waits catch company: less PostgreSQL CPU per order at low rates, that much more "
     "latency"},
}};

}  // namespace

std::vector<common::config::OptionSpec> serve_option_specs() {
    return common::config::option_specs(kHubServeOptions, "ORDERHUB");
}

std::size_t ingest_batches(const common::config::ParsedArgs& args, std::size_t db_workers) {
    const auto n = static_cast<std::size_t>(number_setting(args, "ingest-batches", 1, 256));
    if (n > 1 && n >= db_workers)
        throw common::cli::UserError("--ingest-batches (" + std::to_string(n) + ") must be below --db-workers (" +
                                     std::to_string(db_workers) +
                                     "): each group commit holds a database worker, and one stays free for lookups");
    return n;
}

std::chrono::milliseconds ingest_gather(const common::config::ParsedArgs& args) {
    return std::chrono::milliseconds(number_setting(args, "ingest-gather-ms", 0, 100));
}

forward::ForwarderOptions forwarder_options(const common::config::ParsedArgs& args, const std::string& database_url) {
    forward::ForwarderOptions fopts;
    fopts.id = forward::new_forwarder_id();
    fopts.environment = args.get("pos-environment").value_or("production");
    fopts.database_url = database_url;
    fopts.max_in_flight = number_setting(args, "forward-concurrency", 1, 10'000);
    fopts.per_host = number_setting(args, "forward-per-host", 1, 1'000);
    fopts.client.max_connections_per_host = fopts.per_host;
    fopts.client.read_timeout = std::chrono::milliseconds(number_setting(args, "forward-timeout-ms", 100, 120'000));
    fopts.client.connect_timeout =
        std::chrono::milliseconds(number_setting(args, "forward-connect-timeout-ms", 100, 60'000));
    // The forwarder never waits long for a host's slot: it claims only what the host has room for.
    fopts.client.queue_timeout = std::chrono::milliseconds(1000);
    fopts.lease = std::chrono::seconds(number_setting(args, "forward-lease-seconds", 5, 3600));
    const auto longest = std::chrono::ceil<std::chrono::seconds>(forward::longest_exchange(fopts.client));
    if (fopts.lease <= longest)
        throw common::cli::UserError("--forward-lease-seconds must be above " + std::to_string(longest.count()) +
                                     ", the longest one POS exchange can take with these time-outs (a job is "
                                     "never sent on a lease that could end during the exchange)");
    fopts.breaker.failures_to_open = static_cast<int>(number_setting(args, "forward-breaker-failures", 1, 1'000));
    fopts.breaker.first_probe =
        std::chrono::milliseconds(number_setting(args, "forward-breaker-probe-ms", 100, 3'600'000));
    fopts.breaker.max_probe =
        std::chrono::milliseconds(number_setting(args, "forward-breaker-probe-max-ms", 100, 3'600'000));
    if (fopts.breaker.max_probe < fopts.breaker.first_probe)
        throw common::cli::UserError("--forward-breaker-probe-max-ms must not be below --forward-breaker-probe-ms");
    fopts.give_up = common::app::duration_setting(args, "forward-give-up-after", std::chrono::seconds(1),
                                                  std::chrono::hours(24 * 30));
    return fopts;
}

}  // namespace hub::app

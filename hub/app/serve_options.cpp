#include "hub/app/serve_options.hpp"

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

std::vector<common::config::OptionSpec> forward_option_specs() {
    std::vector<common::config::OptionSpec> specs;
    specs.push_back({.name = "forward-concurrency",
                     .env = "ORDERHUB_FORWARD_CONCURRENCY",
                     .help = "deliveries to POS systems at once, all hosts together",
                     .placeholder = "N",
                     .default_value = "512"});
    specs.push_back({.name = "forward-per-host",
                     .env = "ORDERHUB_FORWARD_PER_HOST",
                     .help = "deliveries at once to one POS host (scheme, host, port) at most, its bulkhead; "
                             "halved while it answers 429 or 503 or times out, then raised again",
                     .placeholder = "N",
                     .default_value = "64"});
    specs.push_back({.name = "forward-timeout-ms",
                     .env = "ORDERHUB_FORWARD_TIMEOUT_MS",
                     .help = "how long to wait for a POS answer",
                     .placeholder = "MS",
                     .default_value = "15000"});
    specs.push_back({.name = "forward-connect-timeout-ms",
                     .env = "ORDERHUB_FORWARD_CONNECT_TIMEOUT_MS",
                     .help = "how long to wait for a POS connection (name resolution and TCP connect)",
                     .placeholder = "MS",
                     .default_value = "5000"});
    specs.push_back({.name = "forward-breaker-failures",
                     .env = "ORDERHUB_FORWARD_BREAKER_FAILURES",
                     .help = "consecutive failures (refused, time-out, 502, 503, 504) that open a POS host's "
                             "circuit breaker: nothing more is sent there but one probe at a time",
                     .placeholder = "N",
                     .default_value = "5"});
    specs.push_back({.name = "forward-breaker-probe-ms",
                     .env = "ORDERHUB_FORWARD_BREAKER_PROBE_MS",
                     .help = "from a breaker's opening to its first probe delivery; doubles after each failed probe",
                     .placeholder = "MS",
                     .default_value = "5000"});
    specs.push_back({.name = "forward-breaker-probe-max-ms",
                     .env = "ORDERHUB_FORWARD_BREAKER_PROBE_MAX_MS",
                     .help = "the longest wait between two probes of an open breaker",
                     .placeholder = "MS",
                     .default_value = "60000"});
    specs.push_back({.name = "forward-give-up-after",
                     .env = "ORDERHUB_FORWARD_GIVE_UP_AFTER",
                     .help = "a job still undelivered this long after it was due becomes dead, breaker or not "
                             "(90s, 30m, 2h)",
                     .placeholder = "DURATION",
                     .default_value = "30m"});
    specs.push_back({.name = "forward-lease-seconds",
                     .env = "ORDERHUB_FORWARD_LEASE_SECONDS",
                     .help = "how long a claimed job stays with this forwarder; a forwarder that dies loses its "
                             "jobs after this (keep it above the POS time-outs)",
                     .placeholder = "S",
                     .default_value = "120"});
    return specs;
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

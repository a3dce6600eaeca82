#pragma once

// The `serve` flags of the forwarder and of numbers in general, apart from the listener's wiring (serve.cpp).

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "common/config/options.hpp"
#include "common/db/pool.hpp"
#include "hub/forward/forwarder.hpp"
#include "hub/ingest/rate_limit.hpp"

namespace hub::app {

/// A rate from a per-second flag and a burst flag (each 1 to 1,000,000).
ingest::RateLimit rate_flags(const common::config::ParsedArgs& args, const char* per_second, const char* burst);

/// The base of the URLs the hub hands out: --public-url, else http:// and the listen address.
std::string public_base_url(const common::config::ParsedArgs& args);

/// The hub's database pool: `workers` connections prepared for serving (the ingest and dashboard statements), with
/// the statement and queue time-outs of --db-statement-timeout-ms and --db-queue-timeout-ms; `queue_wait` observes
/// each job's wait for a worker.
common::db::Pool::Options pool_options(const common::config::ParsedArgs& args, const std::string& database_url,
                                       std::size_t workers, common::metrics::Histogram& queue_wait);

/// --ingest-batches: how many webhook group commits may run at once. Throws a UserError unless it leaves a worker
/// of the `db_workers` free (1 is always allowed).
std::size_t ingest_batches(const common::config::ParsedArgs& args, std::size_t db_workers);

/// --ingest-gather-ms: at light load, how long a webhook that would go alone into a group commit waits for company
/// (0 to 100 ms).
std::chrono::milliseconds ingest_gather(const common::config::ParsedArgs& args);

/// The flags of `serve` after the service's own: listeners, role, dashboard, rate limits, the forwarder's
/// (concurrency, bulkhead, time-outs, breaker, give-up time, lease) and the database time-outs.
std::vector<common::config::OptionSpec> serve_option_specs();

/// The forwarder's settings from those flags; a UserError for a value out of range or a lease shorter than one
/// POS exchange can take. `database_url` is for its LISTEN connection.
forward::ForwarderOptions forwarder_options(const common::config::ParsedArgs& args, const std::string& database_url);

}  // namespace hub::app

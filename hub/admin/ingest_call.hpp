#pragma once

// The CLI's way onto the webhook path (`events replay`, `order create`): one call of the ingest service, run to its
// end on a private io_context with a one-connection pool of ORDERHUB_DATABASE_URL.

#include <boost/asio/awaitable.hpp>
#include <functional>

#include "common/config/options.hpp"
#include "hub/ingest/service.hpp"

namespace hub::admin {

/// Runs `call(service)` and returns its result (or throws what it threw).
ingest::IngestResult run_ingest(
    const common::config::ParsedArgs& args,
    const std::function<boost::asio::awaitable<ingest::IngestResult>(ingest::IngestService&)>& call);

}  // namespace hub::admin

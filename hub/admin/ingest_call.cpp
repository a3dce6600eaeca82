#include "hub/admin/ingest_call.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include "common/app/service.hpp"
#include "common/db/pool.hpp"
#include "hub/db/queries.hpp"
#include "hub/ingest/partners.hpp"
#include "hub/ingest/store.hpp"

namespace hub::admin {

ingest::IngestResult run_ingest(
    const common::config::ParsedArgs& args,
    const std::function<boost::asio::awaitable<ingest::IngestResult>(ingest::IngestService&)>& call) {
    boost::asio::io_context ioc;
    common::db::Pool pool(
        {.url = common::app::require_database_url(args, "ORDERHUB"), .workers = 1, .on_connect = db::prepare_all});
    ingest::OrderStore store(pool, 1, 1);
    ingest::PartnerDirectory partners(pool, std::chrono::seconds(0));
    ingest::IngestService service(partners, store);
    auto future = boost::asio::co_spawn(ioc, call(service), boost::asio::use_future);
    ioc.run();
    return future.get();
}

}  // namespace hub::admin

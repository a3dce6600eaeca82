#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json.hpp>
#include <iostream>
#include <pqxx/pqxx>

#include "common/app/service.hpp"
#include "common/db/pool.hpp"
#include "common/http/request_id.hpp"
#include "hub/admin/admin.hpp"
#include "hub/db/queries.hpp"
#include "hub/ingest/service.hpp"
#include "hub/ingest/store.hpp"

namespace hub::admin {
namespace {

using common::cli::UserError;
using common::config::ParsedArgs;

boost::json::value nullable(const pqxx::field& f) {
    return f.is_null() ? boost::json::value(nullptr) : boost::json::value(f.c_str());
}

int list(const ParsedArgs& args) {
    std::string error;
    auto limit = common::config::parse_uint(args.get("limit").value_or("100"), 1, 100000, "--limit", error);
    if (!limit) throw common::cli::UsageError(error);
    auto conn = connect(args);
    pqxx::read_transaction tx(*conn);
    boost::json::array rows;
    for (const auto& r :
         tx.exec_params("SELECT i.id, " + iso_utc("i.received_at") +
                            ", p.label, i.event, i.external_id, i.order_id, i.http_status, i.outcome, i.error_code, "
                            "i.replay_of, i.request_id FROM hub.inbox i JOIN hub.partners p ON p.id = i.partner_id "
                            "WHERE NOT $1 OR i.http_status NOT BETWEEN 200 AND 299 ORDER BY i.id DESC LIMIT $2",
                        args.has("failed"), static_cast<long long>(*limit))) {
        rows.push_back({{"id", r[0].as<long long>()},
                        {"received_at", r[1].c_str()},
                        {"partner", r[2].c_str()},
                        {"event", nullable(r[3])},
                        {"external_id", nullable(r[4])},
                        {"order_id", nullable(r[5])},
                        {"http_status", r[6].as<int>()},
                        {"outcome", r[7].c_str()},
                        {"error_code", nullable(r[8])},
                        {"replay_of", r[9].is_null() ? boost::json::value(nullptr) : r[9].as<long long>()},
                        {"request_id", r[10].c_str()}});
    }
    print_rows(
        args, rows,
        {"id", "received_at", "partner", "event", "external_id", "http_status", "outcome", "error_code", "replay_of"});
    return 0;
}

int replay(const ParsedArgs& args) {
    const std::string id = one_positional(args, "event id");
    if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos || id.size() > 18)
        throw common::cli::UsageError("an event id is a number (see `orderhub events list`)");
    ingest::Partner partner;
    std::string body;
    std::string headers;
    {
        auto conn = connect(args);
        pqxx::read_transaction tx(*conn);
        auto rows = tx.exec_params(
            "SELECT i.body, i.headers::text, p.id, p.label, p.time_zone, p.signing, p.disabled_at IS NOT NULL, "
            "coalesce(i.error_code, '') LIKE 'signature\\_%' "
            "FROM hub.inbox i JOIN hub.partners p ON p.id = i.partner_id WHERE i.id = $1::bigint",
            id);
        if (rows.empty()) throw UserError("no event with id " + id);
        if (rows[0][6].as<bool>()) throw UserError("the event's partner is disabled");
        // Its sender was never authenticated: replaying it would store whatever anyone sent to the URL.
        if (rows[0][7].as<bool>())
            throw UserError(
                "the event was refused for its signature; it cannot be replayed (ask the platform to "
                "send it again, signed)");
        pqxx::binarystring raw(rows[0][0]);
        body = raw.str();
        headers = rows[0][1].as<std::string>();
        partner.id = rows[0][2].as<std::string>();
        partner.label = rows[0][3].as<std::string>();
        partner.time_zone = rows[0][4].as<std::string>();
        partner.signing = rows[0][5].as<bool>();
    }
    // Today's validator, configuration and storage path, exactly as a new request would take it.
    boost::asio::io_context ioc;
    common::db::Pool pool(
        {.url = common::app::require_database_url(args, "ORDERHUB"), .workers = 1, .on_connect = db::prepare_all});
    ingest::OrderStore store(pool, 1, 1);
    ingest::PartnerDirectory partners(pool, std::chrono::seconds(0));
    ingest::IngestService service(partners, store);
    auto future = boost::asio::co_spawn(
        ioc, service.process(partner, body, "replay-" + common::http::new_request_id(), headers, id),
        boost::asio::use_future);
    ioc.run();
    const ingest::IngestResult result = future.get();
    const unsigned status = result.row().http_status;
    print_object(args,
                 {{"event_id", std::stoll(id)}, {"http_status", status}, {"response", ingest::answer_body(result)}});
    return status >= 200 && status < 300 ? 0 : 1;
}

}  // namespace

std::vector<common::cli::Command> event_commands() {
    return {
        {{"events", "list"},
         "the inbox of received webhook requests, newest first",
         "[--failed]",
         db_options({{.name = "failed", .help = "only requests that were not answered 2xx"},
                     {.name = "limit", .help = "at most this many", .placeholder = "N", .default_value = "100"}}),
         list},
        {{"events", "replay"},
         "re-run a stored request through today's validator and configuration (exit 1 unless it now succeeds)",
         "EVENT_ID",
         db_options(),
         replay},
    };
}

}  // namespace hub::admin

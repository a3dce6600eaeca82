#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json.hpp>
#include <iostream>
#include <pqxx/pqxx>

#include "common/app/service.hpp"
#include "common/crypto/encoding.hpp"
#include "common/db/pool.hpp"
#include "common/http/request_id.hpp"
#include "common/text/terminal.hpp"
#include "hub/admin/admin.hpp"
#include "hub/admin/inbox_rules.hpp"
#include "hub/admin/ingest_call.hpp"
#include "hub/db/queries.hpp"
#include "hub/ingest/service.hpp"
#include "hub/ingest/store.hpp"

namespace hub::admin {
namespace {

using common::cli::UserError;
using common::config::ParsedArgs;

int event_list(const ParsedArgs& args) {
    const InboxFilter filter{
        .failed = args.has("failed"), .external_id = args.get("external-id").value_or(""), .limit = list_limit(args)};
    return print_listing(args,
                         {"id", "received_at", "partner", "event", "external_id", "branch_id", "http_status", "outcome",
                          "error_code", "replay_of"},
                         [&](pqxx::transaction_base& tx) { return list_events(tx, filter); });
}

/// Text: the entry's fields, its headers one a line, then its body as sent (line breaks kept, every other control
/// character escaped: common/text/terminal.hpp).
int event_show(const ParsedArgs& args) {
    const std::string id = one_positional(args, "event id");
    auto conn = connect(args);
    pqxx::read_transaction tx(*conn);
    boost::json::object entry = show_event(tx, id);
    if (args.has("json")) {
        print_object(args, entry);
        return 0;
    }
    const boost::json::value headers = entry["headers"];
    const std::string body(entry["body"].as_string());
    const bool base64 = entry["body_encoding"].as_string() == "base64";
    for (const char* k : {"headers", "body", "body_encoding"}) entry.erase(k);
    print_object(args, entry);
    std::cout << "headers:\n";
    if (const auto* h = headers.if_object())
        for (const auto& [name, value] : *h)
            std::cout << "  " << common::text::terminal_safe(name) << ": "
                      << (value.is_string() ? common::text::terminal_safe(value.get_string())
                                            : common::text::terminal_safe_json(boost::json::serialize(value)))
                      << "\n";
    std::cout << "body:\n"
              << common::text::terminal_safe(base64 ? *common::crypto::base64_decode(body) : body,
                                             common::text::LineBreaks::keep)
              << "\n";
    return 0;
}

int replay(const ParsedArgs& args) {
    const std::string id = one_positional(args, "event id");
    ReplaySource src;
    {
        auto conn = connect(args);
        pqxx::read_transaction tx(*conn);
        src = replay_source(tx, id);
    }
    ingest::Partner& partner = src.partner;
    std::string& body = src.body;
    std::string& headers = src.headers;
    // Today's validator, configuration and storage path, exactly as a new request would take it.
    const ingest::IngestResult result = run_ingest(args, [&](ingest::IngestService& service) {
        return service.process(partner, body, "replay-" + common::http::new_request_id(), headers, id);
    });
    const unsigned status = result.row().http_status;
    print_object(args,
                 {{"event_id", std::stoll(id)}, {"http_status", status}, {"response", ingest::answer_body(result)}});
    return status >= 200 && status < 300 ? 0 : 1;
}

}  // namespace

std::vector<common::cli::Command> event_commands() {
    return {
        db_command({"events", "list"}, "the inbox of received webhook requests, newest first",
                   "[--failed] [--external-id X]", event_list,
                   {{.name = "failed", .help = "only requests that were not answered 2xx"},
                    {.name = "external-id",
                     .help = "only requests naming this platform order id (refused ones too)",
                     .placeholder = "X"},
                    limit_option()}),
        db_command({"events", "show"},
                   "one inbox entry with its headers and raw body (--json: the body as text, or base64 when not UTF-8)",
                   "EVENT_ID", event_show),
        db_command({"events", "replay"},
                   "re-run a stored request through today's validator and configuration (exit 1 unless it now "
                   "succeeds)",
                   "EVENT_ID", replay),
    };
}

}  // namespace hub::admin

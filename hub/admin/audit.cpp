#include <boost/json.hpp>
#include <pqxx/pqxx>

#include "hub/admin/admin.hpp"
#include "hub/admin/audit_time.hpp"
#include "hub/admin/order_rules.hpp"
#include "hub/ingest/timestamp.hpp"

namespace hub::admin {

std::optional<std::string> rfc3339_to_sql(std::string_view text) {
    auto t = ingest::parse_timestamp(text);
    if (!t || !t->offset_minutes) return std::nullopt;
    return t->to_sql();
}

namespace {

using common::cli::UsageError;
using common::cli::UserError;
using common::config::ParsedArgs;

const std::string kColumns = "l.id, l.order_id, o.external_id, l.status, l.source, " + iso_utc("l.event_time") + ", " +
                             iso_utc("l.received_at") + ", l.applied, l.actor, l.detail, l.branch_id, l.partner_id";

boost::json::object row_json(const pqxx::row& r) {
    return {{"id", r[0].as<long long>()},  {"order_id", r[1].c_str()},   {"external_id", r[2].c_str()},
            {"status", r[3].c_str()},      {"source", r[4].c_str()},     {"event_time", r[5].c_str()},
            {"received_at", r[6].c_str()}, {"applied", r[7].as<bool>()}, {"actor", nullable(r[8])},
            {"detail", nullable(r[9])},    {"branch_id", r[10].c_str()}, {"partner_id", r[11].c_str()}};
}

std::string time_option(const ParsedArgs& args, const std::string& name) {
    const std::string text = required(args, name);
    auto sql = rfc3339_to_sql(text);
    if (!sql)
        throw UsageError("--" + name + " must be an RFC 3339 time with an offset, e.g. 2026-11-22T08:00:00Z (got '" +
                         text.substr(0, 64) + "')");
    return *sql;
}

int one_order(const ParsedArgs& args, const std::string& given) {
    return print_listing(args, {"id", "status", "source", "event_time", "received_at", "applied", "actor", "detail"},
                         [&](pqxx::transaction_base& tx) { return order_audit(tx, resolve_order_id(tx, given)); });
}

int branch_range(const ParsedArgs& args) {
    const std::string branch = required(args, "branch");
    const std::string since = time_option(args, "since");
    const std::string until = time_option(args, "until");
    const std::uint64_t limit = number_option(args, "limit", 1, 1'000'000, "10000");
    auto conn = connect(args);
    pqxx::read_transaction tx(*conn);
    if (tx.exec_params1("SELECT $1::timestamptz < $2::timestamptz", since, until)[0].as<bool>() == false)
        throw UsageError("--since must be before --until");
    if (tx.exec_params("SELECT 1 FROM hub.orders WHERE branch_id = $1 LIMIT 1", branch).empty())
        throw UserError("no orders for branch '" + branch + "'");
    boost::json::array rows;
    for (const auto& r : tx.exec_params("SELECT " + kColumns +
                                            " FROM hub.order_status_log l JOIN hub.orders o ON o.id = l.order_id "
                                            "WHERE l.branch_id = $1 AND l.event_time >= $2::timestamptz "
                                            "AND l.event_time < $3::timestamptz ORDER BY l.event_time, l.id LIMIT $4",
                                        branch, since, until, static_cast<long long>(limit)))
        rows.push_back(row_json(r));
    print_rows(args, rows,
               {"event_time", "order_id", "external_id", "status", "source", "applied", "received_at", "detail"});
    return 0;
}

int audit(const ParsedArgs& args) {
    const bool range = args.has("branch") || args.has("since") || args.has("until");
    if (range) {
        if (!args.positional.empty()) throw UsageError("give either ORDER_ID or --branch/--since/--until, not both");
        return branch_range(args);
    }
    return one_order(args, one_positional(args, "order id (or --branch B --since T --until T)"));
}

}  // namespace

boost::json::array order_audit(pqxx::transaction_base& tx, const std::string& id) {
    boost::json::array rows;
    for (const auto& r : tx.exec_params("SELECT " + kColumns +
                                            " FROM hub.order_status_log l JOIN hub.orders o ON o.id = l.order_id "
                                            "WHERE l.order_id = $1 ORDER BY l.event_time, l.id",
                                        id))
        rows.push_back(row_json(r));
    return rows;
}

std::vector<common::cli::Command> audit_commands() {
    return {
        db_command({"audit"},
                   "an order's status log, oldest first (by hub or platform order id); or a branch's between two times",
                   "ORDER_ID | --branch B --since T --until T", audit,
                   {{.name = "branch", .help = "the branch whose status log to show", .placeholder = "B"},
                    {.name = "since",
                     .help = "from this event time, inclusive (RFC 3339, e.g. 2026-11-22T08:00:00Z)",
                     .placeholder = "T"},
                    {.name = "until", .help = "to this event time, exclusive (RFC 3339)", .placeholder = "T"},
                    {.name = "limit",
                     .help = "at most this many rows (range only)",
                     .placeholder = "N",
                     .default_value = "10000"}}),
    };
}

}  // namespace hub::admin

#include <boost/json.hpp>
#include <pqxx/pqxx>

#include "hub/admin/admin.hpp"

namespace hub::admin {
namespace {

using common::config::ParsedArgs;

/// A partitioned log table: monthly partitions named <table>_yYYYYmMM, a default partition for the rest.
struct LogTable {
    const char* table;
    const char* column;
    const char* retention_option;  ///< days its months are kept (0: for ever), default 90
    const char* retention_env;
    const char* content;  ///< what its rows are, for --help
};

constexpr LogTable kTables[] = {
    {"inbox", "received_at", "inbox-retention-days", "ORDERHUB_INBOX_RETENTION_DAYS", "inbox"},
    {"pos_delivery_attempts", "attempted_at", "attempts-retention-days", "ORDERHUB_ATTEMPTS_RETENTION_DAYS",
     "delivery-attempt"},
};

/// Creates the partition of the month starting `months` from this one (UTC), moving rows the default
/// partition holds for that month into it first; returns its name when it was created.
std::optional<std::string> create_month(pqxx::work& tx, const LogTable& t, int months) {
    auto r = tx.exec_params1(
        "SELECT to_char(m, '\"y\"YYYY\"m\"MM'), (m AT TIME ZONE 'UTC')::text, "
        "((m + interval '1 month') AT TIME ZONE 'UTC')::text "
        "FROM (SELECT date_trunc('month', now() AT TIME ZONE 'UTC') + make_interval(months => $1) AS m) x",
        months);
    const std::string name = std::string(t.table) + "_" + r[0].as<std::string>();
    const auto from = r[1].as<std::string>();
    const auto to = r[2].as<std::string>();
    if (tx.exec_params1("SELECT to_regclass($1) IS NOT NULL", "hub." + name)[0].as<bool>()) return std::nullopt;
    const std::string parent = "hub." + std::string(t.table);
    const std::string part = "hub." + tx.quote_name(name);
    tx.exec("CREATE TABLE " + part + " (LIKE " + parent + " INCLUDING DEFAULTS INCLUDING CONSTRAINTS)");
    // Rows that arrived before this partition existed sit in the default partition: move them (once).
    tx.exec("WITH moved AS (DELETE FROM hub." + std::string(t.table) + "_default WHERE " + t.column +
            " >= " + tx.quote(from) + " AND " + t.column + " < " + tx.quote(to) + " RETURNING *) INSERT INTO " + part +
            " SELECT * FROM moved");
    tx.exec("ALTER TABLE " + parent + " ATTACH PARTITION " + part + " FOR VALUES FROM (" + tx.quote(from) + ") TO (" +
            tx.quote(to) + ")");
    return name;
}

/// Drops monthly partitions that end before now - `days`; returns their names.
std::vector<std::string> drop_old(pqxx::work& tx, const LogTable& t, long long days) {
    std::vector<std::string> dropped;
    auto rows = tx.exec_params(
        "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
        "JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE i.inhparent = $1::regclass AND c.relname ~ ('^' || $2 || '_y[0-9]{4}m[0-9]{2}$') "
        "AND (to_timestamp(substring(c.relname from '[0-9]{4}m[0-9]{2}$'), 'YYYY\"m\"MM') AT TIME ZONE 'UTC' "
        "     + interval '1 month') <= now() - make_interval(days => $3::int) ORDER BY 1",
        "hub." + std::string(t.table), std::string(t.table), static_cast<int>(days));
    for (const auto& r : rows) {
        const auto name = r[0].as<std::string>();
        tx.exec("ALTER TABLE hub." + std::string(t.table) + " DETACH PARTITION hub." + tx.quote_name(name));
        tx.exec("DROP TABLE hub." + tx.quote_name(name));
        dropped.push_back(name);
    }
    return dropped;
}

int maintain(const ParsedArgs& args) {
    const std::uint64_t ahead = number_option(args, "months-ahead", 0, 24, "2");
    auto conn = connect(args);
    boost::json::object out;
    for (const auto& t : kTables) {
        // "0" keeps everything forever.
        const std::uint64_t days = number_option(args, t.retention_option, 0, 100'000, "90");
        pqxx::work tx(*conn);
        boost::json::array created, dropped;
        for (int m = 0; m <= static_cast<int>(ahead); ++m)
            if (auto name = create_month(tx, t, m)) created.emplace_back(*name);
        if (days > 0)
            for (const auto& name : drop_old(tx, t, static_cast<long long>(days))) dropped.emplace_back(name);
        tx.commit();
        out[t.table] = {{"created", created}, {"dropped", dropped}};
    }
    print_object(args, out);
    return 0;
}

}  // namespace

std::vector<common::cli::Command> maintain_commands() {
    std::vector<common::config::OptionSpec> options;
    for (const auto& t : kTables)
        options.push_back({.name = t.retention_option,
                           .env = t.retention_env,
                           .help = std::string("drop ") + t.content + " months older than this (0: keep)",
                           .placeholder = "N",
                           .default_value = "90"});
    options.push_back({.name = "months-ahead",
                       .help = "partitions to create beyond this month",
                       .placeholder = "N",
                       .default_value = "2"});
    return {db_command({"maintain"},
                       "create the coming monthly partitions of the inbox and the attempt log; drop those past "
                       "retention (the status log and orders are kept forever)",
                       "[--inbox-retention-days N] [--attempts-retention-days N] [--months-ahead N]", maintain,
                       std::move(options))};
}

}  // namespace hub::admin

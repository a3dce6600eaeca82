#include <algorithm>
#include <array>
#include <iostream>
#include <string>
#include <vector>

#include "pos/app/admin.hpp"
#include "pos/app/database.hpp"
#include "pos/store/orders.hpp"

namespace pos::app {
namespace {

using Row = std::array<std::string, 8>;

void print_table(const std::vector<Row>& rows) {
    std::array<std::size_t, 8> width{};
    for (const Row& row : rows) {
        for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
    }
    for (const Row& row : rows) {
        std::string line;
        for (std::size_t i = 0; i < row.size(); ++i) {
            line += row[i];
            if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 2, ' ');
        }
        std::cout << line << "\n";
    }
}

int list(const common::config::ParsedArgs& args) {
    std::string error;
    const auto limit = common::config::parse_uint(args.get("limit").value_or(""), 1, 10'000, "--limit", error);
    if (!limit) throw common::cli::UsageError(error);
    const auto orders = with_database(args, [&](pqxx::connection& c) { return store::list_orders(c, *limit); });
    if (args.has("json")) {
        // The orders' JSON is spliced in as PostgreSQL wrote it, so that money keeps its three decimals.
        std::string out = "{\"orders\":[";
        for (std::size_t i = 0; i < orders.size(); ++i) out += (i == 0 ? "" : ",") + orders[i].json;
        std::cout << out << "]}\n";
        return 0;
    }
    if (orders.empty()) {
        std::cout << "no orders\n";
        return 0;
    }
    std::vector<Row> rows{{"CREATED", "ID", "BRAND", "BRANCH", "PARTNER_REFERENCE", "STATUS", "TOTAL", "LINES"}};
    for (const auto& o : orders) {
        rows.push_back({o.created_at, o.id, o.brand_id, o.branch_id, o.partner_reference, o.status, o.total,
                        std::to_string(o.lines)});
    }
    print_table(rows);
    return 0;
}

}  // namespace

common::cli::Command orders_list_command() {
    return {{"orders", "list"},
            "list the orders received, newest first",
            "[--limit N]",
            {{.name = "limit", .help = "at most this many orders", .placeholder = "N", .default_value = "50"},
             database_option()},
            list};
}

}  // namespace pos::app

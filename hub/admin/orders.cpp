#include <boost/json.hpp>
#include <pqxx/pqxx>

#include "hub/admin/admin.hpp"
#include "hub/admin/order_create.hpp"
#include "hub/admin/order_rules.hpp"

namespace hub::admin {
namespace {

using common::config::ParsedArgs;

int show(const ParsedArgs& args) {
    const std::string id = one_positional(args, "order id");
    auto conn = connect(args);
    pqxx::read_transaction tx(*conn);
    print_object(args, show_order(tx, id));
    return 0;
}

int list(const ParsedArgs& args) {
    std::string error;
    auto limit = common::config::parse_uint(args.get("limit").value_or("100"), 1, 100000, "--limit", error);
    if (!limit) throw common::cli::UsageError(error);
    OrderFilter filter{args.get("branch").value_or(""), args.get("state").value_or(""), "",
                       static_cast<std::int64_t>(*limit)};
    auto conn = connect(args);
    pqxx::read_transaction tx(*conn);
    print_rows(
        args, list_orders(tx, filter),
        {"id", "partner", "external_id", "branch_id", "total", "delivery_status", "forwarding", "created_at", "test"});
    return 0;
}

}  // namespace

std::vector<common::cli::Command> order_commands() {
    return {
        {{"order", "show"},
         "one order with its items, options and forwarding state",
         "ID",
         db_options(),
         with_refusals(show)},
        {{"order", "list"},
         "orders, newest first",
         "[--branch B] [--state S]",
         db_options({{.name = "branch", .help = "only this branch", .placeholder = "B"},
                     {.name = "state", .help = "forwarding state or delivery status", .placeholder = "S"},
                     {.name = "limit", .help = "at most this many", .placeholder = "N", .default_value = "100"}}),
         with_refusals(list)},
        order_create_command(),
    };
}

}  // namespace hub::admin

#include <boost/json.hpp>
#include <pqxx/pqxx>

#include "hub/admin/admin.hpp"
#include "hub/admin/order_create.hpp"
#include "hub/admin/order_rules.hpp"

namespace hub::admin {
namespace {

using common::config::ParsedArgs;

int order_show(const ParsedArgs& args) {
    const std::string id = one_positional(args, "order id");
    return print_reading(args, [&](pqxx::transaction_base& tx) { return show_order(tx, id); });
}

int order_list(const ParsedArgs& args) {
    const OrderFilter filter{args.get("branch").value_or(""), args.get("state").value_or(""), "", list_limit(args)};
    return print_listing(
        args,
        {"id", "partner", "external_id", "branch_id", "total", "delivery_status", "forwarding", "created_at", "test"},
        [&](pqxx::transaction_base& tx) { return list_orders(tx, filter); });
}

}  // namespace

std::vector<common::cli::Command> order_commands() {
    return {
        {{"order", "show"},
         "one order with its items, options and forwarding state",
         "ID",
         db_options(),
         with_refusals(order_show)},
        {{"order", "list"},
         "orders, newest first",
         "[--branch B] [--state S]",
         db_options({{.name = "branch", .help = "only this branch", .placeholder = "B"},
                     {.name = "state", .help = "forwarding state or delivery status", .placeholder = "S"},
                     limit_option()}),
         with_refusals(order_list)},
        order_create_command(),
    };
}

}  // namespace hub::admin

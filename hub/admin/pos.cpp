#include <boost/json.hpp>
#include <pqxx/pqxx>

#include "hub/admin/admin.hpp"
#include "hub/admin/pos_rules.hpp"
#include "hub/forward/resend.hpp"
#include "hub/forward/secrets.hpp"

namespace hub::admin {
namespace {

using common::cli::UsageError;
using common::cli::UserError;
using common::config::ParsedArgs;

int pos_set(const ParsedArgs& args) {
    // In declaration order, which is the order the options are read in (a secret may come from standard input).
    const PosConnectionInput in{.brand = required(args, "brand"),
                                .environment = args.get("environment").value_or("production"),
                                .base_url = required(args, "base-url"),
                                .token = secret_value(args, "token"),
                                .email = args.get("email"),
                                .password = secret_value(args, "password"),
                                .ca_file = args.get("ca-file").value_or(""),
                                .allow_insecure_http = args.has("allow-insecure-http")};
    auto box = forward::secret_box(args);
    return print_change(args, [&](pqxx::transaction_base& tx) { return set_pos_connection(tx, box, in); });
}

int pos_list(const ParsedArgs& args) {
    return print_listing(args, {"brand", "environment", "base_url", "insecure", "token", "credentials", "ca_file"},
                         list_pos_connections);
}

int map_set(const ParsedArgs& args) {
    return print_change(args, [&](pqxx::transaction_base& tx) {
        return set_mapping(tx, required(args, "partner"), required(args, "kind"), required(args, "external"),
                           required(args, "pos"));
    });
}

int map_list(const ParsedArgs& args) {
    const std::string partner = args.get("partner").value_or("");
    const std::string kind = args.get("kind").value_or("");
    return print_listing(args, {"partner_label", "kind", "external", "pos", "updated_at", "partner"},
                         [&](pqxx::transaction_base& tx) { return list_mappings(tx, partner, kind); });
}

int map_delete(const ParsedArgs& args) {
    if (!args.positional.empty())
        throw UsageError("a mapping is named by --partner ID --kind item|option --external EXT");
    return print_change(args, [&](pqxx::transaction_base& tx) {
        return delete_mapping(tx, required(args, "partner"), required(args, "kind"), required(args, "external"));
    });
}

int order_resend(const ParsedArgs& args) {
    const std::string id = one_positional(args, "order id");
    return print_change(args, [&](pqxx::transaction_base& tx) {
        const auto outcome = forward::resend_order(tx, id, std::nullopt);
        if (outcome.kind == forward::ResendOutcome::Kind::not_found) throw UserError("no order with id '" + id + "'");
        if (outcome.kind != forward::ResendOutcome::Kind::requeued) throw UserError(outcome.message());
        return boost::json::object{{"order_id", id},
                                   {"previous_state", forward::to_text(outcome.previous_state)},
                                   {"state", forward::to_text(forward::JobState::pending)}};
    });
}

/// The options that name one mapping (`map set` and `map delete`), then `more`.
std::vector<common::config::OptionSpec> mapping_options(std::vector<common::config::OptionSpec> more = {}) {
    std::vector<common::config::OptionSpec> options{
        {.name = "partner", .help = "partner id", .placeholder = "ID"},
        {.name = "kind", .help = "item or option", .placeholder = "KIND"},
        {.name = "external", .help = "the platform's id", .placeholder = "EXT"}};
    options.insert(options.end(), more.begin(), more.end());
    return options;
}

}  // namespace

std::vector<common::cli::Command> pos_commands() {
    return {
        db_command(
            {"pos", "set"},
            "the POS connection of a brand: a token, login credentials, or both (secrets sealed at rest)",
            "--brand BRAND [--environment ENV] --base-url URL [--token TOKEN] [--email E --password P] "
            "[--ca-file PEM] [--allow-insecure-http]",
            pos_set,
            {{.name = "brand", .help = "the brand", .placeholder = "BRAND"},
             {.name = "environment",
              .help = "the POS environment",
              .placeholder = "ENV",
              .default_value = "production"},
             {.name = "base-url",
              .help = "the POS base URL: https://, or http:// to this machine (127.0.0.0/8, ::1, localhost)",
              .placeholder = "URL"},
             {.name = "allow-insecure-http",
              .help = "take http:// to another host: the token and password then cross the network in clear"},
             {.name = "token", .help = "bearer token; '-' reads it from standard input", .placeholder = "TOKEN"},
             {.name = "email", .help = "login e-mail, used after a 401", .placeholder = "E"},
             {.name = "password", .help = "login password; '-' reads it from standard input", .placeholder = "P"},
             ca_file_option(),
             forward::secret_key_option()}),
        db_command({"pos", "list"},
                   "POS connections (never their secrets); `insecure`: http:// to another host (secrets sent in clear)",
                   "", pos_list),
        db_command({"map", "set"}, "map a platform item or option id to a POS product or modifier id",
                   "--partner ID --kind item|option --external EXT --pos POS_ID", map_set,
                   mapping_options({{.name = "pos", .help = "the POS's id", .placeholder = "POS_ID"}})),
        db_command({"map", "list"}, "item and option mappings, by partner, kind and platform id",
                   "[--partner ID] [--kind item|option]", map_list,
                   {{.name = "partner", .help = "only this partner's", .placeholder = "ID"},
                    {.name = "kind", .help = "only items or only options", .placeholder = "KIND"}}),
        db_command({"map", "delete"}, "delete one mapping (the platform's id then passes through unchanged)",
                   "--partner ID --kind item|option --external EXT", map_delete, mapping_options()),
        db_command({"order", "resend"}, "push an order to its POS again (rejected, dead, auth_failed or delivered)",
                   "ID", order_resend),
    };
}

}  // namespace hub::admin

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
    PosConnectionInput in;
    in.brand = required(args, "brand");
    in.environment = args.get("environment").value_or("production");
    in.base_url = required(args, "base-url");
    in.token = secret_value(args, "token");
    in.email = args.get("email");
    in.password = secret_value(args, "password");
    in.ca_file = args.get("ca-file").value_or("");
    in.allow_insecure_http = args.has("allow-insecure-http");
    auto box = forward::secret_box(args);
    auto conn = connect(args);
    pqxx::work tx(*conn);
    const auto out = set_pos_connection(tx, box, in);
    tx.commit();
    print_object(args, out);
    return 0;
}

int pos_list(const ParsedArgs& args) {
    auto conn = connect(args);
    pqxx::read_transaction tx(*conn);
    print_rows(args, list_pos_connections(tx),
               {"brand", "environment", "base_url", "insecure", "token", "credentials", "ca_file"});
    return 0;
}

int map_set(const ParsedArgs& args) {
    auto conn = connect(args);
    pqxx::work tx(*conn);
    const auto out = set_mapping(tx, required(args, "partner"), required(args, "kind"), required(args, "external"),
                                 required(args, "pos"));
    tx.commit();
    print_object(args, out);
    return 0;
}

int map_list(const ParsedArgs& args) {
    auto conn = connect(args);
    pqxx::read_transaction tx(*conn);
    print_rows(args, list_mappings(tx, args.get("partner").value_or(""), args.get("kind").value_or("")),
               {"partner_label", "kind", "external", "pos", "updated_at", "partner"});
    return 0;
}

int map_delete(const ParsedArgs& args) {
    if (!args.positional.empty())
        throw UsageError("a mapping is named by --partner ID --kind item|option --external EXT");
    auto conn = connect(args);
    pqxx::work tx(*conn);
    const auto out = delete_mapping(tx, required(args, "partner"), required(args, "kind"), required(args, "external"));
    tx.commit();
    print_object(args, out);
    return 0;
}

int order_resend(const ParsedArgs& args) {
    const std::string id = one_positional(args, "order id");
    auto conn = connect(args);
    pqxx::work tx(*conn);
    const auto outcome = forward::resend_order(tx, id, std::nullopt);
    if (outcome.kind == forward::ResendOutcome::Kind::not_found) throw UserError("no order with id '" + id + "'");
    if (outcome.kind != forward::ResendOutcome::Kind::requeued) throw UserError(outcome.message());
    tx.commit();
    print_object(
        args, {{"order_id", id}, {"previous_state", forward::to_text(outcome.previous_state)}, {"state", "pending"}});
    return 0;
}

}  // namespace

std::vector<common::cli::Command> pos_commands() {
    return {
        {{"pos", "set"},
         "the POS connection of a brand: a token, login credentials, or both (secrets sealed at rest)",
         "--brand BRAND [--environment ENV] --base-url URL [--token TOKEN] [--email E --password P] [--ca-file PEM] "
         "[--allow-insecure-http]",
         db_options(
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
              {.name = "ca-file",
               .help = "PEM CA bundle to verify the POS (default: system store)",
               .placeholder = "PEM"},
              forward::secret_key_option()}),
         with_refusals(pos_set)},
        {{"pos", "list"},
         "POS connections (never their secrets); `insecure`: http:// to another host (secrets sent in clear)",
         "",
         db_options(),
         pos_list},
        {{"map", "set"},
         "map a platform item or option id to a POS product or modifier id",
         "--partner ID --kind item|option --external EXT --pos POS_ID",
         db_options({{.name = "partner", .help = "partner id", .placeholder = "ID"},
                     {.name = "kind", .help = "item or option", .placeholder = "KIND"},
                     {.name = "external", .help = "the platform's id", .placeholder = "EXT"},
                     {.name = "pos", .help = "the POS's id", .placeholder = "POS_ID"}}),
         with_refusals(map_set)},
        {{"map", "list"},
         "item and option mappings, by partner, kind and platform id",
         "[--partner ID] [--kind item|option]",
         db_options({{.name = "partner", .help = "only this partner's", .placeholder = "ID"},
                     {.name = "kind", .help = "only items or only options", .placeholder = "KIND"}}),
         with_refusals(map_list)},
        {{"map", "delete"},
         "delete one mapping (the platform's id then passes through unchanged)",
         "--partner ID --kind item|option --external EXT",
         db_options({{.name = "partner", .help = "partner id", .placeholder = "ID"},
                     {.name = "kind", .help = "item or option", .placeholder = "KIND"},
                     {.name = "external", .help = "the platform's id", .placeholder = "EXT"}}),
         with_refusals(map_delete)},
        {{"order", "resend"},
         "push an order to its POS again (rejected, dead, auth_failed or delivered)",
         "ID",
         db_options(),
         order_resend},
    };
}

}  // namespace hub::admin

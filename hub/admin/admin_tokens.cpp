// `orderhub admin-token create/list/revoke`: the tokens of the operator HTTP API (hub/admin/admin_token_rules.hpp).
#include "hub/admin/admin.hpp"
#include "hub/admin/admin_token_rules.hpp"

namespace hub::admin {
namespace {

using common::config::ParsedArgs;

int token_create(const ParsedArgs& args) {
    const std::string name = required(args, "name");
    const bool read_only = args.has("read-only");
    // The token is printed this once: only its hash is stored.
    return print_change(args, [&](pqxx::transaction_base& tx) { return create_admin_token(tx, name, read_only); });
}

int token_list(const ParsedArgs& args) {
    return print_listing(args, {"id", "name", "read_only", "created_at", "revoked_at"}, list_admin_tokens);
}

}  // namespace

std::vector<common::cli::Command> admin_token_commands() {
    return {
        db_command({"admin-token", "create"}, "a token of the operator HTTP API (shown once)",
                   "--name NAME [--read-only]", token_create,
                   {{.name = "name", .help = "whose token it is (the actor of its changes)", .placeholder = "NAME"},
                    {.name = "read-only", .help = "the token may only GET"}}),
        db_command({"admin-token", "list"}, "tokens of the operator HTTP API (never the tokens)", "", token_list),
        db_command({"admin-token", "revoke"}, "revoke a token: the API refuses it from then on", "ID",
                   change_by_id("admin token id", revoke_admin_token)),
    };
}

}  // namespace hub::admin

// `orderhub admin-token create/list/revoke`: the tokens of the operator HTTP API (hub/admin/admin_token_rules.hpp).
#include <pqxx/pqxx>

#include "hub/admin/admin.hpp"
#include "hub/admin/admin_token_rules.hpp"

namespace hub::admin {
namespace {

using common::config::ParsedArgs;

int create(const ParsedArgs& args) {
    const std::string name = required(args, "name");
    auto conn = connect(args);
    pqxx::work tx(*conn);
    auto out = create_admin_token(tx, name, args.has("read-only"));
    tx.commit();
    print_object(args, out);  // the token is shown this once: only its hash is stored
    return 0;
}

int list(const ParsedArgs& args) {
    auto conn = connect(args);
    pqxx::read_transaction tx(*conn);
    print_rows(args, list_admin_tokens(tx), {"id", "name", "read_only", "created_at", "revoked_at"});
    return 0;
}

int revoke(const ParsedArgs& args) {
    const std::string id = one_positional(args, "admin token id");
    auto conn = connect(args);
    pqxx::work tx(*conn);
    auto out = revoke_admin_token(tx, id);
    tx.commit();
    print_object(args, out);
    return 0;
}

}  // namespace

std::vector<common::cli::Command> admin_token_commands() {
    return {
        {{"admin-token", "create"},
         "a token of the operator HTTP API (shown once)",
         "--name NAME [--read-only]",
         db_options({{.name = "name", .help = "whose token it is (the actor of its changes)", .placeholder = "NAME"},
                     {.name = "read-only", .help = "the token may only GET"}}),
         with_refusals(create)},
        {{"admin-token", "list"},
         "tokens of the operator HTTP API (never the tokens)",
         "",
         db_options(),
         with_refusals(list)},
        {{"admin-token", "revoke"},
         "revoke a token: the API refuses it from then on",
         "ID",
         db_options(),
         with_refusals(revoke)},
    };
}

}  // namespace hub::admin

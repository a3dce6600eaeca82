#include "hub/admin/secrets.hpp"

#include <iostream>
#include <pqxx/pqxx>

#include "common/crypto/encoding.hpp"
#include "hub/admin/admin.hpp"
#include "hub/forward/secrets.hpp"
#include "hub/ingest/partners.hpp"

namespace hub::admin {
namespace {

using common::cli::UsageError;
using common::cli::UserError;
using common::config::ParsedArgs;

/// `sealed` opened with `current` and sealed again with `next`; a UserError naming `where` when it does not open.
std::string reseal(const std::string& sealed, const std::string& aad, const common::crypto::SecretBox& current,
                   const common::crypto::SecretBox& next, const std::string& where) {
    auto plain = current.open(sealed, aad);
    if (!plain)
        throw UserError(where +
                        " cannot be opened with the current ORDERHUB_SECRET_KEY (sealed under another key, "
                        "or altered); nothing was changed");
    std::string out = next.seal(*plain, aad);
    if (next.open(out, aad) != plain) throw UserError(where + ": re-sealing failed; nothing was changed");
    return out;
}

/// The new key (64 hex characters) from ORDERHUB_NEW_SECRET_KEY or `--new-key` (`-`: one line of standard input).
std::string new_key_hex(const ParsedArgs& args) {
    auto hex = args.get("new-key");
    if (hex && *hex == "-") {
        std::string line;
        if (!std::getline(std::cin, line)) throw UserError("--new-key - expects the new key on standard input");
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
        hex = line;
    }
    if (!hex || hex->empty())
        throw UsageError("give the new key in ORDERHUB_NEW_SECRET_KEY, or as --new-key - on standard input");
    return *hex;
}

int rotate_key(const ParsedArgs& args) {
    auto current = forward::secret_box(args);
    const std::string hex = new_key_hex(args);
    auto next = common::crypto::SecretBox::from_hex(hex);
    // Never echo the value: only what is wrong with it.
    if (!next) throw UserError("the new key must be exactly 64 hex characters (32 bytes), e.g. `openssl rand -hex 32`");
    // The same key again is almost surely a mistake (a variable not set as meant).
    if (common::crypto::hex_decode(hex) == common::crypto::hex_decode(args.get("secret-key").value_or("")))
        throw UserError("the new key is the current key; nothing to do");
    auto conn = connect(args);
    const ResealCounts n = reseal_all(*conn, current, *next);
    print_object(args, {{"pos_tokens", n.pos_tokens},
                        {"pos_passwords", n.pos_passwords},
                        {"signing_secrets", n.signing_secrets},
                        {"next_step", "restart every orderhub serve with ORDERHUB_SECRET_KEY set to the new key"}});
    return 0;
}

}  // namespace

ResealCounts reseal_all(pqxx::connection_base& conn, const common::crypto::SecretBox& current,
                        const common::crypto::SecretBox& next) {
    ResealCounts n;
    pqxx::work tx(conn);
    for (const auto& r : tx.exec("SELECT brand_id, environment, token_sealed, password_sealed FROM hub.pos_connections "
                                 "ORDER BY brand_id, environment FOR UPDATE")) {
        const auto brand = r[0].as<std::string>();
        const auto env = r[1].as<std::string>();
        const std::string where = "hub.pos_connections (brand '" + brand + "', environment '" + env + "') ";
        std::string token;
        std::string password;
        if (!r[2].is_null()) {
            token =
                reseal(r[2].as<std::string>(), forward::token_aad(brand, env), current, next, where + "token_sealed");
            ++n.pos_tokens;
        }
        if (!r[3].is_null()) {
            password = reseal(r[3].as<std::string>(), forward::password_aad(brand, env), current, next,
                              where + "password_sealed");
            ++n.pos_passwords;
        }
        tx.exec_params0(
            "UPDATE hub.pos_connections SET token_sealed = NULLIF($3, ''), "
            "password_sealed = NULLIF($4, ''), updated_at = now() "
            "WHERE brand_id = $1 AND environment = $2",
            brand, env, token, password);
    }
    for (const auto& r : tx.exec("SELECT id, partner_id, secret_sealed FROM hub.partner_signing_secrets "
                                 "ORDER BY id FOR UPDATE")) {
        const auto id = r[0].as<std::string>();
        const auto partner = r[1].as<std::string>();
        const std::string sealed =
            reseal(r[2].as<std::string>(), ingest::signing_secret_aad(partner), current, next,
                   "hub.partner_signing_secrets (id " + id + ", partner '" + partner + "') secret_sealed");
        tx.exec_params0("UPDATE hub.partner_signing_secrets SET secret_sealed = $2 WHERE id = $1::bigint", id, sealed);
        ++n.signing_secrets;
    }
    tx.commit();
    return n;
}

std::vector<common::cli::Command> secret_commands() {
    return {
        db_command({"secrets", "rotate-key"},
                   "re-seal every stored secret under a new ORDERHUB_SECRET_KEY in one transaction; then restart the "
                   "hub with the new key",
                   "[--new-key -]", rotate_key,
                   {forward::secret_key_option(),
                    {.name = "new-key",
                     .env = "ORDERHUB_NEW_SECRET_KEY",
                     .help = "the new key, 64 hex characters; '-' reads it from standard input (keeps it out of `ps`)",
                     .placeholder = "HEX"}}),
    };
}

}  // namespace hub::admin

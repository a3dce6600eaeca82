#include "hub/admin/admin_token_rules.hpp"

#include <pqxx/pqxx>

#include "common/crypto/digest.hpp"
#include "common/crypto/random.hpp"
#include "common/crypto/uuid.hpp"
#include "hub/admin/admin.hpp"
#include "hub/admin/refusal.hpp"

namespace hub::admin {

std::string admin_token_hash(std::string_view token) { return common::crypto::sha256_hex(token); }

boost::json::object create_admin_token(pqxx::transaction_base& tx, const std::string& name, bool read_only) {
    require_text("name", name, 128);
    const std::string token = common::crypto::random_token(common::crypto::kTokenBytes);
    const std::string id = common::crypto::uuid_v7();
    auto r = tx.exec_params(
        "INSERT INTO hub.admin_tokens (id, name, token_hash, read_only) VALUES ($1, $2, $3, $4) "
        "ON CONFLICT (name) DO NOTHING RETURNING " +
            iso_utc("created_at"),
        id, name, admin_token_hash(token), read_only);
    if (r.empty()) throw Refusal(Refusal::Kind::conflict, "an admin token named '" + name + "' exists already");
    return {{"id", id}, {"name", name}, {"read_only", read_only}, {"created_at", r[0][0].c_str()}, {"token", token}};
}

boost::json::array list_admin_tokens(pqxx::transaction_base& tx) {
    boost::json::array rows;
    for (const auto& r : tx.exec("SELECT id, name, read_only, " + iso_utc("created_at") + ", " + iso_utc("revoked_at") +
                                 " FROM hub.admin_tokens ORDER BY created_at DESC, id DESC"))
        rows.push_back({{"id", r[0].c_str()},
                        {"name", r[1].c_str()},
                        {"read_only", r[2].as<bool>()},
                        {"created_at", r[3].c_str()},
                        {"revoked_at", nullable(r[4])}});
    return rows;
}

boost::json::object revoke_admin_token(pqxx::transaction_base& tx, const std::string& id) {
    auto r = tx.exec_params(
        "UPDATE hub.admin_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 RETURNING name, " +
            iso_utc("revoked_at"),
        id);
    if (r.empty()) throw Refusal(Refusal::Kind::not_found, "no admin token with id '" + id + "'");
    return {{"id", id}, {"name", r[0][0].c_str()}, {"revoked_at", r[0][1].c_str()}};
}

std::optional<AdminToken> find_admin_token(pqxx::transaction_base& tx, const std::string& hash) {
    auto r = tx.exec_params(
        "SELECT id, name, read_only FROM hub.admin_tokens WHERE token_hash = $1 AND revoked_at IS NULL", hash);
    if (r.empty()) return std::nullopt;
    return AdminToken{r[0][0].as<std::string>(), r[0][1].as<std::string>(), r[0][2].as<bool>()};
}

}  // namespace hub::admin

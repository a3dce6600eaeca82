#pragma once

// The hub's three NOLOGIN roles. The migrations are written with the names orderhub_app (what `serve` needs),
// orderhub_auditor (reads the status log and the orders) and orderhub_operator (the operator HTTP API). Roles are
// cluster-wide, so the database owner may itself bear one of these names (an operator's login called orderhub_app,
// say); the hub's role then takes the name with `_role` appended. The choice depends only on the owner of the schema
// `hub`, so every later run of `migrate` and every `serve` finds the same names.

#include <string>
#include <string_view>
#include <vector>

#include "common/db/migrate.hpp"

namespace pqxx {
class connection_base;
}

namespace hub::db {

inline constexpr std::string_view kAppRole = "orderhub_app";
inline constexpr std::string_view kAuditorRole = "orderhub_auditor";
/// What an operator HTTP API call switches to for its transaction (sql/hub/0015_admin_tokens.sql).
inline constexpr std::string_view kOperatorRole = "orderhub_operator";

/// The names of the hub's roles in one database: each the written name, or it with `_role` appended.
struct HubRoles {
    std::string app;            ///< for kAppRole
    std::string auditor;        ///< for kAuditorRole
    std::string operator_role;  ///< for kOperatorRole
};

/// The owner of the schema `hub`, or the current user before the first `migrate` (one row, one column).
inline constexpr const char* kSchemaOwnerSql =
    "SELECT coalesce((SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = 'hub'), current_user)";
/// Whether the session's login may SET ROLE to the role named $1 (one row, one boolean).
inline constexpr const char* kMayBecomeSql =
    "SELECT to_regrole($1) IS NOT NULL AND pg_has_role(current_user, to_regrole($1), 'MEMBER')";

/// The hub's role names for a schema owned by `owner`: the written names, unless `owner` bears one of them.
HubRoles hub_roles_for_owner(std::string_view owner);

/// The hub's role names in the database of `conn`: from the owner of the schema `hub`, or from the current user
/// when the schema does not exist yet (the first `migrate` creates it as that user).
HubRoles hub_roles(pqxx::connection_base& conn);

/// What the migration runner replaces in the hub's migrations (nothing when the names are the written ones).
std::vector<common::db::RoleName> migration_role_names(const HubRoles& roles);

}  // namespace hub::db

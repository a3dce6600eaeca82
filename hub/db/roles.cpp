#include "hub/db/roles.hpp"

#include <pqxx/pqxx>

namespace hub::db {

HubRoles hub_roles_for_owner(std::string_view owner) {
    auto pick = [owner](std::string_view name) {
        return owner == name ? std::string(name) + "_role" : std::string(name);
    };
    return {pick(kAppRole), pick(kAuditorRole), pick(kOperatorRole)};
}

HubRoles hub_roles(pqxx::connection_base& conn) {
    pqxx::nontransaction nt(conn);
    const auto owner = nt.exec1(kSchemaOwnerSql);
    return hub_roles_for_owner(owner[0].as<std::string>());
}

std::vector<common::db::RoleName> migration_role_names(const HubRoles& roles) {
    return {{std::string(kAppRole), roles.app},
            {std::string(kAuditorRole), roles.auditor},
            {std::string(kOperatorRole), roles.operator_role}};
}

}  // namespace hub::db

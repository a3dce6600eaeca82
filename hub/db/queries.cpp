#include "hub/db/queries.hpp"

#include <pqxx/pqxx>

#include "hub/db/roles.hpp"

namespace hub::db {

void prepare_all(pqxx::connection_base& conn) {
    for (const Statement* s : kAllStatements) conn.prepare(s->name, s->sql);
}

void prepare_serving(pqxx::connection_base& conn) {
    const std::string app = hub_roles(conn).app;
    {
        pqxx::nontransaction nt(conn);
        // Before `orderhub migrate` the role does not exist; /readyz then reports the missing migrations. A login
        // that is a member already has the role's rights; SET ROLE narrows an owner's or a superuser's session
        // (which RESET ROLE would undo: the shipped configurations serve with a login that owns nothing).
        const auto can = nt.exec_params1(kMayBecomeSql, app);
        if (can[0].as<bool>()) nt.exec("SET ROLE " + nt.quote_name(app));
    }
    prepare_all(conn);
}

}  // namespace hub::db

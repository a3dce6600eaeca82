#include "hub/db/queries.hpp"

#include <pqxx/pqxx>

namespace hub::db {

void prepare_all(pqxx::connection_base& conn) {
    for (const Statement* s : kAllStatements) conn.prepare(s->name, s->sql);
}

void prepare_serving(pqxx::connection_base& conn) {
    {
        pqxx::nontransaction nt(conn);
        // Before `orderhub migrate` the role does not exist; /readyz then reports the missing migrations.
        if (nt.exec1("SELECT to_regrole('orderhub_app') IS NOT NULL")[0].as<bool>()) nt.exec("SET ROLE orderhub_app");
    }
    prepare_all(conn);
}

}  // namespace hub::db

#pragma once

#include <exception>
#include <pqxx/connection>
#include <pqxx/except>
#include <string>

#include "common/app/service.hpp"
#include "common/cli/cli.hpp"
#include "pos/store/queries.hpp"

namespace pos::app {

/// The database option of the admin commands (ORDERPOS_DATABASE_URL or --database-url).
inline common::config::OptionSpec database_option() { return common::app::database_option("ORDERPOS"); }

/// Runs `f(connection)` on a fresh connection with the POS statements prepared. A database that cannot be
/// reached or is not migrated becomes a one-line UserError (exit 1); nothing is half-written because every
/// store function commits once at its end.
template <class F>
auto with_database(const common::config::ParsedArgs& args, F f) {
    const std::string url = common::app::require_database_url(args, "ORDERPOS");
    try {
        pqxx::connection c(url);
        store::prepare_statements(c);
        return f(c);
    } catch (const pqxx::broken_connection& e) {
        throw common::cli::UserError(std::string("cannot connect to the database: ") + e.what());
    } catch (const pqxx::undefined_table&) {
        throw common::cli::UserError("the database has no pos schema yet: run 'orderpos migrate' first");
    }
}

}  // namespace pos::app

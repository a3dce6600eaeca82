#include "common/app/migrate_command.hpp"

#include <boost/json.hpp>
#include <iostream>
#include <pqxx/pqxx>

#include "common/app/service.hpp"

namespace common::app {

cli::Command migrate_command(const std::string& prefix, const std::string& schema,
                             const std::vector<db::MigrationFile>& files, const RoleNamesFn& roles) {
    auto run = [prefix, schema, &files, roles](const config::ParsedArgs& args) {
        const std::string url = require_database_url(args, prefix);
        db::MigrationReport report;
        try {
            pqxx::connection conn(url);
            report = db::migrate(conn, schema, files, roles ? roles(conn) : std::vector<db::RoleName>{});
        } catch (const db::MigrationError& e) {
            throw cli::UserError(e.what());
        } catch (const pqxx::broken_connection& e) {
            throw cli::UserError(std::string("cannot connect to the database: ") + e.what());
        }
        if (args.has("json")) {
            boost::json::array applied;
            for (const auto& n : report.applied) applied.emplace_back(n);
            std::cout << boost::json::serialize(
                             boost::json::object{{"applied", applied}, {"already_applied", report.already}})
                      << "\n";
        } else {
            for (const auto& n : report.applied) std::cout << "applied " << n << "\n";
            std::cout << report.applied.size() << " applied, " << report.already << " already applied\n";
        }
        return 0;
    };
    return {{"migrate"},
            "apply the " + schema + " schema's migrations (idempotent, safe to run concurrently)",
            "",
            {database_option(prefix)},
            run};
}

}  // namespace common::app

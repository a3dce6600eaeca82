#include "hub/app/commands.hpp"

#include "common/app/migrate_command.hpp"
#include "common/cli/cli.hpp"
#include "common/db/migrate.hpp"
#include "hub/admin/admin.hpp"
#include "hub/app/serve.hpp"
#include "hub/db/roles.hpp"
#include "hub/verify/command.hpp"

namespace hub::app {

int main(int argc, char** argv, const common::config::EnvLookup& env) {
    std::vector<common::cli::Command> commands = {
        common::app::migrate_command(
            "ORDERHUB", "hub", common::db::migrations_hub(),
            [](pqxx::connection_base& c) { return db::migration_role_names(db::hub_roles(c)); }),
        serve_command(),
    };
    for (auto group :
         {admin::partner_commands(), admin::branch_commands(), admin::order_commands(), admin::event_commands(),
          admin::pos_commands(), admin::secret_commands(), admin::maintain_commands(), admin::audit_commands(),
          admin::user_commands(), admin::admin_token_commands()})
        for (auto& c : group) commands.push_back(std::move(c));
    for (auto& c : verify::verify_commands()) commands.push_back(std::move(c));
    return common::cli::dispatch("orderhub", "OrderHub: delivery-platform webhooks in, POS orders out.", commands, argc,
                                 argv, env);
}

}  // namespace hub::app

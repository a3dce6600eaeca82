#include "pos/app/commands.hpp"

#include "common/app/migrate_command.hpp"
#include "pos/app/admin.hpp"
#include "pos/app/serve.hpp"

namespace pos::app {

int main(int argc, char** argv, const common::config::EnvLookup& env) {
    std::vector<common::cli::Command> commands = {
        common::app::migrate_command("ORDERPOS", "pos", common::db::migrations_pos()),
        serve_command(),
        user_add_command(),
        menu_load_command(),
        orders_list_command(),
    };
    return common::cli::dispatch("orderpos", "The reference POS: POST /api/login and POST /api/orders.", commands, argc,
                                 argv, env);
}

}  // namespace pos::app

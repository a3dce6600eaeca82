#pragma once

#include "common/cli/cli.hpp"

namespace pos::app {

/// `orderpos user add --email E --password P|- --brand BRAND`: a user who may log in for one brand.
common::cli::Command user_add_command();

/// `orderpos menu load FILE`: brands, branches, products and modifiers from a menu file, in one transaction.
common::cli::Command menu_load_command();

/// `orderpos orders list [--limit N]`: the orders received, newest first.
common::cli::Command orders_list_command();

}  // namespace pos::app

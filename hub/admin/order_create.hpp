#pragma once

#include "common/cli/cli.hpp"

namespace hub::admin {

/// `orderhub order create` (hub/admin/order_create_rules.hpp).
common::cli::Command order_create_command();

}  // namespace hub::admin

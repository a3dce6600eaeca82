#pragma once

#include <vector>

#include "common/cli/cli.hpp"

namespace hub::verify {

/// `orderhub pos verify`: checks a POS against the interface with test orders (product.md section 3). Needs no
/// database.
std::vector<common::cli::Command> verify_commands();

}  // namespace hub::verify

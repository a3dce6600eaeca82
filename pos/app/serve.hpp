#pragma once

#include "common/cli/cli.hpp"

namespace pos::app {

/// `orderpos serve`: the POS endpoints, /healthz and /readyz.
common::cli::Command serve_command();

}  // namespace pos::app

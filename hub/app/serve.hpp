#pragma once

#include "common/cli/cli.hpp"

namespace hub::app {

/// `orderhub serve`: the webhook listener and/or the forwarder.
common::cli::Command serve_command();

}  // namespace hub::app

#pragma once

#include "common/config/options.hpp"

namespace hub::app {

/// The orderhub command line: dispatches to migrate, serve and the operator commands; returns the exit code.
int main(int argc, char** argv, const common::config::EnvLookup& env);

}  // namespace hub::app

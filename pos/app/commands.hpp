#pragma once

#include "common/config/options.hpp"

namespace pos::app {

/// The orderpos command line; returns the exit code.
int main(int argc, char** argv, const common::config::EnvLookup& env);

}  // namespace pos::app

#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/config/options.hpp"

namespace common::cli {

/// A user error: printed on stderr as one line, exit code 1.
struct UserError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// Bad usage: printed on stderr with a hint to --help, exit code 2.
struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// One command such as `partner create`; every command also accepts --json and --help.
struct Command {
    std::vector<std::string> words;
    std::string summary;
    std::string usage;  ///< what follows the words in the usage line, e.g. "--name NAME [--signing]"
    std::vector<config::OptionSpec> options;
    std::function<int(const config::ParsedArgs&)> run;
};

/// Finds the command named by argv, parses its options and runs it; returns the exit code (0, 1 or 2).
int dispatch(std::string_view program, std::string_view about, const std::vector<Command>& commands, int argc,
             char** argv, const config::EnvLookup& env);

}  // namespace common::cli

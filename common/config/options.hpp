#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace common::config {

/// One command-line option; `env` names the environment variable it falls back to.
struct OptionSpec {
    std::string name{};         ///< long flag without dashes: "listen" is `--listen`
    std::string env{};          ///< environment variable, or empty
    std::string help{};         ///< one line for --help; never include a secret value here
    std::string placeholder{};  ///< "ADDR"; empty for a boolean switch
    std::optional<std::string> default_value{};
    bool repeatable = false;
    bool is_switch() const { return placeholder.empty(); }
};

/// An option as a row of constant data, for a command's table of options. `env` is the variable's name after the
/// program's prefix ("LISTEN" for ORDERHUB_LISTEN), empty for none; no default for an empty `default_value`.
struct OptionRow {
    std::string_view name;
    std::string_view env;
    std::string_view placeholder;
    std::optional<std::string_view> default_value;
    std::string_view help;
};

/// The options of a table of rows, in its order; `env_prefix` ("ORDERHUB") and "_" come before each row's env.
std::vector<OptionSpec> option_specs(std::span<const OptionRow> rows, std::string_view env_prefix);

/// Looks an environment variable up; injectable so tests need no real environment.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

/// The process environment.
EnvLookup process_env();

/// Options after flags, environment and defaults were merged (flags win over environment).
struct ParsedArgs {
    std::map<std::string, std::vector<std::string>> values;
    std::vector<std::string> positional;
    bool help = false;

    /// The last value of an option, if any.
    std::optional<std::string> get(const std::string& name) const;
    /// Every value of a repeatable option.
    std::vector<std::string> all(const std::string& name) const;
    /// True when a switch was given.
    bool has(const std::string& name) const;
};

/// Parses `args` (without the program and command words) against `spec`; returns a message on bad usage.
std::variant<ParsedArgs, std::string> parse_args(std::span<const std::string> args, const std::vector<OptionSpec>& spec,
                                                 const EnvLookup& env);

/// The --help text of a command.
std::string render_help(std::string_view usage, std::string_view summary, const std::vector<OptionSpec>& spec);

/// A host and port to listen on or connect to.
struct HostPort {
    std::string host;
    std::uint16_t port = 0;
};

/// Parses "127.0.0.1:8080", "[::1]:8080" or "localhost:0"; nullopt with a message in `error` otherwise.
std::optional<HostPort> parse_host_port(std::string_view text, std::string& error);

/// Parses a positive integer within [min, max]; nullopt with a message in `error` otherwise.
std::optional<std::uint64_t> parse_uint(std::string_view text, std::uint64_t min, std::uint64_t max,
                                        std::string_view what, std::string& error);

/// Parses a duration in whole seconds: "90", "90s", "30m" or "2h", within [min, max] seconds; nullopt with a
/// message in `error` otherwise.
std::optional<std::chrono::seconds> parse_duration(std::string_view text, std::chrono::seconds min,
                                                   std::chrono::seconds max, std::string_view what, std::string& error);

}  // namespace common::config

#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <pqxx/connection>
#include <pqxx/field>
#include <pqxx/transaction_base>
#include <string>
#include <vector>

#include "common/cli/cli.hpp"

namespace hub::admin {

/// The operator commands of product.md section 3 that this build has.
std::vector<common::cli::Command> partner_commands();
std::vector<common::cli::Command> branch_commands();
std::vector<common::cli::Command> order_commands();
std::vector<common::cli::Command> event_commands();
std::vector<common::cli::Command> pos_commands();
std::vector<common::cli::Command> maintain_commands();
std::vector<common::cli::Command> secret_commands();
std::vector<common::cli::Command> audit_commands();
std::vector<common::cli::Command> user_commands();
std::vector<common::cli::Command> admin_token_commands();

/// A connection to ORDERHUB_DATABASE_URL (or --database-url); a clear UserError when it cannot connect.
std::unique_ptr<pqxx::connection> connect(const common::config::ParsedArgs& args);

/// A text column as JSON: its text, or null for SQL NULL.
boost::json::value nullable(const pqxx::field& f);

/// SQL text rendering the timestamp `column` in UTC, ISO 8601 with microseconds: 2024-05-01T18:02:11.000000Z.
std::string iso_utc(const std::string& column);

/// Prints one object: JSON with --json, else `key: value` lines, each value terminal-safe (common/text/terminal.hpp).
void print_object(const common::config::ParsedArgs& args, const boost::json::object& o);

/// Prints rows: a JSON array with --json, else an aligned table of `columns`, each cell terminal-safe.
void print_rows(const common::config::ParsedArgs& args, const boost::json::array& rows,
                const std::vector<std::string>& columns);

/// The options every database command has (database URL).
std::vector<common::config::OptionSpec> db_options(std::vector<common::config::OptionSpec> more = {});

/// The value of a required option, or a UsageError naming it.
std::string required(const common::config::ParsedArgs& args, const std::string& name);

/// The value of a secret option; `-` reads one line from standard input (keeps it out of `ps` and history).
std::optional<std::string> secret_value(const common::config::ParsedArgs& args, const std::string& name);

/// `run` with the refusals of the operator rules (hub/admin/refusal.hpp) turned into the CLI's errors: invalid is
/// bad usage (exit 2), not_found and conflict user errors (exit 1).
std::function<int(const common::config::ParsedArgs&)> with_refusals(
    std::function<int(const common::config::ParsedArgs&)> run);

/// The single positional argument (an id), or a UsageError.
std::string one_positional(const common::config::ParsedArgs& args, const std::string& what);

/// A command that uses the database: `options` after the database's, and the refusals of the rules turned into the
/// CLI's errors (with_refusals).
common::cli::Command db_command(std::vector<std::string> words, std::string summary, std::string usage,
                                std::function<int(const common::config::ParsedArgs&)> run,
                                std::vector<common::config::OptionSpec> options = {});

/// --ca-file: the PEM CA bundle that verifies a POS (`pos set`, `pos verify`).
common::config::OptionSpec ca_file_option();

/// The number option `name` within [min, max] (`fallback` when absent; required without one), or a UsageError
/// naming it.
std::uint64_t number_option(const common::config::ParsedArgs& args, const std::string& name, std::uint64_t min,
                            std::uint64_t max, const std::optional<std::string>& fallback = std::nullopt);

/// The `--limit N` of a listing (default 100, at most 100000) and its value.
common::config::OptionSpec limit_option();
std::int64_t list_limit(const common::config::ParsedArgs& args);

/// Runs `change` in one transaction of a new connection, commits it and prints the object it returns: the shape of
/// every command that changes something. Returns the exit code 0.
int print_change(const common::config::ParsedArgs& args,
                 const std::function<boost::json::object(pqxx::transaction_base&)>& change);

/// The run function of a command that changes the one thing its single positional argument names (`what`: "user
/// id"): print_change of `change(tx, id)`.
std::function<int(const common::config::ParsedArgs&)> change_by_id(
    std::string what, std::function<boost::json::object(pqxx::transaction_base&, const std::string&)> change);

/// Runs `read` in a read-only transaction of a new connection and prints its rows as a table of `columns` (JSON
/// with --json). Returns the exit code 0.
int print_listing(const common::config::ParsedArgs& args, const std::vector<std::string>& columns,
                  const std::function<boost::json::array(pqxx::transaction_base&)>& read);

/// Runs `read` in a read-only transaction of a new connection and prints the object it returns. Returns 0.
int print_reading(const common::config::ParsedArgs& args,
                  const std::function<boost::json::object(pqxx::transaction_base&)>& read);

}  // namespace hub::admin

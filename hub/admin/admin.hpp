#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <functional>
#include <memory>
#include <pqxx/connection>
#include <pqxx/field>
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

}  // namespace hub::admin

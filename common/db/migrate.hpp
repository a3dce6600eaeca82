#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace pqxx {
class connection_base;
}

namespace common::db {

/// One numbered migration file, embedded in the binary at build time (`0001_init.sql`).
struct MigrationFile {
    std::string_view name;
    std::string_view sql;
};

/// The hub's and the POS's migrations (generated from sql/hub and sql/pos by cmake/embed_sql_files.cmake).
const std::vector<MigrationFile>& migrations_hub();
const std::vector<MigrationFile>& migrations_pos();

/// A migration problem the operator must fix (edited file, unknown version, bad file name); exit code 1.
struct MigrationError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct MigrationReport {
    std::vector<std::string> applied;  ///< applied by this run
    std::size_t already = 0;           ///< applied earlier
};

/// A role name the migrations are written with and the name it has in this database. Roles are cluster-wide, so
/// the name a schema picked for its own role may be taken (by the migrating owner, say): the file keeps its text
/// and checksum, and the runner applies it with `written` replaced, as a whole word, by `actual`.
struct RoleName {
    std::string written;
    std::string actual;
};

/// `sql` with every whole-word occurrence of each `written` name (letters, digits, `_` and `$` around it end a
/// word) replaced by its `actual` name.
std::string with_role_names(std::string_view sql, const std::vector<RoleName>& roles);

/// Applies the pending files of `files` to `schema` (created if missing), each in its own transaction, under a
/// session advisory lock so concurrent runs are safe. Refuses (MigrationError) when an applied file's checksum
/// differs or the database has a version this binary does not know. Records name, SHA-256 and time.
MigrationReport migrate(pqxx::connection_base& conn, const std::string& schema, const std::vector<MigrationFile>& files,
                        const std::vector<RoleName>& roles = {});

/// Empty when every file is applied with the same checksum and nothing unknown is applied; else the problem.
std::string migration_problem(pqxx::connection_base& conn, const std::string& schema,
                              const std::vector<MigrationFile>& files);

/// The version number of a migration file name ("0007_x.sql" -> 7); throws MigrationError for a bad name.
int migration_version(std::string_view name);

}  // namespace common::db

#pragma once

#include <string>
#include <vector>

#include "common/cli/cli.hpp"
#include "common/db/migrate.hpp"

namespace common::app {

/// `<program> migrate`: applies `files` to `schema` of the database named by `<prefix>_DATABASE_URL`.
cli::Command migrate_command(const std::string& prefix, const std::string& schema,
                             const std::vector<db::MigrationFile>& files);

}  // namespace common::app

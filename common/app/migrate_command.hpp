#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/cli/cli.hpp"
#include "common/db/migrate.hpp"

namespace common::app {

/// The role names to apply the migrations with, read from the database before migrating (see db::RoleName).
using RoleNamesFn = std::function<std::vector<db::RoleName>(pqxx::connection_base&)>;

/// `<program> migrate`: applies `files` to `schema` of the database named by `<prefix>_DATABASE_URL`, with the
/// role names `roles` returns (none replaced when it is empty).
cli::Command migrate_command(const std::string& prefix, const std::string& schema,
                             const std::vector<db::MigrationFile>& files, const RoleNamesFn& roles = {});

}  // namespace common::app

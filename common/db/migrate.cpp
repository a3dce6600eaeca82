#include "common/db/migrate.hpp"

#include <charconv>
#include <chrono>
#include <map>
#include <pqxx/pqxx>
#include <thread>

#include "common/crypto/digest.hpp"

namespace common::db {
namespace {

struct Applied {
    std::string name;
    std::string checksum;
};

// Roles are cluster-wide: a migration that alters or grants one (0002, 0015) updates the same row of a shared
// catalog from every database of the cluster, and PostgreSQL refuses the second of two concurrent updates with
// "tuple concurrently updated" (an internal error, XX000) instead of waiting for the first. The file's transaction
// rolled back whole, so it is run again, a few times, after a pause that grows: the other database's migration has
// committed by then. (The advisory lock below is per database, so it does not order two databases' migrations.)
constexpr int kAttempts = 5;
constexpr std::chrono::milliseconds kFirstPause{20};

bool concurrently_updated(const pqxx::sql_error& e) {
    return e.sqlstate() == "XX000" &&
           std::string_view(e.what()).find("tuple concurrently updated") != std::string_view::npos;
}

std::map<int, Applied> read_applied(pqxx::transaction_base& tx, const std::string& schema) {
    std::map<int, Applied> out;
    auto exists = tx.exec_params1("SELECT to_regclass($1) IS NOT NULL", schema + ".schema_migrations");
    if (!exists[0].as<bool>()) return out;
    auto rows = tx.exec("SELECT version, name, checksum FROM " + tx.quote_name(schema) + ".schema_migrations");
    for (const auto& r : rows) out[r[0].as<int>()] = {r[1].as<std::string>(), r[2].as<std::string>()};
    return out;
}

std::string check(const std::map<int, Applied>& applied, const std::vector<MigrationFile>& files) {
    std::map<int, const MigrationFile*> by_version;
    for (const auto& f : files) by_version[migration_version(f.name)] = &f;
    for (const auto& [version, a] : applied) {
        auto it = by_version.find(version);
        if (it == by_version.end())
            return "the database has migration " + a.name + " which this binary does not know: use a newer binary";
        if (common::crypto::sha256_hex(it->second->sql) != a.checksum)
            return "migration " + a.name +
                   " was edited after it was applied (checksum differs): restore the file "
                   "and put the change in a new numbered migration";
    }
    return {};
}

bool word_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
}

}  // namespace

std::string with_role_names(std::string_view sql, const std::vector<RoleName>& roles) {
    std::string out(sql);
    for (const auto& r : roles) {
        if (r.written.empty() || r.written == r.actual) continue;
        std::string next;
        std::size_t from = 0;
        for (std::size_t at = out.find(r.written); at != std::string::npos; at = out.find(r.written, at + 1)) {
            const std::size_t end = at + r.written.size();
            if ((at > 0 && word_char(out[at - 1])) || (end < out.size() && word_char(out[end]))) continue;
            next.append(out, from, at - from).append(r.actual);
            from = end;
        }
        out = next.append(out, from, std::string::npos);
    }
    return out;
}

int migration_version(std::string_view name) {
    int v = 0;
    auto [ptr, ec] = std::from_chars(name.data(), name.data() + name.size(), v);
    if (ec != std::errc() || ptr == name.data() || ptr == name.data() + name.size() || *ptr != '_' || v <= 0)
        throw MigrationError("migration file name '" + std::string(name) + "' must look like 0001_name.sql");
    return v;
}

MigrationReport migrate(pqxx::connection_base& conn, const std::string& schema, const std::vector<MigrationFile>& files,
                        const std::vector<RoleName>& roles) {
    MigrationReport report;
    const std::string lock_key = "orderhub.migrate." + schema;
    {
        pqxx::nontransaction nt(conn);
        nt.exec_params("SELECT pg_advisory_lock(hashtext($1))", lock_key);
    }
    struct Unlock {
        pqxx::connection_base& c;
        std::string key;
        ~Unlock() {
            try {
                pqxx::nontransaction nt(c);
                nt.exec_params("SELECT pg_advisory_unlock(hashtext($1))", key);
            } catch (...) {
                // The lock is session-level: it goes with the connection anyway.
            }
        }
    } unlock{conn, lock_key};

    std::map<int, Applied> applied;
    {
        pqxx::work tx(conn);
        const std::string s = tx.quote_name(schema);
        tx.exec("CREATE SCHEMA IF NOT EXISTS " + s);
        tx.exec("CREATE TABLE IF NOT EXISTS " + s +
                ".schema_migrations (version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL, "
                "applied_at timestamptz NOT NULL DEFAULT now())");
        applied = read_applied(tx, schema);
        tx.commit();
    }
    if (auto problem = check(applied, files); !problem.empty()) throw MigrationError(problem);

    std::map<int, const MigrationFile*> pending;
    for (const auto& f : files) {
        int v = migration_version(f.name);
        if (pending.contains(v) || applied.contains(v)) {
            if (applied.contains(v)) {
                ++report.already;
                continue;
            }
            throw MigrationError("two migration files share version " + std::to_string(v));
        }
        pending[v] = &f;
    }
    for (const auto& [version, f] : pending) {
        for (int attempt = 1;; ++attempt) {
            try {
                pqxx::work tx(conn);
                tx.exec(with_role_names(f->sql, roles));
                tx.exec_params("INSERT INTO " + tx.quote_name(schema) +
                                   ".schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
                               version, std::string(f->name), common::crypto::sha256_hex(f->sql));
                tx.commit();
                break;
            } catch (const pqxx::sql_error& e) {
                if (attempt >= kAttempts || !concurrently_updated(e)) throw;
                std::this_thread::sleep_for(kFirstPause * attempt);
            }
        }
        report.applied.emplace_back(f->name);
    }
    return report;
}

std::string migration_problem(pqxx::connection_base& conn, const std::string& schema,
                              const std::vector<MigrationFile>& files) {
    pqxx::read_transaction tx(conn);
    auto applied = read_applied(tx, schema);
    if (auto problem = check(applied, files); !problem.empty()) return problem;
    for (const auto& f : files)
        if (!applied.contains(migration_version(f.name))) return "migration " + std::string(f.name) + " is not applied";
    return {};
}

}  // namespace common::db

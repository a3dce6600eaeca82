#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <pqxx/pqxx>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "common/db/migrate.hpp"

namespace tests {

/// The cluster tests/run.sh started (ORDERHUB_TEST_DATABASE_URL); a pg test fails loudly without one.
inline std::string admin_url() {
    const char* url = std::getenv("ORDERHUB_TEST_DATABASE_URL");
    if (url == nullptr || *url == '\0')
        FAIL("ORDERHUB_TEST_DATABASE_URL is not set: run the pg tests via tests/run.sh");
    return url;
}

/// A fresh database for one test, dropped (forcefully) when the test ends.
class TempDatabase {
public:
    TempDatabase() {
        std::random_device rd;
        name_ = "t_" + std::to_string(rd()) + std::to_string(rd() % 1000);
        pqxx::connection admin(admin_url());
        pqxx::nontransaction nt(admin);
        nt.exec("CREATE DATABASE " + nt.quote_name(name_));
        url_ = with_database(admin_url(), name_);
    }
    ~TempDatabase() {
        try {
            pqxx::connection admin(admin_url());
            pqxx::nontransaction nt(admin);
            nt.exec("DROP DATABASE IF EXISTS " + nt.quote_name(name_) + " WITH (FORCE)");
        } catch (...) {
        }
    }
    TempDatabase(const TempDatabase&) = delete;
    TempDatabase& operator=(const TempDatabase&) = delete;

    const std::string& url() const { return url_; }
    const std::string& name() const { return name_; }

    /// `url` with its database path replaced by `db` (URIs of the form postgresql://user@host:port/db?...).
    static std::string with_database(const std::string& url, const std::string& db) {
        auto scheme = url.find("://");
        auto slash = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
        auto query = url.find('?');
        std::string base = slash == std::string::npos ? url.substr(0, query) : url.substr(0, slash);
        std::string rest = query == std::string::npos ? "" : url.substr(query);
        return base + "/" + db + rest;
    }

private:
    std::string name_;
    std::string url_;
};

/// The migrations of `files` before the one whose name starts with `prefix` (such as "0023_"): what a database held
/// before that upgrade, for the tests of the upgrade.
inline std::vector<common::db::MigrationFile> migrations_before(const std::vector<common::db::MigrationFile>& files,
                                                                std::string_view prefix) {
    const auto upgrade =
        std::find_if(files.begin(), files.end(), [&](const auto& f) { return f.name.starts_with(prefix); });
    REQUIRE(upgrade != files.end());
    return {files.begin(), upgrade};
}

}  // namespace tests

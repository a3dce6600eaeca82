#include <catch2/catch.hpp>

#include "common/db/migrate.hpp"
#include "hub/db/roles.hpp"

using common::db::with_role_names;

TEST_CASE("role names: whole words are replaced, longer names and other words are not", "[migrate][roles]") {
    const std::vector<common::db::RoleName> roles{{"orderhub_app", "orderhub_app_role"}};
    CHECK(with_role_names("GRANT orderhub_app TO CURRENT_USER;", roles) == "GRANT orderhub_app_role TO CURRENT_USER;");
    CHECK(with_role_names("ARRAY['orderhub_app', 'x']", roles) == "ARRAY['orderhub_app_role', 'x']");
    CHECK(with_role_names("TO orderhub_app,orderhub_auditor", roles) == "TO orderhub_app_role,orderhub_auditor");
    CHECK(with_role_names("orderhub_app_login my_orderhub_app orderhub_app$x", roles) ==
          "orderhub_app_login my_orderhub_app orderhub_app$x");
    CHECK(with_role_names("orderhub_app", roles) == "orderhub_app_role");
    CHECK(with_role_names("GRANT x TO y", {}) == "GRANT x TO y");
}

TEST_CASE("hub roles: the written names unless the owner bears one of them", "[migrate][roles]") {
    struct Case {
        const char* owner;
        const char* app;
        const char* auditor;
    };
    for (const Case& c :
         {Case{"postgres", "orderhub_app", "orderhub_auditor"}, Case{"orderhub", "orderhub_app", "orderhub_auditor"},
          Case{"orderhub_app", "orderhub_app_role", "orderhub_auditor"},
          Case{"orderhub_auditor", "orderhub_app", "orderhub_auditor_role"},
          Case{"orderhub_app_role", "orderhub_app", "orderhub_auditor"}}) {
        INFO("owner " << c.owner);
        const auto r = hub::db::hub_roles_for_owner(c.owner);
        CHECK(r.app == c.app);
        CHECK(r.auditor == c.auditor);
    }
    CHECK(hub::db::hub_roles_for_owner("orderhub").operator_role == "orderhub_operator");
    CHECK(hub::db::hub_roles_for_owner("orderhub_operator").operator_role == "orderhub_operator_role");
}

TEST_CASE("hub roles: every written name of the hub's migrations is replaced when the owner takes it",
          "[migrate][roles]") {
    const auto names = hub::db::migration_role_names(hub::db::hub_roles_for_owner("orderhub_app"));
    for (const auto& f : common::db::migrations_hub()) {
        INFO(f.name);
        const std::string sql = with_role_names(f.sql, names);
        CHECK(sql.find("GRANT orderhub_app TO") == std::string::npos);
        CHECK(sql.find("TO orderhub_app;") == std::string::npos);
        CHECK(sql.find("TO orderhub_app,") == std::string::npos);
    }
}

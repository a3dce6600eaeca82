#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <boost/json.hpp>
#include <iostream>
#include <pqxx/pqxx>

#include "common/crypto/password.hpp"
#include "common/crypto/uuid.hpp"
#include "hub/admin/admin.hpp"
#include "hub/dashboard/auth.hpp"

namespace hub::admin {
namespace {

using common::cli::UsageError;
using common::cli::UserError;
using common::config::ParsedArgs;

/// One line from standard input; on a terminal without echo, after `prompt`.
std::string read_secret_line(const std::string& prompt) {
    const bool tty = isatty(STDIN_FILENO) != 0;
    termios old{};
    if (tty) {
        std::cerr << prompt << std::flush;
        tcgetattr(STDIN_FILENO, &old);
        termios quiet = old;
        quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
        tcsetattr(STDIN_FILENO, TCSANOW, &quiet);
    }
    std::string line;
    const bool got = static_cast<bool>(std::getline(std::cin, line));
    if (tty) {
        tcsetattr(STDIN_FILENO, TCSANOW, &old);
        std::cerr << "\n";
    }
    if (!got) throw UserError("expected the password on standard input");
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return line;
}

int user_add(const ParsedArgs& args) {
    const std::string email = dashboard::normalize_email(required(args, "email"));
    if (!dashboard::plausible_email(email)) throw UsageError("--email must look like name@example.com");
    const std::string brand = required(args, "brand");
    auto branches = args.all("branch");
    std::sort(branches.begin(), branches.end());
    branches.erase(std::unique(branches.begin(), branches.end()), branches.end());

    std::string password = read_secret_line("password for " + email + ": ");
    if (isatty(STDIN_FILENO) != 0 && read_secret_line("again: ") != password)
        throw UserError("the two passwords differ");
    if (auto problem = dashboard::password_problem(password)) throw UserError(*problem);

    auto conn = connect(args);
    pqxx::work tx(*conn);
    if (tx.exec_params("SELECT 1 FROM hub.brands WHERE id = $1", brand).empty())
        throw UserError("no brand '" + brand + "' (brands come into being with `orderhub branch create`)");
    for (const auto& b : branches) {
        auto r = tx.exec_params("SELECT brand_id FROM hub.branches WHERE id = $1", b);
        if (r.empty()) throw UserError("no branch '" + b + "'");
        if (r[0][0].as<std::string>() != brand) throw UserError("branch '" + b + "' is not of brand '" + brand + "'");
    }
    if (!tx.exec_params("SELECT 1 FROM hub.dashboard_users WHERE email = $1", email).empty())
        throw UserError("a user with e-mail '" + email + "' exists");
    const std::string id = common::crypto::uuid_v7();
    tx.exec_params("INSERT INTO hub.dashboard_users (id, email, password_hash, brand_id) VALUES ($1, $2, $3, $4)", id,
                   email, common::crypto::hash_password(password), brand);
    boost::json::array scope;
    for (const auto& b : branches) {
        tx.exec_params("INSERT INTO hub.dashboard_user_branches (user_id, branch_id) VALUES ($1, $2)", id, b);
        scope.emplace_back(b);
    }
    tx.commit();
    print_object(args, {{"id", id},
                        {"email", email},
                        {"brand", brand},
                        {"branches", branches.empty() ? boost::json::value("all") : boost::json::value(scope)}});
    return 0;
}

boost::json::array users(pqxx::transaction_base& tx) {
    boost::json::array rows;
    for (const auto& r : tx.exec(
             "SELECT u.id, u.email, u.brand_id, coalesce(string_agg(ub.branch_id, ',' ORDER BY ub.branch_id), 'all'), "
             "u.disabled_at IS NOT NULL FROM hub.dashboard_users u "
             "LEFT JOIN hub.dashboard_user_branches ub ON ub.user_id = u.id GROUP BY u.id ORDER BY u.email"))
        rows.push_back({{"id", r[0].c_str()},
                        {"email", r[1].c_str()},
                        {"brand", r[2].c_str()},
                        {"branches", r[3].c_str()},
                        {"disabled", r[4].as<bool>()}});
    return rows;
}

int user_list(const ParsedArgs& args) {
    return print_listing(args, {"id", "email", "brand", "branches", "disabled"}, users);
}

/// Disables user `id` and ends their sessions.
boost::json::object disable_user(pqxx::transaction_base& tx, const std::string& id) {
    auto r =
        tx.exec_params("UPDATE hub.dashboard_users SET disabled_at = coalesce(disabled_at, now()) WHERE id = $1", id);
    if (r.affected_rows() == 0) throw UserError("no user with id '" + id + "'");
    auto ended = tx.exec_params("DELETE FROM hub.dashboard_sessions WHERE user_id = $1", id);
    return {{"id", id}, {"disabled", true}, {"sessions_ended", ended.affected_rows()}};
}

}  // namespace

std::vector<common::cli::Command> user_commands() {
    return {
        db_command({"user", "add"},
                   "a merchant user of the dashboard; the password is prompted for, or read as one line from standard "
                   "input",
                   "--email E --brand B [--branch X ...]", user_add,
                   {{.name = "email", .help = "login e-mail", .placeholder = "E"},
                    {.name = "brand", .help = "the brand whose orders the user sees", .placeholder = "B"},
                    {.name = "branch",
                     .help = "only this branch (repeatable; default: every branch of the brand)",
                     .placeholder = "X",
                     .repeatable = true}}),
        db_command({"user", "list"}, "dashboard users and their scope (never their password hashes)", "", user_list),
        db_command({"user", "disable"}, "turns a dashboard user off and ends their sessions", "ID",
                   change_by_id("user id", disable_user)),
    };
}

}  // namespace hub::admin

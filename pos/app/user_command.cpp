#include <boost/json.hpp>
#include <iostream>
#include <string>

#include "common/crypto/password.hpp"
#include "pos/app/admin.hpp"
#include "pos/app/database.hpp"
#include "pos/logic/credentials.hpp"
#include "pos/store/users.hpp"

namespace pos::app {
namespace {

using common::cli::UsageError;
using common::cli::UserError;

std::string required(const common::config::ParsedArgs& args, const std::string& name) {
    auto value = args.get(name);
    if (!value || value->empty()) throw UsageError("--" + name + " is required");
    return *value;
}

// One line from stdin without its line break, for `--password -` (keeps the password out of ps and history).
std::string password_from_stdin() {
    std::string line;
    if (!std::getline(std::cin, line)) throw UserError("--password -: no password on standard input");
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return line;
}

int add_user(const common::config::ParsedArgs& args) {
    const std::string email = required(args, "email");
    std::string password = required(args, "password");
    const std::string brand = required(args, "brand");
    if (password == "-") password = password_from_stdin();
    if (auto problem = check_new_user(email, password)) throw UserError(*problem);
    const std::string hash = common::crypto::hash_password(password);
    const auto added = with_database(args, [&](pqxx::connection& c) { return store::add_user(c, email, hash, brand); });
    switch (added.result) {
        case store::AddUserResult::unknown_brand:
            throw UserError("unknown brand " + brand + ": load a menu file with this brand first");
        case store::AddUserResult::email_taken: throw UserError("a user with email " + email + " already exists");
        case store::AddUserResult::added: break;
    }
    if (args.has("json")) {
        std::cout << boost::json::serialize(
                         boost::json::object{{"id", added.id}, {"email", email}, {"brand_id", brand}})
                  << "\n";
    } else {
        std::cout << "added user " << added.id << " (" << email << ") for brand " << brand << "\n";
    }
    return 0;
}

}  // namespace

common::cli::Command user_add_command() {
    return {{"user", "add"},
            "add a user who may log in through POST /api/login for one brand",
            "--email E --password P|- --brand BRAND",
            {{.name = "email", .help = "the login email (unique, case-insensitive)", .placeholder = "E"},
             {.name = "password",
              .help = "the password (at least 8 characters); '-' reads one line from standard input",
              .placeholder = "P"},
             {.name = "brand", .help = "the brand the user's tokens may order for", .placeholder = "BRAND"},
             database_option()},
            add_user};
}

}  // namespace pos::app

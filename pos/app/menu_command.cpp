#include <boost/json.hpp>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "pos/app/admin.hpp"
#include "pos/app/database.hpp"
#include "pos/logic/menu_file.hpp"
#include "pos/store/menu.hpp"

namespace pos::app {
namespace {

using common::cli::UsageError;
using common::cli::UserError;

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw UserError("cannot read " + path);
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) throw UserError("cannot read " + path);
    return text.str();
}

// Prints every problem ("<JSON pointer>: <problem>") and fails; nothing was changed.
int refuse(const common::config::ParsedArgs& args, const std::string& path, const std::vector<std::string>& problems) {
    if (args.has("json")) {
        boost::json::array list;
        for (const auto& p : problems) list.emplace_back(p);
        std::cout << boost::json::serialize(boost::json::object{{"loaded", false}, {"file", path}, {"errors", list}})
                  << "\n";
    } else {
        for (const auto& p : problems) std::cerr << path << ": " << p << "\n";
    }
    throw UserError(std::to_string(problems.size()) + (problems.size() == 1 ? " problem" : " problems") + " in " +
                    path + "; nothing was loaded");
}

boost::json::object changes_json(const store::TableChanges& t) {
    return {{"inserted", t.inserted}, {"updated", t.updated}, {"deleted", t.deleted}};
}

std::string changes_text(std::string_view table, const store::TableChanges& t) {
    return std::string(table) + " +" + std::to_string(t.inserted) + " ~" + std::to_string(t.updated) + " -" +
           std::to_string(t.deleted);
}

int load(const common::config::ParsedArgs& args) {
    if (args.positional.size() != 1) throw UsageError("give exactly one menu file");
    const std::string path = args.positional[0];
    const ParsedMenuFile parsed = parse_menu_file_text(read_file(path));
    if (!parsed.menu) return refuse(args, path, parsed.errors);
    store::MenuLoadReport report;
    try {
        report = with_database(args, [&](pqxx::connection& c) { return store::load_menu(c, *parsed.menu); });
    } catch (const store::MenuConflict& e) {
        return refuse(args, path, e.problems);
    }
    if (args.has("json")) {
        std::cout << boost::json::serialize(boost::json::object{
                         {"loaded", true},
                         {"file", path},
                         {"changed", report.changed()},
                         {"brands", changes_json(report.brands)},
                         {"branches", changes_json(report.branches)},
                         {"products", changes_json(report.products)},
                         {"product_branches", changes_json(report.product_branches)},
                         {"modifiers", changes_json(report.modifiers)},
                     })
                  << "\n";
    } else if (!report.changed()) {
        std::cout << "loaded " << path << ": nothing changed\n";
    } else {
        std::cout << "loaded " << path << " (+inserted ~updated -deleted): " << changes_text("brands", report.brands)
                  << ", " << changes_text("branches", report.branches) << ", "
                  << changes_text("products", report.products) << ", "
                  << changes_text("availability", report.product_branches) << ", "
                  << changes_text("modifiers", report.modifiers) << "\n";
    }
    return 0;
}

}  // namespace

common::cli::Command menu_load_command() {
    return {{"menu", "load"},
            "load brands, branches, products and modifiers from a JSON menu file (one transaction; loading the same "
            "file again changes nothing)",
            "FILE",
            {database_option()},
            load};
}

}  // namespace pos::app

#include <boost/json.hpp>
#include <pqxx/pqxx>

#include "hub/admin/admin.hpp"

namespace hub::admin {
namespace {

using common::cli::UserError;
using common::config::ParsedArgs;

int create(const ParsedArgs& args) {
    const std::string id = required(args, "id");
    const std::string brand = required(args, "brand");
    if (id.size() > 128 || brand.size() > 128) throw common::cli::UsageError("ids are at most 128 bytes");
    const std::string name = args.get("name").value_or(id);
    const std::string pos_branch = args.get("pos-branch-id").value_or(id);
    std::string error;
    auto lead = common::config::parse_uint(args.get("schedule-lead-minutes").value_or("30"), 0, 10080,
                                           "--schedule-lead-minutes", error);
    if (!lead) throw common::cli::UsageError(error);
    auto conn = connect(args);
    pqxx::work tx(*conn);
    // The contract has no `brand create`: a branch brings its brand into being.
    tx.exec_params("INSERT INTO hub.brands (id, name) VALUES ($1, $1) ON CONFLICT (id) DO NOTHING", brand);
    auto r = tx.exec_params(
        "INSERT INTO hub.branches (id, brand_id, name, pos_branch_id, auto_accept, schedule_lead_minutes) "
        "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING RETURNING id",
        id, brand, name, pos_branch, args.has("auto-accept"), static_cast<int>(*lead));
    if (r.empty()) throw UserError("branch '" + id + "' exists already");
    tx.commit();
    print_object(args, {{"id", id},
                        {"brand_id", brand},
                        {"name", name},
                        {"pos_branch_id", pos_branch},
                        {"auto_accept", args.has("auto-accept")},
                        {"schedule_lead_minutes", *lead}});
    return 0;
}

int list(const ParsedArgs& args) {
    auto conn = connect(args);
    pqxx::read_transaction tx(*conn);
    boost::json::array rows;
    for (const auto& r : tx.exec("SELECT id, brand_id, name, coalesce(pos_branch_id, id), auto_accept, "
                                 "schedule_lead_minutes FROM hub.branches ORDER BY brand_id, id")) {
        rows.push_back({{"id", r[0].c_str()},
                        {"brand_id", r[1].c_str()},
                        {"name", r[2].c_str()},
                        {"pos_branch_id", r[3].c_str()},
                        {"auto_accept", r[4].as<bool>()},
                        {"schedule_lead_minutes", r[5].as<int>()}});
    }
    print_rows(args, rows, {"id", "brand_id", "name", "pos_branch_id", "auto_accept", "schedule_lead_minutes"});
    return 0;
}

}  // namespace

std::vector<common::cli::Command> branch_commands() {
    return {
        {{"branch", "create"},
         "a branch that orders route to (its brand is created when new)",
         "--id BRANCH --brand BRAND [--name NAME] [--pos-branch-id ID] [--auto-accept] [--schedule-lead-minutes N]",
         db_options(
             {{.name = "id", .help = "the branch_id platforms send", .placeholder = "BRANCH"},
              {.name = "brand", .help = "brand of the branch", .placeholder = "BRAND"},
              {.name = "name", .help = "display name (default: the id)", .placeholder = "NAME"},
              {.name = "pos-branch-id", .help = "the branch id at the POS (default: the same id)", .placeholder = "ID"},
              {.name = "auto-accept", .help = "send orders to the POS as ACCEPTED"},
              {.name = "schedule-lead-minutes",
               .help = "send scheduled orders this long before",
               .placeholder = "N",
               .default_value = "30"}}),
         create},
        {{"branch", "list"}, "list branches", "", db_options(), list},
    };
}

}  // namespace hub::admin

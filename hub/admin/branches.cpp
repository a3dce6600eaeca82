#include <boost/json.hpp>
#include <pqxx/pqxx>

#include "hub/admin/admin.hpp"
#include "hub/admin/branch_rules.hpp"

namespace hub::admin {
namespace {

using common::cli::UsageError;
using common::config::ParsedArgs;

/// A whole number of minutes from an option, or nullopt when it is not given (the rules check its range).
std::optional<long long> minutes_option(const ParsedArgs& args, const std::string& name) {
    auto v = args.get(name);
    if (!v) return std::nullopt;
    std::string error;
    auto n = common::config::parse_uint(*v, 0, 1'000'000, "--" + name, error);
    if (!n) throw UsageError(error);
    return static_cast<long long>(*n);
}

/// The branch options that create and update share, as a change (nothing given: nothing changes).
BranchChange change_from(const ParsedArgs& args) {
    const int modes = int{args.has("auto-accept")} + int{args.has("manual-accept")} + int{args.has("pending-accept")};
    if (modes > 1) throw UsageError("give at most one of --auto-accept, --manual-accept and --pending-accept");
    BranchChange c;
    c.name = args.get("name");
    c.pos_branch_id = args.get("pos-branch-id");
    if (args.has("auto-accept")) c.accept_mode = AcceptMode::automatic;
    if (args.has("manual-accept")) c.accept_mode = AcceptMode::manual;
    if (args.has("pending-accept")) c.accept_mode = AcceptMode::pending;
    c.accept_timeout_minutes = minutes_option(args, "accept-timeout-minutes");
    c.schedule_lead_minutes = minutes_option(args, "schedule-lead-minutes");
    return c;
}

int branch_create(const ParsedArgs& args) {
    const std::string id = required(args, "id");
    const std::string brand = required(args, "brand");
    const BranchChange settings = change_from(args);
    return print_change(
        args, [&](pqxx::transaction_base& tx) { return branch_json(create_branch(tx, id, brand, settings)); });
}

int branch_update(const ParsedArgs& args) {
    const std::string id = required(args, "id");
    if (args.get("brand")) throw UsageError("a branch's brand cannot change (create a new branch)");
    const BranchChange change = change_from(args);
    return print_change(args, [&](pqxx::transaction_base& tx) { return branch_json(update_branch(tx, id, change)); });
}

int branch_list(const ParsedArgs& args) {
    return print_listing(
        args,
        {"id", "brand_id", "name", "pos_branch_id", "accept_mode", "accept_timeout_minutes", "schedule_lead_minutes"},
        [](pqxx::transaction_base& tx) {
            boost::json::array rows;
            for (const auto& b : list_branches(tx)) rows.push_back(branch_json(b));
            return rows;
        });
}

/// The options of create and update but --id and --brand; no defaults, so that an update changes only what is
/// given (create's defaults are the rules': hub/admin/branch_rules.hpp).
std::vector<common::config::OptionSpec> setting_options() {
    return {{.name = "name", .help = "display name (create: default the id)", .placeholder = "NAME"},
            {.name = "pos-branch-id",
             .help = "the branch id at the POS (create: default the same id)",
             .placeholder = "ID"},
            {.name = "auto-accept", .help = "send new orders to the POS as ACCEPTED"},
            {.name = "manual-accept",
             .help = "hold new orders for the branch's staff (stored; not yet held by this build)"},
            {.name = "pending-accept", .help = "send new orders to the POS as PENDING (the default)"},
            {.name = "accept-timeout-minutes",
             .help = "manual-accept: minutes to wait for staff (1-10080, default 10)",
             .placeholder = "N"},
            {.name = "schedule-lead-minutes",
             .help = "send scheduled orders this long before (0-10080, default 30)",
             .placeholder = "N"}};
}

std::vector<common::config::OptionSpec> with_id(bool brand) {
    auto options = setting_options();
    options.insert(options.begin(), {.name = "id", .help = "the branch_id platforms send", .placeholder = "BRANCH"});
    options.insert(options.begin() + 1, {.name = "brand",
                                         .help = brand ? "brand of the branch (created when new)"
                                                       : "not allowed: a branch's brand cannot change",
                                         .placeholder = "BRAND"});
    return options;
}

}  // namespace

std::vector<common::cli::Command> branch_commands() {
    return {
        db_command({"branch", "create"}, "a branch that orders route to (its brand is created when new)",
                   "--id BRANCH --brand BRAND [--name NAME] [--pos-branch-id ID] [--auto-accept | --manual-accept "
                   "[--accept-timeout-minutes N]] [--schedule-lead-minutes N]",
                   branch_create, with_id(true)),
        db_command(
            {"branch", "update"}, "change a branch: only the options given (every option of create but --brand)",
            "--id BRANCH [--name NAME] [--pos-branch-id ID] [--auto-accept | --manual-accept | --pending-accept] "
            "[--accept-timeout-minutes N] [--schedule-lead-minutes N]",
            branch_update, with_id(false)),
        db_command({"branch", "list"}, "list branches with every setting", "", branch_list),
    };
}

}  // namespace hub::admin

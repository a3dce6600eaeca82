#pragma once

// Brands and branches, for `orderhub branch ...` and `pos set` and for the operator HTTP API (hub/admin/refusal.hpp).
//
// Decisions:
//   - A brand comes into being with whichever command names it first (`pos set` or `branch create`), in any order;
//     there is no `brand create`.
//   - A branch's accept mode is one of pending (the default: new orders go to the POS as PENDING), auto (as
//     ACCEPTED) or manual (held for the branch's staff, product.md section 11: stored, not yet held by this build).
//   - accept_timeout_minutes (1..10080, default 10) belongs to manual branches: giving it for a branch that is not
//     (or does not become) manual is refused. It is kept when the mode changes.
//   - An update changes only what it gives; the brand never changes. pos_branch_id and the accept mode apply to
//     orders not yet sent; schedule_lead_minutes to orders received after the change.

#include <boost/json/object.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pqxx {
class transaction_base;
}

namespace hub::admin {

enum class AcceptMode { pending, automatic, manual };

/// "pending", "auto" or "manual".
std::string_view accept_mode_name(AcceptMode mode);

/// One branch, as stored.
struct Branch {
    std::string id;
    std::string brand_id;
    std::string name;
    std::string pos_branch_id;
    AcceptMode accept_mode = AcceptMode::pending;
    int accept_timeout_minutes = 10;
    int schedule_lead_minutes = 30;
};

/// What a create or an update gives; nullopt keeps the current value (create: the default).
struct BranchChange {
    std::optional<std::string> name;
    std::optional<std::string> pos_branch_id;
    std::optional<AcceptMode> accept_mode;
    std::optional<long long> accept_timeout_minutes;
    std::optional<long long> schedule_lead_minutes;
};

/// `current` with `change` applied, by the decisions above; a Refusal (invalid) names the first value that breaks
/// a rule. Pure.
Branch apply_change(Branch current, const BranchChange& change);

/// The brand `brand_id`, created (its name the id) when new. Refuses an id that is not 1-128 bytes of text.
void ensure_brand(pqxx::transaction_base& tx, const std::string& brand_id);

/// Creates branch `id` of `brand_id` (the brand too, when new); name and pos_branch_id default to the id.
/// Refusals: invalid values; conflict when the branch exists.
Branch create_branch(pqxx::transaction_base& tx, const std::string& id, const std::string& brand_id,
                     const BranchChange& settings);

/// Changes branch `id` by `change` (row locked). Refusals: not_found, invalid values.
Branch update_branch(pqxx::transaction_base& tx, const std::string& id, const BranchChange& change);

/// Every branch, by brand and id.
std::vector<Branch> list_branches(pqxx::transaction_base& tx);

/// A branch as the CLI's --json and the HTTP API show it: every setting.
boost::json::object branch_json(const Branch& b);

}  // namespace hub::admin

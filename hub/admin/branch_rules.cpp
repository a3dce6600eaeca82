#include "hub/admin/branch_rules.hpp"

#include <pqxx/pqxx>

#include "hub/admin/refusal.hpp"

namespace hub::admin {
namespace {

constexpr std::size_t kMaxNameBytes = 200;
constexpr long long kMaxMinutes = 10080;  // a week

constexpr std::string_view kBranchColumns =
    "id, brand_id, name, coalesce(pos_branch_id, id) AS pos_branch_id, auto_accept, manual_accept, "
    "accept_timeout_minutes, schedule_lead_minutes";

Branch from_row(const pqxx::row& r) {
    Branch b;
    b.id = r["id"].as<std::string>();
    b.brand_id = r["brand_id"].as<std::string>();
    b.name = r["name"].as<std::string>();
    b.pos_branch_id = r["pos_branch_id"].as<std::string>();
    b.accept_mode = r["auto_accept"].as<bool>()     ? AcceptMode::automatic
                    : r["manual_accept"].as<bool>() ? AcceptMode::manual
                                                    : AcceptMode::pending;
    b.accept_timeout_minutes = r["accept_timeout_minutes"].as<int>();
    b.schedule_lead_minutes = r["schedule_lead_minutes"].as<int>();
    return b;
}

int minutes(std::string_view field, long long value, long long low) {
    if (value < low || value > kMaxMinutes)
        throw Refusal(Refusal::Kind::invalid, std::string(field) + " must be between " + std::to_string(low) + " and " +
                                                  std::to_string(kMaxMinutes));
    return static_cast<int>(value);
}

}  // namespace

std::string_view accept_mode_name(AcceptMode mode) {
    switch (mode) {
        case AcceptMode::automatic: return "auto";
        case AcceptMode::manual: return "manual";
        case AcceptMode::pending: break;
    }
    return "pending";
}

Branch apply_change(Branch current, const BranchChange& change) {
    if (change.name) {
        require_text("name", *change.name, kMaxNameBytes);
        current.name = *change.name;
    }
    if (change.pos_branch_id) {
        require_text("pos_branch_id", *change.pos_branch_id, kMaxIdBytes);
        current.pos_branch_id = *change.pos_branch_id;
    }
    if (change.accept_mode) current.accept_mode = *change.accept_mode;
    if (change.accept_timeout_minutes) {
        if (current.accept_mode != AcceptMode::manual)
            throw Refusal(Refusal::Kind::invalid, "accept_timeout_minutes applies to manual-accept branches only");
        current.accept_timeout_minutes = minutes("accept_timeout_minutes", *change.accept_timeout_minutes, 1);
    }
    if (change.schedule_lead_minutes)
        current.schedule_lead_minutes = minutes("schedule_lead_minutes", *change.schedule_lead_minutes, 0);
    return current;
}

void ensure_brand(pqxx::transaction_base& tx, const std::string& brand_id) {
    require_text("brand", brand_id, kMaxIdBytes);
    tx.exec_params("INSERT INTO hub.brands (id, name) VALUES ($1, $1) ON CONFLICT (id) DO NOTHING", brand_id);
}

Branch create_branch(pqxx::transaction_base& tx, const std::string& id, const std::string& brand_id,
                     const BranchChange& settings) {
    require_text("branch id", id, kMaxIdBytes);
    Branch b;
    b.id = id;
    b.brand_id = brand_id;
    b.name = id;
    b.pos_branch_id = id;
    b = apply_change(std::move(b), settings);
    ensure_brand(tx, brand_id);
    auto r = tx.exec_params(
        "INSERT INTO hub.branches (id, brand_id, name, pos_branch_id, auto_accept, manual_accept, "
        "accept_timeout_minutes, schedule_lead_minutes) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
        "ON CONFLICT (id) DO NOTHING RETURNING id",
        b.id, b.brand_id, b.name, b.pos_branch_id, b.accept_mode == AcceptMode::automatic,
        b.accept_mode == AcceptMode::manual, b.accept_timeout_minutes, b.schedule_lead_minutes);
    if (r.empty()) throw Refusal(Refusal::Kind::conflict, "branch '" + id + "' exists already");
    return b;
}

Branch update_branch(pqxx::transaction_base& tx, const std::string& id, const BranchChange& change) {
    auto rows =
        tx.exec_params("SELECT " + std::string(kBranchColumns) + " FROM hub.branches WHERE id = $1 FOR UPDATE", id);
    if (rows.empty()) throw Refusal(Refusal::Kind::not_found, "no branch '" + id + "'");
    Branch b = apply_change(from_row(rows[0]), change);
    tx.exec_params0(
        "UPDATE hub.branches SET name = $2, pos_branch_id = $3, auto_accept = $4, manual_accept = $5, "
        "accept_timeout_minutes = $6, schedule_lead_minutes = $7 WHERE id = $1",
        b.id, b.name, b.pos_branch_id, b.accept_mode == AcceptMode::automatic, b.accept_mode == AcceptMode::manual,
        b.accept_timeout_minutes, b.schedule_lead_minutes);
    return b;
}

std::vector<Branch> list_branches(pqxx::transaction_base& tx) {
    std::vector<Branch> out;
    for (const auto& r : tx.exec("SELECT " + std::string(kBranchColumns) + " FROM hub.branches ORDER BY brand_id, id"))
        out.push_back(from_row(r));
    return out;
}

boost::json::object branch_json(const Branch& b) {
    return {{"id", b.id},
            {"brand_id", b.brand_id},
            {"name", b.name},
            {"pos_branch_id", b.pos_branch_id},
            {"accept_mode", accept_mode_name(b.accept_mode)},
            {"auto_accept", b.accept_mode == AcceptMode::automatic},
            {"accept_timeout_minutes", b.accept_timeout_minutes},
            {"schedule_lead_minutes", b.schedule_lead_minutes}};
}

}  // namespace hub::admin

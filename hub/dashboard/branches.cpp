#include "hub/dashboard/branches.hpp"

#include <boost/json.hpp>
#include <pqxx/pqxx>

#include "hub/dashboard/orders.hpp"

namespace hub::dashboard {
namespace {

/// $1 user id, $2 POS environment, $3 branch id or '' for all -> id, unreachable_since (ISO; null while reachable),
/// orders_waiting (null while reachable). The count runs only for branches whose POS is unreachable (CASE evaluates
/// its sub-select only when its condition holds) and walks the brand's pending and in-flight jobs
/// (forward_jobs_brand_due_idx, forward_jobs_brand_lease_idx).
constexpr const char* kBranchStatesName = "dashboard_branch_states";
const std::string kBranchStatesSql = "SELECT b.id, " + iso("h.unreachable_since") + R"( AS unreachable_since,
    CASE WHEN h.brand_id IS NOT NULL THEN (
        SELECT count(*) FROM hub.forward_jobs j JOIN hub.orders o ON o.id = j.order_id
        WHERE j.brand_id = b.brand_id AND j.state IN ('pending', 'in_flight') AND o.branch_id = b.id)
    END AS orders_waiting
FROM hub.branches b
LEFT JOIN hub.pos_connection_health h ON h.brand_id = b.brand_id AND h.environment = $2 AND h.state = 'open'
WHERE )" + in_scope("b.id", "$1") + " AND ($3 = '' OR b.id = $3) ORDER BY b.id";

}  // namespace

boost::json::array branch_states(pqxx::transaction_base& tx, const std::string& user_id, const std::string& environment,
                                 const std::string& branch) {
    // Prepared once per connection, on its first use: libpqxx 6.4 takes an identical definition again as a no-op
    // and sends it to the server with the first execution only.
    tx.conn().prepare(kBranchStatesName, kBranchStatesSql);
    boost::json::array out;
    for (const auto& r : tx.exec_prepared(kBranchStatesName, user_id, environment, branch)) {
        const auto since = r["unreachable_since"];
        const bool unreachable = !since.is_null();
        out.push_back(
            {{"id", r["id"].c_str()},
             {"pos_unreachable_since", unreachable ? boost::json::value(since.c_str()) : nullptr},
             {"orders_waiting", unreachable ? boost::json::value(r["orders_waiting"].as<long long>()) : nullptr}});
    }
    return out;
}

}  // namespace hub::dashboard

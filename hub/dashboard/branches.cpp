#include "hub/dashboard/branches.hpp"

#include <boost/json.hpp>
#include <pqxx/pqxx>

#include "hub/dashboard/queries.hpp"

namespace hub::dashboard {

boost::json::array branch_states(pqxx::transaction_base& tx, const std::string& user_id, const std::string& environment,
                                 const std::string& branch) {
    boost::json::array out;
    for (const auto& r : exec(tx, sql::kBranchStates, user_id, environment, branch)) {
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

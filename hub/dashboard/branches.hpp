#pragma once

// What the board shows about a branch beside its orders: whether the hub can reach the branch's POS. A brand's POS
// connection is unreachable while the forwarders' circuit breaker for its host is open (hub.pos_connection_health,
// written by hub/forward when a breaker opens or closes); its branches' boards then raise a banner.

#include <boost/json/array.hpp>
#include <string>

namespace pqxx {
class transaction_base;
}  // namespace pqxx

namespace hub::dashboard {

/// The branches user `user_id` may see (only `branch` when not empty), by id, each as {"id",
/// "pos_unreachable_since", "orders_waiting"}: while the POS connection of the branch's brand in `environment` is
/// open (unreachable), the time it became so (ISO 8601, UTC) and the branch's forwarding jobs still pending or in
/// flight; both null while it is reachable (or no forwarder has reported on it).
boost::json::array branch_states(pqxx::transaction_base& tx, const std::string& user_id, const std::string& environment,
                                 const std::string& branch);

}  // namespace hub::dashboard

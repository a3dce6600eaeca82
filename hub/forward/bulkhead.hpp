#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace hub::forward {

/// What the next claim may take: `limit` jobs in all, at most `quotas[brand]` of a listed brand (0: its jobs are
/// not read at all) and `default_quota` of any other brand (one this forwarder has not mapped to a POS host yet).
struct ClaimPlan {
    int limit = 0;
    int default_quota = 0;
    std::vector<std::pair<std::string, int>> quotas;
};

/// Plans a claim so that no POS host gets more than its room and no brand fills the claim: `brand_hosts` maps each
/// known brand to its POS host ("" when it has none: such jobs end without an exchange); `room` is how many more
/// deliveries each host may start now (bulkhead free slots, 0 while its breaker is open, 1 for a probe);
/// `global_free` the forwarder's free slots; `per_host` the bulkhead size. A brand's quota is its host's room,
/// capped by `global_free`; a brand without a host gets `per_host`. Brands that share a host each get the whole
/// room: admit_claimed() gives back what exceeds it.
ClaimPlan plan_claim(const std::map<std::string, std::string>& brand_hosts, const std::map<std::string, int>& room,
                     int global_free, int per_host);

/// Which claimed jobs may start now, in claim order: a job of a host with room left takes one unit of it; a job
/// without a host (`""`) always may; the others are to be given back at once (never held waiting). `room` is
/// consumed.
std::vector<bool> admit_claimed(const std::vector<std::string>& job_hosts, std::map<std::string, int>& room);

}  // namespace hub::forward

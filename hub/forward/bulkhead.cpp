#include "hub/forward/bulkhead.hpp"

#include <algorithm>

namespace hub::forward {

ClaimPlan plan_claim(const std::map<std::string, std::string>& brand_hosts, const std::map<std::string, int>& room,
                     int global_free, int per_host) {
    ClaimPlan plan;
    plan.limit = std::max(0, global_free);
    plan.default_quota = std::min(per_host, plan.limit);
    plan.quotas.reserve(brand_hosts.size());
    for (const auto& [brand, host] : brand_hosts) {
        if (host.empty()) continue;  // the default quota
        auto it = room.find(host);
        const int r = it == room.end() ? per_host : it->second;
        plan.quotas.emplace_back(brand, std::clamp(r, 0, plan.limit));
    }
    return plan;
}

std::vector<bool> admit_claimed(const std::vector<std::string>& job_hosts, std::map<std::string, int>& room) {
    std::vector<bool> admitted;
    admitted.reserve(job_hosts.size());
    for (const auto& host : job_hosts) {
        if (host.empty()) {
            admitted.push_back(true);
            continue;
        }
        auto it = room.find(host);
        const bool ok = it != room.end() && it->second > 0;
        if (ok) --it->second;
        admitted.push_back(ok);
    }
    return admitted;
}

}  // namespace hub::forward

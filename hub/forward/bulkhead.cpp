#include "hub/forward/bulkhead.hpp"

#include <algorithm>

namespace hub::forward {

int host_room(int limit, int in_flight, int breaker_room, bool ahead) {
    const int free = std::max(0, (ahead ? 2 * limit : limit) - in_flight);
    return std::min(breaker_room, in_flight > 0 && free < std::max(1, limit / 4) ? 0 : free);
}

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

void narrow_to_backlog(ClaimPlan& plan, const std::set<std::string>& backlog) {
    plan.default_quota = 0;
    for (auto& [brand, quota] : plan.quotas)
        if (!backlog.contains(brand)) quota = 0;
}

bool claims_anything(const ClaimPlan& plan) {
    if (plan.limit <= 0) return false;
    return plan.default_quota > 0 ||
           std::any_of(plan.quotas.begin(), plan.quotas.end(), [](const auto& q) { return q.second > 0; });
}

void note_claimed(const ClaimPlan& plan, const std::map<std::string, int>& claimed, bool full_look,
                  std::set<std::string>& backlog) {
    auto count = [&](const std::string& brand) {
        auto it = claimed.find(brand);
        return it == claimed.end() ? 0 : it->second;
    };
    std::set<std::string> listed;
    for (const auto& [brand, quota] : plan.quotas) {
        listed.insert(brand);
        if (quota > 0 ? count(brand) >= quota : full_look)
            backlog.insert(brand);
        else if (quota > 0)
            backlog.erase(brand);
    }
    for (const auto& [brand, n] : claimed)
        if (!listed.contains(brand) && plan.default_quota > 0 && n >= plan.default_quota) backlog.insert(brand);
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

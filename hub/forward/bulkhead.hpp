#pragma once

#include <map>
#include <set>
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

/// How many more jobs of a host a claim may take now. `limit` is the host's bulkhead (deliveries on the wire at
/// once), `in_flight` its deliveries (on the wire or waiting in the HTTP client's queue for a slot), `breaker_room`
/// what its breaker allows. With `ahead` (a healthy host, decided by the caller) as many again may wait for a slot,
/// each at most the client's queue time-out before it goes back unsent, so that the host's slots stay busy while
/// the next claim runs. While the host has deliveries, its room counts only once it reaches a quarter of `limit`
/// (at least one): its jobs are then claimed in batches, not a few at every ended delivery, since a claim costs
/// PostgreSQL about the same whatever its size.
int host_room(int limit, int in_flight, int breaker_room, bool ahead);

/// Plans a claim so that no POS host gets more than its room and no brand fills the claim: `brand_hosts` maps each
/// known brand to its POS host ("" when it has none: such jobs end without an exchange); `room` is how many more
/// jobs of each host a claim may take now (host_room()); `global_free` the forwarder's free slots; `per_host` the
/// bulkhead size. A brand's quota is its host's room, capped by `global_free`; a brand without a host gets
/// `per_host`. Brands that share a host each get the whole room: admit_claimed() gives back what exceeds it.
ClaimPlan plan_claim(const std::map<std::string, std::string>& brand_hosts, const std::map<std::string, int>& room,
                     int global_free, int per_host);

/// Narrows `plan` to the brands of `backlog` (the others, and brands not mapped yet, get 0): the claim that follows
/// a delivery's end only looks again at brands that may have more due jobs than their last claim could take.
void narrow_to_backlog(ClaimPlan& plan, const std::set<std::string>& backlog);

/// True when `plan` lets the claim take anything.
bool claims_anything(const ClaimPlan& plan);

/// Updates `backlog` after a claim made with `plan` that took `claimed[brand]` jobs per brand: a brand that got its
/// whole quota may have more due, one that got less has none left due; a brand with quota 0 may have some when the
/// claim was a full look (`full_look`: after a NOTIFY, a poll or a full claim), and keeps its state otherwise. A
/// brand not in the plan that got the default quota joins the backlog.
void note_claimed(const ClaimPlan& plan, const std::map<std::string, int>& claimed, bool full_look,
                  std::set<std::string>& backlog);

/// Which claimed jobs may start now, in claim order: a job of a host with room left takes one unit of it; a job
/// without a host (`""`) always may; the others are to be given back at once (never held waiting). `room` is
/// consumed.
std::vector<bool> admit_claimed(const std::vector<std::string>& job_hosts, std::map<std::string, int>& room);

}  // namespace hub::forward

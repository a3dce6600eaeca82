#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstddef>
#include <memory>

#include "pos/store/orders.hpp"

namespace common::db {
class Pool;
}

namespace pos::store {

/// The order intake's group commit: submissions from many connections are decided and stored together by
/// submit_orders, one batch per pool job, and each caller resumes once its batch is done. At most
/// `max_concurrent` batches run at once (the other pool workers stay free for logins and token checks); a lone
/// submission is held back for `gather` (at light load), waiting for company (common::db::Batcher). `pool` must outlive
/// the intake.
class OrderIntake {
public:
    OrderIntake(common::db::Pool& pool, std::size_t max_batch, std::size_t max_concurrent,
                std::chrono::microseconds gather = std::chrono::microseconds(0));
    ~OrderIntake();
    OrderIntake(const OrderIntake&) = delete;
    OrderIntake& operator=(const OrderIntake&) = delete;

    /// The answer submit_order would give `submission`; throws its error (common::db::is_unavailable when the
    /// store is unavailable).
    boost::asio::awaitable<SubmitResult> submit(OrderSubmission submission);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace pos::store
